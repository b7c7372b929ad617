"""The embedded graph store: SQLite (WAL, FTS5 for BM25) plus an in-memory sparse adjacency for graph algorithms.

Tables: ``nodes`` and ``edges`` keep every record with ``props`` and ``doc_ids`` as canonical JSON;
``node_docs`` / ``edge_docs`` index provenance by document so deleting one is a few index range scans;
``chunk_fts`` (FTS5, ``porter unicode61 remove_diacritics 2``) indexes Chunk nodes' ``props["text"]``
(weight 1.0) and their section title ``props["section"]`` (weight 0.3; ``context`` and ``heading_path`` are
not indexed), rewritten in one statement per batch by every write of a Chunk (one ``INSERT ... SELECT``, since
per-row triggers make FTS5 flush on every row); ``meta.generation`` counts write transactions.

Concurrency (DESIGN.md): one connection per thread, a per-file process-wide lock plus ``BEGIN IMMEDIATE``
around every write (one transaction per write method), WAL so readers never wait. The adjacency (CSR
matrices over every node) is patched in place after this object's own writes and reloaded in full when
``PRAGMA data_version`` on a watcher connection and ``meta.generation`` show that another connection wrote.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stratagraph.graph_store.base import (
    DeleteSummary,
    DocumentNotFound,
    DocumentVersion,
    EdgeRow,
    GraphCounts,
    GraphStore,
    Neighbor,
    ScoredId,
    StoreUnavailable,
    Subgraph,
)
from stratagraph.schema import (
    BY_DOC,
    Direction,
    Edge,
    EdgeType,
    Node,
    NodeLabel,
    canonical_json,
    derive_props,
    drop_doc_props,
    fold_by_doc,
    merge_by_doc,
)

if TYPE_CHECKING:
    import numpy as np
    from scipy.sparse import csr_matrix

__all__ = ["SQLiteGraphStore"]

BUSY_TIMEOUT_MS = 60_000
SCHEMA_VERSION = 1
FTS_WEIGHTS = (1.0, 0.3)  # chunk_fts columns: text, section
MAX_QUERY_TERMS = 64
PPR_TOL = 1e-8
PPR_MAX_ITER = 100
SCORE_DIGITS = 12  # PPR scores are rounded so float noise cannot reorder ties

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    props TEXT NOT NULL,
    doc_ids TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nodes_label ON nodes(label, id);
CREATE TABLE IF NOT EXISTS edges (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    key TEXT NOT NULL,
    weight REAL NOT NULL,
    props TEXT NOT NULL,
    doc_ids TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src, type);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst, type);
CREATE INDEX IF NOT EXISTS edges_type ON edges(type, src, dst, key);
CREATE TABLE IF NOT EXISTS node_docs (
    doc_id TEXT NOT NULL, node_id TEXT NOT NULL, PRIMARY KEY (doc_id, node_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS node_docs_node ON node_docs(node_id);
CREATE TABLE IF NOT EXISTS edge_docs (
    doc_id TEXT NOT NULL, edge_id TEXT NOT NULL, PRIMARY KEY (doc_id, edge_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edge_docs_edge ON edge_docs(edge_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
    text, section, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', 0);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', 1);
"""

_CHUNK = NodeLabel.CHUNK.value
_IN = "(SELECT value FROM json_each(?))"  # one JSON-array parameter instead of a variable list
_NODE_COLS = "n.id, n.label, n.props, n.doc_ids"
_EDGE_COLS = "e.type, e.src, e.dst, e.key, e.weight, e.props, e.doc_ids"

_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves""".split()
)
_TOKEN = re.compile(r"[^\W_]+")

_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock_for(path: Path) -> threading.Lock:
    key = str(path.resolve())
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.Lock())


_LIST_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _docs_json(doc_ids: Iterable[str]) -> str:
    """Sorted doc ids as JSON, spelled exactly as :func:`canonical_json` spells them (but faster)."""
    return _LIST_ENCODER.encode(sorted(doc_ids))


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL, retrying: the switch fails at once (no busy handler) while another process creates the file."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _ids_param(ids: Iterable[str]) -> str:
    return json.dumps(list(ids))


def _type_values(types: Iterable[EdgeType | str] | None) -> list[str] | None:
    return None if types is None else sorted({str(t) for t in types})


def fts_query(text: str) -> str | None:
    """Arbitrary user text as a safe FTS5 query: distinct non-stopword terms, each quoted, OR-ed."""
    terms: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if token not in _STOPWORDS and token not in terms:
            terms.append(token)
            if len(terms) == MAX_QUERY_TERMS:
                break
    return " OR ".join(f'"{t}"' for t in terms) or None


def _node(row: Sequence[Any]) -> Node:
    return Node.model_construct(
        id=row[0], label=NodeLabel(row[1]), props=json.loads(row[2]), doc_ids=json.loads(row[3])
    )


def _edge(row: Sequence[Any]) -> Edge:
    return Edge.model_construct(
        type=EdgeType(row[0]),
        src=row[1],
        dst=row[2],
        key=row[3],
        weight=float(row[4]),
        props=json.loads(row[5]),
        doc_ids=json.loads(row[6]),
    )


# ------------------------------------------------------------------------------------------ adjacency


@dataclass
class _Delta:
    """What one write transaction changed in the graph's shape (applied to the adjacency after commit)."""

    nodes: dict[str, str] = field(default_factory=dict)  # id -> label
    dead_nodes: set[str] = field(default_factory=set)
    edges: dict[str, tuple[str, str, str, float]] = field(default_factory=dict)  # id -> (type, src, dst, w)
    dead_edges: set[str] = field(default_factory=set)

    def node_upserted(self, node_id: str, label: str) -> None:
        self.nodes[node_id] = label
        self.dead_nodes.discard(node_id)

    def node_deleted(self, node_id: str) -> None:
        self.dead_nodes.add(node_id)
        self.nodes.pop(node_id, None)

    def edge_upserted(self, eid: str, type_: str, src: str, dst: str, weight: float) -> None:
        self.edges[eid] = (type_, src, dst, weight)
        self.dead_edges.discard(eid)

    def edge_deleted(self, eid: str) -> None:
        self.dead_edges.add(eid)
        self.edges.pop(eid, None)


_LABEL_CODES = {label.value: i for i, label in enumerate(NodeLabel)}
_TYPE_CODES = {t.value: i for i, t in enumerate(EdgeType)}


class _Snapshot:
    """Immutable arrays of one adjacency state; matrices are built lazily and cached."""

    def __init__(self, adj: _Adjacency) -> None:
        import numpy as np

        self.ids = adj.ids  # append-only and never remapped: shared, guarded by ``n``
        self.index = adj.index
        self.n = len(adj.ids)
        self.node_alive = np.array(adj.node_alive, dtype=bool)
        self.label = np.array(adj.label, dtype=np.int8)
        alive = np.array(adj.e_alive, dtype=bool)
        self.src = np.array(adj.e_src, dtype=np.int64)[alive]
        self.dst = np.array(adj.e_dst, dtype=np.int64)[alive]
        self.weight = np.array(adj.e_weight, dtype=np.float64)[alive]
        self.type = np.array(adj.e_type, dtype=np.int8)[alive]
        self._cache: dict[tuple[Any, ...], Any] = {}

    def live(self, node_id: str) -> int | None:
        i = self.index.get(node_id)
        return i if i is not None and i < self.n and self.node_alive[i] else None

    def _edge_mask(self, types: list[str] | None) -> np.ndarray:
        import numpy as np

        if types is None:
            return np.ones(len(self.src), dtype=bool)
        codes = [_TYPE_CODES[t] for t in types if t in _TYPE_CODES]
        return np.isin(self.type, np.array(codes, dtype=np.int8))

    def _weighted(self, types: list[str] | None) -> csr_matrix:
        key = ("w", None if types is None else tuple(types))
        if key not in self._cache:
            import numpy as np
            from scipy.sparse import csr_matrix

            m = self._edge_mask(types)
            w = np.maximum(self.weight[m], 0.0)
            self._cache[key] = csr_matrix((w, (self.src[m], self.dst[m])), shape=(self.n, self.n))
        return self._cache[key]

    def reach(self, types: list[str] | None, direction: Direction) -> csr_matrix:
        """Structural adjacency for traversal (whatever the weights): row i lists the nodes one step from i."""
        key = ("r", None if types is None else tuple(types), direction)
        if key not in self._cache:
            import numpy as np
            from scipy.sparse import csr_matrix

            m = self._edge_mask(types)
            src, dst = self.src[m], self.dst[m]
            if direction == "in":
                src, dst = dst, src
            elif direction == "both":
                src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            ones = np.ones(len(src), dtype=np.int32)
            self._cache[key] = csr_matrix((ones, (src, dst)), shape=(self.n, self.n))
        return self._cache[key]

    def transition(self, types: list[str] | None, undirected: bool) -> tuple[csr_matrix, np.ndarray]:
        """P^T of the random walk (column-stochastic except for dangling columns) and the dangling mask."""
        key = ("p", None if types is None else tuple(types), undirected)
        if key not in self._cache:
            import numpy as np
            from scipy.sparse import diags

            a = self._weighted(types)
            if undirected:
                a = (a + a.T).tocsr()
            out = np.asarray(a.sum(axis=1)).ravel()
            dangling = out <= 0
            inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out))
            self._cache[key] = ((diags(inv) @ a).T.tocsr(), dangling)
        return self._cache[key]


class _Adjacency:
    """Append-only node/edge arrays with tombstones, patched by deltas; snapshots feed the algorithms."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.ids: list[str] = []
        self.index: dict[str, int] = {}
        self.node_alive: list[bool] = []
        self.label: list[int] = []
        self.e_index: dict[str, int] = {}
        self.e_src: list[int] = []
        self.e_dst: list[int] = []
        self.e_weight: list[float] = []
        self.e_type: list[int] = []
        self.e_alive: list[bool] = []
        self.dead = 0
        self._snap: _Snapshot | None = None

    def add_node(self, node_id: str, label: str) -> None:
        code = _LABEL_CODES.get(label, -1)
        i = self.index.get(node_id)
        if i is None:
            self.index[node_id] = len(self.ids)
            self.ids.append(node_id)
            self.node_alive.append(True)
            self.label.append(code)
        else:
            self.dead -= not self.node_alive[i]
            self.node_alive[i] = True
            self.label[i] = code

    def add_edge(self, eid: str, type_: str, src: str, dst: str, weight: float) -> None:
        j = self.e_index.get(eid)
        if j is None:
            s, d = self.index.get(src), self.index.get(dst)
            if s is None or d is None:
                return
            self.e_index[eid] = len(self.e_src)
            self.e_src.append(s)
            self.e_dst.append(d)
            self.e_weight.append(weight)
            self.e_type.append(_TYPE_CODES.get(type_, -1))
            self.e_alive.append(True)
        else:
            self.dead -= not self.e_alive[j]
            self.e_alive[j] = True
            self.e_weight[j] = weight

    def apply(self, delta: _Delta) -> None:
        for eid in delta.dead_edges:
            j = self.e_index.get(eid)
            if j is not None and self.e_alive[j]:
                self.e_alive[j] = False
                self.dead += 1
        for nid in delta.dead_nodes:
            i = self.index.get(nid)
            if i is not None and self.node_alive[i]:
                self.node_alive[i] = False
                self.dead += 1
        for nid, label in delta.nodes.items():
            self.add_node(nid, label)
        for eid, (t, s, d, w) in delta.edges.items():
            self.add_edge(eid, t, s, d, w)
        self._snap = None

    @property
    def bloated(self) -> bool:
        return self.dead > 1000 and self.dead > (len(self.ids) + len(self.e_src)) // 2

    def snapshot(self) -> _Snapshot:
        if self._snap is None:
            self._snap = _Snapshot(self)
        return self._snap


# ------------------------------------------------------------------------------------------ the store


class SQLiteGraphStore(GraphStore):
    """Embedded :class:`GraphStore` in one SQLite file, safe across threads and processes."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._conns_lock = threading.Lock()
        self._closed = False
        self._adj_lock = threading.Lock()
        self._adj: _Adjacency | None = None
        self._adj_data_version = -1
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write_lock = _write_lock_for(self.path)
            self._watcher = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open graph store {self.path}: {exc}") from exc
        try:
            _enable_wal(self._watcher)
            with self._write_lock:
                self._watcher.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
            version = self._watcher.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        except sqlite3.Error as exc:
            self._watcher.close()
            raise StoreUnavailable(f"cannot open graph store {self.path}: {exc}") from exc
        if version != SCHEMA_VERSION:
            self._watcher.close()
            raise StoreUnavailable(f"graph store {self.path} has schema version {version}, expected {SCHEMA_VERSION}")

    def __repr__(self) -> str:
        return f"SQLiteGraphStore({str(self.path)!r})"

    # ---------------------------------------------------------------- connections and transactions
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA cache_size = -32000")
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            return conn
        with self._conns_lock:
            if self._closed:
                raise StoreUnavailable(f"graph store {self.path} is closed")
            alive = []
            for thread, other in self._conns:  # connections of finished threads are closed here
                if thread.is_alive():
                    alive.append((thread, other))
                else:
                    other.close()
            try:
                conn = self._connect()
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"cannot open graph store {self.path}: {exc}") from exc
            alive.append((threading.current_thread(), conn))
            self._conns = alive
        self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._conns_lock:
            if self._closed:
                return
            self._closed = True
            conns, self._conns = self._conns, []
        for _, conn in conns:
            conn.close()
        with self._adj_lock:
            self._watcher.close()
            self._adj = None

    @contextmanager
    def _write(self) -> Iterator[tuple[sqlite3.Connection, _Delta]]:
        """One write transaction: process lock, BEGIN IMMEDIATE, generation bump, adjacency patch."""
        conn = self._conn()
        delta = _Delta()
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreUnavailable(f"graph store {self.path} is not writable: {exc}") from exc
            try:
                yield conn, delta
                (generation,) = conn.execute(
                    "UPDATE meta SET value = value + 1 WHERE key = 'generation' RETURNING value"
                ).fetchall()[0]
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._patch_adjacency(generation, delta)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several statements."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # ---------------------------------------------------------------- adjacency freshness
    def _patch_adjacency(self, generation: int, delta: _Delta) -> None:
        with self._adj_lock:
            adj = self._adj
            if adj is None or adj.generation >= generation:
                return
            if adj.generation == generation - 1:
                adj.apply(delta)
                adj.generation = generation
                if adj.bloated:
                    self._adj = None
            else:  # someone else wrote in between: reload on next use
                self._adj = None

    def _snapshot(self) -> _Snapshot:
        """The adjacency as of now: patched for our writes, reloaded after anyone else's."""
        with self._adj_lock:
            if self._closed:
                raise StoreUnavailable(f"graph store {self.path} is closed")
            data_version = self._watcher.execute("PRAGMA data_version").fetchone()[0]
            adj = self._adj
            if adj is not None and data_version != self._adj_data_version:
                (generation,) = self._watcher.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
                if generation != adj.generation:
                    adj = None
            if adj is None:
                adj = self._adj = self._load_adjacency()
            self._adj_data_version = data_version
            return adj.snapshot()

    def _load_adjacency(self) -> _Adjacency:
        with self._read() as conn:
            (generation,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            nodes = conn.execute("SELECT id, label FROM nodes ORDER BY id").fetchall()
            edges = conn.execute("SELECT id, type, src, dst, weight FROM edges ORDER BY id").fetchall()
        adj = _Adjacency(generation)
        for nid, label in nodes:
            adj.add_node(nid, label)
        for eid, type_, src, dst, weight in edges:
            adj.add_edge(eid, type_, src, dst, weight)
        return adj

    # ---------------------------------------------------------------- writes
    def upsert_nodes(self, nodes: Sequence[Node]) -> None:
        if not nodes:
            return
        with self._write() as (conn, delta):
            self._upsert_nodes(conn, nodes, delta)

    def upsert_edges(self, edges: Sequence[Edge]) -> None:
        if not edges:
            return
        with self._write() as (conn, delta):
            self._upsert_edges(conn, edges, delta)

    def delete_nodes(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._write() as (conn, delta):
            found = [r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE id IN {_IN}", (_ids_param(ids),))]
            self._delete_nodes(conn, found, delta)
        return len(found)

    def delete_edges(self, edge_ids: Sequence[str]) -> int:
        if not edge_ids:
            return 0
        with self._write() as (conn, delta):
            found = [r[0] for r in conn.execute(f"SELECT id FROM edges WHERE id IN {_IN}", (_ids_param(edge_ids),))]
            self._delete_edges(conn, found, delta)
        return len(found)

    def replace_document(self, doc_id: str, nodes: Sequence[Node], edges: Sequence[Edge]) -> DeleteSummary:
        with self._write() as (conn, delta):
            summary = self._drop_document(conn, doc_id, delta) or DeleteSummary(doc_id=doc_id)
            self._upsert_nodes(conn, nodes, delta)
            self._upsert_edges(conn, edges, delta)
        return summary

    def replace_documents(
        self, versions: Sequence[DocumentVersion], merges: Mapping[str, Sequence[str]] | None = None
    ) -> list[DeleteSummary]:
        if not versions and not merges:
            return []
        with self._write() as (conn, delta):
            for target, sources in sorted((merges or {}).items()):
                self._merge_nodes(conn, target, sources, delta)
            summaries = [
                self._drop_document(conn, v.doc_id, delta) or DeleteSummary(doc_id=v.doc_id) for v in versions
            ]
            self._upsert_nodes(conn, [n for v in versions for n in v.nodes], delta)
            self._upsert_edges(conn, [e for v in versions for e in v.edges], delta)
        return summaries

    def write_batch(
        self, nodes: Sequence[Node] = (), edges: Sequence[Edge] = (), delete_edges: Sequence[str] = ()
    ) -> None:
        if not nodes and not edges and not delete_edges:
            return
        with self._write() as (conn, delta):
            if delete_edges:
                found = [
                    r[0] for r in conn.execute(f"SELECT id FROM edges WHERE id IN {_IN}", (_ids_param(delete_edges),))
                ]
                self._delete_edges(conn, found, delta)
            self._upsert_nodes(conn, nodes, delta)
            self._upsert_edges(conn, edges, delta)

    def merge_nodes(self, target: str, sources: Sequence[str]) -> int:
        with self._write() as (conn, delta):
            return self._merge_nodes(conn, target, sources, delta)

    def _merge_nodes(self, conn: sqlite3.Connection, target: str, sources: Sequence[str], delta: _Delta) -> int:
        sources = sorted({s for s in sources if s != target})
        if not sources:
            return 0
        rows = conn.execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id IN {_IN}", (_ids_param(sources),)).fetchall()
        found = [_node(r) for r in rows]
        if not found:
            return 0
        existing = self.get_node_in(conn, target)
        parts = ([existing] if existing else []) + found  # the target's own non-provenance props win
        props = fold_by_doc(parts[0].label, [p.props for p in parts]) if BY_DOC in parts[0].props else parts[0].props
        folded = Node(
            id=target, label=parts[0].label, doc_ids=sorted({d for p in parts for d in p.doc_ids}), props=props
        )
        moved_ids = sorted({s.id for s in found})
        param = _ids_param(moved_ids)
        edge_rows = conn.execute(
            f"SELECT {_EDGE_COLS}, e.id FROM edges e WHERE e.src IN {_IN} OR e.dst IN {_IN}", (param, param)
        ).fetchall()
        moved = set(moved_ids)
        new_edges = []
        for row in edge_rows:
            edge = _edge(row[:-1])
            src = target if edge.src in moved else edge.src
            dst = target if edge.dst in moved else edge.dst
            if src != dst:
                new_edges.append(edge.model_copy(update={"src": src, "dst": dst}))
        self._delete_edges(conn, [r[-1] for r in edge_rows], delta)
        self._delete_nodes(conn, moved_ids, delta)  # the target stays: the upsert below folds into it
        self._upsert_nodes(conn, [folded], delta)
        self._upsert_edges(conn, new_edges, delta)
        return len(moved_ids)

    def get_node_in(self, conn: sqlite3.Connection, node_id: str) -> Node | None:
        row = conn.execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id = ?", (node_id,)).fetchone()
        return _node(row) if row else None

    def delete_document(self, doc_id: str) -> DeleteSummary:
        with self._write() as (conn, delta):
            summary = self._drop_document(conn, doc_id, delta)
            if summary is None:
                raise DocumentNotFound(doc_id)
        return summary

    def _upsert_nodes(self, conn: sqlite3.Connection, nodes: Sequence[Node], delta: _Delta) -> None:
        merged: dict[str, tuple[str, dict[str, Any], set[str]]] = {}
        for node in nodes:
            docs = set(node.doc_ids)
            props = node.props
            if node.id in merged:
                docs |= merged[node.id][2]
                props = merge_by_doc(str(node.label), merged[node.id][1], props)
            elif BY_DOC in props:
                props = derive_props(str(node.label), props)
            merged[node.id] = (str(node.label), props, docs)
        if not merged:
            return
        existing = {
            nid: (label, props, docs)
            for nid, label, props, docs in conn.execute(
                f"SELECT id, label, props, doc_ids FROM nodes WHERE id IN {_IN}", (_ids_param(merged),)
            ).fetchall()
        }
        for nid, (label, props, docs) in list(merged.items()):
            old = existing.get(nid)
            if old is not None and BY_DOC in props and BY_DOC in old[1]:
                merged[nid] = (label, merge_by_doc(label, json.loads(old[1]), props), docs)
        merged_json = {nid: (label, canonical_json(props), docs) for nid, (label, props, docs) in merged.items()}
        rows: list[tuple[str, str, str, str]] = []
        provenance: list[tuple[str, str]] = []
        fts_out: list[str] = []  # chunks whose indexed text goes stale
        fts_in: list[str] = []  # chunks to (re)index
        for nid, (label, props, docs) in merged_json.items():
            provenance.extend((d, nid) for d in docs)
            old = existing.get(nid)
            changed = True
            if old is not None:
                docs = docs | set(json.loads(old[2]))
                changed = old[0] != label or old[1] != props
                if changed and old[0] == _CHUNK:
                    fts_out.append(nid)
            if label == _CHUNK and changed:
                fts_in.append(nid)
            rows.append((nid, label, props, _docs_json(docs)))
            delta.node_upserted(nid, label)
        if fts_out:
            conn.execute(
                f"DELETE FROM chunk_fts WHERE rowid IN (SELECT rid FROM nodes WHERE id IN {_IN})",
                (_ids_param(fts_out),),
            )
        conn.executemany(
            "INSERT INTO nodes(id, label, props, doc_ids) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
            "label = excluded.label, props = excluded.props, doc_ids = excluded.doc_ids",
            rows,
        )
        if fts_in:  # one statement: FTS5 buffers the whole batch
            conn.execute(
                "INSERT INTO chunk_fts(rowid, text, section) SELECT rid, json_extract(props, '$.text'), "
                f"json_extract(props, '$.section') FROM nodes WHERE id IN {_IN}",
                (_ids_param(fts_in),),
            )
        conn.executemany("INSERT OR IGNORE INTO node_docs(doc_id, node_id) VALUES (?, ?)", provenance)

    def _upsert_edges(self, conn: sqlite3.Connection, edges: Sequence[Edge], delta: _Delta) -> None:
        merged: dict[str, tuple[Edge, set[str]]] = {}
        for edge in edges:
            eid = edge.id
            docs = set(edge.doc_ids)
            if eid in merged:
                docs |= merged[eid][1]
            merged[eid] = (edge, docs)
        if not merged:
            return
        endpoints = {e.src for e, _ in merged.values()} | {e.dst for e, _ in merged.values()}
        found = {r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE id IN {_IN}", (_ids_param(endpoints),))}
        if len(found) < len(endpoints):
            for edge in edges:
                for end in (edge.src, edge.dst):
                    if end not in found:
                        raise ValueError(
                            f"edge {edge.type.value} {edge.src!r} -> {edge.dst!r}: endpoint node {end!r} does not exist"
                        )
        existing = dict(
            conn.execute(f"SELECT id, doc_ids FROM edges WHERE id IN {_IN}", (_ids_param(merged),)).fetchall()
        )
        rows: list[tuple[str, str, str, str, str, float, str, str]] = []
        provenance: list[tuple[str, str]] = []
        for eid, (edge, docs) in merged.items():
            provenance.extend((d, eid) for d in docs)
            if eid in existing:
                docs = docs | set(json.loads(existing[eid]))
            type_ = str(edge.type)
            weight = float(edge.weight)
            props, doc_json = canonical_json(edge.props), _docs_json(docs)
            rows.append((eid, type_, edge.src, edge.dst, edge.key, weight, props, doc_json))
            delta.edge_upserted(eid, type_, edge.src, edge.dst, weight)
        conn.executemany(
            "INSERT INTO edges(id, type, src, dst, key, weight, props, doc_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET "
            "weight = excluded.weight, props = excluded.props, doc_ids = excluded.doc_ids",
            rows,
        )
        conn.executemany("INSERT OR IGNORE INTO edge_docs(doc_id, edge_id) VALUES (?, ?)", provenance)

    def _edges_touching(self, conn: sqlite3.Connection, node_ids: Sequence[str]) -> set[str]:
        param = _ids_param(node_ids)
        rows = conn.execute(
            f"SELECT id FROM edges WHERE src IN {_IN} UNION SELECT id FROM edges WHERE dst IN {_IN}", (param, param)
        ).fetchall()
        return {r[0] for r in rows}

    def _delete_edges(self, conn: sqlite3.Connection, edge_ids: Iterable[str], delta: _Delta) -> None:
        rows = [(eid,) for eid in edge_ids]
        conn.executemany("DELETE FROM edges WHERE id = ?", rows)
        conn.executemany("DELETE FROM edge_docs WHERE edge_id = ?", rows)
        for (eid,) in rows:
            delta.edge_deleted(eid)

    def _delete_nodes(self, conn: sqlite3.Connection, node_ids: Sequence[str], delta: _Delta) -> int:
        """Delete nodes and every edge touching them; returns the number of edges deleted."""
        if not node_ids:
            return 0
        touching = self._edges_touching(conn, node_ids)
        self._delete_edges(conn, touching, delta)
        conn.execute(
            f"DELETE FROM chunk_fts WHERE rowid IN (SELECT rid FROM nodes WHERE label = ? AND id IN {_IN})",
            (_CHUNK, _ids_param(node_ids)),
        )
        rows = [(nid,) for nid in node_ids]
        conn.executemany("DELETE FROM nodes WHERE id = ?", rows)
        conn.executemany("DELETE FROM node_docs WHERE node_id = ?", rows)
        for nid in node_ids:
            delta.node_deleted(nid)
        return len(touching)

    def _drop_document(self, conn: sqlite3.Connection, doc_id: str, delta: _Delta) -> DeleteSummary | None:
        """Remove ``doc_id``'s provenance and what only it supported; None when the document is unknown."""
        node_rows = conn.execute(
            "SELECT n.id, n.doc_ids FROM node_docs d JOIN nodes n ON n.id = d.node_id WHERE d.doc_id = ?", (doc_id,)
        ).fetchall()
        shared_rows = conn.execute(
            "SELECT n.id, n.label, n.props FROM node_docs d JOIN nodes n ON n.id = d.node_id "
            "WHERE d.doc_id = ? AND n.props LIKE '%\"by_doc\":%'",
            (doc_id,),
        ).fetchall()
        edge_rows = conn.execute(
            "SELECT e.id, e.doc_ids FROM edge_docs d JOIN edges e ON e.id = d.edge_id WHERE d.doc_id = ?", (doc_id,)
        ).fetchall()
        doc_node = conn.execute(
            "SELECT id, doc_ids FROM nodes WHERE id = ? AND label = ?", (doc_id, NodeLabel.DOCUMENT.value)
        ).fetchone()
        if not node_rows and not edge_rows and doc_node is None:
            return None
        if doc_node is not None and doc_node[1] == "[]":
            node_rows.append(doc_node)  # a Document node without any provenance goes too
        dead_nodes: list[str] = []
        kept_nodes: list[tuple[str, str]] = []
        for nid, docs_json in node_rows:
            docs = [d for d in json.loads(docs_json) if d != doc_id]
            if docs:
                kept_nodes.append((_docs_json(docs), nid))
            else:
                dead_nodes.append(nid)
        dead_edges: set[str] = set()
        kept_edges: list[tuple[str, str]] = []
        for eid, docs_json in edge_rows:
            docs = [d for d in json.loads(docs_json) if d != doc_id]
            if docs:
                kept_edges.append((_docs_json(docs), eid))
            else:
                dead_edges.add(eid)
        conn.execute("DELETE FROM node_docs WHERE doc_id = ?", (doc_id,))
        conn.execute("DELETE FROM edge_docs WHERE doc_id = ?", (doc_id,))
        conn.executemany("UPDATE nodes SET doc_ids = ? WHERE id = ?", kept_nodes)
        kept_ids = {nid for _, nid in kept_nodes}
        reprops = []
        for nid, label, props_json in shared_rows:
            if nid in kept_ids:
                props = drop_doc_props(label, json.loads(props_json), doc_id)
                if props is not None:
                    reprops.append((canonical_json(props), nid))
        conn.executemany("UPDATE nodes SET props = ? WHERE id = ?", reprops)
        conn.executemany("UPDATE edges SET doc_ids = ? WHERE id = ?", kept_edges)
        self._delete_edges(conn, dead_edges, delta)
        cascaded = self._delete_nodes(conn, dead_nodes, delta)  # other edges that touched them
        return DeleteSummary(
            doc_id=doc_id,
            nodes_deleted=len(dead_nodes),
            edges_deleted=len(dead_edges) + cascaded,
            nodes_kept=len(kept_nodes),
        )

    # ---------------------------------------------------------------- reads: nodes and edges
    def get_node(self, node_id: str) -> Node | None:
        row = self._conn().execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id = ?", (node_id,)).fetchone()
        return _node(row) if row else None

    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        if not ids:
            return []
        rows = self._conn().execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id IN {_IN}", (_ids_param(ids),))
        found = {row[0]: _node(row) for row in rows.fetchall()}
        return [found[i] for i in ids if i in found]

    def nodes_by_label(self, label: NodeLabel | str, doc_id: str | None = None) -> list[Node]:
        label = str(label)
        if doc_id is None:
            sql = f"SELECT {_NODE_COLS} FROM nodes n WHERE n.label = ? ORDER BY n.id"
            args: tuple[str, ...] = (label,)
        else:
            sql = (
                f"SELECT {_NODE_COLS} FROM node_docs d JOIN nodes n ON n.id = d.node_id "
                "WHERE d.doc_id = ? AND n.label = ? ORDER BY n.id"
            )
            args = (doc_id, label)
        return [_node(row) for row in self._conn().execute(sql, args).fetchall()]

    def get_edges(
        self,
        src: str | None = None,
        dst: str | None = None,
        types: Iterable[EdgeType | str] | None = None,
    ) -> list[Edge]:
        where, args = [], []
        if src is not None:
            where.append("e.src = ?")
            args.append(src)
        if dst is not None:
            where.append("e.dst = ?")
            args.append(dst)
        type_list = _type_values(types)
        if type_list is not None:
            where.append(f"e.type IN {_IN}")
            args.append(json.dumps(type_list))
        sql = f"SELECT {_EDGE_COLS} FROM edges e"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY e.type, e.src, e.dst, e.key"
        return [_edge(row) for row in self._conn().execute(sql, args).fetchall()]

    def edge_tuples(self, types: Iterable[EdgeType | str]) -> list[EdgeRow]:
        type_list = _type_values(types) or []
        sql = f"SELECT type, src, dst, weight FROM edges WHERE type IN {_IN} ORDER BY type, src, dst, key"
        rows = self._conn().execute(sql, (json.dumps(type_list),)).fetchall()
        return [EdgeRow(EdgeType(t), s, d, float(w)) for t, s, d, w in rows]

    def neighbors(
        self,
        node_id: str,
        types: Iterable[EdgeType | str] | None = None,
        direction: Direction = "out",
    ) -> list[Neighbor]:
        if direction not in ("out", "in", "both"):
            raise ValueError(f"direction must be 'out', 'in' or 'both', not {direction!r}")
        type_list = _type_values(types)
        type_sql = "" if type_list is None else f" AND e.type IN {_IN}"
        type_args = () if type_list is None else (json.dumps(type_list),)
        parts: list[tuple[Direction, str]] = []
        select = f"SELECT {_EDGE_COLS}, {_NODE_COLS} FROM edges e JOIN nodes n"
        if direction in ("out", "both"):
            parts.append(("out", f"{select} ON n.id = e.dst WHERE e.src = ?"))
        if direction in ("in", "both"):
            loop = " AND e.src != e.dst" if direction == "both" else ""  # a self-loop is listed once
            parts.append(("in", f"{select} ON n.id = e.src WHERE e.dst = ?{loop}"))
        out: list[Neighbor] = []
        with self._read() as conn:
            for side, sql in parts:
                for row in conn.execute(sql + type_sql, (node_id, *type_args)).fetchall():
                    out.append(Neighbor.model_construct(node=_node(row[7:]), edge=_edge(row[:7]), direction=side))
        out.sort(key=lambda nb: (nb.edge.type.value, nb.node.id, nb.direction, nb.edge.key))
        return out

    def generation(self) -> int:
        return int(self._conn().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    def document_ids(self) -> list[str]:
        rows = self._conn().execute("SELECT id FROM nodes WHERE label = ? ORDER BY id", (NodeLabel.DOCUMENT.value,))
        return [r[0] for r in rows.fetchall()]

    # ---------------------------------------------------------------- graph algorithms
    def subgraph(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        types: Iterable[EdgeType | str] | None = None,
        direction: Direction = "both",
        max_nodes: int | None = None,
    ) -> Subgraph:
        import numpy as np

        if direction not in ("out", "in", "both"):
            raise ValueError(f"direction must be 'out', 'in' or 'both', not {direction!r}")
        type_list = _type_values(types)
        snap = self._snapshot()
        hops = max(hops, 0)
        limit = math.inf if max_nodes is None else max(max_nodes, 0)
        level = sorted({i for s in seeds if (i := snap.live(s)) is not None}, key=lambda i: snap.ids[i])
        chosen: list[int] = []
        visited: set[int] = set()
        for depth in range(hops + 1):
            if len(chosen) + len(level) > limit:
                level = level[: int(limit) - len(chosen)]  # nearer first, then by id
            chosen.extend(level)
            visited.update(level)
            if depth == hops or not level or len(chosen) >= limit:
                break
            step = np.unique(snap.reach(type_list, direction)[np.array(level, dtype=np.int64)].indices)
            fresh = (i for i in step.tolist() if i not in visited and snap.node_alive[i])
            level = sorted(fresh, key=lambda i: snap.ids[i])
        ids = sorted(snap.ids[i] for i in chosen)
        if not ids:
            return Subgraph()
        # src through its index, dst checked here: "src IN .. AND dst IN .." makes SQLite scan far more rows
        sql = f"SELECT {_EDGE_COLS} FROM edges e WHERE e.src IN {_IN}"
        param = _ids_param(ids)
        args: list[str] = [param]
        if type_list is not None:
            sql += f" AND e.type IN {_IN}"
            args.append(json.dumps(type_list))
        with self._read() as conn:
            nodes = [_node(r) for r in conn.execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id IN {_IN}", (param,))]
            wanted = set(ids)
            edges = [_edge(r) for r in conn.execute(sql, args).fetchall() if r[2] in wanted]
        nodes.sort(key=lambda n: n.id)
        present = {n.id for n in nodes}
        edges = sorted((e for e in edges if e.src in present and e.dst in present), key=lambda e: e.id)
        return Subgraph(nodes=nodes, edges=edges)

    def personalized_pagerank(
        self,
        seeds: Mapping[str, float],
        types: Iterable[EdgeType | str] | None = None,
        damping: float = 0.85,
        labels: Iterable[NodeLabel | str] | None = None,
        top_k: int | None = None,
        undirected: bool = True,
    ) -> list[ScoredId]:
        """Power iteration; non-positive seed weights count only when no seed has a positive one (then the
        known seeds share the reset mass equally). Only nodes with a positive score are returned."""
        import numpy as np

        if top_k is not None and top_k <= 0:
            return []
        snap = self._snapshot()
        known = {i: float(w) for s, w in seeds.items() if (i := snap.live(s)) is not None}
        if not known:
            return []
        reset = np.zeros(snap.n)
        positive = {i: w for i, w in known.items() if w > 0 and math.isfinite(w)}
        for i, w in (positive or dict.fromkeys(known, 1.0)).items():
            reset[i] += w
        reset /= reset.sum()
        pt, dangling = snap.transition(_type_values(types), undirected)
        x = reset.copy()
        for _ in range(PPR_MAX_ITER):
            nxt = damping * (pt @ x) + (damping * x[dangling].sum() + (1.0 - damping)) * reset
            done = np.abs(nxt - x).sum() < PPR_TOL
            x = nxt
            if done:
                break
        scores = np.round(x, SCORE_DIGITS)
        mask = (scores > 0) & snap.node_alive
        if labels is not None:
            codes = [_LABEL_CODES[str(lb)] for lb in labels if str(lb) in _LABEL_CODES]
            mask &= np.isin(snap.label, np.array(codes, dtype=np.int8))
        cand = np.flatnonzero(mask)
        if top_k is not None and top_k < len(cand):
            threshold = np.partition(scores[cand], len(cand) - top_k)[len(cand) - top_k]
            cand = cand[scores[cand] >= threshold]
        ranked = sorted((-float(scores[i]), snap.ids[i]) for i in cand)
        if top_k is not None:
            ranked = ranked[:top_k]
        return [ScoredId.model_construct(id=nid, score=-neg) for neg, nid in ranked]

    def bm25_search(self, query: str, k: int = 10, doc_ids: Sequence[str] | None = None) -> list[ScoredId]:
        match = fts_query(query)
        if match is None or k <= 0 or (doc_ids is not None and not doc_ids):
            return []
        score = f"-bm25(chunk_fts, {FTS_WEIGHTS[0]}, {FTS_WEIGHTS[1]})"
        sql = (
            f"SELECT n.id, {score} AS score FROM chunk_fts JOIN nodes n ON n.rid = chunk_fts.rowid "
            "WHERE chunk_fts MATCH ?"
        )
        args: list[Any] = [match]
        if doc_ids is not None:
            sql += (
                " AND chunk_fts.rowid IN (SELECT m.rid FROM node_docs d JOIN nodes m ON m.id = d.node_id "
                f"WHERE d.doc_id IN {_IN})"
            )
            args.append(_ids_param(doc_ids))
        sql += " ORDER BY score DESC, n.id ASC LIMIT ?"
        args.append(int(k))
        rows = self._conn().execute(sql, args).fetchall()
        return [ScoredId.model_construct(id=nid, score=float(s)) for nid, s in rows]

    # ---------------------------------------------------------------- summaries
    def counts(self) -> GraphCounts:
        with self._read() as conn:
            nodes = dict(conn.execute("SELECT label, COUNT(*) FROM nodes GROUP BY label").fetchall())
            edges = dict(conn.execute("SELECT type, COUNT(*) FROM edges GROUP BY type").fetchall())
            (level,) = conn.execute(
                "SELECT MAX(CAST(json_extract(props, '$.level') AS INTEGER)) FROM nodes WHERE label = ?",
                (NodeLabel.SECTION.value,),
            ).fetchone()
        return GraphCounts.from_partial(nodes, edges, level or 0)

    def export(self) -> dict[str, Any]:
        with self._read() as conn:
            node_rows = conn.execute("SELECT id, label, doc_ids, props FROM nodes").fetchall()
            edge_rows = conn.execute("SELECT id, type, src, dst, key, weight, doc_ids, props FROM edges").fetchall()
        nodes = [
            {"id": nid, "label": label, "doc_ids": json.loads(docs), "props": json.loads(props)}
            for nid, label, docs, props in sorted(node_rows)
        ]
        edges = [
            {
                "id": eid,
                "type": type_,
                "src": src,
                "dst": dst,
                "key": key,
                "weight": float(weight),
                "doc_ids": json.loads(docs),
                "props": json.loads(props),
            }
            for eid, type_, src, dst, key, weight, docs, props in sorted(edge_rows)
        ]
        return {"nodes": nodes, "edges": edges}

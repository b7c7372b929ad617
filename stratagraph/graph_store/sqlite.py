"""The embedded graph store: one SQLite file (WAL).

Tables: ``nodes`` and ``edges`` keep every record with ``props`` and ``doc_ids`` as canonical JSON;
``node_docs`` / ``edge_docs`` index provenance by document so deleting one is a few index range scans;
``meta.generation`` counts write transactions (:meth:`SQLiteGraphStore.generation`, what the retrieval
index's cache is keyed by, so a write by another process is seen at the next query); every row written carries
the generation it was written at (``gen``, indexed) and every row deleted leaves a row in ``tombstones`` (the
last :data:`TOMBSTONE_ROWS` or so; ``meta.feed_floor`` says how far back they reach): the change feed
(:meth:`SQLiteGraphStore.changes_since`); ``leases`` holds the
writers' leases (``graph_store/lease.py``), outside the graph. Graph algorithms and
BM25 are not here: they run over the shared ``stratagraph.retrieval.index.GraphIndex``, the same on every
backend.

Concurrency (DESIGN.md): one connection per thread, a per-file process-wide lock plus ``BEGIN IMMEDIATE``
around every write (one transaction per write method), WAL so readers never wait.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stratagraph.graph_store.base import (
    Changes,
    DeleteSummary,
    DocumentNotFound,
    DocumentVersion,
    EDGE_TYPES,
    EdgeChange,
    EdgeRow,
    GraphCounts,
    Neighbour,
    cut_neighbours,
    GraphStore,
    LeaseRecord,
    StoreInfo,
    StoreUnavailable,
)
from stratagraph.graph_store.semantics import (
    StoredNode,
    check_endpoints,
    docs_json,
    drop_plan,
    edge_endpoints,
    edge_writes,
    fold_edges,
    fold_nodes,
    merge_plan,
    node_writes,
)
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel

__all__ = ["SQLiteGraphStore"]

BUSY_TIMEOUT_MS = 60_000
SCHEMA_VERSION = 2  # 2: the change feed (``gen`` on nodes and edges, ``tombstones``, ``meta.feed_floor``)
#: deletions the change feed keeps (about): past it the oldest generations' are pruned, and a reader whose index
#: is older than what is left rebuilds it whole
TOMBSTONE_ROWS = 200_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    props TEXT NOT NULL,
    doc_ids TEXT NOT NULL,
    gen INTEGER NOT NULL DEFAULT 0
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
    doc_ids TEXT NOT NULL,
    gen INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src, type);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst, type);
CREATE INDEX IF NOT EXISTS edges_type ON edges(type, src, dst, key);
CREATE INDEX IF NOT EXISTS edges_src_heavy ON edges(src, type, weight DESC, dst, key);
CREATE INDEX IF NOT EXISTS edges_dst_heavy ON edges(dst, type, weight DESC, src, key);
CREATE TABLE IF NOT EXISTS node_docs (
    doc_id TEXT NOT NULL, node_id TEXT NOT NULL, PRIMARY KEY (doc_id, node_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS node_docs_node ON node_docs(node_id);
CREATE TABLE IF NOT EXISTS edge_docs (
    doc_id TEXT NOT NULL, edge_id TEXT NOT NULL, PRIMARY KEY (doc_id, edge_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edge_docs_edge ON edge_docs(edge_id);
CREATE TABLE IF NOT EXISTS leases (
    name TEXT PRIMARY KEY, holder TEXT NOT NULL, beat INTEGER NOT NULL, ttl REAL NOT NULL, taken REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tombstones (
    seq INTEGER PRIMARY KEY, gen INTEGER NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL,
    type TEXT, src TEXT, dst TEXT, key TEXT
);
CREATE INDEX IF NOT EXISTS tombstones_gen ON tombstones(gen);
DROP TABLE IF EXISTS chunk_fts;
INSERT OR IGNORE INTO meta(key, value) VALUES ('generation', 0);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', 2);
INSERT OR IGNORE INTO meta(key, value) VALUES ('feed_floor', 0);
"""

# version 1 -> 2: rows written before carry generation 0, and the feed starts at the generation of the migration
_MIGRATE_1 = """
ALTER TABLE nodes ADD COLUMN gen INTEGER NOT NULL DEFAULT 0;
ALTER TABLE edges ADD COLUMN gen INTEGER NOT NULL DEFAULT 0;
UPDATE meta SET value = (SELECT value FROM meta WHERE key = 'generation') WHERE key = 'feed_floor';
UPDATE meta SET value = 2 WHERE key = 'schema_version';
"""
_GEN_INDEXES = """
CREATE INDEX IF NOT EXISTS nodes_gen ON nodes(gen);
CREATE INDEX IF NOT EXISTS edges_gen ON edges(gen);
"""

_IN = "(SELECT value FROM json_each(?))"  # one JSON-array parameter instead of a variable list
_NODE_COLS = "n.id, n.label, n.props, n.doc_ids"
_EDGE_COLS = "e.type, e.src, e.dst, e.key, e.weight, e.props, e.doc_ids"

_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _lease_holder(conn: sqlite3.Connection, name: str) -> str | None:
    """Who holds the lease ``name``, read on ``conn`` (in its transaction)."""
    row = conn.execute("SELECT holder FROM leases WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


def _write_lock_for(path: Path) -> threading.Lock:
    key = str(path.resolve())
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.Lock())


_docs_json = docs_json


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


def _quote(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _ids_param(ids: Iterable[str]) -> str:
    return json.dumps(list(ids))


def _type_values(types: Iterable[EdgeType | str] | None) -> list[str] | None:
    return None if types is None else sorted({str(t) for t in types})


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


def _tuples(
    conn: sqlite3.Connection,
    label: NodeLabel | str,
    fields: Sequence[str],
    where: str = "",
    args: tuple[Any, ...] = (),
    source: str = "nodes",
) -> list[tuple[Any, ...]]:
    """:meth:`SQLiteGraphStore.node_tuples` of the nodes of ``label`` that also meet ``where`` (read from
    ``source``: the table, or the table with an index named), sorted by id."""
    cols = []
    for name in fields:
        if name == "doc_ids":
            cols.append("doc_ids, 'array'")
        else:
            path = "$." + json.dumps(str(name))  # a quoted JSON path: any key is safe
            cols.append(f"json_extract(props, {_quote(path)}), json_type(props, {_quote(path)})")
    sql = f"SELECT id{''.join(', ' + c for c in cols)} FROM {source} WHERE label = ? {where}"
    found = conn.execute(sql + (" ORDER BY id" if source == "nodes" else ""), (str(label), *args)).fetchall()
    out = []
    for row in found if source == "nodes" else sorted(found, key=lambda r: r[0]):
        values = [row[0]]
        for value, kind in zip(row[1::2], row[2::2], strict=True):
            values.append(json.loads(value) if kind in ("array", "object") and value is not None else value)
        out.append(tuple(values))
    return out


def _directions(direction: str) -> tuple[bool, ...]:
    """``(True,)`` for out, ``(False,)`` for in, both for "both"."""
    if direction not in ("out", "in", "both"):
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    return {"out": (True,), "in": (False,), "both": (True, False)}[direction]


def _neighbour_sql(type_: str, outgoing: bool, limit: int | None) -> str:
    """The seeds' edges of one type and direction (``?2``: the per-seed limit, heaviest first)."""
    here, there = ("src", "dst") if outgoing else ("dst", "src")
    cols = f"s.id, e.type, e.{there}, {int(outgoing)}, e.weight, e.key"
    t = _quote(type_)
    if limit is None:
        return f"SELECT {cols} FROM seeds s JOIN edges e ON e.{here} = s.id AND e.type = {t}"
    return (
        f"SELECT {cols} FROM seeds s JOIN edges e ON e.rowid IN (SELECT rowid FROM edges WHERE {here} = s.id "
        f"AND type = {t} ORDER BY weight DESC, {there}, key LIMIT ?2)"
    )


# ------------------------------------------------------------------------------------------ the store


class SQLiteGraphStore(GraphStore):
    """Embedded :class:`GraphStore` in one SQLite file, safe across threads and processes."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._conns_lock = threading.Lock()
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write_lock = _write_lock_for(self.path)
            setup = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open graph store {self.path}: {exc}") from exc
        try:
            _enable_wal(setup)
            with self._write_lock:
                setup.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}")
                try:
                    version = setup.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
                    if version == 1:
                        for statement in _MIGRATE_1.strip().split(";\n"):
                            setup.execute(statement)
                        version = 2
                    if version == SCHEMA_VERSION:
                        for statement in _GEN_INDEXES.strip().split(";\n"):
                            setup.execute(statement.rstrip(";"))
                    setup.execute("COMMIT")
                except BaseException:
                    if setup.in_transaction:
                        setup.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open graph store {self.path}: {exc}") from exc
        finally:
            setup.close()
        if version != SCHEMA_VERSION:
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

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._conns_lock:
            if self._closed:
                return
            self._closed = True
            conns, self._conns = self._conns, []
        for _, conn in conns:
            conn.close()

    @contextmanager
    def _write(self, bump: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction: process lock, BEGIN IMMEDIATE, generation bump (unless ``bump`` is False:
        a lease, which is not part of the graph). Every row the transaction writes carries the generation it
        commits as (``gen``), every row it deletes leaves a tombstone of that generation: the change feed."""
        conn = self._conn()
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreUnavailable(f"graph store {self.path} is not writable: {exc}") from exc
            try:
                if bump:
                    self._check_fence(lambda name: _lease_holder(conn, name))
                    (current,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
                    self._local.gen = int(current) + 1
                yield conn
                if bump:
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (self._local.gen,))
                    self._prune_tombstones(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _prune_tombstones(self, conn: sqlite3.Connection) -> None:
        """Keep about :data:`TOMBSTONE_ROWS` tombstones: past that, drop the oldest generations' down to half of
        it and raise ``feed_floor`` to the newest generation dropped (the feed cannot say what it lost)."""
        low, high = conn.execute("SELECT MIN(seq), MAX(seq) FROM tombstones").fetchone()
        if low is None or high - low + 1 <= TOMBSTONE_ROWS:
            return
        (cutoff,) = conn.execute("SELECT gen FROM tombstones WHERE seq = ?", (high - TOMBSTONE_ROWS // 2,)).fetchone()
        conn.execute("DELETE FROM tombstones WHERE gen <= ?", (cutoff,))
        conn.execute("UPDATE meta SET value = MAX(value, ?) WHERE key = 'feed_floor'", (cutoff,))

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several statements."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # ---------------------------------------------------------------- leases
    def read_lease(self, name: str) -> LeaseRecord | None:
        row = self._conn().execute("SELECT holder, beat, ttl, taken FROM leases WHERE name = ?", (name,)).fetchone()
        return LeaseRecord(row[0], int(row[1]), float(row[2]), float(row[3])) if row else None

    def swap_lease(self, name: str, expect: LeaseRecord | None, new: LeaseRecord | None) -> bool:
        with self._write(bump=False) as conn:
            row = conn.execute("SELECT holder, beat FROM leases WHERE name = ?", (name,)).fetchone()
            current = (row[0], int(row[1])) if row else None
            if current != (None if expect is None else (expect.holder, expect.beat)):
                return False
            if new is None:
                conn.execute("DELETE FROM leases WHERE name = ?", (name,))
            else:
                conn.execute(
                    "INSERT INTO leases(name, holder, beat, ttl, taken) VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO "
                    "UPDATE SET holder = excluded.holder, beat = excluded.beat, ttl = excluded.ttl, taken = excluded.taken",
                    (name, new.holder, new.beat, new.ttl, new.taken),
                )
        return True

    # ---------------------------------------------------------------- writes
    def replace_documents(
        self, versions: Sequence[DocumentVersion], merges: Mapping[str, Sequence[str]] | None = None
    ) -> list[DeleteSummary]:
        if not versions and not merges:
            return []
        with self._write() as conn:
            for target, sources in sorted((merges or {}).items()):
                self._merge_nodes(conn, target, sources)
            summaries = [
                self._drop_document(conn, v.doc_id) or DeleteSummary(doc_id=v.doc_id) for v in versions
            ]
            self._upsert_nodes(conn, [n for v in versions for n in v.nodes])
            self._upsert_edges(conn, [e for v in versions for e in v.edges])
        return summaries

    def write_batch(
        self, nodes: Sequence[Node] = (), edges: Sequence[Edge] = (), delete_edges: Sequence[str] = ()
    ) -> None:
        if not nodes and not edges and not delete_edges:
            return
        with self._write() as conn:
            if delete_edges:
                found = [
                    r[0] for r in conn.execute(f"SELECT id FROM edges WHERE id IN {_IN}", (_ids_param(delete_edges),))
                ]
                self._delete_edges(conn, found)
            self._upsert_nodes(conn, nodes)
            self._upsert_edges(conn, edges)

    def merge_nodes(self, target: str, sources: Sequence[str]) -> int:
        with self._write() as conn:
            return self._merge_nodes(conn, target, sources)

    def _merge_nodes(self, conn: sqlite3.Connection, target: str, sources: Sequence[str]) -> int:
        sources = sorted({s for s in sources if s != target})
        if not sources:
            return 0
        rows = conn.execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id IN {_IN}", (_ids_param(sources),)).fetchall()
        found = [_node(r) for r in rows]
        if not found:
            return 0
        param = _ids_param(sorted({s.id for s in found}))
        touching = conn.execute(
            f"SELECT {_EDGE_COLS} FROM edges e WHERE e.src IN {_IN} OR e.dst IN {_IN}", (param, param)
        ).fetchall()
        plan = merge_plan(target, self.get_node_in(conn, target), found, [_edge(r) for r in touching])
        if plan is None:
            return 0
        self._delete_edges(conn, plan.dead_edges)
        self._delete_nodes(conn, plan.dead_nodes)  # the target stays: the upsert below folds into it
        self._upsert_nodes(conn, [plan.target])
        self._upsert_edges(conn, plan.new_edges)
        return len(plan.dead_nodes)

    def get_node_in(self, conn: sqlite3.Connection, node_id: str) -> Node | None:
        row = conn.execute(f"SELECT {_NODE_COLS} FROM nodes n WHERE n.id = ?", (node_id,)).fetchone()
        return _node(row) if row else None

    def delete_document(self, doc_id: str) -> DeleteSummary:
        with self._write() as conn:
            summary = self._drop_document(conn, doc_id)
            if summary is None:
                raise DocumentNotFound(doc_id)
        return summary

    def _upsert_nodes(self, conn: sqlite3.Connection, nodes: Sequence[Node]) -> None:
        folded = fold_nodes(nodes)
        if not folded:
            return
        existing = {
            nid: StoredNode(label, props, json.loads(docs))
            for nid, label, props, docs in conn.execute(
                f"SELECT id, label, props, doc_ids FROM nodes WHERE id IN {_IN}", (_ids_param(folded),)
            ).fetchall()
        }
        writes = node_writes(folded, existing)
        conn.executemany(
            "INSERT INTO nodes(id, label, props, doc_ids, gen) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
            "label = excluded.label, props = excluded.props, doc_ids = excluded.doc_ids, gen = excluded.gen",
            [(w.id, w.label, w.props_json, _docs_json(w.doc_ids), self._local.gen) for w in writes],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO node_docs(doc_id, node_id) VALUES (?, ?)",
            [(d, w.id) for w in writes for d in w.batch_docs],
        )

    def _upsert_edges(self, conn: sqlite3.Connection, edges: Sequence[Edge]) -> None:
        folded = fold_edges(edges)
        if not folded:
            return
        endpoints = edge_endpoints(folded)
        found = {r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE id IN {_IN}", (_ids_param(endpoints),))}
        if len(found) < len(endpoints):
            check_endpoints(edges, found)
        existing = {
            eid: json.loads(docs)
            for eid, docs in conn.execute(f"SELECT id, doc_ids FROM edges WHERE id IN {_IN}", (_ids_param(folded),))
        }
        writes = edge_writes(folded, existing)
        conn.executemany(
            "INSERT INTO edges(id, type, src, dst, key, weight, props, doc_ids, gen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET "
            "weight = excluded.weight, props = excluded.props, doc_ids = excluded.doc_ids, gen = excluded.gen",
            [
                (w.id, w.type, w.src, w.dst, w.key, w.weight, w.props_json, _docs_json(w.doc_ids), self._local.gen)
                for w in writes
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO edge_docs(doc_id, edge_id) VALUES (?, ?)",
            [(d, w.id) for w in writes for d in w.batch_docs],
        )

    def _edges_touching(self, conn: sqlite3.Connection, node_ids: Sequence[str]) -> set[str]:
        param = _ids_param(node_ids)
        rows = conn.execute(
            f"SELECT id FROM edges WHERE src IN {_IN} UNION SELECT id FROM edges WHERE dst IN {_IN}", (param, param)
        ).fetchall()
        return {r[0] for r in rows}

    def _delete_edges(self, conn: sqlite3.Connection, edge_ids: Iterable[str]) -> None:
        rows = [(eid,) for eid in edge_ids]
        conn.executemany(
            "INSERT INTO tombstones(gen, kind, id, type, src, dst, key) "
            "SELECT ?, 'edge', id, type, src, dst, key FROM edges WHERE id = ?",
            [(self._local.gen, eid) for (eid,) in rows],
        )
        conn.executemany("DELETE FROM edges WHERE id = ?", rows)
        conn.executemany("DELETE FROM edge_docs WHERE edge_id = ?", rows)

    def _delete_nodes(self, conn: sqlite3.Connection, node_ids: Sequence[str]) -> int:
        """Delete nodes and every edge touching them; returns the number of edges deleted."""
        if not node_ids:
            return 0
        touching = self._edges_touching(conn, node_ids)
        self._delete_edges(conn, touching)
        rows = [(nid,) for nid in node_ids]
        conn.executemany(
            "INSERT INTO tombstones(gen, kind, id, type) SELECT ?, 'node', id, label FROM nodes WHERE id = ?",
            [(self._local.gen, nid) for (nid,) in rows],
        )
        conn.executemany("DELETE FROM nodes WHERE id = ?", rows)
        conn.executemany("DELETE FROM node_docs WHERE node_id = ?", rows)
        return len(touching)

    def _drop_document(self, conn: sqlite3.Connection, doc_id: str) -> DeleteSummary | None:
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
        plan = drop_plan(
            doc_id,
            [(nid, json.loads(docs)) for nid, docs in node_rows],
            shared_rows,
            [(eid, json.loads(docs)) for eid, docs in edge_rows],
            (doc_node[0], json.loads(doc_node[1])) if doc_node is not None else None,
        )
        if plan is None:
            return None
        conn.execute("DELETE FROM node_docs WHERE doc_id = ?", (doc_id,))
        conn.execute("DELETE FROM edge_docs WHERE doc_id = ?", (doc_id,))
        gen = self._local.gen
        conn.executemany(
            "UPDATE nodes SET doc_ids = ?, gen = ? WHERE id = ?", [(_docs_json(d), gen, n) for n, d in plan.kept_nodes.items()]
        )
        conn.executemany("UPDATE nodes SET props = ?, gen = ? WHERE id = ?", [(p, gen, n) for n, p in plan.reprops.items()])
        conn.executemany(
            "UPDATE edges SET doc_ids = ?, gen = ? WHERE id = ?", [(_docs_json(d), gen, e) for e, d in plan.kept_edges.items()]
        )
        self._delete_edges(conn, plan.dead_edges)
        cascaded = self._delete_nodes(conn, plan.dead_nodes)  # other edges that touched them
        return plan.summary(cascaded)

    # ---------------------------------------------------------------- reads
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

    def node_tuples(self, label: NodeLabel | str, fields: Sequence[str]) -> list[tuple[Any, ...]]:
        return _tuples(self._conn(), label, fields)

    def get_edges(
        self,
        src: str | Sequence[str] | None = None,
        dst: str | Sequence[str] | None = None,
        types: Iterable[EdgeType | str] | None = None,
    ) -> list[Edge]:
        where, args = [], []
        for column, ids in (("e.src", src), ("e.dst", dst)):
            if ids is None:
                continue
            if isinstance(ids, str):
                where.append(f"{column} = ?")
                args.append(ids)
            else:
                where.append(f"{column} IN {_IN}")
                args.append(_ids_param(ids))
        type_list = _type_values(types)
        if type_list is not None:
            where.append(f"e.type IN {_IN}")
            args.append(json.dumps(type_list))
        sql = f"SELECT {_EDGE_COLS} FROM edges e"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY e.type, e.src, e.dst, e.key"
        return [_edge(row) for row in self._conn().execute(sql, args).fetchall()]

    def keyed_edge_tuples(self, types: Iterable[EdgeType | str]) -> list[tuple[EdgeRow, str]]:
        type_list = _type_values(types) or []
        sql = f"SELECT type, src, dst, weight, key FROM edges WHERE type IN {_IN} ORDER BY type, src, dst, key"
        rows = self._conn().execute(sql, (json.dumps(type_list),)).fetchall()
        return [(EdgeRow(EDGE_TYPES[t], s, d, float(w)), k) for t, s, d, w, k in rows]

    def changes_since(
        self, generation: int, fields: Mapping[str, Sequence[str]] | None = None, limit: int | None = None
    ) -> Changes | None:
        """Rows whose ``gen`` is above ``generation`` and tombstones above it whose id is not stored again, in
        one read transaction (index range reads on ``gen``)."""
        fields = fields or {}
        with self._read() as conn:
            (now,) = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            (floor,) = conn.execute("SELECT value FROM meta WHERE key = 'feed_floor'").fetchone()
            if generation < floor or generation > now:
                return None
            if limit is not None:
                (count,) = conn.execute(
                    "SELECT (SELECT COUNT(*) FROM nodes WHERE gen > ?1) + (SELECT COUNT(*) FROM edges WHERE gen > ?1) "
                    "+ (SELECT COUNT(*) FROM tombstones WHERE gen > ?1)",
                    (generation,),
                ).fetchone()
                if count > limit:
                    return None
            written: dict[str, list[tuple[Any, ...]]] = {}
            # every read below goes through the gen indexes (INDEXED BY: the planner would rather walk the id
            # or type order and scan the table), then sorts the few rows it found here
            rows = conn.execute("SELECT id, label FROM nodes INDEXED BY nodes_gen WHERE gen > ?", (generation,))
            for nid, label in sorted(rows.fetchall()):
                written.setdefault(label, []).append((nid,))
            for label in sorted(written):
                if label in fields:
                    written[label] = _tuples(conn, label, fields[label], "AND gen > ?", (generation,), "nodes INDEXED BY nodes_gen")
            deleted_nodes = sorted(
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT id FROM tombstones INDEXED BY tombstones_gen WHERE gen > ? AND kind = 'node' "
                    "AND id NOT IN (SELECT id FROM nodes)",
                    (generation,),
                )
            )
            edges = sorted(
                (
                    EdgeChange(eid, EDGE_TYPES[t], s, d, k, float(w))
                    for eid, t, s, d, k, w in conn.execute(
                        "SELECT id, type, src, dst, key, weight FROM edges INDEXED BY edges_gen WHERE gen > ?", (generation,)
                    )
                ),
                key=lambda e: (e.type.value, e.src, e.dst, e.key),
            )
            deleted_edges = sorted(
                (
                    EdgeChange(eid, EDGE_TYPES[t], s, d, k or "", None)
                    for eid, t, s, d, k in conn.execute(
                        "SELECT DISTINCT id, type, src, dst, key FROM tombstones INDEXED BY tombstones_gen WHERE gen > ? "
                        "AND kind = 'edge' AND id NOT IN (SELECT id FROM edges)",
                        (generation,),
                    )
                ),
                key=lambda e: (e.type.value, e.src, e.dst, e.key),
            )
        return Changes(int(now), written, deleted_nodes, edges, deleted_edges)

    def edge_tuples(self, types: Iterable[EdgeType | str]) -> list[EdgeRow]:
        type_list = _type_values(types) or []
        sql = f"SELECT type, src, dst, weight FROM edges WHERE type IN {_IN} ORDER BY type, src, dst, key"
        rows = self._conn().execute(sql, (json.dumps(type_list),)).fetchall()
        return [EdgeRow(EdgeType(t), s, d, float(w)) for t, s, d, w in rows]

    def neighbourhood(
        self,
        ids: Sequence[str],
        types: Iterable[EdgeType | str],
        direction: str = "both",
        limit: int | None = None,
    ) -> list[Neighbour]:
        """One statement: for each (type, direction) asked, the edges of the seeds through the
        ``edges_src_heavy`` / ``edges_dst_heavy`` indexes; with ``limit``, each seed's first ``limit`` of
        that type and direction (an index range read, heaviest first: a hub costs ``limit`` rows, not its
        degree), cut to ``limit`` per node across them all here (:func:`~stratagraph.graph_store.base.
        cut_neighbours`)."""
        type_list = _type_values(types) or []
        if not ids or not type_list:
            return []
        parts = [_neighbour_sql(t, out, limit) for t in type_list for out in _directions(direction)]
        sql = "WITH seeds(id) AS (SELECT DISTINCT value FROM json_each(?1)) " + " UNION ALL ".join(parts)
        args: tuple[Any, ...] = (_ids_param(ids),) if limit is None else (_ids_param(ids), int(limit))
        rows = self._conn().execute(sql, args).fetchall()
        return cut_neighbours(
            (Neighbour(n, EDGE_TYPES[t], o, bool(out), float(w), k) for n, t, o, out, w, k in rows), limit
        )

    def generation(self) -> int:
        return int(self._conn().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    # ---------------------------------------------------------------- summaries
    def info(self) -> StoreInfo:
        return StoreInfo(backend="sqlite", location=str(self.path))

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

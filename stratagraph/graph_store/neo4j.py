"""The server graph store: Neo4j (or any Bolt server that speaks its Cypher) over the official driver.

Model. Every node is ``(:Node:<Label> {id, label, doc_ids, props, ...})`` and every edge
``-[:<TYPE> {id, key, weight, doc_ids, props, ...}]->`` between two such nodes. ``props`` holds the node's or
edge's props as canonical JSON (what :meth:`get_node`, :meth:`export` and :meth:`node_tuples` read, so
everything round-trips exactly and ``export()`` is byte-identical to the SQLite store's for the same graph);
``doc_ids`` is the sorted provenance list. The top-level scalar props (strings, booleans, finite numbers) are
also copied as plain properties (``c.text``, ``e.name``, ``r.predicate``) for people and the ``read_cypher``
tool; they are never read back. A ``(:StratagraphMeta {key: 'generation'})`` node counts write
transactions; a ``(:StratagraphMeta {key: 'lease:<name>'})`` node holds a writers' lease
(``graph_store/lease.py``), outside the graph (not exported, not counted, no generation move).

Semantics are the SQLite store's, computed by the same rules (:mod:`stratagraph.graph_store.semantics`) over
rows read inside the transaction: the store reads what a write touches, decides in Python, then writes in
``UNWIND $rows`` batches of thousands of rows (stored nodes ``MERGE``d on ``Node.id``, new ones ``CREATE``d
per label, edges ``MERGE``d per type between their endpoints; labels and types come from the schema's enums,
never from input; every value is a parameter). Each public write is one managed transaction (``execute_write``: the
driver retries it on transient errors and lost connections, within ``max_retry_time``) that first bumps the
generation counter, so concurrent writers serialise on that node and readers see a new generation.

At startup the store creates, idempotently, a uniqueness constraint on ``Node.id`` and on each relationship
type's ``id`` (falling back to plain indexes), and a full-text index on ``Chunk.text`` for Cypher users;
whatever the server refuses is skipped and listed in :meth:`info` (``stratagraph stats``). Ranking never
depends on it: BM25 comes from the shared lexical index, as on every backend.
"""

from __future__ import annotations

import json
import math
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import neo4j
from neo4j import GraphDatabase, ManagedTransaction, Query
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    DatabaseError,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from stratagraph.graph_store.base import (
    Changes,
    CypherQueryError,
    DeleteSummary,
    DocumentNotFound,
    DocumentVersion,
    EDGE_TYPES,
    EdgeChange,
    EdgeRow,
    GraphCounts,
    GraphStore,
    LeaseRecord,
    Neighbour,
    StoreInfo,
    StoreUnavailable,
    cut_neighbours,
)
from stratagraph.graph_store.semantics import (
    EdgeWrite,
    NodeWrite,
    StoredNode,
    check_endpoints,
    drop_plan,
    edge_endpoints,
    edge_writes,
    fold_edges,
    fold_nodes,
    has_by_doc,
    merge_plan,
    node_writes,
)
from stratagraph.schema import (
    ALL_EDGE_TYPES,
    Edge,
    EdgeType,
    Node,
    NodeLabel,
    canonical_json,
)

if TYPE_CHECKING:
    from stratagraph.config import Settings

__all__ = ["CypherResult", "EDGE_RESERVED", "NODE", "NODE_RESERVED", "Neo4jGraphStore", "scalar_copies"]

T = TypeVar("T")

NODE = "Node"  # the label every stratagraph node carries (its id is unique under it)
META = "StratagraphMeta"
BATCH_ROWS = 5000  # rows per UNWIND statement of a write
NODE_RESERVED = frozenset({"id", "label", "doc_ids", "props"})
EDGE_RESERVED = frozenset({"id", "key", "weight", "doc_ids", "props"})
_INT64 = (-(2**63), 2**63 - 1)
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

_BUMP = f"MERGE (m:{META} {{key: 'generation'}}) SET m.value = coalesce(m.value, 0) + 1 RETURN m.value"
_ENSURE_COUNTER = f"MERGE (m:{META} {{key: 'generation'}}) ON CREATE SET m.value = 0"
# the change feed: rows written carry the generation they commit as (``n.gen``, ``r.gen``; an edge's source node
# ``a.egen``, so edges are found from an indexed node property), deletions leave a tombstone node; the feed
# reaches back to ``feed_floor`` (the generation the store was first opened at with a feed, raised by pruning)
TOMB = "StratagraphTombstone"
TOMBSTONE_ROWS = 200_000
_ENSURE_FLOOR = (
    f"MATCH (g:{META} {{key: 'generation'}}) MERGE (f:{META} {{key: 'feed_floor'}}) ON CREATE SET f.value = g.value"
)
_TOMB_EDGE = f"CREATE (:{TOMB} {{gen: $gen, kind: 'edge', id: r.id, type: type(r), src: a.id, dst: b.id, key: r.key}})"
# a lease is a meta node ``{key: 'lease:<name>'}``; the swap first writes it (the write lock, or on an optimistic
# server the conflict that retries the transaction, is what makes the compare and set atomic), then reads it
_LEASE_ENSURE = f"MERGE (l:{META} {{key: $key}})"
_LEASE_LOCK = f"MATCH (l:{META} {{key: $key}}) SET l.touched = coalesce(l.touched, 0) + 1 RETURN l.holder, l.beat"
_LEASE_READ = f"MATCH (l:{META} {{key: $key}}) RETURN l.holder, l.beat, l.ttl, l.taken"
_LEASE_SET = f"MATCH (l:{META} {{key: $key}}) SET l.holder = $holder, l.beat = $beat, l.ttl = $ttl, l.taken = $taken"
# a lease changing hands takes the generation counter's lock, which every graph write holds from its bump to its
# commit: a fenced write (GraphStore.fence) reads the lease under that lock, so no holder changes in between
_LEASE_TURN = f"MATCH (m:{META} {{key: 'generation'}}) SET m.turns = coalesce(m.turns, 0) + 1"


def _lease_holder(tx: ManagedTransaction, name: str) -> str | None:
    """Who holds the lease ``name``, read in ``tx``."""
    rows = tx.run(_LEASE_READ, key=f"lease:{name}").values()
    return None if not rows or rows[0][0] is None else str(rows[0][0])


def _label(label: NodeLabel | str) -> str | None:
    """The label as a Cypher identifier, only for the schema's labels (None for anything else)."""
    try:
        return NodeLabel(str(label)).value
    except ValueError:
        return None


def _edge_type(type_: EdgeType | str) -> str | None:
    try:
        return EdgeType(str(type_)).value
    except ValueError:
        return None


def _scalar(value: Any) -> bool:
    if isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    if isinstance(value, float):
        return math.isfinite(value)
    return False


def scalar_copies(props: Mapping[str, Any], reserved: frozenset[str]) -> dict[str, Any]:
    """The top-level scalar props copied as plain properties (for Cypher readers; never read back)."""
    return {k: v for k, v in props.items() if k and k not in reserved and _scalar(v)}


def _node_map(node_id: str, label: str, props_json: str, doc_ids: Sequence[str]) -> dict[str, Any]:
    out = scalar_copies(json.loads(props_json), NODE_RESERVED)
    out.update(id=node_id, label=label, doc_ids=list(doc_ids), props=props_json)
    return out


def _edge_map(w: EdgeWrite) -> dict[str, Any]:
    out = scalar_copies(json.loads(w.props_json), EDGE_RESERVED)
    out.update(id=w.id, key=w.key, weight=w.weight, doc_ids=list(w.doc_ids), props=w.props_json)
    return out


def _tuple(node_id: str, docs: Sequence[str] | None, props_json: str | None, names: Sequence[str]) -> tuple[Any, ...]:
    """A node as :meth:`Neo4jGraphStore.node_tuples` gives it."""
    props = json.loads(props_json) if props_json is not None and any(f != "doc_ids" for f in names) else {}
    return (node_id, *(list(docs or []) if f == "doc_ids" else props.get(f) for f in names))


def _chunks(rows: Sequence[T], size: int = BATCH_ROWS) -> Iterator[Sequence[T]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def _node(row: Sequence[Any]) -> Node:
    """``(id, label, doc_ids, props JSON)`` as a Node."""
    return Node.model_construct(id=row[0], label=NodeLabel(row[1]), doc_ids=list(row[2] or []), props=json.loads(row[3]))


def _stored_node(node_id: str, stored: tuple[str, str, list[str]]) -> Node:
    """A node from a :meth:`Neo4jGraphStore._fetch_nodes` row ``(label, props JSON, doc_ids)``."""
    label, props, docs = stored
    return _node((node_id, label, docs, props))


def _edge(row: Sequence[Any]) -> Edge:
    """``(type, src, dst, key, weight, props, doc_ids)`` as an Edge."""
    return Edge.model_construct(
        type=EdgeType(row[0]),
        src=row[1],
        dst=row[2],
        key=row[3] or "",
        weight=float(row[4]),
        props=json.loads(row[5]),
        doc_ids=list(row[6] or []),
    )


_EDGE_RETURN = "type(r), a.id, b.id, r.key, r.weight, r.props, r.doc_ids"

_PATTERNS = {"out": "-[r:{t}]->", "in": "<-[r:{t}]-", "both": "-[r:{t}]-"}


def _neighbour_query(types: str, direction: str, limit: int | None) -> str:
    """The read of :meth:`Neo4jGraphStore.neighbourhood` (``types``: schema edge type names joined by ``|``)."""
    if direction not in _PATTERNS:
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    head = (
        f"UNWIND $ids AS id MATCH (a:{NODE} {{id: id}}){_PATTERNS[direction].format(t=types)}(b:{NODE}) "
        "WHERE a <> b WITH id, type(r) AS t, b.id AS other, startNode(r) = a AS out, r.weight AS w, r.key AS k "
    )
    if limit is None:
        return head + "RETURN id, t, other, out, w, k"
    return (
        head + "ORDER BY id, w DESC, t, other, out DESC, k "
        "WITH id, collect([t, other, out, w, k]) AS rows "
        "UNWIND rows[0..$limit] AS row RETURN id, row[0], row[1], row[2], row[3], row[4]"
    )


@dataclass
class CypherResult:
    """Rows of a read query: column names, at most ``limit`` rows of plain values, and whether more came."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


@dataclass
class _Capabilities:
    present: dict[str, bool] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


class _ProbeRollback(Exception):
    """Raised inside a probe transaction so that the driver rolls it back."""


# ------------------------------------------------------------------------------------------ the store


class Neo4jGraphStore(GraphStore):
    """:class:`GraphStore` on a Neo4j-compatible Bolt server (module docstring)."""

    def __init__(
        self,
        uri: str,
        user: str = "neo4j",
        password: str | None = None,
        database: str | None = None,
        *,
        max_retry_time: float = 30.0,
        connection_timeout: float = 15.0,
        page_size: int | None = None,
        batch_rows: int = BATCH_ROWS,
    ) -> None:
        self.uri = uri
        self.user = user
        self.database = database or None
        self.page_size = page_size
        self.batch_rows = batch_rows
        self._closed = False
        self._lease_nodes: set[str] = set()
        self._tx = threading.local()  # the generation the write transaction of this thread commits as
        scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
        if scheme not in BOLT_SCHEMES:
            raise StoreUnavailable(
                f"graph store {self._where()}: invalid Neo4j URI: the scheme must be one of {', '.join(BOLT_SCHEMES)}"
            )
        try:
            self._driver = GraphDatabase.driver(
                uri,
                auth=(user, password or ""),
                max_transaction_retry_time=max_retry_time,
                connection_timeout=connection_timeout,
                connection_acquisition_timeout=max(connection_timeout, 30.0),
            )
        except (ValueError, ConfigurationError) as exc:
            raise StoreUnavailable(f"graph store {self._where()}: invalid Neo4j URI or settings: {_one_line(exc)}") from exc
        # one bookmark manager for every session of this store: on a cluster, a read sees the writes before it
        self._bookmarks = GraphDatabase.bookmark_manager()
        try:
            with self._errors():
                self._server = self._driver.get_server_info().agent
                with self._session() as session:
                    session.run("RETURN 1").consume()  # the database exists and we may use it
                self._capabilities = self._ensure_schema()
        except BaseException:
            self._driver.close()
            raise

    @classmethod
    def from_settings(cls, settings: Settings) -> Neo4jGraphStore:
        if not settings.neo4j_uri:
            raise StoreUnavailable("STRATAGRAPH_GRAPH=neo4j needs NEO4J_URI (for example bolt://localhost:7687)")
        return cls(
            settings.neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password,
            settings.neo4j_database,
            max_retry_time=settings.neo4j_max_retry_time,
            page_size=settings.neo4j_page_size,
        )

    def __repr__(self) -> str:
        return f"Neo4jGraphStore({self._where()!r})"

    def _where(self) -> str:
        return f"{self.uri} (database {self.database!r})" if self.database else f"{self.uri} (default database)"

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._driver.close()

    # ---------------------------------------------------------------- sessions, transactions, errors
    def _session(self, access: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        if self._closed:
            raise StoreUnavailable(f"graph store {self._where()} is closed")
        return self._driver.session(
            database=self.database, default_access_mode=access, bookmark_manager=self._bookmarks
        )

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Driver errors that mean the store cannot be used as one :class:`StoreUnavailable` line."""
        where = f"Neo4j at {self._where()}"
        try:
            yield
        except AuthError as exc:
            raise StoreUnavailable(
                f"{where} refused the credentials of user {self.user!r}: {_one_line(exc.message)}"
            ) from exc
        except IncompleteCommit as exc:
            raise StoreUnavailable(
                f"{where}: the connection dropped while committing a write (the transaction is atomic: it was "
                f"applied whole or not at all; run the command again): {_one_line(exc)}"
            ) from exc
        except (ServiceUnavailable, SessionExpired) as exc:
            raise StoreUnavailable(f"{where} is unreachable: {_one_line(exc)}") from exc
        except ClientError as exc:
            if exc.code and "DatabaseNotFound" in exc.code:
                raise StoreUnavailable(f"{where}: the database does not exist ({_one_line(exc.message)})") from exc
            raise
        except DriverError as exc:
            raise StoreUnavailable(f"{where}: {type(exc).__name__}: {_one_line(exc)}") from exc

    def _write(self, work: Callable[[ManagedTransaction], T]) -> T:
        """``work`` in one managed write transaction that first bumps the generation counter (which also
        serialises writers: each holds the counter's lock until it commits). What it writes carries the new
        generation; what it deletes leaves tombstones of it (pruned here past :data:`TOMBSTONE_ROWS`)."""

        def unit(tx: ManagedTransaction) -> T:
            self._tx.gen = int(tx.run(_BUMP).single()[0])
            self._check_fence(lambda name: _lease_holder(tx, name))  # under the counter's lock, as a change of holder
            self._tx.tombs = False
            out = work(tx)
            if self._tx.tombs:
                self._prune_tombstones(tx)
            return out

        with self._errors(), self._session() as session:
            return session.execute_write(unit)

    def _prune_tombstones(self, tx: ManagedTransaction) -> None:
        """Past :data:`TOMBSTONE_ROWS` tombstones, drop the oldest generations' down to about half and raise
        ``feed_floor`` to the newest generation dropped."""
        (count,) = tx.run(f"MATCH (t:{TOMB}) RETURN count(t)").single()
        if int(count) <= TOMBSTONE_ROWS:
            return
        (cutoff,) = tx.run(
            f"MATCH (t:{TOMB}) RETURN t.gen ORDER BY t.gen DESC SKIP $keep LIMIT 1", keep=TOMBSTONE_ROWS // 2
        ).single()
        tx.run(f"MATCH (t:{TOMB}) WHERE t.gen <= $cutoff DELETE t", cutoff=cutoff).consume()
        tx.run(
            f"MATCH (f:{META} {{key: 'feed_floor'}}) SET f.value = CASE WHEN f.value > $cutoff THEN f.value ELSE $cutoff END",
            cutoff=cutoff,
        ).consume()

    def _read(self, work: Callable[[ManagedTransaction], T]) -> T:
        with self._errors(), self._session(neo4j.READ_ACCESS) as session:
            return session.execute_read(work)

    # ---------------------------------------------------------------- schema and capabilities
    def _ensure_schema(self) -> _Capabilities:
        """Constraints and indexes, created if missing (each statement on its own: schema changes cannot
        share a transaction with writes); what the server refuses is recorded, not fatal."""
        caps = _Capabilities()

        def attempt(name: str, *statements: str) -> bool:
            for statement in statements:
                try:
                    with self._session() as session:
                        session.run(statement).consume()
                except Neo4jError as exc:
                    caps.skipped.append(f"{name}: {statement.split(' IF ')[0]}: {exc.message or exc.code}")
                    continue
                return True
            return False

        caps.present["node_id_unique"] = attempt(
            "node id uniqueness", f"CREATE CONSTRAINT stratagraph_node_id IF NOT EXISTS FOR (n:{NODE}) REQUIRE n.id IS UNIQUE"
        )
        if not caps.present["node_id_unique"]:
            caps.present["node_id_index"] = attempt(
                "node id index", f"CREATE INDEX stratagraph_node_id IF NOT EXISTS FOR (n:{NODE}) ON (n.id)"
            )
        attempt("meta key uniqueness", f"CREATE CONSTRAINT stratagraph_meta_key IF NOT EXISTS FOR (m:{META}) REQUIRE m.key IS UNIQUE")
        unique = index = True
        for type_ in ALL_EDGE_TYPES:
            name = f"stratagraph_rel_{type_.lower()}_id"
            if attempt(f"{type_} id uniqueness", f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR ()-[r:{type_}]-() REQUIRE r.id IS UNIQUE"):
                continue
            unique = False
            index &= attempt(f"{type_} id index", f"CREATE INDEX {name} IF NOT EXISTS FOR ()-[r:{type_}]-() ON (r.id)")
        caps.present["edge_id_unique"] = unique
        caps.present["edge_id_index"] = unique or index
        caps.present["fulltext_index"] = attempt(
            "full-text index on Chunk.text (for Cypher users; BM25 ranking uses the shared lexical index)",
            "CREATE FULLTEXT INDEX stratagraph_chunk_text IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text]",
        )
        for name, prop, on in (("node_gen", "gen", NODE), ("node_egen", "egen", NODE), ("tomb_gen", "gen", TOMB)):
            caps.present[f"{name}_index"] = attempt(
                f"{on}.{prop} index (the change feed)", f"CREATE INDEX stratagraph_{name} IF NOT EXISTS FOR (n:{on}) ON (n.{prop})"
            )
        with self._session() as session:
            session.run(_ENSURE_COUNTER).consume()  # the counter exists from the start
            session.run(_ENSURE_FLOOR).consume()  # the feed starts at the generation it was first opened at
        caps.present["explain_query_type"] = self._probe_explain()
        if not caps.present["explain_query_type"]:
            caps.skipped.append("EXPLAIN query type: the server does not report reads as read-only ('r')")
        caps.present["read_access_enforced"] = self._probe_read_access()
        if not caps.present["read_access_enforced"]:
            caps.skipped.append("read access mode: the server accepts writes in READ transactions")
        return caps

    def _probe_explain(self) -> bool:
        """Whether ``EXPLAIN`` tells reads ('r') from writes ('w') on this server."""
        try:
            with self._session(neo4j.READ_ACCESS) as session:
                read = session.run("EXPLAIN MATCH (n:Node) RETURN n.id").consume().query_type
                write = session.run("EXPLAIN CREATE (n:StratagraphProbe)").consume().query_type
        except Neo4jError:
            return False
        return read == "r" and write in ("w", "rw")

    def _probe_read_access(self) -> bool:
        """Whether a write in a READ transaction is refused (tried in a transaction that is rolled back)."""

        def attempt(tx: ManagedTransaction) -> None:
            tx.run("CREATE (p:StratagraphProbe) DELETE p").consume()
            raise _ProbeRollback

        try:
            with self._session(neo4j.READ_ACCESS) as session:
                session.execute_read(attempt)
        except _ProbeRollback:
            return False
        except Neo4jError:
            return True
        return False

    def info(self) -> StoreInfo:
        return StoreInfo(
            backend="neo4j",
            location=self._where(),
            server=self._server,
            capabilities=dict(self._capabilities.present),
            skipped=list(self._capabilities.skipped),
        )

    @property
    def capabilities(self) -> dict[str, bool]:
        return dict(self._capabilities.present)

    # ---------------------------------------------------------------- writes
    def replace_documents(
        self, versions: Sequence[DocumentVersion], merges: Mapping[str, Sequence[str]] | None = None
    ) -> list[DeleteSummary]:
        if not versions and not merges:
            return []

        def work(tx: ManagedTransaction) -> list[DeleteSummary]:
            for target, sources in sorted((merges or {}).items()):
                self._merge(tx, target, sources)
            found = self._drop_documents(tx, [v.doc_id for v in versions])
            summaries = [s or DeleteSummary(doc_id=v.doc_id) for v, s in zip(versions, found, strict=True)]
            self._upsert_nodes(tx, [n for v in versions for n in v.nodes])
            self._upsert_edges(tx, [e for v in versions for e in v.edges])
            return summaries

        return self._write(work)

    def write_batch(
        self, nodes: Sequence[Node] = (), edges: Sequence[Edge] = (), delete_edges: Sequence[str] = ()
    ) -> None:
        if not nodes and not edges and not delete_edges:
            return

        def work(tx: ManagedTransaction) -> None:
            if delete_edges:
                self._delete_edges_by_id(tx, list(dict.fromkeys(delete_edges)))
            self._upsert_nodes(tx, nodes)
            self._upsert_edges(tx, edges)

        self._write(work)

    def merge_nodes(self, target: str, sources: Sequence[str]) -> int:
        return self._write(lambda tx: self._merge(tx, target, sources))

    def delete_document(self, doc_id: str) -> DeleteSummary:
        def work(tx: ManagedTransaction) -> DeleteSummary:
            (summary,) = self._drop_documents(tx, [doc_id])
            if summary is None:
                raise DocumentNotFound(doc_id)
            return summary

        return self._write(work)

    # ---------------------------------------------------------------- write steps (inside a transaction)
    def _fetch_nodes(self, tx: ManagedTransaction, ids: Sequence[str]) -> dict[str, tuple[str, str, list[str]]]:
        """``id -> (label, props JSON, doc_ids)`` of the stored nodes among ``ids``."""
        out: dict[str, tuple[str, str, list[str]]] = {}
        for part in _chunks(list(ids), self.batch_rows):
            result = tx.run(
                f"UNWIND $ids AS id MATCH (n:{NODE} {{id: id}}) RETURN n.id, n.label, n.props, n.doc_ids", ids=list(part)
            )
            for nid, label, props, docs in result.values():
                out[nid] = (label, props, list(docs or []))
        return out

    def _touching(self, tx: ManagedTransaction, ids: Sequence[str]) -> list[Edge]:
        """Every edge with an endpoint among ``ids`` (each once)."""
        if not ids:
            return []
        rows = tx.run(
            f"UNWIND $ids AS id MATCH (a:{NODE} {{id: id}})-[r]->(b:{NODE}) RETURN {_EDGE_RETURN} "
            f"UNION UNWIND $ids AS id MATCH (a:{NODE})-[r]->(b:{NODE} {{id: id}}) RETURN {_EDGE_RETURN}",
            ids=list(ids),
        ).values()
        return [_edge(r) for r in rows if _edge_type(r[0]) is not None]

    def _merge(self, tx: ManagedTransaction, target: str, sources: Sequence[str]) -> int:
        wanted = sorted({s for s in sources if s != target})
        if not wanted:
            return 0
        stored = self._fetch_nodes(tx, [*wanted, target])
        found = [_stored_node(nid, stored[nid]) for nid in wanted if nid in stored]
        if not found:
            return 0
        existing = _stored_node(target, stored[target]) if target in stored else None
        plan = merge_plan(target, existing, found, self._touching(tx, [n.id for n in found]))
        if plan is None:
            return 0
        self._detach_delete(tx, plan.dead_nodes)  # plan.dead_edges are exactly the edges touching them
        self._upsert_nodes(tx, [plan.target])
        self._upsert_edges(tx, plan.new_edges)
        return len(plan.dead_nodes)

    def _upsert_nodes(self, tx: ManagedTransaction, nodes: Sequence[Node]) -> None:
        folded = fold_nodes(nodes)
        if not folded:
            return
        stored = self._fetch_nodes(tx, list(folded))
        existing = {nid: StoredNode(label, props, docs) for nid, (label, props, docs) in stored.items()}
        self._write_nodes(tx, node_writes(folded, existing))

    def _write_nodes(self, tx: ManagedTransaction, writes: Sequence[NodeWrite]) -> None:
        """Write full node rows. The transaction has read which ids exist (``previous_label``) and holds the
        generation counter's lock, which every writer takes first, so no one else can create them meanwhile:
        stored nodes are MERGEd on ``Node.id`` (an index seek) and updated, new ones are CREATEd with their
        two labels (a MERGE on two labels makes ArcadeDB scan the label for every row)."""
        moved: dict[tuple[str, str], list[str]] = defaultdict(list)
        new: dict[str, list[dict[str, Any]]] = defaultdict(list)
        stored: list[dict[str, Any]] = []
        for w in writes:
            label = _label(w.label)
            if label is None:
                raise ValueError(f"node {w.id!r}: unknown label {w.label!r}")
            row = {"id": w.id, "map": {**_node_map(w.id, w.label, w.props_json, w.doc_ids), "gen": self._tx.gen}}
            old = _label(w.previous_label) if w.previous_label else None
            if old is None:
                new[label].append(row)
                continue
            if old != label:
                moved[(old, label)].append(w.id)
            stored.append(row)
        for (old, label), ids in sorted(moved.items()):  # a node whose label changes moves first
            tx.run(f"UNWIND $ids AS id MATCH (n:{NODE} {{id: id}}) REMOVE n:{old} SET n:{label}", ids=ids).consume()
        for part in _chunks(stored, self.batch_rows):
            tx.run(f"UNWIND $rows AS row MERGE (n:{NODE} {{id: row.id}}) SET n = row.map", rows=list(part)).consume()
        for label, rows in sorted(new.items()):
            for part in _chunks(rows, self.batch_rows):
                tx.run(f"UNWIND $rows AS row CREATE (n:{NODE}:{label}) SET n = row.map", rows=list(part)).consume()

    def _upsert_edges(self, tx: ManagedTransaction, edges: Sequence[Edge]) -> None:
        folded = fold_edges(edges)
        if not folded:
            return
        endpoints = sorted(edge_endpoints(folded))
        found: set[str] = set()
        for part in _chunks(endpoints, self.batch_rows):
            found.update(
                r[0] for r in tx.run(f"UNWIND $ids AS id MATCH (n:{NODE} {{id: id}}) RETURN n.id", ids=list(part)).values()
            )
        if len(found) < len(endpoints):
            check_endpoints(edges, found)
        by_type: dict[str, list[dict[str, str]]] = defaultdict(list)
        for eid, (edge, _) in folded.items():
            by_type[str(edge.type)].append({"id": eid, "src": edge.src})
        existing: dict[str, list[str]] = {}
        for type_, keys in sorted(by_type.items()):
            for part in _chunks(keys, self.batch_rows):
                rows = tx.run(  # found from the source node (indexed), not by a relationship scan
                    f"UNWIND $rows AS row MATCH (a:{NODE} {{id: row.src}})-[r:{_edge_type(type_)}]->() "
                    "WHERE r.id = row.id RETURN r.id, r.doc_ids",
                    rows=list(part),
                ).values()
                existing.update((eid, list(docs or [])) for eid, docs in rows)
        self._write_edges(tx, edge_writes(folded, existing))

    def _write_edges(self, tx: ManagedTransaction, writes: Sequence[EdgeWrite]) -> None:
        grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for w in writes:
            if _edge_type(w.type) is None:
                raise ValueError(f"edge {w.id!r}: unknown type {w.type!r}")
            grouped[w.type].append({"id": w.id, "src": w.src, "dst": w.dst, "map": {**_edge_map(w), "gen": self._tx.gen}})
        for type_, rows in sorted(grouped.items()):
            for part in _chunks(rows, self.batch_rows):
                tx.run(
                    f"UNWIND $rows AS row MATCH (a:{NODE} {{id: row.src}}) MATCH (b:{NODE} {{id: row.dst}}) "
                    f"MERGE (a)-[r:{_edge_type(type_)} {{id: row.id}}]->(b) SET r = row.map, a.egen = $gen",
                    rows=list(part),
                    gen=self._tx.gen,
                ).consume()

    def _delete_edges_typed(self, tx: ManagedTransaction, edges: Iterable[tuple[str, str, str]]) -> None:
        """Delete edges given as ``(type, id, source node id)``, found from their source node."""
        by_type: dict[str, list[dict[str, str]]] = defaultdict(list)
        for type_, eid, src in edges:
            by_type[type_].append({"id": eid, "src": src})
        for type_, rows in sorted(by_type.items()):
            for part in _chunks(sorted(rows, key=lambda r: r["id"]), self.batch_rows):
                tx.run(
                    f"UNWIND $rows AS row MATCH (a:{NODE} {{id: row.src}})-[r:{_edge_type(type_)}]->(b) "
                    f"WHERE r.id = row.id {_TOMB_EDGE} WITH r DELETE r",
                    rows=list(part),
                    gen=self._tx.gen,
                ).consume()
                self._tx.tombs = True

    def _delete_edges_by_id(self, tx: ManagedTransaction, ids: Sequence[str]) -> None:
        """Delete edges by id alone (unknown ids are ignored): one statement per edge type (an index seek
        where the server has the relationship index, else one pass over that type)."""
        for type_ in ALL_EDGE_TYPES:
            for part in _chunks(sorted(set(ids)), self.batch_rows):
                tx.run(
                    f"MATCH (a)-[r:{type_}]->(b) WHERE r.id IN $ids {_TOMB_EDGE} WITH r DELETE r", ids=list(part), gen=self._tx.gen
                ).consume()
                self._tx.tombs = True

    def _detach_delete(self, tx: ManagedTransaction, ids: Sequence[str]) -> None:
        for part in _chunks(list(ids), self.batch_rows):
            for pattern in (f"(a:{NODE} {{id: id}})-[r]->(b:{NODE})", f"(a:{NODE})-[r]->(b:{NODE} {{id: id}})"):
                tx.run(f"UNWIND $ids AS id MATCH {pattern} {_TOMB_EDGE}", ids=list(part), gen=self._tx.gen).consume()
            tx.run(
                f"UNWIND $ids AS id MATCH (n:{NODE} {{id: id}}) CREATE (:{TOMB} {{gen: $gen, kind: 'node', id: n.id, type: n.label}})",
                ids=list(part),
                gen=self._tx.gen,
            ).consume()
            tx.run(f"UNWIND $ids AS id MATCH (n:{NODE} {{id: id}}) DETACH DELETE n", ids=list(part)).consume()
            self._tx.tombs = True

    def _drop_documents(self, tx: ManagedTransaction, doc_ids: Sequence[str]) -> list[DeleteSummary | None]:
        """Drop each document's provenance in turn (as :meth:`delete_document`; None for an unknown one),
        from one scan of the provenance lists: the drops are planned in Python, document by document,
        over the rows read (:func:`~stratagraph.graph_store.semantics.drop_plan`), then written at once."""
        if not doc_ids:
            return []
        docs = sorted(set(doc_ids))
        node_rows = tx.run(
            f"MATCH (n:{NODE}) WHERE any(d IN n.doc_ids WHERE d IN $docs) RETURN n.id, n.label, n.doc_ids, "
            "CASE WHEN n.props CONTAINS $marker THEN n.props ELSE null END",
            docs=docs,
            marker='"by_doc":',
        ).values()
        # state of the rows the drops touch: id -> [label, doc_ids, props JSON (by_doc only) or None]
        nodes: dict[str, list[Any]] = {nid: [label, list(d or []), props] for nid, label, d, props in node_rows}
        documents: dict[str, list[str]] = {
            nid: list(d or [])
            for nid, d in tx.run(
                f"UNWIND $docs AS id MATCH (n:{NODE}:Document {{id: id}}) RETURN n.id, n.doc_ids", docs=docs
            ).values()
        }
        edge_rows = tx.run(
            f"MATCH (a:{NODE})-[r]->(b:{NODE}) WHERE any(d IN r.doc_ids WHERE d IN $docs) "
            "RETURN r.id, type(r), a.id, b.id, r.doc_ids",
            docs=docs,
        ).values()
        # first pass, nodes only: which nodes die at all (a node's fate does not depend on edges)
        doomed = set(self._simulate_node_deaths(doc_ids, nodes, documents))
        edges: dict[str, list[Any]] = {eid: [t, a, b, list(d or [])] for eid, t, a, b, d in edge_rows}
        for edge in self._touching(tx, sorted(doomed)):
            edges.setdefault(edge.id, [str(edge.type), edge.src, edge.dst, list(edge.doc_ids)])
        # who to look at for each document, and which edges touch a node (provenance only ever shrinks)
        wanted = set(docs)
        nodes_of: dict[str, list[str]] = defaultdict(list)
        for nid in sorted(nodes):
            for d in set(nodes[nid][1]) & wanted:
                nodes_of[d].append(nid)
        edges_of: dict[str, list[str]] = defaultdict(list)
        at_node: dict[str, list[str]] = defaultdict(list)
        for eid in sorted(edges):
            for d in set(edges[eid][3]) & wanted:
                edges_of[d].append(eid)
            at_node[edges[eid][1]].append(eid)
            at_node[edges[eid][2]].append(eid)
        removed_nodes: set[str] = set()
        removed_edges: dict[str, tuple[str, str]] = {}  # id -> (type, source node id)
        changed_nodes: set[str] = set()
        changed_edges: set[str] = set()
        props_of: dict[str, str] = {}
        summaries: list[DeleteSummary | None] = []
        for doc in doc_ids:
            document = None
            if doc not in removed_nodes:
                if doc in nodes and nodes[doc][0] == NodeLabel.DOCUMENT.value:
                    document = (doc, nodes[doc][1])
                elif doc in documents and doc not in nodes:
                    document = (doc, documents[doc])
            mine = [nid for nid in nodes_of.get(doc, ()) if nid in nodes and doc in nodes[nid][1]]
            plan = drop_plan(
                doc,
                [(nid, nodes[nid][1]) for nid in mine],
                [(nid, nodes[nid][0], nodes[nid][2]) for nid in mine if nodes[nid][2] and has_by_doc(nodes[nid][2])],
                [(eid, edges[eid][3]) for eid in edges_of.get(doc, ()) if eid in edges and doc in edges[eid][3]],
                document,
            )
            if plan is None:
                summaries.append(None)
                continue
            for nid, rest in plan.kept_nodes.items():
                nodes[nid][1] = rest
                changed_nodes.add(nid)
            for nid, props in plan.reprops.items():
                nodes[nid][2] = props
                props_of[nid] = props
            for eid, rest in plan.kept_edges.items():
                edges[eid][3] = rest
                changed_edges.add(eid)
            for eid in plan.dead_edges:
                gone = edges.pop(eid)
                removed_edges[eid] = (gone[0], gone[1])
            cascaded = sorted({eid for nid in plan.dead_nodes for eid in at_node.get(nid, ()) if eid in edges})
            for eid in cascaded:
                gone = edges.pop(eid)
                removed_edges[eid] = (gone[0], gone[1])
            for nid in plan.dead_nodes:
                nodes.pop(nid, None)
                documents.pop(nid, None)
                removed_nodes.add(nid)
            summaries.append(plan.summary(len(cascaded)))
        # write the net effect
        self._delete_edges_typed(tx, [(t, eid, src) for eid, (t, src) in removed_edges.items()])
        self._detach_delete(tx, sorted(removed_nodes))
        survivors = sorted(changed_nodes - removed_nodes)
        if survivors:
            stored = self._fetch_nodes(tx, survivors)
            self._write_nodes(
                tx,
                [
                    NodeWrite(
                        id=nid,
                        label=stored[nid][0],
                        props_json=props_of.get(nid, stored[nid][1]),
                        doc_ids=nodes[nid][1],
                        batch_docs=frozenset(),
                        previous_label=stored[nid][0],
                    )
                    for nid in survivors
                ],
            )
        kept = defaultdict(list)
        for eid in sorted(changed_edges):
            if eid in edges:
                kept[edges[eid][0]].append({"id": eid, "src": edges[eid][1], "doc_ids": edges[eid][3]})
        for type_, rows in sorted(kept.items()):
            for part in _chunks(rows, self.batch_rows):
                tx.run(
                    f"UNWIND $rows AS row MATCH (a:{NODE} {{id: row.src}})-[r:{_edge_type(type_)}]->() "
                    "WHERE r.id = row.id SET r.doc_ids = row.doc_ids, r.gen = $gen, a.egen = $gen",
                    rows=list(part),
                    gen=self._tx.gen,
                ).consume()
        return summaries

    @staticmethod
    def _simulate_node_deaths(
        doc_ids: Sequence[str], nodes: Mapping[str, list[Any]], documents: Mapping[str, list[str]]
    ) -> list[str]:
        """The nodes that dropping ``doc_ids`` in turn deletes (provenance only, no edges)."""
        docs_of = {nid: list(st[1]) for nid, st in nodes.items()}
        lone_documents = {nid for nid, d in documents.items() if not d and nid not in docs_of}
        wanted = set(doc_ids)
        nodes_of: dict[str, list[str]] = defaultdict(list)
        for nid in sorted(docs_of):
            for d in set(docs_of[nid]) & wanted:
                nodes_of[d].append(nid)
        dead: list[str] = []
        for doc in doc_ids:
            for nid in [n for n in nodes_of.get(doc, ()) if n in docs_of and doc in docs_of[n]]:
                rest = [d for d in docs_of[nid] if d != doc]
                if rest:
                    docs_of[nid] = rest
                else:
                    dead.append(nid)
                    del docs_of[nid]
            if doc in lone_documents:
                dead.append(doc)
                lone_documents.discard(doc)
        return dead

    # ---------------------------------------------------------------- migration
    def node_count(self) -> int:
        """How many stratagraph nodes the database holds (0: an empty target for :meth:`copy_from`)."""
        rows = self._read(lambda tx: tx.run(f"MATCH (n:{NODE}) RETURN count(n)").values())
        return int(rows[0][0])

    def copy_from(self, graph: Mapping[str, Any], batch_rows: int = 20_000) -> tuple[int, int]:
        """Write an exported graph (:meth:`GraphStore.export` of another store) as it is, rows verbatim (no
        props derived again), nodes then edges, ``batch_rows`` per transaction. Every row is an upsert by id,
        so running it again after an interruption completes the copy. Returns (nodes, edges) written."""
        nodes = [
            NodeWrite(
                id=n["id"],
                label=n["label"],
                props_json=canonical_json(n["props"]),
                doc_ids=list(n["doc_ids"]),
                batch_docs=frozenset(),
                previous_label=None,
            )
            for n in graph["nodes"]
        ]
        edges = [
            EdgeWrite(
                id=e["id"],
                type=e["type"],
                src=e["src"],
                dst=e["dst"],
                key=e["key"],
                weight=float(e["weight"]),
                props_json=canonical_json(e["props"]),
                doc_ids=list(e["doc_ids"]),
                batch_docs=frozenset(),
                exists=False,
            )
            for e in graph["edges"]
        ]
        for part in _chunks(nodes, batch_rows):
            stored = list(part)

            def write_nodes(tx: ManagedTransaction, rows: list[NodeWrite] = stored) -> None:
                found = self._fetch_nodes(tx, [w.id for w in rows])
                self._write_nodes(tx, [replace(w, previous_label=found[w.id][0]) if w.id in found else w for w in rows])

            self._write(write_nodes)
        for part in _chunks(edges, batch_rows):
            self._write(lambda tx, rows=list(part): self._write_edges(tx, rows))
        return len(nodes), len(edges)

    # ---------------------------------------------------------------- reads
    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        if not ids:
            return []
        wanted = list(dict.fromkeys(ids))

        def work(tx: ManagedTransaction) -> dict[str, tuple[str, str, list[str]]]:
            return self._fetch_nodes(tx, wanted)

        found = self._read(work)
        return [_stored_node(i, found[i]) for i in ids if i in found]

    def nodes_by_label(self, label: NodeLabel | str, doc_id: str | None = None) -> list[Node]:
        name = _label(label)
        if name is None:
            return []
        where = "WHERE $doc IN n.doc_ids " if doc_id is not None else ""
        query = f"MATCH (n:{NODE}:{name}) {where}RETURN n.id, n.label, n.doc_ids, n.props"
        rows = self._read(lambda tx: tx.run(query, doc=doc_id).values())
        return sorted((_node(r) for r in rows), key=lambda n: n.id)

    def _whole(self, match: str, key: str, returns: str) -> list[list[Any]]:
        """Every row of ``MATCH ... RETURN returns`` (a whole label or edge type; callers sort). Streamed in one
        read transaction, the server walking the label or type once; or, with ``page_size`` set, in keyset pages
        of that many rows ordered by ``key`` (the first column), each its own read transaction, for a server that
        limits a transaction's time. A page is cheap where the server orders by the id index; on a server that
        sorts the label's rows per page (ArcadeDB) it costs as much as the whole read (BENCHMARKS.md, issue 21)."""
        if self.page_size is None:
            query = f"{match} RETURN {returns}"
            return self._read(lambda tx: tx.run(query).values())
        query = f"{match} WHERE $after IS NULL OR {key} > $after RETURN {returns} ORDER BY {key} LIMIT $page"
        out: list[list[Any]] = []
        after: str | None = None
        while True:
            page = self._read(lambda tx, a=after: tx.run(query, after=a, page=self.page_size).values())
            out.extend(page)
            if len(page) < self.page_size:
                return out
            after = page[-1][0]

    def node_tuples(self, label: NodeLabel | str, fields: Sequence[str]) -> list[tuple[Any, ...]]:
        name = _label(label)
        if name is None:
            return []
        names = list(fields)
        need_props = any(f != "doc_ids" for f in names)
        props_col = "n.props" if need_props else "null"
        rows = self._whole(f"MATCH (n:{NODE}:{name})", "n.id", f"n.id, n.doc_ids, {props_col}")
        out = [_tuple(nid, docs, props_json, names) for nid, docs, props_json in rows]
        out.sort(key=lambda r: r[0])
        return out

    def keyed_edge_tuples(self, types: Iterable[EdgeType | str]) -> list[tuple[EdgeRow, str]]:
        out = []
        for type_ in sorted({t for t in (_edge_type(x) for x in types) if t is not None}):
            kind = EdgeType(type_)
            rows = self._whole(f"MATCH (a:{NODE})-[r:{type_}]->(b:{NODE})", "r.id", "r.id, a.id, b.id, r.key, r.weight")
            keyed = sorted((src, dst, key or "", float(w)) for _, src, dst, key, w in rows)
            out.extend((EdgeRow(kind, s, d, w), k) for s, d, k, w in keyed)
        return out

    def changes_since(
        self, generation: int, fields: Mapping[str, Sequence[str]] | None = None, limit: int | None = None
    ) -> Changes | None:
        """One read transaction: nodes with ``gen`` above ``generation``; edges with ``gen`` above it, found from
        their source nodes (``egen`` or ``gen`` above it: a node rewritten after its edge was written carries the
        later generation); tombstones above it whose id was not written again (index seeks on ``gen``)."""
        fields = fields or {}

        def work(tx: ManagedTransaction) -> Changes | None:
            meta = dict(
                tx.run(f"MATCH (m:{META}) WHERE m.key IN ['generation', 'feed_floor'] RETURN m.key, m.value").values()
            )
            now, floor = meta.get("generation"), meta.get("feed_floor")
            if now is None or floor is None or generation < int(floor) or generation > int(now):
                return None
            if limit is not None:
                count = sum(
                    int(tx.run(q, g=generation).single()[0])
                    for q in (
                        f"MATCH (n:{NODE}) WHERE n.gen > $g RETURN count(n)",
                        f"MATCH (t:{TOMB}) WHERE t.gen > $g RETURN count(t)",
                    )
                )
                if count > limit:
                    return None
            node_rows = tx.run(
                f"MATCH (n:{NODE}) WHERE n.gen > $g RETURN n.id, n.label, n.doc_ids, n.props", g=generation
            ).values()
            edge_rows: dict[str, list[Any]] = {}
            for prop in ("egen", "gen"):
                for row in tx.run(
                    f"MATCH (a:{NODE}) WHERE a.{prop} > $g MATCH (a)-[r]->(b:{NODE}) WHERE r.gen > $g "
                    "RETURN r.id, type(r), a.id, b.id, r.key, r.weight",
                    g=generation,
                ).values():
                    edge_rows[row[0]] = row
            if limit is not None and len(node_rows) + len(edge_rows) > limit:
                return None
            tombs = tx.run(
                f"MATCH (t:{TOMB}) WHERE t.gen > $g RETURN t.kind, t.id, t.type, t.src, t.dst, t.key", g=generation
            ).values()
            return int(now), node_rows, edge_rows, tombs

        found = self._read(work)
        if found is None:
            return None
        now, node_rows, edge_rows, tombs = found
        nodes: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        for nid, label, docs, props_json in sorted(node_rows, key=lambda r: r[0]):
            nodes[label].append(_tuple(nid, docs, props_json, fields[label]) if label in fields else (nid,))
        edges = sorted(
            (
                EdgeChange(eid, EDGE_TYPES[t], s, d, k or "", float(w))
                for eid, t, s, d, k, w in edge_rows.values()
                if _edge_type(t) is not None
            ),
            key=lambda x: (str(x.type), x.src, x.dst, x.key),
        )
        written = {r[0] for r in node_rows}
        deleted_nodes = sorted({tid for kind, tid, *_ in tombs if kind == "node" and tid not in written})
        dead: dict[str, EdgeChange] = {}
        for kind, tid, t, s, d, k in tombs:
            if kind == "edge" and tid not in edge_rows and _edge_type(t) is not None:
                dead[tid] = EdgeChange(tid, EDGE_TYPES[t], s, d, k or "", None)
        deleted_edges = sorted(dead.values(), key=lambda x: (str(x.type), x.src, x.dst, x.key))
        return Changes(now, dict(nodes), deleted_nodes, edges, deleted_edges)

    def get_edges(
        self,
        src: str | Sequence[str] | None = None,
        dst: str | Sequence[str] | None = None,
        types: Iterable[EdgeType | str] | None = None,
    ) -> list[Edge]:
        where, params = [], {}
        for name, ids in (("src", src), ("dst", dst)):
            if ids is None:
                continue
            values = [ids] if isinstance(ids, str) else list(ids)
            if not values:
                return []
            where.append(f"{'a' if name == 'src' else 'b'}.id IN ${name}")
            params[name] = values
        if types is None:
            type_list = list(ALL_EDGE_TYPES)
        else:
            type_list = sorted({t for t in (_edge_type(x) for x in types) if t is not None})
        # start from the given nodes (indexed lookups), filter the other end
        if "src" in params:
            params["src"] = list(dict.fromkeys(params["src"]))
            where = where[1:]

            def pattern(t: str) -> str:
                return f"UNWIND $src AS s MATCH (a:{NODE} {{id: s}})-[r:{t}]->(b:{NODE})"

        elif "dst" in params:
            params["dst"] = list(dict.fromkeys(params["dst"]))
            where = []

            def pattern(t: str) -> str:
                return f"UNWIND $dst AS d MATCH (a:{NODE})-[r:{t}]->(b:{NODE} {{id: d}})"

        else:

            def pattern(t: str) -> str:
                return f"MATCH (a:{NODE})-[r:{t}]->(b:{NODE})"

        clause = (" WHERE " + " AND ".join(where)) if where else ""

        def work(tx: ManagedTransaction) -> list[list[Any]]:
            rows: list[list[Any]] = []
            for type_ in type_list:
                rows.extend(tx.run(f"{pattern(type_)}{clause} RETURN {_EDGE_RETURN}", **params).values())
            return rows

        edges = [_edge(r) for r in self._read(work)] if type_list else []
        return sorted(edges, key=lambda e: (str(e.type), e.src, e.dst, e.key))

    def edge_tuples(self, types: Iterable[EdgeType | str]) -> list[EdgeRow]:
        return [row for row, _ in self.keyed_edge_tuples(types)]

    def neighbourhood(
        self,
        ids: Sequence[str],
        types: Iterable[EdgeType | str],
        direction: str = "both",
        limit: int | None = None,
    ) -> list[Neighbour]:
        """One parameterised ``UNWIND`` statement (one read transaction): each seed's edges of the types asked,
        in the direction asked; with ``limit``, the server orders each seed's edges heaviest first and returns
        only its first ``limit`` (:func:`~stratagraph.graph_store.base.neighbour_order`)."""
        names = sorted({t for t in (_edge_type(x) for x in types) if t is not None})
        seeds = sorted(set(ids))
        if not seeds or not names:
            return []
        query = _neighbour_query("|".join(names), direction, limit)
        rows = self._read(lambda tx: tx.run(query, ids=seeds, limit=limit).values())
        return cut_neighbours(
            (Neighbour(n, EDGE_TYPES[t], o, bool(out), float(w if w is not None else 1.0), k or "")
             for n, t, o, out, w, k in rows),
            limit,
        )

    # ---------------------------------------------------------------- leases (graph_store/lease.py)
    def read_lease(self, name: str) -> LeaseRecord | None:
        rows = self._read(lambda tx: tx.run(_LEASE_READ, key=f"lease:{name}").values())
        if not rows or rows[0][0] is None:
            return None
        holder, beat, ttl, taken = rows[0]
        return LeaseRecord(str(holder), int(beat), float(ttl), float(taken))

    def swap_lease(self, name: str, expect: LeaseRecord | None, new: LeaseRecord | None) -> bool:
        key = f"lease:{name}"
        self._ensure_lease_node(key)
        want = None if expect is None else (expect.holder, expect.beat)

        def work(tx: ManagedTransaction) -> bool:
            rows = tx.run(_LEASE_LOCK, key=key).values()
            holder, beat = rows[0] if rows else (None, None)
            if (None if holder is None else (str(holder), int(beat))) != want:
                return False
            if (None if new is None else new.holder) != (None if holder is None else str(holder)):
                tx.run(_LEASE_TURN).consume()  # changing hands: serialised with fenced writes
            values = dict.fromkeys(("holder", "beat", "ttl", "taken")) if new is None else new._asdict()
            tx.run(_LEASE_SET, key=key, **values).consume()
            return True

        with self._errors(), self._session() as session:  # no generation bump: a lease is not part of the graph
            return session.execute_write(work)

    def _ensure_lease_node(self, key: str) -> None:
        """The lease's meta node exists (created once; two processes creating it at once may collide on the
        uniqueness constraint: the loser finds it there on its next attempt)."""
        if key in self._lease_nodes:
            return
        for attempt in range(5):
            try:
                with self._errors(), self._session() as session:
                    session.execute_write(lambda tx: tx.run(_LEASE_ENSURE, key=key).consume())
                break
            except ClientError:
                if attempt == 4:
                    raise
        self._lease_nodes.add(key)

    def generation(self) -> int:
        rows = self._read(lambda tx: tx.run(f"MATCH (m:{META} {{key: 'generation'}}) RETURN m.value").values())
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    # ---------------------------------------------------------------- summaries
    def counts(self) -> GraphCounts:
        def work(tx: ManagedTransaction) -> tuple[dict[str, int], dict[str, int], list[Any]]:
            nodes = dict(tx.run(f"MATCH (n:{NODE}) RETURN n.label, count(*)").values())
            edges = dict(tx.run(f"MATCH (:{NODE})-[r]->(:{NODE}) RETURN type(r), count(*)").values())
            levels = [json.loads(p).get("level") for (p,) in tx.run(f"MATCH (n:{NODE}:Section) RETURN n.props").values()]
            return nodes, edges, levels

        nodes, edges, levels = self._read(work)
        return GraphCounts.from_partial(nodes, edges, max((_as_int(v) for v in levels), default=0))

    def export(self) -> dict[str, Any]:
        def work(tx: ManagedTransaction) -> tuple[list[list[Any]], list[list[Any]]]:
            nodes = tx.run(f"MATCH (n:{NODE}) RETURN n.id, n.label, n.doc_ids, n.props").values()
            edges = tx.run(
                f"MATCH (a:{NODE})-[r]->(b:{NODE}) RETURN r.id, type(r), a.id, b.id, r.key, r.weight, r.doc_ids, r.props"
            ).values()
            return nodes, edges

        node_rows, edge_rows = self._read(work)  # one snapshot
        nodes = [
            {"id": nid, "label": label, "doc_ids": list(docs or []), "props": json.loads(props)}
            for nid, label, docs, props in sorted(node_rows, key=lambda r: r[0])
        ]
        edges = [
            {
                "id": eid,
                "type": type_,
                "src": src,
                "dst": dst,
                "key": key or "",
                "weight": float(weight),
                "doc_ids": list(docs or []),
                "props": json.loads(props),
            }
            for eid, type_, src, dst, key, weight, docs, props in sorted(edge_rows, key=lambda r: r[0])
            if _edge_type(type_) is not None
        ]
        return {"nodes": nodes, "edges": edges}

    # ---------------------------------------------------------------- read-only Cypher (the read_cypher tool)
    def explain_is_read_only(self, query: str, parameters: Mapping[str, Any] | None = None) -> bool | None:
        """What ``EXPLAIN`` says of ``query``: True for a read ('r'), False for anything that writes, None
        when this server does not report it reliably (``explain_query_type`` capability)."""
        if not self._capabilities.present.get("explain_query_type"):
            return None
        with self._query_errors(), self._errors(), self._session(neo4j.READ_ACCESS) as session:
            summary = session.run(Query("EXPLAIN " + query), dict(parameters or {})).consume()
        return summary.query_type == "r"

    @contextmanager
    def _query_errors(self) -> Iterator[None]:
        """A query the server rejects (or stops at its time-out) as :class:`CypherQueryError`."""
        try:
            yield
        except (ClientError, DatabaseError) as exc:
            if isinstance(exc, AuthError) or (exc.code and "DatabaseNotFound" in exc.code):
                raise
            raise CypherQueryError(f"{_one_line(exc.message) or exc.code}") from exc
        except TransientError as exc:
            raise CypherQueryError(f"{_one_line(exc.message) or exc.code}") from exc

    def run_read(
        self, query: str, parameters: Mapping[str, Any] | None = None, *, timeout: float = 10.0, limit: int = 100
    ) -> CypherResult:
        """Run a read query in a READ managed transaction with a server-side ``timeout`` (seconds); at most
        ``limit`` rows are kept (``truncated`` says whether there were more). Callers vet the query first
        (``stratagraph.tools.cypher``): this method does not parse it."""

        def work(tx: ManagedTransaction) -> CypherResult:
            result = tx.run(query, dict(parameters or {}))
            columns = list(result.keys())
            rows: list[list[Any]] = []
            truncated = False
            for record in result:
                if len(rows) >= limit:
                    truncated = True
                    break
                rows.append([_plain(v) for v in record.values()])
            result.consume()
            return CypherResult(columns=columns, rows=rows, truncated=truncated)

        with self._query_errors():
            return self._read(neo4j.unit_of_work(timeout=timeout)(work))


def _one_line(error: BaseException | str | None) -> str:
    """A driver message on one line: its last non-empty line (where the driver puts the reason)."""
    lines = [line.strip() for line in str(error or "").splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


def _as_int(value: Any) -> int:
    """``CAST(value AS INTEGER)`` as SQLite does it for a section level (0 when it is not a number)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    try:
        return int(float(str(value)))
    except (TypeError, ValueError):
        return 0


def _plain(value: Any) -> Any:
    """A Cypher value as plain data: nodes and relationships as their properties (the props JSON parsed)."""
    from neo4j.graph import Node as GraphNode
    from neo4j.graph import Path, Relationship

    if isinstance(value, GraphNode):
        props = dict(value)
        return {"labels": sorted(value.labels), **_readable(props)}
    if isinstance(value, Relationship):
        return {"type": value.type, **_readable(dict(value))}
    if isinstance(value, Path):
        return {"nodes": [_plain(n) for n in value.nodes], "relationships": [_plain(r) for r in value.relationships]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "iso_format"):  # temporal values
        return value.iso_format()
    return value


def _readable(props: dict[str, Any]) -> dict[str, Any]:
    """A stored node's or edge's properties with ``props`` parsed back into a dict."""
    raw = props.get("props")
    if isinstance(raw, str):
        try:
            props = {**props, "props": json.loads(raw)}
        except ValueError:
            pass
    return props

"""The GraphStore protocol: what ingestion writes and what the shared graph index reads, nothing more.

Only ``graph_store/`` talks to a database. Implementations (``sqlite.py`` embedded default, ``neo4j.py``
server backend) pass the one contract suite in ``tests/graph_store/test_contract.py``.

The protocol is deliberately narrow: batched writes (each one transaction), reads by id and by label, the
light whole-graph reads a client-side index is built from (:meth:`GraphStore.node_tuples`,
:meth:`GraphStore.edge_tuples`), the batched read of the edges around given nodes
(:meth:`GraphStore.neighbourhood`, what a walk that follows the question reads instead of the whole graph),
counts, a canonical export, a write ``generation`` for cache invalidation and a change feed
(:meth:`GraphStore.changes_since`: what was written or deleted after a generation, so an index is updated
rather than read again). Graph algorithms (PageRank,
traversal, BM25) are not the store's business: they run in ``stratagraph.retrieval``, over one
generation-cached :class:`~stratagraph.retrieval.index.GraphIndex` or over neighbourhood reads
(``retrieval/push.py``), the same on every backend, so every backend ranks the same.

Conventions every backend keeps:

* Provenance: every node and edge carries the ``doc_ids`` that support it. Upserting an existing node or
  edge unions its ``doc_ids`` and replaces its ``props`` and ``weight``.
* Deleting a document removes it from every ``doc_ids``; what is left with none is deleted, and so is every
  edge that touches a deleted node. Shared nodes stay, minus that document's provenance.
* Rankings break ties deterministically: score descending, then id ascending.
* ``export()`` is canonical: the same graph gives the same dict, whatever the order of writes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from stratagraph.schema import ALL_EDGE_TYPES, ALL_LABELS, Edge, EdgeType, Node, NodeLabel


class EdgeRow(NamedTuple):
    """An edge as whole-graph algorithms read it: no props, no provenance, no validation."""

    type: EdgeType
    src: str
    dst: str
    weight: float


class Neighbour(NamedTuple):
    """One edge as seen from one of its ends (:meth:`GraphStore.neighbourhood`): the node asked about, the edge's
    type, the node at its other end, whether the edge leaves ``node`` (``node -> other``), its weight and key."""

    node: str
    type: EdgeType
    other: str
    outgoing: bool
    weight: float
    key: str


#: the order of a node's neighbours in :meth:`GraphStore.neighbourhood` (heaviest first, then type, other end,
#: outgoing before incoming, key): the per-node limit keeps a prefix of it, the same on every backend
def neighbour_order(row: Neighbour) -> tuple[float, str, str, bool, str]:
    return (-row.weight, str(row.type), row.other, not row.outgoing, row.key)


def cut_neighbours(rows: Iterable[Neighbour], limit: int | None) -> list[Neighbour]:
    """Rows grouped by node (ids ascending), each node's in :func:`neighbour_order`, at most ``limit`` per node;
    self-loops dropped (a walk never takes them)."""
    per: dict[str, list[Neighbour]] = {}
    for row in rows:
        if row.other != row.node:
            per.setdefault(row.node, []).append(row)
    out: list[Neighbour] = []
    for node in sorted(per):
        ordered = sorted(per[node], key=neighbour_order)
        out.extend(ordered if limit is None else ordered[:limit])
    return out


class LeaseRecord(NamedTuple):
    """A named lease kept in the store itself (``graph_store/lease.py`` takes, renews and breaks it): who holds it,
    how many times the holder has renewed it (``beat``), how long it promised to renew within (``ttl``,
    seconds) and when it took it (``taken``, the holder's wall clock, for people; never compared across
    machines)."""

    holder: str
    beat: int
    ttl: float
    taken: float


class EdgeChange(NamedTuple):
    """An edge written (or, with ``weight`` None, deleted) since a generation (:meth:`GraphStore.changes_since`):
    its id, type, ends, key and weight."""

    id: str
    type: EdgeType
    src: str
    dst: str
    key: str
    weight: float | None


class Changes(NamedTuple):
    """What changed in the graph after a generation and up to ``generation`` (:meth:`GraphStore.changes_since`).

    ``nodes``: label -> the nodes of that label written since (created or updated, doc_ids or props or label),
    each as :meth:`GraphStore.node_tuples` gives it for the fields asked for that label (``(id,)`` alone for a
    label not asked about), sorted by id; ``deleted_nodes``: ids of nodes deleted since and not written again
    (sorted). ``edges``: edges written since (weight set), ``deleted_edges``: deleted since and not written
    again (weight None); both sorted by (type, src, dst, key). A node or edge written several times appears
    once, as it is now. A consumer drops every id of ``deleted_nodes`` and of ``nodes`` (any label: a node may
    change label), then adds ``nodes``; drops every edge of both lists, then adds ``edges``."""

    generation: int
    nodes: dict[str, list[tuple[Any, ...]]]
    deleted_nodes: list[str]
    edges: list[EdgeChange]
    deleted_edges: list[EdgeChange]

    @property
    def size(self) -> int:
        return sum(map(len, self.nodes.values())) + len(self.deleted_nodes) + len(self.edges) + len(self.deleted_edges)


DIRECTIONS = ("out", "in", "both")
EDGE_TYPES: dict[str, EdgeType] = {t.value: t for t in EdgeType}  # a name's member without the enum's lookup cost


class ScoredId(BaseModel):
    id: str
    score: float


class GraphCounts(BaseModel):
    """Counts for every label and edge type of the schema (0 where absent)."""

    nodes: dict[str, int]
    edges: dict[str, int]
    max_section_level: int = 0

    @classmethod
    def from_partial(cls, nodes: Mapping[str, int], edges: Mapping[str, int], max_level: int) -> GraphCounts:
        return cls(
            nodes={label: int(nodes.get(label, 0)) for label in ALL_LABELS},
            edges={t: int(edges.get(t, 0)) for t in ALL_EDGE_TYPES},
            max_section_level=int(max_level or 0),
        )


class DocumentVersion(BaseModel):
    """Everything one document contributes to the graph: what :meth:`GraphStore.replace_documents` writes."""

    doc_id: str
    nodes: list[Node]
    edges: list[Edge]


class DeleteSummary(BaseModel):
    doc_id: str
    nodes_deleted: int = 0
    edges_deleted: int = 0
    nodes_kept: int = 0  # shared nodes that lost this document's provenance but stay


class DocumentNotFound(KeyError):
    """Raised for an unknown document id."""

    def __init__(self, doc_id: str) -> None:
        super().__init__(doc_id)
        self.doc_id = doc_id

    def __str__(self) -> str:
        return f"unknown document id: {self.doc_id!r}"


class StoreUnavailable(RuntimeError):
    """The backing database cannot be reached or opened (after retries where retrying can help)."""


class LeaseLost(StoreUnavailable):
    """The lease was broken by another writer while this one held it (it stalled longer than its ttl); a
    write made under it is refused (:meth:`GraphStore.fence`)."""


class CypherQueryError(ValueError):
    """The server rejected or could not finish a read query (syntax, unknown procedure, time-out)."""


class StoreInfo(BaseModel):
    """Which backend a store is and what its server can do (``stratagraph stats`` prints it)."""

    backend: str  # "sqlite" | "neo4j"
    location: str  # a file path, or a URI and database
    server: str | None = None  # the server's agent string, for a server backend
    capabilities: dict[str, bool] = Field(default_factory=dict)  # feature -> available (and in use)
    skipped: list[str] = Field(default_factory=list)  # what the server lacks, one line each


@runtime_checkable
class CypherReader(Protocol):
    """A store that runs read-only Cypher for the ``read_cypher`` tool (the Neo4j backend). Callers vet the
    query first (``stratagraph.tools.cypher``); these methods only run it."""

    def run_read(
        self, query: str, parameters: Mapping[str, Any] | None = None, *, timeout: float = 10.0, limit: int = 100
    ) -> Any:
        """Run ``query`` in a READ transaction with a server-side time-out; at most ``limit`` rows."""
        ...

    def explain_is_read_only(self, query: str, parameters: Mapping[str, Any] | None = None) -> bool | None:
        """What the server's ``EXPLAIN`` says (True: read-only), or None when it does not report it."""
        ...


class GraphStore(ABC):
    """Abstract graph store. Methods take and return schema models; ids are plain strings."""

    #: the lease this handle writes under, as ``(name, holder)`` (:meth:`fence`); None: unfenced
    _fence: tuple[str, str] | None = None

    # ---------------------------------------------------------------- lifecycle
    @abstractmethod
    def close(self) -> None: ...

    @property
    @abstractmethod
    def closed(self) -> bool:
        """True once :meth:`close` ran."""

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- writes: each call is one transaction
    @abstractmethod
    def replace_documents(
        self, versions: Sequence[DocumentVersion], merges: Mapping[str, Sequence[str]] | None = None
    ) -> list[DeleteSummary]:
        """In one transaction (all or nothing): :meth:`merge_nodes` for each ``target -> sources`` of
        ``merges`` (in target order), then for each version drop the document's provenance (as
        :meth:`delete_document`, without the unknown-id error) and write its nodes and edges. A reader sees
        the old versions or the new ones, never a mix; a failure leaves the old ones. Every edge's endpoints
        must exist once the batch is written (ValueError otherwise, and nothing is written)."""

    @abstractmethod
    def write_batch(
        self, nodes: Sequence[Node] = (), edges: Sequence[Edge] = (), delete_edges: Sequence[str] = ()
    ) -> None:
        """Delete edges by id, then upsert nodes, then upsert edges, in one transaction (derived links that
        must change together, e.g. a chunk's SIMILAR list). Upserting unions ``doc_ids`` and replaces
        ``props`` and ``weight``; an edge whose endpoints do not exist is a ValueError (nothing written)."""

    @abstractmethod
    def merge_nodes(self, target: str, sources: Sequence[str]) -> int:
        """Fold ``sources`` into ``target`` in one transaction (entity resolution): the target gets their
        provenance and ``by_doc`` contributions (created from the first source if it does not exist), their
        edges are re-pointed to it (an edge that would become a self-loop is dropped) and they are deleted.
        Returns how many sources existed."""

    @abstractmethod
    def delete_document(self, doc_id: str) -> DeleteSummary:
        """Remove a document and everything only it supported. Raises :class:`DocumentNotFound`."""

    # ---------------------------------------------------------------- reads by id and by label
    @abstractmethod
    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        """The nodes that exist, in the order of ``ids``."""

    def get_node(self, node_id: str) -> Node | None:
        found = self.get_nodes([node_id])
        return found[0] if found else None

    @abstractmethod
    def nodes_by_label(self, label: NodeLabel | str, doc_id: str | None = None) -> list[Node]:
        """Nodes of a label (optionally only those supported by ``doc_id``), sorted by id."""

    @abstractmethod
    def node_tuples(self, label: NodeLabel | str, fields: Sequence[str]) -> list[tuple[Any, ...]]:
        """``(id, *values)`` of every node of ``label``, sorted by id: one value per name in ``fields``,
        ``props[name]`` (None when absent) or, for the name ``"doc_ids"``, the node's provenance. The light
        read an index is built from (a chunk's document and section without its text)."""

    @abstractmethod
    def get_edges(
        self,
        src: str | Sequence[str] | None = None,
        dst: str | Sequence[str] | None = None,
        types: Iterable[EdgeType | str] | None = None,
    ) -> list[Edge]:
        """Edges (with props and provenance) matching every given filter, sorted by (type, src, dst, key);
        ``src`` / ``dst`` take one id or several."""

    @abstractmethod
    def edge_tuples(self, types: Iterable[EdgeType | str]) -> list[EdgeRow]:
        """:class:`EdgeRow` ``(type, src, dst, weight)`` of every edge of ``types``, sorted by (type, src,
        dst, key): the light form whole-graph indexes are built from."""

    def keyed_edge_tuples(self, types: Iterable[EdgeType | str]) -> list[tuple[EdgeRow, str]]:
        """:meth:`edge_tuples` with each edge's key: ``(EdgeRow, key)`` in the same order (what an index
        updated edge by edge needs to tell two edges of one type between the same nodes apart)."""
        return [(EdgeRow(e.type, e.src, e.dst, e.weight), e.key) for e in self.get_edges(types=types)]

    @abstractmethod
    def neighbourhood(
        self,
        ids: Sequence[str],
        types: Iterable[EdgeType | str],
        direction: str = "both",
        limit: int | None = None,
    ) -> list[Neighbour]:
        """The edges of ``types`` around each of ``ids`` in one batched read: ``direction`` ``"out"`` (edges
        leaving the node), ``"in"`` (arriving) or ``"both"``; at most ``limit`` per node (all when None), the
        first of :func:`neighbour_order` (heaviest first). Grouped by node, ids ascending; self-loops are not
        returned; an unknown id has no rows. What a query reads instead of the whole graph: its cost follows
        the nodes asked about (and ``limit``), not the store's size."""

    # ---------------------------------------------------------------- leases (coordination of writers)
    def fence(self, lease: str, holder: str) -> None:
        """From now on every graph write through this handle is made only while the lease ``lease`` is held
        by ``holder``: each write transaction reads the lease first, serialised with :meth:`swap_lease`'s
        changes of holder, and raises :class:`LeaseLost` (writing nothing) when another holder has it
        (:meth:`_check_fence`). A writer that stalled past its ttl while another machine broke its lease and
        wrote cannot then write over it, even before its own renewal notices (the fencing token of a lock
        service; the holder id, new at every take, is the token). Lease records themselves are not fenced."""
        self._fence = (lease, holder)

    def unfence(self, lease: str, holder: str) -> None:
        """Lift the fence :meth:`fence` set for ``holder`` (nothing when the handle is fenced to another)."""
        if self._fence == (lease, holder):
            self._fence = None

    def _check_fence(self, holder_of: Callable[[str], str | None]) -> None:
        """Inside a graph write transaction, where no lease changes hands until it commits: refuse the write
        (:class:`LeaseLost`) when this handle is fenced to a lease whose holder, as ``holder_of(name)`` reads
        it in that transaction, is another writer or nobody."""
        if self._fence is None:
            return
        name, mine = self._fence
        holder = holder_of(name)
        if holder != mine:
            raise LeaseLost(
                f"graph store: a write under the {name} lease of {mine} was refused: the lease is now "
                f"{'held by ' + holder if holder else 'free'} (this writer stalled past its ttl and another took "
                "it over); nothing was written: run the ingest again"
            )

    @abstractmethod
    def read_lease(self, name: str) -> LeaseRecord | None:
        """The lease ``name`` as stored, or None when nobody holds it."""

    @abstractmethod
    def swap_lease(self, name: str, expect: LeaseRecord | None, new: LeaseRecord | None) -> bool:
        """Compare and set, in one write transaction serialised with every other writer of the store: when the
        stored lease is ``expect`` (same holder and beat; None: no lease) it becomes ``new`` (None: removed)
        and True is returned; otherwise nothing changes and False. Not a graph write: the
        :meth:`generation` does not move, so readers' caches stay valid."""

    @abstractmethod
    def generation(self) -> int:
        """A number that changes whenever anyone (this process or another) writes to the store: caches of
        what was read are valid while it stays the same."""

    def changes_since(
        self, generation: int, fields: Mapping[str, Sequence[str]] | None = None, limit: int | None = None
    ) -> Changes | None:
        """The change feed: what was written or deleted after ``generation`` (:class:`Changes`, read in one
        snapshot, with the generation it reaches), node tuples with ``fields[label]`` for the labels asked
        about. None when the store cannot say: the feed no longer reaches back that far (deletions are kept
        for a bounded number of rows), ``generation`` is not one the store has had, the store keeps no feed
        (this default), or more than ``limit`` rows changed (then a full read is cheaper). Never a graph
        write; its cost follows the number of rows changed, not the graph's size."""
        return None

    def document_hash(self, doc_id: str) -> str | None:
        """The stored content hash of a document, or None when it is not stored."""
        node = self.get_node(doc_id)
        if node is None or node.label != NodeLabel.DOCUMENT:
            return None
        return node.props.get("content_hash")

    # ---------------------------------------------------------------- summaries
    @abstractmethod
    def counts(self) -> GraphCounts: ...

    def info(self) -> StoreInfo:
        """The backend, where it lives and what its server can do."""
        return StoreInfo(backend=type(self).__name__, location=repr(self))

    @abstractmethod
    def export(self) -> dict[str, Any]:
        """Canonical dump: ``{"nodes": [...sorted by id], "edges": [...sorted by edge id]}``; each node
        ``{"id", "label", "doc_ids", "props"}``, each edge ``{"id", "type", "src", "dst", "key",
        "weight", "doc_ids", "props"}``; JSON-serialisable."""

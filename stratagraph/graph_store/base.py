"""The GraphStore protocol: everything ingestion and the five papers' retrieval need from a graph database.

Only ``graph_store/`` writes to a database. Implementations (``sqlite.py`` embedded default, ``neo4j.py``
server backend) pass the one contract suite in ``tests/graph_store/test_contract.py``.

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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from stratagraph.schema import ALL_EDGE_TYPES, ALL_LABELS, Direction, Edge, EdgeType, Node, NodeLabel


class Neighbor(BaseModel):
    """One step from a node: the edge taken and the node reached."""

    node: Node
    edge: Edge
    direction: Direction  # "out": node is edge.dst; "in": node is edge.src


class EdgeRow(NamedTuple):
    """An edge as whole-graph algorithms read it: no props, no provenance, no validation."""

    type: EdgeType
    src: str
    dst: str
    weight: float


class Subgraph(BaseModel):
    nodes: list[Node] = Field(default_factory=list)  # sorted by id
    edges: list[Edge] = Field(default_factory=list)  # sorted by edge id


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


class GraphStore(ABC):
    """Abstract graph store. Methods take and return schema models; ids are plain strings."""

    # ---------------------------------------------------------------- lifecycle
    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- writes
    @abstractmethod
    def upsert_nodes(self, nodes: Sequence[Node]) -> None:
        """Insert or update nodes in one transaction (doc_ids unioned, props replaced)."""

    @abstractmethod
    def upsert_edges(self, edges: Sequence[Edge]) -> None:
        """Insert or update edges in one transaction. Both endpoints must exist (ValueError otherwise)."""

    @abstractmethod
    def delete_nodes(self, ids: Sequence[str]) -> int:
        """Delete nodes and every edge touching them; returns the number of nodes deleted."""

    @abstractmethod
    def delete_edges(self, edge_ids: Sequence[str]) -> int:
        """Delete edges by id; returns how many existed."""

    @abstractmethod
    def replace_document(self, doc_id: str, nodes: Sequence[Node], edges: Sequence[Edge]) -> DeleteSummary:
        """Atomically drop ``doc_id``'s provenance (as :meth:`delete_document`) and write its new nodes and
        edges: a reader sees the old version or the new one, never a mix; a failure leaves the old one."""

    def replace_documents(
        self, versions: Sequence[DocumentVersion], merges: Mapping[str, Sequence[str]] | None = None
    ) -> list[DeleteSummary]:
        """:meth:`merge_nodes` for each ``target -> sources`` of ``merges`` (in target order), then
        :meth:`replace_document` for many documents, in one transaction (all or nothing). Backends
        override it to save round trips; this default is correct but not atomic across documents."""
        for target, sources in sorted((merges or {}).items()):
            self.merge_nodes(target, sources)
        return [self.replace_document(v.doc_id, v.nodes, v.edges) for v in versions]

    @abstractmethod
    def write_batch(
        self, nodes: Sequence[Node] = (), edges: Sequence[Edge] = (), delete_edges: Sequence[str] = ()
    ) -> None:
        """Delete edges by id, then upsert nodes, then upsert edges, in one transaction (derived links that
        must change together, e.g. a chunk's SIMILAR list)."""

    @abstractmethod
    def merge_nodes(self, target: str, sources: Sequence[str]) -> int:
        """Fold ``sources`` into ``target`` in one transaction (entity resolution): the target gets their
        provenance and ``by_doc`` contributions (created from the first source if it does not exist), their
        edges are re-pointed to it (an edge that would become a self-loop is dropped) and they are deleted.
        Returns how many sources existed."""

    @abstractmethod
    def delete_document(self, doc_id: str) -> DeleteSummary:
        """Remove a document and everything only it supported. Raises :class:`DocumentNotFound`."""

    # ---------------------------------------------------------------- reads: nodes and edges
    @abstractmethod
    def get_node(self, node_id: str) -> Node | None: ...

    @abstractmethod
    def get_nodes(self, ids: Sequence[str]) -> list[Node]:
        """The nodes that exist, in the order of ``ids``."""

    @abstractmethod
    def nodes_by_label(self, label: NodeLabel | str, doc_id: str | None = None) -> list[Node]:
        """Nodes of a label (optionally only those supported by ``doc_id``), sorted by id."""

    @abstractmethod
    def get_edges(
        self,
        src: str | None = None,
        dst: str | None = None,
        types: Iterable[EdgeType | str] | None = None,
    ) -> list[Edge]:
        """Edges matching every given filter, sorted by (type, src, dst, key)."""

    def edge_tuples(self, types: Iterable[EdgeType | str]) -> list[EdgeRow]:
        """:class:`EdgeRow` ``(type, src, dst, weight)`` of every edge of ``types``, in :meth:`get_edges`
        order: the light form whole-graph algorithms (PPR, message passing, indexes) build from."""
        return [EdgeRow(e.type, e.src, e.dst, e.weight) for e in self.get_edges(types=types)]

    @abstractmethod
    def neighbors(
        self,
        node_id: str,
        types: Iterable[EdgeType | str] | None = None,
        direction: Direction = "out",
    ) -> list[Neighbor]:
        """Adjacent nodes over the given edge types, sorted by (edge type, neighbour id)."""

    @abstractmethod
    def document_ids(self) -> list[str]: ...

    def generation(self) -> int | None:
        """A number that changes whenever anyone writes to the store (None: the backend cannot tell, so
        callers must not cache what they read)."""
        return None

    def document_hash(self, doc_id: str) -> str | None:
        """The stored content hash of a document, or None when it is not stored."""
        node = self.get_node(doc_id)
        if node is None or node.label != NodeLabel.DOCUMENT:
            return None
        return node.props.get("content_hash")

    # ---------------------------------------------------------------- structure layer (BAG-RAG)
    def section_children(self, parent_id: str) -> list[Node]:
        """Sections directly under a Document or Section, in reading order."""
        kids = [n.node for n in self.neighbors(parent_id, [EdgeType.HAS_SECTION], "out")]
        return sorted(kids, key=lambda n: (n.props.get("order", 0), n.id))

    def section_parent(self, section_id: str) -> Node | None:
        """The Section (or Document, for a top-level section) a section hangs under."""
        parents = self.neighbors(section_id, [EdgeType.HAS_SECTION], "in")
        return parents[0].node if parents else None

    def sections_at_level(self, level: int, doc_id: str | None = None) -> list[Node]:
        return [n for n in self.nodes_by_label(NodeLabel.SECTION, doc_id) if n.props.get("level") == level]

    # ---------------------------------------------------------------- knowledge layer (BiG-RAG, KAG)
    def facts_of_entity(self, entity_id: str) -> list[Node]:
        return [n.node for n in self.neighbors(entity_id, [EdgeType.IN_FACT], "out")]

    def entities_of_fact(self, fact_id: str) -> list[Node]:
        return [n.node for n in self.neighbors(fact_id, [EdgeType.IN_FACT], "in")]

    def chunks_of(self, node_id: str) -> list[Node]:
        """Chunks that support a node: a Fact's SUPPORTED_BY targets, the chunks that MENTION an Entity,
        a Section's own chunks (HAS_CHUNK), or a Document's chunks; sorted by id."""
        node = self.get_node(node_id)
        if node is None:
            return []
        if node.label == NodeLabel.FACT:
            out = [n.node for n in self.neighbors(node_id, [EdgeType.SUPPORTED_BY], "out")]
        elif node.label == NodeLabel.ENTITY:
            out = [n.node for n in self.neighbors(node_id, [EdgeType.MENTIONS], "in")]
        elif node.label == NodeLabel.SECTION:
            out = [n.node for n in self.neighbors(node_id, [EdgeType.HAS_CHUNK], "out")]
        elif node.label == NodeLabel.DOCUMENT:
            out = self.nodes_by_label(NodeLabel.CHUNK, doc_id=node_id)
        elif node.label == NodeLabel.CHUNK:
            out = [node]
        else:
            out = []
        return sorted(out, key=lambda n: n.id)

    # ---------------------------------------------------------------- graph algorithms
    @abstractmethod
    def subgraph(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        types: Iterable[EdgeType | str] | None = None,
        direction: Direction = "both",
        max_nodes: int | None = None,
    ) -> Subgraph:
        """The k-hop neighbourhood of ``seeds`` (breadth first; nodes nearer the seeds win when
        ``max_nodes`` cuts, ties by id) and every edge among its nodes of the given types."""

    @abstractmethod
    def personalized_pagerank(
        self,
        seeds: Mapping[str, float],
        types: Iterable[EdgeType | str] | None = None,
        damping: float = 0.85,
        labels: Iterable[NodeLabel | str] | None = None,
        top_k: int | None = None,
        undirected: bool = True,
    ) -> list[ScoredId]:
        """Personalised PageRank with the reset vector proportional to ``seeds`` (unknown ids ignored),
        over edges of ``types`` (all when None) weighted by edge weight; returns nodes of ``labels`` (all
        when None) by score desc, id asc."""

    @abstractmethod
    def bm25_search(self, query: str, k: int = 10, doc_ids: Sequence[str] | None = None) -> list[ScoredId]:
        """BM25 over chunk text (higher is better), optionally restricted to chunks of ``doc_ids``."""

    # ---------------------------------------------------------------- summaries
    @abstractmethod
    def counts(self) -> GraphCounts: ...

    @abstractmethod
    def export(self) -> dict[str, Any]:
        """Canonical dump: ``{"nodes": [...sorted by id], "edges": [...sorted by edge id]}``; each node
        ``{"id", "label", "doc_ids", "props"}``, each edge ``{"id", "type", "src", "dst", "key",
        "weight", "doc_ids", "props"}``; JSON-serialisable."""

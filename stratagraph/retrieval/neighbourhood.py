"""The ``ppr`` walk graph read from the store around given nodes (:meth:`GraphStore.neighbourhood`), never whole.

It is the graph :func:`~stratagraph.retrieval.ppr.build_walk_graph` builds from the whole-graph index, node by
node: a node's walk neighbours are

* the other ends of its ``MENTIONS`` (weight: the edge's mention count), ``IN_FACT``, ``SUPPORTED_BY`` and
  ``RELATED`` edges (weight 1 each), either direction, self-loops dropped;
* for an entity, the chunks of each page it is ``DESCRIBED_BY`` (weight ``described_by_weight`` per edge): a
  section's own chunks (its ``HAS_CHUNK`` edges), a document's every chunk (``HAS_CHUNK`` under the document
  and its ``HAS_SECTION`` tree);
* for a chunk, the entities ``DESCRIBED_BY`` its document (the id before its first ``#``) or its section
  (where its ``HAS_CHUNK`` comes from), the same weight: the other side of the same pairs.

Multiple edges between two nodes add up, as in the whole-graph matrix. :class:`StoreWalk` is the
:class:`~stratagraph.retrieval.push.WalkSource` the local push reads; a read is a handful of batched
statements whatever the number of nodes asked about.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from stratagraph.graph_store.base import GraphStore
from stratagraph.retrieval.push import Adjacent
from stratagraph.schema import EdgeType

__all__ = ["WALKED", "WALK_ENDS", "StoreWalk"]

#: the walked edge types and the graph index tables of their two ends (DESCRIBED_BY joins an entity to its
#: page's chunks, read per page)
WALK_ENDS = {EdgeType.MENTIONS: ("chunks", "entities"), EdgeType.IN_FACT: ("entities", "facts"),
             EdgeType.SUPPORTED_BY: ("facts", "chunks"), EdgeType.RELATED: ("entities", "entities")}  # fmt: skip
WALKED = tuple(WALK_ENDS)
READ = (*WALKED, EdgeType.DESCRIBED_BY, EdgeType.HAS_CHUNK)  # a node's read: its walk edges and page links


def document_of(chunk_id: str) -> str:
    """A chunk's document, from its id (``<doc id>#<section>#<n>``; a document id never holds "#")."""
    return chunk_id.split("#", 1)[0]


@dataclass
class StoreWalk:
    """The walk graph around the nodes asked about, read from ``graph`` (module docstring). ``pages`` keeps the
    chunks of the pages read so far and ``described`` the entities describing them (pass one dict each per store
    generation to share them between queries)."""

    graph: GraphStore
    described_by_weight: float = 2.0
    pages: dict[str, tuple[str, ...]] = field(default_factory=dict)
    described: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reads: int = 0

    def fetch(self, nodes: Sequence[str], limit: int) -> dict[str, Adjacent]:
        """Each node's walk neighbours, from one batched read of its first ``limit`` edges of the walked types,
        ``DESCRIBED_BY`` and ``HAS_CHUNK`` (heaviest first; complete when fewer came) and the pages' chunks and
        describing entities (kept per generation in ``pages`` and ``described``)."""
        out: dict[str, list[tuple[str, float]]] = {u: [] for u in nodes}
        counts: dict[str, int] = defaultdict(int)
        own_pages: dict[str, list[str]] = defaultdict(list)  # entity -> the pages it is DESCRIBED_BY
        chunk_pages: dict[str, list[str]] = {u: [document_of(u)] for u in nodes if "#" in u}
        self.reads += 1
        for row in self.graph.neighbourhood(nodes, READ, "both", limit):
            counts[row.node] += 1
            if row.type == EdgeType.DESCRIBED_BY:
                if row.outgoing:
                    own_pages[row.node].append(row.other)
            elif row.type == EdgeType.HAS_CHUNK:
                if not row.outgoing and row.node in chunk_pages and row.other not in chunk_pages[row.node]:
                    chunk_pages[row.node].append(row.other)
            else:
                out[row.node].append((row.other, row.weight if row.type == EdgeType.MENTIONS else 1.0))
        chunks_of = self.page_chunks(sorted({p for ps in own_pages.values() for p in ps}))
        for ent, pages in own_pages.items():
            for page in pages:
                out[ent].extend((c, self.described_by_weight) for c in chunks_of.get(page, ()))
        describing = self.describing(sorted({p for ps in chunk_pages.values() for p in ps}))
        for cid, pages in chunk_pages.items():
            for page in pages:
                out[cid].extend((e, self.described_by_weight) for e in describing.get(page, ()))
        return {u: Adjacent.of(nbrs, counts[u] < limit) for u, nbrs in out.items()}

    def describing(self, pages: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Page -> the entities ``DESCRIBED_BY`` it, one per edge (read once, then kept in ``described``)."""
        todo = [p for p in pages if p not in self.described]
        if todo:
            found: dict[str, list[str]] = {p: [] for p in todo}
            for page, ent in self._rows(todo, EdgeType.DESCRIBED_BY, "in"):
                found[page].append(ent)
            self.described.update({p: tuple(es) for p, es in found.items()})
        return {p: self.described[p] for p in pages}

    def page_chunks(self, pages: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Page -> its chunks: a section's own, a document's all (read once, then kept in ``pages``)."""
        todo = [p for p in pages if p not in self.pages]
        if todo:
            sections = sorted({p for p, _ in self._rows(todo, EdgeType.HAS_SECTION, "in")})
            own: dict[str, list[str]] = {s: [] for s in sections}
            for s, cid in self._rows(sections, EdgeType.HAS_CHUNK, "out"):
                own[s].append(cid)
            self.pages.update({s: tuple(sorted(cs)) for s, cs in own.items()})
            self._document_chunks([p for p in todo if p not in own])
        return {p: self.pages[p] for p in pages if p in self.pages}

    def _document_chunks(self, docs: Sequence[str]) -> None:
        """Every chunk under each document: its ``HAS_SECTION`` tree read level by level, then ``HAS_CHUNK``."""
        owner: dict[str, str] = {d: d for d in docs}
        frontier = list(docs)
        while frontier:
            rows = self._rows(frontier, EdgeType.HAS_SECTION, "out")
            frontier = [s for _, s in rows if s not in owner]
            for parent, s in rows:
                owner.setdefault(s, owner[parent])
        found: dict[str, set[str]] = {d: set() for d in docs}
        for holder, cid in self._rows(sorted(owner), EdgeType.HAS_CHUNK, "out"):
            found[owner[holder]].add(cid)
        for d in docs:
            self.pages[d] = tuple(sorted(found[d]))

    def _rows(self, ids: Iterable[str], type_: EdgeType, direction: str) -> list[tuple[str, str]]:
        ids = list(ids)
        if not ids:
            return []
        self.reads += 1
        return [(r.node, r.other) for r in self.graph.neighbourhood(ids, [type_], direction)]

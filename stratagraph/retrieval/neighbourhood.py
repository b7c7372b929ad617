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

__all__ = ["WALKED", "StoreWalk"]

WALKED = (EdgeType.MENTIONS, EdgeType.IN_FACT, EdgeType.SUPPORTED_BY, EdgeType.RELATED)


def document_of(chunk_id: str) -> str:
    """A chunk's document, from its id (``<doc id>#<section>#<n>``; a document id never holds "#")."""
    return chunk_id.split("#", 1)[0]


@dataclass
class StoreWalk:
    """The walk graph around the nodes asked about, read from ``graph`` (module docstring). ``pages`` keeps the
    chunks of the pages read so far (pass one dict per store generation to share it between queries)."""

    graph: GraphStore
    described_by_weight: float = 2.0
    pages: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reads: int = 0

    def fetch(self, nodes: Sequence[str], limit: int) -> dict[str, Adjacent]:
        """Each node's walk neighbours: its first ``limit`` edges of the walked types (heaviest first; complete
        when fewer came) and all its page links."""
        out: dict[str, list[tuple[str, float]]] = {u: [] for u in nodes}
        counts: dict[str, int] = defaultdict(int)
        for row in self.graph.neighbourhood(nodes, WALKED, "both", limit):
            out[row.node].append((row.other, row.weight if row.type == EdgeType.MENTIONS else 1.0))
            counts[row.node] += 1
        self.reads += 1
        for u, others in self._page_links(nodes).items():
            out[u].extend((v, self.described_by_weight) for v in others)
        return {u: Adjacent(tuple(nbrs), counts[u] < limit) for u, nbrs in out.items()}

    # ---------------------------------------------------------------- DESCRIBED_BY, both sides
    def _page_links(self, nodes: Sequence[str]) -> dict[str, list[str]]:
        """Node -> its neighbours through ``DESCRIBED_BY`` pages (one entry per edge and chunk)."""
        links: dict[str, list[str]] = defaultdict(list)
        described = self._rows(nodes, EdgeType.DESCRIBED_BY, "out")
        chunks_of = self.page_chunks(sorted({page for _, page in described}))
        for ent, page in described:
            links[ent].extend(chunks_of.get(page, ()))
        pages_of = self._chunk_pages([u for u in nodes if "#" in u])
        every_page = sorted({p for ps in pages_of.values() for p in ps})
        by_page: dict[str, list[str]] = defaultdict(list)
        for page, ent in self._rows(every_page, EdgeType.DESCRIBED_BY, "in"):
            by_page[page].append(ent)
        for cid, ps in pages_of.items():
            for page in ps:
                links[cid].extend(by_page.get(page, ()))
        return links

    def _chunk_pages(self, chunks: Sequence[str]) -> dict[str, list[str]]:
        """Chunk -> its document and its section (without repeats)."""
        out: dict[str, list[str]] = {c: [document_of(c)] for c in chunks}
        for cid, sec in self._rows(chunks, EdgeType.HAS_CHUNK, "in"):
            if sec not in out[cid]:
                out[cid].append(sec)
        return out

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

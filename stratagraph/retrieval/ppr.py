"""``ppr``: HippoRAG-style personalised PageRank over the entity / fact / chunk graph, ranking chunks.

HippoRAG (Gutiérrez et al. 2024, §2: "hippocampal" retrieval) runs PageRank personalised on the query's
entities over an open knowledge graph whose phrase nodes link to the passages that contain them; HippoRAG 2
adds the passages themselves as seeds (dense scores, scaled by a small factor) so that the walk starts both
from what the question names and from what it resembles. Here the graph is the one the ingest built:

* Chunk -MENTIONS- Entity (weight = mention count), Entity -IN_FACT- Fact -SUPPORTED_BY- Chunk (the
  BiG-RAG bipartite layer), Entity -RELATED- Entity (binary triples);
* Entity -DESCRIBED_BY- page: an entity is joined to the chunks of its own page (the document or section
  whose title names it), so a walk can go from a passage to the page of something it mentions.

All edges are walked both ways; each node spreads its mass in proportion to edge weight. The reset vector
(HippoRAG eq. 1's personalisation) puts

* ``score * specificity`` on every entity the question names: 1 for an exact name or alias, the cosine for a
  similar one (HippoRAG's node specificity, softened to ``1 / log2(2 + chunks mentioning it)`` so a hub
  entity seeds less); the chunks of pages whose title the question quotes share a weight of 1 per page;
* ``passage_weight * dense score`` on the top dense chunks (HippoRAG 2's passage nodes, factor 0.05).

Ranked on its own, PPR mass follows the seeds it started from: second-hop passages rise from dense rank
~1000 to rank ~5-20, not into the top 5 (measured; ../shared/NOTES-offline.md saw the same). So the passage
ranking is a weighted reciprocal-rank fusion (k = 60) of these lists, all but the dense and BM25 ones read off
the graph:

1. the PPR ranking of chunks;
2. the dense ranking: weight 0 by default, because the dense scores already seed the walk (counting them
   again cost 2 points of recall@5 on MuSiQue and 2Wiki, and nothing on HotpotQA);
3. the BM25 ranking;
4. the question's own pages (weight 2): pages whose title it quotes or that are ``DESCRIBED_BY`` an entity
   it names exactly (KAG's mutual index read from the entity side), the ``page_chunks`` (2) chunks of each
   document among them most relevant to the question (:mod:`~stratagraph.retrieval.relevance`; issue 20:
   by PPR score they were a page's opening chunks, its name and links, ahead of the table row or results
   paragraph asked about), taken in turn across the documents in PPR order. Weighted as high as the next
   list, so the pages a question names are not crowded out by the pages they link to (on linked
   encyclopedia pages the one-hop list filled the top 5 before a comparison question's own two pages:
   recall@5 72.5 -> 91.7; nothing moved on the Wikipedia sets); a few chunks per page, so that a question
   naming one or two multi-section papers leaves room among its top chunks for a paper they cite or for
   the second paper (inkdating: chunk recall@5 81.2 -> 93.8);
5. one hop out of those pages (weight 2): the pages of the entities their chunks ``MENTION`` and the pages
   whose title their text quotes, in PPR order, the ``hop_chunks`` (2) chunks of each most relevant to the
   step of the chain that hop answers (:func:`chain_steps`: the pages one hop out of "X's founder's
   hometown" answer "the hometown of {founder}"), taken in turn. This is the bridge of a two-hop question ("the
   director of film X" -> the page of X -> the page of the director it names). A question that Alg. 5
   decomposes into a chain of n sub-questions answered one after another (:func:`~stratagraph.retrieval.
   decompose.chain_length`: "the river of the birthplace of X's founder" is 3) gets one more such list per
   hop, up to n - 1 hops out (at most ``max_page_hops``), each the pages first reached on that hop, at the
   same weight: the third page of a 3-hop chain is two links from the question's page, and without its own
   list the one-hop pages filled the top 5 before it (encyclopedia 3-hop chains 72.2 -> 94.4;
   BENCHMARKS.md);
6. the fact chains of BiG-RAG's traversal (``traversal.traverse``: the question decomposed, Alg. 5, and
   each sub-question walked over the entity-fact graph, Alg. 4), before its own dense fusion. The entity-
   chunk walk and the fact-chain walk find different bridges: on MuSiQue (2-4 hops) adding this list took
   recall@5 from 69.2 to 72.5 (BENCHMARKS.md has the ablation);
7. for a question anchored to a page (issue 20), the chunks by relevance to the question (weight 1) and,
   for a chain, by relevance to its last step (weight 0.5), whose page holds the answer; only chunks of
   documents of several chunks, where there is a chunk to choose (on passages they only counted the dense
   and BM25 scores again: MuSiQue -1.6).

Which lists count depends on the question (:func:`fusion_weights`, issue 9): the graph lists above are for
a question *anchored* to a page (it quotes a title, or names an entity with a page of its own). Any other
question is ranked as ``rrf`` ranks it (dense and BM25), with the walk and the traversal coming back in
proportion to how specific to few documents the entities it names are: in a large store of entity pages
(MuSiQue) an unpaged name still finds its passages through the graph, while a name of a small store, or one
found in most documents ("FY2026" in a budget, a company in its own quarterly reports), only adds noise to
what dense and BM25 find. BENCHMARKS.md has the measurements on the shared and our out-of-domain sets.

Parameters are in :class:`PPRParams` (one configuration for every store).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, Field
from scipy.sparse import csr_matrix

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, Scored, rrf
from stratagraph.retrieval.decompose import SubQuery, chain_length, decompose
from stratagraph.retrieval.index import GraphIndex, NodeTable, PageRankParams, personalized_pagerank, rank_positions, walk_matrix
from stratagraph.retrieval.lexical import bm25
from stratagraph.retrieval.neighbourhood import WALK_ENDS, WALKED, StoreWalk, document_of
from stratagraph.retrieval.push import local_pagerank
from stratagraph.retrieval.query_linking import QueryLinks, describe, link_query, quoted_pages
from stratagraph.retrieval.relevance import Relevance, relevance
from stratagraph.retrieval.traversal import RowIds, traverse
from stratagraph.schema import EdgeType




class PPRParams(BaseModel):
    pagerank: PageRankParams = Field(default_factory=PageRankParams, description="paper (HippoRAG): the one PageRank's damping 0.5")
    passage_weight: float = Field(0.05, description="paper (HippoRAG 2): weight of the dense passage seeds")
    dense_seeds: int = Field(10, description="chosen on hotpotqa/musique/2wiki: dense chunks seeding the walk")
    depth: int = Field(50, description="ours: how deep the dense and BM25 lists are read for fusion")
    # ppr walk, dense, bm25, the question's pages, one hop out, BiG-RAG traversal (module docstring)
    # the dense list's weight is 0: dense scores already seed the walk, and a list of its own counted them
    # twice (measured: recall@5 +0 / +2.1 / +2.0 on hotpotqa / musique / 2wiki without it; BENCHMARKS.md)
    fuse_weights: tuple[float, float, float, float, float, float] = Field(
        (1.0, 0.0, 1.0, 2.0, 2.0, 1.0),
        description="chosen on hotpotqa/musique/2wiki (the question's own pages raised to the one-hop list's 2 on the first halves of all seven sets): RRF weights of the six lists",
    )
    described_by_weight: float = Field(2.0, description="chosen on hotpotqa/musique/2wiki: entity -> own page edge weight")
    rrf_k: int = Field(RRF_K, description="paper (Cormack et al.): the RRF constant")
    anchored_only: bool = Field(
        True, description="ours (issue 9): the graph lists count in full only for a question anchored to a page"
    )
    specificity_power: float = Field(
        3.0,
        description="chosen on the first halves of all seven sets: an unanchored question's graph weight is its "
        "entities' document specificity to this power",
    )
    max_page_hops: int = Field(
        3,
        ge=1,
        description="ours (issue 9): the page lists follow links out of the question's pages one hop, or as "
        "many hops as its Alg. 5 decomposition chains sub-questions less one (a 3-step chain: two), at most this",
    )
    page_chunks: int = Field(
        2,
        ge=1,
        description="chosen on the document sets (issues 9, 20): the chunks of each document the question names "
        "(or names a section of) that its own-pages list holds, the most relevant first (relevance.py), taken in "
        "turn across documents (issue 9, chunks by walk score: 1 lost answers in a named page's second or third "
        "section, 2 cost encyclopedia chunk recall, all let one named paper fill the top chunks; issue 20, chunks "
        "by relevance: 2 against 3 took answer_recall@5 from 79.3 to 82.9 pooled over the six sets, document "
        "recall unchanged)",
    )
    hop_chunks: int = Field(
        2,
        ge=1,
        description="chosen on the document sets (issue 20): the chunks of each page in a list of pages one or more "
        "hops out, the most relevant to that hop's step of the chain first, taken in turn across pages (before, "
        "every chunk by walk score; 1: answer_recall@5 81.7, 2: 82.9, 3: 81.7, all: 81.7, pooled over the six sets)",
    )
    pages_by_relevance: bool = Field(
        True,
        description="ours (issue 20): a page list takes each page's chunks most relevant to the question first "
        "(relevance.py; for a chain, to the step that page answers), not the chunks the walk scores highest, which "
        "are a page's opening chunks (its name and links): answer_recall@5 63.4 -> 73.2 alone",
    )
    relevance_weights: tuple[float, float] = Field(
        (1.0, 0.5),
        description="chosen on the document sets (issue 20): RRF weights, for a question anchored to a page, of two "
        "more lists: the chunks by relevance to the question (relevance.py) and, for a question Alg. 5 decomposes "
        "into a chain, by relevance to the chain's last step, whose page holds the answer. With the page lists by "
        "relevance, answer_recall@5 pooled over the six sets 73.2 (0, 0), 76.8 (1, 0.5), 82.9 (1, 1); 1 for the "
        "last step cost encyclopedia document recall (98.3 -> 96.7), and these lists for a question that is not "
        "anchored cost chunk recall on report and quarterly (83.8 -> 69.5, 78.9 -> 68.4) for answer_recall on "
        "papers (58.8 -> 76.5). Only chunks of documents of several chunks enter them (75.6 pooled; on "
        "passages they cost MuSiQue recall@5 1.6)",
    )
    relevance_dense_weight: float = Field(
        0.5,
        description="chosen on the document sets (issue 20): a chunk's relevance is this times its cosine's "
        "standard score plus its BM25 score's (relevance.py; 1.0: answer_recall@5 78.0 against 82.9 pooled, BM25 "
        "being the stronger of the two on these sets as on BEIR)",
    )
    push_epsilon: float = Field(
        1e-6,
        gt=0,
        description="ours (issue 21): the local push's tolerance (retrieval/push.py: every walk score within "
        "push_epsilon * degree of the exact one) on stores large enough to walk locally (Settings.local_walk_facts)",
    )
    specificity_scale: int = Field(
        1000,
        ge=2,
        description="ours (issue 9): the narrowing that counts as fully specific, in documents: an entity found in "
        "1 document of 1000 (or 10 of 10000) has specificity 1; 1 of 8 has 0.22, not the 0.68 that scaling by "
        "the store's own size gave (measured: musique-100 73.4 -> 74.2, the document sets' recall unchanged)",
    )


@dataclass
class WalkGraph:
    """The undirected weighted graph PPR walks, as a column-stochastic CSR matrix."""

    ids: list[str]
    index: Mapping[str, int]  # node id -> position (nodes on no walked edge, other than chunks, are not in it)
    is_chunk: np.ndarray  # bool per node
    transition: csr_matrix  # P[i, j] = probability of stepping j -> i
    dangling: np.ndarray  # nodes without edges
    chunk_count: np.ndarray  # per entity: chunks that mention it (0 for others)
    mentions: Mapping[str, Sequence[str]]  # chunk -> entities it mentions
    pages: dict[str, list[str]]  # entity -> chunks of its own pages (DESCRIBED_BY)
    page_chunks: dict[str, list[str]]  # document or section id -> its chunks (a section: its own, HAS_CHUNK)
    doc_count: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per entity: documents mentioning it
    documents: int = 0  # documents in the store


def walk_pairs(
    index: GraphIndex, described_by_weight: float = 2.0
) -> tuple[dict[tuple[str, str], float], dict[str, list[str]], dict[str, list[str]]]:
    """The walk graph's weighted node pairs (each walked both ways), the chunks' mentioned entities and the
    entities' page chunks, from the whole-graph index (:mod:`~stratagraph.retrieval.neighbourhood` reads the
    same pairs from the store around given nodes)."""
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    mentions: dict[str, list[str]] = defaultdict(list)
    pages: dict[str, list[str]] = defaultdict(list)
    for type_, src, dst, weight in index.edges_of(*sorted(WALKED)):
        pairs[(src, dst)] += weight if type_ == EdgeType.MENTIONS else 1.0
        if type_ == EdgeType.MENTIONS:
            mentions[src].append(dst)
    for _t, src, dst, _w in index.edges_of(EdgeType.DESCRIBED_BY):
        for cid in index.page_chunks(dst):
            pairs[(src, cid)] += described_by_weight
            pages[src].append(cid)
    return pairs, mentions, pages


def build_walk_graph(index: GraphIndex, described_by_weight: float = 2.0) -> WalkGraph:
    """The walk matrix over the shared index's chunk, entity and fact layers (no store read): the pairs of
    :func:`walk_pairs`, the same matrix entry for entry, built from the index's edge positions
    (:meth:`GraphIndex.edge_positions`, carried over from the last generation after a write) in array
    operations, not a loop over the pairs (BENCHMARKS.md, issue 21). Nodes are the chunks, then the entities,
    then the facts, each table in its own (sorted) order; an entity or fact on no walked edge is kept as an
    empty row and is not in ``index``, so no seed lands on it."""
    tables = {"chunks": index.chunks, "entities": index.entities, "facts": index.facts}
    offset = dict(zip(tables, np.cumsum([0, *(len(t) for t in tables.values())]).tolist(), strict=False))
    n = sum(len(t) for t in tables.values())
    parts = []
    for type_, (src, dst) in WALK_ENDS.items():
        r, c, w = index.edge_positions(type_, tables[src], tables[dst])
        parts.append((r + offset[src], c + offset[dst], w if type_ == EdgeType.MENTIONS else np.ones(len(r))))
    pages: dict[str, list[str]] = defaultdict(list)
    page_rows: list[int] = []
    page_cols: list[int] = []
    for e in index.edges.get(EdgeType.DESCRIBED_BY, ()):
        i = index.entities.pos.get(e.src)
        for cid in index.page_chunks(e.dst):
            pages[e.src].append(cid)
            if i is not None:
                page_rows.append(offset["entities"] + i)
                page_cols.append(index.chunks.pos[cid])
    parts.append((np.asarray(page_rows, dtype=np.int64), np.asarray(page_cols, dtype=np.int64), np.full(len(page_rows), described_by_weight)))
    rows, cols, weights = (np.concatenate(x) for x in zip(*parts, strict=True))
    transition, dangling = walk_matrix(rows, cols, weights, n)
    ids = [i for t in tables.values() for i in t.ids]
    on_edge = np.zeros(n, dtype=bool)
    on_edge[rows] = on_edge[cols] = True
    on_edge[: len(index.chunks)] = True  # every chunk is a node (HippoRAG's passage nodes)
    pos = WalkPositions([(t, offset[name]) for name, t in tables.items()], on_edge, ids)
    is_chunk = np.zeros(n, dtype=bool)
    is_chunk[: len(index.chunks)] = True
    # per entity: the distinct chunks and documents that mention it (MENTIONS edges are chunk -> entity)
    mentioning = index.chunk_entity.tocoo()
    chunk_count = np.zeros(n)
    chunk_count[offset["entities"] : offset["facts"]] = np.bincount(mentioning.col, minlength=len(index.entities))
    doc_of: dict[str, int] = {}
    chunk_doc = np.fromiter((doc_of.setdefault(document_of(c), len(doc_of)) for c in index.chunks.ids), dtype=np.int64, count=len(index.chunks))
    doc_entity = np.unique(chunk_doc[mentioning.row] * len(index.entities) + mentioning.col)  # distinct (document, entity)
    doc_count = np.zeros(n)
    doc_count[offset["entities"] : offset["facts"]] = np.bincount(doc_entity % max(len(index.entities), 1), minlength=len(index.entities))
    return WalkGraph(
        ids, pos, is_chunk, transition, dangling, chunk_count, ChunkMentions(index), dict(pages),
        {**index.doc_chunks, **index.section_chunks}, doc_count, len(index.documents),
    )


class WalkPositions(Mapping[str, int]):
    """Node id -> its position in the walk graph (the chunks, then the entities, then the facts, each table in
    its own order), for the nodes on a walked edge and every chunk; looked up in the index's own tables."""

    def __init__(self, tables: Sequence[tuple[NodeTable, int]], on_edge: np.ndarray, ids: Sequence[str]) -> None:
        self._tables, self._on_edge, self._ids = tables, on_edge, ids  # (table, its first position), per table

    def __getitem__(self, node_id: str) -> int:
        for table, offset in self._tables:
            i = table.pos.get(node_id)
            if i is not None and self._on_edge[offset + i]:
                return offset + i
        raise KeyError(node_id)

    def __iter__(self) -> Iterator[str]:
        return (self._ids[i] for i in np.flatnonzero(self._on_edge).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._on_edge))


class ChunkMentions(Mapping[str, Sequence[str]]):
    """Chunk id -> the entities it ``MENTIONS`` (each once), rows of the index's chunk-entity matrix read when
    asked."""

    def __init__(self, index: GraphIndex) -> None:
        m = index.chunk_entity
        self._chunks, self._rows, self._mentions = index.chunks, RowIds(m.indptr, m.indices, index.entities.ids), np.diff(m.indptr) > 0

    def __getitem__(self, chunk_id: str) -> Sequence[str]:
        i = self._chunks.pos[chunk_id]
        if not self._mentions[i]:
            raise KeyError(chunk_id)
        return self._rows[i]

    def __iter__(self) -> Iterator[str]:
        return (self._chunks.ids[i] for i in np.flatnonzero(self._mentions).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._mentions))


def walk_graph(ctx: RetrievalContext, params: PPRParams) -> WalkGraph:
    return ctx.cached(f"ppr_walk:{params.described_by_weight}", lambda: build_walk_graph(ctx.index(), params.described_by_weight))


def specificity(wg: WalkGraph, node: int) -> float:
    """HippoRAG's node specificity, softened: ``1 / log2(2 + |chunks mentioning it|)``."""
    return 1.0 / math.log2(2.0 + wg.chunk_count[node])


def seed_weights(
    ctx: RetrievalContext, wg: WalkGraph, links: QueryLinks, dense: Sequence[ScoredId], params: PPRParams
) -> dict[str, float]:
    """The personalisation vector (module docstring): entities, quoted pages' chunks, dense passages."""
    seeds: dict[str, float] = defaultdict(float)
    for ent in links.entities:
        i = wg.index.get(ent.entity_id)
        if i is not None:
            seeds[ent.entity_id] += ent.score * specificity(wg, i)
    for page in links.pages:
        cids = wg.page_chunks.get(page.node_id, [])
        for cid in cids:
            seeds[cid] += 1.0 / len(cids)
    for hit in dense[: params.dense_seeds]:
        if hit.id in wg.index:
            seeds[hit.id] += params.passage_weight * max(hit.score, 0.0)
    return dict(seeds)


def run_walk(wg: WalkGraph, seeds: Mapping[str, float], params: PPRParams) -> np.ndarray:
    """The one PageRank (:func:`~stratagraph.retrieval.index.personalized_pagerank`, HippoRAG eq. 1) from
    ``seeds`` over the walk graph."""
    reset = np.zeros(len(wg.ids), dtype=np.float32)
    for nid, w in seeds.items():
        if w > 0 and nid in wg.index:
            reset[wg.index[nid]] += w
    return personalized_pagerank(wg.transition, wg.dangling, reset, params.pagerank)


def walks_locally(ctx: RetrievalContext) -> bool:
    """Whether the walk runs by local push over the seeds' neighbourhood rather than over the whole-graph matrix:
    when ``Settings.local_walk_facts`` is set and the store has at least that many facts (counted once per
    generation)."""
    threshold = ctx.settings.local_walk_facts
    if threshold is None:
        return False
    return threshold == 0 or ctx.cached("fact_count", lambda: ctx.graph.counts().nodes.get("Fact", 0)) >= threshold


def local_walk(ctx: RetrievalContext, seeds: Mapping[str, float], params: PPRParams) -> dict[str, float]:
    """The walk by local push (:func:`~stratagraph.retrieval.push.local_pagerank`) over the graph read around the
    seeds from the store (:class:`~stratagraph.retrieval.neighbourhood.StoreWalk`; pages' chunks kept per generation)."""
    pages, described = ctx.cached("walk_pages", dict), ctx.cached("walk_described", dict)
    source = StoreWalk(ctx.graph, params.described_by_weight, pages, described)
    return local_pagerank(source, seeds, params.pagerank.damping, params.push_epsilon).scores


def walk_scores(ctx: RetrievalContext, wg: WalkGraph, seeds: Mapping[str, float], params: PPRParams) -> np.ndarray:
    """The walk's scores over ``wg``'s nodes: by power iteration over the whole-graph matrix, or by local push
    when :func:`walks_locally` (the two within ``push_epsilon * degree``)."""
    if not walks_locally(ctx):
        return run_walk(wg, seeds, params)
    scores = np.zeros(len(wg.ids), dtype=np.float64)
    for nid, s in local_walk(ctx, {n: w for n, w in seeds.items() if n in wg.index}, params).items():
        i = wg.index.get(nid)
        if i is not None:
            scores[i] = s
    return scores


def linked_pages(ctx: RetrievalContext, wg: WalkGraph, chunks: Iterable[str]) -> set[str]:
    """The chunks of the pages these chunks link to: the pages of the entities they ``MENTION`` and the
    pages whose title their text quotes. A chunk's links are read once per store generation (the quoted
    titles need its text) and kept."""
    chunks = set(chunks)
    memo: dict[str, frozenset[str]] = ctx.cached("ppr_links", dict)
    todo = sorted(c for c in chunks if c not in memo)
    for node in ctx.graph.get_nodes(todo):
        found: set[str] = set()
        for ent in wg.mentions.get(node.id, ()):
            found.update(wg.pages.get(ent, ()))
        quoted = quoted_pages(ctx, str(node.props.get("text") or ""), exclude_doc=str(node.props.get("doc_id")))
        for page in quoted:
            found.update(wg.page_chunks.get(page.node_id, ()))
        memo[node.id] = frozenset(found)
    out: set[str] = set()
    for cid in chunks:
        out |= memo.get(cid, frozenset())
    return out


def page_lists(
    ctx: RetrievalContext,
    wg: WalkGraph,
    links: QueryLinks,
    scores: np.ndarray,
    hops: int = 1,
    frontier_cap: int = 64,
) -> tuple[list[str], list[list[str]]]:
    """Every chunk of the question's own pages (quoted titles; pages of the entities it names exactly) and,
    for each hop ``1..hops``, of the pages first reached that many links out of them, each list ordered by
    PPR score. A hop after the first follows the links of the previous hop's best ``frontier_cap`` chunks
    only, so a hub page cannot make a query read most of a large store."""
    def by_score(ids: set[str]) -> list[str]:
        return sorted(ids, key=lambda c: (-round(float(scores[wg.index[c]]), 12), c))

    linked: set[str] = set()
    for page in links.pages:
        linked.update(wg.page_chunks.get(page.node_id, ()))
    for ent in links.entities:
        if ent.how == "exact":
            linked.update(wg.pages.get(ent.entity_id, ()))
    seen, frontier, out = set(linked), list(linked), []
    for hop in range(hops):
        reached = by_score(linked_pages(ctx, wg, frontier if hop == 0 else frontier[:frontier_cap]) - seen)
        seen.update(reached)
        out.append(reached)
        frontier = reached
    return by_score(linked), out


def hop_lists(
    ctx: RetrievalContext,
    wg: WalkGraph,
    links: QueryLinks,
    scores: np.ndarray,
    hops: int = 1,
    frontier_cap: int = 64,
    per_page: int = 3,
) -> tuple[list[str], list[list[str]]]:
    """:func:`page_lists` with the chunks ordered by PPR score: the best ``per_page`` chunks of each of the
    question's own pages (:func:`best_per_page`) and, for each hop, all the chunks of the pages it reached."""
    linked, out = page_lists(ctx, wg, links, scores, hops, frontier_cap)
    return best_per_page(linked, per_page), out


def best_per_page(chunks: list[str], per_page: int, order: Relevance | None = None) -> list[str]:
    """The best ``per_page`` chunks of each document, taken in turn (the best of each, then the second...):
    a list of the pages a question names gives each page a few entries, so that a question naming two
    multi-section papers gets passages of both at the top, not the whole of the first, and a page's
    lesser sections still come through the walk, BM25 and the traversal. Documents come in the order of
    their first chunk in ``chunks``; a document's chunks in that order too, or most relevant first by
    ``order``."""
    per_doc: dict[str, list[str]] = {}
    for c in chunks:
        per_doc.setdefault(document_of(c), []).append(c)
    queues = [(order.order(q) if order is not None else q)[:per_page] for q in per_doc.values()]
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]


def chain_steps(subs: Sequence[SubQuery]) -> list[SubQuery]:
    """The sub-questions a decomposition answers one after another, first step first: the longest path of
    ``depends_on`` ending at the final question (:func:`~stratagraph.retrieval.decompose.chain_length`'s path;
    the conjuncts of a comparison are not steps). "On which river does the hometown of X's founder lie?":
    X's founder, that founder's hometown, the river of that town."""
    by_target = {sq.target: sq for sq in subs}
    memo: dict[str, list[SubQuery]] = {}

    def path(target: str, seen: frozenset[str]) -> list[SubQuery]:
        if target in memo:
            return memo[target]
        sq = by_target.get(target)
        if sq is None or target in seen:
            return []
        before = max((path(d, seen | {target}) for d in sq.depends_on), key=len, default=[])
        memo[target] = [*before, *([sq] if sq.kind != "conjunct" else [])]
        return memo[target]

    final = next((sq for sq in reversed(subs) if sq.kind == "final"), subs[-1] if subs else None)
    return path(final.target, frozenset()) if final is not None else []


def anchored(wg: WalkGraph, links: QueryLinks) -> bool:
    """Whether the question names a page: quotes a document's or section's title, or names exactly an entity
    that has a page of its own (``DESCRIBED_BY``)."""
    return bool(links.pages) or any(e.how == "exact" and e.entity_id in wg.pages for e in links.entities)


def fusion_weights(wg: WalkGraph, links: QueryLinks, params: PPRParams) -> list[float]:
    """The RRF weights of (walk, dense, BM25, own pages, one hop out, traversal) for this question.

    A question anchored to a page (:func:`anchored`) gets ``params.fuse_weights``: the graph is where its
    answer lies. Any other question is ranked by the text lists, dense and BM25 as in ``rrf``, with the walk
    and the traversal weighted by the document specificity ``s`` of the entities it names (cubed), the
    dense list by ``1 - s``: entities found in few documents of a large store steer the walk to their
    passages (MuSiQue's unpaged names), entities of a small store or found everywhere ("FY2026" in a budget,
    the company in its own reports) do not, and the ranking is then ``rrf``'s.
    """
    weights = list(params.fuse_weights)
    if not params.anchored_only or anchored(wg, links):
        return weights
    s = document_specificity(wg, links, params.specificity_scale) ** params.specificity_power
    return [weights[0] * s, 1.0 - s, weights[2], 0.0, 0.0, weights[5] * s]


def document_specificity(wg: WalkGraph, links: QueryLinks, scale: int) -> float:
    """How few documents the entities the question names exactly appear in, in [0, 1]: the largest
    ``ln((D + 1) / (df + 1)) / ln(scale)`` over them, capped at 1 (``df`` the documents mentioning it, ``D``
    all documents): how far the name narrows the store, against narrowing ``scale`` documents to one. In a
    store of a few documents no name narrows much, whatever share of them it is found in. 0 for a store of
    one document, or when the question names no entity."""
    if wg.documents < 2:
        return 0.0
    best = 0.0
    for ent in links.entities:
        i = wg.index.get(ent.entity_id)
        if ent.how == "exact" and i is not None and wg.doc_count[i] > 0:
            best = max(best, min(1.0, math.log((wg.documents + 1) / (wg.doc_count[i] + 1)) / math.log(scale)))
    return best


def rank_chunks(wg: WalkGraph, scores: np.ndarray, allowed: set[str] | None, limit: int) -> list[ScoredId]:
    """Chunks by PPR score (rounded so float noise cannot reorder ties), score desc then id asc."""
    cand = np.flatnonzero(wg.is_chunk & (scores > 0))
    if allowed is not None:
        cand = np.array([i for i in cand if document_of(wg.ids[i]) in allowed], dtype=np.int64)
    return [ScoredId.model_construct(id=nid, score=s) for nid, s in rank_positions(scores, cand, wg.ids, limit)]


def _several(wg: WalkGraph, chunks: list[str]) -> list[str]:
    """The chunks that belong to a document of more than one chunk."""
    return [c for c in chunks if len(wg.page_chunks.get(document_of(c), ())) > 1]


def _within(chunks: list[str], allowed: set[str]) -> list[str]:
    return [c for c in chunks if document_of(c) in allowed]


def retrieve(
    ctx: RetrievalContext,
    query: str,
    k: int = 10,
    filters: Filters | None = None,
    params: PPRParams | None = None,
) -> RetrievalResult:
    params = params or PPRParams()
    depth = max(params.depth, k)
    wg = walk_graph(ctx, params)
    dense = ctx.chunk_scores(query, depth, filters)
    sparse = bm25(ctx, query, depth, filters)
    links = link_query(ctx, query)
    seeds = seed_weights(ctx, wg, links, dense, params)
    scores = walk_scores(ctx, wg, seeds, params)
    allowed = ctx.allowed_docs(filters)
    walk = rank_chunks(wg, scores, allowed, depth)
    walked = traverse(ctx, query, filters, links=links) if params.fuse_weights[5] else None
    subs = walked.sub_queries if walked is not None else decompose(ctx, query)
    hops = min(max(chain_length(subs) - 1, 1), params.max_page_hops)
    linked, outs = page_lists(ctx, wg, links, scores, hops)
    if allowed is not None:  # a filtered-out page takes no rank from one the filter keeps
        linked, outs = _within(linked, allowed), [_within(out, allowed) for out in outs]
    # each list's chunks by relevance to the step of the chain its pages answer: the question's own pages the
    # first step, the pages h hops out step h + 1 (the last step for any further hop); a question that is not
    # a chain has one step, itself
    steps = [sq.render() or query for sq in chain_steps(subs)] if chain_length(subs) > 1 else []
    texts = list(dict.fromkeys([query, *steps]))
    weights = fusion_weights(wg, links, params)
    # the relevance lists serve a question anchored to a page (the graph regime); any other is ranked as before
    graph_regime = not params.anchored_only or anchored(wg, links)
    relevance_weights = params.relevance_weights if graph_regime else (0.0, 0.0)
    use_relevance = (params.pages_by_relevance and bool(linked)) or any(relevance_weights)
    rel = relevance(ctx, texts, [*linked, *(c for out in outs for c in out)], depth=depth,
                    dense_weight=params.relevance_dense_weight, filters=filters, dense=dense) if use_relevance else []  # fmt: skip
    by_text = dict(zip(texts, rel, strict=False))

    def step(n: int) -> Relevance | None:
        if not params.pages_by_relevance:
            return None
        return by_text.get(steps[min(n, len(steps) - 1)] if steps else query)

    linked = best_per_page(linked, params.page_chunks, step(0))
    outs = [best_per_page(out, params.hop_chunks, step(hop)) if params.pages_by_relevance else out
            for hop, out in enumerate(outs, start=1)]  # fmt: skip
    # the relevance lists pick the chunk of a document that answers; a document of one chunk (a passage) has
    # none to pick, and for it they would only count the dense and BM25 scores again, which the walk already
    # holds (issue 9: a dense list of its own cost MuSiQue 2 points; these lists on passages cost it 1.6)
    relevant = _several(wg, by_text[query].ranking(depth, allowed)) if by_text and relevance_weights[0] else []
    last = _several(wg, by_text[steps[-1]].ranking(depth, allowed)) if steps and by_text and relevance_weights[1] else []
    chains = [h.id for h in walked.graph] if walked is not None else []
    fused = rrf(
        [[h.id for h in walk], [h.id for h in dense], [h.id for h in sparse], linked, outs[0], chains, *outs[1:],
         relevant, last],
        k=params.rrf_k,
        weights=[*weights, *[weights[4]] * (len(outs) - 1), *relevance_weights],
    )
    via = defaultdict(list)
    named = [("ppr", [h.id for h in walk]), ("page", linked), ("out_link", outs[0]), ("traversal", chains)]
    named += [(f"out_link_{hop}", out) for hop, out in enumerate(outs[1:], start=2)]
    named += [("relevance", relevant[:k]), ("last_step", last[:k])]
    for name, hits in named:
        for cid in hits:
            via[cid].append(name)
    items = [Scored(id=f.id, score=f.score, via=via.get(f.id, [])) for f in fused]
    return RetrievalResult(
        strategy="ppr",
        query=query,
        k=k,
        evidence=ctx.evidence(items, k, filters),
        context={
            "seeds": {nid: round(w, 6) for nid, w in sorted(seeds.items())},
            "links": describe(links),
            "ppr_top": [{"id": h.id, "score": h.score} for h in walk[:k]],
            "pages": linked[:k],
            "out_links": outs[0][:k],
            "out_links_further": [out[:k] for out in outs[1:]],
            "traversal_top": [{"id": h.id, "score": round(h.score, 6)} for h in (walked.graph if walked else [])[:k]],
            "weights": [round(w, 4) for w in weights],
            "relevant": relevant[:k],
            "last_step": {"text": steps[-1], "top": last[:k]} if steps and last else None,
            "anchored": anchored(wg, links),
        },
    )

"""``traversal``: BiG-RAG's algorithmic mode (§4.3): classify the question (Algorithm 3, :mod:`.classify`),
decompose it (Algorithm 5, :mod:`.decompose`), answer each sub-question by adaptive multi-hop traversal of the
entity-fact bipartite graph (Algorithm 4, :func:`expand`), and rank the chunks that support the facts found,
fused with the dense chunk ranking by reciprocal rank fusion (§4.2.3, k = 60) so that chunks outside the graph
stay reachable.

Algorithm 4 (:func:`expand`) walks ``Entity -IN_FACT-> Fact`` edges held in an in-memory CSR index
(:class:`BipartiteIndex`, four batched reads, built once per graph generation with ``ctx.cached``):

* ``R_0`` (hop 0): the facts of the seed entities (the entity path ``F_E``, §4.2.1 step 3), plus any initial
  facts (the facts of a page the question quotes, or, when a sub-question links nothing at all, the relation
  path of §4.2.2: its top-K facts by ``sim(q, r)·conf(r)``);
* hops ``1..H``: from each frontier entity to its facts not yet visited (lines 12-20); every new fact carries
  ``edge_deg = deg(e) + deg(r)`` (line 18) and ``weight = conf(r)·|chunks(r)|`` (line 19, how often the
  knowledge occurs); each hop's new facts are ranked before they are added (line 30);
* stop after H hops, once K facts are collected, or when the frontier is empty (line 7, "Adaptive Stopping");
  return the top K (line 41). H and K are the class's parameters (§4.3.4 table; per sub-question for COMPLEX).

What the paper leaves open, fixed here:

* Score: ``score(r) = w(seed) · λ^hop · sim(q, r) · conf(r)``, the query-relation weight of §4.2.2 (cosine of
  the sub-question and the fact description times extraction confidence), scaled by the link weight of the
  seed it was reached from and decaying with hop distance (λ = :attr:`TraversalSettings.hop_decay`). Facts rank by score, then
  by the paper's structural key (``edge_deg``, then ``weight``), then id. Ranking by degree first, as line 30
  reads, would send every walk through hubs (nationalities named in a thousand facts): the topic drift the
  paper means to avoid. Without a query (``relevance=None``) ``sim`` is 1.
* Frontier: the entities of the hop's best ``fan_out`` (default K) facts, not of all of them, so a hub
  reached in one step cannot flood the next hop; a hop keeps its best :attr:`TraversalSettings.hop_beam` facts (never fewer
  than K, so the final top K is exact) while every new fact counts toward K.
* Sequential execution (§4.3.3): sub-questions run in order. Entities and quoted pages are linked once for the
  whole question (:func:`query_linking.link_query`: exact names and aliases, page titles; not embedding
  neighbours, which drift on a walk) and each goes to the sub-question whose text holds its mention
  (:func:`assign_seeds`). A sub-question starts from its entities, the entities its quoted pages describe
  (``DESCRIBED_BY``) and the answers bound to the variables in its text (ReplaceVariables); a quoted page's
  facts join its R_0. The best bound answer seeds the next sub-question at weight 1, as a name written in
  its text would, the others in proportion (:func:`replace_variables`). ``ExtractAnswer`` is the paper's
  "simple heuristic" option (:func:`extract_answers`): the entities of the top facts that the sub-question
  did not start from, scored ``score(r)·specificity(e)`` (``log(N/deg(e))/log(N)``: a hub is rarely the
  answer), weighed down when the sub-question asks for a person, place or organisation and the entity's
  type says otherwise ("What is the birthplace of X?" binds the town X was born in, not the company X
  founded), the best :attr:`TraversalSettings.answer_candidates` within
  :attr:`TraversalSettings.answer_ratio` of the first.

Chunks (:func:`chunk_ranking`): a quoted page's chunks score 1, a seed's own page (``DESCRIBED_BY`` ->
Document/Section -> chunks) its seed weight, and a fact's supporting chunks (``SUPPORTED_BY``) the fact's
score, best over sub-questions. Metadata filters hide facts, pages and dense hits of other documents.
``context`` carries the classification, the sub-questions, and per sub-question its seeds, pages, bindings
and trace (facts per hop).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, Scored, ranked
from stratagraph.retrieval.classify import Classification, TraversalParams, classify
from stratagraph.retrieval.decompose import SubQuery, decompose
from stratagraph.retrieval.dual_path import fuse_rankings
from stratagraph.retrieval.index import GraphIndex
from stratagraph.retrieval.query_linking import QueryLinks, link_query
from stratagraph.retrieval.table_vectors import table_vectors
from stratagraph.schema import WEAK_TYPES, EdgeType
from stratagraph.text.question import LABEL_ALIASES, expected_labels


class TraversalSettings(BaseModel):
    """What Algorithm 4 and ExtractAnswer leave open (the per-class H and K are the paper's, classify.py)."""

    hop_decay: float = Field(0.5, description="ours: lambda, a fact one hop further from the seeds scores this much less")
    hop_beam: int = Field(100, description="ours: most facts kept per hop in the trace (never fewer than K)")
    answer_candidates: int = Field(3, description="ours: candidates ExtractAnswer (§4.3.3) binds to a variable")
    answer_ratio: float = Field(0.5, description="ours: ...that score at least this share of the best candidate")
    dense_depth: int = Field(50, description="ours: how deep the dense list fused with the graph list is read")


SETTINGS = TraversalSettings()
FACT_COLLECTION = "facts"


# ------------------------------------------------------------------------------------------ the index


@dataclass(frozen=True)
class BipartiteIndex:
    """The entity-fact bipartite graph (BiG-RAG Algorithm 2's ``G_B``) as CSR arrays, plus what maps facts
    and entities to chunks. Entity and fact positions follow sorted ids."""

    entity_ids: list[str]
    entity_pos: dict[str, int]
    fact_ids: list[str]
    fact_pos: dict[str, int]
    e2f_ptr: np.ndarray  # facts of entity i: e2f[e2f_ptr[i]:e2f_ptr[i+1]]
    e2f: np.ndarray
    f2e_ptr: np.ndarray  # entities of fact j: f2e[f2e_ptr[j]:f2e_ptr[j+1]]
    f2e: np.ndarray
    fact_conf: np.ndarray
    fact_weight: np.ndarray  # conf(r) · |chunks(r)|, Algorithm 4 line 19
    fact_chunks: Sequence[tuple[str, ...]]  # per fact, its distinct supporting chunks (ids ascending)
    entity_pages: dict[int, tuple[str, ...]]  # the chunks of the entity's own page(s)
    chunk_doc: dict[str, str]
    page_chunks: dict[str, tuple[str, ...]]  # Document/Section id -> its chunks
    page_entities: dict[str, tuple[int, ...]]  # Document/Section id -> the entities it describes
    chunk_facts: dict[str, tuple[int, ...]]  # chunk -> the facts it supports
    entity_type: dict[int, str] = field(default_factory=dict)  # the entity's type (a tagger label, or an LLM's), when known

    @property
    def entity_degree(self) -> np.ndarray:
        return np.diff(self.e2f_ptr)

    @property
    def fact_degree(self) -> np.ndarray:
        return np.diff(self.f2e_ptr)

    def facts_of(self, entity: int) -> np.ndarray:
        return self.e2f[self.e2f_ptr[entity] : self.e2f_ptr[entity + 1]]

    def entities_of(self, fact: int) -> np.ndarray:
        return self.f2e[self.f2e_ptr[fact] : self.f2e_ptr[fact + 1]]

    def specificity(self, entity: int) -> float:
        """``log(N/deg) / log(N)`` in [0, 1]: 1 for an entity in one fact, low for a hub."""
        n = max(len(self.fact_ids), 2)
        deg = max(int(self.e2f_ptr[entity + 1] - self.e2f_ptr[entity]), 1)
        return max(math.log(n / deg), 0.0) / math.log(n)

    @classmethod
    def from_index(cls, ix: GraphIndex) -> BipartiteIndex:
        """The bipartite layer of the shared :class:`~stratagraph.retrieval.index.GraphIndex` as CSR arrays
        (array operations over the index's edge positions; the entities are those in a fact or with a page)."""
        ent, fact, _ = ix.edge_positions(EdgeType.IN_FACT, ix.entities, ix.facts)
        sup_fact, sup_chunk, _ = ix.edge_positions(EdgeType.SUPPORTED_BY, ix.facts, ix.chunks)
        described: dict[int, set[str]] = {}  # entity table position -> its pages' chunks
        describes: dict[str, set[int]] = {}
        for e in ix.edges.get(EdgeType.DESCRIBED_BY, ()):
            i = ix.entities.pos.get(e.src)
            if i is not None:
                described.setdefault(i, set()).update(ix.page_chunks(e.dst))
                describes.setdefault(e.dst, set()).add(i)
        kept = np.zeros(len(ix.entities), dtype=bool)
        kept[ent] = True
        kept[list(described)] = True
        table_pos = np.flatnonzero(kept)
        new_pos = np.cumsum(kept) - 1  # entity table position -> position here
        entity_ids = [ix.entities.ids[i] for i in table_pos.tolist()]
        rows = new_pos[ent]
        e2f_ptr, e2f = _csr(rows, fact, len(entity_ids))
        f2e_ptr, f2e = _csr(fact, rows, len(ix.facts))
        s2c_ptr, s2c = _csr(sup_fact, sup_chunk, len(ix.facts))  # each fact's distinct chunks, ascending
        c2f_ptr, c2f = _csr(sup_chunk, sup_fact, len(ix.chunks))
        chunk_ids = ix.chunks.ids
        conf = np.array(ix.fact_confidence, dtype=np.float64)
        types = ix.entity_type
        return cls(
            entity_ids=entity_ids,
            entity_pos=dict(zip(entity_ids, range(len(entity_ids)))),
            fact_ids=ix.facts.ids,
            fact_pos=ix.facts.pos,
            e2f_ptr=e2f_ptr,
            e2f=e2f,
            f2e_ptr=f2e_ptr,
            f2e=f2e,
            fact_conf=conf,
            fact_weight=conf * np.maximum(np.diff(s2c_ptr), 1),
            fact_chunks=RowIds(s2c_ptr, s2c, chunk_ids),
            entity_pages={int(new_pos[i]): tuple(sorted(p)) for i, p in described.items() if p},
            chunk_doc=dict(zip(chunk_ids, ix.chunk_doc, strict=True)),
            page_chunks={**ix.doc_chunks, **ix.section_chunks},
            page_entities={p: tuple(sorted(int(new_pos[i]) for i in es)) for p, es in describes.items()},
            chunk_facts={chunk_ids[c]: tuple(c2f[c2f_ptr[c] : c2f_ptr[c + 1]].tolist()) for c in np.flatnonzero(np.diff(c2f_ptr)).tolist()},
            entity_type={int(new_pos[i]): types[i] for i in table_pos.tolist() if types[i]},
        )


def _csr(rows: np.ndarray, cols: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row pointers and column indices of the (deduplicated) pairs, columns ascending within a row."""
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    if len(rows):
        width = int(cols.max()) + 1
        pairs = rows * width + cols
        if np.any(pairs[1:] < pairs[:-1]):  # edges in canonical order come sorted by their source already
            pairs = np.sort(pairs)
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]  # sorted by row, then column, once each
        rows, cols = pairs // width, pairs % width
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.bincount(rows, minlength=n))
    return ptr, cols


class RowIds(Sequence[tuple[str, ...]]):
    """Row ``i`` of a CSR pattern as the ids of its columns, made when asked (a store's facts are many; a
    query reads the rows of a few)."""

    def __init__(self, ptr: np.ndarray, cols: np.ndarray, ids: Sequence[str]) -> None:
        self._ptr, self._cols, self._ids = ptr, cols, ids

    def __len__(self) -> int:
        return len(self._ptr) - 1

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return tuple(self._ids[c] for c in self._cols[self._ptr[i] : self._ptr[i + 1]].tolist())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def load_index(ctx: RetrievalContext) -> BipartiteIndex:
    """The store's :class:`BipartiteIndex`, built once per graph generation."""
    return ctx.cached("traversal:index", lambda: BipartiteIndex.from_index(ctx.index()))


def fact_vectors(ctx: RetrievalContext, index: BipartiteIndex) -> np.ndarray:
    """Unit fact-description embeddings in ``index.fact_ids`` order (the graph index's fact table; zeros for a
    fact without a vector), carried across generations (:mod:`~stratagraph.retrieval.table_vectors`)."""
    return table_vectors(ctx, FACT_COLLECTION, "facts")


class FactRelevance:
    """``sim(q, r) · conf(r)`` (§4.2.2's relation score; a negative cosine counts as 0), computed only for the
    facts a traversal touches (a hub can touch thousands; the whole store is rarely needed)."""

    def __init__(self, index: BipartiteIndex, vectors: np.ndarray, query_vector: np.ndarray | None) -> None:
        self.index = index
        self.vectors = vectors
        q = None if query_vector is None else np.asarray(query_vector, dtype=np.float32).reshape(-1)
        norm = 0.0 if q is None else float(np.linalg.norm(q))
        usable = q is not None and norm > 0 and vectors.ndim == 2 and vectors.shape[1] == q.shape[0]
        self.query = q / norm if usable and q is not None else None
        self._values = np.full(len(index.fact_ids), np.nan)

    def __call__(self, facts: np.ndarray) -> np.ndarray:
        facts = np.asarray(facts, dtype=np.int64)
        if self.query is None:
            return self.index.fact_conf[facts]
        missing = facts[np.isnan(self._values[facts])]
        if len(missing):
            sims = self.vectors[missing] @ self.query
            self._values[missing] = np.clip(sims.astype(np.float64), 0.0, None) * self.index.fact_conf[missing]
        return self._values[facts]


Relevance = FactRelevance | np.ndarray


def _relevance_of(rel: Relevance | None, index: BipartiteIndex, facts: np.ndarray) -> np.ndarray:
    if rel is None:
        return index.fact_conf[facts]
    if isinstance(rel, np.ndarray):
        return rel[facts]
    return rel(facts)


# ------------------------------------------------------------------------------------------ Algorithm 4


class FactHit(BaseModel):
    fact_id: str
    hop: int
    via: str | None  # the frontier entity the fact was reached from (None: relation path)
    score: float
    edge_degree: int  # deg(e) + deg(r), Algorithm 4 line 18
    weight: float  # conf(r) · |chunks(r)|, line 19
    relevance: float  # sim(q, r) · conf(r)


class HopTrace(BaseModel):
    hop: int
    frontier: list[str] = Field(default_factory=list)  # entities expanded at this hop
    new_facts: int = 0  # facts first reached at this hop (all of them count toward K)
    facts: list[FactHit] = Field(default_factory=list)  # the best of them, ranked (line 30)


class TraversalTrace(BaseModel):
    seeds: dict[str, float] = Field(default_factory=dict)
    params: TraversalParams
    hops: list[HopTrace] = Field(default_factory=list)
    ranked: list[FactHit] = Field(default_factory=list)  # the top K over all hops (line 41)
    stopped: str = ""

    def hop_of(self, fact_id: str) -> int | None:
        for h in self.hops:
            if any(f.fact_id == fact_id for f in h.facts):
                return h.hop
        return None

    def facts_at(self, hop: int) -> list[str]:
        return [f.fact_id for h in self.hops if h.hop == hop for f in h.facts]


def _rank(hits: list[FactHit]) -> list[FactHit]:
    return sorted(hits, key=lambda h: (-round(h.score, 12), -h.edge_degree, -round(h.weight, 12), h.fact_id))


def expand(
    index: BipartiteIndex,
    seeds: Mapping[str, float],
    params: TraversalParams,
    relevance: Relevance | None = None,
    initial: Mapping[str, float] | None = None,
    allowed_facts: np.ndarray | None = None,
    decay: float = SETTINGS.hop_decay,
    fan_out: int | None = None,
) -> TraversalTrace:
    """Algorithm 4 from seed entities (``{entity_id: weight}``) and/or initial facts (``{fact_id: weight}``,
    the relation path), with H = ``params.max_hops`` and K = ``params.target_relations``. ``relevance`` is
    ``sim(q, r)·conf(r)`` per fact (:class:`FactRelevance` or an array); None ranks by confidence alone.
    ``allowed_facts`` (bool per fact) hides facts of filtered-out documents."""
    k = params.target_relations
    fan = fan_out or k
    beam = max(SETTINGS.hop_beam, k)
    f_deg = index.fact_degree
    seen_facts = np.zeros(len(index.fact_ids), dtype=bool)
    if allowed_facts is not None:
        seen_facts |= ~allowed_facts  # a hidden fact is never reached
    seed_w = {index.entity_pos[e]: float(w) for e, w in seeds.items() if e in index.entity_pos and w > 0}
    trace = TraversalTrace(seeds={index.entity_ids[e]: w for e, w in sorted(seed_w.items())}, params=params)
    visited = set(seed_w)
    frontier = dict(seed_w)
    collected: list[FactHit] = []
    total = 0
    # relation-path facts join R_0 (hop 0); their entities join the hop-1 frontier
    start_hits: list[FactHit] = []
    for fid, w in sorted((initial or {}).items()):
        j = index.fact_pos.get(fid)
        if j is None or seen_facts[j] or w <= 0:
            continue
        seen_facts[j] = True
        r = float(_relevance_of(relevance, index, np.array([j]))[0])
        start_hits.append(_hit(index, j, None, 0, float(w) * r, int(f_deg[j]), r))
    hop = 0
    while hop <= params.max_hops and total < k:
        new, reached = _step(index, frontier, hop, relevance, seen_facts, decay, beam)
        if hop == 0:
            new = _rank(new + start_hits)
            reached += len(start_hits)
        if not new and not frontier:
            trace.stopped = "frontier exhausted"
            break
        total += reached
        kept = new[:beam]
        trace.hops.append(
            HopTrace(hop=hop, frontier=[index.entity_ids[e] for e in _order(frontier)], new_facts=reached, facts=kept)
        )
        collected.extend(kept)
        frontier = _next_frontier(index, kept[:fan], frontier, visited)
        hop += 1
        if not frontier:
            trace.stopped = "frontier exhausted"
            break
    if not trace.stopped:
        trace.stopped = "target reached" if total >= k else "max hops"
    trace.ranked = _rank(collected)[:k]
    return trace


def _order(frontier: Mapping[int, float]) -> list[int]:
    return sorted(frontier, key=lambda e: (-frontier[e], e))


def _hit(index: BipartiteIndex, j: int, via: int | None, hop: int, score: float, edge_deg: int, rel: float) -> FactHit:
    return FactHit(
        fact_id=index.fact_ids[j],
        hop=hop,
        via=index.entity_ids[via] if via is not None else None,
        score=float(score),
        edge_degree=int(edge_deg),
        weight=float(index.fact_weight[j]),
        relevance=float(rel),
    )


def _step(
    index: BipartiteIndex,
    frontier: Mapping[int, float],
    hop: int,
    relevance: Relevance | None,
    seen: np.ndarray,
    decay: float,
    beam: int,
) -> tuple[list[FactHit], int]:
    """Lines 12-20 for one hop: the facts of the frontier not yet visited (each credited to the first
    frontier entity, strongest first, that reaches it), ranked (line 30); returns the best ``beam`` of them
    and how many there were."""
    if not frontier:
        return [], 0
    parts = [(index.facts_of(e), e) for e in _order(frontier)]
    parts = [(fs, e) for fs, e in parts if len(fs)]
    if not parts:
        return [], 0
    facts = np.concatenate([fs for fs, _ in parts])
    via = np.concatenate([np.full(len(fs), e, dtype=np.int64) for fs, e in parts])
    weights = np.concatenate([np.full(len(fs), frontier[e], dtype=np.float64) for fs, e in parts])
    fresh = ~seen[facts]
    facts, via, weights = facts[fresh], via[fresh], weights[fresh]
    facts, first = np.unique(facts, return_index=True)  # first occurrence: the strongest frontier entity
    via, weights = via[first], weights[first]
    if not len(facts):
        return [], 0
    seen[facts] = True
    rel = _relevance_of(relevance, index, facts)
    scores = weights * (decay**hop) * rel
    edge_deg = index.entity_degree[via] + index.fact_degree[facts]
    # score, then edge degree (line 18), then weight (line 19), then id (positions follow sorted ids)
    order_idx = np.lexsort((facts, -np.round(index.fact_weight[facts], 12), -edge_deg, -np.round(scores, 12)))
    hits = [
        _hit(index, int(facts[i]), int(via[i]), hop, float(scores[i]), int(edge_deg[i]), float(rel[i]))
        for i in order_idx[:beam]
    ]
    return hits, len(facts)


def _next_frontier(
    index: BipartiteIndex, best: Sequence[FactHit], frontier: Mapping[int, float], visited: set[int]
) -> dict[int, float]:
    """Lines 22-27: the not-yet-visited entities of the hop's best facts, each inheriting the weight of the
    entity it was reached from (the seed's link weight)."""
    nxt: dict[int, float] = {}
    for hit in best:
        j = index.fact_pos[hit.fact_id]
        w = frontier.get(index.entity_pos[hit.via], 0.0) if hit.via is not None else 1.0
        for e in index.entities_of(j):
            e = int(e)
            if e in visited:
                continue
            nxt[e] = max(nxt.get(e, 0.0), w)
    visited.update(nxt)
    return nxt


# ------------------------------------------------------------------------------------------ sequential execution


class Seeds(BaseModel):
    """Where one sub-question starts: linked entities (``{entity_id: weight}``) and quoted pages."""

    entities: dict[str, float] = Field(default_factory=dict)
    pages: list[str] = Field(default_factory=list)  # Document/Section ids


class SubQueryRun(BaseModel):
    """One sub-question's execution: its seeds, the traversal and the answer candidates it bound."""

    sub_query: SubQuery
    seeds: dict[str, float] = Field(default_factory=dict)  # entities, own and bound
    pages: list[str] = Field(default_factory=list)
    start: str = "entities"  # "entities", "pages" or "relations" (nothing linked: relation path)
    trace: TraversalTrace
    bindings: dict[str, float] = Field(default_factory=dict)


def _inside(short: str, long: str) -> bool:
    return short != long and short in long


def trusted_links(index: BipartiteIndex, links: QueryLinks) -> QueryLinks:
    """The links a traversal starts from: an embedding neighbour of a mention that also has an exact name
    match is dropped (the exact name is the entity meant), and so is an entity named by a word inside a
    quoted page title unless that page describes it ("Film" inside "Blue Harbor (Film)")."""
    exact = [e.mention.lower() for e in links.entities if e.how == "exact"]
    page_mentions = [(p.mention.lower(), p.node_id) for p in links.pages]
    kept = []
    for e in links.entities:
        m = e.mention.lower()
        if e.how == "similar" and any(m in x or x in m for x in exact):
            continue
        pos = index.entity_pos.get(e.entity_id)
        inside = [node for pm, node in page_mentions if _inside(m, pm)]
        if inside and not any(pos is not None and pos in index.page_entities.get(node, ()) for node in inside):
            continue
        kept.append(e)
    return QueryLinks(mentions=links.mentions, entities=kept, pages=links.pages)


def assign_seeds(links: QueryLinks, subs: Sequence[SubQuery]) -> list[Seeds]:
    """Each linked entity and quoted page goes to every sub-question whose text contains its mention
    (case-insensitive); one found in none goes to the first sub-question (the innermost)."""
    out = [Seeds() for _ in subs]

    def homes(mention: str) -> list[int]:
        m = mention.lower()
        found = [i for i, sq in enumerate(subs) if m and m in sq.text.lower()]
        return found or ([0] if subs else [])

    for ent in links.entities:
        for i in homes(ent.mention):
            out[i].entities[ent.entity_id] = max(out[i].entities.get(ent.entity_id, 0.0), ent.score)
    for page in links.pages:
        for i in homes(page.mention):
            if page.node_id not in out[i].pages:
                out[i].pages.append(page.node_id)
    return out


#: ExtractAnswer's weight of a candidate the tagger gave no label (an unlabelled name) and of one whose label
#: is not of the type the sub-question asks for (ours; 0.8 / 0.5 measured against 1 / 0.3 and 0.6 / 0: the
#: same recall@5 on the shared sets, hit@1 on the encyclopedia set kept; BENCHMARKS.md, issue 9)
TYPE_UNKNOWN = 0.8
TYPE_MISMATCH = 0.5


def _type_weight(entity_type: str, expected: frozenset[str]) -> float:
    """1 for an entity whose type is one of the ``expected`` labels (an LLM extractor's LOCATION read as
    LOC), :data:`TYPE_UNKNOWN` for a type that says nothing (none, an unlabelled name, a line item),
    :data:`TYPE_MISMATCH` for another type."""
    t = entity_type.upper()
    if not t or t in WEAK_TYPES:
        return TYPE_UNKNOWN
    return 1.0 if LABEL_ALIASES.get(t, t) in expected else TYPE_MISMATCH


def extract_answers(
    index: BipartiteIndex,
    trace: TraversalTrace,
    exclude: Iterable[str],
    limit: int = SETTINGS.answer_candidates,
    ratio: float | None = None,
    expected: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """ExtractAnswer (§4.3.3, "simple heuristic"): entities of the top facts other than the ones the
    sub-question starts from, scored ``score(r) · specificity(e)``, times :func:`_type_weight` when the
    sub-question asks for a person, place or organisation (``expected``, its labels); the best ``limit`` that
    score at least ``ratio`` times the best one."""
    ratio = SETTINGS.answer_ratio if ratio is None else ratio
    skip = set(exclude)
    cands: dict[str, float] = {}
    for hit in trace.ranked:
        for e in index.entities_of(index.fact_pos[hit.fact_id]):
            eid = index.entity_ids[int(e)]
            if eid in skip:
                continue
            s = hit.score * index.specificity(int(e))
            if expected:
                s *= _type_weight(index.entity_type.get(int(e), ""), expected)
            if s > cands.get(eid, 0.0):
                cands[eid] = s
    best = ranked(cands, limit)
    return {c.id: c.score for c in best if best and c.score >= ratio * best[0].score}


def _page_facts(index: BipartiteIndex, pages: Iterable[str]) -> dict[str, float]:
    return {
        index.fact_ids[j]: 1.0
        for p in pages
        for c in index.page_chunks.get(p, ())
        for j in index.chunk_facts.get(c, ())
    }


def replace_variables(bound: Mapping[str, float]) -> dict[str, float]:
    """ReplaceVariables (§4.3.3) as seed weights: the paper writes a sub-question's answer into the next
    one and retrieves afresh, so the best bound answer seeds it at weight 1, as a name written in its text
    would, and the other candidates in proportion to their score (``{a: 0.4, b: 0.2}`` -> ``{a: 1, b:
    0.5}``). Seeding with the raw answer scores, products of small numbers, put every later hop's evidence
    below the first hop's (BENCHMARKS.md, issue 9)."""
    top = max(bound.values(), default=0.0)
    return {e: w / top for e, w in bound.items()} if top > 0 else dict(bound)


def run_sub_queries(
    index: BipartiteIndex,
    subs: Sequence[SubQuery],
    seeds: Sequence[Seeds],
    params: TraversalParams,
    relevances: Sequence[Relevance | None],
    allowed_facts: np.ndarray | None = None,
) -> list[SubQueryRun]:
    """Sequential execution (§4.3.3). A sub-question starts from its linked entities, the entities its
    quoted pages describe and the bindings of the variables in its text (ReplaceVariables: the best at
    weight 1, the others relative to it); its R_0 also holds the facts of the quoted pages' chunks. With
    nothing linked it starts from its top-K relations (the relation path, §4.2.2)."""
    bindings: dict[str, dict[str, float]] = {}
    runs: list[SubQueryRun] = []
    for sq, own, rel in zip(subs, seeds, relevances, strict=True):
        start = {e: w for e, w in own.entities.items() if e in index.entity_pos}
        for page in own.pages:
            for e in index.page_entities.get(page, ()):
                start[index.entity_ids[e]] = 1.0
        for var in sq.variables():
            for e, w in replace_variables(bindings.get(var, {})).items():
                start[e] = max(start.get(e, 0.0), w)
        initial = _page_facts(index, own.pages)
        how = "pages" if own.pages and not own.entities else "entities"
        if not start and not initial:
            how = "relations"
            initial = _relation_path(index, rel, params.target_relations, allowed_facts)
        trace = expand(index, start, params, rel, initial=initial, allowed_facts=allowed_facts)
        bound = extract_answers(index, trace, start, expected=expected_labels(sq.render({})))
        bindings[sq.target] = bound
        runs.append(
            SubQueryRun(sub_query=sq, seeds=start, pages=list(own.pages), start=how, trace=trace, bindings=bound)
        )
    return runs


def _relation_path(
    index: BipartiteIndex, rel: Relevance | None, k: int, allowed: np.ndarray | None
) -> dict[str, float]:
    """The top-k facts by ``sim·conf`` (§4.2.2; ties by fact id), as initial relations of weight 1."""
    if not index.fact_ids:
        return {}
    scores = _relevance_of(rel, index, np.arange(len(index.fact_ids)))
    scores = scores if allowed is None else np.where(allowed, scores, 0.0)
    k = min(k, len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]  # the k-th best score
    near = np.flatnonzero(scores >= kth)  # positions follow sorted ids: the lexsort breaks ties by id
    top = near[np.lexsort((near, -scores[near]))][:k]
    return {index.fact_ids[int(j)]: 1.0 for j in top if scores[j] > 0}


def chunk_ranking(index: BipartiteIndex, runs: Sequence[SubQueryRun], allowed_docs: set[str] | None) -> list[Scored]:
    """Graph-side chunk ranking: a quoted page's chunks score 1, a seed's own page its seed weight, a fact's
    supporting chunks the fact's score (best over sub-questions); ``via`` lists what scored each chunk."""
    best: dict[str, float] = {}
    via: dict[str, list[str]] = {}

    def put(chunk: str, score: float, why: str) -> None:
        if allowed_docs is not None and index.chunk_doc.get(chunk) not in allowed_docs:
            return
        if why not in via.setdefault(chunk, []):
            via[chunk].append(why)
        best[chunk] = max(best.get(chunk, 0.0), score)

    for run in runs:
        for page in run.pages:
            for c in index.page_chunks.get(page, ()):
                put(c, 1.0, page)
        for eid, w in run.seeds.items():
            for c in index.entity_pages.get(index.entity_pos[eid], ()):
                put(c, w, eid)
        for hit in run.trace.ranked:
            for c in index.fact_chunks[index.fact_pos[hit.fact_id]]:
                put(c, hit.score, hit.fact_id)
    return [Scored(id=s.id, score=s.score, via=via[s.id]) for s in ranked(best)]


# ------------------------------------------------------------------------------------------ retrieve


def _allowed_facts(ctx: RetrievalContext, index: BipartiteIndex, filters: Filters | None) -> np.ndarray | None:
    allowed = ctx.allowed_docs(filters)
    if allowed is None:
        return None

    def build() -> np.ndarray:
        return np.array([any(index.chunk_doc.get(c) in allowed for c in cs) for cs in index.fact_chunks], dtype=bool)

    return ctx.cached("traversal:allowed:" + repr(sorted((filters or {}).items())), build)


def _sub_query_vectors(ctx: RetrievalContext, query: str, subs: Sequence[SubQuery]) -> list[np.ndarray]:
    """The question's own vector for a question that is its own only sub-question; otherwise every
    sub-question (placeholders dropped) embedded in one batch."""
    texts = [sq.render() for sq in subs]
    if len(subs) == 1 or all(t == query for t in texts):
        return [ctx.query_vector(query)] * len(subs)
    from stratagraph.embeddings import embed_texts

    unique = list(dict.fromkeys(t for t in texts if t and t != query))
    mat = embed_texts(ctx.vectors.embeddings, unique) if unique else np.zeros((0, 1))
    by_text = {t: np.asarray(mat[i], dtype=np.float32) for i, t in enumerate(unique)}
    return [ctx.query_vector(query) if (not t or t == query) else by_text[t] for t in texts]


def _names(ctx: RetrievalContext, ids: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(ids))
    return {n.id: str(n.props.get("name") or n.id) for n in ctx.graph.get_nodes(wanted)} if wanted else {}


def _describe(runs: Sequence[SubQueryRun], names: Mapping[str, str]) -> list[dict[str, Any]]:
    out = []
    for run in runs:
        out.append(
            {
                "sub_query": run.sub_query.model_dump(),
                "start": run.start,
                "pages": run.pages,
                "seeds": [
                    {"entity_id": e, "name": names.get(e, e), "weight": round(w, 6)}
                    for e, w in sorted(run.seeds.items())
                ],
                "bindings": [
                    {"entity_id": e, "name": names.get(e, e), "score": round(w, 6)} for e, w in run.bindings.items()
                ],
                "stopped": run.trace.stopped,
                "hops": [
                    {
                        "hop": h.hop,
                        "frontier": h.frontier[:20],
                        "new_facts": h.new_facts,
                        "facts": [
                            {"fact_id": f.fact_id, "via": f.via, "score": round(f.score, 6)} for f in h.facts[:20]
                        ],
                    }
                    for h in run.trace.hops
                ],
                "ranked": [f.model_dump() for f in run.trace.ranked],
            }
        )
    return out


class Traversal(BaseModel):
    """Algorithms 3-5 run for one question: its class, sub-questions, each sub-question's run, and the
    graph-side chunk ranking (before any fusion with the dense list)."""

    classification: Classification
    sub_queries: list[SubQuery]
    runs: list[SubQueryRun]
    graph: list[Scored]


def traverse(
    ctx: RetrievalContext,
    query: str,
    filters: Filters | None = None,
    links: QueryLinks | None = None,
    params: TraversalParams | None = None,
) -> Traversal:
    """Classify (Alg. 3), decompose (Alg. 5) and traverse each sub-question (Alg. 4); rank chunks by what
    the walks reached. ``links``: the question's links when the caller already has them (entities linked
    by similarity are dropped: a walk starts from the entities the question names). ``params``: H and K
    when the caller already classified the question the query comes from (a bound sub-question of a
    COMPLEX question walks with the COMPLEX class's per-sub-query H and K, §4.3.3); default: the query's
    own class."""
    cls = classify(ctx, query)
    subs = decompose(ctx, query)
    if links is None:
        links = link_query(ctx, query, similar=False)
    else:
        links = links.model_copy(update={"entities": [e for e in links.entities if e.how == "exact"]})
    index = load_index(ctx)
    vectors = fact_vectors(ctx, index)
    allowed_facts = _allowed_facts(ctx, index, filters)
    rels = [FactRelevance(index, vectors, v) for v in _sub_query_vectors(ctx, query, subs)]
    seeds = assign_seeds(trusted_links(index, links), subs)
    runs = run_sub_queries(index, subs, seeds, params or cls.params, rels, allowed_facts)
    graph = chunk_ranking(index, runs, ctx.allowed_docs(filters))
    return Traversal(classification=cls, sub_queries=list(subs), runs=list(runs), graph=graph)


def retrieve(
    ctx: RetrievalContext,
    query: str,
    k: int = 10,
    filters: Filters | None = None,
    params: TraversalParams | None = None,
) -> RetrievalResult:
    """:func:`traverse` (``params``: H and K to walk with instead of the query's own class's), then the
    graph ranking fused with the dense list by RRF."""
    walk = traverse(ctx, query, filters, params=params)
    dense = ctx.chunk_scores(query, max(SETTINGS.dense_depth, k), filters)
    fused = fuse_rankings([walk.graph, dense], k=RRF_K)
    names = _names(ctx, [e for r in walk.runs for e in (*r.seeds, *r.bindings)])
    return RetrievalResult(
        strategy="traversal",
        query=query,
        k=k,
        evidence=ctx.evidence(fused, k, filters),
        context={
            "classification": walk.classification.model_dump(mode="json"),
            "sub_queries": [s.model_dump() for s in walk.sub_queries],
            "runs": _describe(walk.runs, names),
            "graph_chunks": [{"chunk_id": s.id, "score": round(s.score, 6)} for s in walk.graph[: 3 * k]],
            "rrf_k": RRF_K,
        },
    )

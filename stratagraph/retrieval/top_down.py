"""``top_down``: BAG-RAG's top-down retrieval of structural nodes (§3.2, eq. 3), without an LLM.

The paper screens the section tree level by level: at level 1 every top-level section whose relevance to
the question exceeds a threshold tau is kept (``P^1``); at each deeper level only the children of the kept
sections are screened (``V_s-linked``) and kept when relevant; then a *secondary screening* looks again at
the sections of that level that were left out (``L^l``, the paper's ``Miss(L^l, Q)``) and adds back the
ones that are relevant after all, so that their children are explored too. The kept sections
``S = P^1 ∪ ... ∪ P^(L-1)`` are what the bottom-up phase (``bottom_up``, eq. 4) works inside.

Here, with no LLM to judge relevance:

* ``Rel(s, Q)`` is the cosine of the question's vector and the section's vector in the ``sections``
  collection (its embedded text is "DocTitle > heading path"), read from a whole-store matrix cached per
  graph generation (:func:`section_index`), so screening a level is one matrix-vector product.
* tau is relative and floored, one setting for every store: at level ``l`` a linked section is kept when
  ``Rel >= tau_l = max(tau_floor, best_l - tau_margin)``, ``best_l`` the best ``Rel`` among that level's
  linked sections; at most ``beam`` sections per level are kept (best first), so cost is bounded.
* ``Miss(L^l, Q)``: a left-out section of level ``l`` is recovered when either its *content* is among the
  most relevant of its level (the best cosine of a chunk in its subtree is
  ``>= max(content_floor, best content score of the level - content_margin)``; a heading can be vague
  while the text under it answers the question), or, for a section whose parent was not kept, its own
  heading passes ``tau_l`` (it would have been kept had its parent been). At most ``miss_beam`` per level,
  by their margin over the threshold they pass. The paper screens ``L^l`` for ``l > 1``; we screen level 1
  too, with the content rule (the heading rule cannot apply there: every level-1 section is linked).

Evidence: the chunks of the kept sections (HAS_CHUNK, their own chunks), ranked by chunk-query cosine,
fused by reciprocal rank fusion with the dense chunk list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.calibration import MINILM_FLOORS, cosine_floors
from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, ranked, rrf
from stratagraph.retrieval.table_vectors import table_vectors
from stratagraph.schema import EdgeType

STRATEGY = "top_down"
CACHE_NAME = "top_down.section_index"


class TopDownParams(BaseModel):
    """One configuration for every store (cosines of MiniLM vectors)."""

    tau_floor: float | None = Field(None, description="ours: floor of Rel(s, Q) (None: the embedding model's, calibration.py)")
    tau_margin: float = Field(0.15, description="ours: a linked section is kept within this of its level's best heading")
    beam: int = Field(16, description="ours: sections kept per level by the first screening, at most")
    content_floor: float | None = Field(None, description="ours: Miss floor of a section's best chunk (None: the model's)")
    content_margin: float = Field(0.1, description="ours: ...and within this of the level's best chunk")
    miss_beam: int = Field(8, description="ours: sections recovered per level by the secondary screening, at most")
    depth: int = Field(50, description="ours: how deep the structural and dense lists are read before fusing")
    rrf_k: int = Field(RRF_K, description="paper (Cormack et al.): the RRF constant")


# ------------------------------------------------------------------------------------------ the index


@dataclass(frozen=True)
class SectionIndex:
    """Whole-store section tree and vectors (built once per graph generation).

    Sections are numbered ``0..n-1`` in id order; chunks ``0..m-1`` in id order."""

    ids: list[str]
    pos: dict[str, int]
    titles: list[str]
    doc_ids: list[str]
    matrix: np.ndarray  # (n, d) unit rows of the ``sections`` collection (zero where missing)
    parent: np.ndarray  # (n,) index of the parent section, -1 under a Document
    depth: np.ndarray  # (n,) 1 for a top-level section
    children: list[list[int]]  # reading order
    own_chunks: list[list[int]]  # HAS_CHUNK of each section, chunk indices
    chunk_ids: list[str]
    chunk_pos: dict[str, int]
    chunk_matrix: np.ndarray  # (m, d) unit rows of the ``chunks`` collection (zero where missing)
    chunk_section: np.ndarray  # (m,) index of the section that has the chunk

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if len(self.ids) else 0

    def at_depth(self, depth: int) -> np.ndarray:
        return np.flatnonzero(self.depth == depth)


def _rows_of(matrix: np.ndarray, pos: dict[str, int], ids: list[str]) -> np.ndarray:
    """The rows of ``ids`` (zeros for an id the table does not hold)."""
    out = np.zeros((len(ids), matrix.shape[1]), dtype=matrix.dtype)
    found = [(i, pos[n]) for i, n in enumerate(ids) if n in pos]
    if found:
        out[[i for i, _ in found]] = matrix[[p for _, p in found]]
    return out


def build_section_index(ctx: RetrievalContext) -> SectionIndex:
    """The section tree of the shared graph index, and both collections' vectors (read once)."""
    ix = ctx.index()
    ids = ix.sections.ids
    pos = ix.sections.pos
    edges = ix.edges_of(EdgeType.HAS_CHUNK, EdgeType.HAS_SECTION)
    parent = np.full(len(ids), -1, dtype=np.int64)
    kids: list[list[int]] = [[] for _ in ids]
    chunk_owner: dict[str, int] = {}
    for e in edges:
        child = pos.get(e.dst) if e.type == EdgeType.HAS_SECTION else None
        if child is not None and e.src in pos:
            parent[child] = pos[e.src]
            kids[pos[e.src]].append(child)
        elif e.type == EdgeType.HAS_CHUNK and e.src in pos:
            chunk_owner.setdefault(e.dst, pos[e.src])
    order = [_reading_order(o) for o in ix.section_order]
    children = [sorted(k, key=lambda i: (order[i], ids[i])) for k in kids]
    depth = _depths(parent)
    chunk_ids = sorted(chunk_owner)
    chunk_section = np.array([chunk_owner[c] for c in chunk_ids], dtype=np.int64)
    own: list[list[int]] = [[] for _ in ids]
    for j, s in enumerate(chunk_section.tolist()):
        own[s].append(j)
    chunk_matrix = table_vectors(ctx, "chunks", "chunks")
    return SectionIndex(
        ids=ids,
        pos=pos,
        titles=list(ix.section_title),
        doc_ids=list(ix.section_doc),
        matrix=table_vectors(ctx, "sections", "sections"),
        parent=parent,
        depth=depth,
        children=children,
        own_chunks=own,
        chunk_ids=chunk_ids,
        chunk_pos={c: j for j, c in enumerate(chunk_ids)},
        chunk_matrix=chunk_matrix if chunk_ids == ix.chunks.ids else _rows_of(chunk_matrix, ix.chunks.pos, chunk_ids),
        chunk_section=chunk_section,
    )


def _reading_order(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of each section below its Document (1 = top level); a cycle is cut where it closes."""
    depth = np.zeros(len(parent), dtype=np.int64)
    for start in range(len(parent)):
        chain: list[int] = []
        node = start
        while node >= 0 and depth[node] == 0 and node not in chain:
            chain.append(node)
            node = int(parent[node])
        base = int(depth[node]) if node >= 0 and depth[node] > 0 else 0
        for offset, member in enumerate(reversed(chain), start=1):
            depth[member] = base + offset
    return depth


def section_index(ctx: RetrievalContext) -> SectionIndex:
    return ctx.cached(CACHE_NAME, lambda: build_section_index(ctx))


# ------------------------------------------------------------------------------------------ scores


@dataclass(frozen=True)
class QueryScores:
    """Per-query relevance over the whole index."""

    title: np.ndarray  # (n,) Rel(s, Q): cosine of question and section vectors
    chunk: np.ndarray  # (m,) cosine of question and chunk vectors
    content: np.ndarray  # (n,) best chunk cosine in each section's subtree (-1 when it has no chunk)
    allowed: np.ndarray  # (n,) bool: the section's document passes the filters


def _cosines(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Row cosines with ``q`` (rows are unit or zero); all zero when the collection had no vectors."""
    if matrix.shape[0] == 0 or matrix.shape[1] != q.shape[0]:
        return np.zeros(matrix.shape[0], dtype=np.float32)
    return matrix @ q


def query_scores(index: SectionIndex, qvec: np.ndarray, allowed_docs: set[str] | None) -> QueryScores:
    q = np.asarray(qvec, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    q = q / norm if norm > 0 else q
    n = len(index.ids)
    title = _cosines(index.matrix, q)
    chunk = _cosines(index.chunk_matrix, q)
    content = np.full(n, -1.0, dtype=np.float32)
    if len(chunk):
        np.maximum.at(content, index.chunk_section, chunk)
    for depth in range(index.max_depth, 1, -1):  # a section's content includes its subsections'
        rows = index.at_depth(depth)
        rows = rows[index.parent[rows] >= 0]
        np.maximum.at(content, index.parent[rows], content[rows])
    if allowed_docs is None:
        allowed = np.ones(n, dtype=bool)
    else:
        allowed = np.fromiter((d in allowed_docs for d in index.doc_ids), dtype=bool, count=n)
    return QueryScores(title=title, chunk=chunk, content=content, allowed=allowed)


# ------------------------------------------------------------------------------------------ screening


class ScreenedSection(BaseModel):
    id: str
    title: str
    doc_id: str
    score: float  # Rel(s, Q), the heading cosine
    content: float  # best chunk cosine under the section
    why: str  # "screened" | "content" (Miss, by its text) | "heading" (Miss, parent not kept)


class Level(BaseModel):
    """One level of eq. 3: ``P^l`` = ``kept`` ∪ ``recovered`` (``Miss(L^l, Q)``)."""

    depth: int
    tau: float | None = None  # tau_l of the first screening (None: nothing linked at this level)
    content_tau: float | None = None  # the Miss content threshold
    linked: int = 0  # |V_s-linked|
    kept: list[ScreenedSection] = Field(default_factory=list)
    recovered: list[ScreenedSection] = Field(default_factory=list)


class Screening(BaseModel):
    levels: list[Level] = Field(default_factory=list)

    def kept_ids(self) -> list[str]:
        """``S = ∪ P^l``, in level order."""
        return [s.id for lv in self.levels for s in [*lv.kept, *lv.recovered]]

    def recovered_ids(self) -> list[str]:
        return [s.id for lv in self.levels for s in lv.recovered]


def _best_first(rows: np.ndarray, scores: np.ndarray, ids: list[str]) -> list[int]:
    return sorted(rows.tolist(), key=lambda i: (-round(float(scores[i]), 12), ids[i]))


def _entry(index: SectionIndex, qs: QueryScores, i: int, why: str) -> ScreenedSection:
    return ScreenedSection(
        id=index.ids[i],
        title=index.titles[i],
        doc_id=index.doc_ids[i],
        score=round(float(qs.title[i]), 6),
        content=round(float(qs.content[i]), 6),
        why=why,
    )


def first_screening(
    index: SectionIndex, qs: QueryScores, linked: np.ndarray, params: TopDownParams
) -> tuple[list[int], float | None]:
    """``{s in V_s-linked : Rel(s, Q) >= tau_l}``, best first, at most ``beam``; returns it and ``tau_l``."""
    if not len(linked):
        return [], None
    best = float(qs.title[linked].max())
    tau = max(MINILM_FLOORS.section if params.tau_floor is None else params.tau_floor, best - params.tau_margin)
    passing = linked[qs.title[linked] >= tau]
    return _best_first(passing, qs.title, index.ids)[: params.beam], tau


def secondary_screening(
    index: SectionIndex,
    qs: QueryScores,
    left_out: np.ndarray,
    linked_mask: np.ndarray,
    tau: float | None,
    content_tau: float,
    params: TopDownParams,
) -> list[tuple[int, str]]:
    """``Miss(L^l, Q)``: left-out sections whose text is among the level's most relevant, or whose own
    heading passes ``tau_l`` although their parent was not kept; by margin over that threshold."""
    found: dict[int, tuple[float, str]] = {}
    for i in left_out[qs.content[left_out] >= content_tau].tolist():
        found[i] = (float(qs.content[i]) - content_tau, "content")
    if tau is not None:
        orphans = left_out[~linked_mask[left_out]]
        for i in orphans[qs.title[orphans] >= tau].tolist():
            margin = float(qs.title[i]) - tau
            if i not in found or margin > found[i][0]:
                found[i] = (margin, "heading")
    order = sorted(found, key=lambda i: (-round(found[i][0], 12), index.ids[i]))
    return [(i, found[i][1]) for i in order[: params.miss_beam]]


def screen(index: SectionIndex, qs: QueryScores, params: TopDownParams) -> Screening:
    """Eq. 3, level by level from the top-level sections to the deepest level."""
    levels: list[Level] = []
    linked = index.at_depth(1)
    linked = linked[qs.allowed[linked]]
    for depth in range(1, index.max_depth + 1):
        everyone = index.at_depth(depth)
        everyone = everyone[qs.allowed[everyone]]
        if not len(everyone):
            break
        kept, tau = first_screening(index, qs, linked, params)
        linked_mask = np.zeros(len(index.ids), dtype=bool)
        linked_mask[linked] = True
        kept_mask = np.zeros(len(index.ids), dtype=bool)
        kept_mask[kept] = True
        left_out = everyone[~kept_mask[everyone]]
        best_content = float(qs.content[everyone].max())
        floor = MINILM_FLOORS.content if params.content_floor is None else params.content_floor
        content_tau = max(floor, best_content - params.content_margin)
        recovered = secondary_screening(index, qs, left_out, linked_mask, tau, content_tau, params)
        levels.append(
            Level(
                depth=depth,
                tau=None if tau is None else round(tau, 6),
                content_tau=round(content_tau, 6),
                linked=len(linked),
                kept=[_entry(index, qs, i, "screened") for i in kept],
                recovered=[_entry(index, qs, i, why) for i, why in recovered],
            )
        )
        chosen = [*kept, *(i for i, _ in recovered)]
        linked = np.array(sorted({c for i in chosen for c in index.children[i] if qs.allowed[c]}), dtype=np.int64)
    return Screening(levels=levels)


# ------------------------------------------------------------------------------------------ evidence


def structural_ranking(
    index: SectionIndex, qs: QueryScores, sections: Sequence[str], limit: int
) -> list[ScoredId]:
    """The own chunks (HAS_CHUNK) of the kept sections, by chunk-query cosine (then id)."""
    rows = [j for s in dict.fromkeys(sections) for j in index.own_chunks[index.pos[s]]]
    return ranked({index.chunk_ids[j]: float(qs.chunk[j]) for j in rows}, limit=limit)


class TopDownRun(BaseModel):
    """Everything one top-down pass found (``bottom_up`` builds on it)."""

    screening: Screening
    structural: list[ScoredId]  # chunks of the kept sections by cosine
    dense: list[ScoredId]
    fused: list[ScoredId]


def with_floors(params: TopDownParams, ctx: RetrievalContext) -> TopDownParams:
    """``params`` with its unset cosine floors taken from the embedding model's (:mod:`.calibration`)."""
    if params.tau_floor is not None and params.content_floor is not None:
        return params
    floors = cosine_floors(ctx)
    return params.model_copy(
        update={
            "tau_floor": floors.section if params.tau_floor is None else params.tau_floor,
            "content_floor": floors.content if params.content_floor is None else params.content_floor,
        }
    )


def run(
    ctx: RetrievalContext, query: str, filters: Filters | None = None, params: TopDownParams | None = None
) -> TopDownRun:
    params = with_floors(params or TopDownParams(), ctx)
    index = section_index(ctx)
    qs = query_scores(index, ctx.query_vector(query), ctx.allowed_docs(filters))
    screening = screen(index, qs, params)
    structural = structural_ranking(index, qs, screening.kept_ids(), params.depth)
    dense = ctx.chunk_scores(query, params.depth, filters)
    fused = rrf([[h.id for h in structural], [h.id for h in dense]], k=params.rrf_k)
    return TopDownRun(screening=screening, structural=structural, dense=dense, fused=fused)


def context_of(screening: Screening) -> dict[str, object]:
    return {
        "levels": [lv.model_dump() for lv in screening.levels],
        "kept_sections": screening.kept_ids(),
        "recovered": screening.recovered_ids(),
    }


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    params = TopDownParams(depth=max(TopDownParams().depth, k))
    result = run(ctx, query, filters, params)
    return RetrievalResult(
        strategy=STRATEGY,
        query=query,
        k=k,
        evidence=ctx.evidence(result.fused, k, filters),
        context=context_of(result.screening),
    )

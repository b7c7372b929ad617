"""``bottom_up``: BAG-RAG's bottom-up generation phase (§3.2, eq. 4), as retrieval without an LLM.

The paper takes the instance nodes ``F^i`` linked to the structural nodes that the top-down phase kept,
detects communities among them (after GraphRAG), keeps in every layer only the instance nodes whose
similarity to the question reaches ``tau_Q`` (``Relevant(L_k) = {f_j in L_k : Rel(f_j, Q) >= tau_Q}``) and
aggregates their information layer by layer: ``Context(Q) = ∪_k ∪_{f_j in Relevant(L_k)} Info(f_j)``.

Here:

1. ``top_down.run`` gives the kept sections ``S`` (eq. 3) and their chunks.
2. :func:`instance_graph`: the instance nodes under ``S`` are the entities their chunks MENTION and the
   facts SUPPORTED_BY their chunks (plus the entities IN_FACT of those facts); the graph among them has the
   IN_FACT and RELATED edges and a co-occurrence edge between two entities mentioned by one chunk (weight
   ``1/(m-1)`` for a chunk that mentions ``m`` entities, so a long list of names does not dominate).
   Nothing outside the kept sections' chunks enters: the graph never crosses out of ``S``.
3. :func:`detect_communities`: Leiden (Traag et al. 2019; python-igraph, modularity objective, fixed
   seed, nodes in id order) partitions it.
4. :func:`score_communities`: ``Rel(C, Q)`` is the cosine of the question and the normalised mean of the
   community's fact vectors (``facts`` collection); a community with no fact carries no statement to
   aggregate and is not scored. ``tau_Q = max(tau_q_floor, best - tau_q_margin)``, one setting for all
   stores; at most ``max_communities`` survive.
5. :func:`aggregate`: each community is attached to its *home*, the deepest kept section whose subtree
   holds every kept chunk its members come from (none when they span documents); the surviving
   communities are then gathered layer by layer up the section tree (a section's layer lists its own
   communities and those of its kept subsections), ending at layer 0, the union of eq. 4.

Evidence: the kept chunks that support the surviving communities' facts, scored
``(Rel(C, Q) + Rel(f, Q)) / 2`` (best over their facts), fused by reciprocal rank fusion with the
``top_down`` ranking.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, Field
from scipy.sparse import csr_matrix

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval import top_down
from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, ranked, rrf
from stratagraph.retrieval.calibration import MINILM_FLOORS, cosine_floors
from stratagraph.retrieval.index import GraphIndex, NodeTable
from stratagraph.retrieval.top_down import SectionIndex, TopDownParams, TopDownRun

STRATEGY = "bottom_up"
INDEX_CACHE = "bottom_up.instance_index"
FACT_VECTOR_CACHE = "bottom_up.fact_vectors"

_IGRAPH_RNG_LOCK = threading.Lock()  # igraph's random generator is process-wide


class BottomUpParams(BaseModel):
    """One configuration for every store."""

    screening: TopDownParams = Field(default_factory=TopDownParams, description="the top-down phase (eq. 3)")
    seed: int = Field(42, description="ours: Leiden's random seed (determinism)")
    resolution: float = Field(1.0, description="paper (Traag et al.): modularity resolution")
    tau_q_floor: float | None = Field(None, description="ours: floor of Rel(C, Q) (None: the embedding model's, calibration.py)")
    tau_q_margin: float = Field(0.15, description="ours: a community survives within this of the best one")
    max_communities: int = Field(12, description="ours: communities kept, at most")
    max_listed: int = Field(20, description="ours: members and facts listed per community in the context")
    depth: int = Field(50, description="ours: how deep the community and top-down lists are read before fusing")
    rrf_k: int = Field(RRF_K, description="paper (Cormack et al.): the RRF constant")


# ------------------------------------------------------------------------------------------ the index


class InstanceIndex:
    """The instance layer as BAG-RAG eq. 4 reads it, a view of the shared graph index: a chunk's facts
    (SUPPORTED_BY) and entities (MENTIONS), a fact's entities (IN_FACT), an entity's RELATED neighbours in
    either direction. Every list is sorted by id."""

    def __init__(self, ix: GraphIndex) -> None:
        self.ix = ix
        sym = (ix.related + ix.related.T).tocsr()
        sym.setdiag(0)
        sym.eliminate_zeros()
        self._related = sym

    def _ids(self, matrix: csr_matrix, row: int | None, out: NodeTable) -> tuple[str, ...]:
        return () if row is None else tuple(out.ids[j] for j in self.ix.row(matrix, row))

    def chunk_facts(self, chunk_id: str) -> tuple[str, ...]:
        return self._ids(self.ix.chunk_fact, self.ix.chunks.pos.get(chunk_id), self.ix.facts)

    def chunk_entities(self, chunk_id: str) -> tuple[str, ...]:
        return self._ids(self.ix.chunk_entity, self.ix.chunks.pos.get(chunk_id), self.ix.entities)

    def fact_entities(self, fact_id: str) -> tuple[str, ...]:
        return self._ids(self.ix.fact_entity, self.ix.facts.pos.get(fact_id), self.ix.entities)

    def related(self, entity_id: str) -> tuple[str, ...]:
        return self._ids(self._related, self.ix.entities.pos.get(entity_id), self.ix.entities)


def instance_index(ctx: RetrievalContext) -> InstanceIndex:
    return ctx.cached(INDEX_CACHE, lambda: InstanceIndex(ctx.index()))


def fact_vectors(ctx: RetrievalContext, fact_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Unit fact vectors, read from the ``facts`` collection once each (kept per graph generation)."""
    cache: dict[str, np.ndarray | None] = ctx.cached(FACT_VECTOR_CACHE, dict)
    missing = [f for f in dict.fromkeys(fact_ids) if f not in cache]
    if missing:
        got = ctx.vectors.get_embeddings("facts", missing)
        for f in missing:
            vec = got.get(f)
            norm = float(np.linalg.norm(vec)) if vec is not None else 0.0
            cache[f] = (vec / norm).astype(np.float32) if vec is not None and norm > 0 else None
    return {f: v for f in fact_ids if (v := cache.get(f)) is not None}


# ------------------------------------------------------------------------------------------ the graph


@dataclass
class InstanceGraph:
    """Instance nodes under the kept sections, the weighted edges among them, and where they come from."""

    nodes: list[str]  # sorted ids
    edges: dict[tuple[int, int], float]  # (i, j), i < j -> weight
    facts: set[str]
    chunks_of: dict[str, list[str]] = field(default_factory=dict)  # node -> kept chunks it comes from


def instance_graph(index: InstanceIndex, chunks: Sequence[str]) -> InstanceGraph:
    """``F^i``: entities and facts of the kept chunks, with IN_FACT, RELATED and co-mention edges."""
    chunks_of: dict[str, set[str]] = defaultdict(set)
    facts: set[str] = set()
    comention: list[tuple[str, str, float]] = []
    for c in dict.fromkeys(chunks):
        for f in index.chunk_facts(c):
            facts.add(f)
            chunks_of[f].add(c)
        mentioned = list(index.chunk_entities(c))
        for e in mentioned:
            chunks_of[e].add(c)
        if len(mentioned) > 1:
            w = 1.0 / (len(mentioned) - 1)
            comention.extend((a, b, w) for i, a in enumerate(mentioned) for b in mentioned[i + 1 :])
    fact_members = {f: index.fact_entities(f) for f in facts}
    for f, ents in fact_members.items():
        for e in ents:
            chunks_of[e].update(chunks_of[f])  # an entity of a kept fact lives where the fact does
    nodes = sorted(chunks_of)
    pos = {n: i for i, n in enumerate(nodes)}
    edges: dict[tuple[int, int], float] = defaultdict(float)

    def add(a: str, b: str, w: float) -> None:
        i, j = pos[a], pos[b]
        if i != j:
            edges[(min(i, j), max(i, j))] += w

    for f, ents in fact_members.items():
        for e in ents:
            add(e, f, 1.0)
    for e in nodes:
        for other in index.related(e):
            if other in pos and e < other:
                add(e, other, 1.0)
    for a, b, w in comention:
        add(a, b, w)
    return InstanceGraph(
        nodes=nodes, edges=dict(edges), facts=facts, chunks_of={n: sorted(v) for n, v in chunks_of.items()}
    )


def detect_communities(graph: InstanceGraph, seed: int, resolution: float) -> list[list[str]]:
    """Leiden communities (modularity), each a sorted member list; ordered by first member id."""
    import igraph

    if not graph.nodes:
        return []
    pairs = sorted(graph.edges)
    g = igraph.Graph(n=len(graph.nodes), edges=pairs, directed=False)
    weights = [graph.edges[p] for p in pairs]
    with _IGRAPH_RNG_LOCK:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            clustering = g.community_leiden(
                objective_function="modularity", weights=weights or None, resolution=resolution, n_iterations=-1
            )
        finally:
            igraph.set_random_number_generator(random)
    groups: dict[int, list[str]] = defaultdict(list)
    for i, label in enumerate(clustering.membership):
        groups[label].append(graph.nodes[i])
    return sorted((sorted(m) for m in groups.values()), key=lambda m: m[0])


def community_id(members: Sequence[str]) -> str:
    """A stable id from the members (the same community gets the same id in every run)."""
    return "community:" + hashlib.sha1("\n".join(sorted(members)).encode()).hexdigest()[:12]


# ------------------------------------------------------------------------------------------ scoring


class ScoredFact(BaseModel):
    id: str
    description: str = ""
    score: float  # Rel(f, Q)


class Community(BaseModel):
    id: str
    section: str | None  # home section (None: members span documents)
    title: str = ""
    doc_id: str | None = None
    depth: int  # depth of the home section (0: above the documents)
    score: float  # Rel(C, Q)
    size: int
    members: list[str]  # entity names
    facts: list[ScoredFact]


@dataclass
class ScoredCommunity:
    members: list[str]
    facts: dict[str, float]  # fact id -> Rel(f, Q)
    score: float


def score_communities(
    communities: Sequence[Sequence[str]], facts: set[str], vectors: Mapping[str, np.ndarray], qvec: np.ndarray
) -> list[ScoredCommunity]:
    """``Rel(C, Q)`` = cosine(question, normalised mean of the community's fact vectors); best first."""
    q = np.asarray(qvec, dtype=np.float32)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    out: list[ScoredCommunity] = []
    for members in communities:
        own = [m for m in members if m in facts and m in vectors]
        if not own:
            continue
        mat = np.vstack([vectors[f] for f in own])
        mean = mat.mean(axis=0)
        norm = float(np.linalg.norm(mean))
        if norm == 0:
            continue
        fact_scores = {f: float(s) for f, s in zip(own, mat @ q, strict=True)}
        out.append(ScoredCommunity(members=list(members), facts=fact_scores, score=float(mean @ q) / norm))
    return sorted(out, key=lambda c: (-round(c.score, 12), c.members[0]))


def relevant(scored: Sequence[ScoredCommunity], params: BottomUpParams) -> tuple[list[ScoredCommunity], float]:
    """``Relevant = {C : Rel(C, Q) >= tau_Q}`` with ``tau_Q`` relative to the best and floored."""
    floor = MINILM_FLOORS.community if params.tau_q_floor is None else params.tau_q_floor
    if not scored:
        return [], floor
    tau = max(floor, scored[0].score - params.tau_q_margin)
    return [c for c in scored if c.score >= tau][: params.max_communities], tau


# ------------------------------------------------------------------------------------------ aggregation


def home_section(index: SectionIndex, chunk_ids: Sequence[str], kept: set[int]) -> int | None:
    """The deepest kept section whose subtree holds all the chunks (their lowest common kept ancestor)."""
    paths: list[list[int]] = []
    for c in chunk_ids:
        j = index.chunk_pos.get(c)
        if j is None:
            continue
        path, node = [], int(index.chunk_section[j])
        while node >= 0:
            path.append(node)
            node = int(index.parent[node])
        paths.append([s for s in reversed(path) if s in kept])  # root first, kept only
    if not paths:
        return None
    common: int | None = None
    for level in zip(*paths, strict=False):
        if all(s == level[0] for s in level):
            common = level[0]
        else:
            break
    return common


class LayerGroup(BaseModel):
    section: str | None
    title: str = ""
    communities: list[str]


class Layer(BaseModel):
    depth: int
    groups: list[LayerGroup]


def aggregate(index: SectionIndex, communities: Sequence[Community], kept: set[int]) -> list[Layer]:
    """Eq. 4 layer by layer: from the deepest home sections up, each kept section gathers its own
    communities and its kept subsections' (never an unkept parent's); layer 0 is the union ``Context(Q)``."""
    gathered: dict[int, list[str]] = defaultdict(list)
    for c in communities:
        if c.section is not None:
            gathered[index.pos[c.section]].append(c.id)
    layers: list[Layer] = []
    for depth in range(index.max_depth, 0, -1):
        here = sorted((s for s in gathered if index.depth[s] == depth), key=lambda s: index.ids[s])
        if not here:
            continue
        layers.append(
            Layer(
                depth=depth,
                groups=[
                    LayerGroup(section=index.ids[s], title=index.titles[s], communities=list(gathered[s]))
                    for s in here
                ],
            )
        )
        for s in here:
            parent = int(index.parent[s])
            if parent >= 0 and parent in kept:
                gathered[parent] = list(dict.fromkeys([*gathered[parent], *gathered[s]]))
    layers.append(Layer(depth=0, groups=[LayerGroup(section=None, communities=[c.id for c in communities])]))
    return layers


# ------------------------------------------------------------------------------------------ the run


class BottomUpRun(BaseModel):
    screening: TopDownRun
    tau_q: float
    instances: int
    found: int  # communities detected
    communities: list[Community]
    layers: list[Layer]
    ranking: list[ScoredId]  # chunks of the surviving communities' facts
    fused: list[ScoredId]


def _describe(
    ctx: RetrievalContext,
    index: SectionIndex,
    graph: InstanceGraph,
    survivors: Sequence[ScoredCommunity],
    kept: set[int],
    params: BottomUpParams,
) -> list[Community]:
    listed = {
        c.members[0]: (
            sorted(m for m in c.members if m not in graph.facts)[: params.max_listed],
            sorted(c.facts, key=lambda f: (-round(c.facts[f], 12), f))[: params.max_listed],
        )
        for c in survivors
    }
    wanted = [i for names, facts in listed.values() for i in [*names, *facts]]
    props = {n.id: n.props for n in ctx.graph.get_nodes(wanted)} if wanted else {}
    out: list[Community] = []
    for c in survivors:
        names, facts = listed[c.members[0]]
        home = home_section(index, sorted({ch for m in c.members for ch in graph.chunks_of.get(m, [])}), kept)
        out.append(
            Community(
                id=community_id(c.members),
                section=index.ids[home] if home is not None else None,
                title=index.titles[home] if home is not None else "",
                doc_id=index.doc_ids[home] if home is not None else None,
                depth=int(index.depth[home]) if home is not None else 0,
                score=round(c.score, 6),
                size=len(c.members),
                members=[str(props.get(m, {}).get("name") or m) for m in names],
                facts=[
                    ScoredFact(id=f, description=str(props.get(f, {}).get("description") or ""), score=round(c.facts[f], 6))
                    for f in facts
                ],
            )
        )
    return out


def evidence_ranking(graph: InstanceGraph, survivors: Sequence[ScoredCommunity], limit: int) -> list[ScoredId]:
    """Kept chunks supporting the surviving facts, by the best ``(Rel(C, Q) + Rel(f, Q)) / 2``."""
    best: dict[str, float] = {}
    for c in survivors:
        for f, s in c.facts.items():
            value = (c.score + s) / 2.0
            for ch in graph.chunks_of.get(f, []):
                if value > best.get(ch, -np.inf):
                    best[ch] = value
    return ranked(best, limit=limit)


def run(
    ctx: RetrievalContext, query: str, filters: Filters | None = None, params: BottomUpParams | None = None
) -> BottomUpRun:
    params = params or BottomUpParams()
    if params.tau_q_floor is None:
        params = params.model_copy(update={"tau_q_floor": cosine_floors(ctx).community})
    td = top_down.run(ctx, query, filters, params.screening)
    index = top_down.section_index(ctx)
    kept = {index.pos[s] for s in td.screening.kept_ids()}
    chunks = [index.chunk_ids[j] for s in sorted(kept) for j in index.own_chunks[s]]
    graph = instance_graph(instance_index(ctx), chunks)
    found = detect_communities(graph, params.seed, params.resolution)
    vectors = fact_vectors(ctx, sorted(graph.facts))
    survivors, tau = relevant(score_communities(found, graph.facts, vectors, ctx.query_vector(query)), params)
    communities = _describe(ctx, index, graph, survivors, kept, params)
    ranking = evidence_ranking(graph, survivors, params.depth)
    fused = rrf([[h.id for h in ranking], [h.id for h in td.fused]], k=params.rrf_k)
    return BottomUpRun(
        screening=td,
        tau_q=round(tau, 6),
        instances=len(graph.nodes),
        found=len(found),
        communities=communities,
        layers=aggregate(index, communities, kept),
        ranking=ranking,
        fused=fused,
    )


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    depth = max(BottomUpParams().depth, k)
    params = BottomUpParams(depth=depth, screening=TopDownParams(depth=depth))
    result = run(ctx, query, filters, params)
    return RetrievalResult(
        strategy=STRATEGY,
        query=query,
        k=k,
        evidence=ctx.evidence(result.fused, k, filters),
        context={
            **top_down.context_of(result.screening.screening),
            "tau_q": result.tau_q,
            "instances": result.instances,
            "communities_found": result.found,
            "communities": [c.model_dump() for c in result.communities],
            "layers": [layer.model_dump() for layer in result.layers],
        },
    )

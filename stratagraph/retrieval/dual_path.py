"""``dual_path``: BiG-RAG's dual-path retrieval over the entity/fact bipartite graph (BiG-RAG §4.2).

The paper's three steps, each a pure function here:

* **Entity path** (§4.2.1). The query entities ``V_q`` are the question's linked entities
  (:func:`~stratagraph.retrieval.query_linking.link_query`: exact name/alias n-grams score 1, spaCy mentions
  are embedded and matched to the ``entities`` collection, top-``k_E`` per mention: each mention is
  matched on its own rather than through one aggregated ``phi(V_q)``, so two entities in one question do
  not blur into a vector near neither). Each retrieved entity weighs ``w(e) = sim(mention, e) * e.conf``
  (``conf`` = 1 when the entity carries no confidence).
  ``F_E`` is every fact joined to a retrieved entity by an ``IN_FACT`` edge. The paper leaves the order of
  ``F_E`` open; here a fact scores one random-walk step from the retrieved entities over the bipartite
  edges, ``score_E(r) = r.conf * sum_{e in R_E, (e, r) in E_B} w(e) / deg(e)`` (``deg(e)``: e's facts):
  a fact that joins several query entities outranks one that names a single one, a hub entity (a
  nationality named in hundreds of facts) spreads its weight thin instead of flooding the list, and the
  fact's own extraction confidence scales it as in the relation path.
* **Relation path** (§4.2.2). ``R_R(q) = Top-k_R [sim(phi(q), phi(r)) * r.conf]`` over the ``facts``
  collection; the nearest ``k_R * relation_pool`` facts by cosine are re-weighted by confidence and the
  best ``k_R`` kept (confidence can only lower a score, so a fact outside that pool could only win with a
  far higher confidence than its neighbours).
* **Fusion** (§4.2.3, eq. RRF). ``Score(r) = 1 / (rank_E(r) + 60) + 1 / (rank_R(r) + 60)`` (a missing rank
  contributes nothing), top ``k`` facts.

Passage ranking (ours: the paper feeds the fused facts to the generator; a retriever must rank chunks).
Each fused fact points at its source chunks (``SUPPORTED_BY``); a chunk scores the **sum** of the fused
scores of the facts it supports (several fused facts in one passage are several votes for it). That
fact-derived chunk list is fused by RRF (k = 60) with the dense chunk list, so a passage that yielded no
fact (or none that ranked) stays reachable, and a passage both lists agree on rises.

The entity/fact adjacency, fact confidences and ``SUPPORTED_BY`` links come from the shared
:class:`~stratagraph.retrieval.index.GraphIndex` (built once per graph generation), so neither path reads a
hub entity's facts per question.

Defaults: ``k_E = 10``, ``k_R = 10``, fused ``k = 10`` (at least the requested number of passages), all from
§4.2.3's "Default Parameters"; the entity similarity floor 0.75 is query linking's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import (
    RRF_K,
    Filters,
    RetrievalContext,
    RetrievalResult,
    Scored,
    chunk_doc_id,
    ranked,
    rrf,
    vector_filters,
)
from stratagraph.retrieval.query_linking import LinkedEntity, link_query
from stratagraph.schema import Node, NodeLabel

NAME = "dual_path"


class DualPathParams(BaseModel):
    """One configuration for every corpus (BiG-RAG §4.2.3 defaults)."""

    k_entities: int = Field(10, ge=1, description="paper (BiG-RAG §4.2.3 k_E): similar entities per query entity")
    k_relations: int = Field(10, ge=1, description="paper (§4.2.3 k_R): facts retrieved by the relation path")
    k_facts: int = Field(10, ge=1, description="paper (§4.2.3 k): fused facts kept (at least the passages asked for)")
    relation_pool: int = Field(3, ge=1, description="ours: the relation path reads k_R x this nearest facts, then weighs confidence")
    entity_min_sim: float | None = Field(None, description="ours: cosine floor of a similar entity (None: the embedding model's, calibration.py)")
    dense_depth: int = Field(50, ge=1, description="ours: how deep the dense list fused into the passage ranking is read")
    rrf_k: int = Field(RRF_K, ge=1, description="paper (§4.2.3, Cormack et al.): the RRF constant")


DEFAULTS = DualPathParams()


class EntityHit(BaseModel):
    """A retrieved entity of ``R_E(q)`` with its weight ``sim * conf``."""

    entity_id: str
    name: str
    weight: float
    similarity: float
    confidence: float = 1.0
    mention: str = ""
    how: str = ""


class FactHit(BaseModel):
    """A fact (relation node) ranked by one path or by their fusion."""

    id: str
    score: float
    description: str = ""
    confidence: float = 1.0
    via: list[str] = Field(default_factory=list)  # entity path: the retrieved entities that reached it


class FactPaths(BaseModel):
    """Both paths and their fusion, best first."""

    entities: list[EntityHit] = Field(default_factory=list)
    entity_facts: list[FactHit] = Field(default_factory=list)  # F_E ranked by score_E
    relation_facts: list[FactHit] = Field(default_factory=list)  # R_R(q)
    fused: list[ScoredId] = Field(default_factory=list)  # R(q)


# ------------------------------------------------------------------------------------------ helpers


def node_confidence(node: Node | None) -> float:
    """A node's extraction confidence ``conf`` in [0, 1] (BiG-RAG §3); 1 when it has none (or an unreadable
    one)."""
    if node is None:
        return 1.0
    value = node.props.get("confidence")
    try:
        conf = float(value) if value is not None else 1.0
    except (TypeError, ValueError):
        return 1.0
    return min(max(conf, 0.0), 1.0)


def in_allowed(doc_ids: Iterable[str], allowed: set[str] | None) -> bool:
    """Whether a node or edge with these ``doc_ids`` belongs to an allowed document (None: no filter)."""
    return allowed is None or any(d in allowed for d in doc_ids)


def _by_score(hits: Iterable[FactHit]) -> list[FactHit]:
    return sorted(hits, key=lambda h: (-round(h.score, 12), h.id))


def fact_descriptions(ctx: RetrievalContext, fact_ids: Iterable[str]) -> dict[str, str]:
    """The descriptions of the listed facts (one batched read: the index holds no text)."""
    wanted = list(dict.fromkeys(fact_ids))
    return {n.id: str(n.props.get("description") or "") for n in ctx.graph.get_nodes(wanted)} if wanted else {}


# ------------------------------------------------------------------------------------------ entity path


def link_entities(
    ctx: RetrievalContext, query: str, params: DualPathParams = DEFAULTS
) -> list[LinkedEntity]:
    """``V_q`` linked to the graph: exact name/alias matches and each spaCy mention's top-``k_E`` similar
    entities at cosine >= ``entity_min_sim`` (BiG-RAG §4.2.1 steps 1-2, the LLM extraction replaced by
    query linking)."""
    return link_query(ctx, query, top_k=params.k_entities, min_score=params.entity_min_sim).entities


def entity_path(
    ctx: RetrievalContext,
    linked: Sequence[LinkedEntity],
    allowed: set[str] | None = None,
) -> tuple[list[EntityHit], list[FactHit]]:
    """``R_E(q)`` weighted ``sim * e.conf`` and ``F_E`` ranked by ``score_E(r) = r.conf * sum w(e)/deg(e)``
    over the retrieved entities joined to ``r`` (BiG-RAG §4.2.1 steps 2-3; see the module docstring).
    Entities and facts of documents outside ``allowed`` are left out (None: no filter)."""
    if not linked:
        return [], []
    ix = ctx.index()
    nodes = {n.id: n for n in ctx.graph.get_nodes([e.entity_id for e in linked])}
    entities: list[EntityHit] = []
    for link in linked:
        node = nodes.get(link.entity_id)
        if node is None or node.label != NodeLabel.ENTITY or not in_allowed(node.doc_ids, allowed):
            continue
        conf = node_confidence(node)
        entities.append(
            EntityHit(
                entity_id=link.entity_id,
                name=str(node.props.get("name") or link.name),
                weight=link.score * conf,
                similarity=link.score,
                confidence=conf,
                mention=link.mention,
                how=link.how,
            )
        )
    entities.sort(key=lambda e: (-round(e.weight, 12), e.entity_id))
    sums: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for entity in entities:
        # the entity's facts in allowed documents: its bipartite edges in the (filtered) graph
        fact_ids = [
            f for f in ix.facts_of_entity(entity.entity_id) if in_allowed(ix.fact_docs[ix.facts.pos[f]], allowed)
        ]
        for fact_id in fact_ids:
            # one random-walk step: w(e) spread evenly over e's facts
            sums[fact_id] = sums.get(fact_id, 0.0) + entity.weight / len(fact_ids)
            via.setdefault(fact_id, []).append(entity.entity_id)
    conf = {fid: float(ix.fact_confidence[ix.facts.pos[fid]]) for fid in sums}
    facts = [FactHit(id=fid, score=conf[fid] * total, confidence=conf[fid], via=via[fid]) for fid, total in sums.items()]
    return entities, _by_score(facts)


# ------------------------------------------------------------------------------------------ relation path


def relation_path(
    ctx: RetrievalContext,
    query: str,
    k_relations: int = DEFAULTS.k_relations,
    filters: Filters | None = None,
    pool: int = DEFAULTS.relation_pool,
) -> list[FactHit]:
    """``R_R(q) = Top-k_R [sim(phi(q), phi(r)) * r.conf]`` over the ``facts`` collection, metadata-filtered
    (BiG-RAG §4.2.2)."""
    if k_relations <= 0:
        return []
    hits = ctx.vectors.query(
        "facts", embedding=ctx.query_vector(query), k=k_relations * pool, filters=vector_filters(filters)
    )
    allowed = ctx.allowed_docs(filters)
    ix = ctx.index()
    out: list[FactHit] = []
    for hit in hits:
        j = ix.facts.pos.get(hit.id)
        if j is None or not in_allowed(ix.fact_docs[j], allowed):
            continue  # a stale vector row, or a fact shared with a filtered-out document only
        conf = float(ix.fact_confidence[j])
        out.append(FactHit(id=hit.id, score=hit.score * conf, confidence=conf))
    return _by_score(out)[:k_relations]


# ------------------------------------------------------------------------------------------ fusion


def fuse_facts(
    entity_ranking: Sequence[str],
    relation_ranking: Sequence[str],
    k: int = RRF_K,
    limit: int | None = None,
) -> list[ScoredId]:
    """BiG-RAG §4.2.3: ``Score(r) = 1/(rank_E(r) + k) + 1/(rank_R(r) + k)`` with 1-based ranks (an absent
    rank adds nothing), best ``limit`` facts, ties by id."""
    return rrf([list(entity_ranking), list(relation_ranking)], k=k, limit=limit)


def fact_paths(
    ctx: RetrievalContext,
    query: str,
    params: DualPathParams = DEFAULTS,
    filters: Filters | None = None,
    limit: int | None = None,
) -> FactPaths:
    """Both paths and their fused top ``limit`` facts (default ``params.k_facts``)."""
    allowed = ctx.allowed_docs(filters)
    entities, entity_facts = entity_path(ctx, link_entities(ctx, query, params), allowed)
    relation_facts = relation_path(ctx, query, params.k_relations, filters, params.relation_pool)
    fused = fuse_facts(
        [f.id for f in entity_facts],
        [f.id for f in relation_facts],
        k=params.rrf_k,
        limit=params.k_facts if limit is None else limit,
    )
    return FactPaths(entities=entities, entity_facts=entity_facts, relation_facts=relation_facts, fused=fused)


# ------------------------------------------------------------------------------------------ passages


class FactSupport(BaseModel):
    """The fused facts' neighbourhood: their entities (IN_FACT) and source chunks (SUPPORTED_BY)."""

    entities: dict[str, list[str]] = Field(default_factory=dict)  # fact id -> entity ids
    names: dict[str, str] = Field(default_factory=dict)  # entity id -> name
    chunks: dict[str, list[str]] = Field(default_factory=dict)  # fact id -> chunk ids (allowed documents)


def fact_support(ctx: RetrievalContext, fact_ids: Sequence[str], allowed: set[str] | None = None) -> FactSupport:
    """Entities (``IN_FACT``) and supporting chunks (``SUPPORTED_BY``) of ``fact_ids``, their nodes read
    in one batch; chunks of documents outside ``allowed`` are dropped."""
    if not fact_ids:
        return FactSupport()
    ix = ctx.index()
    entities_of = {f: ix.entities_of_fact(f) for f in fact_ids}
    chunks_of = {f: ix.chunks_of_fact(f) for f in fact_ids}
    entity_ids = sorted({e for es in entities_of.values() for e in es})
    chunk_ids = sorted({c for cs in chunks_of.values() for c in cs})
    nodes = {n.id: n for n in ctx.graph.get_nodes([*entity_ids, *chunk_ids])}
    names = {e: str(n.props.get("name") or e) for e in entity_ids if (n := nodes.get(e)) is not None}
    chunks = {
        c
        for c in chunk_ids
        if (n := nodes.get(c)) is not None
        and n.label == NodeLabel.CHUNK
        and (allowed is None or chunk_doc_id(n) in allowed)
    }
    out = FactSupport(names=names)
    for f in fact_ids:
        if ents := [e for e in entities_of[f] if e in names]:
            out.entities[f] = ents
        if cs := [c for c in chunks_of[f] if c in chunks]:
            out.chunks[f] = cs
    return out


def chunks_from_facts(fused: Sequence[ScoredId], support: Mapping[str, Sequence[str]]) -> list[Scored]:
    """A chunk's score is the sum of the fused scores of the facts it supports (``support``: fact id ->
    chunk ids); best first, ties by id; ``via`` lists those facts, best first."""
    scores: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for fact in fused:
        for chunk_id in support.get(fact.id, ()):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + fact.score
            via.setdefault(chunk_id, []).append(fact.id)
    return [Scored(id=s.id, score=s.score, via=via[s.id]) for s in ranked(scores)]


def fuse_rankings(rankings: Sequence[Sequence[ScoredId | Scored]], k: int = RRF_K) -> list[Scored]:
    """RRF (§4.2.3, 1-based ranks, ties by id) of several chunk rankings; a fused chunk keeps the ``via`` of
    the first ranking that gives it one (the graph items that put it there)."""
    via: dict[str, list[str]] = {}
    for ranking in rankings:
        for item in ranking:
            if isinstance(item, Scored) and item.via:
                via.setdefault(item.id, item.via)
    fused = rrf([[item.id for item in ranking] for ranking in rankings], k=k)
    return [Scored(id=s.id, score=s.score, via=list(via.get(s.id, []))) for s in fused]


def passage_ranking(
    fact_chunks: Sequence[Scored], dense: Sequence[ScoredId], k: int = RRF_K
) -> list[Scored]:
    """RRF of the fact-derived chunk list and the dense chunk list (so chunks without facts stay
    reachable); ``via`` keeps the facts that supported a chunk."""
    return fuse_rankings([fact_chunks, dense], k=k)


# ------------------------------------------------------------------------------------------ retriever


def retrieve(
    ctx: RetrievalContext,
    query: str,
    k: int = 10,
    filters: Filters | None = None,
    params: DualPathParams = DEFAULTS,
) -> RetrievalResult:
    allowed = ctx.allowed_docs(filters)
    paths = fact_paths(ctx, query, params, filters, limit=max(params.k_facts, k))
    support = fact_support(ctx, [f.id for f in paths.fused], allowed)
    fact_chunks = chunks_from_facts(paths.fused, support.chunks)
    dense = ctx.chunk_scores(query, max(params.dense_depth, k), filters)
    passages = passage_ranking(fact_chunks, dense, k=params.rrf_k)
    return RetrievalResult(
        strategy=NAME,
        query=query,
        k=k,
        evidence=ctx.evidence(passages, k, filters),
        context=_context(paths, support, params, fact_descriptions(ctx, [f.id for f in paths.fused])),
    )


def _context(paths: FactPaths, support: FactSupport, params: DualPathParams, described: Mapping[str, str]) -> dict:
    rank_e = {f.id: i for i, f in enumerate(paths.entity_facts, start=1)}
    rank_r = {f.id: i for i, f in enumerate(paths.relation_facts, start=1)}
    facts = []
    for fact in paths.fused:
        ents = support.entities.get(fact.id, [])
        facts.append(
            {
                "id": fact.id,
                "description": described.get(fact.id, ""),
                "score": fact.score,
                "entities": [support.names.get(e, e) for e in ents],
                "entity_ids": ents,
                "chunks": support.chunks.get(fact.id, []),
                "rank_entity_path": rank_e.get(fact.id),
                "rank_relation_path": rank_r.get(fact.id),
            }
        )
    return {
        "entities": [e.model_dump() for e in paths.entities],
        "facts": facts,
        "entity_path_facts": len(paths.entity_facts),
        "relation_path_facts": len(paths.relation_facts),
        "params": params.model_dump(),
    }

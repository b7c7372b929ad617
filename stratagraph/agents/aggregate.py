"""BAG-RAG's bottom-up generation (§3.2, eq. 4) inside the sections the top-down screening kept.

The instance nodes ``F^i`` are the entities and facts of the kept sections' chunks
(:func:`stratagraph.retrieval.bottom_up.instance_graph`); Leiden communities partition them; a community's
relevance ``Rel(C, Q)`` is the cosine of the question and its facts' mean vector, and the communities
reaching ``tau_Q`` (relative to the best, floored) are gathered layer by layer up the kept section tree into
``Context(Q)``. Evidence: the kept chunks supporting the relevant communities' facts, fused by reciprocal
rank fusion with the kept sections' chunks and the dense list (as the ``bottom_up`` retriever does, but
inside the sections *this run's* screening kept, the chat model's when there is one). The kept sections'
chunks are also handed on (``instance_chunks``): the calculation reads their tables whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratagraph.agents.common import Step, agent_node
from stratagraph.retrieval import bottom_up, top_down
from stratagraph.retrieval.base import rrf
from stratagraph.retrieval.bottom_up import BottomUpParams, Community, ScoredFact
from stratagraph.retrieval.calibration import cosine_floors

__all__ = ["aggregate", "context_text"]

#: chunks of the fused ranking that join the kept sections' as what the calculation reads (ours)
POOL_DEPTH = 30
#: communities and facts written into Context(Q) for the chat model (ours)
CONTEXT_COMMUNITIES, CONTEXT_FACTS = 8, 8


# ------------------------------------------------------------------------------------------ aggregate (eq. 4)
@agent_node("aggregate")
def aggregate(state: dict, step: Step) -> dict:
    """BAG-RAG eq. 4: communities of the instance nodes under the kept sections, the relevant ones gathered
    layer by layer up the section tree; the chunks supporting them as evidence."""
    ctx = step.ctx
    question = step.question
    index = top_down.section_index(ctx)
    kept_ids = [s for s in state.get("kept_sections") or [] if s in index.pos]
    kept = {index.pos[s] for s in kept_ids}
    chunks = [index.chunk_ids[j] for s in sorted(kept) for j in index.own_chunks[s]]
    params = BottomUpParams(tau_q_floor=cosine_floors(ctx).community)
    qvec = ctx.query_vector(question)

    def communities_of(**_: Any) -> tuple[Any, list[Any], list[bottom_up.ScoredCommunity], float]:
        graph = bottom_up.instance_graph(bottom_up.instance_index(ctx), chunks)
        found = bottom_up.detect_communities(graph, params.seed, params.resolution)
        vectors = bottom_up.fact_vectors(ctx, sorted(graph.facts))
        survivors, tau = bottom_up.relevant(bottom_up.score_communities(found, graph.facts, vectors, qvec), params)
        return graph, found, survivors, tau

    graph, found, survivors, tau = step.call(
        "bottom_up.communities",
        communities_of,
        summary=lambda r: f"{len(r[0].nodes)} instance nodes, {len(r[1])} communities, {len(r[2])} relevant",
        kept_sections=len(kept_ids),
    )
    facts = _fact_texts(step, [f for c in survivors for f in c.facts])
    communities = [_community(index, graph, c, kept, facts) for c in survivors]
    layers = bottom_up.aggregate(index, communities, kept)

    qs = top_down.query_scores(index, qvec, ctx.allowed_docs(step.filters))
    depth = max(params.depth, step.k)
    structural = top_down.structural_ranking(index, qs, kept_ids, depth)
    dense = ctx.chunk_scores(question, depth, step.filters)
    ranking = bottom_up.evidence_ranking(graph, survivors, depth)
    screened = rrf([[h.id for h in structural], [h.id for h in dense]])
    fused = rrf([[h.id for h in ranking], [h.id for h in screened]])
    evidence = ctx.evidence(fused, step.k, step.filters)

    step.decide(
        f"{len(graph.nodes)} instance nodes under {len(kept_ids)} kept sections, {len(found)} communities, "
        f"{len(communities)} reach tau_Q {tau:.3f}; {len(evidence)} evidence chunks"
    )
    return {
        "evidence": evidence,
        "communities": [c.model_dump() for c in communities],
        "layers": [lv.model_dump() for lv in layers],
        "instance_chunks": list(dict.fromkeys([*chunks, *(h.id for h in fused[:POOL_DEPTH])])),
        "aggregated": context_text(communities),
    }


def _fact_texts(step: Step, fact_ids: Sequence[str]) -> dict[str, str]:
    from stratagraph.tools.knowledge import fact_details

    details = fact_details(step.ctx, list(dict.fromkeys(fact_ids)))
    return {f: str(info.node.props.get("description") or "") for f, info in details.items()}


def _community(index: Any, graph: Any, c: Any, kept: set[int], facts: dict[str, str]) -> Community:
    home = bottom_up.home_section(index, sorted({ch for m in c.members for ch in graph.chunks_of.get(m, [])}), kept)
    ordered = sorted(c.facts, key=lambda f: (-round(c.facts[f], 12), f))
    return Community(
        id=bottom_up.community_id(c.members),
        section=index.ids[home] if home is not None else None,
        title=index.titles[home] if home is not None else "",
        doc_id=index.doc_ids[home] if home is not None else None,
        depth=int(index.depth[home]) if home is not None else 0,
        score=round(c.score, 6),
        size=len(c.members),
        members=[],
        facts=[ScoredFact(id=f, description=facts.get(f, ""), score=round(c.facts[f], 6)) for f in ordered],
    )


def context_text(communities: Sequence[Community]) -> str:
    """``Context(Q)`` as the chat model reads it: the relevant communities' facts, by community."""
    if not communities:
        return ""
    lines = ["Aggregated context (communities of related facts in the relevant sections, most relevant first):"]
    for c in list(communities)[:CONTEXT_COMMUNITIES]:
        lines.append(f"- {c.title or 'across sections'} (relevance {c.score:.2f}):")
        lines += [f"    {f.description}" for f in c.facts[:CONTEXT_FACTS] if f.description]
    return "\n".join(lines)

"""The retrieve step of ``think_query_retrieve``: each query of the turn runs BiG-RAG's retrieval over the
entity-fact bipartite graph (§4.2 dual-path retrieval and §4.3.2 Algorithm 4, adaptive multi-hop traversal,
the ``traversal`` strategy that the ``traverse`` tool wraps) and what it found becomes the turn's evidence
and, for the chat model, its ``<knowledge>`` (§4.4.2: "Each <query> triggers dual-path retrieval over G_B,
with results returned in <knowledge> tags").

The walk uses the complexity-adaptive parameters of the *question* the turn serves (§4.3.4 table, from the
``decompose`` node's Algorithm 3 class: SIMPLE H=3 K=5, MODERATE H=10 K=15, COMPLEX H=5 K=10 per
sub-query), not the class of the query's own words: a bound sub-question of a COMPLEX question walks with
the COMPLEX per-sub-query parameters, as §4.3.3 prescribes. The ranked facts of the walk are fused with the
dense passage ranking by RRF (§4.2.3), so a passage outside the graph stays reachable.

Several queries in one turn (a model may ask for more than one) are run one after the other; their passages
are interleaved by rank (the first of each, then the second of each...) and the turn keeps ``k`` of them.
The trace names the walk's own candidate answers (§4.3.3's ExtractAnswer "simple heuristic": entities of
the top facts) next to what was retrieved. The knowledge a model reads lists the walk's best facts (their descriptions, :data:`KNOWLEDGE_FACTS` per
query) and the turn's passages not shown in an earlier turn (:data:`KNOWLEDGE_PASSAGES`, each cut at
:data:`KNOWLEDGE_CHARS` characters), numbered across turns, so that the conversation of four turns stays
well inside a small model's context. The same steps run without a chat model, minus the knowledge text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.think import Turn
from stratagraph.retrieval import traversal
from stratagraph.retrieval.base import Evidence, RetrievalResult
from stratagraph.retrieval.classify import TraversalParams

__all__ = ["KNOWLEDGE_CHARS", "KNOWLEDGE_FACTS", "KNOWLEDGE_PASSAGES", "interleave", "retrieve"]

KNOWLEDGE_FACTS = 5  # facts per query shown to the model
KNOWLEDGE_PASSAGES = 4  # new passages per turn shown to the model
KNOWLEDGE_CHARS = 700  # a passage is cut here in the knowledge text (the answer step reads it whole)


def interleave(lists: Sequence[Sequence[Evidence]], limit: int) -> list[Evidence]:
    """Round-robin by rank over several ranked lists, each chunk once, at most ``limit``."""
    out: list[Evidence] = []
    seen: set[str] = set()
    for rank in range(max((len(x) for x in lists), default=0)):
        for ranked in lists:
            if rank < len(ranked) and ranked[rank].chunk_id not in seen:
                seen.add(ranked[rank].chunk_id)
                out.append(ranked[rank])
    return out[:limit]


def _params(state: Mapping[str, Any]) -> TraversalParams | None:
    cls = state.get("classification") or {}
    if not cls.get("max_hops") and not cls.get("target_relations"):
        return None
    return TraversalParams(max_hops=int(cls.get("max_hops") or 0), target_relations=int(cls.get("target_relations") or 1))


def _summary(result: RetrievalResult) -> str:
    return f"{len(result.evidence)} chunks: " + ", ".join(e.chunk_id for e in result.evidence[:5])


def _facts(step: Step, result: RetrievalResult) -> list[str]:
    """The walk's best facts as text (the descriptions the ``traverse`` tool shows a model)."""
    from stratagraph.tools.search import traversal_summary

    _, docs = traversal_summary(step.ctx, result.context)
    out: list[str] = []
    for d in docs:
        text = " ".join(d.page_content.split())
        if text and text not in out:
            out.append(text)
    return out[:KNOWLEDGE_FACTS]


def _knowledge(facts: Sequence[str], passages: Sequence[tuple[int, Evidence]], repeated: int) -> str:
    lines: list[str] = []
    if facts:
        lines.append("Facts:")
        lines.extend(f"- {f}" for f in facts)
    if passages:
        lines.append("Passages:")
        for n, e in passages:
            text = " ".join(e.text.split())
            if len(text) > KNOWLEDGE_CHARS:
                text = text[: KNOWLEDGE_CHARS - 1].rsplit(" ", 1)[0] + "…"
            where = e.section or e.title
            lines.append(f"[{n}] {where}: {text}")
    if repeated:
        lines.append(f"({repeated} more passage(s) found were shown in an earlier turn.)")
    return "\n".join(lines) if lines else "Nothing was found for this query."


@agent_node("retrieve")
def retrieve(state: Mapping[str, Any], step: Step) -> dict[str, Any]:
    """Run the turn's queries: dual-path retrieval and Alg. 4 traversal with the question's adaptive
    parameters, passages fused by RRF; the turn's evidence and, with a chat model, its <knowledge>."""
    turns: list[Turn] = list(state.get("turns") or [])
    queries = [q for q in state.get("pending") or [] if q.strip()]
    if not turns or not queries:
        step.decide("nothing to retrieve")
        return {"pending": []}
    turn = turns[-1]
    params = _params(state)
    ranked: list[list[Evidence]] = []
    facts: list[str] = []
    candidates: list[str] = []
    for query in queries:
        args: dict[str, Any] = {"query": query, "k": step.k}
        if params is not None:
            args |= {"max_hops": params.max_hops, "target_relations": params.target_relations}
        result: RetrievalResult = step.call(
            "traverse",
            lambda **a: traversal.retrieve(step.ctx, a["query"], k=a["k"], filters=step.filters, params=params),
            _summary,
            **args,
        )
        ranked.append(result.evidence)
        runs = result.context.get("runs") or []
        if runs:
            candidates.extend(str(b.get("name")) for b in runs[-1].get("bindings") or [] if b.get("name"))
        if step.llm is not None:
            facts.extend(f for f in _facts(step, result) if f not in facts)
    evidence = interleave(ranked, step.k)
    knowledge = ""
    if step.llm is not None:
        shown = [c for t in turns[:-1] for c in t.shown]
        fresh = [e for e in evidence if e.chunk_id not in shown][:KNOWLEDGE_PASSAGES]
        numbered = list(enumerate(fresh, start=len(shown) + 1))
        repeated = len([e for e in evidence[:KNOWLEDGE_PASSAGES] if e.chunk_id in shown])
        knowledge = _knowledge(facts, numbered, repeated)
        shown_now = [e.chunk_id for e in fresh]
    else:
        shown_now = []
    top = evidence[0] if evidence else None
    step.decide(
        f"turn {turn.n}: {len(evidence)} passages for {'; '.join(repr(q) for q in queries)}"
        + (f", best {top.section or top.title} ({top.chunk_id})" if top else "")
        + (f"; {len(facts)} facts" if facts else "")
        + (f"; the walk's candidate answers: {', '.join(list(dict.fromkeys(candidates))[:3])}" if candidates else "")
    )
    turns[-1] = turn.model_copy(update={"evidence": evidence, "facts": facts, "knowledge": knowledge, "shown": shown_now,
                                        "candidates": list(dict.fromkeys(candidates))})  # fmt: skip
    return {"turns": turns, "pending": [], "evidence": evidence}

"""Retrieval steps that gather evidence for an answer (HybridRAG §4.2-4.4; the other workflows' own
retrieval steps live with their jobs): each calls a retrieval strategy through the step's tool layer and adds
what it found to ``evidence`` and to the state keys the answer reads."""

from __future__ import annotations

from stratagraph.agents.common import Step, agent_node

__all__ = ["graph_context", "vector_context"]


@agent_node("vector_context")
def vector_context(state: dict, step: Step) -> dict:
    """HybridRAG §4.2, VectorRAG: the top chunks by embedding similarity, metadata-filtered."""
    evidence = step.retrieve("vector", step.question)
    step.decide(f"{len(evidence)} chunks by similarity" + (f", filtered by {step.filters}" if step.filters else ""))
    return {"evidence": evidence}


@agent_node("graph_context")
def graph_context(state: dict, step: Step) -> dict:
    """HybridRAG §4.3, GraphRAG: the facts and the one-hop triples of the entities the question names, and
    the chunks that support them, after the vector context (§4.4: the two contexts concatenated in that
    order)."""
    from stratagraph.retrieval import retrieve

    result = step.call(
        "retrieve:hybrid",
        lambda **a: retrieve(step.ctx, "hybrid", a["query"], k=a["k"], filters=step.filters),
        summary=lambda r: f"{len(r.context['graph_context']['facts'])} facts, "
        f"{len(r.context['graph_context']['triples'])} triples",
        query=step.question,
        k=step.k,
    )
    graph = result.context["graph_context"]
    lines = [f"- {f['description']}" for f in graph["facts"][:20]]
    lines += [f"- {t['subject']} {t['predicate'].replace('_', ' ')} {t['object']}" for t in graph["triples"][:20]]
    named = ", ".join(e["name"] for e in graph["entities"]) or "none"
    step.decide(f"entities {named}: {len(graph['facts'])} facts, {len(graph['triples'])} triples")
    text = "Knowledge graph context (facts and relations of the entities the question names):\n" + "\n".join(lines) if lines else ""
    return {"evidence": result.evidence, "graph_text": text}

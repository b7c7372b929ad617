"""KAG's generator (KAG §2.3, Alg. 1 line 16: ``answer <- Generator(query, memory)``): the answer to the
question from what the rounds bound.

* A question about a work through the document that cites it (agents/cite.py) is answered from the cited
  document, whatever the rounds bound (their names lead to the citing document and its own figures).
* The ``Output`` variable holds a found value: that is the answer, with its citations (a computation made in
  code, a choice decided in code, a reading of the reader or a sub-answer of the chat model, grounded).
* Otherwise, with a chat model: its grounded answer over all the evidence the rounds gathered (the found
  steps' chunks first), with the memory as context; the reader is its fallback.
* Otherwise: "not found". A question whose plan the rounds could not complete is not answered from the
  leftovers: a number read off the evidence is not a sum, and a span of the evidence is not a hop the chain
  failed to make.
"""

from __future__ import annotations

from stratagraph.agents.answer import answer_from_evidence, citation_of
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.memory import Binding, memory_text
from stratagraph.answers import NOT_FOUND, Answer

__all__ = ["STRATEGY", "generate"]

STRATEGY = "kag"


@agent_node("answer")
def generate(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 16: the answer from the memory (module docstring)."""
    bindings: dict[str, Binding] = dict(state.get("bindings") or {})
    hop = citation_of(step, step.question)
    if hop is not None:
        step.decide("the question asks about a cited work: it is answered from the cited document")
        return {"answer": answer_from_evidence(step, list(state.get("evidence") or []), STRATEGY, hop=hop)}
    out = bindings.get(str(state.get("output") or ""))
    if out is not None and out.found:
        step.decide(f"the output {out.var} = {out.text!r} ({out.answer_kind}, {out.source})")
        return {"answer": Answer(question=step.question, answer=out.text, found=True, kind=out.answer_kind,
                                 citations=out.citations, computed=out.computation, strategy=STRATEGY)}  # fmt: skip
    if step.llm is not None:
        evidence = list(state.get("evidence") or [])
        first = {c for b in bindings.values() if b.found for c in b.evidence}
        evidence.sort(key=lambda e: e.chunk_id not in first)  # stable: the found steps' chunks first, in order
        memory = memory_text([m for m in state.get("memory") or [] if m.found])
        step.decide("no output bound: the model answers from all the evidence gathered")
        return {"answer": answer_from_evidence(step, evidence, STRATEGY,
                                               context=f"What is known so far:\n{memory}" if memory else "")}  # fmt: skip
    step.decide(f"no output bound ({out.note if out is not None else 'no Output step ran'}): not found")
    return {"answer": Answer(question=step.question, answer=NOT_FOUND, found=False, strategy=STRATEGY)}

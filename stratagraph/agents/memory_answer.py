"""KAG's generator (KAG §2.3, Alg. 1 line 16: ``answer <- Generator(query, memory)``): the answer to the
question from what the rounds bound.

* The ``Output`` variable holds a computation made in code (Math, Sort, Deduce): that is the answer, every
  operand cited (:func:`stratagraph.agents.answer.answer_from_evidence`'s first rule).
* It holds one found text answer (the extracted span, or the chat model's sub-answer quoted from the passages
  it named): that is the answer, with its citations.
* A ``Math`` or ``Sort`` whose operands were not all found: "not found" (one number read off the evidence is
  not a sum or a difference); so is a choice or yes/no ``Deduce`` that the evidence did not settle, without a
  chat model (a span picked by its answer type would not be one of the options).
* Otherwise (nothing found, or several outputs): the shared answer policy over all the evidence the rounds
  gathered, the chunks of the found steps first, with the memory as context for the chat model; without
  one, a choice or yes/no decided in code, else the extracted span, else "not found".
"""

from __future__ import annotations

from stratagraph.agents.answer import answer_from_evidence
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.memory import Binding, memory_text
from stratagraph.answers import NOT_FOUND, Answer

__all__ = ["STRATEGY", "generate"]

STRATEGY = "kag"
_COMPUTED = frozenset({"math", "sort", "deduce"})


@agent_node("answer")
def generate(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 16: the answer from the memory (module docstring)."""
    bindings: dict[str, Binding] = dict(state.get("bindings") or {})
    out = bindings.get(str(state.get("output") or ""))
    if out is not None and out.found and out.computation is not None:
        return {"answer": answer_from_evidence(step, [], STRATEGY, computed=out.computation, computed_answer=out.text)}
    if out is not None and out.found and out.citations and out.kind in ("text", "amount") and "; " not in out.text:
        step.decide(f"the output {out.var} = {out.text!r} ({out.source})")
        return {"answer": Answer(question=step.question, answer=out.text, found=True, citations=out.citations,
                                 strategy=STRATEGY)}  # fmt: skip
    plan = state.get("plan") or []
    source = next((s for s in plan if s.action == "output"), None)
    computing = next((s for s in plan if source is not None and s.var in source.inputs and s.action in _COMPUTED), None)
    if computing is not None and (computing.action != "deduce" or step.llm is None):
        step.decide(f"{computing.render()} found no answer ({out.note if out is not None else 'unbound'}): not found")
        return {"answer": Answer(question=step.question, answer=NOT_FOUND, found=False, strategy=STRATEGY)}
    evidence = list(state.get("evidence") or [])
    first = {c for b in bindings.values() if b.found for c in b.evidence}
    evidence.sort(key=lambda e: e.chunk_id not in first)  # stable: the found steps' chunks first, in order
    last = next((s for s in reversed(plan) if s.action == "retrieval"), None)
    focus = None
    if last is not None and last.var in bindings and all(v in bindings and bindings[v].found for v in last.needs()):
        focus = bindings[last.var].question or None
    memory = memory_text([m for m in state.get("memory") or [] if m.found])
    step.decide("no output bound: answering from all the evidence gathered" if out is None or not out.found
                else "several outputs: answering from all the evidence gathered")  # fmt: skip
    return {"answer": answer_from_evidence(step, evidence, STRATEGY, focus=focus,
                                           context=f"What is known so far:\n{memory}" if memory else "")}  # fmt: skip

"""KAG's judge and reflection (KAG §2.3, Alg. 1 lines 12-13, after ReSP): ``if not Judge(query, memory)
then query_cur <- SupplyQuery(query, memory)``, and another round of planning and reasoning starts, at most
``settings.kag_max_rounds`` rounds in all.

``judge``: with a chat model, the model reads the question and the memory (prompts ``kag_judge.system`` /
``kag_judge.user``, structured :class:`KagJudgement`). Without one, or without a usable reply, the coverage
rule: the question is answered when the ``Output`` variable is bound to a found value and

* it was computed in code (Math, Sort, Deduce: every operand was found with its key terms covered), or
* it is a text span and the memory covers at least :data:`JUDGE_COVERAGE` of the question's key terms (its
  proper nouns, numbers and periods), counting the bound answers, their quotes and the section paths of the
  chunks they cite.

``reflect``: with a chat model, the model writes the supplementary question (prompts ``kag_reflect.system``
/ ``kag_reflect.user``, structured :class:`KagSupplement`); a reply that repeats a question already asked
falls back to the rule. The rule: the first ``Retrieval`` of the round that found nothing is asked again as a
widened retrieval (its sub-question with the variables bound so far); when that was asked already, or every
retrieval found something but the text answer is not judged sufficient, the whole question is asked as one
widened retrieval binding the answer's variable; a choice or yes/no ``Deduce`` that could not decide is run
again with the evidence of the whole question (asked as one widened retrieval) added to its operands'; a Math
whose operands turned out to be one amount (the coordination named one thing, "Streets and Bridges") gives
way to the whole question asked as one amount. A question already asked is not asked again: when nothing new is left to ask, the rounds
end and the answer is generated from the memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.execute import SAME_AMOUNT
from stratagraph.agents.memory import Binding, bind, memory_text
from stratagraph.agents.operands import stems
from stratagraph.agents.plan import LogicalForm
from stratagraph.prompts import load_prompt

__all__ = ["JUDGE_COVERAGE", "KagJudgement", "KagSupplement", "covered", "judge", "reflect"]

#: the rebinding that adds the whole question's evidence to a Deduce that could not decide
EVIDENCE = "evidence"
#: the rebinding that asks the whole question as one amount (Math found its operands to be one amount)
LOOKUP = "lookup"
#: the least share of the question's key terms the memory must cover for a text answer to count (ours)
JUDGE_COVERAGE = 2 / 3


class KagJudgement(BaseModel):
    """The chat model's judgement of the memory."""

    answered: bool = Field(description="true when the known facts answer the original question")
    missing: str = Field("", description="what is still unknown, in a few words (empty when answered)")


class KagSupplement(BaseModel):
    """The chat model's supplementary question."""

    question: str = Field(description="one question whose answer supplies what is still missing")


def _key_terms(step: Step) -> set[str]:
    """The question's proper nouns, numbers and periods, stemmed."""
    from stratagraph.retrieval.decompose import parse

    doc = parse(step.ctx, step.question)
    words = [t.text for t in doc if t.pos_ in ("PROPN", "NUM") or t.like_num]
    return set(stems(" ".join(words)))


def covered(step: Step, bindings: Mapping[str, Binding]) -> tuple[float, list[str]]:
    """The share of the question's key terms the found bindings cover, and the ones they miss."""
    keys = _key_terms(step)
    if not keys:
        return 1.0, []
    seen: set[str] = set()
    for b in bindings.values():
        if not b.found:
            continue
        seen |= stems(b.text)
        for c in b.citations:
            seen |= stems(f"{c.quote} {c.section}")
    missing = sorted(keys - seen)
    return (len(keys) - len(missing)) / len(keys), missing


def _rule_judgement(step: Step, out: Binding | None, bindings: Mapping[str, Binding]) -> tuple[bool, str]:
    if out is None or not out.found:
        return False, "the output is not bound" if out is None else f"the output is not found ({out.note})"
    if out.kind == "computed":
        return True, f"computed in code: {out.text}"
    share, missing = covered(step, bindings)
    if share >= JUDGE_COVERAGE:
        return True, f"the memory covers {share:.0%} of the question's key terms"
    return False, f"the memory covers {share:.0%} of the question's key terms (missing {', '.join(missing)})"


@agent_node("judge")
def judge(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 12, ``Judge(query, memory)``: is the question answered (module docstring)?"""
    bindings: dict[str, Binding] = dict(state.get("bindings") or {})
    out = bindings.get(str(state.get("output") or ""))
    answered: bool | None = None
    if step.llm is not None:
        messages = [
            SystemMessage(content=load_prompt("kag_judge.system")),
            HumanMessage(
                content=load_prompt("kag_judge.user").format(
                    question=step.question,
                    memory=memory_text(state.get("memory") or []) or "(nothing)",
                    answer=(out.text if out is not None and out.found else "(none)"),
                )
            ),
        ]
        reply = step.ask(KagJudgement, messages, "judge")
        if reply is not None:
            answered = reply.answered
            step.decide("the model judges the question " + ("answered" if answered else f"not answered: {reply.missing}"))
    if answered is None:
        answered, why = _rule_judgement(step, out, bindings)
        step.decide(("answered: " if answered else "not answered: ") + why)
    rounds = step.svc.settings.kag_max_rounds
    more = not answered and int(state.get("round") or 1) < rounds
    if not answered and not more:
        step.decide(f"round limit ({rounds}) reached")
    return {"answered": answered, "more_rounds": more}


def _supplementary(state: Mapping[str, Any], step: Step) -> tuple[str, str] | None:
    """The rule's supplementary question and the variable it rebinds (module docstring), or None."""
    plan: Sequence[LogicalForm] = state.get("plan") or []
    bindings: Mapping[str, Binding] = state.get("bindings") or {}
    tried = set(state.get("tried") or [])
    retrievals = [s for s in plan if s.action == "retrieval"]
    unresolved = next((s for s in retrievals if not (bindings.get(s.var) and bindings[s.var].found)), None)
    if unresolved is not None:
        question = bind(unresolved.question, bindings)
        if question and question not in tried:
            return question, unresolved.var
    out = bindings.get(str(state.get("output") or ""))
    source = next((s for s in plan if s.action == "output"), None)
    decider = next((s for s in plan if source is not None and s.var in source.inputs and s.action == "deduce"), None)
    if decider is not None and decider.operation in ("choice", "entailment") and not (out and out.found):
        return (step.question, EVIDENCE) if step.question not in tried else None
    math = next((s for s in plan if source is not None and s.var in source.inputs and s.action == "math"), None)
    failed = bindings.get(math.var) if math is not None else None
    if failed is not None and SAME_AMOUNT in failed.note:
        return (step.question, LOOKUP) if step.question not in tried else None
    if (out is not None and out.kind == "computed") or not retrievals:
        return None
    last = retrievals[-1]
    if last.target not in ("text", "number") or step.question in tried:
        return None
    return step.question, last.var


@agent_node("reflect")
def reflect(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 13, ``query_cur <- SupplyQuery(query, memory)`` (module docstring); an empty
    ``query_cur`` ends the rounds."""
    tried = list(state.get("tried") or [])
    question = ""
    rebind = ""
    if step.llm is not None:
        messages = [
            SystemMessage(content=load_prompt("kag_reflect.system")),
            HumanMessage(
                content=load_prompt("kag_reflect.user").format(
                    question=step.question,
                    memory=memory_text(state.get("memory") or []) or "(nothing)",
                    asked="\n".join(f"- {q}" for q in [step.question, *tried]),
                )
            ),
        ]
        reply = step.ask(KagSupplement, messages, "supplementary question")
        if reply is not None:
            text = " ".join(reply.question.split())
            if text and text not in tried and text != step.question:
                question = text
                step.decide(f"the model asks: {question!r}")
            else:
                step.fallbacks.append("supplementary question: the model repeats a question already asked")
    if not question:
        found = _supplementary(state, step)
        if found is None:
            step.decide("nothing new to ask: the rounds end")
            return {"query_cur": ""}
        question, rebind = found
        step.decide(f"rule: ask {question!r} again, widened, for {rebind}")
    return {"query_cur": question, "rebind": rebind, "tried": [*tried, question]}


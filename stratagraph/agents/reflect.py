"""KAG's judge and reflection (KAG §2.3, Alg. 1 lines 12-13, after ReSP): ``if not Judge(query, memory)
then query_cur <- SupplyQuery(query, memory)``, and another round of planning and reasoning starts, at most
``settings.kag_max_rounds`` rounds in all.

``judge``: with a chat model, the model reads the question and the memory (prompt ``kag_judge``, structured
:class:`KagJudgement`). Without one, or without a usable reply, the question is answered when the ``Output``
variable is bound to a found value: computed in code (every operand found and cited), a choice decided in
code, or a reading the reader accepted (a span of the type the question asks for, in a sentence or row
about its names, or that sentence; a heading), and the output's type is the one the *question* asks for
(a plan's last step may ask something else: "which section ..." is not answered by a place). Nothing
else counts: a memory that merely mentions the question's words is no answer.

``reflect``: with a chat model, the model writes the supplementary question (prompt ``kag_reflect``,
structured :class:`KagSupplement`); a reply that repeats a question already asked falls back to the rule.
The rule: the first ``Retrieval`` of the round that found nothing is asked again, widened (its sub-question
with the variables bound so far, over the ``default`` retriever's chunks); when it was asked already and the
output is still unbound, the whole question once, widened, as one reading; a question already asked is not
asked again, so when nothing new is left the rounds end and the answer is generated from the memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.memory import Binding, bind, memory_text
from stratagraph.agents.plan import LogicalForm

__all__ = ["KagJudgement", "KagSupplement", "judge", "reflect"]

#: the variable a reflection binds when it asks the whole question again as one reading
WHOLE = "whole"


class KagJudgement(BaseModel):
    """The chat model's judgement of the memory."""

    answered: bool = Field(description="true when the known facts answer the original question")
    missing: str = Field("", description="what is still unknown, in a few words (empty when answered)")


class KagSupplement(BaseModel):
    """The chat model's supplementary question."""

    question: str = Field(description="one question whose answer supplies what is still missing")


def _rule_judgement(out: Binding | None, question: str) -> tuple[bool, str]:
    if out is None:
        return False, "the output is not bound"
    if not out.found:
        return False, f"the output is not found ({out.note})"
    misfit = _misfit(out, question)
    if misfit:
        return False, misfit
    if out.answer_kind in ("computed", "choice") and out.source == "code":
        return True, f"computed in code: {out.text}"
    return True, f"{out.answer_kind} {out.text!r} of the type asked, read from evidence about the question ({out.source})"


def _misfit(out: Binding, question: str) -> str:
    """Why the output is not of the type the question asks for ("" when it is): a section question takes a
    heading, a number question a number, a person, place, organisation or date question a span of that type
    (or the sentence that states it); a plan's last step may have asked something else."""
    from stratagraph.reading import frame_of
    from stratagraph.text.question import AnswerType

    want = frame_of(question).type
    if out.source == "model" or out.answer_kind == "sentence" or want in (AnswerType.THING, AnswerType.REASON, AnswerType.CHOICE, AnswerType.YES_NO):
        return ""
    if want == AnswerType.SECTION:
        return "" if out.answer_kind == "section" else f"a {out.answer_kind} {out.text!r} is no section"
    got = "number" if out.answer_kind == "computed" or out.type == "number" else out.type
    if got != want.value:
        return f"the output {out.text!r} is a {got or out.answer_kind}, the question asks for a {want.value}"
    return ""


@agent_node("judge")
def judge(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 12, ``Judge(query, memory)``: is the question answered (module docstring)?"""
    bindings: dict[str, Binding] = dict(state.get("bindings") or {})
    out = bindings.get(str(state.get("output") or ""))
    answered: bool | None = None
    if step.llm is not None:
        reply = step.ask_prompt("kag_judge", KagJudgement, question=step.question,
                                memory=memory_text(state.get("memory") or []) or "(nothing)",
                                answer=out.text if out is not None and out.found else "(none)")  # fmt: skip
        if reply is not None:
            answered = reply.answered
            step.decide("the model judges the question " + ("answered" if answered else f"not answered: {reply.missing}"))
    if answered is None:
        answered, why = _rule_judgement(out, step.question)
        step.decide(("answered: " if answered else "not answered: ") + why)
    rounds = step.svc.settings.kag_max_rounds
    more = not answered and int(state.get("round") or 1) < rounds
    if not answered and not more:
        step.decide(f"round limit ({rounds}) reached")
    return {"answered": answered, "more_rounds": more}


def _supplementary(state: Mapping[str, Any], step: Step) -> tuple[str, str] | None:
    """The rule's supplementary question and the variable it binds again (module docstring), or None."""
    plan: Sequence[LogicalForm] = state.get("plan") or []
    bindings: Mapping[str, Binding] = state.get("bindings") or {}
    tried = set(state.get("tried") or [])
    unresolved = next((s for s in plan if s.action == "retrieval" and not (bindings.get(s.var) and bindings[s.var].found)), None)
    if unresolved is not None:
        question = bind(unresolved.question, bindings)
        if question and question not in tried:
            return question, unresolved.var
    out = bindings.get(str(state.get("output") or ""))
    if (out is None or not out.found) and step.question not in tried:
        return step.question, WHOLE
    return None


@agent_node("reflect")
def reflect(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 13, ``query_cur <- SupplyQuery(query, memory)`` (module docstring); an empty
    ``query_cur`` ends the rounds."""
    tried = list(state.get("tried") or [])
    question = ""
    rebind = ""
    if step.llm is not None:
        reply = step.ask_prompt("kag_reflect", KagSupplement, question=step.question,
                                memory=memory_text(state.get("memory") or []) or "(nothing)",
                                asked="\n".join(f"- {q}" for q in [step.question, *tried]))  # fmt: skip
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


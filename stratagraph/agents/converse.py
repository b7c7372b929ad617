"""The conversation's own steps around the answering workflows (which the chat graph runs as subgraphs, wired
in ``workflows/chat.py``): ``why`` (an answer from the last answer's evidence), ``combine`` (what the
workflow's answers make of the message) and ``respond`` (the reply message).

* ``why``: a "why?" about the last answer is answered from that answer's cited chunks: with a chat model,
  its grounded answer; without one, the cause a sentence of them states (the reader's reason: a sentence about
  the question that says "because", "due to", "driven by"...), else "not found".
* ``combine``: one answer is the reply's; "compare that with X" gave two, and when both are amounts their
  difference is computed exactly (:func:`stratagraph.reading.arithmetic.compute`, both operands cited), else
  both are given. A question that starts with "why", without a chat model, is answered by the cause the
  workflow's own cited chunks state (a span of another type is no answer to "why").
* ``respond`` puts the full :class:`~stratagraph.answers.Answer` in the reply's ``response_metadata["answer"]``.
  The reply's text is the answer with its numbered citations; with a chat model it is first phrased as one or
  two conversational sentences (prompt ``reply``, streamed token by token under ``stream_mode="messages"``)
  from the answer and its quotes only, the citations listed after it. The conversation remembers each turn
  (:class:`~stratagraph.agents.rewrite.Turn`) for the next message's rewrite.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from stratagraph.agents.answer import answer_from_evidence, answer_of
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.rewrite import Turn, latest_message, subject_of
from stratagraph.answers import NOT_FOUND, Answer
from stratagraph.prompts import load_prompt
from stratagraph.reading.arithmetic import Figure, compute, render
from stratagraph.retrieval.base import Scored
from stratagraph.text.amounts import parse_quantities

__all__ = ["MAX_TURNS", "attach", "combine", "keep_turns", "respond", "why"]

MAX_TURNS = 10  # turns a conversation remembers for rewriting
_WHY = re.compile(r"^\s*why\b", re.IGNORECASE)


def keep_turns(old: list[Turn] | None, new: list[Turn] | None) -> list[Turn]:
    """Reducer: the last :data:`MAX_TURNS` turns."""
    return [*(old or []), *(new or [])][-MAX_TURNS:]


def _because(step: Step, chunk_ids: list[str], strategy: str) -> Answer:
    """The reason the given chunks state (module docstring)."""
    evidence = step.call("evidence", lambda **a: step.ctx.evidence([Scored(id=c, score=1.0) for c in a["chunks"]]),
                         summary=lambda ev: f"{len(ev)} chunks", chunks=chunk_ids)  # fmt: skip
    if step.llm is not None:
        return answer_from_evidence(step, evidence, strategy)
    question = step.question if _WHY.match(step.question) else f"Why {step.question}"
    reading = step.read(evidence, question)
    step.decide(f"the cause the evidence states: {reading.answer!r}" if reading.found else f"no cause stated ({reading.reason})")
    return answer_of(reading, step.question, strategy)


@agent_node("why")
def why(state: dict, step: Step) -> dict[str, Any]:
    """A "why?" about the last answer: the cause its cited chunks state (module docstring)."""
    return {"answer_draft": _because(step, list(state.get("evidence_from") or []), "auto")}


def _amount(answer: Answer) -> Figure | None:
    """An answer that is one amount, as a cited figure (a computed one keeps its exact result)."""
    if not answer.found or not answer.citations:
        return None
    found = parse_quantities(answer.answer)
    if len(found) != 1:
        return None
    return Figure(quantity=found[0], citation=answer.citations[0], label=answer.question)


@agent_node("combine")
def combine(state: dict, step: Step) -> dict[str, Any]:
    """What the workflow's answers make of the message (module docstring)."""
    answers: list[Answer] = list(state.get("answers_draft") or [])
    if not answers:
        return {"answer_draft": Answer(question=step.question, answer=NOT_FOUND, found=False, strategy="auto")}
    if len(answers) == 1:
        answer = answers[0]
        if step.llm is None and answer.found and _WHY.match(step.question):
            answer = _because(step, list(dict.fromkeys(c.chunk_id for c in answer.citations)), "auto")
        return {"answer_draft": answer}
    first, second = answers[:2]
    figures = [_amount(first), _amount(second)]
    if None not in figures:
        try:
            comp = compute("difference", figures)  # type: ignore[arg-type]
        except ValueError as exc:
            step.decide(f"the two answers cannot be compared ({exc}): both are given")
        else:
            text = render(comp, figures)  # type: ignore[arg-type]
            step.decide(f"difference of the two answers: {comp.expression} = {text}")
            return {"answer_draft": Answer(question=step.question, answer=text, found=True, kind="computed",
                                           citations=[first.citations[0], second.citations[0]], computed=comp,
                                           strategy="auto")}  # fmt: skip
    found = [a for a in answers if a.found]
    if not found:
        return {"answer_draft": Answer(question=step.question, answer=NOT_FOUND, found=False, strategy="auto")}
    step.decide("the answers are not two amounts: both are given")
    text = "; ".join(f"{a.question.rstrip('?')}: {a.answer}" for a in found)
    return {"answer_draft": Answer(question=step.question, answer=text, found=True, kind="sentence",
                                   citations=[c for a in found for c in a.citations], strategy="auto")}  # fmt: skip


def _reply_text(step: Step, answer: Answer) -> str:
    cites = "\n".join(f"[{i}] {c.label()}: \"{c.quote}\"" for i, c in enumerate(answer.citations, start=1))
    if step.llm is not None and answer.found:
        phrased = step.ask_text(
            [SystemMessage(content=load_prompt("reply.system")),
             HumanMessage(content=load_prompt("reply.user").format(
                 question=step.question, answer=answer.answer, quotes=cites or "(none)"))],  # fmt: skip
            "reply",
        )
        if phrased and phrased.strip():
            return f"{phrased.strip()}\n\n{cites}" if cites else phrased.strip()
    return answer.render()


@agent_node("respond")
def respond(state: dict, step: Step) -> dict[str, Any]:
    """The reply: the answer with its citations as an AIMessage carrying the full Answer, and the turn to
    remember."""
    draft: Answer = state["answer_draft"]
    answer = draft.model_copy(update={"strategy": f"auto:{state.get('route') or 'hybrid'}", "question": step.question})
    text = _reply_text(step, answer)
    compared = list(state.get("compare") or [])
    turn = Turn(
        message=latest_message(state.get("messages") or []),
        question=compared[-1] if compared else step.question,  # after a comparison, its second question
        answer=answer.answer,
        found=answer.found,
        workflow=str(state.get("route") or ""),
        subject=subject_of(step.question),
        chunks=[c.chunk_id for c in answer.citations],
        citations=list(answer.citations),
        filters={k: str(v) for k, v in (state.get("filters") or {}).items()},
    )
    step.decide(f"replied ({len(answer.citations)} citations)")
    return {"answer": answer, "turns": [turn], "reply_text": text}


def attach(state: dict) -> dict[str, Any]:
    """The reply message, with the final Answer (its trace complete) in ``response_metadata``."""
    answer: Answer = state["answer"]
    message = AIMessage(content=state.get("reply_text") or answer.render(),
                        response_metadata={"answer": answer.model_dump(mode="json")})  # fmt: skip
    return {"messages": [message]}

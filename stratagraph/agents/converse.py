"""The conversation's own steps around the answering workflows: ``run_workflow`` (the routed workflow as a
subgraph, or, for a "why?", an answer from the last answer's evidence) and ``respond`` (the reply message).

``respond`` puts the full :class:`~stratagraph.answers.Answer` in the reply's ``response_metadata["answer"]``.
The reply's text is the answer with its numbered citations; with a chat model it is first phrased as one or
two conversational sentences (prompt ``reply``, streamed token by token under ``stream_mode="messages"``)
from the answer and its quotes only, the citations listed after it. The conversation remembers each turn
(:class:`~stratagraph.agents.rewrite.Turn`: the rewritten question, the answer, its subject and cited
chunks) for the next message's rewrite.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from stratagraph.agents.answer import not_found
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.extract import citation, sentences
from stratagraph.agents.rewrite import Turn, latest_message, subject_of
from stratagraph.answers import Answer
from stratagraph.prompts import load_prompt
from stratagraph.retrieval.base import Scored

__all__ = ["MAX_TURNS", "keep_turns", "respond", "run_workflow", "why_answer"]

MAX_TURNS = 10  # turns a conversation remembers for rewriting
_CAUSE = re.compile(
    r"\b(because(?: of)?|due to|owing to|driven by|reflecting|as a result of|thanks to|comes? from|came from|"
    r"caused by|led by|mainly|mostly|primarily|largely)\b",
    re.IGNORECASE,
)


def keep_turns(old: list[Turn] | None, new: list[Turn] | None) -> list[Turn]:
    """Reducer: the last :data:`MAX_TURNS` turns."""
    return [*(old or []), *(new or [])][-MAX_TURNS:]


def why_answer(step: Step, chunk_ids: list[str], strategy: str) -> Answer:
    """The reason the last answer's evidence gives: the first sentence of its cited chunks that states a cause
    ("because", "due to", "driven by", "comes from", ...), from the cause marker on; not found without one."""
    evidence = step.call(
        "evidence",
        lambda **a: step.ctx.evidence([Scored(id=c, score=1.0) for c in a["chunks"]]),
        summary=lambda ev: f"{len(ev)} chunks of the last answer",
        chunks=chunk_ids,
    )
    if step.llm is not None:
        from stratagraph.agents.answer import answer_from_evidence

        return answer_from_evidence(step, evidence, strategy)
    for sent in sentences(evidence):
        m = _CAUSE.search(sent.text)
        if m:
            span = sent.text[m.start() :].rstrip(" .")
            step.decide(f"the cause stated in the last answer's evidence: {span!r}")
            return Answer(question=step.question, answer=span, found=True, citations=[citation(sent)], strategy=strategy)
    step.decide("the last answer's evidence states no cause: not found")
    return not_found(step.question, strategy)


@agent_node("run_workflow")
def run_workflow(state: dict, step: Step) -> dict[str, Any]:
    """Run the routed answering workflow as a subgraph on the rewritten question (its trace joins the turn's)."""
    from stratagraph.workflows import get_workflow

    workflow = str(state.get("route") or "hybrid")
    if state.get("evidence_from"):
        answer = why_answer(step, list(state["evidence_from"]), "auto")
        return {"answer_draft": answer}
    if state.get("compare"):
        return compare_answers(step, workflow, list(state["compare"]))
    inputs: dict[str, Any] = {"question": step.question}
    if state.get("filters"):
        inputs["filters"] = dict(state["filters"])
    answer: Answer = get_workflow(workflow).invoke(inputs, context=step.svc)["answer"]
    step.decide(f"{workflow}: {answer.answer!r}" + ("" if answer.found else " (not found)"))
    return {"answer_draft": answer, "trace": list(answer.trace), "usage": answer.usage}


_SCALE = re.compile(r"\b(thousand|million|billion|trillion)\b", re.IGNORECASE)


def compare_answers(step: Step, workflow: str, questions: list[str]) -> dict[str, Any]:
    """"Compare that with X": both questions answered (each with the metadata filters it names), and, when both
    answers are numbers of one scale, their difference computed exactly with both operands cited."""
    from stratagraph.agents.compute import Amount, calculate, parse_number
    from stratagraph.agents.route import metadata_filters
    from stratagraph.workflows import get_workflow

    answers: list[Answer] = []
    trace: list = []
    usage = None
    for q in questions:
        filters = metadata_filters(step, q)
        inputs: dict[str, Any] = {"question": q, **({"filters": filters} if filters else {})}
        a: Answer = get_workflow("hybrid" if filters else workflow).invoke(inputs, context=step.svc)["answer"]
        answers.append(a)
        trace += a.trace
        usage = a.usage if usage is None else usage.add(a.usage)
    first, second = answers
    values = [parse_number(a.answer) if a.found and a.citations else None for a in answers]
    scales = [(_SCALE.search(a.answer).group(1).lower() if _SCALE.search(a.answer) else "") for a in answers]
    if None not in values and scales[0] == scales[1]:
        amounts = [Amount(value=v, label=q, raw=a.answer, citation=a.citations[0]) for v, q, a in zip(values, questions, answers, strict=True)]  # type: ignore[arg-type]
        comp = calculate("difference", amounts)
        text = f"{comp.result}" + (f" {scales[0]}" if scales[0] else "")
        if first.answer.strip().startswith("$"):
            text = ("-$" if str(comp.result).startswith("-") else "$") + text.lstrip("-")
        step.decide(f"difference of the two answers: {comp.expression} = {text}")
        answer = Answer(question=step.question, answer=text, found=True, citations=[first.citations[0], second.citations[0]],
                        computed=comp, strategy="auto")  # fmt: skip
    else:
        step.decide("the two answers are not numbers of one scale: both are given")
        found = [a for a in answers if a.found]
        answer = Answer(question=step.question, answer="; ".join(f"{q.rstrip('?')}: {a.answer}" for q, a in zip(questions, answers, strict=True) if a.found),
                        found=bool(found), citations=[c for a in found for c in a.citations], strategy="auto") if found else not_found(step.question, "auto")  # fmt: skip
    return {"answer_draft": answer, "trace": trace, "usage": usage}


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

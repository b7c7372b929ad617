"""The conversation's own steps around the answering workflows: ``run_workflow`` (the routed workflow as a
subgraph, or, for a "why?", an answer from the last answer's evidence) and ``respond`` (the reply message).

Without a chat model a why-question is answered by the cause its evidence states (:func:`why_answer`: a
sentence with "because", "due to", "driven by", ..., from that marker on): the last answer's cited chunks for
a "why?" follow-up, the routed workflow's cited chunks for a question that starts with "why"; "not found"
when they state no cause (a span of another type is no answer to "why").

``respond`` puts the full :class:`~stratagraph.answers.Answer` in the reply's ``response_metadata["answer"]``.
The reply's text is the answer with its numbered citations; with a chat model it is first phrased as one or
two conversational sentences (prompt ``reply``, streamed token by token under ``stream_mode="messages"``)
from the answer and its quotes only, the citations listed after it. The conversation remembers each turn
(:class:`~stratagraph.agents.rewrite.Turn`: the rewritten question, the answer, its subject and cited
chunks) for the next message's rewrite.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from stratagraph.agents.answer import not_found
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.extract import citation, question_shape, relevance, sentences
from stratagraph.agents.rewrite import Turn, latest_message, same_question, subject_of
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
    """The reason the given chunks state: of their sentences that state a cause ("because", "due to",
    "driven by", "comes from", ...), the one holding most of the question's words (the earlier on a tie),
    from the cause marker on; not found without one. With a chat model, its answer over those chunks."""
    evidence = step.call(
        "evidence",
        lambda **a: step.ctx.evidence([Scored(id=c, score=1.0) for c in a["chunks"]]),
        summary=lambda ev: f"{len(ev)} chunks of the last answer",
        chunks=chunk_ids,
    )
    if step.llm is not None:
        from stratagraph.agents.answer import answer_from_evidence

        return answer_from_evidence(step, evidence, strategy)
    shape = question_shape(re.sub(r"^\s*why:\s*", "", step.question, flags=re.IGNORECASE))
    causes = [(relevance(sent, shape), -i, sent, m) for i, sent in enumerate(sentences(evidence)) if (m := _CAUSE.search(sent.text))]
    if causes:
        _, _, sent, m = max(causes, key=lambda c: c[:2])
        span = sent.text[m.start() :].rstrip(" .")
        step.decide(f"the cause stated in the evidence: {span!r}")
        return Answer(question=step.question, answer=span, found=True, citations=[citation(sent)], strategy=strategy)
    step.decide("the evidence states no cause: not found")
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
        return compare_answers(step, workflow, list(state["compare"]), list(state.get("turns") or []))
    inputs: dict[str, Any] = {"question": step.question}
    if state.get("filters"):
        inputs["filters"] = dict(state["filters"])
    answer: Answer = get_workflow(workflow).invoke(inputs, context=step.svc)["answer"]
    step.decide(f"{workflow}: {answer.answer!r}" + ("" if answer.found else " (not found)"))
    trace, usage = list(answer.trace), answer.usage
    if step.llm is None and answer.found and _WHY_QUESTION.match(step.question):
        # a why-question without a chat model: the cause the answer's own evidence states, else not found
        answer = why_answer(step, list(dict.fromkeys(c.chunk_id for c in answer.citations)), "auto")
    return {"answer_draft": answer, "trace": trace, "usage": usage}


_WHY_QUESTION = re.compile(r"^\s*why\b", re.IGNORECASE)
_SCALE = re.compile(r"\b(thousand|million|billion|trillion)\b", re.IGNORECASE)
_SCALES = {"": Decimal(1), "thousand": Decimal(10**3), "million": Decimal(10**6), "billion": Decimal(10**9),
           "trillion": Decimal(10**12)}  # fmt: skip


def compare_answers(step: Step, workflow: str, questions: list[str], turns: list[Turn] | None = None) -> dict[str, Any]:
    """"Compare that with X": both questions answered (each with the metadata filters it names; a question an
    earlier turn asked keeps that turn's answer), and, when both answers are numbers, their difference
    computed exactly in the first one's scale, both operands cited."""
    from stratagraph.agents.compute import Amount, calculate, parse_number
    from stratagraph.agents.route import metadata_filters
    from stratagraph.workflows import get_workflow

    answers: list[Answer] = []
    trace: list = []
    usage = None
    for q in questions:
        earlier = next((t for t in reversed(turns or []) if t.found and t.citations and same_question(t.question, q)), None)
        if earlier is not None:  # asked before in this conversation: the same answer, not a second opinion
            step.decide(f"{q!r} was answered before: {earlier.answer!r}")
            answers.append(Answer(question=q, answer=earlier.answer, found=True, citations=earlier.citations,
                                  strategy="auto"))  # fmt: skip
            continue
        filters = metadata_filters(step, q)
        inputs: dict[str, Any] = {"question": q, **({"filters": filters} if filters else {})}
        a: Answer = get_workflow(workflow).invoke(inputs, context=step.svc)["answer"]
        answers.append(a)
        trace += a.trace
        usage = a.usage if usage is None else usage.add(a.usage)
    first, second = answers
    values = [parse_number(a.answer) if a.found and a.citations else None for a in answers]
    scales = [(m.group(1).lower() if (m := _SCALE.search(a.answer)) else "") for a in answers]
    # a bare number (a table cell: its scale is the table's) is only compared with another bare one
    if None not in values and (scales[0] == scales[1] or all(scales)):
        # both in the first answer's scale ("$18.6 million" and "$570 thousand" -> 18.6 and 0.57 million)
        factor = [_SCALES[s] / _SCALES[scales[0]] for s in scales]
        amounts = [Amount(value=v * f, label=q, raw=a.answer, citation=a.citations[0])  # type: ignore[operator]
                   for v, f, q, a in zip(values, factor, questions, answers, strict=True)]  # fmt: skip
        comp = calculate("difference", amounts)
        text = f"{comp.result}" + (f" {scales[0]}" if scales[0] else "")
        if first.answer.strip().startswith("$"):
            text = ("-$" if str(comp.result).startswith("-") else "$") + text.lstrip("-")
        step.decide(f"difference of the two answers: {comp.expression} = {text}")
        answer = Answer(question=step.question, answer=text, found=True, citations=[first.citations[0], second.citations[0]],
                        computed=comp, strategy="auto")  # fmt: skip
    else:
        step.decide("the two answers are not numbers of a known scale: both are given")
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

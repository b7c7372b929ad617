"""The answer step every workflow ends with: evidence (and a computation, when a node made one) in, one
:class:`~stratagraph.answers.Answer` out.

1. A computation made in code (KAG's ``Math``, BAG-RAG's sums) is the answer: its result, every operand cited.
2. A question about a work through the document that cites it (agents/cite.py) is answered from the cited
   document's chunks alone (by the model, then the reader), or "not found" when that work is not stored.
3. With a chat model, the model answers from the numbered passages (prompt ``answer``, or the workflow's own,
   e.g. BiG-RAG's §4.3.4 ``generate``) as ``{answer, found, evidence}``. Its answer stands when a passage
   states it (its words in order, case and spacing aside; a number as the same number): the quote is that
   passage's sentence that states it, so every quote is verbatim, and, for an amount, when a passage it cites
   is about what the question names (a figure of another line item does not stand), and, for a question that
   asks a computation, when it is the amount the reader computes in code from cited operands (or the reader
   computes none). "Not found" stands as the model's. An
   answer no passage states, or no usable reply, goes to the one fallback, the reader, and the trace says so.
4. Without a chat model (and as that fallback): the reader (:func:`stratagraph.reading.read`): a span of the
   expected type, the sentence, a computation, a choice, a heading, or "not found".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from stratagraph.agents.cite import CitationHop, citing_language, follow_citation
from stratagraph.agents.common import Step, agent_node
from stratagraph.answers import NOT_FOUND, Answer, Citation, Computation
from stratagraph.llm import InputTooLong
from stratagraph.reading.result import Reading
from stratagraph.reading.frame import Frame, frame_of
from stratagraph.reading.sentences import sentences
from stratagraph.reading.spans import MIN_ABOUT, about
from stratagraph.retrieval.base import Evidence
from stratagraph.text.amounts import parse_quantities
from stratagraph.text.question import AnswerType

__all__ = ["GeneratedAnswer", "answer_from_evidence", "citation_of", "answer_node", "answer_of", "format_passages", "grounded"]

MAX_PASSAGE_CHARS = 1500  # one passage as the model sees it


class GeneratedAnswer(BaseModel):
    """What the chat model answers."""

    answer: str = Field(description="the short answer, or an empty string when the passages do not answer")
    found: bool = Field(description="true when the passages answer the question")
    evidence: list[int] = Field(default_factory=list, description="numbers of the passages that state the answer")


def format_passages(evidence: Sequence[Evidence]) -> str:
    """Numbered passages for a prompt: ``[n] title § section`` then the text (the prompts say they are data)."""
    out = []
    for i, e in enumerate(evidence, start=1):
        text = " ".join(e.text.split())
        if len(text) > MAX_PASSAGE_CHARS:
            text = text[: MAX_PASSAGE_CHARS - 1] + "…"
        out.append(f"[{i}] {e.section or e.title}\n{text}")
    return "\n\n".join(out)


def answer_of(reading: Reading, question: str, strategy: str) -> Answer:
    """The reader's answer as the workflow's :class:`Answer`."""
    if not reading.found:
        return Answer(question=question, answer=NOT_FOUND, found=False, strategy=strategy)
    return Answer(question=question, answer=reading.answer, found=True, kind=reading.kind, citations=reading.citations,
                  computed=reading.computed, strategy=strategy)  # fmt: skip


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[\w$%.,'’-]+", text.casefold())).strip(" .,")


def _states(text: str, answer: str) -> bool:
    """Whether a passage states an answer: its words in order (case and spacing aside), or, for an answer that
    is one amount, the same amount."""
    said = _norm(answer)
    if said and said in _norm(text):
        return True
    amounts = parse_quantities(answer)
    if len(amounts) != 1 or len(re.findall(r"[A-Za-z]{3,}", answer)) > 2:
        return False
    return any(q.value == amounts[0].value for q in parse_quantities(text))


def grounded(step: Step, reply: GeneratedAnswer, shown: Sequence[Evidence], question: str,
             subject: Frame | None = None) -> Answer | None:  # fmt: skip
    """The model's answer, cited from the passages that state it (those it named first); None when no passage
    states it (the caller falls back to the reader). ``subject``: the frame whose names an amount must be
    stated of (default the question's; a citation hop's leaves the citing paper's names out)."""
    said = reply.answer.strip()
    if not reply.found or not said:
        step.decide("the model finds no answer in the passages: not found")
        return Answer(question=question, answer=NOT_FOUND, found=False, strategy="")
    named = [shown[i - 1] for i in dict.fromkeys(reply.evidence) if 1 <= i <= len(shown)]
    stating = [e for e in shown if _states(e.text, said)]
    chosen = [e for e in named if e in stating] or stating[:2]
    if not chosen:
        step.fallbacks.append(f"answer: no passage states the model's answer {said!r}")
        return None
    hops = [e for e in named if e not in chosen]  # what it named besides: the passages it reasoned through
    if not _of_the_subject(said, chosen, hops, subject or frame_of(question)):
        step.fallbacks.append(f"answer: the model's amount {said!r} is stated only of something the question "
                              "does not name")  # fmt: skip
        return None
    said = _as_written(said, chosen)
    cites = [_quote(e, said) for e in chosen]
    cites += [_closest(e, question) for e in hops]
    step.decide(f"the model answers {said!r}, stated in passages {[shown.index(e) + 1 for e in chosen]}"
                + (f", reached through {[shown.index(e) + 1 for e in hops]}" if hops else ""))  # fmt: skip
    return Answer(question=question, answer=said, found=True, kind="span", citations=cites, strategy="")


def _of_the_subject(answer: str, stating: Sequence[Evidence], hops: Sequence[Evidence], frame: Frame) -> bool:
    """Whether an amount the model answers is stated of what the question names: a sentence or table row
    that states it is about the question's names (the reader's own test,
    :func:`stratagraph.reading.spans.about`), or the model reached it through a passage about them (a hop).
    So a figure of another line item or another company, written in a cited passage, does not stand. An
    answer that is no single amount, or a question that names nothing, passes."""
    if len(parse_quantities(answer)) != 1 or len(re.findall(r"[A-Za-z]{3,}", answer)) > 2:
        return True
    if not frame.names:
        return True
    said = [s for s in sentences(list(stating)) if _states(s.text, answer)]
    return any(about(s, frame) >= MIN_ABOUT for s in said + sentences(list(hops)))


def _computation_asked(question: Any) -> bool:
    """Whether the question asks a computation: a plan over named operands, or a sum over a set ("the two
    plants", "every overtime line")."""
    frame = question if isinstance(question, Frame) else frame_of(str(question))
    return frame.plan is not None or (frame.quantifier is not None and frame.type == AnswerType.NUMBER)


def _same_amount(answer: str, reading: Reading) -> bool:
    """Whether the model's answer states the reader's computed amount (the same number, whatever its wording)."""
    return any(q.value == reading.computed.result for q in parse_quantities(answer)) if reading.computed else False


def _as_written(answer: str, evidence: Sequence[Evidence]) -> str:
    """The model's answer as a passage writes it (its own characters: "Marcus Adeyemi" for "marcus adeyemi"),
    when one holds it case aside."""
    for e in evidence:
        at = e.text.casefold().find(answer.casefold())
        if at >= 0:
            return e.text[at : at + len(answer)]
    return answer


def _quote(evidence: Evidence, answer: str) -> Citation:
    """The sentence of a passage that states ``answer`` (else the passage's first sentence)."""
    sents = sentences([evidence])
    holding = [s for s in sents if _states(s.text, answer)]
    return (holding or sents)[0].quote() if sents else Citation(
        doc_id=evidence.doc_id, source=evidence.source, section=evidence.section, chunk_id=evidence.chunk_id,
        quote=evidence.text)  # fmt: skip


def _closest(evidence: Evidence, question: str) -> Citation:
    """The sentence of a passage sharing most words with the question (a passage the model reasoned through)."""
    from stratagraph.reading.words import word_forms

    asked = word_forms(question)
    sents = sentences([evidence])
    if not sents:
        return _quote(evidence, "")
    return max(sents, key=lambda s: (len(word_forms(s.text) & asked), -s.start)).quote()


def _generate(step: Step, evidence: Sequence[Evidence], prompt: str, question: str, context: str,
              subject: Frame | None = None) -> Answer | None:  # fmt: skip
    """The chat model's grounded answer; passages that do not fit its context are halved, down to one."""
    shown = list(evidence)
    while True:
        try:
            reply = step.ask_prompt(prompt, GeneratedAnswer, too_long="raise", question=question,
                                    context=context.strip(), passages=format_passages(shown))  # fmt: skip
            break
        except InputTooLong as exc:
            if len(shown) <= 1:
                step.fallbacks.append(f"answer: the passages do not fit the model's context ({exc})")
                return None
            shown = shown[: len(shown) // 2]
            step.decide(f"the passages do not fit the model's context: {len(shown)} of them")
    return grounded(step, reply, shown, question, subject) if reply is not None else None


def answer_from_evidence(
    step: Step,
    evidence: Sequence[Evidence],
    strategy: str,
    *,
    computed: Computation | None = None,
    computed_answer: str | None = None,
    prompt: str = "answer",
    context: str = "",
    question: Any = None,
    hop: CitationHop | None = None,
) -> Answer:
    """The answer to ``step.question`` from ``evidence`` (module docstring). ``computed``: a computation a node
    made (its ``computed_answer`` text); ``prompt``: the prompt pair's name (``{question}``, ``{context}``,
    ``{passages}``); ``context``: more text for the model (sub-answers, summaries, the graph context);
    ``question``: what the reader reads when it differs from the question asked (a bound sub-question, a
    frame); ``hop``: the citation the question follows, when the caller has found it (:func:`citation_of`)."""
    asked = step.question
    if computed is not None:
        text = computed_answer or str(computed.result)
        cites = list({(o.citation.chunk_id, o.citation.quote): o.citation for o in computed.operands}.values())
        step.decide(f"computed: {computed.expression} = {text}")
        return Answer(question=asked, answer=text, found=True, kind="computed", citations=cites, computed=computed,
                      strategy=strategy)  # fmt: skip
    hop = hop or citation_of(step, asked)
    if hop is not None:
        if hop.cited is None or not hop.evidence:
            step.decide("the documents do not hold the cited work: not found")
            return Answer(question=asked, answer=NOT_FOUND, found=False, strategy=strategy)
        evidence, question = list(hop.evidence), hop.frame
        context = f"{context}\nThe question asks about a cited work: {hop.why}.".strip()
    if not evidence:
        step.decide("no evidence: not found")
        return Answer(question=asked, answer=NOT_FOUND, found=False, strategy=strategy)
    if step.llm is not None:
        generated = _generate(step, evidence, prompt, asked, context, hop.frame if hop is not None else None)
        if generated is not None and generated.found and _computation_asked(question or asked):
            reading = step.read(evidence, question)  # a computation asked: the one computed in code, when it is
            if reading.kind == "computed" and reading.computed is not None and not _same_amount(generated.answer, reading):
                step.fallbacks.append(f"answer: the model's {generated.answer!r} is not the computation asked "
                                      f"({reading.computed.expression} = {reading.answer})")  # fmt: skip
                return answer_of(reading, asked, strategy)
        if generated is not None:
            return generated.model_copy(update={"strategy": strategy})
    reading = step.read(evidence, question)
    step.decide(f"read: {reading.kind} {reading.answer[:80]!r} ({reading.reason})")
    return answer_of(reading, asked, strategy)


def citation_of(step: Step, asked: str) -> CitationHop | None:
    """The citation the question follows (agents/cite.py), recorded as a tool call, or None."""
    if not citing_language(asked):
        return None
    hop = step.call("follow_citation", lambda **a: follow_citation(step.ctx, a["question"]),
                    summary=lambda h: h.why if h else "no citation the question names", question=asked)  # fmt: skip
    if hop is not None:
        step.decide(f"follows a citation: {hop.why}")
    return hop


def answer_node(strategy: str, prompt: str = "answer", context_key: str | None = None):  # noqa: ANN201
    """A workflow's final node: :func:`answer_from_evidence` over ``state["evidence"]``, with the computation
    in ``state["computed"]`` when a node made one and ``state[context_key]`` (text) for the model."""

    @agent_node("answer")
    def answer(state: dict, step: Step) -> dict:
        """Answer from the gathered evidence: a computation made in code, the chat model's grounded answer, or
        the reader's (agents/answer.py)."""
        return {
            "answer": answer_from_evidence(
                step,
                state.get("evidence") or [],
                strategy,
                computed=state.get("computed"),
                computed_answer=state.get("computed_answer"),
                prompt=prompt,
                context=str(state.get(context_key) or "") if context_key else "",
            )
        }

    return answer

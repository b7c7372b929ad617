"""The answer step every workflow ends with: evidence (and a computation, when one was made) in, one
:class:`~stratagraph.answers.Answer` out.

The policy, in order:

1. a computation made in code (KAG's ``Math``, BAG-RAG's sums) is the answer: its result, every operand
   cited;
2. with a chat model, the model answers from the numbered passages (prompts ``answer.system`` /
   ``answer.user``, or the workflow's own, e.g. BiG-RAG's §4.3.4 generation prompt) with structured output
   ``{answer, found, evidence}``; the quotes are then taken from the passages it names: in each, the
   sentence that best supports its answer, so every quote is verbatim. A model that answers "found" but
   names no passage, or no usable reply, falls back to rule 3 and the trace says so;
3. without one: a choice between two named things, a yes/no question or what two named things have in
   common is decided in code (:func:`stratagraph.agents.compute.decide`); anything else is the extracted
   span (:mod:`stratagraph.agents.extract`), or "not found".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step
from stratagraph.agents.compute import decide
from stratagraph.agents.extract import Sentence, citation, extract_answer, question_shape, sentences
from stratagraph.answers import NOT_FOUND, Answer, Citation, Computation
from stratagraph.llm import InputTooLong
from stratagraph.prompts import load_prompt
from stratagraph.retrieval.base import Evidence

__all__ = ["GeneratedAnswer", "answer_from_evidence", "format_passages", "number_text", "quote_for"]

MAX_PASSAGE_CHARS = 1500  # one passage as the model sees it


class GeneratedAnswer(BaseModel):
    """What the chat model answers."""

    answer: str = Field(description="the short answer, or an empty string when the passages do not answer")
    found: bool = Field(description="true when the passages answer the question")
    evidence: list[int] = Field(default_factory=list, description="numbers of the passages that state the answer")


def format_passages(evidence: Sequence[Evidence]) -> str:
    """Numbered passages for a prompt: ``[n] title § section`` then the text."""
    out = []
    for i, e in enumerate(evidence, start=1):
        text = " ".join(e.text.split())
        if len(text) > MAX_PASSAGE_CHARS:
            text = text[: MAX_PASSAGE_CHARS - 1] + "…"
        out.append(f"[{i}] {e.section or e.title}\n{text}")
    return "\n\n".join(out)


def number_text(value: object, unit: str | None = None) -> str:
    """A computed result as text: thousands separated, the unit after it ("1,170", "12.5 %", "USD 2,980")."""
    text = str(value)
    try:
        from decimal import Decimal

        d = value if isinstance(value, Decimal) else Decimal(text)
        text = f"{d:,f}" if d == d.to_integral_value() or abs(d) >= 1000 else format(d, "f")
    except Exception:  # noqa: BLE001 - a chosen option is text already
        return text
    if unit == "%":
        return f"{text}%"
    return f"{text} {unit}" if unit else text


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


def quote_for(evidence: Evidence, answer: str, question: str) -> Citation:
    """The sentence of a passage that best supports ``answer``: one that contains it, else the one sharing the
    most words with the answer and the question."""
    sents: list[Sentence] = sentences([evidence]) or []
    if not sents:
        return Citation(doc_id=evidence.doc_id, source=evidence.source, section=evidence.section,
                        chunk_id=evidence.chunk_id, quote=evidence.text)  # fmt: skip
    holding = [s for s in sents if answer and answer.lower() in s.text.lower()]
    if holding:
        return citation(holding[0])
    want = _words(answer) | _words(question)
    return citation(max(sents, key=lambda s: (len(want & _words(s.text)), -s.start)))


def not_found(question: str, strategy: str, reason: str = "") -> Answer:
    return Answer(question=question, answer=NOT_FOUND, found=False, strategy=strategy)


def answer_from_evidence(
    step: Step,
    evidence: Sequence[Evidence],
    strategy: str,
    *,
    focus: str | None = None,
    computed: Computation | None = None,
    computed_answer: str | None = None,
    prompt: str = "answer",
    context: str = "",
) -> Answer:
    """The answer to ``step.question`` from ``evidence`` by the policy of the module docstring. ``focus``: the
    question the evidence answers when it differs (a bound last sub-question); ``computed``: a computation
    already made (its ``computed_answer`` text, default its result); ``prompt``: the name of the prompt pair
    (``<prompt>.system`` / ``<prompt>.user`` with ``{question}``, ``{context}``, ``{passages}``);
    ``context``: extra text for the model (sub-answers, summaries, the graph context)."""
    question = step.question
    if computed is not None:
        text = computed_answer or number_text(computed.result, computed.unit)
        cites = _unique([o.citation for o in computed.operands])
        step.decide(f"computed: {computed.expression} = {text}")
        return Answer(question=question, answer=text, found=True, citations=cites, computed=computed, strategy=strategy)
    if not evidence:
        step.decide("no evidence: not found")
        return not_found(question, strategy)
    if step.llm is not None:
        generated = _generate(step, evidence, prompt, context)
        if generated is not None:
            return generated.model_copy(update={"strategy": strategy})
    shape = question_shape(focus or question)
    decided = decide(question, evidence)
    if decided is not None:
        step.decide(f"decided in code ({decided.computation.operation}): {decided.answer}")
        return Answer(question=question, answer=decided.answer, found=True, citations=decided.citations,
                      computed=decided.computation, strategy=strategy)  # fmt: skip
    extraction = extract_answer(question, evidence, focus=focus)
    if not extraction.found:
        step.decide(f"not found: {extraction.reason} (expected a {shape.type.value})")
        return not_found(question, strategy)
    step.decide(f"extracted a {extraction.type.value}: {extraction.answer!r} ({extraction.reason})")
    return Answer(question=question, answer=extraction.answer, found=True, citations=extraction.citations, strategy=strategy)


def _generate(step: Step, evidence: Sequence[Evidence], prompt: str, context: str) -> Answer | None:
    """The chat model's answer, cited first from the passages it names that state the answer (else from the
    passages that do), then from the other passages it names; None (the rule answers) when no usable reply, or
    no passage states it. Passages that do not fit the model's context are halved, down to one."""
    question = step.question
    shown = list(evidence)
    while True:
        messages = [
            SystemMessage(content=load_prompt(f"{prompt}.system")),
            HumanMessage(
                content=load_prompt(f"{prompt}.user").format(
                    question=question, context=context.strip(), passages=format_passages(shown)
                )
            ),
        ]
        try:
            reply = step.ask(GeneratedAnswer, messages, "answer", too_long="raise")
            break
        except InputTooLong as exc:
            if len(shown) <= 1:
                step.fallbacks.append(f"answer: the passages do not fit the model's context ({exc})")
                return None
            shown = shown[: len(shown) // 2]
            step.decide(f"the passages do not fit the model's context: {len(shown)} of them")
    if reply is None:
        return None
    said = reply.answer.strip()
    if not reply.found or not said:
        step.decide("the model finds no answer in the passages: not found")
        return not_found(question, "")
    named = [shown[i - 1] for i in dict.fromkeys(reply.evidence) if 1 <= i <= len(shown)]
    stating = [e for e in shown if _states(e.text, said)]
    chosen = [e for e in named if e in stating] or stating[:2]
    if not chosen:
        step.fallbacks.append(f"answer: no passage states the model's answer {said!r}")
        return None
    if named and not any(e in stating for e in named):
        step.decide(f"the passages the model named do not state {said!r}: it is stated in those cited first")
    # the passages it named that do not state the answer follow (a bridge of a multi-hop question)
    chosen += [e for e in named if e not in chosen]
    cites = [quote_for(e, said, question) for e in chosen]
    step.decide(f"the model answers {said!r} from passages {[shown.index(e) + 1 for e in chosen]}")
    return Answer(question=question, answer=said, found=True, citations=cites, strategy="")


def _states(text: str, answer: str) -> bool:
    """Whether a passage states an answer: its words appear there in order, case and spacing aside."""
    norm = lambda t: " ".join(re.findall(r"[\w$%.,'-]+", t.casefold())).strip(" .,")  # noqa: E731
    return bool(norm(answer)) and norm(answer) in norm(text)


def _unique(cites: Sequence[Citation]) -> list[Citation]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in cites:
        if (c.chunk_id, c.quote) not in seen:
            seen.add((c.chunk_id, c.quote))
            out.append(c)
    return out


def answer_node(strategy: str, prompt: str = "answer", context_key: str | None = None):  # noqa: ANN201
    """A workflow's final node: :func:`answer_from_evidence` over ``state["evidence"]``, with the computation
    in ``state["computed"]`` when a node made one, and ``state[context_key]`` (text) for the model."""
    from stratagraph.agents.common import agent_node

    @agent_node("answer")
    def answer(state: dict, step: Step) -> dict:
        """Answer from the gathered evidence: a computation made in code, the chat model, or the extracted
        span (agents/answer.py)."""
        return {
            "answer": answer_from_evidence(
                step,
                state.get("evidence") or [],
                strategy,
                focus=state.get("focus"),
                computed=state.get("computed"),
                computed_answer=state.get("computed_answer"),
                prompt=prompt,
                context=str(state.get(context_key) or "") if context_key else "",
            )
        }

    return answer

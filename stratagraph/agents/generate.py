"""The answer step of ``think_query_retrieve``: BiG-RAG §4.3.4 answer generation over the knowledge the turns
gathered, with the reasoning chain ("for decomposed queries, include reasoning chain showing intermediate
answers"), through :func:`stratagraph.agents.answer.answer_from_evidence`.

**With a chat model**: the generation prompt ``generate.system`` / ``generate.user`` (§4.3.4 and Appendix
D.3, asking for a structured ``{answer, found, evidence}`` instead of ``<answer>`` tags, so that the quotes can
be taken verbatim from the passages it names) over the passages of every turn, at most
:data:`MAX_PASSAGES`, chosen round-robin over the turns (each hop keeps its best passages) and shown in turn
order; the context is the chain: each turn's thought, queries and bound answers, and the model's own
``<answer>`` from the conversation as a draft. The model's answer must be a span of a cited passage: when
the passages it names do not state it (a small model names the passage of the hop instead, or answers
"820" for "$820 thousand") it is cited from the passage that does, with that passage's own characters,
and the named ones stay cited after it; an answer no passage states (a paraphrase, a "yes") goes to the
no-LLM rule below (a yes/no is decided in code), and the trace says so. When the generation has no usable
reply, the draft is the answer if a passage states it verbatim (cited with that passage's sentence); else
the no-LLM rule below. Passages that do not fit the model's context are halved until they do (down to one,
then the rule).

**Without one** (§4.3 with an extractive answer in place of §4.3.4's generation): the no-LLM answer of
:func:`answer_from_evidence` (a choice, a yes/no or a shared property decided in code over the whole question; else the span of
the expected answer type) read from the *last bound sub-question* (``focus``, set by the think step when the
final sub-question is still a question), over the last turn's passages first and then the earlier turns',
newest first. When that finds nothing, the original question is read over the same passages. A found answer
also cites the sentences its bound sub-answers came from, so the chain is checkable hop by hop.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.agents.answer import answer_from_evidence, not_found, quote_for
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.compute import decide
from stratagraph.agents.extract import AnswerType, extract_answer, question_shape
from stratagraph.agents.think import Turn
from stratagraph.agents.traverse import interleave
from stratagraph.answers import Answer, Citation
from stratagraph.llm import InputTooLong
from stratagraph.retrieval.base import Evidence
from stratagraph.retrieval.decompose import FINAL

__all__ = ["MAX_PASSAGES", "STRATEGY", "chain_evidence", "generate", "reasoning_chain"]

STRATEGY = "tqr"
MAX_PASSAGES = 8  # passages the generation prompt shows (a small model's context holds them with the chain)


def chain_evidence(turns: Sequence[Turn], for_model: bool) -> list[Evidence]:
    """The passages the answer reads: for the model, each turn's best (round-robin, :data:`MAX_PASSAGES`) in
    turn order; for extraction, the last turn's passages first, then the earlier turns', newest first."""
    if for_model:
        chosen = {e.chunk_id for e in interleave([t.evidence for t in turns], MAX_PASSAGES)}
        out: list[Evidence] = []
        for t in turns:
            out.extend(e for e in t.evidence if e.chunk_id in chosen)
        return _unique(out)
    return _unique([e for t in reversed(turns) for e in t.evidence])


def _unique(evidence: Sequence[Evidence]) -> list[Evidence]:
    seen: set[str] = set()
    out = []
    for e in evidence:
        if e.chunk_id not in seen:
            seen.add(e.chunk_id)
            out.append(e)
    return out


def reasoning_chain(turns: Sequence[Turn], draft: str | None) -> str:
    """The turns as the generation prompt's context: thoughts, queries, bound intermediate answers."""
    lines = []
    for t in turns:
        line = f"{t.n}. query: " + "; ".join(t.queries)
        if t.thought:
            line = f"{t.n}. thought: {t.thought}\n   query: " + "; ".join(t.queries)
        lines.append(line)
        if t.binding is not None:
            got = t.binding.answer if t.binding.found else "(no answer found)"
            lines.append(f"   intermediate answer: {got}")
    if draft:
        lines.append(f"Draft answer from the conversation (check it against the passages): {draft}")
    return ("Reasoning chain so far:\n" + "\n".join(lines)) if lines else ""


def _stated(text: str, evidence: Sequence[Evidence]) -> tuple[Evidence, str] | None:
    """The first passage stating ``text`` as whole words (case aside), and the passage's own characters."""
    needle = " ".join(text.split())
    if not needle or len(needle) > 200:
        return None
    pattern = re.compile(
        (r"\b" if needle[0].isalnum() else "") + r"\s+".join(map(re.escape, needle.split())) + (r"\b" if needle[-1].isalnum() else ""),
        re.IGNORECASE,
    )
    for e in evidence:
        m = pattern.search(e.text)
        if m is not None:
            return e, m.group(0)
    return None


def _draft_answer(step: Step, draft: str, evidence: Sequence[Evidence]) -> Answer | None:
    """The model's draft as the answer when a passage states it verbatim: the passage's own characters."""
    found = _stated(draft, evidence)
    if found is None:
        return None
    e, span = found
    step.decide(f"the conversation's answer {span!r} is stated in {e.chunk_id}: answer with it")
    return Answer(question=step.question, answer=span, found=True, citations=[quote_for(e, span, step.question)],
                  strategy=STRATEGY)  # fmt: skip


def _grounded(step: Step, answer: Answer, evidence: Sequence[Evidence]) -> Answer | None:
    """The model's answer as a span of a cited passage: as it is when a passage it names states it; else
    cited from the passage that states it (the passages it named stay cited after it); None when no passage
    states it (a paraphrase, a yes/no, a computed figure: then the no-LLM rule answers, and the trace says
    so)."""
    if answer.answer.strip().rstrip(".!").casefold() in ("yes", "no"):
        step.fallbacks.append(f"answer: the model's {answer.answer!r} is no span of a passage; yes/no is decided in code")
        return None
    texts = {e.chunk_id: e.text for e in evidence}
    named = [c.chunk_id for c in answer.citations]
    found = _stated(answer.answer, [e for e in evidence if e.chunk_id in named]) or _stated(answer.answer, evidence)
    if found is None:
        step.fallbacks.append(f"answer: no passage states the model's answer {answer.answer!r}")
        return None
    e, span = found
    if span == answer.answer and any(span in texts.get(c, "") for c in named):
        return answer
    cite = quote_for(e, span, step.question)
    step.decide(f"{span!r} is stated in {e.chunk_id}: cited from there")
    rest = [c for c in answer.citations if (c.chunk_id, c.quote) != (cite.chunk_id, cite.quote)]
    return answer.model_copy(update={"answer": span, "citations": [cite, *rest]})


def _rule(step: Step, evidence: Sequence[Evidence], focus: str | None) -> Answer:
    """The no-LLM rule of :func:`answer_from_evidence`: a choice, a yes/no or a shared property decided in code
    (:func:`~stratagraph.agents.compute.decide`), else the span."""
    question = step.question
    shape = question_shape(question)
    decided = decide(question, evidence, shape)
    if decided is not None:
        step.decide(f"decided in code ({decided.computation.operation}): {decided.answer}")
        return Answer(question=question, answer=decided.answer, found=True, citations=decided.citations,
                      computed=decided.computation, strategy=STRATEGY)  # fmt: skip
    ex = extract_answer(question, evidence, focus=focus)
    if not ex.found:
        step.decide(f"not found: {ex.reason}")
        return not_found(question, STRATEGY)
    step.decide(f"extracted a {ex.type.value}: {ex.answer!r} ({ex.reason})")
    return Answer(question=question, answer=ex.answer, found=True, citations=ex.citations, strategy=STRATEGY)


def _with_chain(answer: Answer, turns: Sequence[Turn]) -> Answer:
    """A found answer plus the citations of the sub-answers it was reached through."""
    if not answer.found:
        return answer
    cites: list[Citation] = list(answer.citations)
    keys = {(c.chunk_id, c.quote) for c in cites}
    for t in turns:
        b = t.binding
        if b is not None and b.found and b.citation is not None and (b.citation.chunk_id, b.citation.quote) not in keys:
            keys.add((b.citation.chunk_id, b.citation.quote))
            cites.append(b.citation)
    return answer.model_copy(update={"citations": cites})


@agent_node("answer")
def generate(state: Mapping[str, Any], step: Step) -> dict[str, Any]:
    """BiG-RAG §4.3.4 over the chain's passages: the model's generation (verbatim quotes from the passages
    it names), else the extracted span of the last bound sub-question (or of the question)."""
    turns: list[Turn] = list(state.get("turns") or [])
    model = step.llm is not None
    evidence = chain_evidence(turns, for_model=model)
    focus = state.get("focus") or None
    draft = state.get("draft") or None
    before = len(step.fallbacks)
    shown = list(evidence)
    while True:
        try:
            answer = answer_from_evidence(
                step, shown, STRATEGY, focus=focus, prompt="generate", context=reasoning_chain(turns, draft)
            )
            break
        except InputTooLong as exc:  # a model with a small context: fewer passages, down to one, then the rule
            if len(shown) <= 1:
                step.fallbacks.append(f"answer: the passages do not fit the model's context ({exc})")
                answer = _rule(step, evidence, focus)
                break
            shown = shown[: len(shown) // 2]
            step.decide(f"the passages do not fit the model's context: {len(shown)} of them")
    generation_failed = model and len(step.fallbacks) > before
    if model and not generation_failed and answer.found and answer.computed is None:
        grounded = _grounded(step, answer, evidence)
        if grounded is None:
            generation_failed = True
            answer = _rule(step, evidence, focus)
        else:
            answer = grounded
    if generation_failed and draft:
        answer = _draft_answer(step, draft, evidence) or answer
    extracted = not model or generation_failed
    hops = [t.binding for t in turns if t.binding is not None and t.binding.var != FINAL]
    chain_broken = not hops or any(not b.found for b in hops)
    if not answer.found and evidence and focus and extracted and not chain_broken:
        step.decide("every hop was bound and the last one has no answer: not found")
    elif not answer.found and evidence and focus and extracted:
        ex = extract_answer(step.question, evidence)
        if ex.found and _is_bridge(ex.answer, turns):
            step.decide(f"the question itself gives {ex.answer!r}, an intermediate answer: not found")
        elif ex.found:
            step.decide(f"the bound question has no answer; the question itself: {ex.answer!r} ({ex.reason})")
            answer = Answer(question=step.question, answer=ex.answer, found=True, citations=ex.citations, strategy=STRATEGY)
    if answer.found and answer.computed is None and extracted:
        answer = _typed(step, answer)
    return {"answer": _with_chain(answer.model_copy(update={"strategy": STRATEGY}), turns)}


def _is_bridge(text: str, turns: Sequence[Turn]) -> bool:
    """Whether ``text`` is an answer bound to a sub-question (the chain went through it), up to case,
    punctuation and articles."""
    said = _norm(text)
    return bool(said) and any(t.binding is not None and t.binding.found and _norm(t.binding.answer) == said for t in turns)


def _norm(text: str) -> str:
    words = re.findall(r"\w+", text.casefold())
    return " ".join(w for w in words if w not in ("the", "a", "an"))


def _typed(step: Step, answer: Answer) -> Answer:
    """An extracted span cannot answer a yes/no question, nor a choice unless it is one of the options: then
    the evidence did not decide it, and the answer is "not found"."""
    shape = question_shape(step.question)
    options = [o.casefold() for o in shape.options]
    said = answer.answer.casefold()
    if shape.type == AnswerType.YES_NO or (
        shape.type == AnswerType.CHOICE and not any(o in said or said in o for o in options)
    ):
        step.decide(f"{answer.answer!r} does not decide a {shape.type.value} question: not found")
        return not_found(step.question, STRATEGY)
    return answer

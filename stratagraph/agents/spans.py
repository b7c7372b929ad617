"""The no-LLM answer of ``bag`` and ``lesegr``: a verbatim span of the best-scored evidence sentence, one hop on
through a named bridge when that sentence leaves part of the question open.

The sentences come scored by the workflow (``lesegr``: its extracts, by their share of the question's words
and their subgraph's rank; ``bag``: the evidence sentences, by their share and their chunk's rank). The rule:

1. choices, yes/no questions and "what do A and B have in common" are decided in code
   (:func:`stratagraph.agents.compute.decide`);
2. :func:`pick_span`: the shared rule of every workflow (:func:`stratagraph.agents.extract.pick`) over these
   scores: the best-scored sentence's span of the expected answer type that the question does not contain (a
   labelled entity, or a number of the measure asked, a little ahead); within it a named entity ending with
   the noun asked for ("what county": "Avery County"), then the label the noun asks for, then the span
   nearest the question's words in the dependency parse, then the first; in a table row, the cell of the
   column the question names, else of the latest year. Numbers keep their currency sign, scale word and
   unit ("$2,900", "2.6 °C");
3. :func:`bridge`: when that sentence leaves some of the question's content words unheld and its span is a
   named entity (the bridge: "directed by Tim Burton" for "the spouse of Big Eyes' director"), the sentence
   of the context that names the bridge and holds most of the words left (at least :data:`BRIDGE_SHARE`) is
   read instead, and its span of the expected type (not the bridge) is the answer, citing both sentences;
   when the context has none, one more retrieval for "bridge + the words left" (:data:`BRIDGE_K` chunks) is
   searched the same way;
4. no sentence reaching the floor: "not found".
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagraph.agents.common import Step
from stratagraph.agents.compute import decide
from stratagraph.agents.extract import (
    MIN_RELEVANCE,
    Sentence,
    citation,
    pick,
    question_shape,
    sentences,
)
from stratagraph.answers import NOT_FOUND, Answer
from stratagraph.retrieval.base import Evidence

__all__ = ["BRIDGE_K", "BRIDGE_SHARE", "bridge", "bridge_query", "extractive_answer", "pick_span"]


def extractive_answer(
    step: Step,
    evidence: Sequence[Evidence],
    scored: Sequence[tuple[float, Sentence]],
    context: Sequence[Evidence],
    strategy: str,
    floor: float = MIN_RELEVANCE,
) -> Answer:
    """The answer by the rule of the module docstring; ``retrieve`` for the hop uses ``strategy``'s own
    retriever when it is one (``lesegr``), else ``default``."""
    question = step.question
    shape = question_shape(question)
    decided = decide(question, evidence, shape)
    if decided is not None:
        step.decide(f"decided in code ({decided.computation.operation}): {decided.answer}")
        return Answer(question=question, answer=decided.answer, found=True, citations=decided.citations,
                      computed=decided.computation, strategy=strategy)  # fmt: skip
    picked = pick_span(question, scored, floor=floor)
    if picked is None:
        step.decide(f"not found: no sentence holds {floor:.0%} of the question with a {shape.type.value} in it")
        return Answer(question=question, answer=NOT_FOUND, found=False, strategy=strategy)
    span, sent = picked
    hop = bridge(question, sent, span, context)
    if hop is None and (query := bridge_query(question, sent, span)):
        hop = bridge(
            question, sent, span, step.retrieve(strategy if strategy == "lesegr" else "default", query, k=BRIDGE_K)
        )
    if hop is not None:
        span2, sent2, via = hop
        step.decide(f"the {shape.type.value} {span2!r}, one hop on from {via!r} of the best sentence")
        return Answer(question=question, answer=span2, found=True, citations=[citation(sent), citation(sent2)],
                      strategy=strategy)  # fmt: skip
    step.decide(f"the {shape.type.value} {span!r} of the best sentence, nearest the question's words in its parse")
    return Answer(question=question, answer=span, found=True, citations=[citation(sent)], strategy=strategy)


#: the least weighted share of the question's words the first sentence misses that a bridge sentence must hold
BRIDGE_SHARE = 0.5
#: chunks retrieved for the hop when the subgraphs hold no bridge sentence (ours)
BRIDGE_K = 5


def bridge_query(question: str, first: Sentence, span: str) -> str:
    """The query of the hop (module docstring): the bridge and the question's words the best sentence left
    unheld ("Tim Burton spouse"); "" when there is no hop to make."""
    shape = question_shape(question)
    left = [w for w in shape.content if w not in first.lemmas]
    named = {first.evidence.text[a:b] for a, b, label in first.spans if label in _NAMED}
    if not left or span not in named or span.casefold() in question.casefold():
        return ""
    return " ".join([span, *left])


_NAMED = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "WORK_OF_ART", "EVENT", "PRODUCT", "LAW"})


def bridge(question: str, first: Sentence, span: str, context: Sequence[Evidence]) -> tuple[str, Sentence, str] | None:
    """One hop on (module docstring): when the best sentence leaves some of the question's words unheld and its
    span is a named entity (the bridge), the sentence of the subgraphs' passages that names the bridge and
    holds most of the words left (at least :data:`BRIDGE_SHARE`); its span of the expected type (not the
    bridge, not in the question) is the answer."""
    shape = question_shape(question)
    left = {w: x for w, x in shape.content.items() if w not in first.lemmas}
    if not left:
        return None
    total = sum(left.values())
    named = {first.evidence.text[a:b] for a, b, label in first.spans if label in _NAMED}
    names = {span} if span in named and span.casefold() not in question.casefold() else set()
    if not names:
        return None
    best: tuple[float, Sentence, str] | None = None
    for sent in sentences(context):
        if sent.evidence.chunk_id == first.evidence.chunk_id and sent.start == first.start:
            continue
        via = next((n for n in sorted(names) if n.casefold() in sent.text.casefold()), None)
        if via is None:
            continue
        share = sum(x for w, x in left.items() if w in sent.lemmas) / total
        if share >= BRIDGE_SHARE and (best is None or share > best[0]):
            best = (share, sent, via)
    if best is None:
        return None
    _, sent, via = best
    picked = pick_span(question, [(1.0, sent)], exclude=(via, span), floor=0.0)
    return (picked[0], sent, via) if picked is not None else None


def pick_span(
    question: str, scored: Sequence[tuple[float, Sentence]], exclude: Sequence[str] = (), floor: float = MIN_RELEVANCE
) -> tuple[str, Sentence] | None:
    """The answer span of the scored sentences: the shared rule of :func:`stratagraph.agents.extract.pick` (the
    best sentence score plus a small bonus for a labelled entity or a number of the asked measure; within the
    sentence a named entity ending with the noun asked for, then the label the noun asks for, then the span
    nearest the question's words in the dependency parse; a table row's cell by the column the question
    names, else the latest year; numbers with their currency sign, scale word and unit)."""
    ex = pick(question, scored, exclude=exclude, floor=floor)
    return (ex.answer, ex.sentence) if ex.found and ex.sentence is not None else None

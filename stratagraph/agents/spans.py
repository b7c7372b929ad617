"""The no-LLM answer of ``bag`` and ``lesegr``: a verbatim span of the best-scored evidence sentence, one hop on
through a named bridge when that sentence leaves part of the question open.

The sentences come scored by the workflow (``lesegr``: its extracts, by their share of the question's words
and their subgraph's rank; ``bag``: the evidence sentences, by their share and their chunk's rank). The rule:

1. choices and yes/no questions are decided in code (:mod:`stratagraph.agents.compute`);
2. :func:`pick_span`: the best-scored sentence holding a span of the expected answer type
   (:func:`stratagraph.agents.extract.question_shape`) that the question does not contain; in it, a named
   entity ending with the noun the question asks for ("what county": "Avery County"), then a named entity over a noun
   phrase, then the span nearest the question's words in the sentence's dependency parse, then the first; in a table row, the cell of the column the question names, else of the latest
   year. Numbers keep their currency sign, scale word and unit ("$2,900", "2.6 °C");
3. :func:`bridge`: when that sentence leaves some of the question's content words unheld and its span is a
   named entity (the bridge: "directed by Tim Burton" for "the spouse of Big Eyes' director"), the sentence
   of the context that names the bridge and holds most of the words left (at least :data:`BRIDGE_SHARE`) is
   read instead, and its span of the expected type (not the bridge) is the answer, citing both sentences;
   when the context has none, one more retrieval for "bridge + the words left" (:data:`BRIDGE_K` chunks) is
   searched the same way;
4. no sentence reaching the floor: "not found".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from stratagraph.agents.common import Step
from stratagraph.agents.compute import choose, yes_no
from stratagraph.agents.extract import LABELS, MIN_RELEVANCE, AnswerType, Sentence, citation, question_shape, sentences
from stratagraph.answers import NOT_FOUND, Answer
from stratagraph.retrieval.base import Evidence
from stratagraph.text.nlp import load_nlp

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
    decided = choose(question, evidence, shape) or yes_no(question, evidence, shape)
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
    """The answer span of the extracts (module docstring): the best-scored sentence holding a span of the
    expected answer type that the question does not contain (at least :data:`MIN_RELEVANCE` of the question's
    words); in it, a named entity over a noun phrase, then the span nearest the question's words in the
    sentence's dependency parse (the sum of ``1 / (1 + d)`` over the question's words, ``d`` the tree
    distance), then the first; in a table row, the cell of the column whose header the question names most,
    then of the latest year. Numbers keep their currency sign, scale word and unit ("$2,900", "2.6 °C")."""
    shape = question_shape(question)
    kind = shape.type if shape.type in LABELS else AnswerType.THING
    labels = LABELS[kind]
    best: tuple[float, Sentence, list[tuple[int, int, str]]] | None = None
    least = floor
    banned = {x.casefold() for x in exclude}
    for score, sent in sorted(scored, key=lambda p: -p[0]):
        if score < least or (best is not None and score <= best[0]):
            continue
        spans = []
        for start, end, label in sent.spans:
            if label not in labels and not (kind == AnswerType.THING and label == "NP"):
                continue
            text = sent.evidence.text[start:end]
            if not text.strip() or text.strip().casefold() in question.casefold() or text.strip().casefold() in banned:
                continue
            spans.append((start, end, label))
        if spans:
            best = (score, sent, spans)
    if best is None:
        return None
    _, sent, spans = best
    if sent.columns:  # a table row: the cell of the column the question names, else of the latest period
        cells = [sp for sp in spans if sp[0] in sent.columns] or spans
        asked = {w.lower() for w in re.findall(r"\w+", question)}
        start, end, _ = max(
            cells,
            key=lambda sp: (
                _column_named(sent.columns.get(sp[0], ""), asked),
                _latest(sent.columns.get(sp[0], "")),
                -sp[0],
            ),
        )
    else:
        near = _nearness(sent, shape.content, spans)
        noun = shape.focus if shape.focus and shape.focus.isalpha() and shape.focus not in _HOW else ""

        def names_noun(sp: tuple[int, int, str]) -> bool:
            """A named entity whose last word is the noun asked for ("what county": "Avery County")."""
            words = re.findall(r"\w+", sent.evidence.text[sp[0] : sp[1]].lower())
            return bool(noun) and sp[2] != "NP" and bool(words) and words[-1].startswith(noun)

        start, end, _ = max(spans, key=lambda sp: (names_noun(sp), sp[2] != "NP", round(near[sp], 6), -sp[0]))
    start, end = _widen(sent.evidence.text, start, end)
    span = sent.evidence.text[start:end].strip().strip(",;:.")
    if kind == AnswerType.THING or " " in span:
        span = re.sub(r"^(?:the|a|an)\s+(?=\S)", "", span, flags=re.IGNORECASE)
    return span, sent


def _column_named(header: str, asked: set[str]) -> float:
    words = [w.lower() for w in re.findall(r"\w+", header)]
    return sum(1 for w in words if w in asked or re.sub(r"^fy", "", w) in asked) / len(words) if words else 0.0


def _latest(header: str) -> int:
    years = [int(y) for y in re.findall(r"(?:19|20)\d\d", header)]
    return max(years, default=-1)


def _nearness(
    sent: Sentence, content: dict[str, float], spans: Sequence[tuple[int, int, str]]
) -> dict[tuple[int, int, str], float]:
    """For each span, the sum over the question's words in the sentence of ``1 / (1 + tree distance)``."""
    doc = load_nlp()(sent.text)
    words = [t.i for t in doc if t.lemma_.lower() in content or t.lower_ in content]
    out = {}
    for sp in spans:
        a, b = sp[0] - sent.start, sp[1] - sent.start
        inside = [t for t in doc if t.idx >= a and t.idx + len(t) <= b]
        if not inside:
            out[sp] = 0.0
            continue
        root = min(inside, key=lambda t: _depth(t))
        out[sp] = sum(1.0 / (1.0 + _distance(root, doc[w])) for w in words if not (a <= doc[w].idx < b))
    return out


def _depth(tok: Any) -> int:
    d = 0
    while tok.head.i != tok.i and d < 100:
        tok, d = tok.head, d + 1
    return d


def _distance(a: Any, b: Any) -> int:
    """Edges between two tokens of one parse."""
    up: dict[int, int] = {}
    t, d = a, 0
    while True:
        up[t.i] = d
        if t.head.i == t.i or d > 100:
            break
        t, d = t.head, d + 1
    t, d = b, 0
    while t.i not in up:
        if t.head.i == t.i or d > 100:
            return 100
        t, d = t.head, d + 1
    return d + up[t.i]


_HOW = frozenset("many much long old far tall big large high deep wide who whom whose where when".split())
_CURRENCY = "$€£¥"
_AFTER = re.compile(
    r"^(?:\s?%|\s(?:percent|per cent)\b|\s(?:thousand|million|billion|trillion)\b|\s?°\s?[CF]\b)", re.IGNORECASE
)


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """A number span with the currency sign before it and the scale word or unit after it."""
    if not any(ch.isdigit() for ch in text[start:end]):
        return start, end
    if start > 0 and text[start - 1] in _CURRENCY:
        start -= 1
    while True:
        m = _AFTER.match(text[end:])
        if not m:
            return start, end
        end += m.end()

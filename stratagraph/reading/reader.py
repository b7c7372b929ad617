"""The reader: a question and the evidence handed to it (chunks, and the stored facts of those chunks) in, one
:class:`~stratagraph.reading.result.Reading` out. It touches no store and calls no model; every workflow's
no-LLM answer is this, and with a chat model it is the fallback when the model's answer is unusable.

The question's frame (:func:`~stratagraph.reading.frame.frame_of`), with the noun phrases that the evidence's
headings and table rows name taken as names (:func:`named_by_structure`) and without those every sentence is
about (:func:`telling_names`), decides the reading, over the documents the question says the answer is said in
when it names one (:func:`from_source`), in this order:

1. a choice between two options, or "before or after": decided from cited dates or numbers
   (:mod:`~stratagraph.reading.choice`); "more or less ... than ...": the difference, with the option it
   makes true;
2. a computation (:mod:`~stratagraph.reading.arithmetic`'s plan): each operand read as a number lookup of its
   own sub-question, from the sentences that hold the words setting it apart from the other operands
   (:func:`own_words`), then computed exactly; any operand missing: not found;
3. a gap asked as an amount without its two sides ("by how much does the budget understate X"): the
   difference between the figures of the two documents that state X best, else between the two figures of
   the one row that states both (:func:`_between_sources`);
4. a count of rows past a threshold, a sum over a set of rows or a section's subsections, the period in
   which an amount is largest or smallest (:mod:`~stratagraph.reading.series`), a superlative over rows
   (:mod:`~stratagraph.reading.tables`);
5. a section asked for ("which section ...", or "which <noun>" when the evidence's headings end with that
   noun): the heading; a document asked for ("which study ..."): its title (:mod:`~stratagraph.reading.sections`);
6. a reason ("why"): the cause a sentence about the question states ("because", "due to", ...);
7. a yes/no question: yes when for every name a sentence about it holds every relation word; otherwise the
   reader does not decide (not found);
8. anything else: the span reader (:mod:`~stratagraph.reading.spans`): a span of the expected type, the
   sentence, or not found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from dataclasses import replace
from typing import Any

from stratagraph.answers import Citation, Computation, Operand
from stratagraph.reading.arithmetic import Figure, compute, render
from stratagraph.reading.choice import decide_choice
from stratagraph.reading.frame import Frame, Name, frame_of
from stratagraph.reading.result import Reading, not_found
from stratagraph.reading.sections import names_headings, read_document, read_section, section_superlative, unit_of_line
from stratagraph.reading.sentences import Sentence, sentences
from stratagraph.reading.series import period_superlative
from stratagraph.reading.spans import MIN_ABOUT, about, best_candidate, figure_of, read_span, relation
from stratagraph.reading.tables import cells_of, count_over, derived_columns, exact_cell, heading_text, one_row, section_total, set_sum, superlative
from stratagraph.reading.words import content_forms, forms, word_forms
from stratagraph.retrieval.base import Evidence
from stratagraph.text.amounts import parse_quantities
from stratagraph.text.lexicon import GAP_WORDS, CAUSE_MARKERS, DATE_NOUNS, DOCUMENT_NOUNS, MONTHS, ORDINALS, PERIOD_WORDS
from stratagraph.text.periods import find_periods
from stratagraph.text.question import AnswerType

__all__ = ["figures", "from_source", "named_by_structure", "names_one", "of_member", "own_words", "read", "read_number", "scored_number",
           "telling_names"]

Facts = Mapping[str, Sequence[Mapping[str, Any]]]


def read(question: str | Frame, passages: Sequence[Evidence], facts: Facts | None = None, *, hop: bool = False) -> Reading:
    """The answer the evidence gives to ``question`` (module docstring); ``hop``: the question is a hop of a
    chain, whose entity a later step reads (:data:`~stratagraph.reading.spans.MIN_HOP_RELATION`)."""
    frame = question if isinstance(question, Frame) else frame_of(question)
    sents = sentences(passages, facts)
    if not sents:
        return not_found("no evidence")
    frame = named_by_structure(frame, sents)
    every = sents
    sents = from_source(frame, sents)
    frame = telling_names(frame, sents)
    if not (frame.names or frame.relation or frame.measures or frame.plan or frame.periods):
        return not_found("the question names nothing to look for")
    if frame.type == AnswerType.CHOICE and frame.plan is not None and set(frame.options) <= MAGNITUDES:
        return _more_or_less(frame, sents)
    if frame.type == AnswerType.CHOICE:
        return decide_choice(frame, sents)
    if frame.plan is not None:
        computed = _compute(frame, sents)
        if computed.kind != "not_found" or not frame.plan.spelled:
            return computed
        frame = replace(frame, plan=None)  # no quarter by quarter: a figure stated for the whole run, if any
    if frame.type == AnswerType.NUMBER and _GAP.search(frame.question):
        found = _between_sources(frame, every)  # the source the question names, and the document it differs from
        if found is not None:
            return found
    for special in (count_over, section_total, set_sum, period_superlative, section_superlative, superlative):
        found = special(frame, sents)
        if found is not None:
            return found
    if frame.type == AnswerType.THING and frame.focus in DOCUMENT_NOUNS:
        return read_document(frame, sents)
    if frame.type == AnswerType.SECTION or (frame.type == AnswerType.THING and names_headings(frame, sents)):
        return read_section(frame, sents)
    unit = unit_of_line(frame, sents)  # "which department pays for X": the heading over X's budget line
    if unit is not None:
        return unit
    if frame.type == AnswerType.REASON:
        return _reason(frame, sents)
    if frame.type == AnswerType.YES_NO:
        return _yes_no(frame, sents)
    return read_span(frame, sents, hop=hop)


def figures(passages: Sequence[Evidence], facts: Facts | None = None) -> list[Figure]:
    """Every amount the evidence states, cited: its table cells (typed, at the table's scale) and the numbers of
    its sentences (what a chat model picks operands from)."""
    sents = sentences(passages, facts)
    out = [c.figure for c in cells_of([s for s in sents if s.is_row])]
    for s in sents:
        if s.is_row:
            continue
        pos = 0
        for q in parse_quantities(s.text):
            at = s.text.find(q.raw, pos)
            if at < 0:
                continue
            pos = at + len(q.raw)
            before = " ".join(s.text[:at].split()[-8:])
            out.append(Figure(quantity=q, citation=s.quote(), label=f"{before} …" if before else s.text[:60]))
    return out


def named_by_structure(frame: Frame, sents: Sequence[Sentence]) -> Frame:
    """The frame with the noun phrases the evidence's structure names (a heading, a table row's label) added
    to its names: "wastewater operations" is a name where a section is headed "Wastewater Operations", so the
    answer must come from what is about it. A phrase names a heading when the heading holds all its content
    words and they make at least half of the heading's ("reservoir treatment plant" for "Gannet Reservoir
    Treatment Plant"); a one-word phrase ("the hills") only when it names one heading of the evidence alone
    (a definite description with one referent there); the noun the question asks for ("which *river*") names
    no heading."""
    labels = {h for s in sents for h in s.passage.section_path} | {s.label for s in sents if s.label}
    frame = _years_in_names(frame, labels)
    if frame.plan is not None and names_one(frame.plan.joined, labels):  # "the Streets and Bridges": a heading
        frame = replace(frame, plan=None, names=(*frame.names, Name(frame.plan.joined, "HEADING")))
    added = []
    for phrase in frame.phrases:
        words = content_forms(phrase)
        if not words or (frame.focus and len(words) == 1 and words[0] & forms(frame.focus)):
            continue
        named = set()
        for label in labels:
            own = content_forms(heading_text(label))
            if own and all(any(w & o for o in own) for w in words) and len(words) * 2 >= len(own):
                named.add(heading_text(label).casefold())
        if named and (len(words) >= 2 or len(named) == 1):
            added.append(Name(phrase, "HEADING"))
    return replace(frame, names=(*frame.names, *added)) if added else frame


def _years_in_names(frame: Frame, labels: Iterable[str]) -> Frame:
    """A year the question writes right after a capitalised word, as a heading or row label of the evidence
    writes the two ("the Series 2019 bonds": a row "Interest — Series 2019 Bonds"), is part of that name,
    not a period the question asks about."""
    folded = [" ".join(label.casefold().split()) for label in labels]
    periods, added = [], []
    for p in frame.periods:
        text = frame.question[p.start : p.end]
        before = frame.question[: p.start].split()
        word = before[-1] if before else ""
        if text.isdigit() and word[:1].isupper() and word.isalpha():
            phrase = f"{word} {text}"
            if any(re.search(rf"\b{re.escape(phrase.casefold())}\b", label) for label in folded):
                added.append(Name(phrase, "HEADING"))
                continue
        periods.append(p)
    if not added:
        return frame
    names = tuple(n for n in frame.names if not any(n.text in a.text for a in added))
    return replace(frame, periods=tuple(periods), names=(*names, *added))


def names_one(joined: str, labels: Iterable[str]) -> bool:
    """Whether a coordination ("the Streets and Bridges") is one of the headings or row labels given, as
    written (numbering and a leading article aside): then it is one thing, not a sum of two."""
    if not joined:
        return False
    want = re.sub(r"^(?:the|a|an)\s+", "", joined.strip(), flags=re.IGNORECASE).casefold()
    return any(heading_text(label).casefold() == want for label in labels)


def read_number(question: str | Frame, sents: Sequence[Sentence], level: bool = False) -> Figure | None:
    """The cited amount a number question asks for, or None; ``level``: an operand of a computation, which is
    a level whatever its question's wording ("how did revenue *change* from Q3 to Q4": two revenues)."""
    return scored_number(question, sents, level)[0]


def scored_number(question: str | Frame, sents: Sequence[Sentence], level: bool = False) -> tuple[Figure | None, float]:
    """:func:`read_number` and how well its sentence fits the question (0 when none)."""
    frame = question if isinstance(question, Frame) else frame_of(question)
    if frame.type != AnswerType.NUMBER or (level and frame.change):
        frame = replace(frame, type=AnswerType.NUMBER, change=False if level else frame.change)
    best, _ = best_candidate(frame, sents, own_period=level)  # an operand: never another period's figure
    fig = figure_of(best) if best is not None else None
    return (exact_cell(fig, sents), best.score) if fig is not None and best is not None else (None, 0.0)


#: the words that tell periods apart ("the *second quarter*", "the end of *December*"): an operand that differs
#: from the others only by them is told apart by its period, not by its words
_PERIODISH = frozenset(f for w in [*PERIOD_WORDS, *DATE_NOUNS, *ORDINALS, *MONTHS] for f in forms(w))


def telling_names(frame: Frame, sents: Sequence[Sentence]) -> Frame:
    """The frame without the names that every sentence of the evidence is about (the organisation whose
    budget is the only document read: its title holds the name for every line), when other names remain: such a
    name tells no sentence from another, and with it every line of the document would be about the question
    ("which division carries the Billing Systems line" of Larkmere's budget is about Billing Systems)."""
    if len(frame.names) < 2:
        return frame
    everywhere = {name for name in frame.names if all(about(s, replace(frame, names=(name,))) >= 0.95 for s in sents)}
    if not everywhere or len(everywhere) == len(frame.names):
        return frame
    return replace(frame, names=tuple(n for n in frame.names if n not in everywhere))


def from_source(frame: Frame, sents: Sequence[Sentence]) -> list[Sentence]:
    """The sentences of the documents the question says its answer is said in (``frame.source``: "what count
    does *the committee* give"): those whose document's title or file name holds at least half of the
    source's words, when some do; all of them otherwise (the source may be named by no title)."""
    words = content_forms(frame.source) if frame.source else ()
    if not words:
        return list(sents)
    kept = [s for s in sents if sum(1 for w in words if w & (s.title | _file_words(s.passage.source))) * 2 >= len(words)]
    return kept or list(sents)


def _file_words(source: str) -> frozenset[str]:
    return word_forms(re.sub(r"[_\-./]+", " ", source))


def own_words(operand: str, operands: Sequence[str]) -> tuple[frozenset[str], ...]:
    """The content words that set one operand of a computation apart from the others ("Information
    Technology" in "... under Information Technology?" against "... under Technical Services?"): its words
    that no other operand holds, periods and numbers aside."""
    spans = sorted((p.start, p.end) for p in find_periods(operand))
    text = "".join(operand[a:b] for a, b in zip([0, *(e for _, e in spans)], [*(s for s, _ in spans), len(operand)], strict=True))
    others = frozenset(f for o in operands if o != operand for w in content_forms(o) for f in w)
    return tuple(w for w in content_forms(text) if not (w & others) and not (w & _PERIODISH))


def of_member(sents: Sequence[Sentence], words: Sequence[frozenset[str]]) -> list[Sentence]:
    """The sentences an operand may be read from: those holding at least half of its own words
    (:func:`own_words`), each counted whole in the sentence or its own heading and half in its context (the
    document title, the outer headings, metadata), so that two operands told apart by a
    name are never read from the same line ("Technology" under Information Technology, not under Technical
    Services). All of them when it has no own words."""
    if not words:
        return list(sents)
    return [s for s in sents if sum(1.0 if w & (s.forms | s.heading) else 0.5 if w & s.context else 0.0
                                    for w in words) >= len(words) / 2]


def _compute(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    plan = frame.plan
    assert plan is not None
    figures: list[Figure] = []
    for operand in plan.operands:
        fig = read_number(operand, of_member(sents, own_words(operand, plan.operands)), level=True)
        if fig is None:
            return not_found(f"{plan.operation}: no amount for {operand!r}")
        figures.append(fig)
    figures = one_row(figures, [frame_of(o) for o in plan.operands], sents)
    if plan.spelled and plan.operation == "sum" and any(f.unit == "%" for f in figures):
        return not_found("sum: a rate of each period is not added up over the periods")
    if len({(f.citation.chunk_id, f.quantity.raw, f.label) for f in figures}) < len(figures):
        return not_found(f"{plan.operation}: the operands are one and the same amount")
    try:
        comp = compute(plan.operation, figures, absolute=plan.absolute)
    except ValueError as exc:
        return not_found(f"{plan.operation}: {exc}")
    text = render(comp, figures, which_way=plan.which_way)
    cites = list({(f.citation.chunk_id, f.citation.quote): f.citation for f in figures}.values())
    yes_no = not isinstance(comp.result, Decimal)  # a comparison: "yes" or "no"
    return Reading(kind="choice" if yes_no else "computed", answer=text, citations=cites, computed=comp,
                   type="yes/no" if yes_no else "number", score=1.0, reason=f"{plan.reason}: {comp.expression} = {text}")  # fmt: skip


#: a gap asked for as an amount without naming its two sides ("by how much do the auditor's grants fall short of
#: what the budget assumes", "how far does the review's figure differ from ...", "by how much does the budget
#: overstate ...", "how far apart are the plan and the auditor on X"; not "what reserve does the committee project, and how does that differ": a figure is asked)
_GAP = re.compile(r"\bby how much\b|\bhow (?:much|far) (?:do|does|did)\b.*\b(?:differ|overstate|understate|short)|"
                  r"\bhow far apart\b", re.IGNORECASE)


_GAP_FORMS = frozenset(f for w in GAP_WORDS for f in forms(w))


def _between_sources(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """A gap between what two documents state (a budget and its audit, a plan and its review) when the
    question asks "by how much" without naming its two sides: the best figure for the question in each of
    the two documents that answer it best, and the difference between them (absolute), cited from both; None
    when fewer than two documents state one, or they state the same amount."""
    said_by = {f for w in content_forms(frame.source) for f in w} | _GAP_FORMS  # where and how the gap is said,
    lookup = replace(frame, change=False, relation=tuple(w for w in frame.relation if not (forms(w) & said_by)))  # not what
    by_doc: dict[str, list[Sentence]] = {}
    for s in sents:
        by_doc.setdefault(s.passage.doc_id, []).append(s)
    found = []
    for doc_sents in by_doc.values():
        fig, score = scored_number(lookup, doc_sents, level=True)
        if fig is not None:
            found.append((score, fig))
    if len(found) < 2:
        return _within_row(lookup, sents)
    found.sort(key=lambda p: -p[0])
    (_, a), (_, b) = found[:2]
    return _gap(a, b, [a.citation, b.citation], "two documents' figures")


def _within_row(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """The gap one table row states between two sources' figures ("Plan figure, FY2025: 7,410; Auditor's figure,
    FY2025: 7,860"): the best row for the question with exactly two figures besides a column restating them,
    their difference (absolute); None when the best row is no such row."""
    rows = [s for s in sents if s.is_row]
    best, _ = best_candidate(frame, rows) if rows else (None, False)
    if best is None:
        return None
    cells = cells_of([best.sentence])
    derived = derived_columns(cells)
    plain = [c for c in cells if (c.row.passage.chunk_id, c.column) not in derived]
    if len(plain) != 2:
        return None
    return _gap(plain[0].figure, plain[1].figure, [best.sentence.quote()], "the two figures of one row")


def _gap(a: Figure, b: Figure, citations: list[Citation], between: str) -> Reading | None:
    """The gap between two figures (the larger minus the smaller), cited; None when they are the same amount
    or of different kinds."""
    if a.value == b.value:
        return None
    try:
        comp = compute("difference", [a, b], absolute=True)
    except ValueError:
        return None
    text = render(comp, [a, b])
    return Reading(kind="computed", answer=text, citations=citations, computed=comp, type="number", score=1.0,
                   reason=f"the gap between {between}: {comp.expression} = {text}")  # fmt: skip


#: options that say which way two amounts differ ("more or less ... than")
MAGNITUDES = frozenset("more less higher lower larger smaller greater fewer bigger".split())


def _more_or_less(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    """"More or less money in FY2026 than in FY2025, and by how much?": the difference of the two sides, and
    the option it makes true."""
    found = _compute(frame, sents)
    if found.computed is None or not isinstance(found.computed.result, Decimal) or found.computed.result == 0:
        return found
    more = found.computed.result > 0
    option = next((o for o in frame.options if (o in ("more", "higher", "larger", "greater", "bigger")) == more),
                  frame.options[0])  # fmt: skip
    amount = found.answer.lstrip("-").replace("-$", "$")
    return found.model_copy(update={"kind": "computed", "answer": f"{option}, by {amount}",
                                    "reason": f"{found.reason}: {option}"})  # fmt: skip


def _reason(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    best: tuple[float, Sentence, int] | None = None
    for s in sents:
        low = s.text.lower()
        at = min((low.find(m) for m in CAUSE_MARKERS if f"{m} " in low), default=-1)
        if at < 0:
            continue
        a, r = about(s, frame), relation(s, frame)
        if (frame.names and a < MIN_ABOUT) or r < 0.5:
            continue
        score = a * r / (1.0 + 0.05 * s.rank)
        if best is None or score > best[0]:
            best = (score, s, at)
    if best is None:
        return not_found("no sentence about it states a cause")
    _, s, at = best
    cause = s.text[at:].strip().rstrip(".")
    return Reading(kind="span", answer=cause, citations=[s.quote()], type="reason", score=round(best[0], 4),
                   reason="the cause the best sentence states")  # fmt: skip


def _yes_no(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    if not frame.names or not frame.relation:
        return not_found("the reader decides a yes/no question only about named things")
    cited = []
    for name in frame.names:
        one = replace(frame, names=(name,))
        hit = next((s for s in sents if about(s, one) >= MIN_ABOUT and relation(s, one) == 1.0), None)
        if hit is None:
            return not_found(f"no sentence about {name.text} states it")
        cited.append(hit)
    ops = [Operand(label=n.text, value=1, raw=s.text[:80], citation=s.quote()) for n, s in zip(frame.names, cited, strict=True)]
    comp = Computation(operation="deduce (entailment)", expression=" and ".join(n.text for n in frame.names),
                       operands=ops, result="yes")  # fmt: skip
    return Reading(kind="choice", answer="yes", citations=[s.quote() for s in cited], computed=comp, type="yes/no",
                   score=1.0, reason="every name has a sentence holding all the question's words")  # fmt: skip

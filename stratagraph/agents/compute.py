"""Answers decided in code, never by a model: comparisons between two named things, yes/no checks, and
arithmetic over typed quantities (KAG §2.3's ``Math``, ``Sort`` and numeric ``Deduce`` operators; BAG-RAG's
sums over aggregated line items). Every result is exact (``Decimal``) and cites every operand.

* :func:`choose`: "which came first, A or B?" / "who is older, A or B?": for each option the dates or
  numbers stated in the evidence sentences that name it; the question's comparative word decides the
  direction (earlier, first, older -> the smallest date; later, younger, newer -> the largest; more, larger,
  higher -> the largest number; fewer, smaller, lower -> the smallest).
  A choice without a comparative word ("which singer is American, A or B?") goes to the one option a sentence
  names together with every property word of the question.
* :func:`yes_no`: "are A and B both X?" / "is A X?": yes when a sentence naming each subject also holds the
  property words; no when the evidence states another value of the property's kind for a subject (a
  nationality or place the question names: "British" against "American"), or, for "the same <noun>", when
  the values of that noun's type stated for each subject have none in common (yes when they share one);
  otherwise the evidence does not settle it (not found).
* :func:`in_common`: "what do A and B have in common?": the nationality (else the noun the copula gives:
  "poet") that the first sentences naming each state for both; None when they share none.
* :func:`decide`: the first of these that settles the question, or None.
* :func:`calculate`: sum, difference, ratio, percent change, min and max over cited :class:`Amount` s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, Literal

from stratagraph.agents.extract import AnswerType, holds, Extraction, QuestionShape, Sentence, citation, question_shape, sentences
from stratagraph.answers import Citation, Computation, Operand
from stratagraph.retrieval.base import Evidence
from stratagraph.text.question import last_sentence

__all__ = ["Amount", "Decided", "calculate", "choose", "decide", "in_common", "in_common_question", "parse_number", "yes_no"]

_EARLY = frozenset("first earlier earliest older oldest before sooner initially".split())
_LATE = frozenset("later latest younger youngest newer newest after last recent recently".split())
_MORE = frozenset("more most larger largest bigger biggest higher highest longer longest taller tallest greater greatest".split())
_LESS = frozenset("fewer fewest less least smaller smallest lower lowest shorter shortest".split())
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NUMBER = re.compile(r"[-(]?\$?\s?\d[\d,]*(?:\.\d+)?\)?")
_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}  # fmt: skip


@dataclass
class Amount:
    """A number stated in the evidence, with what it measures and where it is stated."""

    value: Decimal
    label: str
    raw: str
    citation: Citation
    unit: str | None = None

    def operand(self) -> Operand:
        return Operand(label=self.label, value=self.value, unit=self.unit, raw=self.raw, citation=self.citation)


@dataclass
class Decided:
    """An answer decided in code: the answer (a span of a cited chunk, or yes/no), its citations and the
    computation behind it."""

    answer: str
    citations: list[Citation]
    computation: Computation


def parse_number(text: str) -> Decimal | None:
    """A number as written ("1,320", "(150)", "$18.6", "-3.5") as a Decimal; None when it is not one."""
    s = text.strip()
    negative = s.startswith("(") and s.endswith(")") or s.startswith("-")
    digits = re.sub(r"[^\d.]", "", s)
    if not digits or digits.count(".") > 1:
        return None
    try:
        value = Decimal(digits)
    except InvalidOperation:
        return None
    return -value if negative else value


def _date_key(text: str) -> tuple[int, int, int] | None:
    """A stated date as (year, month, day) for ordering; the year alone when that is all there is."""
    years = _YEAR.findall(text)
    if not years:
        return None
    year = int(years[0])
    month = next((n for name, n in _MONTHS.items() if re.search(rf"\b{name}\b", text, re.IGNORECASE)), 0)
    day_match = re.search(r"\b([0-3]?\d)(?:st|nd|rd|th)?\b", _YEAR.sub("", text))
    day = int(day_match.group(1)) if month and day_match and 1 <= int(day_match.group(1)) <= 31 else 0
    return year, month, day


def _direction(shape: QuestionShape, question: str) -> tuple[str, Literal["min", "max"]] | None:
    words = set(re.findall(r"[a-z]+", question.lower()))
    if words & _EARLY:
        return "date", "min"
    if words & _LATE:
        return "date", "max"
    if words & _MORE:
        return "number", "max"
    if words & _LESS:
        return "number", "min"
    return None


def _names(sentence: Sentence, option: str) -> bool:
    """Whether the sentence names the option (all its words, case-insensitively)."""
    words = [w for w in re.findall(r"\w+", option.lower()) if len(w) > 2] or re.findall(r"\w+", option.lower())
    text = sentence.text.lower()
    return bool(words) and all(re.search(rf"\b{re.escape(w)}\b", text) for w in words)


def _value_in(sentence: Sentence, kind: str) -> tuple[object, str] | None:
    """The first date (or number) the sentence states, with its text."""
    labels = {"DATE"} if kind == "date" else {"CARDINAL", "MONEY", "QUANTITY", "PERCENT"}
    for start, end, label in sentence.spans:
        if label not in labels:
            continue
        text = sentence.evidence.text[start:end]
        if kind == "date":
            key = _date_key(text)
            if key is not None:
                return key, text
        else:
            value = parse_number(text)
            if value is not None:
                return value, text
    return None


def choose(question: str, evidence: Sequence[Evidence], shape: QuestionShape | None = None) -> Decided | None:
    """Decide a choice between two named options by the dates or numbers the evidence states for each, or
    without a comparative word by the property the question names (module docstring); None when the evidence
    does not settle it."""
    shape = shape or question_shape(question)
    if shape.type != AnswerType.CHOICE or len(shape.options) != 2:
        return None
    direction = _direction(shape, question)
    if direction is None:
        return property_choice(evidence, shape)
    kind, pick = direction
    sents = sentences(evidence)
    found: list[tuple[str, object, str, Sentence]] = []
    for option in shape.options:
        hit = next(((v, t, s) for s in sents if _names(s, option) and (v_t := _value_in(s, kind)) for v, t in [v_t]), None)
        if hit is None:
            return None
        found.append((option, hit[0], hit[1], hit[2]))
    (a, va, ta, sa), (b, vb, tb, sb) = found
    if va == vb:
        return None
    first_wins = (va < vb) == (pick == "min")  # type: ignore[operator]
    option, _, _, sent = found[0] if first_wins else found[1]
    span = _option_span(sent, option)
    operands = [
        Operand(label=a, value=_as_decimal(va), raw=ta, citation=citation(sa)),
        Operand(label=b, value=_as_decimal(vb), raw=tb, citation=citation(sb)),
    ]
    comp = Computation(
        operation=f"compare ({'earliest' if kind == 'date' and pick == 'min' else 'latest' if kind == 'date' else pick})",
        expression=f"{pick}({a}: {ta}, {b}: {tb})",
        operands=operands,
        result=span,
    )
    return Decided(answer=span, citations=[citation(sa), citation(sb)] if sa is not sb else [citation(sa)], computation=comp)


def property_choice(evidence: Sequence[Evidence], shape: QuestionShape) -> Decided | None:
    """"Which singer is American, A or B?": the one option a sentence of the evidence names together with every
    property word of the question (its content words other than the options' and the noun asked about); None
    when both or neither have one."""
    if len(shape.options) != 2:
        return None
    option_words = {w.lower() for o in shape.options for w in re.findall(r"\w+", o)}
    props = [w for w in shape.content if w not in option_words and w != shape.focus]
    if not props:
        return None
    sents = sentences(evidence)
    hits = [next((s for s in sents if _names(s, option) and all(holds(s.lemmas, p) for p in props)), None)
            for option in shape.options]  # fmt: skip
    if sum(h is not None for h in hits) != 1:
        return None
    k = 0 if hits[0] is not None else 1
    sent, option = hits[k], shape.options[k]
    assert sent is not None
    span = _option_span(sent, option)
    cite = citation(sent)
    comp = Computation(operation="deduce (entailment)", expression=f"{option}: {' '.join(props)}",
                       operands=[Operand(label=option, value=Decimal(1), raw=" ".join(props), citation=cite)],
                       result=span)  # fmt: skip
    return Decided(answer=span, citations=[cite], computation=comp)


def _as_decimal(value: object) -> Decimal:
    if isinstance(value, tuple):  # a date key: yyyymmdd
        y, m, d = value
        return Decimal(y * 10000 + m * 100 + d)
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _option_span(sentence: Sentence, option: str) -> str:
    """The option as the sentence writes it (so the answer is a span of the cited chunk)."""
    m = re.search(re.escape(option), sentence.text, re.IGNORECASE)
    return m.group(0) if m else option


def yes_no(question: str, evidence: Sequence[Evidence], shape: QuestionShape | None = None) -> Decided | None:
    """"Are A and B both X?" / "Is A X?" (module docstring): yes when, for each subject, a sentence naming it
    holds every property word; no when a subject's sentences state another nationality than the one the
    question names; "the same <noun>": yes / no as the values of the noun's type stated for each subject
    share one or none; None otherwise (the evidence does not settle it). Subjects are the question's named
    entities (a nationality is a property) or else its proper-noun phrases; property words its other content
    words."""
    shape = shape or question_shape(question)
    if shape.type != AnswerType.YES_NO:
        return None
    from stratagraph.text.nlp import NUMERIC_LABELS, load_nlp

    doc = load_nlp()(question)
    asked_from = len(question) - len(last_sentence(question))  # "X has an OBE. Does Y also have one?": Y
    named = [e for e in doc.ents if e.label_ not in NUMERIC_LABELS and e.start_char >= asked_from]
    nationalities = [e.text for e in named if e.label_ == "NORP"]
    spans = [(e.start, e.end) for e in named if e.label_ != "NORP"]
    runs: list[list[Any]] = []
    for nc in doc.noun_chunks:  # names the tagger missed ("Watertown International Airport and ..."), split at "and"
        if nc.start_char < asked_from:
            continue
        runs.append([])
        for t in nc:
            if t.pos_ in ("CCONJ", "PUNCT"):
                runs.append([])
            elif t.pos_ != "DET":
                runs[-1].append(t)
    for words in runs:
        if words and any(t.pos_ == "PROPN" for t in words) and not any(t.ent_type_ == "NORP" for t in words):
            a, b = words[0].i, words[-1].i + 1
            if not any(x < b and a < y for x, y in spans):
                spans.append((a, b))
    subjects = [doc[a:b].text for a, b in sorted(spans)]
    subject_words = {w.lower() for s in subjects for w in re.findall(r"\w+", s)}
    norp = {w.lower() for n in nationalities for w in re.findall(r"\w+", n)}
    props = [lemma for lemma, w in shape.content.items()
             if (w < 2 or lemma in norp or lemma in shape.acronyms) and lemma not in subject_words and lemma not in ("both", "same")]  # fmt: skip
    if not subjects:
        return None
    sents = sentences(evidence)
    same = re.search(r"\bsame\s+(\w+)", question, re.IGNORECASE)
    if same is not None and len(subjects) >= 2:
        return _same(sents, subjects, same.group(1).lower())
    if not props:
        return None
    cited: list[Citation] = []
    operands: list[Operand] = []
    for subject in subjects:
        hit = next((s for s in sents if _names(s, subject) and all(holds(s.lemmas, p) for p in props)), None)
        if hit is None:
            return _other_nationality(sents, subjects, nationalities)
        cited.append(citation(hit))
        operands.append(Operand(label=subject, value=Decimal(1), raw=" ".join(props), citation=citation(hit)))
    comp = Computation(operation="deduce (entailment)", expression=f"all({', '.join(subjects)}: {' '.join(props)})",
                       operands=operands, result="yes")  # fmt: skip
    return Decided(answer="yes", citations=cited, computation=comp)


#: the entity labels that state a value of each kind of noun "the same <noun>" asks about
_SAME_LABELS = {"nationality": {"NORP"}, "country": {"GPE"}, "state": {"GPE"}, "city": {"GPE"}, "place": {"GPE", "LOC"},
                "county": {"GPE"}, "province": {"GPE"}, "district": {"GPE"}, "region": {"GPE", "LOC"}, "year": {"DATE"}, "genre": set(), "language": {"LANGUAGE", "NORP"}}  # fmt: skip
#: sentences naming a subject that are read for its values (the best-ranked ones)
SAME_SENTENCES = 3


#: nouns of a place above which a sentence may name a wider one ("Watertown, Jefferson County, New York,
#: United States": the last place of such a list is the country, not the state)
_BELOW_COUNTRY = frozenset("state city county region province district town".split())


def _values(
    sents: Sequence[Sentence], subject: str, labels: set[str], below_country: bool = False, noun: str = ""
) -> list[tuple[str, Sentence]]:
    """The values of the given labels that the first sentences naming ``subject`` state (not the subject's own
    words), normalised (without the ``noun`` asked about written in lower case: "Jiangxi province" is
    "jiangxi", "New York City" stays whole), each with its sentence; only the values that carry the noun
    when some do; ``below_country``: the last place of a comma-separated list of places is left out (it names
    the country)."""
    out: list[tuple[str, Sentence]] = []
    titled: list[tuple[str, Sentence]] = []  # values that carry the noun itself ("Jiangsu province")
    own = {w.lower() for w in re.findall(r"\w+", subject)} | {noun}
    for sent in [s for s in sents if _names(s, subject)][:SAME_SENTENCES]:
        spans = sorted((a, b, label) for a, b, label in sent.spans if label in labels)
        if below_country:
            text = sent.evidence.text
            last = {spans[i] for i in range(1, len(spans)) if text[spans[i - 1][1] : spans[i][0]].strip() == ","
                    and (i + 1 == len(spans) or text[spans[i][1] : spans[i + 1][0]].strip() != ",")}  # fmt: skip
            spans = [sp for sp in spans if sp not in last]
        for a, b, label in spans:
            value = sent.evidence.text[a:b]
            raw = re.findall(r"\w+", value)
            words = _YEAR.findall(value) if label == "DATE" else [w.lower() for w in raw]
            # the noun written in lower case goes ("Jiangxi province"); in a name it stays ("New York City")
            kept = words if label == "DATE" else [w.lower() for w in raw if w != noun]
            if kept and not set(kept) <= own:
                out.append((" ".join(kept), sent))
                if noun and len(kept) < len(words):
                    titled.append(out[-1])
    return titled or out


def _same(sents: Sequence[Sentence], subjects: Sequence[str], noun: str) -> Decided | None:
    """"Are A and B in the same state?": the values of the noun's type stated for each subject share one (yes)
    or none (no); None when a subject has none."""
    labels = _SAME_LABELS.get(noun)
    if not labels:
        return None
    values = [_values(sents, subject, labels, noun in _BELOW_COUNTRY, noun) for subject in subjects[:2]]
    if not all(values):
        return None
    common = {v for v, _ in values[0]} & {v for v, _ in values[1]}
    if common:
        value = sorted(common)[0]
        hits = [next(s for v, s in vs if v == value) for vs in values]
        answer, expression = "yes", f"{subjects[0]}: {value} = {subjects[1]}: {value}"
    else:
        hits = [vs[0][1] for vs in values]
        answer = "no"
        expression = " vs ".join(f"{subj}: {', '.join(dict.fromkeys(v for v, _ in vs))}" for subj, vs in zip(subjects, values, strict=False))
    cites = [citation(h) for h in hits]
    comp = Computation(operation=f"deduce (same {noun})", expression=expression, result=answer,
                       operands=[Operand(label=subj, value=Decimal(1), raw=", ".join(dict.fromkeys(v for v, _ in vs)),
                                         citation=c) for subj, vs, c in zip(subjects, values, cites, strict=False)])  # fmt: skip
    return Decided(answer=answer, citations=_distinct(cites), computation=comp)


def _other_nationality(sents: Sequence[Sentence], subjects: Sequence[str], nationalities: Sequence[str]) -> Decided | None:
    """"Are A and B both British ...?": no when the sentences naming a subject state another nationality and
    not the one asked (None when the question names none, or no subject's sentences state one)."""
    if len(nationalities) != 1:
        return None
    asked = nationalities[0].lower()
    for subject in subjects:
        stated = _values(sents, subject, {"NORP"})
        if stated and all(v != asked for v, _ in stated):
            value, sent = stated[0]
            cite = citation(sent)
            comp = Computation(operation="deduce (entailment)", expression=f"{subject}: {value}, not {asked}",
                               operands=[Operand(label=subject, value=Decimal(0), raw=value, citation=cite)],
                               result="no")  # fmt: skip
            return Decided(answer="no", citations=[cite], computation=comp)
    return None


_IN_COMMON = re.compile(r"\b(?:do|did|does)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+(?:both\s+)?(?:have|share)\s+in\s+common\b",
                        re.IGNORECASE)


def in_common_question(question: str) -> bool:
    """Whether the question asks what two named things have in common."""
    return _IN_COMMON.search(question) is not None


def in_common(question: str, evidence: Sequence[Evidence]) -> Decided | None:
    """"What do A and B have in common?" (module docstring): a nationality the first sentences naming each
    subject both state, else a noun both are said to be ("an American *poet*"); None when they share none."""
    m = _IN_COMMON.search(question)
    if m is None:
        return None
    subjects = [re.sub(r"^(?:both|either)\s+", "", m.group(g).strip(" ,\"'"), flags=re.IGNORECASE) for g in ("a", "b")]
    sents = sentences(evidence)
    what, found = "nationality", _shared([_values(sents, subject, {"NORP"}) for subject in subjects])
    if found is None:
        what, found = "kind", _shared([_attributes(sents, subject) for subject in subjects])
    if found is None:
        return None
    value, hits = found
    cites = [citation(h) for h in hits]
    comp = Computation(operation=f"deduce (shared {what})", expression=f"{subjects[0]}: {value} = {subjects[1]}: {value}",
                       operands=[Operand(label=subj, value=Decimal(1), raw=value, citation=c)
                                 for subj, c in zip(subjects, cites, strict=True)],
                       result=value)  # fmt: skip
    text = hits[0].evidence.text
    written = next((text[a:b] for a, b, lemma, _h, _d in hits[0].tokens if lemma == value), None)
    if written is None:
        found_at = re.search(rf"\b{re.escape(value)}\b", hits[0].text, re.IGNORECASE)
        written = found_at.group(0) if found_at else None
    if written is None:
        return None  # the answer must be written in the cited sentence
    return Decided(answer=written, citations=_distinct(cites), computation=comp)


def _shared(values: Sequence[list[tuple[str, Sentence]]]) -> tuple[str, list[Sentence]] | None:
    """The first value (in the first subject's order) that every subject's list holds, with a sentence each."""
    if len(values) != 2 or not all(values):
        return None
    for value, sent in values[0]:
        other = next((s for v, s in values[1] if v == value), None)
        if other is not None:
            return value, [sent, other]
    return None


def _attributes(sents: Sequence[Sentence], subject: str) -> list[tuple[str, Sentence]]:
    """The nouns the first sentences naming ``subject`` say it is ("X was an American *writer* and *poet*"):
    the copula's attribute and the nouns coordinated with it, not a noun completed by a preposition ("a
    *member* of the Senate" says what it is a member of, not what it is)."""
    out: list[tuple[str, Sentence]] = []
    for sent in [s for s in sents if _names(s, subject)][:SAME_SENTENCES]:
        toks = sent.tokens
        for i, (_a, _b, lemma, head, dep) in enumerate(toks):
            completed = any(t[3] == i and t[4] == "prep" for t in toks)
            if not completed and (dep == "attr" or (dep == "conj" and toks[head][4] == "attr" and head != i)):
                out.append((lemma, sent))
    return out


def decide(question: str, evidence: Sequence[Evidence], shape: QuestionShape | None = None) -> Decided | None:
    """A choice, a yes/no or a shared property decided in code (module docstring), or None."""
    shape = shape or question_shape(question)
    return choose(question, evidence, shape) or yes_no(question, evidence, shape) or in_common(question, evidence)


def _distinct(cites: Sequence[Citation]) -> list[Citation]:
    out: list[Citation] = []
    for c in cites:
        if all((c.chunk_id, c.quote) != (o.chunk_id, o.quote) for o in out):
            out.append(c)
    return out


Operation = Literal["sum", "difference", "ratio", "percent_change", "min", "max", "count"]


def calculate(operation: Operation, amounts: Sequence[Amount]) -> Computation:
    """Exact arithmetic over cited amounts: ``sum``, ``difference`` (first minus second), ``ratio`` (first over
    second), ``percent_change`` (from first to second), ``min``, ``max``, ``count``. Raises ValueError when the
    operation needs more operands than given or divides by zero."""
    values = [a.value for a in amounts]
    needs = {"difference": 2, "ratio": 2, "percent_change": 2}
    if len(values) < needs.get(operation, 1):
        raise ValueError(f"{operation} needs {needs.get(operation, 1)} operands, got {len(values)}")
    raw = [a.raw or format(a.value, "f") for a in amounts]
    with localcontext() as dec:
        dec.prec = 34
        if operation == "sum":
            result, expr = sum(values, Decimal(0)), " + ".join(raw)
        elif operation == "difference":
            result, expr = values[0] - values[1], f"{raw[0]} - {raw[1]}"
        elif operation == "ratio":
            if values[1] == 0:
                raise ValueError("ratio: division by zero")
            result, expr = values[0] / values[1], f"{raw[0]} / {raw[1]}"
        elif operation == "percent_change":
            if values[0] == 0:
                raise ValueError("percent_change: the first amount is zero")
            result, expr = (values[1] - values[0]) / abs(values[0]) * 100, f"({raw[1]} - {raw[0]}) / |{raw[0]}| * 100"
        elif operation in ("min", "max"):
            pick = min(amounts, key=lambda a: a.value) if operation == "min" else max(amounts, key=lambda a: a.value)
            result, expr = pick.value, f"{operation}({', '.join(raw)})"
        elif operation == "count":
            result, expr = Decimal(len(values)), f"count({', '.join(raw)})"
        else:
            raise ValueError(f"unknown operation {operation!r}")
    units = {a.unit for a in amounts}
    unit = units.pop() if len(units) == 1 and operation not in ("ratio", "percent_change", "count") else (
        "%" if operation == "percent_change" else None)  # fmt: skip
    if result == result.to_integral_value():
        result = result.quantize(Decimal(1))
    return Computation(operation=operation, expression=expr, operands=[a.operand() for a in amounts], result=result,
                       unit=unit)  # fmt: skip


__all__ += ["Extraction"]

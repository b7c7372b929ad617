"""The span reader: the answer to a lookup question is a span of the expected type in the evidence sentence
(or table row) that is about the question's names and holds its relation words; the sentence itself when
it answers but no one span of the type stands out; "not found" otherwise. Never a span of another type.

1. **About.** A sentence is about a name of the frame when it holds the name's content words, itself or
   through its context (its document's title and heading path: a page about "Lake Orrin" need not repeat
   it); a part of a name counts less (a person's surname). A question with names is only answered from
   sentences about one of them (:data:`MIN_ABOUT`).
2. **Relation.** The share of the frame's relation words a sentence holds (its context counts half; a
   table row's own section heading counts whole, since a row is its label, its columns and its section), each
   word weighted by how few of the evidence's sentences hold it (:func:`specificity`: "fluoride" outweighs
   "plan" in a budget); a word that asks for a measure ("how *high*", "*population*") is held by the
   measure's words or units in the sentence. Under :data:`MIN_RELATION` the sentence does not answer.
3. **Candidates** of the expected type (:func:`candidates`): entities of its labels (an unlabelled run of
   proper nouns counts less; a person's "who" may be an organisation, less), dates, numbers of the asked
   kind (money, a percentage, a count of the asked noun, a unit of the asked measure; a bare number, or a
   percentage where no kind is asked ("what detection rate"), less; a number of another kind never),
   for a thing any entity or noun phrase; in a table row the cells (:mod:`stratagraph.reading.tables` picks
   the column). Never a span inside a name of the question, nor one made only of the question's words.
4. **Within a sentence** the candidate nearest the relation words in the dependency parse wins (sum over
   the relation words of ``1 / (1 + distance)``; an argument of a clause whose verb the question asks about,
   in another role than the question's names, much nearer: "Who directed F?" is the agent of "direct" whose
   object is F, :mod:`stratagraph.text.roles`), weighted by how well its type fits and by its period
   (:func:`period_factor`: the period named nearest it in the sentence, else its chunk's heading or document
   metadata, against the periods the question names). When the runner-up
   (another text) scores at least :data:`AMBIGUOUS` of the best, the sentence is the answer.
5. **Across sentences**: ``about × (0.4 + 0.6 × relation)``, discounted by the chunk's rank
   (``1 / (1 + 0.05 rank)``); the best sentence with a candidate answers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from stratagraph.reading.arithmetic import Figure
from stratagraph.reading.frame import Frame
from stratagraph.reading.result import Reading, not_found
from stratagraph.reading.sentences import Candidate, Sentence, metadata_periods, offsets
from stratagraph.reading.words import content_forms, forms, is_stop, word_forms
from stratagraph.text.amounts import Quantity, is_total_label, parse_quantities
from stratagraph.text.lexicon import (
    CITED_DOCUMENT_NOUNS,
    RATE_ADJECTIVES,
    REPORTING_VERBS,
    ORIGINAL_WORDS,
    PUBLISHED_AFTER,
    RESTATED_WORDS,
    FORECAST_WORDS,
    MEASURES,
    ORG_NOUNS,
    NUMBER_NOUNS,
    PEOPLE_NOUNS,
    PLACE_NOUNS,
    SHAPE_NOUNS,
    UNIT_NOUNS,
    GROUP_NOUNS,
    SPENDING_NOUNS,
)
from stratagraph.text.nlp import NUMERIC_LABELS
from stratagraph.text.periods import Period, agreement, find_periods, relative_periods
from stratagraph.text.question import LABELS, AnswerType

__all__ = ["AMBIGUOUS", "MIN_ABOUT", "MIN_RELATION", "Candidate", "about", "best_candidate", "candidates", "figure_of", "periods_of",
           "read_span", "relation"]

#: the least "about" score of a sentence that answers a question with names (ours: the name's words, or its
#: last word plus half of them)
MIN_ABOUT = 0.6
#: the least share of the relation words a sentence must hold to answer (ours)
MIN_RELATION = 0.6
#: the same for a hop of a chain, an entity a later step reads: that step must find its own answer about it,
#: so a weaker fit is checked there (ours)
MIN_HOP_RELATION = 0.5
#: a runner-up at this share of the best candidate's score makes the sentence the answer (ours)
AMBIGUOUS = 0.8
#: how much a chunk's rank discounts its sentences (ours)
RANK_DISCOUNT = 0.05
#: a table row over a sentence that answers as well: a cell is exact as written, prose is often rounded (ours)
ROW_PREFERENCE = 1.25
#: a candidate's weight before its nearness to the relation words counts (ours: nearness decides within a sentence)
NEAR_BASE = 0.25
#: a relation word that is no noun (a verb, an adjective) against a noun (ours)
VERB_WEIGHT = 0.5
#: what naming the asked noun adds to a name's fit ("which river": "the Orla River")
FOCUS_BONUS = 1.25
#: the least fit of a name's type to the question's (an organisation is no person; an unlabelled name may be)
MIN_FIT = 0.5
#: the longest sentence that may stand as an answer (words)
MAX_SENTENCE_WORDS = 40

_CITATION_MARK = re.compile(r"^\[\d+(?:[,–-]\s*\d+)*\]$")
_YEAR = re.compile(r"(?<!\d)(1[0-9]|20)\d\d(?!\d)")
_PEOPLE_FORMS = frozenset(f for w in PEOPLE_NOUNS for f in forms(w))
_NAMED = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "WORK_OF_ART", "EVENT", "PRODUCT", "LAW", "LANGUAGE"})




# ------------------------------------------------------------------------------------------ about, relation
def about(sentence: Sentence, frame: Frame) -> float:
    """How much the sentence is about the frame's names (module docstring, rule 1): the best name's score,
    raised by the others' (a sentence about all the question names is more about it than one about one of
    them); 1 without names. A sentence that, where it would name one of them, names another thing of its kind
    instead (a row under "4.3 Billing Division" for "the Metering Division") is about that other thing:
    :data:`OTHER_OF_KIND` of it."""
    scored = _name_scores(sentence, frame)
    if not scored:
        return 1.0
    scores = [score for score, _ in scored]
    top = max(scores)
    if top >= MIN_ABOUT and len(scores) > 1:
        top *= 0.8 + 0.2 * sum(scores) / len(scores)
    return top * (OTHER_OF_KIND if any(other for _, other in scored) else 1.0)


def _name_scores(sentence: Sentence, frame: Frame) -> list[tuple[float, bool]]:
    """Each name's score in the sentence, and whether the sentence names another thing of its kind in its
    place (its head word after a capitalised word the name lacks, every time, in the sentence or else in the
    innermost heading that says the head word, while the name's own words are not all there)."""
    out = []
    for name in frame.names:
        words = name.forms
        if not words:
            continue
        own = sum(1 for w in words if w & sentence.forms) / len(words)
        ctx = sum(1 for w in words if w & (sentence.forms | sentence.context)) / len(words)
        last = bool(words[-1] & (sentence.forms | sentence.context))
        score = max(own, 0.95 * ctx)
        hits, others = _heads(sentence.text, name.text)
        if not hits:  # the head word held by the heading path only: the innermost heading that says it decides
            for heading in reversed(sentence.passage.section_path):
                hits, others = _heads(heading, name.text)
                if hits:
                    break
        instead = bool(hits) and others == hits and ctx < 1.0
        if score < 1.0 and last and score >= 0.5 and not instead:
            score = max(score, 0.75)
        elif others:  # "the combined budget of the Police Department and the Fire Department": not its own
            score *= SHARED_NAME
        out.append((score, instead))
    return out


_WORD = re.compile(r"[^\W_]+")


def _heads(text: str, name: str) -> tuple[int, int]:
    """How often the text says the name's head word, and how often after a capitalised word the name lacks:
    another thing of its kind ("the *Police* Department" for "the Fire Department", "Oak Street" for "Elm
    Street"). All of them so: the shared head is no evidence of being about the name; some: the text is
    about the name and another of its kind, its figures may be either's or both's."""
    own = [w.casefold() for w in _WORD.findall(name)]
    if len(own) < 2:
        return 0, 0
    head, mods = forms(own[-1]), set(own[:-1])
    words = [m.group() for m in _WORD.finditer(text)]
    hits = [i for i, w in enumerate(words) if i > 0 and forms(w.casefold()) & head]
    others = [i for i in hits if words[i - 1][:1].isupper() and words[i - 1].casefold() not in mods
              and words[i - 1].casefold() not in ("the", "a", "an")]  # fmt: skip
    return len(hits), len(others)


def _amount_of_named_row(frame: Frame) -> bool:
    """Whether the question asks for an amount by a noun that may say its kind ("what County Levy *income*"),
    not for a share of it ("what *share* of revenue")."""
    return frame.type == AnswerType.NUMBER and not frame.percent


def _names_row(sentence: Sentence, frame: Frame) -> bool:
    """Whether the sentence is a table row the question names: its label holds every word of one of the
    question's names, and the question says every word of the label ("County Levy"; "Interest — Series 2019
    Bonds" for "the interest on the Series 2019 bonds"; not "Operating budget proposed by the General Manager"
    for "the General Manager")."""
    if not sentence.is_row:
        return False
    label = content_forms(sentence.label)
    held = frozenset(f for w in label for f in w)
    said = frame.name_forms | frozenset(f for w in frame.relation for f in forms(w))
    return all(w & said for w in label) and any(name.forms and all(w & held for w in name.forms) for name in frame.names)


def _measure_held(sentence: Sentence, frame: Frame) -> bool:
    """Whether the sentence speaks of a measure the frame asks for: one of the words that name it
    ("elevation", "high"), or a unit no other measure is written in ("square kilometres" is an area;
    "metres" may be a length, a height or a depth)."""
    if not frame.measures:
        return False
    words = {w.lower() for w in re.findall(r"[^\W\d_]+|km²|m²", sentence.text)}
    for m in frame.measures:
        if any(forms(a) & sentence.forms for a in m.asks):
            return True
        own = m.units - frozenset(u for other in MEASURES if other.name != m.name for u in other.units)
        if words & own:
            return True
    return False


def specificity(frame: Frame, sents: Sequence[Sentence]) -> dict[str, float]:
    """Each relation word's weight: ``log(1 + (N + 1) / (1 + n))`` over the N evidence sentences, n of which
    hold it (themselves or in their context), so a word every passage holds ("plan", "authority") weighs little
    and a word few hold ("fluoride") much. A noun no sentence holds weighs most, and lowers every sentence's
    share alike (the evidence lacks what is asked about); any other word no sentence holds ("finally",
    "according", a noun naming the answer's form: "what revenue *range*", the level of an organisation's
    part or its people: "the traffic *unit*", "the distribution *crews*", or money paid out in a money
    question: "*spending* on X") is how the question is worded, and weighs nothing. A word that is no noun weighs :data:`VERB_WEIGHT` of a noun's: a verb is often said
    another way ("flows through" / "passes through"), a noun names what is asked about."""
    n = len(sents)
    out = {}
    for w in frame.relation:
        f = forms(w)
        held = sum(1 for s in sents if f & (s.forms | s.context))
        key = (w in frame.nouns and w not in SHAPE_NOUNS and w not in UNIT_NOUNS and w not in GROUP_NOUNS
               and not (frame.money and w in SPENDING_NOUNS))  # "what revenue *range*" names the answer's form,
        # "the traffic *unit*" / "its distribution *crews*" the part its heading need not name, "*spending* on X"
        # the money the currency says
        weight = math.log(1.0 + (n + 1) / (1.0 + held)) if held or key else 0.0
        out[w] = weight if w in frame.nouns else VERB_WEIGHT * weight
    return out


def relation(sentence: Sentence, frame: Frame, weights: dict[str, float] | None = None) -> float:
    """The weighted share of the frame's relation words the sentence holds (module docstring, rule 2): whole in
    the sentence, its document's title or (a row) its own heading, half in the rest of its context; each
    word weighted by ``weights`` (:func:`specificity`; 1 each when not given)."""
    asks = {a for m in frame.measures for a in m.asks}
    words = [w for w in frame.relation if w not in asks]
    weight = {w: (weights or {}).get(w, 1.0) for w in words}
    measure_weight = max(weight.values(), default=1.0) if frame.measures else 0.0
    total = sum(weight.values()) + measure_weight
    if total == 0:  # no relation word: the names say it all; relation words none of the evidence holds: no answer
        return 1.0 if not words else 0.0
    held = 0.0
    own = sentence.heading if sentence.is_row else frozenset()  # a row is its label, its columns and its section
    own = own | sentence.title  # the document's title says what all of it is about ("the Harrow Creek library district")
    for w in words:
        f = forms(w)
        if w == frame.focus and _holds_kind(sentence, frame):
            held += weight[w]  # "which vessel": a sentence naming what the graph types as a vessel speaks of one
            continue
        if w == frame.focus and _amount_of_named_row(frame) and _names_row(sentence, frame):
            held += weight[w]  # "what County Levy *income*": the row the question names is of the kind it says
            continue
        held += weight[w] * (1.0 if f & (sentence.forms | own) else 0.5 if f & sentence.context else 0.0)
    if frame.measures and _measure_held(sentence, frame):
        held += measure_weight
    return held / total


# ------------------------------------------------------------------------------------------ candidates
def _in_names(text: str, frame: Frame) -> bool:
    """A span made only of the question's own words (a name it asks about, restated): never an answer."""
    words = [w for w in re.findall(r"[^\W_]+", text.casefold()) if not is_stop(w)]
    question = word_forms(frame.question)
    return not words or all(forms(w) & question for w in words)


def _person_shaped(ent: Any) -> bool:
    """A name of two or three capitalised words, none of them a word that names an organisation ("Ines
    Marlow", not "Sallow Navigation Company")."""
    words = [t for t in ent if t.is_alpha]
    return 2 <= len(words) <= 3 and all(t.text[:1].isupper() and t.lemma_.lower() not in ORG_NOUNS for t in words)


def _type_fit(label: str, frame: Frame) -> float:
    kind = frame.type
    if kind == AnswerType.PERSON:
        # a capitalised run the tagger did not call a person is one only by its role (_role_fit)
        return {"PERSON": 1.0, "PROPN": 0.4, "NAME_PERSON": 0.6}.get(label, 0.0)
    if kind == AnswerType.PLACE:
        return 1.0 if label in LABELS[AnswerType.PLACE] else {"PROPN": 0.6}.get(label, 0.0)
    if kind == AnswerType.ORG:
        return {"ORG": 1.0, "NAME_PERSON": 0.6, "PROPN": 0.6, "FAC": 0.4, "NP_ORG": 0.8}.get(label, 0.0)
    if kind == AnswerType.DATE:
        return {"DATE": 1.0, "YEAR": 0.8}.get(label, 0.0)
    if kind == AnswerType.THING:
        return 1.0 if label in _NAMED or label == "NAME_PERSON" else 0.8 if label == "PROPN" else 0.5 if label.startswith("NP") else 0.0
    return 0.0


_YEAR_ONLY = re.compile(r"\(?(?:1[5-9]|20)\d\d\)?")
_DAY = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\s+"
                  r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)|\d{4}-\d\d-\d\d", re.IGNORECASE)


def _number_fit(q: Quantity, sentence: Sentence, end: int, frame: Frame) -> float:
    """How well a number fits what the frame asks (module docstring, rule 3)."""
    unit = (q.unit or "").lower()
    after = sentence.passage.text[end : end + 24].lower()
    following = re.findall(r"[^\W\d_]+|km²|m²", after)[:2]
    if not unit and not q.currency and _YEAR_ONLY.fullmatch(q.raw.strip()):
        return 0.0  # "(2017)", "in 1998": a year is no amount, count or measure
    if frame.percent:  # "how much of X" asks a share or an amount of money: both flags
        return 1.0 if unit in ("%", "pp") or (frame.money and q.currency) else 0.0
    if unit in ("%", "pp", "bp"):  # a share answers a number of no stated kind ("what error", "what detection
        return 0.0 if frame.money or frame.unit or frame.measures else 0.8  # rate"), never money, a count or a measure
    if frame.measures:
        units = {u for m in frame.measures for u in m.units}
        if following and following[0] in ("square", "cubic") and not any(m.name in ("area", "volume") for m in frame.measures):
            return 0.0  # "96 square kilometres" is an area, not a length
        if unit in units or (following and following[0] in units):
            return 1.0
        return 0.5 if not unit else 0.0
    if frame.unit:
        if (unit and forms(unit) & forms(frame.unit)) or any(forms(w) & forms(frame.unit) for w in following):
            return 1.0
        if frame.unit in PEOPLE_NOUNS and (unit in PEOPLE_NOUNS or forms(unit) & _PEOPLE_FORMS):
            return 0.9  # "how many people": employees, residents, students
        return 0.6 if not unit else 0.0
    if frame.money:  # prose writes money with its currency; a bare number there is a count
        return 1.0 if q.currency else 0.3
    return 0.8


@lru_cache(maxsize=1024)
def _given(question: str) -> frozenset[Decimal]:
    """The amounts a question states itself (scaled values)."""
    return frozenset(q.value for q in parse_quantities(question))


def candidates(sentence: Sentence, frame: Frame) -> list[Candidate]:
    """The spans of a prose sentence that may answer the frame (module docstring, rule 3)."""
    if sentence.parse is None:
        return []
    sent = sentence.parse
    out: list[Candidate] = []
    if frame.type == AnswerType.NUMBER:
        base, pos = sentence.start, 0
        given = _given(frame.question)
        for q in parse_quantities(sentence.text):
            at = sentence.text.find(q.raw, pos)
            if at < 0 or _CITATION_MARK.match(q.raw.strip()):
                continue
            pos = at + len(q.raw)
            if q.value in given:
                continue  # "a household using 5,000 gallons": the question's own number is no answer
            start, end = base + at, base + at + len(q.raw)
            kind = _number_fit(q, sentence, end, frame)
            if kind < MIN_FIT:
                continue  # never a number of another kind: a count for money, a level for a share
            fit = kind * _change_factor(sentence, start, frame)
            out.append(Candidate(start, end, "NUMBER", fit, _head_at(sentence, start, end), q))
        return [c for c in _ranges(sentence, out) if c.fit > 0]
    spans: list[tuple[int, int, str, int]] = []
    for ent in sent.ents:
        a, b = offsets(sentence, ent)
        named = any(t.text[:1].isupper() or t.like_num for t in ent)  # "the south bank" is no name
        label = ent.label_ if named else "NP"
        if label == "ORG" and _person_shaped(ent):
            label = "NAME_PERSON"  # the small tagger types many people's names as organisations
        spans.append((a, b, label, ent.root.i - sent.start))
    for chunk in sent.noun_chunks:
        if chunk.root.pos_ == "PRON":
            continue
        words = [t for t in chunk if t.pos_ not in ("DET", "PUNCT") and t.tag_ != "PRP$"]
        if not words:
            continue
        a, b = offsets(sentence, chunk)
        a = offsets(sentence, sent.doc[words[0].i : words[0].i + 1])[0]
        label = "PROPN" if all(t.text[:1].isupper() for t in words) else "NP"  # a name is capitalised
        if label == "PROPN" and chunk.root.lemma_.lower() in ORG_NOUNS:
            label = "NP_ORG" if frame.type == AnswerType.ORG else "PROPN"
        if label == "NP" and frame.type == AnswerType.PLACE and chunk.root.lemma_.lower() in PLACE_NOUNS:
            continue  # "the town" is not a place's name
        if any(x <= a and b <= y and (lab in _NAMED or lab in NUMERIC_LABELS) for x, y, lab, _ in spans):
            continue  # a chunk of a name, or of a date ("July" of "July 1, 2024")
        spans.append((a, b, label, chunk.root.i - sent.start))
    if frame.type == AnswerType.DATE:
        for verb, a, b in sentence.implied:  # a life span's years stand alone: "(1851–1929)" says two things
            spans = [sp for sp in spans if not (sp[0] <= a and b <= sp[1] and sp[2] == "DATE")]
        for m in _YEAR.finditer(sentence.text):
            a, b = sentence.start + m.start(), sentence.start + m.end()
            if not any(x <= a and b <= y and lab == "DATE" for x, y, lab, _ in spans):
                spans.append((a, b, "YEAR", _head_at(sentence, a, b)))
    for a, b, label, head in spans:
        if label in NUMERIC_LABELS and label != "DATE":
            continue
        fit = max(_type_fit(label, frame), _role_fit(sent, head, label, frame))
        text = sentence.passage.text[a:b]
        if fit > 0 and frame.focus and (forms(frame.focus) & word_forms(text) or _of_kind(text, frame)):
            fit *= FOCUS_BONUS  # "which river": "the Orla River" names the asked noun, or the graph types it so
        if frame.type == AnswerType.DATE and frame.focus in ("date", "day") and not _DAY.search(text):
            fit *= 0.5  # "on what date": a day, not "the third quarter of fiscal 2025"
        if frame.type == AnswerType.DATE and not any(ch.isdigit() for ch in text):
            fit *= 0.4  # "today", "the summer": a date that names no year or day answers no "when"
        if fit < MIN_FIT or _in_names(text, frame):
            continue
        out.append(Candidate(a, b, label, fit, head))
    return out


#: words right before an amount that make it a change or an earlier value, not the level asked for ("rises
#: *by* $65 thousand", "*up from* 1,890", "an *increase of* 12%")
_CHANGE_BEFORE = re.compile(r"\b(?:by|up|down|from|increase of|decrease of|rise of|fall of|drop of|gain of|loss of|"
                            r"compared with|compared to|versus|vs\.?)\s*(?:about|around|some|nearly|almost)?\s*$",
                            re.IGNORECASE)  # fmt: skip
#: a change's (or an earlier value's) weight when the question asks for a level, and the other way round (ours)
CHANGE_FACTOR = 0.3


def _change_factor(sentence: Sentence, start: int, frame: Frame) -> float:
    """A number stated as a change or an earlier value answers a question about a change, not a level."""
    before = sentence.passage.text[max(sentence.start, start - 24) : start]
    is_change = _CHANGE_BEFORE.search(before) is not None
    return 1.0 if is_change == frame.change else CHANGE_FACTOR


_RANGE_GAP = re.compile(r"^\s*(?:to|-|–|—|and)\s*$")
_FROM = re.compile(r"\bfrom\s*$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s*$", re.IGNORECASE)


def _ranges(sentence: Sentence, cands: list[Candidate]) -> list[Candidate]:
    """Two numbers stated as one range ("$400 million to $430 million", "5-7%", "between 12 and 15") as one
    candidate (its endpoints are not answers on their own); "from A to B" is a change, not a range."""
    text = sentence.passage.text
    out: list[Candidate] = []
    i = 0
    while i < len(cands):
        a = cands[i]
        b = cands[i + 1] if i + 1 < len(cands) else None
        if b is not None:
            gap = text[a.end : b.start]
            before = text[max(sentence.start, a.start - 12) : a.start]
            word = gap.strip().lower()
            same_kind = a.quantity is not None and b.quantity is not None and (
                (a.quantity.unit in ("%", "pp")) == (b.quantity.unit in ("%", "pp")))
            if same_kind and _RANGE_GAP.match(gap) and (
                (word != "and" and not _FROM.search(before)) or (word == "and" and _BETWEEN.search(before))
            ):
                out.append(Candidate(a.start, b.end, "RANGE", max(a.fit, b.fit), b.head, None))
                i += 2
                continue
        out.append(a)
        i += 1
    return out


#: prepositions whose object is a place ("born *in* X", "lies *on* the Orla"), and an agent ("designed *by* X")
_PLACE_PREPS = frozenset("in at near on into through from across along beside within".split())


def _role_fit(sent: Any, head: int, label: str, frame: Frame) -> float:
    """How well a name fits by the role its sentence gives it, whatever its tagger label: the object of a
    place preposition is a place, the agent of a passive is a person or an organisation (the small tagger often
    labels an unknown place an organisation)."""
    if head < 0 or label not in _NAMED | {"PROPN", "NAME_PERSON"}:
        return 0.0
    tok = sent[head]
    prep = tok.head if tok.dep_ == "pobj" else None
    if frame.type == AnswerType.PERSON and label not in _NOT_PEOPLE and _holds_role(tok, frame):
        return 0.8  # a name the tagger may have typed a product or a work, never an organisation or a place
    if frame.type == AnswerType.PLACE and prep is not None and prep.lower_ in _PLACE_PREPS and label != "PERSON":
        return 0.8
    if frame.type == AnswerType.PERSON and prep is not None and prep.dep_ == "agent":
        return 0.8 if label in ("PERSON", "PROPN") else 0.0
    if frame.type == AnswerType.ORG and prep is not None and prep.dep_ == "agent":
        return 0.8 if label in ("ORG", "PROPN") else 0.0
    return 0.0


_NOT_PEOPLE = frozenset({"ORG", "FAC", "GPE", "LOC", "NORP", "EVENT", "LAW", "LANGUAGE"})


def _holds_role(tok: Any, frame: Frame) -> bool:
    """Whether the sentence says the name holds a role the question asks for ("whose *director* is Ines
    Calder", "Ines Calder is the *director*", "the *director*, Ines Calder"): a copula's other side, or the
    noun it stands in apposition to, is a relation word of the question."""
    asked = {f for w in frame.relation for f in forms(w)}

    def said(t: Any) -> bool:
        return bool(t is not None and forms(t.lemma_.lower()) & asked)

    if tok.dep_ == "attr":
        return said(next((c for c in tok.head.children if c.dep_ in ("nsubj", "nsubjpass")), None))
    if tok.dep_ == "nsubj" and tok.head.lemma_ == "be":
        return said(next((c for c in tok.head.children if c.dep_ == "attr"), None))
    return tok.dep_ == "appos" and said(tok.head)


def _head_at(sentence: Sentence, start: int, end: int) -> int:
    """The sentence token (index within the sentence) a character span hangs on: its last token."""
    sent = sentence.parse
    base = sentence.start - sent.start_char
    inside = [t.i - sent.start for t in sent if start <= base + t.idx < end]
    return inside[-1] if inside else -1


# ------------------------------------------------------------------------------------------ nearness
def _path(sent: Any, i: int) -> dict[int, int]:
    """Ancestors of token ``i`` (sentence index) with their distance."""
    out, node, d = {}, sent[i], 0
    while node.i - sent.start not in out and d < 60:
        out[node.i - sent.start] = d
        if node.head.i == node.i:
            break
        node, d = node.head, d + 1
    return out


def _distance(sent: Any, i: int, j: int) -> int:
    up_i, up_j = _path(sent, i), _path(sent, j)
    common = [up_i[k] + up_j[k] for k in up_i if k in up_j]
    return min(common) if common else 60


#: modifiers that do not narrow what a noun measures ("*total* revenue" is the revenue)
_NOT_NARROWING = frozenset("total overall whole entire combined reported".split())


def _anchors(sentence: Sentence, frame: Frame) -> list[tuple[int, float]]:
    """The sentence tokens that hold a relation word (or a measure word) of the frame, each with its weight:
    half when a modifier the question does not have narrows it ("*Hardware* revenue" for "revenue": another,
    narrower amount)."""
    wanted = [forms(w) for w in frame.relation] + [forms(a) for m in frame.measures for a in m.asks]
    asked = word_forms(frame.question)
    sent = sentence.parse
    out = []
    for t in sent:
        if not any(forms(t.lemma_.lower()) & w or forms(t.lower_) & w for w in wanted):
            continue
        narrowed = any(c.dep_ in ("compound", "amod", "nmod") and not c.is_stop and not (forms(c.lemma_.lower()) & asked)
                       and c.lower_ not in _NOT_NARROWING and not find_periods(c.text) and not any(
                           p in c.lower_ for p in ("quarter", "year", "month", "annual"))
                       for c in t.children)  # fmt: skip
        out.append((t.i - sent.start, 0.5 if narrowed else 1.0))
    return out


#: a name's score in a sentence that also names another thing of its kind (ours)
SHARED_NAME = 0.75
#: a sentence's "about" when it names another thing of a question name's kind in its place (ours)
OTHER_OF_KIND = 0.5
#: what being an argument of an asked verb adds to a candidate's nearness (ours)
ROLE = 1.5
#: what a span that states an asked relation by convention (a life span's year for "born") adds to nearness
IMPLIED = 2.0


def _role_of(sentence: Sentence, cand: Candidate, frame: Frame, verbs_only: bool = False) -> float:
    """How much the candidate is an argument of a clause whose verb the question asks about, in a role other
    than the one a question name takes (BiG-RAG's n-ary facts read by role, KAG's ``Retrieval(s, p, o)``):
    "Who directed F?" is the agent of "direct" whose object is F. 0 when it is none; else 0.5, raised to 1 by
    the share of the question's other words the clause's other arguments hold ("did impervious surface
    explain": the clause whose subject is "the fraction of impervious surface", not "distance to the shore").
    ``verbs_only``: of a verb the question says as a verb ("*founded*", not the "found" of "founder")."""
    asked = {f for w in frame.relation if not (verbs_only and w in frame.nouns) for f in forms(w)}
    names = frame.name_forms
    words = [forms(w) for w in frame.relation if not (forms(w) & _verbs_of(sentence, cand, asked))]
    words += list(n for name in frame.names for n in name.forms)
    best = 0.0
    for clause, verb, role, a, b, _prep in sentence.clauses:
        if not (forms(verb) & asked) or not (a <= cand.start and cand.end <= b):
            continue
        text = sentence.passage.text[a:b]
        if names and word_forms(text) & names:
            continue  # the argument the question itself names
        others = frozenset().union(*(word_forms(sentence.passage.text[x:y]) for c, _, _, x, y, _ in sentence.clauses
                                     if c == clause and (x, y) != (a, b)))  # fmt: skip
        share = sum(1 for w in words if w & others) / len(words) if words else 0.0
        best = max(best, 0.5 + 0.5 * share)
    return best


def _verbs_of(sentence: Sentence, cand: Candidate, asked: set[str]) -> frozenset[str]:
    """The forms of the asked verbs of the clauses the candidate is an argument of."""
    return frozenset(f for _, verb, _, a, b, _ in sentence.clauses if a <= cand.start and cand.end <= b
                     for f in forms(verb) if f in asked)  # fmt: skip


def nearness(sentence: Sentence, cand: Candidate, anchors: Sequence[tuple[int, float]], frame: Frame | None = None) -> float:
    """Σ over the anchors outside the candidate of ``1 / (1 + distance)`` in the dependency parse, plus
    :data:`IMPLIED` when the candidate is the span that states an asked relation by convention, plus
    :data:`ROLE` when it is an argument of an asked verb other than the question's names (:func:`_role_of`)."""
    implied = 0.0
    if frame is not None:
        asked = {f for w in frame.relation for f in forms(w)}
        if any(a <= cand.start and cand.end <= b and forms(verb) & asked for verb, a, b in sentence.implied):
            implied = IMPLIED
        implied += ROLE * _role_of(sentence, cand, frame)
    if cand.head < 0 or sentence.parse is None:
        return implied
    sent = sentence.parse
    base = sentence.start - sent.start_char
    inside = {t.i - sent.start for t in sent if cand.start <= base + t.idx < cand.end}
    near = sum(w / (1.0 + _distance(sent, cand.head, a)) for a, w in anchors if a not in inside)
    return implied + near + (FOCUS_VALUE if frame is not None and _values_focus(sent, cand, frame, inside) else 0.0)


#: what being the value of the asked quantity's noun adds to a number's nearness (ours)
FOCUS_VALUE = 2.0


def _values_focus(sent: Any, cand: Candidate, frame: Frame, inside: set[int]) -> bool:
    """Whether a number is the value of the quantity the question names by its noun: within three dependency
    steps of that noun (number, its unit, a preposition, the noun: "a *threshold* of 0.4 mm", "the *error* was
    14.2 percent"; "*lagged* ... by 2.4 hours" is not: the noun is absent). Only for "what <quantity noun>"
    questions (a number asked by its noun)."""
    if frame.type != AnswerType.NUMBER or not frame.focus or frame.focus not in NUMBER_NOUNS or cand.head < 0:
        return False
    focus = forms(frame.focus)
    return any(forms(t.lemma_.lower()) & focus and (t.i - sent.start) not in inside
               and _distance(sent, cand.head, t.i - sent.start) <= 3 for t in sent)  # fmt: skip


# ------------------------------------------------------------------------------------------ periods
#: a candidate's weight when its period is the one asked, and when it is another (ours)
PERIOD_MATCH, PERIOD_CONFLICT = 1.2, 0.3




def period_factor(sentence: Sentence, start: int, frame: Frame) -> float:
    """How a candidate's period weighs (module docstring, rule 4): the period named nearest it in its
    sentence, else its chunk's own (heading, document metadata), against the periods the question asks."""
    if not frame.periods:
        return 1.0
    at = start - sentence.start
    if sentence.is_row:  # "FY2025 Adopted: 1,170": the cell's column header names its period, else the row's label
        cell = next((c for c in sentence.cells if c.start == start), None)
        named = (find_periods(cell.column) if cell is not None else []) or find_periods(sentence.label)  # a row by period
        found = (named[-1],) if named else sentence.own_periods
    else:
        found = tuple(periods_of(sentence.text, at, sentence.own_periods)) or sentence.own_periods
    verdict = agreement(frame.periods, found)
    return PERIOD_MATCH if verdict is True else PERIOD_CONFLICT if verdict is False else 1.0


#: words before a period phrase that make it the period of a compared value ("lower *than in* the second
#: quarter", "up *from* 41.3% *in* Q2", "*compared with* Q2", "$53.1 million, *against* $47.5 million in Q3 2024")
_BASE = re.compile(r"\b(?:than|compared (?:with|to)|versus|vs\.?|from|against)\b[^.;]*$", re.IGNORECASE)
_FIGURE = re.compile(r"(?<![\w.])[$€£¥]?\d[\d,]*(?:\.\d+)?(?:\s?(?:percent|thousand|million|billion|bn|m)\b|%)?")


def periods_of(text: str, at: int, own: Sequence[Period] = ()) -> list[Period]:
    """The period phrases of a sentence that belong to the figure at ``at``: each phrase goes to the figure
    nearest it ("revenue of $151.9 million was up 19% from $127.3 million in the third quarter of 2023": the
    quarter is $127.3 million's, not $151.9 million's), and a phrase before every figure frames them all
    ("In 2023, ..."); [] when none does (then the chunk's period holds). With ``own``, the one period the
    sentence's chunk is about (its heading's or document's), a quarter named without its year takes that
    period's year, and a period named relative to it ("against $348.6 million in the same quarter last year")
    is that period (:func:`~stratagraph.text.periods.relative_periods`)."""
    named = find_periods(text)
    if len(own) == 1 and own[0].year is not None:
        anchor = next((p.with_year_of(own[0]) for p in named if p.unit == own[0].unit), own[0])
        named = [p.with_year_of(own[0]) for p in named]
        named += [r for r in relative_periods(text, anchor) if not any(p.start < r.end and r.start < p.end for p in named)]
        named.sort(key=lambda p: p.start)
    if not named:
        return []
    spans = [(p.start, p.end) for p in named]
    ends = {m.start(): m.end() for m in _FIGURE.finditer(text) if not any(a <= m.start() < b for a, b in spans)}
    figures = list(ends)
    if at not in figures:
        figures.append(at)

    def gap(f: int, p: Period) -> int:  # from the figure's end (its scale word too) to the phrase, or back
        return p.start - ends.get(f, f) if f < p.start else abs(f - p.end)

    own_phrase, framing = [], []
    for p in named:
        base = _BASE.search(text[max(0, p.start - 30) : p.start])
        mine = [f for f in figures if f > p.start - 30 + base.start()] if base else figures
        if not mine:
            continue  # "lower than in the second quarter": the period of a value the sentence does not state
        nearest = min(mine, key=lambda f: (gap(f, p), f != at))
        if nearest == at:
            own_phrase.append(p)
        elif not base and p.end <= min(figures):  # a period opening the sentence frames every figure no phrase
            framing.append(p)  # of its own names ("Second-quarter tolls were $9.6 million, against $8.8 million
    return own_phrase or framing  # in the same quarter last year")


# ------------------------------------------------------------------------------------------ reading
@dataclass
class _Best:
    score: float
    sentence: Sentence
    cand: Candidate
    ambiguous: bool
    reason: str


def score_sentence(sentence: Sentence, frame: Frame, weights: dict[str, float] | None = None) -> tuple[float, float, float]:
    """(score, about, relation) of a sentence for the frame (module docstring, rule 5)."""
    a, r = about(sentence, frame), relation(sentence, frame, weights)
    return a * (0.4 + 0.6 * r) / (1.0 + RANK_DISCOUNT * sentence.rank), a, r


def best_candidate(frame: Frame, sents: Sequence[Sentence], min_relation: float = MIN_RELATION,
                   own_period: bool = False) -> tuple[_Best | None, bool]:  # fmt: skip
    """The best (sentence, candidate) for the frame (module docstring, rules 1-5), and whether some sentence
    about the names held the relation words but no candidate of the type; ``own_period``: only a candidate
    not stated for another period than the one asked (an operand of a computation over periods)."""
    from stratagraph.reading.tables import row_candidates

    best: _Best | None = None
    typeless = False
    weights = specificity(frame, sents)
    for s in sents:
        score, a, r = score_sentence(s, frame, weights)
        if (frame.names and a < MIN_ABOUT) or r < min_relation:
            continue
        if best is not None and score < best.score * 0.5:
            continue
        typed_here = not (frame.type == AnswerType.THING and frame.focus and frame.focus not in SHAPE_NOUNS) or bool(
            forms(frame.focus) & (s.forms | s.context))  # fmt: skip
        if s.is_row:
            if _misses_a_slot(s, frame, weights):
                continue
            cands = row_candidates(s, frame)
            anchors: list[tuple[int, float]] = []
        else:
            cands = candidates(s, frame)
            anchors = _anchors(s, frame)
        if not typed_here:  # "which arm": a sentence that says nothing of an arm answers with a thing the
            cands = [c for c in cands if _of_kind(s.passage.text[c.start : c.end], frame)
                     or _called(s.passage.text[c.start : c.end], frame.focus, sents)]  # evidence calls one, or the graph types as one
        if own_period:
            cands = [c for c in cands if period_factor(s, c.start, frame) != PERIOD_CONFLICT]
        if not cands:
            typeless = True
            continue
        scored = sorted(((c.fit * period_factor(s, c.start, frame) * version_factor(s, c.start, frame) * cited(s, c, frame) * per_rate(s, c, frame)
                          * (NEAR_BASE + nearness(s, c, anchors, frame)), c) for c in cands), key=lambda p: (-p[0], p[1].start))  # fmt: skip
        top, cand = scored[0]
        text = s.passage.text[cand.start : cand.end].strip().casefold()
        rival = next((x for x, c in scored[1:] if s.passage.text[c.start : c.end].strip().casefold() != text), 0.0)
        total = (score * (0.6 + 0.4 * cand.fit) * period_factor(s, cand.start, frame) * version_factor(s, cand.start, frame)
                 * (_row_weight(s, frame) if s.is_row else 1.0))  # fmt: skip
        if not s.is_row and _role_of(s, cand, frame, verbs_only=True) > 0:
            total *= ROLE_TOTAL  # an argument of the asked verb ("is *adopted* in the amount of $58,725")
        if frame.actual and _forecast(s, cand):
            total *= FORECAST  # "what was the margin": a figure of what is expected is no result
        if _reported_later(s, frame):
            total *= LATER_REPORT  # a later report's figure for the period asked stands over the first one
        total *= cited(s, cand, frame)  # "the plan's figure of €1,980 thousand" in the memo asked: not the memo's own
        total *= per_rate(s, cand, frame)  # "what monthly drift": "0.8% per month", not "for 18 months"
        if best is None or total > best.score:
            best = _Best(total, s, cand, rival >= AMBIGUOUS * top and not s.is_row,
                         f"about {a:.2f}, relation {r:.2f}, fit {cand.fit:.2f}")  # fmt: skip
    return best, typeless


#: what being an argument of an asked verb weighs in a candidate's total (ours)
ROLE_TOTAL = 1.15
#: a forecast sentence's weight for a question of what was (ours)
FORECAST = 0.5
#: the weight of a figure for the period asked from a document that reports on a later period (ours)
LATER_REPORT = 1.1


#: a prose figure's weight when the words before it mark it as superseded ("previously reported as $4,105
#: thousand": all but ruled out, it is not the figure) or as superseding ("restated to $3,985 thousand"), for a
#: question that does not ask for the first (ours)
SUPERSEDED, SUPERSEDING = 0.1, 1.3
_VERSION_BEFORE = 4  # how many words before a figure may mark its version


def version_factor(sentence: Sentence, start: int, frame: Frame) -> float:
    """How a prose figure's version weighs (:data:`SUPERSEDED`, :data:`SUPERSEDING`; swapped when the question
    asks for the figure as first reported); 1 for a table cell (its column says it: tables._standing). A
    version word just before the figure says it ("previously reported as", "restated to"); in a sentence that
    restates, "to" marks the new figure and "from" the old ("restated X to $88.1 million from $90.3 million"),
    and a figure a reporting word follows is the one first published ("the $90.3 million we reported")."""
    if sentence.is_row:
        return 1.0
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", sentence.passage.text[sentence.start : start])]
    before = set(words[-_VERSION_BEFORE:])
    old, new = bool(before & ORIGINAL_WORDS), bool(before & RESTATED_WORDS)
    if set(words) & RESTATED_WORDS and not old:  # "restated X *to* $88.1 million *from* the $90.3 million"
        lead = next((w for w in reversed(words[-3:]) if w in ("to", "from")), "")
        old, new = (True, False) if lead == "from" else (False, True) if lead == "to" else (old, new)
    after = re.findall(r"[A-Za-z]+", sentence.passage.text[start : sentence.end])[1:_VERSION_BEFORE + 1]
    if not old and not new and {w.lower() for w in after} & PUBLISHED_AFTER:  # "the $90.3 million we *reported*"
        old = True
    if old == new:
        return 1.0
    original = frame.asks_original
    return (SUPERSEDING if original else SUPERSEDED) if old else (SUPERSEDED if original else SUPERSEDING)


#: the weight of a figure stated per the period a rate adjective of the question names ("what *monthly* drift":
#: "0.8% ... per month"), and of a span of that period's unit ("18 months"), which is a duration, not the rate (ours)
PER_RATE, DURATION = 1.3, 0.5


def per_rate(sentence: Sentence, cand: Candidate, frame: Frame) -> float:
    """:data:`PER_RATE` / :data:`DURATION` for a number question with a rate adjective (lexicon.RATE_ADJECTIVES),
    else 1."""
    patterns = _rate_patterns(frame.question) if frame.type == AnswerType.NUMBER else None
    if patterns is None:
        return 1.0
    duration, per = patterns
    after = sentence.passage.text[cand.end : sentence.end].lower()
    return DURATION if duration.match(after) else PER_RATE if per.match(after) else 1.0


@lru_cache(maxsize=256)
def _rate_patterns(question: str) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """For a question's rate adjectives, what a span of their periods ("18 months") and a figure per one
    ("... per month") look like after a figure (compiled once per question, not per candidate); None without."""
    units = {RATE_ADJECTIVES[w] for w in re.findall(r"[a-z]+", question.lower()) if w in RATE_ADJECTIVES}
    if not units:
        return None
    unit = "|".join(sorted(units))
    return (re.compile(rf"\s*(?:{unit})s?\b"),
            re.compile(rf"(?:\W*[\w%]+){{0,5}}?\W+(?:per|a|an|each|every)\s+(?:{unit})\b"))  # fmt: skip


#: the weight of a figure a document attributes to another document, when the question asks what the first says (ours)
CITED_FIGURE = 0.3
_CITED_BEFORE = 5  # how many words before a figure may name the document it is cited from
CITED_DOCUMENT_FORMS = frozenset(f for w in CITED_DOCUMENT_NOUNS for f in forms(w))
REPORTING_FORMS = frozenset(f for w in REPORTING_VERBS for f in forms(w))


def cited(sentence: Sentence, cand: Candidate, frame: Frame) -> float:
    """:data:`CITED_FIGURE` for a prose figure the sentence attributes to another document than the question's
    source, else 1."""
    if not frame.source or sentence.is_row or not _cited_from_another(sentence, cand.start, cand.end, frame):
        return 1.0
    return CITED_FIGURE


@lru_cache(maxsize=256)
def _source_forms(source: str) -> frozenset[str]:
    """The word forms of a question's source ("the audit memo"), once per source, not per candidate."""
    return frozenset(f for w in content_forms(source) for f in w)


def _cited_from_another(sentence: Sentence, start: int, end: int, frame: Frame) -> bool:
    """Whether the sentence attributes the figure to another document than the one the question asks about
    (``frame.source``): a possessive document noun just before it ("the *plan's* figure of €1,980 thousand"),
    one that is the subject of a reporting verb ("the *plan states* that 11,200 lines ..."), or "in the
    <document noun>" right after it ("€1,980 thousand *in the plan*"), the noun not the source's."""
    text = sentence.passage.text
    own = _source_forms(frame.source)
    before = [w.lower() for w in re.findall(r"[A-Za-z]+(?:['’]s)?", text[sentence.start : start])[-_CITED_BEFORE:]]
    for i, word in enumerate(before):
        noun = word[:-2] if word.endswith(("'s", "’s")) else word
        if not forms(noun) & CITED_DOCUMENT_FORMS or forms(noun) & own:
            continue
        if noun != word or (i + 1 < len(before) and forms(before[i + 1]) & REPORTING_FORMS):
            return True  # "the *plan's* figure of", "the *plan states* that 11,200 ..."
    after = re.match(r"\W*(?:[a-z]+\s+){0,2}?in\s+the\s+([a-z]+)", text[end : sentence.end].lower())
    return bool(after and forms(after.group(1)) & CITED_DOCUMENT_FORMS and not forms(after.group(1)) & own)


def _reported_later(sentence: Sentence, frame: Frame) -> bool:
    """Whether the sentence's document reports on a period after every period the question asks (its
    metadata: the Q3 report's figure for Q2), unless the question asks for the figure as first reported:
    the latest report's figure is the one that stands (a restated figure, or the same one repeated)."""
    if not frame.periods or frame.asks_original:
        return False
    own = [p.closes for p in metadata_periods(sentence.passage.metadata) if p.closes is not None]
    asked = [p.closes for p in frame.periods]
    return bool(own) and all(a is not None and max(own) > a for a in asked)


def _holds_kind(sentence: Sentence, frame: Frame) -> bool:
    """Whether the sentence names an entity the graph types as the asked noun (``frame.kinds``)."""
    if not frame.kinds:
        return False
    return bool(_kind_pattern(frame.kinds).search(" ".join(sentence.text.split()).casefold()))


@lru_cache(maxsize=64)
def _kind_pattern(kinds: frozenset[str]) -> re.Pattern[str]:
    """One pattern for the names of a kind (compiled once per kind, not once per sentence and name)."""
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(kinds, key=len, reverse=True)) + r")\b")


def _of_kind(text: str, frame: Frame) -> bool:
    """Whether the graph's concept layer types the span as the asked noun (``frame.kinds``, KAG §2.4)."""
    return bool(frame.kinds) and " ".join(text.split()).strip(" .,;:").casefold() in frame.kinds


def _called(text: str, noun: str, sents: Sequence[Sentence]) -> bool:
    """Whether some evidence sentence calls the span a ``noun``: the noun within two words after it ("our
    Kestrel picking arm", "40 Kestrel arms") or right before it ("the arm Kestrel")."""
    name = re.escape(text.strip())
    kind = rf"{re.escape(noun)}(?:s|es)?"
    pattern = re.compile(rf"\b{name}\b(?:\W+\w+){{0,2}}?\W+{kind}\b|\b{kind}\W+{name}\b", re.IGNORECASE)
    return any(pattern.search(s.text) for s in sents)


def _forecast(sentence: Sentence, cand: Candidate) -> bool:
    """Whether the candidate is stated as a forecast: a forecast word governs it within its own clause ("we
    *expect* revenue of $150 million") or names what it is of ("our *guidance* range of 41.5% to 42.5%")."""
    if sentence.parse is None or cand.head < 0:
        return False
    tok = sentence.parse[cand.head]
    for t in (tok, *tok.ancestors):
        if t.lemma_.lower() in FORECAST_WORDS or any(
            c.dep_ in ("compound", "amod") and c.lemma_.lower() in FORECAST_WORDS for c in t.children
        ):
            return True
        if t.pos_ in ("VERB", "AUX") and t is not tok:
            # its own clause's verb: a forecast word of another clause does not govern it ("we *estimate* a rate
            # ... and obtain an error of 31 years")
            return False
    return False


#: a row whose label the question names in part, or a total row it does not name; and any other row (ours)
UNNAMED_TOTAL, UNNAMED_ROW = 0.85, 0.6
#: a row of another period than the one asked (ours)
CONFLICT_ROW = 0.2


def _row_weight(row: Sentence, frame: Frame) -> float:
    """A table row's weight against a sentence (:data:`ROW_PREFERENCE`): whole when the question names its
    label; less for a total row it does not name ("how much does the Fire Department request" asks for the
    department's total); least for another line ("Personnel")."""
    labelled = find_periods(row.label)
    if labelled and frame.periods:  # a row per period ("Q3", "Fiscal year 2025"): the period asked names it
        verdict = agreement(frame.periods, labelled)
        return ROW_PREFERENCE if verdict is True else ROW_PREFERENCE * (UNNAMED_ROW if verdict is None else CONFLICT_ROW)
    words = content_forms(row.label)
    asked = word_forms(frame.question)
    named = sum(1 for w in words if w & asked)
    if words and named == len(words):
        return ROW_PREFERENCE
    if is_total_label(row.label):
        return ROW_PREFERENCE * UNNAMED_TOTAL
    return ROW_PREFERENCE * (UNNAMED_TOTAL if named else UNNAMED_ROW)


#: the share of the question's nouns (by weight) a table row may leave out (ours)
SLOT_SLACK = 0.25


def _misses_a_slot(row: Sentence, frame: Frame, weights: dict[str, float]) -> bool:
    """Whether a table row leaves out the nouns the question asks about: a row is its label, its columns and
    its section, and a question's nouns say which ("personnel at the reservoir plant"); one in four may be
    said another way ("plant" for "facility"), by weight (:func:`specificity`): the row may miss a quarter of
    the nouns' weight. A noun the evidence holds nowhere, or one that names the answer's form, is no slot."""
    held = row.forms | row.context | row.heading
    slots = [w for w in frame.relation if w in frame.nouns and weights.get(w, 0.0) > 0 and w not in SHAPE_NOUNS
             and not (w == frame.focus and _amount_of_named_row(frame) and _names_row(row, frame))]  # fmt: skip
    missing = sum(weights[w] for w in slots if not (forms(w) & held))
    return missing > SLOT_SLACK * sum(weights[w] for w in slots)


def figure_of(best: _Best) -> Figure | None:
    """The chosen number as a cited figure (a table cell cited with its row, a prose amount with its
    sentence)."""
    q = best.cand.quantity
    if q is None:
        return None
    s = best.sentence
    label = f"{s.label} | {next((c.column for c in s.cells if c.start == best.cand.start), '')}" if s.is_row else (
        _words_before(s, best.cand.start))  # fmt: skip
    return Figure(quantity=q, citation=s.quote(), label=label, row=s.label, column=label.split(" | ")[-1] if s.is_row else "")


def _words_before(s: Sentence, start: int, n: int = 8) -> str:
    before = s.passage.text[s.start : start]
    return " ".join(before.split()[-n:]) or s.text[:60]


def read_span(frame: Frame, sents: Sequence[Sentence], hop: bool = False) -> Reading:
    """The span (or sentence) answering a lookup frame from the sentences (module docstring)."""
    best, typeless = best_candidate(frame, sents, MIN_HOP_RELATION if hop else MIN_RELATION,
                                    own_period=frame.type == AnswerType.NUMBER and bool(frame.periods))
    if best is None:
        if typeless:
            return not_found(f"the sentences about it hold no {frame.type.value}")
        return not_found("no sentence is about the question's names and holds its words")
    s, cand = best.sentence, best.cand
    if best.ambiguous and len(s.text.split()) <= MAX_SENTENCE_WORDS:
        return Reading(kind="sentence", answer=s.text, citations=[s.quote()], type=frame.type.value,
                       score=round(best.score, 4), reason=f"the sentence ({best.reason}; no one {frame.type.value} stands out)")  # fmt: skip
    fig = figure_of(best)
    comp = fig.at_scale() if fig is not None else None
    if comp is not None:  # a cell in thousands: its exact amount
        return Reading(kind="computed", answer=fig.text(), citations=[s.quote()], computed=comp, type="number",
                       score=round(best.score, 4), reason=f"the cell of the best row, at the table's scale ({best.reason})")  # fmt: skip
    end = _with_unit(s, cand) if cand.label in ("NUMBER", "RANGE") else cand.end
    text = _tidy(s.passage.text[cand.start : end])
    return Reading(kind="span", answer=text, citations=[s.quote()], type=frame.type.value, score=round(best.score, 4),
                   reason=f"the {frame.type.value} of the best sentence ({best.reason})")  # fmt: skip


_UNIT_WORDS = frozenset(u for m in MEASURES for u in m.units)
_AFTER = re.compile(r"\s*([^\W\d_]+|km²|m²|°[CF])", re.UNICODE)


def _with_unit(s: Sentence, cand: Candidate) -> int:
    """Where a number's answer span ends: after the unit written after it ("884 *metres*", "1,870 *square
    kilometres*", "48,300 *calls*" for its counted noun, "$715 *per dry ton*")."""
    text, end = s.passage.text, cand.end
    counted = (cand.quantity.unit or "").lower() if cand.quantity is not None else ""
    words = 0
    per, end_before = False, end
    while words < 4:
        m = _AFTER.match(text, end)
        if m is None or m.start(1) - end > 1 or end >= s.end:
            break
        w = m.group(1).lower()
        if w == "per" and not per:
            per, end_before = True, end
        elif not (w in _UNIT_WORDS or w == counted or (per and not is_stop(w))):
            break
        end, words = m.end(), words + 1
    return end if not per or end > end_before + 4 else end_before


def _tidy(text: str) -> str:
    """A span without a list bullet, emphasis marks, a leading article or trailing punctuation (still a
    substring of its sentence)."""
    text = re.sub(r"^[\s\-*•·]+", "", text).strip().strip(",;:.*_").strip()
    return re.sub(r"^(?:the|a|an)\s+(?=\S)", "", text, flags=re.IGNORECASE) if len(text.split()) > 1 else text

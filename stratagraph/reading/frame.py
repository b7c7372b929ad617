"""The question's frame, computed once per question: what it asks for and about what. Every reading step
(tables, facts, spans, arithmetic, sections) works from the frame, never from the question's text again.

* ``type``, ``focus``, ``options``: the expected answer type and the noun asked about
  (:func:`stratagraph.text.question.asked`: a person, a place, an organisation, a date, a number, a thing, a
  section, yes/no, a choice, a reason);
* ``names``: what the question is about: titles in quotes, named entities (not dates or amounts), runs of
  proper nouns; the answer must come from evidence that mentions one of them (or is a page about it);
  ``phrases``: its other noun phrases, which the reader takes as names when the evidence's structure does
  (a heading or a table row is called "Wastewater Operations");
* ``relation``: the question's other content words (lemmas): what it asks about the names ("population",
  "born", "director"); operation words ("combined", "more") and question words are not relation words;
* ``measures``: for a number, the measured properties the relation words ask for (a height, an area, a
  population: :data:`~stratagraph.text.lexicon.MEASURES`; "how long" a length or a duration), answered by a
  number carrying one of their units;
  ``unit``: the counted noun of "how many <noun>"; ``money`` / ``percent``: what kind of amount;
* ``periods``: the reporting periods it names (FY2026, Q3 2024, 2019);
* ``plan``: the computation it asks for (:func:`stratagraph.reading.arithmetic.plan`), with one sub-question
  per operand; ``superlative``: "max" / "min" for "which <noun> ... the largest / the most";
* ``quantifier``: "all" / a number for "every X" / "the two X" (a sum over a set of rows or sections);
* ``kinds``: the names of the entities the graph's concept layer types as the asked noun ("which composer":
  the entities that BELONG_TO composer, or to a kind that IS_A composer); the caller fills it from the store
  (KAG §2.4), the reader touches none;
* ``source``: where the answer is said ("according to the audit", "what count does the committee give"):
  the reader reads the documents whose title names it, when some do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any

from stratagraph.reading.arithmetic import Plan, asks_which_way, over_quarters, plan
from stratagraph.reading.words import content_forms, forms, is_stop
from stratagraph.text.lexicon import (
    ORIGINAL_ASKED,
    QUANTITY_VERBS,
    AMOUNT_PHRASES,
    ATTRIBUTION_WORDS,
    REPORTING_VERBS,
    CURRENCY_NOUNS,
    HAVING_VERBS,
    DOCUMENT_NOUNS,
    FORECAST_WORDS,
    AMOUNT_VERBS,
    CHANGE_WORDS,
    GENERIC_PEOPLE,
    DATE_NOUNS,
    PERIOD_WORDS,
    SHAPE_NOUNS,
    MEASURES,
    OPERATION_WORDS,
    QUANTIFIERS,
    SUPERLATIVE_MAX,
    SUPERLATIVE_MIN,
    SPENDING_NOUNS,
    Measure,
)
from stratagraph.text.nlp import NUMERIC_LABELS, load_nlp
from stratagraph.text.periods import Period, find_periods, spelled_change
from stratagraph.text.question import AnswerType, asked, final_verb

__all__ = ["Frame", "Name", "frame_of"]

_QUOTED = re.compile(r"(?<![^\W_])[\"“‘']([^\"“”‘’']{3,200})[\"”’'](?![^\W_])")  # an apostrophe inside a word ("Orla's") opens and closes no title
_MONEY = re.compile(r"\b(?:how much(?! of\b)|cost|costs|spend|spent|spending|budget|budgeted|revenue|price|pay|paid|payments?|fund|funding|"
                    r"income|expense|salary|sales|profit|fee|fees|charge|dollars?|euros?|pounds|earn(?:s|ed|ings)?|brings? in|brought in)\b", re.IGNORECASE)  # fmt: skip
_PERCENT = re.compile(r"\b(?:percent|percentage|share|proportion|margin)\b|%", re.IGNORECASE)
_LINKS = frozenset("of the and & de la von van der del du for".split())


@dataclass(frozen=True)
class Name:
    """Something the question names: its text as written and the label it was found by."""

    text: str
    label: str  # a spaCy entity label, "PROPN" for a run of proper nouns, "TITLE" for a quoted title

    @property
    def forms(self) -> tuple[frozenset[str], ...]:
        return content_forms(self.text)


@dataclass(frozen=True)
class Frame:
    """What a question asks for and about what (module docstring)."""

    question: str
    type: AnswerType
    focus: str
    options: tuple[str, ...]
    names: tuple[Name, ...]
    phrases: tuple[str, ...]  # its other noun phrases ("wastewater operations"), which may name a heading
    relation: tuple[str, ...]  # lemmas
    nouns: frozenset[str]  # the relation words that are nouns (what is asked about, not how it is said)
    measures: tuple[Measure, ...]  # the measured properties a number may be of ("how long": a length or a duration)
    unit: str  # "how many <noun>": the noun (lemma)
    money: bool
    percent: bool
    periods: tuple[Period, ...]
    plan: Plan | None
    change: bool  # it asks about a change ("grew", "increase", "fall")
    superlative: str  # "max", "min" or ""
    quantifier: int | str | None  # "all", a count, or None
    threshold: tuple[str, Decimal] | None  # "more than $500 thousand": ("above", 500000)
    actual: bool = False  # asked in the past tense, not of a forecast: what was, not what was expected
    source: str = ""  # where the answer is said: "according to *the audit*", "what does *the committee* give"
    kinds: frozenset[str] = frozenset()  # names (folded) the store types as the asked noun (concept layer)

    @property
    def relation_forms(self) -> tuple[frozenset[str], ...]:
        return tuple(forms(w) for w in self.relation)

    @property
    def name_forms(self) -> frozenset[str]:
        return frozenset(f for n in self.names for w in n.forms for f in w)

    @property
    def asks_number(self) -> bool:
        return self.type == AnswerType.NUMBER

    @property
    def asks_original(self) -> bool:
        """Whether it asks for a figure as first reported ("as *originally* reported"), not the one that
        stands now (a restated one)."""
        return bool({w.lower() for w in re.findall(r"[A-Za-z]+", self.question)} & ORIGINAL_ASKED)


@lru_cache(maxsize=2048)
def frame_of(question: str) -> Frame:
    """The frame of ``question`` (module docstring)."""
    question = " ".join(question.split())
    doc = load_nlp()(question)
    what = asked(question)
    names = _names(doc, question)
    in_names = {i for n_start, n_end in _name_tokens(doc, names) for i in range(n_start, n_end)}
    periods = tuple(find_periods(question))
    in_periods = {t.i for p in periods for t in doc if p.start <= t.idx < p.end}
    relation: list[str] = []
    nouns: set[str] = set()
    identifying = _relative_clauses(doc)
    last_verb = final_verb(doc)
    if identifying:  # a name only a relative clause holds identifies a thing the answer's sentence need not name
        kept = [n for n, (a, b) in zip(names, _name_tokens(doc, names), strict=False) if not set(range(a, b)) <= identifying]
        names = kept if len(_name_tokens(doc, names)) == len(names) else names
    for t in doc:
        lemma = t.lemma_.lower()
        if t.i in in_names or t.i in in_periods or t.is_punct or t.like_num or is_stop(t.lower_) or is_stop(lemma):
            continue
        if t.i in identifying or (lemma in DOCUMENT_NOUNS and t.pos_ == "NOUN"):
            continue  # "in the study *that the cool roof paper cites*": which document, not what it says
        if lemma in ATTRIBUTION_WORDS and t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "to":
            continue  # "according to the audit": where the answer is said, not what it is about
        if lemma in OPERATION_WORDS or t.lower_ in OPERATION_WORDS or not any(ch.isalpha() for ch in lemma) or (
            lemma in HAVING_VERBS and (t.i == last_verb or not (t.pos_ == "NOUN" and any(c.dep_ == "det" for c in t.children)))
        ):  # "how many hours does the corpus hold" (the small parser may take "hold" for a noun), not "the hold"
            continue
        if lemma not in relation:
            relation.append(lemma)
        if t.pos_ in ("NOUN", "PROPN"):
            nouns.add(lemma)
    if periods:  # "quarterly revenue in Q3": the period says it
        relation = [w for w in relation if w not in PERIOD_WORDS]
    if what.focus in SHAPE_NOUNS or (what.type == AnswerType.DATE and what.focus in DATE_NOUNS) or (
        what.type == AnswerType.PERSON and what.focus in GENERIC_PEOPLE
    ):  # "which *man* founded": the answer's kind
        relation = [w for w in relation if w != what.focus]  # "in what *year*": the answer's kind, not its topic
    words = {t.lower_ for t in doc} | {t.lemma_.lower() for t in doc}
    lemmas = {t.lemma_.lower() for t in doc if t.pos_ != "ADJ" or t.lemma_.lower() != "last"}
    measures = tuple(m for m in MEASURES if lemmas & m.asks) if what.type == AnswerType.NUMBER else ()
    unit = _counted(doc) if what.focus == "many" else ""
    if unit in GENERIC_PEOPLE:  # "how many people did X employ": the count's unit, said by the number's noun
        relation = [w for w in relation if w != unit]
    part = bool(re.search(r"\bhow much of\b", question, re.IGNORECASE))  # a part of something: a share or an amount
    # "how many positions are budgeted" counts positions: a count is never money, whatever verb it takes
    counted = what.focus == "many" and unit not in CURRENCY_NOUNS
    money = (bool(_MONEY.search(question)) and not _PERCENT.search(question) and not counted) or part
    if money and what.type in (AnswerType.NUMBER, AnswerType.REASON):  # "what did X *spend*": the currency says it
        pairs = [(a.lemma_.lower(), b.lower_) for a, b in zip(doc, doc[1:])]
        phrasal = {w for pair in pairs if pair in AMOUNT_PHRASES for w in pair}  # "set aside"
        relation = [w for w in relation if w not in AMOUNT_VERBS and w not in phrasal
                    and not (w == what.focus and w in SPENDING_NOUNS)]  # "X's replacement *spending*": money, no line word
    elif what.type == AnswerType.NUMBER and what.focus not in ("what", "many", "much"):  # "what drift did the study
        relation = [w for w in relation if w not in QUANTITY_VERBS]  # *measure*": the number asked by its noun is the measurement
    superlative = ""
    if what.type in (AnswerType.THING, AnswerType.SECTION, AnswerType.ORG, AnswerType.PLACE, AnswerType.PERSON,
                     AnswerType.NUMBER, AnswerType.DATE):  # fmt: skip
        for t in doc:
            if _in_main_clause(t) and t.lower_ in SUPERLATIVE_MAX | SUPERLATIVE_MIN:
                if t.i + 1 < len(doc) and doc[t.i + 1].lower_ in ("recent", "recently"):
                    continue  # "the *most recently* reported figure": the latest version of a figure, no largest one
                superlative = "max" if t.lower_ in SUPERLATIVE_MAX else "min"
                break
    quantifier = next((QUANTIFIERS[w] if QUANTIFIERS[w] is not None else "all" for w in
                       (t.lower_ for t in doc) if w in QUANTIFIERS), None)  # fmt: skip
    threshold = _threshold(question) if what.focus == "many" else None
    compared = asks_which_way(question)
    computation = plan(doc) if threshold is None else None  # "how many items exceed $500": a count, no difference
    if threshold is None and (what.type == AnswerType.NUMBER or money) and not superlative:
        computation = _over_periods(question, changed=bool(words & CHANGE_WORDS) or compared) or computation
    source = _source(doc)
    return Frame(
        question=question,
        type=AnswerType.NUMBER if compared and computation is not None else what.type,  # "how did X in Q3
        # compare with Q2": the signed change answers it
        focus=what.focus,
        options=what.options,
        names=tuple(names),
        phrases=tuple(_phrases(doc, in_names | in_periods)),
        relation=tuple(relation),
        nouns=frozenset(nouns),
        measures=measures,
        unit=unit,
        change=bool(words & CHANGE_WORDS) or compared,
        money=money,
        percent=bool(_PERCENT.search(question)) or part,
        periods=periods,
        plan=computation,
        superlative=superlative,
        quantifier=quantifier,
        threshold=threshold,
        actual=any(t.tag_ == "VBD" for t in doc) and not lemmas & FORECAST_WORDS,
        source=source,
    )


def _over_periods(question: str, changed: bool) -> Plan | None:
    """What an amount question over periods a report does not state as one asks to compute: the sum of a run
    of quarters ("the first half of 2025"), or a change against the same period a year before ("year over
    year") or the one before ("sequentially") from the two periods' levels (:mod:`stratagraph.text.periods`)."""
    if not changed:
        return over_quarters(question)
    spelled = spelled_change(question)
    found = plan(load_nlp()(spelled)) if spelled else None
    return replace(found, spelled=spelled) if found is not None and spelled else None


def _source(doc: Any) -> str:
    """Where the question says its answer is said: the object of "according to" ("according to *the Q3
    letter*"), or the subject of a reporting verb whose object the question asks ("what count does *the
    committee* give", "what revenue does *the grand jury memo* project"; :data:`REPORTING_VERBS`)."""
    for t in doc:
        if t.lemma_.lower() in ATTRIBUTION_WORDS and t.i + 1 < len(doc) and doc[t.i + 1].lower_ == "to":
            obj = next((c for c in doc[t.i + 1].children if c.dep_ == "pobj"), None)
            if obj is not None:
                return " ".join(w.text for w in obj.subtree if not w.is_punct)
    for t in doc:  # "what ... does [the committee] give": a question's subject sits between its auxiliary and verb
        if t.lower_ not in ("do", "does", "did", "will", "would") or not any(w.lower_ in ("what", "which", "how") for w in doc[: t.i]):
            continue
        for j in range(t.i + 1, min(t.i + 8, len(doc))):
            w = doc[j]
            if w.lemma_.lower() in REPORTING_VERBS and j > t.i + 1:
                words = [x for x in doc[t.i + 1 : j] if x.pos_ != "DET"]
                if words and words[-1].pos_ in ("NOUN", "PROPN"):
                    return " ".join(x.text for x in words)
                break
            nominal = w.pos_ in ("NOUN", "PROPN", "ADJ", "DET", "PART", "CCONJ")
            if not nominal and not (w.pos_ == "VERB" and j + 1 < len(doc) and doc[j + 1].pos_ in ("NOUN", "PROPN")):
                break  # (the small tagger takes a noun before a noun for a verb now and then: "the *harbour* audit")
    return ""


_RELATIVE = frozenset("that which who whom whose".split())


def _relative_clauses(doc: Any) -> set[int]:
    """The tokens of relative clauses after the question's main verb ("... in the study *that the cool roof
    paper cites*"): they identify a thing (a later hop of a chain finds it), the answer's sentence does not
    say them. By the parse (``relcl``) or, as the small parser often misattaches them, by their surface: a
    relative word right after a noun, to the end of the clause."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return set()  # "Which city whose council adopted ...": the clause is all the question says
    out: set[int] = set()
    for t in doc:
        if t.i <= root.i:
            continue
        if t.dep_ == "relcl":
            out.update(x.i for x in t.subtree)
        elif root.pos_ == "VERB" and t.lower_ in _RELATIVE and t.i > 0 and doc[t.i - 1].pos_ in ("NOUN", "PROPN"):
            end = next((x.i for x in doc[t.i :] if x.is_punct), len(doc))
            out.update(range(t.i, end))
    return out


def _phrases(doc: Any, taken: set[int]) -> list[str]:
    """The question's noun phrases outside its names and periods, without determiners and wh-words."""
    out = []
    for chunk in doc.noun_chunks:
        words = [t for t in chunk if t.i not in taken and t.pos_ not in ("DET", "PRON", "PUNCT") and not t.is_stop]
        if words and any(t.pos_ in ("NOUN", "PROPN") for t in words):
            out.append(" ".join(t.text for t in words))
    return out


def _in_main_clause(tok: Any) -> bool:
    """A word of the question's own clause or of its object ("which item grows *the most*", "which program
    gets *the largest* share"), not of a phrase inside it ("covers X at *the largest* station")."""
    node = tok
    for _ in range(12):
        if node.dep_ in ("pobj", "relcl", "acl", "advcl"):
            return False
        if node.head.i == node.i:
            return True
        node = node.head
    return False


_THRESHOLD = re.compile(r"\b(more than|over|above|exceeds?|exceeding|greater than|at least|less than|under|below|"
                        r"fewer than|at most)\s+([-$€£]?\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:thousand|million|billion))?)",
                        re.IGNORECASE)  # fmt: skip


def _threshold(question: str) -> tuple[str, Decimal] | None:
    """"How many ... exceed $500 thousand": the side and the amount a count keeps."""
    from stratagraph.text.amounts import parse_quantities

    m = _THRESHOLD.search(question)
    if m is None:
        return None
    found = parse_quantities(m.group(2))
    if len(found) != 1:
        return None
    below = m.group(1).lower() in ("less than", "under", "below", "fewer than", "at most")
    return ("below" if below else "above"), found[0].value


def _counted(doc: Any) -> str:
    """The noun "how many" counts ("how many *hours* of audio" -> hour)."""
    many = next((t for t in doc if t.lower_ == "many" and t.i > 0 and doc[t.i - 1].lower_ == "how"), None)
    if many is None:
        return ""
    chunk = next((c for c in doc.noun_chunks if c.start <= many.i < c.end or c.start == many.i + 1), None)
    if chunk is not None and chunk.root.pos_ in ("NOUN", "PROPN") and chunk.root.i > many.i:
        return chunk.root.lemma_.lower()
    nxt = many.i + 1
    return doc[nxt].lemma_.lower() if nxt < len(doc) and doc[nxt].pos_ == "NOUN" else ""


def _names(doc: Any, question: str) -> list[Name]:
    """Quoted titles, named entities (not numbers or dates) and runs of proper nouns, longest first where they
    overlap, in question order."""
    found: list[tuple[int, int, Name]] = []
    for m in _QUOTED.finditer(question):
        found.append((m.start(1), m.end(1), Name(m.group(1).strip(), "TITLE")))
    for ent in doc.ents:
        if ent.label_ in NUMERIC_LABELS or not any(t.text[:1].isupper() for t in ent):
            continue  # a date or amount, or lower-case words the tagger took for a name
        toks = [t for t in ent if not (t.i == ent.start and t.lower_ in ("the", "a", "an"))]
        parts: list[list[Any]] = [[]]
        for t in toks:  # "Brightcairn's Analytics Suite": the owner and the thing it owns are two names
            if t.tag_ == "POS":
                parts.append([])
            else:
                parts[-1].append(t)
        for part in parts:
            if part and any(t.text[:1].isupper() for t in part):
                start, end = part[0].idx, part[-1].idx + len(part[-1])
                found.append((start, end, Name(question[start:end], ent.label_)))
    run: list[Any] = []
    for t in [*doc, None]:
        proper = t is not None and t.text[:1].isupper() and (t.pos_ == "PROPN" or (t.i > 0 and t.pos_ in ("NOUN", "ADJ")))
        link = t is not None and run and t.lower_ in _LINKS and t.i + 1 < len(doc) and doc[t.i + 1].text[:1].isupper()
        if proper or link:
            run.append(t)
            continue
        while run and run[-1].lower_ in _LINKS:
            run.pop()
        if run and not all(w.lower_ in _LINKS for w in run):
            start, end = run[0].idx, run[-1].idx + len(run[-1])
            found.append((start, end, Name(question[start:end], "PROPN")))
        run = []
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    out: list[tuple[int, int, Name]] = []
    for start, end, name in found:
        if any(s <= start and end <= e for s, e, _ in out):
            continue
        out = [o for o in out if not (start <= o[0] and o[1] <= end)]
        out.append((start, end, name))
    periods = [(p.start, p.end) for p in find_periods(question)]
    periods += [(e.start_char, e.end_char) for e in doc.ents if e.label_ in NUMERIC_LABELS]  # "March 2025"
    return [n for s, e, n in sorted(out, key=lambda o: o[0]) if not any(ps <= s and e <= pe for ps, pe in periods)]


def _name_tokens(doc: Any, names: list[Name]) -> list[tuple[int, int]]:
    """Token spans of the names in the question."""
    out = []
    for n in names:
        at = doc.text.find(n.text)
        if at < 0:
            continue
        toks = [t.i for t in doc if at <= t.idx < at + len(n.text)]
        if toks:
            out.append((toks[0], toks[-1] + 1))
    return out

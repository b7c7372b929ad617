"""What a question asks for, read from its form alone (no evidence): the expected answer type, its content
words, a choice's options, the noun after "which" / "what". Shared by the no-LLM answer rule
(:mod:`stratagraph.agents.extract`, rule 1 of its docstring) and BiG-RAG's ExtractAnswer in
:mod:`stratagraph.retrieval.traversal`, which prefers bridge entities of the type a sub-question asks for.

* ``who`` / ``whom`` / ``whose`` a person, ``where`` a place, ``when`` a date, "how many" / "how much" a
  number, "which <noun>" / "what <noun>" by the noun (a city is a place, a company an organisation, a year a
  date...); a question (or its last sentence) opening with an auxiliary is yes/no, "..., A or B?" a choice
  between A and B; anything else a thing (a named entity or noun phrase).
* content words: the question's lemmas that are not question words, stop words or punctuation; proper nouns
  weigh 2, others 1; an acronym it writes in capitals is remembered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from stratagraph.text.nlp import load_nlp


class AnswerType(StrEnum):
    PERSON = "person"
    PLACE = "place"
    ORG = "organisation"
    DATE = "date"
    NUMBER = "number"
    YES_NO = "yes/no"
    CHOICE = "choice"
    THING = "thing"


#: spaCy entity labels that can answer each type
LABELS: dict[AnswerType, frozenset[str]] = {
    AnswerType.PERSON: frozenset({"PERSON"}),
    AnswerType.PLACE: frozenset({"GPE", "LOC", "FAC"}),
    AnswerType.ORG: frozenset({"ORG"}),
    AnswerType.DATE: frozenset({"DATE"}),
    AnswerType.NUMBER: frozenset({"CARDINAL", "MONEY", "QUANTITY", "PERCENT"}),
    AnswerType.THING: frozenset(
        {
            "PERSON",
            "GPE",
            "LOC",
            "FAC",
            "ORG",
            "NORP",
            "WORK_OF_ART",
            "EVENT",
            "PRODUCT",
            "LAW",
            "LANGUAGE",
        }
    ),  # fmt: skip
}


#: entity types other extractors write (the LLM extractor's prompt asks for LOCATION, ORG, PERSON...) -> the
#: tagger label of :data:`LABELS` they mean
LABEL_ALIASES = {"LOCATION": "LOC", "PLACE": "GPE", "CITY": "GPE", "COUNTRY": "GPE", "ORGANIZATION": "ORG",
                 "ORGANISATION": "ORG", "COMPANY": "ORG", "PER": "PERSON"}  # fmt: skip


#: the noun after "which" / "what" -> the type it asks for
NOUN_TYPES: dict[str, AnswerType] = {
    **dict.fromkeys(["city", "country", "state", "town", "village", "place", "county", "region", "province", "capital", "river", "lake", "mountain", "island", "nation", "continent", "district", "neighborhood", "neighbourhood", "street", "location", "birthplace", "hometown", "homeland", "headquarters", "area", "suburb", "borough", "municipality", "parish", "peninsula", "valley", "sea", "ocean", "bay", "coast"], AnswerType.PLACE),
    **dict.fromkeys(["company", "organization", "organisation", "team", "band", "agency", "university", "institute", "school", "college", "club", "corporation", "firm", "party", "network", "studio", "label", "newspaper", "magazine", "publisher", "group", "airline", "station", "channel", "broadcaster", "brand", "manufacturer", "retailer", "chain", "franchise", "league", "conference", "denomination", "church", "army"], AnswerType.ORG),
    **dict.fromkeys(["person", "man", "woman", "director", "author", "actor", "actress", "singer", "founder", "player", "president", "writer", "composer", "producer", "king", "queen", "leader", "ceo", "chair", "chairman", "chairwoman", "musician", "artist", "politician", "designer", "engineer", "scientist", "father", "mother", "son", "daughter", "wife", "husband", "spouse", "brother", "sister", "child", "parent", "grandfather", "grandmother", "uncle", "aunt", "nephew", "niece", "cousin", "godfather", "successor", "predecessor", "coach", "manager", "captain", "host", "poet", "novelist", "painter", "architect", "sculptor", "comedian", "rapper", "drummer", "guitarist", "vocalist", "frontman", "songwriter", "lyricist", "screenwriter", "playwright", "journalist", "editor", "photographer", "philosopher", "mathematician", "physicist", "chemist", "biologist", "economist", "historian", "inventor", "explorer", "entrepreneur", "businessman", "businesswoman", "athlete", "footballer", "wrestler", "boxer", "senator", "governor", "mayor", "minister", "premier", "emperor", "prince", "princess", "duke", "judge", "lawyer", "monarch", "ruler", "pope", "bishop"],
        AnswerType.PERSON),
    **dict.fromkeys(["year", "date", "day", "month", "decade", "century", "era"], AnswerType.DATE),
    **dict.fromkeys(["number", "amount", "percentage", "percent", "share", "population", "revenue", "cost", "price", "total", "sum", "budget", "income", "figure", "rate", "count", "spending", "spend", "expenditure", "expense", "allocation", "appropriation", "funding", "sale", "profit", "margin", "growth", "headcount", "salary", "wage", "capacity", "area", "length", "height", "weight", "size", "distance", "score", "balance", "reserve", "debt", "value", "worth", "attendance", "enrollment"], AnswerType.NUMBER),
}  # fmt: skip


AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
    ]
)
QUESTION_WORDS = frozenset(
    ["what", "which", "who", "whom", "whose", "when", "where", "why", "how"]
)
HOW_NUMBER = frozenset(
    [
        "many",
        "much",
        "long",
        "old",
        "far",
        "tall",
        "big",
        "large",
        "high",
        "deep",
        "wide",
    ]
)


@dataclass
class QuestionShape:
    """What a question asks for."""

    type: AnswerType
    content: dict[str, float]  # content lemma -> weight (proper nouns 2, others 1)
    options: list[str] = field(
        default_factory=list
    )  # a choice's alternatives, as written
    focus: str = ""  # the noun after which/what, or the how-word
    measure: str = (
        ""  # for a number: "percent", "money" or "count" when the question says which
    )
    acronyms: frozenset[str] = (
        frozenset()
    )  # content words the question writes in capitals ("cfo")


_CAP_WORD = r"[A-Z0-9][\w&'.-]*"
_LINK = r"(?:of|the|and|de|la|le|du|von|van|der|del|&)"
#: a run of capitalised words at the end of a text ("... formed first The Exies")
_TRAILING_NAME = re.compile(rf"(?:{_CAP_WORD}\s+(?:{_LINK}\s+)*)*{_CAP_WORD}\s*$")


def last_sentence(question: str) -> str:
    """The question's last sentence ("X has an OBE. Does Y also have one?" -> "Does Y also have one?")."""
    parts = re.split(r"(?<=[.?!])\s+(?=[A-Z])", question.strip())
    return parts[-1] if parts else question


def choice_options(question: str) -> list[str]:
    """ "..., A or B?" -> [A, B]: the alternatives after the last comma or colon when there are two; without a
    comma ("Which band was formed first The Exies or Circus Diablo?") the first is the run of capitalised
    words before "or"."""
    body = last_sentence(question).strip().rstrip("?").strip()
    pieces = re.split(r"[,:;]", body)
    tail = pieces[-1]
    parts = re.split(r"\s+or\s+", tail)
    if len(parts) != 2:
        return []
    first = re.sub(
        r"^\s*(?:either|between|whether)\s+", "", parts[0], flags=re.IGNORECASE
    ).strip()
    if (
        len(pieces) == 1
        or first.split()[:1]
        and first.split()[0].lower() in QUESTION_WORDS | AUXILIARIES
    ):
        # no comma before the options: the first is the name the "or" follows, when both read as names
        m = _TRAILING_NAME.search(first)
        second = parts[1].strip(" \"'")
        if m is None or not second[:1].isupper() or m.start() == 0:
            return []
        first = m.group(0)
    options = [first.strip(" \"'"), parts[1].strip(" \"'")]
    options = [re.sub(r"^(?:the|a|an)\s+", "", o, flags=re.IGNORECASE) for o in options]
    return options if all(o and len(o.split()) <= 12 for o in options) else []


_PERCENT_WORDS = re.compile(
    r"\b(percent|percentage|share|proportion|%|margin|rate)\b", re.IGNORECASE
)
_MONEY_WORDS = re.compile(r"\b(how much|budget|cost|spend|spending|spent|revenue|price|pay|paid|fund|funding|income|"
                          r"expense|salary|sales|profit|dollars?|euros?)\b", re.IGNORECASE)  # fmt: skip
_COUNT_WORDS = re.compile(r"\bhow many\b", re.IGNORECASE)
#: the spaCy labels a number of each measure comes as, best first (a table cell is CARDINAL whatever it counts)
MEASURE_LABELS = {
    "percent": ("PERCENT",),
    "money": ("MONEY", "CARDINAL"),
    "count": ("CARDINAL", "QUANTITY"),
}


def _measure(question: str) -> str:
    if _PERCENT_WORDS.search(question):
        return "percent"
    if _COUNT_WORDS.search(question):
        return "count"
    if _MONEY_WORDS.search(question):
        return "money"
    return ""


@lru_cache(maxsize=512)
def question_shape(question: str) -> QuestionShape:
    """The expected answer type and content words of a question (module docstring, rule 1)."""
    shape = _shape(question)
    if shape.type == AnswerType.NUMBER:
        shape.measure = _measure(question)
    return shape


def _shape(question: str) -> QuestionShape:
    doc = load_nlp()(question)
    content: dict[str, float] = {}
    acronyms = set()
    for tok in doc:
        lemma = tok.lemma_.lower()
        if (
            tok.is_stop
            or tok.is_punct
            or lemma in QUESTION_WORDS
            or not any(ch.isalnum() for ch in lemma)
        ):
            continue
        content[lemma] = max(
            content.get(lemma, 0.0), 2.0 if tok.pos_ == "PROPN" else 1.0
        )
        if 2 <= len(tok.text) <= 5 and tok.text.isalpha() and tok.text.isupper():
            acronyms.add(lemma)
    last = last_sentence(question)
    words = [
        t.lower_
        for t in doc
        if not t.is_punct and t.idx >= len(question) - len(last.lstrip()) - 1
    ]
    first = words[0] if words else ""
    options = choice_options(question) if " or " in last.lower() else []
    acr = frozenset(acronyms)
    if options and (first in ("which", "who", "what") or first in AUXILIARIES):
        return QuestionShape(AnswerType.CHOICE, content, options, acronyms=acr)
    if first in AUXILIARIES:
        return QuestionShape(AnswerType.YES_NO, content, acronyms=acr)
    all_words = [t.lower_ for t in doc if not t.is_punct]
    for i, w in enumerate(all_words):
        if w not in QUESTION_WORDS:
            continue
        nxt = all_words[i + 1] if i + 1 < len(all_words) else ""
        if w in ("who", "whom", "whose"):
            return QuestionShape(AnswerType.PERSON, content, focus=w, acronyms=acr)
        if w == "where":
            return QuestionShape(AnswerType.PLACE, content, focus=w, acronyms=acr)
        if w == "when":
            return QuestionShape(AnswerType.DATE, content, focus=w, acronyms=acr)
        if w == "how" and nxt in HOW_NUMBER:
            return QuestionShape(AnswerType.NUMBER, content, focus=nxt, acronyms=acr)
        if w in ("which", "what"):
            noun = _head_noun(doc, _token_at(doc, i))
            kind = NOUN_TYPES.get(noun, AnswerType.THING)
            return QuestionShape(kind, content, focus=noun, acronyms=acr)
    return QuestionShape(AnswerType.THING, content, acronyms=acr)


def _token_at(doc: Any, i: int) -> int:
    """The doc index of the ``i``-th token that is not punctuation."""
    return [t.i for t in doc if not t.is_punct][i]


def _head_noun(doc: Any, i: int) -> str:
    """The noun a which/what at token ``i`` asks about: the last noun of the noun run it opens ("which American
    city", "which NFL team"; "which type of plane" -> "plane"), else the first noun after the verb ("what is
    the name of the city" -> "city"), else ""."""
    run = []
    for tok in doc[i + 1 :]:
        if tok.pos_ not in ("NOUN", "PROPN", "ADJ", "NUM") and not (
            tok.pos_ == "PUNCT" and tok.text in "-'"
        ):
            break
        run.append(tok)
    nouns = [t for t in run if t.pos_ == "NOUN"] or [
        t for t in run if t.pos_ == "PROPN"
    ]
    if nouns:
        head = nouns[-1]
        lemma = head.lemma_.lower()
        nxt = doc[head.i + 1 : head.i + 3]
        if (
            lemma in ("type", "kind", "sort", "name")
            and len(nxt) == 2
            and nxt[0].lower_ == "of"
        ):
            return nxt[1].lemma_.lower()
        return lemma
    # "what is the name of the city ..." / "what is the population of ...": the first noun after the verb
    for tok in [t for t in doc[i + 1 : i + 9] if not t.is_punct]:
        if tok.pos_ == "NOUN":
            lemma = tok.lemma_.lower()
            if lemma not in ("name", "type", "kind"):
                return lemma
    return ""

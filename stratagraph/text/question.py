"""What a question asks for, read from its form alone (no evidence): the expected answer type, the noun it
asks about, a choice's options. Shared by the reader's question frame (:mod:`stratagraph.reading.frame`) and
BiG-RAG's ExtractAnswer in :mod:`stratagraph.retrieval.traversal` (which prefers bridge entities of the type a
sub-question asks for), so both read a question the same way.

* a question (or its last sentence) opening with an auxiliary is yes/no; "..., A or B?" (or "A or B" opened
  by which / who / what) is a choice between A and B;
* ``who`` / ``whom`` / ``whose`` a person, ``where`` a place, ``when`` a date, ``why`` a reason, "how many" /
  "how much" / "how <adjective>" ("how high") a number;
* "which <noun>" / "what <noun>" / "what is the <noun> of": by the noun (:data:`~stratagraph.text.lexicon.NOUN_TYPES`:
  a river is a place, a company an organisation, a year a date, a population a number; a section, part or
  chapter a section of the documents; "the name/type/kind of X": X);
* anything else a thing (a named entity or a noun phrase).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

from stratagraph.text.lexicon import AMOUNT_PHRASES, AMOUNT_VERBS, AUXILIARIES, QUANTITY_VERBS, HOW_NUMBER, MEASURED_WITH_MODIFIER, NOUN_TYPES, QUESTION_WORDS, STRUCTURAL_NOUNS
from stratagraph.text.nlp import load_nlp
from stratagraph.text.periods import find_periods

__all__ = ["LABELS", "LABEL_ALIASES", "Asked", "AnswerType", "asked", "choice_options", "expected_labels", "final_verb", "last_sentence"]


class AnswerType(StrEnum):
    PERSON = "person"
    PLACE = "place"
    ORG = "organisation"
    DATE = "date"
    NUMBER = "number"
    THING = "thing"
    SECTION = "section"
    YES_NO = "yes/no"
    CHOICE = "choice"
    REASON = "reason"


#: spaCy entity labels that can answer each type
LABELS: dict[AnswerType, frozenset[str]] = {
    AnswerType.PERSON: frozenset({"PERSON"}),
    AnswerType.PLACE: frozenset({"GPE", "LOC", "FAC"}),
    AnswerType.ORG: frozenset({"ORG"}),
    AnswerType.DATE: frozenset({"DATE"}),
    AnswerType.NUMBER: frozenset({"CARDINAL", "MONEY", "QUANTITY", "PERCENT"}),
    AnswerType.THING: frozenset({"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "WORK_OF_ART", "EVENT", "PRODUCT",
                                 "LAW", "LANGUAGE"}),  # fmt: skip
}
#: entity types other extractors write (the LLM extractor's LOCATION, ORGANIZATION...) -> the tagger's label
LABEL_ALIASES = {"LOCATION": "LOC", "PLACE": "GPE", "CITY": "GPE", "COUNTRY": "GPE", "ORGANIZATION": "ORG",
                 "ORGANISATION": "ORG", "COMPANY": "ORG", "PER": "PERSON"}  # fmt: skip
_BY_NOUN = {"person": AnswerType.PERSON, "place": AnswerType.PLACE, "org": AnswerType.ORG, "date": AnswerType.DATE,
            "number": AnswerType.NUMBER}  # fmt: skip
#: two opposite words offered as the answer ("before or after", "more or less"): a choice between them
_BINARY = re.compile(r"\b(before|more|higher|larger|earlier|greater|bigger)\s+or\s+(after|less|lower|smaller|later|fewer)\b",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Asked:
    """What a question asks for: the answer type, the noun it asks about (or the how-word), the options of a
    choice."""

    type: AnswerType
    focus: str = ""
    options: tuple[str, ...] = ()


def last_sentence(question: str) -> str:
    """The question's last sentence ("X has an OBE. Does Y also have one?" -> "Does Y also have one?")."""
    parts = re.split(r"(?<=[.?!])\s+(?=[A-Z])", question.strip())
    return parts[-1] if parts else question


_CAP_WORD = r"[A-Z0-9][\w&'.-]*"
_LINK = r"(?:of|the|and|de|la|le|du|von|van|der|del|&)"
_TRAILING_NAME = re.compile(rf"(?:{_CAP_WORD}\s+(?:{_LINK}\s+)*)*{_CAP_WORD}\s*$")


def choice_options(question: str) -> list[str]:
    """ "..., A or B?" -> [A, B]: the alternatives after the last comma or colon when there are two; without a
    comma the first is the run of capitalised words before "or" ("Which came first The X or Y?")."""
    body = last_sentence(question).strip().rstrip("?").strip()
    pieces = re.split(r"[,:;]", body)
    parts = re.split(r"\s+or\s+", pieces[-1])
    if len(parts) != 2:
        return []
    first = re.sub(r"^\s*(?:either|between|whether)\s+", "", parts[0], flags=re.IGNORECASE).strip()
    words = first.split()
    if len(pieces) == 1 or (words and words[0].lower() in QUESTION_WORDS | AUXILIARIES):
        m = _TRAILING_NAME.search(first)
        second = parts[1].strip(" \"'")
        if m is None or not second[:1].isupper() or m.start() == 0:
            return []
        first = m.group(0)
    options = [re.sub(r"^(?:the|a|an)\s+", "", o.strip(" \"'"), flags=re.IGNORECASE) for o in (first, parts[1])]
    return options if all(o and len(o.split()) <= 12 for o in options) else []


@lru_cache(maxsize=2048)
def asked(question: str) -> Asked:
    """What ``question`` asks for (module docstring)."""
    doc = load_nlp()(question)
    last = last_sentence(question)
    tail = [t for t in doc if not t.is_punct and t.idx >= len(question) - len(last.lstrip()) - 1]
    first = tail[0].lower_ if tail else ""
    if " or " in last.lower() and (first in ("which", "who", "what") or first in AUXILIARIES):
        options = choice_options(question)
        if len(options) == 2:  # "which *company* is older, A or B?": the noun names the options' kind
            noun = head_noun(doc, tail[0].i) if first in ("which", "what") else ""
            return Asked(AnswerType.CHOICE, noun, options=tuple(options))
    binary = _BINARY.search(last)
    if binary is not None:  # "was X before or after Y?", "more or less than ...?"
        return Asked(AnswerType.CHOICE, options=(binary.group(1).lower(), binary.group(2).lower()))
    if first in AUXILIARIES:
        return Asked(AnswerType.YES_NO)
    words = [t for t in tail if not t.is_punct]
    for i, tok in enumerate(words):
        w = tok.lower_
        if w not in QUESTION_WORDS or _relative(tok):
            continue
        nxt = words[i + 1].lower_ if i + 1 < len(words) else ""
        if w in ("who", "whom", "whose"):
            return Asked(AnswerType.PERSON, w)
        if w == "where":
            return Asked(AnswerType.PLACE, w)
        if w == "when":
            return Asked(AnswerType.DATE, w)
        if w == "why":
            return Asked(AnswerType.REASON, w)
        if w == "how":
            return Asked(AnswerType.NUMBER, nxt) if nxt in HOW_NUMBER else Asked(AnswerType.THING, "how")
        if w == "what" and _amount_verb(tok.head) and tok.dep_ in ("dobj", "dep", "nsubj", "attr"):
            return Asked(AnswerType.NUMBER, "what")  # "what did X *spend* on Y", "what does X cost"
        # "what drift did the study *measure*", "what fee does X *charge*": a noun a verb of amounts takes as its
        # object (the verb may end a do-support question, where the small parser may tag it a noun)
        noun_tok, last = tok.head, final_verb(doc)
        ends_amount = last > noun_tok.i and doc[last].lower_ in QUANTITY_VERBS
        if (w == "what" and tok.dep_ == "det" and noun_tok.lemma_.lower() not in NOUN_TYPES and (ends_amount or (
                noun_tok.dep_ in ("dobj", "nsubjpass") and noun_tok.head.lemma_.lower() in QUANTITY_VERBS))):  # fmt: skip
            return Asked(AnswerType.NUMBER, noun_tok.lemma_.lower())
        noun = head_noun(doc, tok.i)
        owner = tok.head if tok.dep_ == "det" and tok.head.dep_ == "poss" else None
        if owner is not None and noun not in STRUCTURAL_NOUNS:  # "which *unit's* budget holds X": the unit is asked
            kind = owner.lemma_.lower()
            return Asked(_BY_NOUN.get(NOUN_TYPES.get(kind, ""), AnswerType.THING), kind)
        run = [t.lemma_.lower() for t in run_tokens(doc, tok.i)]  # "which *section*", "which division's part"
        if noun in STRUCTURAL_NOUNS and noun not in run:  # "what do the *parts* of X cost": no section asked
            noun = ""
        if not noun and w == "what" and any(t.lemma_.lower() in AMOUNT_VERBS for t in doc):
            return Asked(AnswerType.NUMBER, "what")  # "what does X cost"
        if noun in MEASURED_WITH_MODIFIER and noun in run[1:]:
            return Asked(AnswerType.NUMBER, noun)  # "what *Q factor*", "what median *response time*": a measurement
        if noun in STRUCTURAL_NOUNS:  # "which division's part of the plan": the kind of section is the possessor
            owner = next((c for t in doc if t.lemma_.lower() == noun for c in t.children if c.dep_ == "poss"), None)
            return Asked(AnswerType.SECTION, owner.lemma_.lower() if owner is not None else noun)
        return Asked(_BY_NOUN.get(NOUN_TYPES.get(noun, ""), AnswerType.THING), noun)
    return Asked(AnswerType.THING)


def final_verb(doc: Any) -> int:
    """The index of the word that ends a do-support question ("how many sites did that study *use*?"): its main
    verb, whatever tag the small parser gives it ("that study use": a noun with a determiner); -1 otherwise."""
    words = [t for t in doc if not t.is_punct]
    if len(words) < 3 or not any(t.lower_ in ("do", "does", "did") for t in words[:-1]):
        return -1
    return words[-1].i


def _amount_verb(verb: Any) -> bool:
    """A verb that states an amount: "cost", "spend" (:data:`AMOUNT_VERBS`), or a phrasal one, "bring in",
    "set aside" (:data:`AMOUNT_PHRASES`)."""
    lemma = verb.lemma_.lower()
    return lemma in AMOUNT_VERBS or any((lemma, c.lower_) in AMOUNT_PHRASES for c in verb.children if c.dep_ in ("prt", "advmod"))


def _relative(tok: Any) -> bool:
    """A wh-word that opens a relative clause ("the body *whose* review ...", "the film *which* won"), not the
    question."""
    node = tok
    for _ in range(8):
        if node.dep_ in ("relcl", "acl"):  # unless the parse has no main verb: "In X's plan, which section
            return node.sent.root.pos_ in ("VERB", "AUX")  # holds Y?" is a question after a fronted phrase
        if node.head.i == node.i:
            return False
        node = node.head
    return False


def run_tokens(doc: Any, i: int) -> list[Any]:
    """The noun run a which / what at token ``i`` opens ("what median response time": median, response, time)."""
    run = []
    for t in doc[i + 1 : i + 5]:
        if t.pos_ not in ("NOUN", "PROPN", "ADJ") and t.tag_ != "POS":
            break
        run.append(t)
    return run


def head_noun(doc: Any, i: int) -> str:
    """The noun a which / what at token ``i`` asks about: the last noun of the noun run it opens ("which
    American city", "which river runs..."), else the root of the first noun phrase after it ("what is the
    catchment area of X" -> area); "the name / type / kind of X" asks about X's noun."""
    nouns = [t for t in run_tokens(doc, i) if t.pos_ == "NOUN"]
    if nouns and nouns[-1].lemma_.lower() not in ("name", "type", "kind", "sort"):
        return nouns[-1].lemma_.lower()
    chunks = list(doc.noun_chunks)
    for n, chunk in enumerate(chunks):
        if chunk.end <= i or chunk.start > i + 6:
            continue
        if any(t.pos_ == "PRON" for t in chunk) and chunk.root.pos_ == "PRON":
            continue
        root = chunk.root
        if root.lemma_.lower() in ("name", "type", "kind", "sort"):
            of = next((c for c in root.children if c.lower_ == "of"), None)
            obj = next((c for c in of.children if c.dep_ == "pobj"), None) if of is not None else None
            if obj is not None:
                return obj.lemma_.lower()
        if root.i == i or root.lower_ in QUESTION_WORDS or _period_before_noun(chunk, chunks[n + 1 :]):
            continue  # "what was *the FY2024* adopted utilities budget": a period before the noun is no noun asked
        return root.lemma_.lower()
    return ""


def _period_before_noun(chunk: Any, after: Sequence[Any]) -> bool:
    """Whether a noun chunk is only a reporting period that stands before its noun ("what was *the FY2024*
    adopted utilities budget"), which the small parser takes for a noun phrase of its own: the next chunk
    follows within two words, without a preposition between, and is no period itself ("the second quarter
    *of* 2025" asks for the period)."""
    if not after or not _only_period(chunk) or _only_period(after[0]):
        return False
    between = chunk.doc[chunk.end : after[0].start]
    return len(between) <= 2 and not any(t.pos_ == "ADP" for t in between)


def _only_period(chunk: Any) -> bool:
    words = " ".join(t.text for t in chunk if t.pos_ != "DET")
    return any(p.start == 0 and p.end >= len(words) for p in find_periods(words)) if words else False


def expected_labels(question: str) -> frozenset[str]:
    """The entity labels that answer a question asking for a person, a place or an organisation; empty for any
    other question (BiG-RAG's ExtractAnswer weighs bridge entities by them)."""
    kind = asked(question).type
    return LABELS[kind] if kind in (AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG) else frozenset()

"""The no-LLM answer: a verbatim span of the evidence, chosen by the question's expected answer type, with its
sentence as the quote; or "not found" when no sentence of the evidence answers.

What the papers' algorithmic modes leave to "extract the answer" (BiG-RAG §4.3 without its §4.3.4 generation,
KAG's ``Output`` without a generator) is fixed here as a documented rule:

1. :func:`question_shape`: the expected answer type from the question's form: ``who`` a person (or an
   organisation when it asks "which company"), ``where`` a place, ``when`` / "what year" a date, "how many"
   / "how much" / "what percentage" a number, "which <noun>" / "what <noun>" by the noun (a city is a
   place, a company an organisation, a year a date...), a question opening with an auxiliary is yes/no,
   "..., A or B?" a choice between A and B; anything else a thing (a named entity or noun phrase).
2. :func:`sentences`: the evidence chunks split into sentences (spaCy), each with its named entities and
   noun phrases, and its relevance: the share of the question's content words (lemmas, not question words
   or stop words; proper nouns count double) that it holds.
3. :func:`extract_answer`: every candidate span of the expected type in a relevant sentence scores the
   sentence's relevance, discounted by the chunk's rank (``1 / (1 + 0.1 * rank)``); spans the question itself
   contains are not answers. The best one is the answer, cited with its sentence. A sentence holding under
   :data:`MIN_RELEVANCE` of the question's content words does not answer it: when no sentence reaches it the
   answer is "not found".
   A number of the measure the question names (a percentage, an amount of money, a count) wins over
   another kind of number.
4. Choices ("which came first, A or B?") and yes/no questions are decided in code, not picked
   (:func:`choose` and :func:`yes_no` in :mod:`stratagraph.agents.compute`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from stratagraph.answers import Citation
from stratagraph.retrieval.base import Evidence
from stratagraph.text.nlp import NUMERIC_LABELS, load_nlp

__all__ = [
    "AnswerType",
    "Extraction",
    "MIN_RELEVANCE",
    "QuestionShape",
    "Sentence",
    "citation",
    "extract_answer",
    "question_shape",
    "sentences",
]

#: the least share of the question's content words a sentence must hold to answer it (ours)
MIN_RELEVANCE = 0.34
#: how much a chunk's rank discounts its sentences: 1 / (1 + RANK_DISCOUNT * rank) (ours)
RANK_DISCOUNT = 0.1


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
    AnswerType.THING: frozenset({"PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "WORK_OF_ART", "EVENT", "PRODUCT",
                                 "LAW", "LANGUAGE"}),  # fmt: skip
}

#: the noun after "which" / "what" -> the type it asks for
_NOUN_TYPES: dict[str, AnswerType] = {
    **dict.fromkeys("""city country state town village place county region province capital river lake mountain
        island nation continent district neighborhood neighbourhood street location birthplace area""".split(), AnswerType.PLACE),
    **dict.fromkeys("""company organization organisation team band agency university institute school college
        club corporation firm party network studio label newspaper magazine publisher group airline""".split(), AnswerType.ORG),
    **dict.fromkeys("""person man woman director author actor actress singer founder player president writer
        composer producer king queen leader ceo chair chairman chairwoman musician artist politician
        designer engineer scientist father mother son daughter wife husband""".split(), AnswerType.PERSON),
    **dict.fromkeys("year date day month decade century era".split(), AnswerType.DATE),
    **dict.fromkeys("""number amount percentage percent share population revenue cost price total sum budget
        income figure rate count spending spend expenditure expense allocation appropriation funding sale
        profit margin growth headcount salary wage capacity area length height weight size distance score
        balance reserve debt value worth attendance enrollment""".split(), AnswerType.NUMBER),
}  # fmt: skip
_AUXILIARIES = frozenset("is are was were do does did has have had can could will would should may might".split())
_QUESTION_WORDS = frozenset("what which who whom whose when where why how".split())
_HOW_NUMBER = frozenset("many much long old far tall big large high deep wide".split())


@dataclass
class QuestionShape:
    """What a question asks for."""

    type: AnswerType
    content: dict[str, float]  # content lemma -> weight (proper nouns 2, others 1)
    options: list[str] = field(default_factory=list)  # a choice's alternatives, as written
    focus: str = ""  # the noun after which/what, or the how-word
    measure: str = ""  # for a number: "percent", "money" or "count" when the question says which


def _choice_options(question: str) -> list[str]:
    """"..., A or B?" -> [A, B] (the alternatives after the last comma or colon, when there are two)."""
    body = question.strip().rstrip("?").strip()
    tail = re.split(r"[,:;]", body)[-1]
    parts = re.split(r"\s+or\s+", tail)
    if len(parts) != 2:
        return []
    first = re.sub(r"^\s*(?:either|between|whether)\s+", "", parts[0], flags=re.IGNORECASE).strip()
    options = [first.strip(" \"'"), parts[1].strip(" \"'")]
    return options if all(o and len(o.split()) <= 12 for o in options) else []


_PERCENT_WORDS = re.compile(r"\b(percent|percentage|share|proportion|%|margin|rate)\b", re.IGNORECASE)
_MONEY_WORDS = re.compile(r"\b(how much|budget|cost|spend|spending|spent|revenue|price|pay|paid|fund|funding|income|"
                          r"expense|salary|sales|profit|dollars?|euros?)\b", re.IGNORECASE)  # fmt: skip
_COUNT_WORDS = re.compile(r"\bhow many\b", re.IGNORECASE)
#: the spaCy labels a number of each measure comes as (a table cell is CARDINAL whatever it counts)
MEASURE_LABELS = {"percent": {"PERCENT"}, "money": {"MONEY", "CARDINAL"}, "count": {"CARDINAL", "QUANTITY"}}


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
    for tok in doc:
        lemma = tok.lemma_.lower()
        if tok.is_stop or tok.is_punct or lemma in _QUESTION_WORDS or not any(ch.isalnum() for ch in lemma):
            continue
        content[lemma] = max(content.get(lemma, 0.0), 2.0 if tok.pos_ == "PROPN" else 1.0)
    words = [t.lower_ for t in doc if not t.is_punct]
    first = words[0] if words else ""
    options = _choice_options(question) if " or " in question.lower() else []
    if options and (first in ("which", "who", "what") or first in _AUXILIARIES):
        return QuestionShape(AnswerType.CHOICE, content, options)
    if first in _AUXILIARIES:
        return QuestionShape(AnswerType.YES_NO, content)
    for i, w in enumerate(words):
        if w not in _QUESTION_WORDS:
            continue
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in ("who", "whom"):
            return QuestionShape(AnswerType.PERSON, content, focus=w)
        if w == "whose":
            return QuestionShape(AnswerType.PERSON, content, focus=w)
        if w == "where":
            return QuestionShape(AnswerType.PLACE, content, focus=w)
        if w == "when":
            return QuestionShape(AnswerType.DATE, content, focus=w)
        if w == "how" and nxt in _HOW_NUMBER:
            return QuestionShape(AnswerType.NUMBER, content, focus=nxt)
        if w in ("which", "what"):
            noun = _head_noun(doc, i)
            kind = _NOUN_TYPES.get(noun, AnswerType.THING)
            return QuestionShape(kind, content, focus=noun)
    return QuestionShape(AnswerType.THING, content)


def _head_noun(doc: Any, i: int) -> str:
    """The noun a which/what at token ``i`` asks about ("which American city" -> "city"), else ""."""
    words = [t for t in doc if not t.is_punct]
    for tok in words[i + 1 : i + 5]:
        if tok.pos_ in ("NOUN", "PROPN"):
            return tok.lemma_.lower()
        if tok.pos_ in ("AUX", "VERB"):
            break
    # "what is the name of the city ..." / "what is the population of ...": the first noun after the verb
    for tok in words[i + 1 : i + 8]:
        if tok.pos_ == "NOUN":
            lemma = tok.lemma_.lower()
            if lemma != "name":
                return lemma
    return ""


# ------------------------------------------------------------------------------------------ sentences
@dataclass
class Sentence:
    """One sentence (or table row) of an evidence chunk, with its candidate spans."""

    evidence: Evidence
    start: int  # character offsets in the chunk text
    end: int
    lemmas: frozenset[str]  # its own words, the words of its table's header, and of its section path
    spans: list[tuple[int, int, str]]  # (start, end, label) in the chunk text; noun phrases as "NP"
    columns: dict[int, str] = field(default_factory=dict)  # a table cell's start -> its column header
    own: frozenset[str] = frozenset()  # its own words only (without the section path's)

    @property
    def text(self) -> str:
        return self.evidence.text[self.start : self.end]


_ROW = re.compile(r"^[^;|]+(?:; [^;:]+: [^;]*)+$")  # a table row as ingestion stores it: "Label; Header: value; ..."
_HEADER = re.compile(r"^[^|;]+(?: \| [^|;]+)+$")  # the header line before the rows: "Line item | FY2024 | ..."
_CELL_NUMBER = re.compile(r"^[-(]?\$?\s?\d[\d,]*(?:\.\d+)?\)?%?$")
Parsed = tuple[int, int, frozenset[str], tuple[tuple[int, int, str], ...], tuple[tuple[int, str], ...]]


def _lemmas(doc: Any) -> frozenset[str]:
    return frozenset(t.lemma_.lower() for t in doc if not t.is_punct and not t.is_space)


def _table_row(offset: int, line: str, nlp: Any) -> Parsed:
    """A stored table row ("Overtime; FY2024 Actual: 1,320; FY2025 Adopted: 1,170") as a sentence: its label
    and cell values as spans (numbers as CARDINAL), each value with its column header."""
    spans: list[tuple[int, int, str]] = []
    columns: list[tuple[int, str]] = []
    parts = line.split("; ")
    label = parts[0].strip()
    lead = len(parts[0]) - len(parts[0].lstrip())
    spans.append((offset + lead, offset + lead + len(label), "NP"))
    pos = offset + len(parts[0]) + 2
    for part in parts[1:]:
        header, _, value = part.partition(": ")
        start = pos + len(header) + 2
        value = value.strip()
        if value:
            spans.append((start, start + len(value), "CARDINAL" if _CELL_NUMBER.match(value) else "NP"))
            columns.append((start, header.strip()))
        pos += len(part) + 2
    return offset, offset + len(line.rstrip()), _lemmas(nlp(line.replace(";", " "))), tuple(spans), tuple(columns)


def _np_label(chunk: Any) -> str:
    """"PROPN" for a noun phrase of proper nouns (a name the tagger did not label), else "NP"."""
    words = [t for t in chunk if t.pos_ not in ("DET", "PUNCT")]
    return "PROPN" if words and all(t.pos_ == "PROPN" for t in words) else "NP"


@lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[Parsed, ...]:
    """Sentences of a chunk text, cached by text: prose split into lines, then by spaCy within a line (so a
    list item or a heading is its own sentence); each stored table row one sentence."""
    nlp = load_nlp()
    lines: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    out: list[Parsed] = [_table_row(a, line, nlp) for a, line in lines if _ROW.match(line)]
    prose = [(a, line) for a, line in lines if line.strip() and not _ROW.match(line) and not _HEADER.match(line)]
    for (offset, line), doc in zip(prose, nlp.pipe([line for _, line in prose]), strict=True):
        for sent in doc.sents:
            start, end = offset + sent.start_char, offset + sent.end_char
            while end > start and text[end - 1].isspace():
                end -= 1
            spans = [(offset + e.start_char, offset + e.end_char, e.label_) for e in sent.ents]
            spans += [(offset + nc.start_char, offset + nc.end_char, _np_label(nc)) for nc in sent.noun_chunks
                      if not any(t.pos_ == "PRON" for t in nc)]  # fmt: skip
            out.append((start, end, _lemmas(sent), tuple(spans), ()))
    return tuple(sorted(out, key=lambda p: p[0]))


@lru_cache(maxsize=4096)
def _path_lemmas(path: tuple[str, ...]) -> frozenset[str]:
    return _lemmas(load_nlp()(" ".join(path))) if path else frozenset()


def sentences(evidence: Sequence[Evidence]) -> list[Sentence]:
    """The sentences of the evidence chunks, chunk by chunk in rank order; each knows the words of its
    chunk's section path (a row under "Police Department" is about the police)."""
    out = []
    for e in evidence:
        context = _path_lemmas(tuple(e.section_path))
        for s, t, lem, sp, cols in _parse(e.text):
            out.append(Sentence(evidence=e, start=s, end=t, lemmas=lem | context, spans=list(sp), columns=dict(cols),
                                own=lem))  # fmt: skip
    return out


_CAPITAL_RUN = re.compile(r"\b[A-Z][\w&'-]*(?:\s+(?:of|and|for|&)?\s*[A-Z][\w&'-]*)*")


@lru_cache(maxsize=8192)
def _acronyms(text: str) -> frozenset[str]:
    """The acronyms a text spells out: the initials of its runs of capitalised words ("Chief Financial
    Officer" -> "cfo", "Research and Development" -> "rd" and "r&d"), lower-cased."""
    out = set()
    for run in _CAPITAL_RUN.findall(text):
        words = [w for w in re.split(r"\s+", run) if w and w[0].isupper()]
        if len(words) >= 2:
            out.add("".join(w[0] for w in words).lower())
    return frozenset(out)


def _term_positions(sentence: Sentence, shape: QuestionShape) -> list[int]:
    """Where in the chunk text the sentence states the question's content words (a word's stem, or the
    spelled-out form of an acronym), as character offsets."""
    text, out = sentence.text, []
    for lemma in shape.content:
        if lemma.isalpha() and 2 <= len(lemma) <= 5:
            for run in _CAPITAL_RUN.finditer(text):
                words = [w for w in re.split(r"\s+", run.group(0)) if w and w[0].isupper()]
                if len(words) >= 2 and "".join(w[0] for w in words).lower() == lemma:
                    out.append(sentence.start + run.start())
        if any(ch.isdigit() for ch in lemma):  # a number or a code ("FY2025") only as itself
            out += [sentence.start + m.start() for m in re.finditer(rf"\b{re.escape(lemma)}\b", text, re.IGNORECASE)]
        elif len(lemma) >= 3:
            out += [sentence.start + m.start() for m in re.finditer(re.escape(lemma[:5]), text, re.IGNORECASE)]
    return out


def _holds(sentence: Sentence, lemma: str) -> bool:
    if lemma in sentence.lemmas:
        return True
    # a question's acronym ("CFO") is held by a sentence that spells it out ("Chief Financial Officer")
    return lemma.isalpha() and 2 <= len(lemma) <= 5 and lemma in _acronyms(sentence.text)


def relevance(sentence: Sentence, shape: QuestionShape) -> float:
    """The weighted share of the question's content words the sentence holds (rule 2; an acronym of the
    question counts as held by a sentence that spells it out)."""
    total = sum(shape.content.values())
    if total <= 0:
        return 0.0
    return sum(w for lemma, w in shape.content.items() if _holds(sentence, lemma)) / total


def citation(sentence: Sentence) -> Citation:
    """The sentence as a verbatim quote of its chunk."""
    e = sentence.evidence
    return Citation(doc_id=e.doc_id, source=e.source, section=e.section, chunk_id=e.chunk_id, quote=sentence.text)


# ------------------------------------------------------------------------------------------ extraction
@dataclass
class Extraction:
    """An extracted answer: the span, the sentence it comes from, and how sure the rule is."""

    answer: str
    found: bool
    sentence: Sentence | None = None
    score: float = 0.0
    type: AnswerType = AnswerType.THING
    reason: str = ""

    @property
    def citations(self) -> list[Citation]:
        return [citation(self.sentence)] if self.sentence is not None else []


def _overlap(text: str, shape: QuestionShape) -> float:
    """The share of a text's words that are content words of the question."""
    words = {w.lower() for w in re.findall(r"\w+", text)}
    return len(words & set(shape.content)) / len(words) if words else 0.0


_NAME = re.compile(r"[A-Z][^\W\d_]*(?:[-'.][A-Za-z]+)*\.?(?:\s+(?:(?:of|de|da|di|du|del|dos|van|von|der|la|le|bin|ibn|and|the)\s+)*[A-Z][^\W\d_]*(?:[-'.][A-Za-z]+)*\.?)*")


def _in_question(span: str, question: str) -> bool:
    s = span.casefold().strip()
    return bool(s) and s in question.casefold()


def _tidy(text: str) -> str:
    """A span without a leading article or trailing punctuation (still a substring of the sentence)."""
    text = text.strip().strip(",;:.")
    return re.sub(r"^(?:the|a|an)\s+(?=\S)", "", text, flags=re.IGNORECASE) if len(text.split()) > 1 else text


def extract_answer(question: str, evidence: Sequence[Evidence], focus: str | None = None) -> Extraction:
    """The best span of the expected type in the evidence (module docstring, rule 3). ``focus``: the
    question to read the answer type and content words from when it differs from the question shown (the
    last sub-question of a decomposed question, with its variables bound)."""
    asked = focus or question
    shape = question_shape(asked)
    kind = shape.type if shape.type in LABELS else AnswerType.THING
    labels = LABELS[kind]
    whole = shape if focus is None else question_shape(question)
    best: tuple[float, int, Sentence, str] | None = None
    best_sentence: tuple[float, Sentence] | None = None
    rank_of = {e.chunk_id: i for i, e in enumerate(evidence)}
    for sent in sentences(evidence):
        rel = relevance(sent, shape)
        prior = 1.0 / (1.0 + RANK_DISCOUNT * rank_of[sent.evidence.chunk_id])
        if best_sentence is None or rel * prior > best_sentence[0]:
            best_sentence = (rel * prior, sent)
        if rel < MIN_RELEVANCE or not any(lemma in sent.own for lemma in shape.content):
            continue  # the section path may add to what a sentence holds, not be all of it
        for start, end, label in sent.spans:
            named = kind in (AnswerType.PERSON, AnswerType.ORG, AnswerType.PLACE) and label == "PROPN"
            if label not in labels and not named and not (kind == AnswerType.THING and label in ("NP", "PROPN")):
                continue
            span = _tidy(sent.evidence.text[start:end])
            if not span or _in_question(span, asked) or _in_question(span, question) or max(_overlap(span, shape), _overlap(span, whole)) == 1.0:
                continue  # the question's own words ("City Council" for "the city whose council ...")
            if named and label == "PROPN" and not _NAME.fullmatch(span):
                continue  # an unlabelled run of proper nouns is a name only if it reads as one ("FY2025" is not)
            if label in ("NP", "PROPN") and any(
                a < end and start < b and other in NUMERIC_LABELS and other not in labels for a, b, other in sent.spans
            ):  # a phrase the tagger labelled a date or an amount
                continue
            # a labelled entity over an unlabelled name over a bare noun phrase
            score = rel * prior + (0.03 if label not in ("NP", "PROPN") else 0.02 if label == "PROPN" else 0.0)
            if shape.measure:  # a number of the kind the question asks for over another
                score += 0.1 if label in MEASURE_LABELS[shape.measure] else -0.2
            near = [p for p in _term_positions(sent, shape) if not start <= p < end]
            if near:  # the candidate nearest the question's words in its sentence
                score += 0.05 * (1 - min(min(abs(p - start) for p in near), 200) / 200)
            header = sent.columns.get(start)
            if header is not None:  # a table cell: the column the question names wins
                score += 0.1 * _overlap(header, shape)
            if best is None or score > best[0] or (score == best[0] and start < best[1]):
                best = (score, start, sent, span)
    if best is None:
        reason = (
            f"no sentence holds {MIN_RELEVANCE:.0%} of the question's content words"
            if best_sentence is None or best_sentence[0] < MIN_RELEVANCE
            else f"no {kind.value} in the sentences that match the question"
        )
        return Extraction(answer="", found=False, type=kind, reason=reason)
    score, _, sent, span = best
    return Extraction(answer=span, found=True, sentence=sent, score=round(score, 4), type=kind,
                      reason=f"the {kind.value} in the sentence holding most of the question")  # fmt: skip

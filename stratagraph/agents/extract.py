"""The no-LLM answer: a verbatim span of the evidence, chosen by the question's expected answer type, with its
sentence as the quote; or "not found" when no sentence of the evidence answers.

What the papers' algorithmic modes leave to "extract the answer" (BiG-RAG §4.3 without its §4.3.4 generation,
KAG's ``Output`` without a generator, BAG-RAG's and CG-RAG's answer step without a generator) is fixed here as
one documented rule that every workflow shares:

1. :func:`~stratagraph.text.question.question_shape`: the expected answer type from the question's form
   (shared with BiG-RAG's ExtractAnswer in retrieval): ``who`` a person (or an
   organisation when it asks "which company"), ``where`` a place, ``when`` / "what year" a date, "how many"
   / "how much" / "what percentage" a number, "which <noun>" / "what <noun>" by the noun (a city is a
   place, a company an organisation, a year a date...), a question (or its last sentence) opening with an
   auxiliary is yes/no, "..., A or B?" a choice between A and B; anything else a thing (a named entity or
   noun phrase).
2. :func:`sentences`: the evidence chunks split into sentences (spaCy), each with its named entities, noun
   phrases and dependency parse, and its relevance: the share of the question's content words (lemmas, not
   question words or stop words; proper nouns count double; an acronym the question writes in capitals is
   held by a sentence that spells it out) that it holds.
3. :func:`candidates`: the spans of a sentence that can answer: entities of the expected type (an
   unlabelled run of proper nouns counts as a name when the tagger labelled no entity there and it reads as
   a name; a thing is any named entity or noun phrase, a nationality only when one is asked for; a name the
   asked noun introduces or ends, written in lower case, is of the asked type whatever its label: "the pop
   band Euphoria", "Maharashtra state"; a position or profession is a common noun, never a name; a county,
   district or city is not the place listed after one: "Jefferson County, Iowa"); a date states a year, a
   month, a decade or a century (not "today", not a duration like "the next 24 years"); a number is no
   citation marker ("[1]"); never a span the question contains, nor one made mostly of the question's own
   words (the question's subject restated) or spelled out from one of its acronyms ("National Football
   League" for "NFL").
4. :func:`pick`: the candidate of the best sentence: a sentence's score (its relevance, discounted by its
   chunk's rank, ``1 / (1 + 0.1 * rank)``, in :func:`extract_answer`; the workflow's own score in ``bag``
   and ``lesegr``) plus a small bonus for a labelled entity over an unlabelled name over a bare noun phrase
   and for a number of the measure the question names (a percentage, an amount of money, a count); in a
   table row the cell of the column the question names. Within one sentence: a named entity ending with
   (or introduced by, or followed by) the noun asked for ("what county": "DuPage County"; for a country
   never a region, district, county or river), then for a country the last place of a list and for a state
   or province a place after the first ("Portland, Oregon"), then the entity label the noun asks for (a
   film, a language, a place for a country or city...; for a position or profession what the person plays
   *as*, then what the copula says), then the span nearest the question's words in the sentence's
   dependency parse, then the first. Numbers keep their currency sign, scale word and unit ("$1.72
   million", "2.6 °C"); a "when" question answered by a date range gets its start, or its end when the
   question asks when something ended, and "in what year" the one year of a full date. A sentence
   holding under :data:`MIN_RELEVANCE` of the question's content words (or holding them only through its
   section path) does not answer it: when no sentence reaches it the answer is "not found".
5. Choices ("which came first, A or B?"), yes/no questions and "what do A and B have in common?" are
   decided in code, not picked (:func:`stratagraph.agents.compute.decide`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from stratagraph.answers import Citation
from stratagraph.retrieval.base import Evidence
from stratagraph.retrieval.porter import stem
from stratagraph.text.nlp import NUMERIC_LABELS, load_nlp
from stratagraph.text.question import (
    HOW_NUMBER,
    LABELS,
    MEASURE_LABELS,
    QUESTION_WORDS,
    AnswerType,
    QuestionShape,
    question_shape,
)

__all__ = [
    "MIN_RELEVANCE",
    "AnswerType",
    "Candidate",
    "Extraction",
    "QuestionShape",
    "Sentence",
    "candidates",
    "citation",
    "extract_answer",
    "pick",
    "question_shape",
    "relevance",
    "sentences",
]

#: the least share of the question's content words a sentence must hold to answer it (ours)
MIN_RELEVANCE = 0.34
#: how much a chunk's rank discounts its sentences: 1 / (1 + RANK_DISCOUNT * rank) (ours)
RANK_DISCOUNT = 0.1
#: what a labelled entity / an unlabelled name adds to its sentence's score over a bare noun phrase (ours)
LABEL_BONUS = 0.05
NAME_BONUS = 0.03
#: a number of the measure the question asks for over another kind of number (ours)
MEASURE_BONUS, MEASURE_PENALTY = 0.1, 0.2


#: the entity types the small tagger gives names it cannot place (a person's name typed a product)
_DUMP_LABELS = frozenset({"PRODUCT", "WORK_OF_ART", "EVENT", "LAW", "LANGUAGE"})
#: the types whose answer is a name (an unlabelled run of proper nouns may be one)
_NAMED_TYPES = frozenset({AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG, AnswerType.THING})

#: things asked for whose answer is a common noun, never a name ("what position did he play": "striker")
_COMMON_NOUNS = frozenset("position profession occupation job role instrument sport discipline trade career vocation".split())
#: of those, the ones a person holds: said with "as" ("plays as a striker") or by the copula ("was an aviator")
_HELD = frozenset("position profession occupation job role career vocation".split())

#: a thing the noun asks for that an entity label names best ("what language": a LANGUAGE entity)
_NOUN_LABELS: dict[str, frozenset[str]] = {
    **dict.fromkeys(["language", "tongue", "dialect"], frozenset({"LANGUAGE", "NORP"})),
    **dict.fromkeys(["nationality", "ethnicity", "citizenship", "descent", "religion"], frozenset({"NORP"})),
    **dict.fromkeys(["film", "movie", "album", "song", "single", "book", "novel", "series", "show", "sitcom", "programme", "program", "play", "opera", "musical", "game", "poem", "painting", "novella", "anthology", "documentary", "episode", "franchise"],
        frozenset({"WORK_OF_ART"})),
    **dict.fromkeys(["war", "battle", "event", "tournament", "championship", "competition", "festival", "election"],
                    frozenset({"EVENT"})),
    **dict.fromkeys(["law", "act", "treaty", "constitution"], frozenset({"LAW"})),
    **dict.fromkeys(["product", "car", "aircraft", "plane", "ship", "vehicle", "device"], frozenset({"PRODUCT"})),
    **dict.fromkeys(["country", "nation", "state", "city", "town", "county", "province", "capital"], frozenset({"GPE"})),
}  # fmt: skip
# ------------------------------------------------------------------------------------------ sentences
Tok = tuple[int, int, str, int, str]  # (start, end) in the chunk text, lemma (lower case), head (index in the sentence), dependency label


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
    tokens: tuple[Tok, ...] = ()  # its dependency parse (prose only)

    @property
    def text(self) -> str:
        return self.evidence.text[self.start : self.end]


_SEGMENT = re.compile(r"; ([^;:]+): ")
_ROW_SHAPE = re.compile(r"^[^;|]+(?:; [^;:]+: [^;]*)+$")  # a table row as ingestion stores it: "Label; Header: value; ..."
_HEADER = re.compile(r"^[^|;]+(?: \| [^|;]+)+$")  # the header line before the rows: "Line item | FY2024 | ..."
_CELL_NUMBER = re.compile(r"^[-(]?\$?\s?\d[\d,]*(?:\.\d+)?\)?%?$")
Parsed = tuple[int, int, frozenset[str], tuple[tuple[int, int, str], ...], tuple[tuple[int, str], ...], tuple[Tok, ...]]


def _lemmas(doc: Any) -> frozenset[str]:
    return frozenset(t.lemma_.lower() for t in doc if not t.is_punct and not t.is_space)


def _is_row(line: str, header: set[str] | None) -> bool:
    """Whether a line is a stored table row: "Label; Header: value; ...", its headers the columns of the
    chunk's header line; without a header line, at least two short "Header: value" cells (a prose line
    "a; b: c" is not a row) and a label whose brackets close."""
    if not _ROW_SHAPE.match(line):
        return False
    heads = [h.strip() for h in _SEGMENT.findall(line)]
    if header is not None:
        return bool(heads) and all(h in header for h in heads)
    label = line.split("; ", 1)[0]
    if label.count("(") != label.count(")"):
        return False  # prose: "Nantong (; former names: ...; Qihai dialect: ...) is a city in ..."
    return len(heads) >= 2 and all(len(h.split()) <= 5 for h in heads)


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
    lemmas = _lemmas(nlp(line.replace(";", " ")))
    return offset, offset + len(line.rstrip()), lemmas, tuple(spans), tuple(columns), ()


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
    headers = [ln for _, ln in lines if _HEADER.match(ln)]
    header = {h.strip() for ln in headers for h in ln.split(" | ")} if headers else None
    rows = {a for a, line in lines if _is_row(line, header)}
    out: list[Parsed] = [_table_row(a, line, nlp) for a, line in lines if a in rows]
    prose = [(a, line) for a, line in lines if line.strip() and a not in rows and not _HEADER.match(line)]
    for (offset, line), doc in zip(prose, nlp.pipe([line for _, line in prose]), strict=True):
        for sent in doc.sents:
            start, end = offset + sent.start_char, offset + sent.end_char
            while end > start and text[end - 1].isspace():
                end -= 1
            spans = [(offset + e.start_char, offset + e.end_char, e.label_) for e in sent.ents]
            spans += [(offset + nc.start_char, offset + nc.end_char, _np_label(nc)) for nc in sent.noun_chunks
                      if not any(t.pos_ == "PRON" for t in nc)]  # fmt: skip
            toks = tuple((offset + t.idx, offset + t.idx + len(t), t.lemma_.lower(), t.head.i - sent.start, t.dep_)
                         for t in sent)  # fmt: skip
            out.append((start, end, _lemmas(sent), tuple(spans), (), toks))
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
        for s, t, lem, sp, cols, toks in _parse(e.text):
            out.append(Sentence(evidence=e, start=s, end=t, lemmas=lem | context, spans=list(sp), columns=dict(cols),
                                own=lem, tokens=toks))  # fmt: skip
    return out


_CAPITAL_RUN = re.compile(r"\b[A-Z][\w&'-]*(?:\s+(?:of|and|for|&)?\s*[A-Z][\w&'-]*)*")


@lru_cache(maxsize=8192)
def _acronyms(text: str) -> frozenset[str]:
    """The acronyms a text spells out: the initials of its runs of capitalised words ("Chief Financial
    Officer" -> "cfo", "Research and Development" -> "rd"), lower-cased."""
    out = set()
    for run in _CAPITAL_RUN.findall(text):
        words = [w for w in re.split(r"\s+", run) if w and w[0].isupper()]
        if len(words) >= 2:
            out.add("".join(w[0] for w in words).lower())
    return frozenset(out)


#: nominalisations whose verb the lemmatiser gives another stem ("city of birth" / "was born": bear)
_IRREGULAR = {"birth": "bear", "death": "die", "marriage": "marry", "sale": "sell", "loss": "lose", "growth": "grow"}


@lru_cache(maxsize=16384)
def forms(lemma: str) -> frozenset[str]:
    """The stems a content word is matched by: its Porter stem, the verb of an agent noun ("director" ->
    "direct", "founder" -> "found") and of an irregular nominalisation ("birth" -> "bear")."""
    out = {stem(lemma)}
    if len(lemma) > 5 and lemma.endswith(("er", "or")):
        out.add(stem(lemma[:-2]))
    if lemma in _IRREGULAR:
        out.add(_IRREGULAR[lemma])
    return frozenset(out)


@lru_cache(maxsize=16384)
def _stems(lemmas: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in lemmas)


def holds(lemmas: frozenset[str], lemma: str) -> bool:
    """Whether a sentence's words (lemmas) hold a content word of the question: the lemma itself or one of its
    :func:`forms` ("directed" holds "director")."""
    return lemma in lemmas or bool(forms(lemma) & _stems(lemmas))


def _holds(sentence: Sentence, lemma: str, acronym: bool) -> bool:
    if holds(sentence.lemmas, lemma):
        return True
    # an acronym the question writes in capitals ("CFO") is held by a sentence that spells it out
    return acronym and lemma in _acronyms(sentence.text)


def relevance(sentence: Sentence, shape: QuestionShape) -> float:
    """The weighted share of the question's content words the sentence holds (rule 2)."""
    total = sum(shape.content.values())
    if total <= 0:
        return 0.0
    return sum(w for lemma, w in shape.content.items() if _holds(sentence, lemma, lemma in shape.acronyms)) / total


def citation(sentence: Sentence) -> Citation:
    """The sentence as a verbatim quote of its chunk."""
    e = sentence.evidence
    return Citation(doc_id=e.doc_id, source=e.source, section=e.section, chunk_id=e.chunk_id, quote=sentence.text)


# ------------------------------------------------------------------------------------------ candidates
@dataclass(frozen=True)
class Candidate:
    """A span of a sentence that can answer the question."""

    start: int
    end: int
    label: str  # a spaCy entity label, "PROPN" (an unlabelled name) or "NP"


_NAME = re.compile(r"[A-Z][^\W\d_]*(?:[-'.][A-Za-z]+)*\.?(?:\s+(?:(?:of|de|da|di|du|del|dos|van|von|der|la|le|bin|ibn|and|the)\s+)*[A-Z][^\W\d_]*(?:[-'.][A-Za-z]+)*\.?)*")
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
_DATE_ANCHOR = re.compile(
    r"\d|\b(?:" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|century|centuries|"
    r"decade|millennium|bc|ad|bce|ce|spring|summer|autumn|fall|winter)\b",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"^(?:(?:about|around|over|nearly|almost|some|more than|less than|at least|only|the|next|last|past|previous|"
    r"following|first|final)\s+)*(?:\d[\d,.]*|a|an|one|two|three|"
    r"four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|several|many|few|a few|"
    r"a couple of)[\s-]+(?:years?|months?|weeks?|days?|decades?|centuries|hours?|minutes?)(?:[\s-](?:old|long))?$",
    re.IGNORECASE,
)
_STOP_WORDS = frozenset(["a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "by", "with", "from", "as", "is", "was", "be"])
#: nouns a nationality (NORP) answers
_NATIONALITY = frozenset(["nationality", "ethnicity", "citizenship", "descent", "religion", "origin", "language"])


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if w not in _STOP_WORDS]


def _restates(span: str, shape: QuestionShape, question: str) -> bool:
    """A span made only (one word) or mostly (more than half of two or more) of the question's own words:
    the question's subject restated ("City Council" for "the city whose council ...", "Kerry-Anne
    Saxby-Junna" for "Kerry Saxby-Junna"), or spelled out from one of its acronyms ("National Football League"
    for "NFL"), not its answer."""
    words = _words(span)
    if not words:
        return True
    if _acronyms(span) & shape.acronyms:
        return True  # "National Football League" for "an NFL team"
    asked = (set(shape.content) | set(_words(question))) - {shape.focus}  # "the airport in Wilmington": "Wilmington Airport"
    held = sum(1 for w in words if w in asked)
    return held == len(words) or (len(words) >= 2 and held / len(words) > 0.5)


def _is_date(text: str) -> bool:
    """A date that can answer "when": it states a year, month, decade or century; "today" and durations
    ("five-year", "two years") do not."""
    return bool(_DATE_ANCHOR.search(text)) and not _DURATION.match(text.strip())


def candidates(sent: Sentence, shape: QuestionShape, questions: Sequence[str], exclude: Sequence[str] = ()) -> list[Candidate]:
    """The spans of ``sent`` that can answer (module docstring, rule 3); ``questions``: the texts whose own
    spans are no answers (the question read and the question asked); ``exclude``: spans that are no answers
    either (a bridge already used)."""
    kind = shape.type if shape.type in LABELS else AnswerType.THING
    labels = LABELS[kind]
    if kind == AnswerType.THING and shape.focus not in _NATIONALITY:
        labels = labels - {"NORP"}  # "American" answers "what nationality", not "which band"
    if kind == AnswerType.THING and shape.focus in _COMMON_NOUNS:
        labels = frozenset()  # a noun phrase only: "a striker", not the club he plays for
    text = sent.evidence.text
    named_at = [(a, b) for a, b, lab in sent.spans if lab not in ("NP", "PROPN") and lab not in NUMERIC_LABELS]
    if kind in (AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG) and not any(lab in labels for _, _, lab in sent.spans):
        # the sentence names nothing of the wanted type: a proper-noun run the tagger typed as a product, work,
        # event, law or language (where the small model puts names it cannot place) is a name all the same
        # ("whose director is Ines Calder" with the run typed a product)
        retyped = {(a, b) for a, b, lab in sent.spans if lab in _DUMP_LABELS}
        named_at = [(a, b) for a, b in named_at if not ((a, b) in retyped and (a, b, "PROPN") in sent.spans)]
    banned = {x.casefold().strip() for x in exclude}
    out: list[Candidate] = []
    seen: set[tuple[int, int]] = set()
    for start, end, label in sent.spans:
        unlabelled_name = label == "PROPN" and kind in _NAMED_TYPES and bool(labels)
        if label not in labels and not unlabelled_name and not (kind == AnswerType.THING and label == "NP"):
            if not (kind in _NAMED_TYPES and label not in NUMERIC_LABELS and label != "NP"
                    and (_titled(text, start, shape) or _ends_with_kind(text[start:end], shape.focus))):
                continue  # not of the type asked, nor a name the asked noun introduces or ends ("the pop band
                # Euphoria", "Maharashtra state" typed an organisation)
        span = _tidy(text[start:end])
        if not span or (start, end) in seen or span.casefold() in banned:
            continue
        if any(_in_question(span, q) for q in questions) or _restates(span, shape, questions[0]):
            continue  # the question's own words ("City Council" for "the city whose council ...")
        if unlabelled_name and (not _NAME.fullmatch(span) or any(a < end and start < b for a, b in named_at)):
            continue  # a name the tagger did not label: only where it labelled none, and only if it reads as one
        if unlabelled_name and kind != AnswerType.THING and _quoted(text, start, end):
            continue  # a quoted title ("Domestic Disturbance") names a work, not a person or place
        if label in ("NP", "PROPN") and any(
            a < end and start < b and other in NUMERIC_LABELS and other not in labels for a, b, other in sent.spans
        ):  # a phrase the tagger labelled a date or an amount
            continue
        if label == "DATE" and not _is_date(span):
            continue
        if not labels and not _last_word(span).islower():
            continue  # a common noun asked for: "a striker", not "the Woman" of a title
        if kind == AnswerType.PLACE and _after_named_kind(sent, start, end, shape.focus):
            continue  # "Jefferson County, Iowa" for "what county": Iowa is wider than a county
        if label in LABELS[AnswerType.NUMBER] and start > 0 and text[start - 1] == "[" and text[end : end + 1] == "]":
            continue  # a citation marker "[1]"
        seen.add((start, end))
        out.append(Candidate(start, end, label))
    return out


#: the labels the small tagger gives a place's name (it types "Van Buren County" a person)
_PLACE_LIKE = ("GPE", "LOC", "FAC", "PROPN", "PERSON", "ORG")


def _listed_before(sent: Sentence, start: int, labels: tuple[str, ...]) -> Iterator[str]:
    """The places before the span at ``start`` in the comma-separated list of places it ends, nearest first
    ("Gwanda District, Matabeleland South, Zimbabwe": for Zimbabwe, Matabeleland South then Gwanda District)."""
    text = sent.evidence.text
    places = sorted({(a, b) for a, b, label in sent.spans if label in labels})
    end = start
    for a, b in reversed([p for p in places if p[1] <= start]):
        if text[b:end].strip() != ",":
            return
        yield text[a:b]
        end = a


def _last_word(text: str) -> str:
    words = text.split()
    return words[-1] if words else ""


def _ends_with_kind(span: str, noun: str) -> bool:
    """Whether a name ends with the noun asked for: in lower case ("Maharashtra state"), or capitalised for a
    kind of place within a country ("Van Buren County", "Orla River"; not "Today's Country")."""
    last = _last_word(span)
    return bool(noun) and (last == noun or (noun in _BELOW_COUNTRY_NAMES and last == noun.capitalize()))


def _after_named_kind(sent: Sentence, start: int, end: int, noun: str) -> bool:
    """Whether the span [start, end) follows, in a comma-separated list of places, a place whose name ends
    with the noun asked for ("Jefferson County, Iowa" for a county) and does not end with it itself: a place
    wider than that kind."""
    if noun not in _BELOW_COUNTRY_NAMES and noun not in ("city", "town", "village"):
        return False
    if _last_word(sent.evidence.text[start:end]).lower() == noun:
        return False  # "Polk County, Story County": a second county of a list
    return any(_last_word(p) == noun.capitalize() for p in _listed_before(sent, start, _PLACE_LIKE))


def _titled(text: str, start: int, shape: QuestionShape) -> bool:
    """Whether the noun the question asks for introduces the span ("the pop band Euphoria", "the city of
    Corvel", "a river called the Orla"): a name so introduced is of the type asked, whatever its label."""
    noun = shape.focus
    if not noun.isalpha() or noun in _HOW or noun in QUESTION_WORDS:
        return False
    before = text[max(0, start - len(noun) - 30) : start]  # the noun in lower case: "DuPage County" is a name
    return re.search(rf"(?<!\w){noun}s?\s+(?:(?:of|called|named)\s+)?(?:the\s+)?$", before) is not None


def _quoted(text: str, start: int, end: int) -> bool:
    """Whether the span is written between quotation marks."""
    before, after = text[max(0, start - 1) : start], text[end : end + 1]
    return before in ('"', "“", "'", "‘") and after in ('"', "”", "'", "’")


def _in_question(span: str, question: str) -> bool:
    s = span.casefold().strip()
    return bool(s) and s in question.casefold()


def _tidy(text: str) -> str:
    """A span without a leading article or trailing punctuation (still a substring of the sentence)."""
    text = text.strip().strip(",;:.")
    return re.sub(r"^(?:the|a|an)\s+(?=\S)", "", text, flags=re.IGNORECASE) if len(text.split()) > 1 else text


def _overlap(text: str, shape: QuestionShape) -> float:
    """The share of a text's words that are content words of the question."""
    words = {w.lower() for w in re.findall(r"\w+", text)}
    return len(words & set(shape.content)) / len(words) if words else 0.0


# ------------------------------------------------------------------------------------------ within a sentence
def _root(toks: tuple[Tok, ...], cand: Candidate) -> tuple[int, list[int]]:
    """The candidate's head token (the one whose head lies outside the span) and its tokens; -1 when none."""
    inside = [i for i, t in enumerate(toks) if t[0] >= cand.start and t[1] <= cand.end]
    if not inside:
        return -1, []
    return next((i for i in inside if toks[i][3] not in inside or toks[i][3] == i), inside[0]), inside


def _nearness(sent: Sentence, shape: QuestionShape, cand: Candidate) -> float:
    """The sum over the question's content words in the sentence (outside the span) of ``1 / (1 + d)``, ``d``
    the distance between them and the span's head in the sentence's dependency parse; a word narrowed by a
    modifier the question does not have ("*Hardware* revenue" for "revenue") counts half."""
    toks = sent.tokens
    root, inside = _root(toks, cand)
    if root < 0:
        return 0.0
    up: dict[int, int] = {}
    node, d = root, 0
    while node not in up and d < 100:
        up[node] = d
        node, d = toks[node][3], d + 1
    total = 0.0
    for i, t in enumerate(toks):
        if i in inside or not _asked(t[2], shape):
            continue
        node, d = i, 0
        while node not in up and d < 100:
            nxt = toks[node][3]
            if nxt == node:
                d = 100
                break
            node, d = nxt, d + 1
        narrowed = any(m[3] == i and m[4] in _NARROWING and not _asked(m[2], shape) and m[2].isalpha()
                       for m in toks)  # fmt: skip
        total += (0.5 if narrowed else 1.0) / (1.0 + d + up.get(node, 100))
    return total


#: the dependencies by which a modifier names a narrower kind of the noun it modifies
_NARROWING = frozenset({"compound", "amod", "nmod"})


def _asked(lemma: str, shape: QuestionShape) -> bool:
    """Whether a sentence word (its lemma) is one of the question's content words or one of their forms."""
    return lemma in shape.content or any(stem(lemma) in forms(w) for w in shape.content)


def _peer(sent: Sentence, shape: QuestionShape, cand: Candidate) -> bool:
    """Whether the candidate is listed together with a name of the question ("starring Michael Douglas, Robert
    De Niro, Morgan Freeman" for "what movie stars Morgan Freeman, Robert De Niro and ..."): another member of
    the question's own list, not what it asks for."""
    toks = sent.tokens
    root, inside = _root(toks, cand)
    if root < 0:
        return False
    top = root
    for _ in range(50):
        if toks[top][4] != "conj" or toks[top][3] == top:
            break
        top = toks[top][3]
    group, todo = {top}, [top]
    while todo:
        node = todo.pop()
        for i, t in enumerate(toks):
            if t[3] == node and t[4] == "conj" and i not in group and i != node:
                group.add(i)
                todo.append(i)
    return any(shape.content.get(toks[i][2], 0) >= 2 for i in group if i not in inside)


#: nouns of a place a list of places ends with ("Beitbridge District, Matabeleland South, Zimbabwe")
_WIDEST = frozenset("country nation".split())
#: the last word of a place's name that says it lies within a country ("Hiran Region", "Bubi River")
_BELOW_COUNTRY_NAMES = frozenset("region district county province prefecture department municipality township parish "
                                 "borough river lake mountain mountains valley".split())  # fmt: skip
#: nouns of a place named after a smaller one in such a list, and before the country
_WITHIN_COUNTRY = frozenset("state province region".split())


def _list_place(sent: Sentence, cand: Candidate) -> int:
    """How many places come before the candidate in a comma-separated list of places it ends ("Gwanda District,
    Zimbabwe": 1 for Zimbabwe), 0 when it is not in one."""
    return sum(1 for _ in _listed_before(sent, cand.start, ("GPE", "LOC")))


Order = tuple[bool, bool, int, int, bool, float, int, int]


def _held_role(sent: Sentence, cand: Candidate) -> int:
    """2 for the object of "as" ("plays as a *striker*"), 1 for the copula's attribute ("was a pioneering
    *aviator*"), 0 for any other phrase."""
    toks = sent.tokens
    root, _ = _root(toks, cand)
    if root < 0:
        return 0
    dep, head = toks[root][4], toks[root][3]
    if dep == "pobj" and toks[head][2] == "as":
        return 2
    return 1 if dep in ("attr", "appos") else 0


def _within(sent: Sentence, shape: QuestionShape, cand: Candidate) -> Order:
    """The within-sentence order (module docstring, rule 4): not listed with the question's own names, names
    the noun asked for, for a country the last of a list of places, carries the label the noun asks for (for a
    position or profession: :func:`_held_role`), a name over a noun phrase, nearness in the parse; in a table row the latest year's column; position (earlier first)."""
    noun = shape.focus if shape.focus.isalpha() and shape.focus not in _HOW else ""
    words = re.findall(r"\w+", sent.evidence.text[cand.start : cand.end].lower())
    wanted = cand.label in _NOUN_LABELS.get(noun, ())
    after = sent.evidence.text[cand.end : cand.end + len(noun) + 2]
    names_noun = bool(noun) and cand.label != "NP" and ((bool(words) and words[-1] == noun)
                                                      or _titled(sent.evidence.text, cand.start, shape)
                                                      or re.match(rf" {noun}\b", after) is not None)  # "Maharashtra state"
    follower = re.match(r"\s+([a-z]+)\b", sent.evidence.text[cand.end : cand.end + 20])
    if shape.focus in _WIDEST and words and (words[-1] in _BELOW_COUNTRY_NAMES
                                             or (follower is not None and follower.group(1) in _BELOW_COUNTRY_NAMES)):
        names_noun = wanted = False  # "the Eastern Region of Uganda", "the Hiran region": a region is not the country
    header = sent.columns.get(cand.start, "")
    latest = max((int(y) for y in re.findall(r"(?:19|20)\d\d", header)), default=-1)
    near = round(_nearness(sent, shape, cand), 6)
    widest = _list_place(sent, cand) if shape.focus in _WIDEST else 0  # "which country": the list's last place
    if shape.focus in _WITHIN_COUNTRY:  # "from what state": "Oregon" of "Portland, Oregon", after the city
        widest = min(_list_place(sent, cand), 1)
    named = cand.label != "NP"  # a name over a noun phrase in one sentence (across sentences: _bonus)
    if shape.focus in _HELD:  # "what position": what the person plays or serves *as*, else what the copula says
        wanted = _held_role(sent, cand)
    return not _peer(sent, shape, cand), names_noun, widest, wanted, named, near, latest, -cand.start


_HOW = HOW_NUMBER | {"who", "whom", "whose", "where", "when"}


def _bonus(sent: Sentence, shape: QuestionShape, cand: Candidate) -> float:
    """What a candidate adds to its sentence's score (module docstring, rule 4)."""
    if shape.type in (AnswerType.THING, AnswerType.CHOICE):  # a thing is as often a bare noun phrase as a name: no bonus
        bonus = 0.0
    else:
        bonus = LABEL_BONUS if cand.label not in ("NP", "PROPN") else NAME_BONUS if cand.label == "PROPN" else 0.0
    if shape.measure:  # a number of the kind the question asks for over another
        order = MEASURE_LABELS[shape.measure]
        bonus += MEASURE_BONUS / (1 + order.index(cand.label)) if cand.label in order else -MEASURE_PENALTY
    header = sent.columns.get(cand.start)
    if header is not None:  # a table cell: the column the question names wins
        bonus += 0.1 * _overlap(header, shape)
    return bonus


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


def pick(
    question: str,
    scored: Sequence[tuple[float, Sentence]],
    focus: str | None = None,
    exclude: Sequence[str] = (),
    floor: float = MIN_RELEVANCE,
) -> Extraction:
    """The answer among scored sentences (module docstring, rule 4): the candidate with the best sentence score
    plus bonus, then the best within its sentence. ``focus``: the question to read the answer type and content
    words from when it differs from ``question``; a sentence under ``floor`` or holding none of the question's
    words itself (only through its section path) does not answer."""
    asked = focus or question
    shape = question_shape(asked)
    kind = shape.type if shape.type in LABELS else AnswerType.THING
    questions = [asked] if focus is None else [asked, question]
    if shape.type in (AnswerType.YES_NO, AnswerType.CHOICE):  # decided in code (rule 5), never a picked span
        return Extraction(answer="", found=False, type=shape.type,
                          reason=f"the evidence does not settle the {shape.type.value} question")  # fmt: skip
    best: tuple[float, Order, Sentence, Candidate] | None = None
    for score, sent in scored:
        if score < floor or not any(holds(sent.own, lemma) for lemma in shape.content):
            continue
        if best is not None and score + LABEL_BONUS + MEASURE_BONUS + 0.1 < best[0]:
            continue  # cannot win: skip its candidates
        for cand in candidates(sent, shape, questions, exclude):
            total = round(score + _bonus(sent, shape, cand), 6)
            if best is not None and total < best[0]:
                continue
            order = _within(sent, shape, cand)
            if best is None or (total, order) > (best[0], best[1]):
                best = (total, order, sent, cand)
    if best is None:
        top = max((s for s, _ in scored), default=0.0)
        reason = (f"no sentence holds {floor:.0%} of the question's content words" if top < floor
                  else f"no {kind.value} in the sentences that match the question")  # fmt: skip
        return Extraction(answer="", found=False, type=kind, reason=reason)
    total, _, sent, cand = best
    start, end = _widen(sent.evidence.text, cand.start, cand.end)
    if shape.focus in ("year", "when") and cand.label == "DATE":
        start, end = _range_point(sent.evidence.text, start, end, asked)
    if shape.focus == "year" and cand.label == "DATE":
        start, end = _year(sent.evidence.text, start, end)
    span = _tidy(sent.evidence.text[start:end])
    return Extraction(answer=span, found=True, sentence=sent, score=round(total, 4), type=kind,
                      reason=f"the {kind.value} in the sentence holding most of the question")  # fmt: skip


def extract_answer(question: str, evidence: Sequence[Evidence], focus: str | None = None) -> Extraction:
    """The best span of the expected type in the evidence (module docstring, rules 2-4), each sentence scored
    by its relevance discounted by its chunk's rank. ``focus``: the question to read the answer type and
    content words from when it differs from the question shown (the last sub-question of a decomposed
    question, with its variables bound)."""
    shape = question_shape(focus or question)
    rank_of = {e.chunk_id: i for i, e in enumerate(evidence)}
    scored = [
        (relevance(s, shape) / (1.0 + RANK_DISCOUNT * rank_of[s.evidence.chunk_id]), s) for s in sentences(evidence)
    ]
    return pick(question, scored, focus=focus)


_CURRENCY = "$€£¥"
_AFTER = re.compile(
    r"^(?:\s?%|\s(?:percent|per cent)\b|\s(?:thousand|million|billion|trillion)\b|\s?°\s?[CF]\b)", re.IGNORECASE
)


def _year(text: str, start: int, end: int) -> tuple[int, int]:
    """"In what year ...": the one year a date names ("May 17, 1965" -> "1965"); a date with no year or with
    several (a range) is kept whole."""
    years = list(_A_YEAR.finditer(text, start, end))
    return (years[0].start(), years[0].end()) if len(years) == 1 else (start, end)


#: the separator of a date range: "to", "until", a dash, a spaced hyphen, or a hyphen between a year and the
#: next ("1990-1995", "1793-94"; not inside an ISO date "1965-05-17")
_RANGE = re.compile(r"\s*(?:--|–|—|\bto\b|\buntil\b|\btill\b|\bthrough\b)\s*|\s+-\s+|(?<=\d{4})-(?=(?:\d{4}|\d{2})(?![-\d]))")
_A_YEAR = re.compile(r"(?<!\d)(?:1[0-9]|20)\d\d(?!\d)")
#: words of a question that asks when something ended ("when did it cease to be a colony")
_ENDING = frozenset("end ended ends cease ceased stop stopped leave left dissolve dissolved close closed finish "
                    "finished abolish abolished until".split())  # fmt: skip


def _range_point(text: str, start: int, end: int, question: str) -> tuple[int, int]:
    """"When did ...": one end of a date range, the start ("1842 to 1997" -> "1842", "1793 -- 94" -> "1793")
    or, when the question asks when something ended, the end; only an end that names a year itself, else the
    date is kept whole ("9 to 25 February 2018")."""
    m = _RANGE.search(text, start, end)
    if m is None or m.start() == start or m.end() == end:
        return start, end
    if _ENDING & set(re.findall(r"[a-z]+", question.lower())):
        return (m.end(), end) if _A_YEAR.search(text, m.end(), end) else (start, end)
    if _A_YEAR.search(text, start, m.start()) is None:
        return start, end
    lead = re.match(r"from\s+", text[start : m.start()], re.IGNORECASE)
    return start + (lead.end() if lead else 0), m.start()


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

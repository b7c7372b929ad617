"""The evidence as the reader sees it: each chunk split into *sentences* (prose, parsed by spaCy) and *rows*
(a table row as ingestion stores it, "Label; Header: value; Header: value", under the chunk's header line
"Label | Header | Header"), each knowing its chunk, where it sits in the chunk's text (so a quote is a
verbatim slice) and the words of its context (document title, heading path, metadata values).

One splitter for every workflow: prose is split into lines first (a heading, a list item or a caption is
its own sentence), the lines of a hard-wrapped sentence joined again (:func:`_continues`), then by spaCy's
parser; parses are cached by chunk text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from stratagraph.answers import Citation
from stratagraph.reading.words import forms, word_forms
from stratagraph.retrieval.base import Evidence
from stratagraph.text.nlp import load_nlp
from stratagraph.text.lexicon import OPEN_ENDED_WORDS
from stratagraph.text.amounts import Quantity
from stratagraph.text.periods import Period, find_periods

if TYPE_CHECKING:
    from spacy.tokens import Span as SpacySpan

__all__ = ["Candidate", "Cell", "Sentence", "citation", "context_forms", "metadata_periods", "offsets", "sentences"]

_HEADER = re.compile(r"^[^|;\n]+(?: \| [^|\n]*)+$")  # "Line item | FY2024 | FY2025"
_ROW = re.compile(r"^[^;|\n]+(?:; [^;:\n]+: [^;\n]*)+$")  # "Overtime; FY2024: 1,320; FY2025: 1,170"
_SEGMENT = re.compile(r"; ([^;:\n]+): ([^;\n]*)")
#: a life span after a name: "(1851–1929)", "(born 1958)", "(b. 1901)", "(1821 – )"
_LIFE_SPAN = re.compile(r"\((?:born\s+|b\.\s*)?(\d{3,4})(?:\s*[–—-]\s*(\d{3,4})?)?\)")


@dataclass(frozen=True)
class Cell:
    """One cell of a table row: its column header and its text as written, with offsets in the chunk."""

    column: str
    raw: str
    start: int
    end: int


@dataclass(frozen=True)
class Candidate:
    """A span that may answer: offsets in the chunk text, its label, how well its type fits (0..1), the
    sentence token it hangs on (-1 in a table row) and, for a number, its quantity."""

    start: int
    end: int
    label: str
    fit: float
    head: int = -1
    quantity: Quantity | None = None


@dataclass
class Sentence:
    """A sentence or a table row of an evidence chunk (module docstring)."""

    passage: Evidence
    start: int  # offsets in the chunk text
    end: int
    rank: int  # the chunk's rank in the evidence (0 = first)
    parse: Any = None  # the spaCy span of a prose sentence (None for a table row)
    label: str = ""  # a table row's label ("Overtime")
    cells: tuple[Cell, ...] = ()
    first_header: str = ""  # a table's first header ("Line item"): what its rows are
    caption: str = ""  # a table row's caption: the sentence right before its table ("Revenue by segment was:"),
    # and what its table's total row says the table measures ("Total revenue": revenue)
    facts: tuple[Mapping[str, Any], ...] = ()  # the stored facts of its chunk (props: type, quantities, arguments)

    @property
    def text(self) -> str:
        return self.passage.text[self.start : self.end]

    @property
    def is_row(self) -> bool:
        return bool(self.cells)

    @cached_property
    def forms(self) -> frozenset[str]:
        """Forms of its own words and their lemmas (a row: its label, headers and cells), and of the verbs it
        states by convention (:attr:`implied`)."""
        own = word_forms(self.text) | word_forms(self.first_header)  # a row is one of what its first header names
        if self.parse is not None:
            own |= frozenset(f for t in self.parse for f in forms(t.lemma_.lower()))
        return own | frozenset(f for verb, _, _ in self.implied for f in forms(verb))

    @cached_property
    def implied(self) -> tuple[tuple[str, int, int], ...]:
        """What the sentence states by convention rather than in words, as (verb, start, end) of the span that
        states it: a life span after a name, "(1851–1929)" or "(born 1958)", says when the person was born
        ("bear") and died ("die")."""
        out = []
        for m in _LIFE_SPAN.finditer(self.text):
            out.append(("bear", self.start + m.start(1), self.start + m.end(1)))
            if m.group(2):
                out.append(("die", self.start + m.start(2), self.start + m.end(2)))
        return tuple(out)

    @cached_property
    def context(self) -> frozenset[str]:
        """Forms of the words around it: its document title, heading path and metadata values, and for a table
        row its table's caption and the measure its total row names (the "Wholesale" row of a table whose last
        row is "Total revenue" is a revenue)."""
        return context_forms(self.passage) | word_forms(self.caption)

    @cached_property
    def title(self) -> frozenset[str]:
        """Forms of the words of its document's title (what the whole document is about)."""
        return word_forms(self.passage.title)

    @cached_property
    def heading(self) -> frozenset[str]:
        """Forms of the words of its own section's heading (the innermost of its heading path) and, for a table
        row, of its table's caption."""
        path = self.passage.section_path
        return (word_forms(path[-1]) if path else frozenset()) | word_forms(self.caption)

    @cached_property
    def own_periods(self) -> tuple[Period, ...]:
        """The reporting periods its chunk stands for when it names none itself: its heading path's, else its
        document's metadata (quarter, fiscal_year, year)."""
        for heading in reversed(self.passage.section_path):
            found = find_periods(heading)
            if found:
                return tuple(found)
        return metadata_periods(self.passage.metadata)

    @cached_property
    def clauses(self) -> tuple[tuple[int, str, str, int, int, str], ...]:
        """Its clauses' arguments (:func:`stratagraph.text.roles.sentence_clauses`) as (clause number, verb
        lemma, role, start, end, preposition), offsets in the chunk text; none for a table row."""
        if self.parse is None:
            return ()
        from stratagraph.text.roles import sentence_clauses

        base = self.start - self.parse.start_char
        return tuple((i, c.lemma, a.role, base + a.start, base + a.end, a.prep)
                     for i, c in enumerate(sentence_clauses(self.parse)) for a in c.arguments)  # fmt: skip

    def quote(self) -> Citation:
        return citation(self.passage, self.start, self.end)


def citation(passage: Evidence, start: int, end: int) -> Citation:
    """A verbatim quote of ``passage.text[start:end]`` with where the chunk sits."""
    return Citation(doc_id=passage.doc_id, source=passage.source, section=passage.section, chunk_id=passage.chunk_id,
                    quote=passage.text[start:end])  # fmt: skip


def metadata_periods(meta: Mapping[str, Any]) -> tuple[Period, ...]:
    """The period a document's metadata names: its quarter (or half) of its fiscal year or year, else the
    fiscal year, else the year."""
    quarter = str(meta.get("quarter") or "").strip().upper()
    fiscal = meta.get("fiscal_year")
    year = fiscal if fiscal is not None else meta.get("year")
    try:
        y = int(str(year)) if year is not None else None
    except ValueError:
        y = None
    m = re.match(r"^([QH])([1-4])$", quarter)
    if m:
        return (Period(m.group(1), int(m.group(2)), y, fiscal is not None),)
    return (Period("", 0, y, fiscal is not None),) if y is not None else ()


def context_forms(passage: Evidence) -> frozenset[str]:
    values = [str(v) for v in passage.metadata.values() if isinstance(v, (str, int)) and not isinstance(v, bool)]
    return word_forms(" ".join([passage.title, *passage.section_path, *values]))


@dataclass(frozen=True)
class _Parsed:
    start: int
    end: int
    parse: Any = None
    label: str = ""
    cells: tuple[Cell, ...] = ()
    first_header: str = ""
    caption: str = ""


#: a table's total row that names what the table measures ("Total revenue", "Total operating expenses")
_TOTAL_OF = re.compile(r"^(?:grand\s+)?total\s+(?:of\s+)?([A-Za-z][\w &,'-]*)$", re.IGNORECASE)


def _caption(line: str) -> str:
    """The last sentence of the prose line right before a table: its caption ("Revenue by segment was as
    follows, in millions of dollars."), unless it says what the table leaves out."""
    parts = re.split(r"(?<=[.!?])\s+", line.strip())
    last = parts[-1] if parts else ""
    return "" if _LEAVES_OUT.search(last) else last  # "X and Y are budgeted separately and not included in this table"


#: words by which a sentence before a table says what the table leaves out: no caption of what it holds
_LEAVES_OUT = re.compile(r"\b(?:not|no|n't|excluding|excludes|excluded|except)\b", re.IGNORECASE)


def _row(offset: int, line: str, first_header: str, caption: str = "") -> _Parsed:
    label = line.split("; ", 1)[0]
    cells = []
    for m in _SEGMENT.finditer(line):
        raw = m.group(2).strip()
        if raw:
            at = offset + m.start(2) + (len(m.group(2)) - len(m.group(2).lstrip()))
            cells.append(Cell(column=m.group(1).strip(), raw=raw, start=at, end=at + len(raw)))
    return _Parsed(offset, offset + len(line.rstrip()), label=label.strip(), cells=tuple(cells), first_header=first_header,
                   caption=caption)


@lru_cache(maxsize=4096)
def _split(text: str) -> tuple[_Parsed, ...]:
    """A chunk text's sentences and rows (module docstring), cached by text."""
    nlp = load_nlp()
    out: list[_Parsed] = []
    prose: list[tuple[int, str]] = []
    header: list[str] | None = None
    caption, before = "", ""  # the table's caption; the prose line last seen
    tables: list[list[int]] = []  # the rows of each table, by their place in ``out``
    pos = 0
    for line in text.split("\n"):
        offset, pos = pos, pos + len(line) + 1
        if not line.strip():
            continue
        if _HEADER.match(line) and "; " not in line:
            header = [h.strip() for h in line.split(" | ")]
            caption, before = _caption(before), ""
            tables.append([])
            continue
        if _ROW.match(line) and (header is None or all(m.group(1).strip() in header for m in _SEGMENT.finditer(line))):
            out.append(_row(offset, line, header[0] if header else "", caption))
            if tables:
                tables[-1].append(len(out) - 1)
            before = ""
            continue
        prose.append((offset, line))
        before = line
    for rows in tables:
        measure = next((m.group(1) for i in rows if (m := _TOTAL_OF.match(out[i].label))), "")
        for i in rows if measure else ():
            out[i] = replace(out[i], caption=f"{out[i].caption} {measure}".strip())
    prose = _paragraphs(prose)
    for (offset, line), doc in zip(prose, nlp.pipe([ln for _, ln in prose]), strict=True):
        for sent in doc.sents:
            start, end = offset + sent.start_char, offset + sent.end_char
            while end > start and text[end - 1].isspace():
                end -= 1
            if end > start:
                out.append(_Parsed(start, end, parse=sent))
    return tuple(sorted(out, key=lambda p: p.start))


#: a line that opens a part of its own (a list item, a heading, a quoted speaker's turn), never a wrapped line's rest
_OPENS = re.compile(r"^\s*(?:[-*•+]\s|\d+[.)]\s|#|>|\*\*[^*]+:\*\*|[A-Z][\w .'-]{0,40}:\s)")
#: what a wrapped line may end with when its sentence goes on: no sentence end, or a word that needs one after it
_ENDS = re.compile(r"[.!?:;]['\"”’)]?\s*$")


def _continues(line: str, nxt: str) -> bool:
    """Whether ``nxt`` goes on with the sentence ``line`` leaves open (a paragraph hard-wrapped over lines, as
    Markdown and plain text often are): ``line`` ends with no sentence end, ``nxt`` opens no part of its own,
    and ``nxt`` starts in lower case or with a figure, or ``line`` ends with a comma or a word that needs
    another after it ("... revenue was $41.6 million and" / "Professional Services revenue was ...")."""
    if _ENDS.search(line) or _OPENS.match(nxt) or not nxt.strip():
        return False
    first = nxt.lstrip()[:1]
    last = line.rstrip().rsplit(None, 1)[-1].lower() if line.strip() else ""
    return first.islower() or first.isdigit() or first in "$€£(" or line.rstrip().endswith(",") or last in OPEN_ENDED_WORDS


def _paragraphs(prose: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Prose lines with the lines of a wrapped sentence joined (:func:`_continues`), the line break read as a
    space: one character for one, so offsets in the chunk text stay as they were."""
    out: list[tuple[int, str]] = []
    for offset, line in prose:
        if out:
            start, text = out[-1]
            if start + len(text) + 1 == offset and _continues(text.rsplit("\n", 1)[-1], line):
                out[-1] = (start, f"{text}\n{line}")
                continue
        out.append((offset, line))
    return [(start, text.replace("\n", " ")) for start, text in out]


def sentences(passages: Sequence[Evidence], facts: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> list[Sentence]:
    """The sentences and rows of the passages, passage by passage in rank order; ``facts``: the stored facts
    of each chunk (by chunk id), which give table cells their typed quantities."""
    out = []
    for rank, e in enumerate(passages):
        own = tuple((facts or {}).get(e.chunk_id, ()))
        carried = _caption(e.context) if e.context and _opens_with_table(e.text) else ""
        for p in _split(e.text):
            caption = f"{carried} {p.caption}".strip() if p.label else p.caption
            out.append(Sentence(passage=e, start=p.start, end=p.end, rank=rank, parse=p.parse, label=p.label,
                                cells=p.cells, first_header=p.first_header, caption=caption, facts=own))  # fmt: skip
    return out


def _opens_with_table(text: str) -> bool:
    """Whether a chunk starts with a table's header line: the table's caption is the sentence carried over
    from the chunk before it ("Revenue by segment was as follows, in millions of dollars.")."""
    first = text.lstrip().split("\n", 1)[0]
    return bool(_HEADER.match(first)) and "; " not in first


def offsets(sentence: Sentence, span: SpacySpan) -> tuple[int, int]:
    """A spaCy span of a prose sentence as offsets in the chunk text."""
    base = sentence.start - sentence.parse.start_char
    return base + span.start_char, base + span.end_char


"""Citations and explicit cross-references: the input of the contextual citation graph (CG-RAG §4.2).

CG-RAG §4.2 models a corpus as chunks linked *within* a document by explicit cross-references ("a section
referencing earlier subsections within the same paper", §4.2.2 intra-document edges) and *across*
documents by citations ("one paper cites another without explicitly linking to specific chunks within it",
§4.2 / §4.2.2 inter-document edges). This module finds both kinds of link in text, as pure functions over
loaded documents and their heading trees; building the ``CITES`` / ``REFERS_TO`` edges is the caller's job:

* :func:`reference_section_ids` and :func:`parse_references` read the reference list of a document into
  :class:`Reference` records (surnames, year, title);
* :func:`find_markers` finds in-text citation markers ("[2, 3]", "(Okafor et al., 2021)", "Okafor (2021)")
  and :func:`resolve_marker` maps one to the entries of the reference list;
* :func:`find_section_refs` finds "see Section 3.2" / "Chapter 4" / "Appendix A" and
  :func:`resolve_section_ref` maps one to a section of the same document (§4.2.2 explicit cross-reference);
* :class:`ReferenceIndex` matches a reference's title to a document of the corpus (``CITES`` Document ->
  Document, and Chunk -> Document for the chunk holding a marker), and, through the
  :meth:`~stratagraph.text.titles.TitleIndex.lookup` it inherits, an entity name to the document or
  section whose title names it (``DESCRIBED_BY``). Both use :func:`~stratagraph.text.titles.normalize_title`.

Title normalisation (:func:`fold`, :func:`normalize_title`, :func:`title_key`, :func:`surname_of`) and the
page-title index live in :mod:`stratagraph.text.titles`, which retrieval shares; they are re-exported here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from stratagraph.schema import Block, Outline, SourceDocument
from stratagraph.text.titles import (
    _APOSTROPHES_RE,
    _NAME_SUFFIXES,
    _NON_ALNUM_RE,
    _PARTICLES,
    _YEAR_RE,
    _YEAR_TOKEN,
    GENERIC_SECTION_DOCS,
    STRUCTURAL_HEADINGS,
    TitleIndex,
    TitleMatch,
    _discard,
    _Indexed,
    _is_initials,
    _strip_accents,
    _strip_heading_number,
    fold,
    normalize_title,
    surname_of,
    title_key,
)

__all__ = [
    "Reference",
    "Marker",
    "SectionRef",
    "TitleMatch",
    "ReferenceIndex",
    "REFERENCE_SECTION_TITLES",
    "STRUCTURAL_HEADINGS",
    "JACCARD_THRESHOLD",
    "GENERIC_SECTION_DOCS",
    "reference_section_ids",
    "parse_references",
    "parse_reference_text",
    "find_markers",
    "resolve_marker",
    "find_section_refs",
    "resolve_section_ref",
    "fold",
    "normalize_title",
    "title_key",
    "surname_of",
]

# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------


class Reference(BaseModel):
    """One entry of a document's reference list.

    ``key`` is the list label of a numbered list ("1" for "[1] ...", "1. ..." or "1) ..."), ``None`` for
    bulleted or unlabelled entries; ``authors`` are surnames in the order written; ``year`` keeps a
    disambiguating suffix ("2021a"); ``raw`` is the entry as written (lines joined); ``line`` the 1-based
    source line of its first line, where the loader knew it.
    """

    key: str | None = None
    authors: list[str]
    year: str | None = None
    title: str
    raw: str
    line: int | None = None


class Marker(BaseModel):
    """An in-text citation marker; ``start``/``end`` index the text it was found in.

    * ``numeric``: ``keys`` are the reference numbers it cites, ranges expanded ("[1-3]" -> ["1","2","3"]);
      ``authors`` is empty and ``year`` is ``None``.
    * ``author_year``: one marker per cited work. ``keys`` is empty; ``authors`` are the surnames written
      (only the first one for "et al."); ``year`` the year as written ("2021a"). A parenthetical group of
      several works, "(Okafor, 2021; Chen, 2022)", gives one marker per work, each spanning its own entry
      ("Okafor, 2021") without the parentheses; a narrative marker spans the names and the parenthesised
      year ("Okafor et al. (2021)").
    """

    kind: Literal["numeric", "author_year"]
    keys: list[str]
    authors: list[str]
    year: str | None = None
    start: int
    end: int
    text: str


class SectionRef(BaseModel):
    """An explicit cross-reference to a part of the same document ("see Section 3.2", "Appendix A").

    ``number`` is the number as written without its keyword and trailing dot ("3.2", "II", "A"); ``text``
    is ``text[start:end]`` of the searched text.
    """

    number: str
    kind: Literal["section", "chapter", "appendix", "part"]
    start: int
    end: int
    text: str


# --------------------------------------------------------------------------------------------------
# Text helpers (title normalisation and surnames: stratagraph.text.titles)
# --------------------------------------------------------------------------------------------------


def _name_key(name: str) -> str:
    """A surname for comparison: accents and case folded, only letters and digits kept."""
    return _NON_ALNUM_RE.sub("", _APOSTROPHES_RE.sub("", fold(name)))


_PAREN_YEAR_RE = re.compile(rf"\(\s*({_YEAR_TOKEN})\s*\)")
_NAME_WORD_RE = re.compile(r"^[^\W\d_][\w'’\-]*\.?$")


def _is_capitalised(word: str) -> bool:
    return bool(word) and word[0].isupper()


# --------------------------------------------------------------------------------------------------
# Reference lists
# --------------------------------------------------------------------------------------------------

#: Section titles (casefolded, numbering removed) that hold a reference list.
REFERENCE_SECTION_TITLES: frozenset[str] = frozenset(
    {
        "references",
        "reference",
        "reference list",
        "references cited",
        "bibliography",
        "works cited",
        "literature cited",
        "cited literature",
        "sources",
        "citations",
    }
)


def _is_reference_title(title: str) -> bool:
    text = " ".join(_strip_heading_number(title).split()).rstrip(":.").strip().casefold()
    return text in REFERENCE_SECTION_TITLES


def reference_section_ids(outline: Outline) -> set[str]:
    """Ids of the sections holding the reference list: titled References, Bibliography, Works Cited,
    Literature Cited, Sources or Citations (case-insensitive, numbering such as "7." or "VII." allowed),
    together with their subsections ("Primary sources" under "Bibliography"). The preamble / root section
    (path ``"0"``, titled after the document) never counts. Markers found in these sections are the list's
    own labels, not citations: callers skip them when linking chunks (CG-RAG §4.2.2)."""
    found: set[str] = set()
    for section in outline.sections:  # reading order: a parent comes before its subsections
        if section.parent_id in found or (section.path != "0" and _is_reference_title(section.title)):
            found.add(section.id)
    return found


_ENTRY_LABEL_RE = re.compile(
    r"^\s*(?:\[(?P<bracket>\d{1,3})\]|\((?P<paren>\d{1,3})\)|(?P<number>\d{1,3})[.)](?=\s)"
    r"|(?P<bullet>[-*+•‣◦▪–])(?=\s))\s*"
)
_TERMINAL = (".", ")", "]", ">", "!", "?")


@dataclass(slots=True)
class _Entry:
    key: str | None
    lines: list[str]
    line: int | None

    @property
    def raw(self) -> str:
        return " ".join(" ".join(self.lines).split())


def _label(line: str) -> tuple[re.Match[str] | None, str | None]:
    """The list label at the start of ``line`` and its number (``None`` for a bullet)."""
    m = _ENTRY_LABEL_RE.match(line)
    if not m:
        return None, None
    key = m.group("bracket") or m.group("paren") or m.group("number")
    if key is None:  # a bullet; a numbered label may follow it ("- [1] ...")
        inner = _ENTRY_LABEL_RE.match(line, m.end())
        if inner and inner.group("bullet") is None:
            key = inner.group("bracket") or inner.group("paren") or inner.group("number")
    if key is None:
        return m, None
    return m, str(int(key))


def _looks_like_entry_start(prev: str, line: str) -> bool:
    """Whether an unlabelled ``line`` starts a new entry rather than continuing ``prev`` (a hard-wrapped
    entry): ``prev`` ended a sentence and ``line`` opens with an author list, as :func:`parse_reference_text`
    reads one ("Okafor, N., & Lindqvist, P. (2021).", "Harriet Coleman. Title ...", 'A. Author, "Title,"'),
    while a venue line ("Journal of Climate, 4(2), 2021.") does not."""
    if not prev.rstrip().endswith(_TERMINAL):
        return False
    text = _clean_entry(line)
    m = _APA_RE.match(text)
    if m and _parse_authors(m.group("authors")) is not None:
        return True
    q = _QUOTED_RE.search(text)
    if q and q.start() > 0 and _parse_authors(text[: q.start()]):
        return True
    return _author_split(text) is not None


def _split_entries(block: Block) -> list[_Entry]:
    """The entries of one reference-list paragraph.

    Labelled lines ("[1]", "1.", "1)", "(1)", "-", "*", "•") start entries and unlabelled lines continue
    them. Without labels a new entry starts at each line that :func:`_looks_like_entry_start` accepts (one
    entry per line), and the other lines continue the entry before them (a hard-wrapped reference); a
    paragraph whose lines never open with an author list is one entry.
    """
    numbered = [
        (block.line + i if block.line is not None else None, ln)
        for i, ln in enumerate(block.text.split("\n"))
        if ln.strip()
    ]
    if not numbered:
        return []
    entries: list[_Entry] = []
    labelled = any(_label(ln)[0] for _, ln in numbered)
    if labelled:
        for lineno, ln in numbered:
            m, key = _label(ln)
            if m or not entries:
                entries.append(_Entry(key=key, lines=[ln.strip()], line=lineno))
            else:
                entries[-1].lines.append(ln.strip())
        return entries
    for idx, (lineno, ln) in enumerate(numbered):
        if not entries or _looks_like_entry_start(numbered[idx - 1][1], ln):
            entries.append(_Entry(key=None, lines=[ln.strip()], line=lineno))
        else:
            entries[-1].lines.append(ln.strip())
    return entries


def parse_references(doc: SourceDocument, outline: Outline) -> list[Reference]:
    """The entries of the reference list(s) of ``doc`` in reading order (CG-RAG §4.2: the citations that
    become inter-document edges).

    Entries come from the paragraph blocks of :func:`reference_section_ids` (tables are skipped), split by
    list labels or lines (see :func:`_split_entries`), and each is read by :func:`parse_reference_text`;
    an unlabelled line ending in ":" ("Further reading:") is a lead-in, not an entry.
    ``doc`` is the document the outline was built from (kept for symmetry with the other ingest steps; all
    blocks are taken from ``outline``).
    """
    if outline.doc_id != doc.doc_id:
        raise ValueError(f"outline of {outline.doc_id!r} given for document {doc.doc_id!r}")
    refs: list[Reference] = []
    ref_ids = reference_section_ids(outline)
    for section in outline.sections:
        if section.id not in ref_ids:
            continue
        for block in outline.blocks.get(section.id, []):
            if block.kind != "paragraph" or not block.text.strip():
                continue
            for entry in _split_entries(block):
                raw = entry.raw
                m, _ = _label(raw)
                body = raw[m.end() :] if m else raw
                inner, _ = _label(body)  # "- [1] ..." has two labels
                if inner:
                    body = body[inner.end() :]
                if not body.strip() or (entry.key is None and body.rstrip().endswith(":")):
                    continue  # empty, or a lead-in line such as "Further reading:"
                authors, year, title = parse_reference_text(body)
                refs.append(Reference(key=entry.key, authors=authors, year=year, title=title, raw=raw, line=entry.line))
    return refs


# -- reading one entry -----------------------------------------------------------------------------

_MD_LINK_RE = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*\)")
_URL_RE = re.compile(r"<?(?:https?://|www\.|doi:\s*|https?:)\S+>?", re.IGNORECASE)
_EMPHASIS_RE = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)")
_APA_RE = re.compile(
    rf"^(?P<authors>.+?)[\s,]*\(\s*(?P<year>{_YEAR_TOKEN}|n\.\s?d\.|in press|forthcoming)(?:\s*,[^)]*)?\s*\)"
    r"\s*[.,:]?\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_QUOTED_RE = re.compile(r"[“\"«„]\s*(?P<title>[^“”\"«»„]{2,}?)\s*[”\"»“]")
_ABBREVIATIONS = frozenset(
    {"vs", "e.g", "i.e", "etc", "st", "dr", "mr", "mrs", "ms", "no", "vol", "pp", "ed", "eds", "al", "inc", "co", "ltd"}
)
_AUTHOR_SEP_RE = re.compile(r"\s*(?:,|;|&|\band\b)\s*")
_ET_AL_RE = re.compile(r"\bet\s+al\b\.?", re.IGNORECASE)


def _clean_entry(text: str) -> str:
    text = _MD_LINK_RE.sub(r"\1", text)
    text = _URL_RE.sub(" ", text)
    text = _EMPHASIS_RE.sub("", text)
    return " ".join(text.split())


def _parse_authors(text: str) -> list[str] | None:
    """Surnames of an author list, or ``None`` when ``text`` does not read like one.

    Handles "Okafor, N., & Lindqvist, P." (APA), "Adaeze Okafor and Henrik Lindqvist", "Okafor N, Lindqvist
    P" (Vancouver), "Smith, John, and Jane Doe" (MLA/Chicago: only the first name inverted) and "et al.".
    Every name must be at most five words of capitalised words, particles or initials; a lone surname is
    accepted only when initials or a given name follow it after a comma.
    """
    text = _ET_AL_RE.sub("", text).strip().strip(".,;:").strip()
    if not text or len(text) > 400:
        return None
    tokens = [t.strip() for t in _AUTHOR_SEP_RE.split(text) if t.strip()]
    out: list[str] = []
    pending_single = False  # the previous token was a lone surname, still without initials / given name
    lone_ok: list[bool] = []  # for each lone surname: was it completed by initials or a given name?
    for token in tokens:
        if _is_initials(token):
            if not pending_single:
                return None
            pending_single = False
            lone_ok[-1] = True
            continue
        words = token.split()
        if len(words) == 1:
            word = words[0]
            if not (_NAME_WORD_RE.match(word) and _is_capitalised(word)):
                return None
            if pending_single:  # "Smith, John": the given name of the preceding surname
                pending_single = False
                lone_ok[-1] = True
                continue
            out.append(word.strip(".,"))
            lone_ok.append(False)
            pending_single = True
            continue
        pending_single = False
        if len(words) > 5:
            return None
        for word in words:
            if word.casefold() in _PARTICLES or word.casefold() in _NAME_SUFFIXES or _is_initials(word):
                continue
            if not (_NAME_WORD_RE.match(word) and _is_capitalised(word)):
                return None
        if all(_is_initials(w) or w.casefold() in _PARTICLES for w in words):
            return None
        out.append(surname_of(token))
    if not out:
        return None
    if len(out) == 1 and len(lone_ok) == 1 and not lone_ok[0]:
        return None  # one bare word ("Coleman") is not distinguishable from a one-word title
    return out


def _sentence_end(text: str, start: int = 0) -> int:
    """Index of the period that ends the first sentence of ``text[start:]`` (``len(text)`` if none).
    "?" and "!" end a sentence too but belong to it (the returned index is just after them)."""
    for m in re.finditer(r"[.?!](?=\s|$)", text[start:]):
        i = start + m.start()
        if text[i] in "?!":
            return i + 1
        word = re.search(r"([\w.]+)$", text[start:i])
        prev = word.group(1) if word else ""
        if prev.casefold() in _ABBREVIATIONS or (len(prev) == 1 and prev.isupper()):
            continue
        if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", prev):  # "U.S."
            continue
        return i
    return len(text)


def _first_sentence(text: str) -> str:
    return text[: _sentence_end(text)].strip().strip(" ,;:")


def _author_split(text: str) -> int | None:
    """Where the author list ends in "Author A, Author B. Title. Venue, 2020.": the first period (followed
    by a space and not by a comma or another initial) whose prefix :func:`_parse_authors` accepts."""
    for m in re.finditer(r"\.(?=\s+\S)", text):
        i = m.start()
        if i > 400:
            break
        after = text[m.end() :].lstrip()
        if after.startswith(",") or re.match(r"[A-Z]\.", _strip_accents(after)):
            continue
        if _parse_authors(text[:i]) is not None:
            return i
    return None


def _year_in(text: str) -> str | None:
    """The publication year of a venue string: a parenthesised year, else the last year-like number that is
    not part of a numeric range (page numbers such as "1950–1960")."""
    m = _PAREN_YEAR_RE.search(text)
    if m:
        return m.group(1)
    found = _YEAR_RE.findall(text)
    return found[-1] if found else None


def parse_reference_text(text: str) -> tuple[list[str], str | None, str]:
    """``(surnames, year, title)`` of one reference entry without its list label.

    Recognised shapes, tried in order:

    1. APA: "Okafor, N., & Lindqvist, P. (2021). Title of the paper. Journal, 4(2), 1–10." -- authors before
       the parenthesised year, the title is the first sentence after it (or a quoted title).
    2. A quoted title anywhere: 'A. Author and B. Author, “Title,” in Proc. X, 2020.' or Chicago
       'Okafor, Adaeze, and Henrik Lindqvist. “Title.” Journal 4 (2019).' -- authors before the quote.
    3. "Author A, Author B. Title. Venue, 2020." -- authors up to the first sentence end that reads like an
       author list, title up to the next sentence end, year from the venue part.

    Without a recognisable author list the title is the first sentence and the authors are empty.
    """
    body = _clean_entry(text)
    m = _APA_RE.match(body)
    if m:
        authors = _parse_authors(m.group("authors"))
        if authors is not None:
            year_text = m.group("year")
            year = year_text if re.fullmatch(_YEAR_TOKEN, year_text) else None
            rest = m.group("rest").strip()
            q = _QUOTED_RE.match(rest)
            title = q.group("title").strip(" ,.;:") if q else _first_sentence(rest)
            return authors, year, title
    q = _QUOTED_RE.search(body)
    if q:
        before = body[: q.start()].strip().strip(".,;:").strip()
        after = body[q.end() :]
        authors = _parse_authors(before) if before else []
        if authors is not None:
            return authors, _year_in(after) or _year_in(before), q.group("title").strip(" ,.;:")
    split = _author_split(body)
    if split is not None:
        authors = _parse_authors(body[:split]) or []
        rest = body[split + 1 :].strip()
        end = _sentence_end(rest)
        title = rest[:end].strip().strip(" ,;:")
        return authors, _year_in(rest[end:]) or _year_in(rest), title
    end = _sentence_end(body)
    return [], _year_in(body[end:]) or _year_in(body), body[:end].strip().strip(" ,;:")


# --------------------------------------------------------------------------------------------------
# In-text citation markers
# --------------------------------------------------------------------------------------------------

_NUMERIC_MARKER_RE = re.compile(r"\[\s*(\d{1,3}(?:\s*(?:[-–—,;]|and)\s*\d{1,3})*)\s*\](?!\()")
_LINK_DEF_AFTER_RE = re.compile(r":\s*(?:https?://|www\.)")
_NUMERIC_PART_RE = re.compile(r"^(\d{1,3})(?:\s*[-–—]\s*(\d{1,3}))?$")
MAX_RANGE = 50

_NAME = r"(?:(?:van|von|de|der|den|da|di|du|del|della|la|le|ter|ten|dos|das)\s+)*[^\W\d_][\w'’\-]*"
_NARRATIVE_RE = re.compile(
    rf"(?<![\w'’\-.])(?P<names>{_NAME}(?:\s+et\s+al\.?|(?:,\s+{_NAME}){{0,6}},?\s+(?:and|&)\s+{_NAME})?)"
    rf"\s+\(\s*(?P<years>{_YEAR_TOKEN}(?:\s*[,;]\s*{_YEAR_TOKEN})*)(?:\s*,\s*(?:pp?\.|chap\.|ch\.)\s*[\w\-–]+)?\s*\)"
)
_PARENTHETICAL_RE = re.compile(r"\(([^()]{3,400})\)")
_AY_ENTRY_RE = re.compile(
    r"^(?P<pre>\s*(?:(?:[^\d;()]*?\s)?"  # a lead-in: "see", "e.g.,", "for a review, see"
    r"(?:see(?:\s+also)?|e\.g\.|cf\.|i\.e\.|for\s+example|reviewed\s+in)[,:]?\s+)?)"
    rf"(?P<cite>(?P<names>[^\d;()]+?),?\s+(?P<years>{_YEAR_TOKEN}(?:\s*,\s*{_YEAR_TOKEN})*)"
    r"(?:\s*,\s*(?:pp?\.|chap\.|ch\.|fig\.|para\.)\s*[\w\-–]+)?)\s*$",
    re.IGNORECASE,
)
# Capitalised words that precede a year without being an author ("(June 2020)", "Section (2021)").
_NOT_AUTHORS = frozenset(
    """january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec spring summer autumn fall winter monday tuesday wednesday thursday friday
    saturday sunday the this that these those in on at by for from since until till before after during
    through between of and or to see also figure fig table tab section sec chapter appendix part equation eq
    page vol volume issue year years fy q fiscal census circa ca c about around approximately est estimated
    updated revised published accessed retrieved edition ed version v released founded born died established
    """.split()
)


def _marker_names(text: str) -> list[str] | None:
    """Surnames of the author part of an author-year marker ("Okafor et al.", "Okafor and Lindqvist",
    "Okafor, Lindqvist, & Chen", "van der Berg"), or ``None`` when it is not one (a month, "Table", a
    lowercase word, digits)."""
    text = text.strip().rstrip(",")
    had_et_al = bool(_ET_AL_RE.search(text))
    text = _ET_AL_RE.sub("", text).strip().rstrip(",")
    if not text:
        return None
    names: list[str] = []
    for token in _AUTHOR_SEP_RE.split(text):
        token = token.strip()
        if not token:
            continue
        words = token.split()
        if len(words) > 4:
            return None
        last = words[-1]
        if len(last) < 2 or not _is_capitalised(last) or not _NAME_WORD_RE.match(last) or last.endswith("."):
            return None
        for word in words[:-1]:
            if word.casefold() in _PARTICLES:
                continue
            if not (_is_capitalised(word) and _NAME_WORD_RE.match(word)):
                return None
        if any(fold(w) in _NOT_AUTHORS for w in words if w.casefold() not in _PARTICLES):
            return None
        names.append(token)
    if not names or (had_et_al and len(names) != 1):
        return None
    return names


def _split_years(text: str) -> list[str]:
    return re.findall(_YEAR_TOKEN, text)


def _numeric_keys(inner: str) -> list[str] | None:
    keys: list[str] = []
    for part in re.split(r"\s*(?:,|;|\band\b)\s*", inner.strip()):
        m = _NUMERIC_PART_RE.match(part.strip())
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo < 1 or hi < lo or hi - lo > MAX_RANGE:
            return None
        keys.extend(str(n) for n in range(lo, hi + 1))
    return list(dict.fromkeys(keys))


def find_markers(text: str) -> list[Marker]:
    """In-text citation markers of ``text`` in order of position (CG-RAG §4.2: the chunk-level evidence
    that a chunk cites a document).

    Numeric: "[1]", "[2, 3]", "[1-3]" / "[1–3]" (ranges of at most 50 expanded), "[1; 4]", "[1, 3-5]".
    Brackets holding anything but numbers ("[citation needed]", "[x, 1]"), a zero, a number above 999, a
    Markdown link "[1](url)" and a link definition "[1]: http..." do not count.

    Author-year, one :class:`Marker` per cited work: parenthetical "(Okafor et al., 2021)", "(Okafor &
    Lindqvist, 2021)", "(Okafor and Lindqvist 2021)", "(see Okafor, 2021, p. 4)", "(for a review, see
    Okafor, 2021)", and groups "(Okafor, 2021; Chen, 2022)" -> two markers, "(Okafor, 2019, 2021)" -> two
    markers with the same span; narrative "Okafor et al. (2021)", "Okafor and Lindqvist (2019)", "Okafor
    (2021)". A year alone "(2021)", "(see Section 2.1)", months and seasons ("(June 2020)") and other
    non-name words do not count.
    """
    markers: list[Marker] = []
    for m in _NUMERIC_MARKER_RE.finditer(text):
        if _LINK_DEF_AFTER_RE.match(text, m.end()):
            continue
        keys = _numeric_keys(m.group(1))
        if keys:
            markers.append(
                Marker(kind="numeric", keys=keys, authors=[], year=None, start=m.start(), end=m.end(), text=m.group(0))
            )

    for m in _PARENTHETICAL_RE.finditer(text):
        inner_start = m.start(1)
        offset = 0
        for part in m.group(1).split(";"):
            part_start = inner_start + offset
            offset += len(part) + 1
            e = _AY_ENTRY_RE.match(part)
            if not e:
                continue
            names = _marker_names(e.group("names"))
            if names is None:
                continue
            start, end = part_start + e.start("cite"), part_start + e.end("cite")
            markers += _author_year(names, e.group("years"), start, end, text)

    pos = 0
    while True:
        m = _NARRATIVE_RE.search(text, pos)
        if not m:
            break
        names = _marker_names(m.group("names"))
        if names is None:
            pos = m.start() + 1
            continue
        markers += _author_year(names, m.group("years"), m.start(), m.end(), text)
        pos = m.end()
    markers.sort(key=lambda mk: (mk.start, mk.end))
    return markers


def _author_year(names: list[str], years: str, start: int, end: int, text: str) -> list[Marker]:
    """One author-year marker per year cited for these names, all spanning ``text[start:end]``."""
    authors = [surname_of(n) for n in names]
    return [
        Marker(kind="author_year", keys=[], authors=authors, year=year, start=start, end=end, text=text[start:end])
        for year in _split_years(years)
    ]


def _year_parts(year: str) -> tuple[str, str]:
    return year[:4], year[4:].casefold()


def _years_agree(marker_year: str, ref_year: str | None) -> bool:
    """Same year; a suffix ("2021a") must agree when both sides write one."""
    if not ref_year:
        return False
    (m_base, m_suf), (r_base, r_suf) = _year_parts(marker_year), _year_parts(ref_year)
    return m_base == r_base and (not m_suf or not r_suf or m_suf == r_suf)


def _surnames_agree(a: str, b: str) -> bool:
    """Accent/case-insensitive surname equality; "Berg" agrees with "van der Berg"."""
    ka, kb = _name_key(a), _name_key(b)
    if not ka or not kb:
        return False
    if ka == kb:
        return True
    la, lb = _name_key(a.split()[-1]), _name_key(b.split()[-1])
    return bool(la) and la == lb


def _author_at(ref: Reference, i: int, name: str) -> bool:
    if i < len(ref.authors):
        return _surnames_agree(name, ref.authors[i])
    if i == 0 and not ref.authors:  # authors not parsed: the name opens the entry
        head = fold(ref.raw)[:80]
        return bool(_name_key(name)) and re.search(rf"\b{re.escape(fold(name))}\b", head) is not None
    return False


def resolve_marker(marker: Marker, references: list[Reference]) -> list[Reference]:
    """The reference-list entries ``marker`` cites (CG-RAG §4.2 inter-document link of the marker's chunk).

    Numeric: the entries whose ``key`` is one of the marker's keys, in the marker's order; when no entry of
    the list has a key (a loader that dropped the numbers of an ordered list), key ``n`` is the ``n``-th
    entry. Author-year: entries whose first author's surname agrees with the marker's first name
    (accent- and case-insensitive) and whose year agrees ("2021" matches "2021a"; two different suffixes do
    not); several candidates are narrowed by the marker's further authors and by an exact year suffix, and
    all that remain are returned.
    """
    if marker.kind == "numeric":
        keyed = [r for r in references if r.key]
        by_key: dict[str, Reference] = {}
        if keyed:
            for ref in keyed:
                by_key.setdefault(ref.key or "", ref)
        else:
            by_key = {str(i + 1): ref for i, ref in enumerate(references)}
        out: list[Reference] = []
        for key in marker.keys:
            ref = by_key.get(key)
            if ref is not None and all(ref is not o for o in out):
                out.append(ref)
        return out
    if not marker.authors or not marker.year:
        return []
    year = marker.year
    cands = [r for r in references if _years_agree(year, r.year) and _author_at(r, 0, marker.authors[0])]
    if len(cands) > 1 and len(marker.authors) > 1:
        narrowed = [r for r in cands if all(_author_at(r, i, n) for i, n in enumerate(marker.authors) if i)]
        cands = narrowed or cands
    if len(cands) > 1:
        exact = [r for r in cands if (r.year or "").casefold() == year.casefold()]
        cands = exact or cands
    return cands


# --------------------------------------------------------------------------------------------------
# Explicit cross-references to sections
# --------------------------------------------------------------------------------------------------

_DECIMAL_NUM = r"\d{1,3}(?:\.\d{1,3})*"
_ROMAN_NUM = r"[IVXLCDM]{1,7}"
_LETTER_NUM = r"[A-Z](?:\.\d{1,3})*"
_NUM = rf"(?:{_DECIMAL_NUM}|{_ROMAN_NUM}|{_LETTER_NUM})(?![\w.]?\d)(?!\w)"
_CONNECT = r"\s*(?:,\s*(?:and|or|&)?|and|or|&|to|through|[-–—])\s*"
_SECTION_REF_RE = re.compile(
    r"(?<![\w§])(?P<kw>(?i:(?:sub)?sections?|sect?s?\.|chapters?|chaps?\.|ch\.|appendix|appendices|parts?)\s+"
    r"|§§?\s*)"
    rf"(?P<nums>{_NUM}(?:{_CONNECT}{_NUM})*)"
)
_NUM_RE = re.compile(_NUM)
_KINDS: dict[str, Literal["section", "chapter", "appendix", "part"]] = {
    "sec": "section",
    "sub": "section",
    "§": "section",
    "cha": "chapter",
    "ch.": "chapter",
    "app": "appendix",
    "par": "part",
}


def _style(num: str) -> str:
    if num[0].isdigit():
        return "decimal"
    if re.fullmatch(_ROMAN_NUM, num) and len(num) > 1:
        return "roman"
    if re.fullmatch(_ROMAN_NUM, num):  # "I", "V", "X": a roman numeral or a letter
        return "roman-or-letter"
    return "letter"


def _styles_compatible(a: str, b: str) -> bool:
    sa, sb = _style(a), _style(b)
    if sa == sb:
        return True
    return "roman-or-letter" in (sa, sb) and {sa, sb} <= {"roman", "letter", "roman-or-letter"}


def _expand_range(lo: str, hi: str) -> list[str]:
    """"2.1"-"2.3" -> 2.1, 2.2, 2.3 and "2"-"4" -> 2, 3, 4 (same prefix, at most 20 steps); else both ends."""
    lo_parts, hi_parts = lo.split("."), hi.split(".")
    if (
        len(lo_parts) == len(hi_parts)
        and lo_parts[:-1] == hi_parts[:-1]
        and lo_parts[-1].isdigit()
        and hi_parts[-1].isdigit()
        and 0 < int(hi_parts[-1]) - int(lo_parts[-1]) <= 20
    ):
        prefix = ".".join(lo_parts[:-1])
        return [f"{prefix}.{n}" if prefix else str(n) for n in range(int(lo_parts[-1]), int(hi_parts[-1]) + 1)]
    return [lo, hi]


def find_section_refs(text: str) -> list[SectionRef]:
    """Explicit cross-references of ``text`` in order of position (CG-RAG §4.2.2: "explicit cross-references
    occur when c_i refers to c_j").

    "Section 2.1", "see Section 3.2", "Sec. 4", "§ 3.2", "Chapter 4", "Ch. 4", "Appendix A", "Appendix A.2",
    "Part II"; lists and ranges give one ref per number: "Sections 2.1 and 2.3", "Sections 2.1, 2.2 and
    2.4", "Chapters 3–5", "§§ 2–3" (ranges with the same prefix expanded). The first ref of a list spans the
    keyword and its number, the others only their number. A keyword without a number ("six sections of
    youth soccer") is not a reference; numbers after the first must share its style (decimal, roman,
    letter), so "Section 3 and I" stops at 3.
    """
    refs: list[SectionRef] = []
    for m in _SECTION_REF_RE.finditer(text):
        kw = m.group("kw").strip().casefold()
        kind = _KINDS.get(kw[:3]) or _KINDS.get(kw[:1]) or "section"
        nums = list(_NUM_RE.finditer(text, m.start("nums"), m.end("nums")))
        first = nums[0].group(0)
        kept: list[re.Match[str]] = [nums[0]]
        for num in nums[1:]:
            if not _styles_compatible(first, num.group(0)):
                break
            kept.append(num)
        # (number, start, end): the first spans keyword and number, a range's inner numbers its last number
        spans: list[tuple[str, int, int]] = []
        for i, num in enumerate(kept):
            between = text[kept[i - 1].end() : num.start()] if i else ""
            if i and re.search(r"[-–—]|\bto\b|\bthrough\b", between):
                spans.extend((n, num.start(), num.end()) for n in _expand_range(kept[i - 1].group(0), num.group(0))[1:])
            else:
                spans.append((num.group(0), m.start() if i == 0 else num.start(), num.end()))
        emitted: set[str] = set()
        for number, start, end in spans:
            number = number.rstrip(".")
            if number not in emitted:
                emitted.add(number)
                refs.append(SectionRef(number=number, kind=kind, start=start, end=end, text=text[start:end]))
    return refs


def _norm_number(number: str | None) -> str:
    return (number or "").strip().rstrip(".").strip().casefold()


_NUMBER_KEYWORD_RE = re.compile(r"^(part|chapter|section|appendix)\s+(.+)$", re.IGNORECASE)


def _split_number(number: str | None) -> tuple[str | None, str]:
    """A heading number as written -> (keyword kind or None, bare number): "Chapter 2" -> ("chapter", "2")."""
    norm = _norm_number(number)
    m = _NUMBER_KEYWORD_RE.match(norm)
    if m:
        return m.group(1), _norm_number(m.group(2))
    return None, norm


def _title_starts_with(title: str, kind: str | None, number: str) -> bool:
    kw = rf"(?:{kind}|§)\s*" if kind else ""
    pattern = rf"^\s*{kw}{re.escape(number)}(?![\w]|\.\w)"
    return re.match(pattern, _strip_accents(title), re.IGNORECASE) is not None


def resolve_section_ref(ref: SectionRef, outline: Outline) -> str | None:
    """The id of the section ``ref`` points to, or ``None`` (CG-RAG §4.2.2 intra-document edge target).

    Tried in order, the first tier with exactly one section wins (several sections in one tier, as in
    documents whose parts restart their numbering, are ambiguous -> ``None``):

    1. the section's ``number`` equals the ref's, trailing dots ignored ("2.1" = "2.1."), and its keyword,
       if the number has one ("Chapter 4", "Part II"), is the ref's kind;
    2. the title starts with the ref's keyword and number ("Appendix A: Survey instrument", "Chapter 4 --
       Results", "Section 3.2 Data");
    3. the title starts with the bare number ("A.1 Sensor list", "4 Results").
    """
    number = _norm_number(ref.number)
    if not number:
        return None
    sections = [s for s in outline.sections if s.path != "0"]

    def unique(ids: list[str]) -> str | None:
        return ids[0] if len(ids) == 1 else None

    tier1 = []
    for s in sections:
        kw, bare = _split_number(s.number)
        if bare == number and (kw is None or kw == ref.kind):
            tier1.append(s.id)
    if tier1:
        return unique(tier1)
    tier2 = [s.id for s in sections if _title_starts_with(s.title, ref.kind, ref.number.rstrip("."))]
    if tier2:
        return unique(tier2)
    tier3 = [s.id for s in sections if _title_starts_with(s.title, None, ref.number.rstrip("."))]
    return unique(tier3)


# --------------------------------------------------------------------------------------------------
# Reference index: references -> documents
# --------------------------------------------------------------------------------------------------

#: Token-set Jaccard similarity from which a reference title matches a document title.
JACCARD_THRESHOLD = 0.8
_MIN_RAW_TITLE_TOKENS = 4
_MAX_RAW_TITLE_TOKENS = 40


class ReferenceIndex(TitleIndex):
    """A :class:`~stratagraph.text.titles.TitleIndex` that also matches reference titles to documents
    (``CITES``, CG-RAG §4.2), on top of matching entity names to their own pages (``DESCRIBED_BY``).

    Document titles are further indexed by token (a posting list per token) and by token count, so a
    reference is matched with a few dict probes (:meth:`match_reference`).
    """

    def __init__(self, entries: Iterable[tuple[str, str, str, str]] = ()) -> None:
        self._doc_by_norm: dict[str, list[str]] = {}  # documents only
        self._postings: dict[str, set[str]] = {}  # token -> document node ids
        self._doc_lengths: dict[int, int] = {}  # token count of document titles -> how many
        super().__init__(entries)

    def _indexed(self, entry: _Indexed) -> None:
        if entry.kind != "document":
            return
        self._doc_by_norm.setdefault(entry.norm, []).append(entry.node_id)
        for token in entry.tokens:
            self._postings.setdefault(token, set()).add(entry.node_id)
        n = len(entry.norm.split())
        self._doc_lengths[n] = self._doc_lengths.get(n, 0) + 1

    def _forgotten(self, entry: _Indexed) -> None:
        if entry.kind != "document":
            return
        _discard(self._doc_by_norm, entry.norm, entry.node_id)
        for token in entry.tokens:
            posting = self._postings.get(token)
            if posting is not None:
                posting.discard(entry.node_id)
                if not posting:
                    del self._postings[token]
        n = len(entry.norm.split())
        self._doc_lengths[n] -= 1
        if not self._doc_lengths[n]:
            del self._doc_lengths[n]


    # -- references -> documents -------------------------------------------------------------------

    def match_reference(self, ref: Reference, exclude_doc: str | None = None) -> str | None:
        """The document node id ``ref`` cites, or ``None`` (CG-RAG §4.2 inter-document link).

        1. documents whose normalised title equals the reference's normalised title;
        2. else documents whose title has token-set Jaccard similarity >= :data:`JACCARD_THRESHOLD` with it
           (candidates found through the rarest tokens, a prefix filter: a title sharing none of the
           ``|A| - ceil(0.8 |A|) + 1`` rarest tokens cannot reach the threshold);
        3. else, for an entry whose title could not be read, a document title of at least four words found
           verbatim (normalised) inside the entry's text.

        The documents of ``exclude_doc`` (the citing document) never match. Several candidates in a tier are
        narrowed by metadata: a candidate whose year or first author contradicts the reference is dropped,
        then one that agrees on them is preferred, then (tier 2) the one with the highest similarity; a tie
        that metadata does not break gives ``None``.
        """
        norm = normalize_title(ref.title) if ref.title else ""
        if norm:
            exact = [(1.0, e) for e in self._doc_entries(self._doc_by_norm.get(norm, ()), exclude_doc)]
            if exact:
                return self._choose(exact, ref)
            near = self._jaccard_candidates(frozenset(norm.split()), exclude_doc)
            if near:
                return self._choose(near, ref)
        return self._match_in_raw(ref, exclude_doc)

    def _doc_entries(self, node_ids: Iterable[str], exclude_doc: str | None) -> list[_Indexed]:
        out = []
        for node_id in node_ids:
            entry = self._entries[node_id]
            if entry.kind == "document" and (exclude_doc is None or entry.doc_id != exclude_doc):
                out.append(entry)
        return out

    def _jaccard_candidates(self, tokens: frozenset[str], exclude_doc: str | None) -> list[tuple[float, _Indexed]]:
        n = len(tokens)
        if n == 0:
            return []
        need = math.ceil(JACCARD_THRESHOLD * n - 1e-9)
        prefix = n - need + 1
        rarest = sorted(tokens, key=lambda t: (len(self._postings.get(t, ())), t))[:prefix]
        seen: set[str] = set()
        out: list[tuple[float, _Indexed]] = []
        for token in rarest:
            for node_id in self._postings.get(token, ()):
                if node_id in seen:
                    continue
                seen.add(node_id)
                entry = self._entries[node_id]
                if exclude_doc is not None and entry.doc_id == exclude_doc:
                    continue
                m = len(entry.tokens)
                if m < JACCARD_THRESHOLD * n - 1e-9 or n < JACCARD_THRESHOLD * m - 1e-9:
                    continue
                inter = len(tokens & entry.tokens)
                score = inter / (n + m - inter)
                if score >= JACCARD_THRESHOLD - 1e-9:
                    out.append((score, entry))
        return out

    def _match_in_raw(self, ref: Reference, exclude_doc: str | None) -> str | None:
        tokens = normalize_title(_ENTRY_LABEL_RE.sub("", ref.raw, count=1)).split()
        lengths = sorted(n for n in self._doc_lengths if _MIN_RAW_TITLE_TOKENS <= n <= _MAX_RAW_TITLE_TOKENS)
        found: dict[str, tuple[float, _Indexed]] = {}
        for i in range(len(tokens)):
            for n in lengths:
                if i + n > len(tokens):
                    break
                ids = self._doc_by_norm.get(" ".join(tokens[i : i + n]))
                if ids:
                    for entry in self._doc_entries(ids, exclude_doc):
                        found[entry.node_id] = (1.0, entry)
        if not found:
            return None
        # a longer title found inside the entry supersedes the shorter titles it contains
        longest = max(len(e.tokens) for _, e in found.values())
        return self._choose([c for c in found.values() if len(c[1].tokens) == longest], ref)

    @staticmethod
    def _choose(cands: list[tuple[float, _Indexed]], ref: Reference) -> str | None:
        if len(cands) == 1:
            return cands[0][1].node_id
        ref_year = ref.year[:4] if ref.year else None
        ref_author = ref.authors[0] if ref.authors else None

        def agreement(entry: _Indexed) -> int | None:
            score = 0
            for theirs, ours, same in (
                (entry.year, ref_year, lambda a, b: a == b),
                (entry.first_author, ref_author, _surnames_agree),
            ):
                if theirs and ours:
                    if not same(theirs, ours):
                        return None
                    score += 1
            return score

        scored = [(agreement(e), s, e) for s, e in cands]
        kept = [(a, s, e) for a, s, e in scored if a is not None]
        if not kept:
            return None
        best_agreement = max(a for a, _, _ in kept)
        kept = [(a, s, e) for a, s, e in kept if a == best_agreement]
        best_score = max(s for _, s, _ in kept)
        top = [e for _, s, e in kept if s >= best_score - 1e-9]
        return top[0].node_id if len(top) == 1 else None

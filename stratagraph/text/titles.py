"""Title normalisation and the page-title index: text helpers shared by ingestion and retrieval.

Ingestion links entities to the documents and sections whose title names them (``DESCRIBED_BY``) and matches
reference lists to documents (``CITES``, :class:`stratagraph.ingest.citations.ReferenceIndex`); retrieval
links a question's words to the same pages. Both sides compare titles through :func:`normalize_title` /
:func:`title_key` and look pages up in a :class:`TitleIndex`, so this module depends on nothing but the
standard library and pydantic.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

__all__ = [
    "GENERIC_SECTION_DOCS",
    "STRUCTURAL_HEADINGS",
    "TitleIndex",
    "TitleMatch",
    "fold",
    "normalize_title",
    "surname_of",
    "title_index",
    "title_key",
]

class TitleMatch(BaseModel):
    """A document or section whose normalised title equals a looked-up name (:meth:`TitleIndex.lookup`).

    ``generic`` marks a one-word structural title ("Introduction", or a one-word section title that three
    or more documents share): callers drop such matches instead of treating them as an entity's page.
    """

    node_id: str
    doc_id: str
    kind: Literal["document", "section"]
    title: str
    generic: bool


# --------------------------------------------------------------------------------------------------
# Text helpers
# --------------------------------------------------------------------------------------------------

# Letters that NFKD does not decompose into a base letter plus a combining mark.
_EXTRA_FOLD = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "Th",
        "ı": "i",
        "ß": "ss",
    }
)
_APOSTROPHES_RE = re.compile(r"['’ʼ`´]")
_NON_ALNUM_RE = re.compile(r"[\W_]+")
_TRAILING_PAREN_RE = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
_ARTICLES = ("the ", "a ", "an ")


def _strip_accents(text: str) -> str:
    """NFKD without combining marks, plus the few letters NFKD leaves alone ("ø", "ł", "ß")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).translate(_EXTRA_FOLD)


def fold(text: str) -> str:
    """Case- and accent-insensitive spelling (shared with entity resolution)."""
    return _strip_accents(text).casefold()


def normalize_title(s: str) -> str:
    """The comparison form of a title, shared by reference matching and entity pages.

    Accents stripped (NFKD) and case folded; one trailing parenthetical or bracketed qualifier dropped
    ("Taken (film)" -> "taken") unless it is the whole title; apostrophes removed ("Children's" ->
    "childrens"); every other run of punctuation or whitespace collapsed to one space; a leading article
    "the" / "a" / "an" dropped ("The Matrix" -> "matrix") unless it is the whole title.
    """
    text = fold(s)
    without = _TRAILING_PAREN_RE.sub("", text)
    if _NON_ALNUM_RE.sub("", without):
        text = without
    text = _APOSTROPHES_RE.sub("", text)
    text = " ".join(_NON_ALNUM_RE.sub(" ", text).split())
    for article in _ARTICLES:
        if text.startswith(article) and len(text) > len(article):
            text = text[len(article) :]
            break
    return text


def title_key(title: str, kind: Literal["document", "section"]) -> str:
    """The form under which :class:`TitleIndex` stores a title: :func:`normalize_title`, after removing a
    section's heading number ("2.1 Public Safety" -> "public safety", "Chapter 4: Results" -> "results");
    document titles are normalised as they are. Callers comparing page titles with entity names use this so
    that both sides agree with :meth:`TitleIndex.lookup`."""
    return normalize_title(_strip_heading_number(title) if kind == "section" else title)


_YEAR = r"(?:1[5-9]|20)\d\d"
_YEAR_TOKEN = rf"{_YEAR}[a-z]?"
_YEAR_RE = re.compile(rf"(?<![\w\-–])({_YEAR_TOKEN})(?![\w\-–])")

# Words that may start a surname without a capital ("van Beethoven", "de la Cruz").
_PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "da", "di", "du", "del", "della", "la", "le", "ter", "ten", "dos", "das", "op"}
)
_NAME_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_INITIALS_RE = re.compile(r"^(?:[A-Z]\.?[\s\-]?){1,4}$")


def _is_initials(token: str) -> bool:
    """"N.", "N. A.", "P.-J.", "AN" (Vancouver style): initials rather than a name."""
    return bool(_INITIALS_RE.match(_strip_accents(token.strip())))


def surname_of(name: str) -> str:
    """The surname of one written name: "Adaeze Okafor" -> "Okafor", "Okafor N" / "Okafor, N." -> "Okafor",
    "J. R. R. Tolkien" -> "Tolkien", "Ludwig van Beethoven" -> "van Beethoven", "Smith Jr." -> "Smith"."""
    if "," in name:
        head = name.split(",", 1)[0].strip()
        if head:
            return surname_of(head)
    words = [w for w in name.split() if w]
    while len(words) > 1 and words[-1].casefold() in _NAME_SUFFIXES:
        words.pop()
    while len(words) > 1 and _is_initials(words[-1]):
        words.pop()
    while len(words) > 1 and _is_initials(words[0]):
        words.pop(0)
    if not words:
        return name.strip()
    i = len(words) - 1
    while i > 0 and words[i - 1].casefold() in _PARTICLES:
        i -= 1
    return " ".join(words[i:]).strip(".,;:")


_HEADING_NUMBER_RE = re.compile(
    r"^\s*(?:(?:\d+(?:\.\d+)*\.?|[IVXLCDMivxlcdm]+[.)]|[A-Za-z][.)])\s+"
    r"|(?:part|chapter|section|appendix)\s+(?:\d+(?:\.\d+)*|[IVXLCDM]+|[A-Z])\s*[.:)\-–—]?\s+)",
    re.IGNORECASE,
)


def _strip_heading_number(title: str) -> str:
    """"7. References" -> "References", "1.1 Public Safety" -> "Public Safety", "Chapter 4: Stuff" -> "Stuff";
    a title that is nothing but a number is kept."""
    stripped = _HEADING_NUMBER_RE.sub("", title, count=1)
    return stripped if stripped.strip() else title


# --------------------------------------------------------------------------------------------------
# Title index: entity names -> their pages
# --------------------------------------------------------------------------------------------------

#: A one-word section title shared by this many documents is a structural heading, not an entity's page.
GENERIC_SECTION_DOCS = 3
#: One-word headings that structure documents ("Introduction") rather than name an entity (normalised).
STRUCTURAL_HEADINGS: frozenset[str] = frozenset(
    """introduction intro overview summary background results result discussion conclusion conclusions
    method methods methodology materials references reference bibliography appendix appendices preamble
    abstract contents toc notes footnotes endnotes acknowledgements acknowledgments acknowledgement preface
    foreword afterword prologue epilogue index glossary evaluation experiments experiment limitations
    analysis findings recommendations objectives scope purpose definitions terminology synopsis outline
    sources citations contributions implementation miscellaneous errata
    """.split()
)


@dataclass(slots=True)
class _Indexed:
    node_id: str
    title: str
    norm: str
    tokens: frozenset[str]
    doc_id: str
    kind: Literal["document", "section"]
    year: str | None
    first_author: str | None


def _year_of(value: Any) -> str | None:
    if value is None:
        return None
    m = _YEAR_RE.search(str(value))
    return m.group(1)[:4] if m else None


def _title_year(title: str) -> str | None:
    """A year in a title's trailing qualifier: "Taken (2008 film)" -> "2008"."""
    m = re.search(r"[(\[]([^()\[\]]*)[)\]]\s*$", title)
    return _year_of(m.group(1)) if m else None


class TitleIndex:
    """Normalised titles of documents and sections, for finding the page a name is the title of: an
    entity's own page (``DESCRIBED_BY``), a page a question quotes.

    Built incrementally with :meth:`add` (or from ``(node_id, title, doc_id, kind)`` tuples, or by
    :func:`title_index` from stored documents and sections); every structure is a dict or set keyed by
    normalised title, so building is O(total title length) and a lookup costs a few dict probes. Section
    titles lose their heading number first ("2.1 Public Safety" -> "Public Safety"); document titles are
    taken as they are. A subclass that indexes more (reference matching,
    :class:`~stratagraph.ingest.citations.ReferenceIndex`) does so in :meth:`_indexed` / :meth:`_forgotten`.
    """

    def __init__(self, entries: Iterable[tuple[str, str, str, str]] = ()) -> None:
        self._entries: dict[str, _Indexed] = {}
        self._by_norm: dict[str, list[str]] = {}  # all kinds
        self._section_docs: dict[str, dict[str, int]] = {}  # one-word section title -> doc id -> count
        self._longest: int | None = None  # words in the longest normalised title (None: to count again)
        self._long_starts: dict[int, frozenset[str]] = {}  # first words of titles longer than n (cleared on change)
        for node_id, title, doc_id, kind in entries:
            self.add(node_id, title, doc_id, kind)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._entries

    def add(
        self,
        node_id: str,
        title: str,
        doc_id: str,
        kind: Literal["document", "section"],
        *,
        year: str | int | None = None,
        authors: Sequence[str] | None = None,
    ) -> None:
        """Index ``title`` for ``node_id`` (re-adding a node id replaces its entry). ``year`` and ``authors``
        (written names or surnames, first author first) are document metadata used to break ties between
        documents with the same title; without ``year`` a year in the title's trailing qualifier is used."""
        if kind not in ("document", "section"):
            raise ValueError(f"kind must be 'document' or 'section', not {kind!r}")
        if node_id in self._entries:
            self.remove(node_id)
        norm = title_key(title, kind)
        if not norm:
            return
        first_author = surname_of(authors[0]) if authors else None
        entry = _Indexed(
            node_id=node_id,
            title=title,
            norm=norm,
            tokens=frozenset(norm.split()),
            doc_id=doc_id,
            kind=kind,
            year=_year_of(year) or _title_year(title),
            first_author=first_author or None,
        )
        self._entries[node_id] = entry
        self._by_norm.setdefault(norm, []).append(node_id)
        self._longest, self._long_starts = None, {}
        if kind == "section" and len(entry.tokens) == 1:
            docs = self._section_docs.setdefault(norm, {})
            docs[doc_id] = docs.get(doc_id, 0) + 1
        self._indexed(entry)

    def copy(self) -> TitleIndex:
        """An independent index of the same titles (a subclass that indexes more must override this)."""
        if type(self) is not TitleIndex:
            raise TypeError(f"{type(self).__name__} indexes more than a TitleIndex: it must override copy()")
        out = TitleIndex()
        out._entries = dict(self._entries)  # entries are not changed once made
        out._by_norm = {k: list(v) for k, v in self._by_norm.items()}
        out._section_docs = {k: dict(v) for k, v in self._section_docs.items()}
        return out

    def remove(self, node_id: str) -> None:
        """Forget ``node_id`` (no error when it is not indexed)."""
        entry = self._entries.pop(node_id, None)
        if entry is None:
            return
        _discard(self._by_norm, entry.norm, node_id)
        self._longest, self._long_starts = None, {}
        if entry.kind == "section" and len(entry.tokens) == 1:
            docs = self._section_docs.get(entry.norm, {})
            docs[entry.doc_id] = docs.get(entry.doc_id, 1) - 1
            if docs.get(entry.doc_id, 0) <= 0:
                docs.pop(entry.doc_id, None)
            if not docs:
                self._section_docs.pop(entry.norm, None)
        self._forgotten(entry)

    def longest_title_words(self) -> int:
        """Words in the longest indexed title, as normalised (a text may write a title in a few more words:
        an n-gram reader adds slack)."""
        if self._longest is None:
            self._longest = max((len(norm.split()) for norm in self._by_norm), default=0)
        return self._longest

    def long_title_starts(self, longer_than: int) -> frozenset[str]:
        """The first normalised words of the titles of more than ``longer_than`` words: only an n-gram
        opening with one of them can quote such a title."""
        if longer_than not in self._long_starts:
            self._long_starts[longer_than] = frozenset(
                norm.split()[0] for norm in self._by_norm if len(norm.split()) > longer_than
            )
        return self._long_starts[longer_than]

    def _indexed(self, entry: _Indexed) -> None:
        """Called after :meth:`add` stored ``entry`` (a subclass's further structures)."""

    def _forgotten(self, entry: _Indexed) -> None:
        """Called after :meth:`remove` dropped ``entry``."""

    # -- entity names -> pages ---------------------------------------------------------------------

    def is_generic(self, title: str) -> bool:
        """Whether a title is a structural heading rather than a name: one normalised word that is a
        structural heading word (:data:`STRUCTURAL_HEADINGS`) or a section title shared by at least
        :data:`GENERIC_SECTION_DOCS` documents of the index."""
        return self._generic_norm(title_key(title, "section"), "section")

    def _generic_norm(self, norm: str, kind: str) -> bool:
        if not norm or " " in norm:
            return False
        if norm in STRUCTURAL_HEADINGS:
            return True
        return kind == "section" and len(self._section_docs.get(norm, {})) >= GENERIC_SECTION_DOCS

    def lookup(self, name: str) -> list[TitleMatch]:
        """Documents and sections whose normalised title equals ``normalize_title(name)`` (the entity's own
        page, ``DESCRIBED_BY``): "Taken" finds "Taken (film)" and "taken", "Émile Zola" finds "Emile Zola".
        Documents come first, then sections, each in the order added. A one-word match is ``generic`` when
        the word is a structural heading word, and, for a section, also when at least
        :data:`GENERIC_SECTION_DOCS` documents have a section with that title (a document whose whole title
        is such a word, "Paris", stays a page)."""
        norm = normalize_title(name)
        if not norm:
            return []
        entries = [self._entries[i] for i in self._by_norm.get(norm, ())]
        entries.sort(key=lambda e: e.kind != "document")
        return [
            TitleMatch(
                node_id=e.node_id,
                doc_id=e.doc_id,
                kind=e.kind,
                title=e.title,
                generic=self._generic_norm(e.norm, e.kind),
            )
            for e in entries
        ]


def title_index(
    documents: Iterable[tuple[str, Any, Mapping[str, Any] | None]],
    sections: Iterable[tuple[str, Any, str]],
    into: TitleIndex | None = None,
) -> TitleIndex:
    """The titles of stored documents, given as ``(doc_id, title, metadata)``, and sections, given as
    ``(section_id, title, doc_id)``, in a new :class:`TitleIndex`, or added to ``into`` (an index of a
    subclass, such as :class:`~stratagraph.ingest.citations.ReferenceIndex`). A document's ``year`` and
    ``authors`` are read from its metadata; untitled sections are left out."""
    index: TitleIndex = TitleIndex() if into is None else into
    for doc_id, title, metadata in documents:
        _add_document(index, doc_id, title, metadata)
    for section_id, title, doc_id in sections:
        _add_section(index, section_id, title, doc_id)
    return index


#: what :func:`title_index` reads of one page: ``("document", title, metadata)`` or ``("section", title, doc_id)``
PageTitle = tuple[str, Any, Any]


def page_titles(
    documents: Iterable[tuple[str, Any, Mapping[str, Any] | None]], sections: Iterable[tuple[str, Any, str]]
) -> dict[str, PageTitle]:
    """Page id -> what :func:`title_index` reads of it, for :func:`updated_title_index` to compare."""
    out: dict[str, PageTitle] = {d: ("document", t, m) for d, t, m in documents}
    out.update((s, ("section", t, d)) for s, t, d in sections)
    return out


def updated_title_index(previous: TitleIndex, before: Mapping[str, PageTitle], now: Mapping[str, PageTitle]) -> TitleIndex:
    """A copy of ``previous`` (the index of the pages ``before``) with the pages that changed between ``before``
    and ``now`` removed and added again: what :func:`title_index` of ``now`` would be, at the cost of the
    change. ``previous`` is left as it is."""
    index = previous.copy()
    changed = [p for p in before.keys() - now.keys()] + [p for p, value in now.items() if before.get(p) != value]
    norms = {index._entries[p].norm for p in changed if p in index._entries}
    for page in changed:
        if page not in now:
            index.remove(page)
            continue
        kind, title, other = now[page]
        (_add_document if kind == "document" else _add_section)(index, page, title, other)
        if page in index._entries:
            norms.add(index._entries[page].norm)
    for norm in norms & index._by_norm.keys():  # as title_index orders them: documents, then sections, each by id
        index._by_norm[norm].sort(key=lambda p: (index._entries[p].kind != "document", p))
    return index


def _add_document(index: TitleIndex, doc_id: str, title: Any, metadata: Mapping[str, Any] | None) -> None:
    meta = metadata or {}
    year = meta.get("year")
    authors = meta.get("authors")
    index.add(
        doc_id,
        str(title or ""),
        doc_id,
        "document",
        year=str(year) if year is not None else None,
        authors=[str(a) for a in authors] if isinstance(authors, list) else None,
    )


def _add_section(index: TitleIndex, section_id: str, title: Any, doc_id: Any) -> None:
    text = str(title or "")
    if text:
        index.add(section_id, text, str(doc_id), "section")
    else:
        index.remove(section_id)


def _discard(index: dict[str, list[str]], key: str, node_id: str) -> None:
    ids = index.get(key)
    if ids is None:
        return
    try:
        ids.remove(node_id)
    except ValueError:
        return
    if not ids:
        del index[key]

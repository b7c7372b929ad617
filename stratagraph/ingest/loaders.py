"""Document loaders: files and directories to :class:`SourceDocument` blocks in reading order.

The blocks (headings, paragraphs, tables) are what the heading tree (BAG-RAG §3.1 "Structural Node
Extraction", :mod:`stratagraph.ingest.structure`) and the hierarchy-aware chunker are built from.

Formats: ``.txt``, ``.md``/``.markdown``, ``.html``/``.htm``, ``.pdf`` (pypdf), ``.json`` and ``.jsonl``
(one document per record). Headings come from the markup (Markdown ATX / setext, HTML ``h1``-``h6``); in
plain text, PDF text and Markdown without any heading markup, from numbering ("1.2", "IV.", "Chapter 3",
"Part I") with layout cues that keep numbered lists out (see :func:`_plain_blocks`).

Nothing here raises for a bad input: every problem becomes a one-line :class:`LoadIssue` naming the file.
"""

from __future__ import annotations

import codecs
import datetime as dt
import fnmatch
import io
import json
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import charset_normalizer
import yaml
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import CData, Comment, Declaration, Doctype, ProcessingInstruction

from stratagraph import ids
from stratagraph.config import Settings
from stratagraph.ingest.structure import STYLE_CHAPTER, STYLE_DECIMAL, STYLE_PART, STYLE_ROMAN
from stratagraph.schema import Block, LoadIssue, LoadResult, SourceDocument, Table

__all__ = ["FORMATS", "load_paths", "load_file", "filename_metadata"]

#: file extension -> ``SourceDocument.format``
FORMATS: dict[str, str] = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".json": "json",
    ".jsonl": "jsonl",
}

_SNIFF_BYTES = 8192


class _LoadError(Exception):
    """A problem that stops one file (or record) from loading; its message is the LoadIssue message."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------------


def load_paths(
    paths: Sequence[Path | str],
    settings: Settings,
    base: Path | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> LoadResult:
    """Load files and directories (recursively, in sorted order) into documents and issues.

    Inside directories, hidden entries (names starting with '.') and unsupported extensions are skipped, and
    ``include`` / ``exclude`` glob patterns are matched (fnmatch) against the path relative to the directory
    argument and against the file name. A file given explicitly is always loaded (an unsupported extension
    is then an error). Document ids come from the path relative to ``base`` (default: the working directory),
    see :func:`stratagraph.ids.source_key`.
    """
    base_dir = Path(base) if base is not None else Path.cwd()
    result = LoadResult()
    seen: set[Path] = set()
    for given in paths:
        arg = Path(given)
        label = str(given)
        try:
            exists, is_dir = arg.exists(), arg.is_dir()
        except OSError as exc:
            result.issues.append(LoadIssue(source=label, message=f"cannot access path: {_one_line(exc)}"))
            continue
        if not exists:
            result.issues.append(LoadIssue(source=label, message="no such file or directory"))
            continue
        if is_dir:
            files = _walk(arg, include, exclude, result.issues, label)
            if not files:
                result.issues.append(
                    LoadIssue(source=label, message="no supported files found in directory", severity="warning")
                )
            for file in files:
                _load_into(file, arg, base_dir, settings, result, seen, explicit=False)
        else:
            _load_into(arg, arg, base_dir, settings, result, seen, explicit=True)
    return result


def _matches(rel: str, name: str, patterns: Sequence[str]) -> bool:
    for pat in patterns:
        cands = [pat]
        if pat.startswith("**/"):
            cands.append(pat[3:])
        if any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in cands):
            return True
    return False


def _walk(
    root: Path, include: Sequence[str], exclude: Sequence[str], issues: list[LoadIssue], label: str
) -> list[Path]:
    """Supported, non-hidden files under ``root`` that pass the filters, sorted by relative path."""
    found: list[tuple[tuple[str, ...], Path]] = []

    def on_error(exc: OSError) -> None:
        where = exc.filename or label
        issues.append(LoadIssue(source=str(where), message=f"cannot read directory: {exc.strerror or exc}"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        here = Path(dirpath)
        rel_dir = here.relative_to(root)
        keep = []
        for d in sorted(dirnames):
            rel = (rel_dir / d).as_posix()
            if d.startswith(".") or (exclude and _matches(rel, d, exclude)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            if name.startswith(".") or Path(name).suffix.lower() not in FORMATS:
                continue
            rel_path = rel_dir / name
            rel = rel_path.as_posix()
            if include and not _matches(rel, name, include):
                continue
            if exclude and _matches(rel, name, exclude):
                continue
            found.append((rel_path.parts, here / name))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found]


def _key(file: Path, root: Path, base: Path) -> str:
    """The relative source key of ``file`` (see :func:`ids.source_key`), robust to odd symlinks."""
    try:
        return ids.source_key(file, root=root, base=base)
    except (ValueError, OSError):
        file_abs, root_abs = file.absolute(), root.absolute()
        for anchor in (base.absolute(), root_abs.parent):
            try:
                return file_abs.relative_to(anchor).as_posix()
            except ValueError:
                continue
        return file.name


def _load_into(
    file: Path,
    root: Path,
    base: Path,
    settings: Settings,
    result: LoadResult,
    seen: set[Path],
    explicit: bool,
) -> None:
    key = _key(file, root, base)
    fmt = FORMATS.get(file.suffix.lower())
    if fmt is None:
        if explicit:
            supported = ", ".join(sorted(FORMATS))
            shown = file.suffix or "(none)"
            message = f"unsupported file type '{shown}' (supported: {supported})"
            result.issues.append(LoadIssue(source=key, message=message))
        return
    try:
        resolved = file.resolve()
    except OSError:
        resolved = file.absolute()
    if resolved in seen:
        return
    seen.add(resolved)
    docs, issues = load_file(file, key, settings, fmt=fmt)
    result.documents.extend(docs)
    result.issues.extend(issues)


def load_file(
    file: Path, key: str, settings: Settings, fmt: str | None = None
) -> tuple[list[SourceDocument], list[LoadIssue]]:
    """Load one file under the source key ``key`` (its relative path); never raises for bad content."""
    fmt = fmt or FORMATS.get(file.suffix.lower())
    if fmt is None:
        return [], [LoadIssue(source=key, message=f"unsupported file type '{file.suffix or '(none)'}'")]
    try:
        data = _read(file, settings.max_file_bytes)
        return _PARSERS[fmt](file, key, data, settings)
    except _LoadError as exc:
        return [], [LoadIssue(source=key, message=_one_line(str(exc)))]
    except Exception as exc:  # a parser bug or an exotic input must not stop the other files
        return [], [LoadIssue(source=key, message=_one_line(f"cannot load: {type(exc).__name__}: {exc}"))]


def _read(file: Path, limit: int) -> bytes:
    try:
        if not file.is_file():
            raise _LoadError("not a regular file")
        size = file.stat().st_size
        if size > limit:
            raise _LoadError(f"file too large: {size} bytes exceeds the limit of {limit} bytes (max_file_bytes)")
        with open(file, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise _LoadError(f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise _LoadError(f"file too large: more than {limit} bytes (max_file_bytes)")
    if not data.strip():
        raise _LoadError("empty file")
    return data


# --------------------------------------------------------------------------------------------------
# Decoding and metadata
# --------------------------------------------------------------------------------------------------

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_BINARY = "binary or undecodable content"
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _is_junk(ch: str) -> bool:
    """A control character (other than whitespace) or the replacement character."""
    return ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in "\n\r\t\f\v")


def _decode(data: bytes) -> tuple[str, str | None]:
    """Text of ``data`` and, when it was not UTF-8, the encoding used (the caller warns about it)."""
    text: str | None = None
    encoding: str | None = None
    if data.startswith(codecs.BOM_UTF8):
        try:
            text = data[len(codecs.BOM_UTF8) :].decode("utf-8")
        except UnicodeDecodeError:
            text = None
    else:
        for bom, enc in _BOMS:
            if data.startswith(bom):
                try:
                    text, encoding = data.decode(enc), enc
                except UnicodeDecodeError as exc:
                    raise _LoadError(_BINARY) from exc
                break
    if text is None:
        if b"\x00" in data[:_SNIFF_BYTES]:
            raise _LoadError(_BINARY)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            best = charset_normalizer.from_bytes(data).best()
            if best is None:
                raise _LoadError(_BINARY) from None
            text, encoding = str(best), best.encoding
    sample = text[:_SNIFF_BYTES]
    bad = sum(1 for ch in sample if _is_junk(ch))
    if sample and bad > 0.3 * len(sample):
        raise _LoadError(_BINARY)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    if _CONTROL_RE.search(text):
        text = _CONTROL_RE.sub("", text)
    if not text.strip():
        raise _LoadError("empty file")
    return text, encoding


def _jsonable(value: Any) -> Any:
    """A JSON-serialisable copy of ``value`` (dates as ISO strings, unknown objects as ``str``)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set) else items
    return str(value)


_FISCAL_RE = re.compile(r"(?<![a-z])fy[\s_\-]?((?:19|20)\d{2}|\d{2})(?!\d)", re.IGNORECASE)
_YEAR_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
_QUARTER_RE = re.compile(r"(?<![a-z])q([1-4])(?!\d)|(?<![a-z0-9])([1-4])q(?![a-z])", re.IGNORECASE)


def filename_metadata(name: str) -> dict[str, Any]:
    """``year`` (19xx/20xx), ``quarter`` ("Q1".."Q4", also written "q3" or "3Q") and ``fiscal_year``
    ("FY2024", "FY24") found in a file name (HybridRAG's metadata filters)."""
    meta: dict[str, Any] = {}
    stem = Path(name).stem
    fiscal = _FISCAL_RE.search(stem)
    if fiscal:
        fy = fiscal.group(1)
        meta["fiscal_year"] = int(fy) if len(fy) == 4 else 2000 + int(fy)
    rest = _FISCAL_RE.sub(" ", stem)
    year = _YEAR_RE.search(rest)
    if year:
        meta["year"] = int(year.group(1))
    quarter = _QUARTER_RE.search(rest)
    if quarter:
        meta["quarter"] = f"Q{quarter.group(1) or quarter.group(2)}"
    return meta


_FM_KEY_RE = re.compile(r"^[^\s:#\-][^:]*:(\s|$)")


def _front_matter(text: str) -> tuple[dict[str, Any] | None, str, int]:
    """Split YAML front matter (``---`` ... ``---`` at the top) from ``text``: (metadata, body, lines used).

    A leading ``---`` block that does not look like ``key: value`` pairs is left alone (a rule or a banner);
    one that does but is not valid YAML mapping is an error for the file."""
    if not text.startswith("---"):
        return None, text, 0
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None, text, 0
    close = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if close is None:
        return None, text, 0
    block = "\n".join(lines[1:close])
    first = next((ln for ln in lines[1:close] if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first is not None and not _FM_KEY_RE.match(first):
        return None, text, 0
    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        raise _LoadError(f"malformed YAML front matter: {_one_line(exc)}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _LoadError("malformed YAML front matter: expected 'key: value' pairs")
    return _jsonable(data), "\n".join(lines[close + 1 :]), close + 1


def _document(
    key: str,
    fmt: str,
    title: str,
    blocks: list[Block],
    metadata: dict[str, Any],
    warnings: list[str],
    record: str | None = None,
) -> SourceDocument:
    return SourceDocument(
        doc_id=ids.document_id(key, record),
        source=key if record is None else f"{key}:{record}",
        title=title,
        format=fmt,
        blocks=blocks,
        metadata=_jsonable(metadata),
        warnings=list(warnings),
    )


def _decode_with_warning(key: str, data: bytes) -> tuple[str, list[str], list[LoadIssue]]:
    text, encoding = _decode(data)
    if encoding is None:
        return text, [], []
    message = f"not valid UTF-8; decoded as {encoding} (detected)"
    return text, [message], [LoadIssue(source=key, message=message, severity="warning")]


def _first_title(blocks: list[Block], markup: bool) -> str | None:
    if not markup:
        return None
    return next((b.text.strip() for b in blocks if b.kind == "heading" and b.level == 1 and b.text.strip()), None)


# --------------------------------------------------------------------------------------------------
# Heading numbers
# --------------------------------------------------------------------------------------------------

_ROMAN_VALID = re.compile(r"^(?=[IVXLCDM])M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_PART_CHAPTER_RE = re.compile(
    rf"^(Part|PART|Chapter|CHAPTER)[ \t]+(\d{{1,3}}|[IVXLCDM]{{1,7}}|[A-Z]|(?i:{_NUMBER_WORDS}))\b"
    r"(?:[ \t]*[.:\-\u2013\u2014][ \t]*|[ \t]+|$)(.*)$"
)
_MD_DECIMAL_RE = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)\.?(?:\)|(?=\s)|$)")
_MD_ROMAN_RE = re.compile(r"^([IVXLCDM]{1,7})[.):](?=\s|$)")


def _heading_number(text: str) -> str | None:
    """The numbering written at the start of a heading ("3.2", "IV", "Chapter 2", "Part I"), if any."""
    s = text.strip()
    m = _PART_CHAPTER_RE.match(s)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    m = _MD_DECIMAL_RE.match(s)
    if m:
        return m.group(1)
    m = _MD_ROMAN_RE.match(s)
    if m and _ROMAN_VALID.match(m.group(1)):
        return m.group(1)
    return None


# --------------------------------------------------------------------------------------------------
# Plain text: numbered headings with layout cues
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Cand:
    style: int
    depth: int
    number: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.style, self.depth)


_PLAIN_DECIMAL_RE = re.compile(r"^(\d{1,2}(?:\.\d{1,3})*)(\.?)[ \t]+(\S.*)$")
_PLAIN_ROMAN_RE = re.compile(r"^([IVX]{1,6})\.[ \t]+(\S.*)$")
_LIST_MARKER_RE = re.compile(
    r"^\s*(?:(\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)])"  # 1.2 / 1. / 1)
    r"|([IVXLCDMivxlcdm]{1,7})[.)]|[A-Za-z][.)]|\([0-9A-Za-z]{1,4}\)"  # iv. / a) / (a)
    r"|[-*+\u2022\u2023\u25e6\u2043\u2013])(?:\s|$)"  # bullets
)
_SENTENCE_INSIDE_RE = re.compile(r"[a-z]{2}[.!?;]\s")
_TOC_LEADER_RE = re.compile(r"(?:\.{3,}|\u2026|\s{3,}|\t)\s*\d+\s*$")
_RULE_RE = re.compile(r"^\s*([-=_*~#])\1{2,}\s*$")
_HEADING_MAX_WORDS = 12
_HEADING_MAX_CHARS = 100


def _title_like(rest: str) -> bool:
    """Heading text after the number: starts with a capital, short, no sentence punctuation at the end."""
    rest = rest.strip()
    if not rest:
        return False
    ch = rest[0]
    if not (ch.isupper() or (ch.isalpha() and not ch.islower())):
        return False
    if len(rest.split()) > _HEADING_MAX_WORDS or rest[-1] in ".;,:":
        return False
    if _SENTENCE_INSIDE_RE.search(rest) or _TOC_LEADER_RE.search(rest):
        return False
    return True


def _plain_candidate(line: str, allow_bare: bool) -> _Cand | None:
    """A numbered heading candidate from the line alone (context cues are checked by the caller)."""
    if len(line) - len(line.lstrip()) > 3:
        return None
    s = line.strip()
    if len(s) > _HEADING_MAX_CHARS:
        return None
    m = _PART_CHAPTER_RE.match(s)
    if m:
        rest = m.group(3)
        if rest and not _title_like(rest):
            return None
        style = STYLE_PART if m.group(1).lower() == "part" else STYLE_CHAPTER
        return _Cand(style, 1, f"{m.group(1)} {m.group(2)}")
    m = _PLAIN_ROMAN_RE.match(s)
    if m and _ROMAN_VALID.match(m.group(1)) and _title_like(m.group(2)):
        return _Cand(STYLE_ROMAN, 1, m.group(1))
    m = _PLAIN_DECIMAL_RE.match(s)
    if m and _title_like(m.group(3)):
        number, dot = m.group(1), m.group(2)
        if "." not in number and not dot and not allow_bare:
            return None
        return _Cand(STYLE_DECIMAL, number.count(".") + 1, number)
    return None


_BULLET = (-2, 0)


def _marker_key(line: str) -> tuple[int, int] | None:
    """(style, depth) of the list marker / numbering at the start of ``line``: (-1, 0) for letters like "a)",
    ``_BULLET`` for bullets, ``None`` for none."""
    m = _LIST_MARKER_RE.match(line)
    if not m:
        return None
    if m.group(1):
        return (STYLE_DECIMAL, m.group(1).rstrip(".)").count(".") + 1)
    if m.group(2) and _ROMAN_VALID.match(m.group(2).upper()):
        return (STYLE_ROMAN, 1)
    if m.group(0).strip()[0] in "-*+\u2022\u2023\u25e6\u2043\u2013":
        return _BULLET
    return (-1, 0)


def _is_child(parent: _Cand, line: str) -> bool:
    """True if ``line`` starts with a deeper number of ``parent`` ("3" -> "3.1"), or any deeper style."""
    s = line.strip()
    if parent.style == STYLE_DECIMAL:
        return s.startswith(parent.number.rstrip(".") + ".") and bool(re.match(r"^\d", s[len(parent.number) + 1 :]))
    cand = _plain_candidate(s, allow_bare=True)
    return cand is not None and cand.key > parent.key


def _ordinal(number: str) -> tuple[str, int] | None:
    """(prefix, last ordinal) of a number as written: "3.2" -> ("3.", 2), "IV" -> ("", 4), "Part 2" -> ("Part ", 2)."""
    head, _, last = number.rstrip(".").rpartition(" ") if " " in number else ("", "", number.rstrip("."))
    prefix = head + " " if head else ""
    if "." in last:
        pre, _, tail = last.rpartition(".")
        prefix, last = prefix + pre + ".", tail
    if last.isdigit():
        return prefix, int(last)
    if _ROMAN_VALID.match(last):
        values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        total = 0
        for ch, nxt in zip(last, [*last[1:], ""], strict=True):
            v = values[ch]
            total += -v if nxt and values[nxt] > v else v
        return prefix, total
    return None


def _continues(a: str, b: str) -> bool:
    """True if numbering ``b`` is the one right after ``a`` ("1." -> "2.", "3.1" -> "3.2", "II" -> "III")."""
    oa, ob = _ordinal(a), _ordinal(b)
    return oa is not None and ob is not None and oa[0] == ob[0] and ob[1] == oa[1] + 1


def _plain_blocks(lines: list[tuple[int, str]], pdf: bool) -> list[Block]:
    """Blocks of plain text: numbered headings and blank-line separated paragraphs.

    A numbered line is a heading only when it reads like one and stands alone: short (at most 12 words,
    100 characters), no sentence punctuation at the end, a capital letter after the number, preceded by a
    blank line (in PDF text, which has no blank lines, by the end of a sentence or another heading), and not
    followed by another numbered line. Numbered lines that run on (consecutive lines, items of one
    paragraph, a run introduced by ':' or siblings with nothing between them, like a table of contents) are
    list items, not headings. Heading ``level`` here is the rank code ``16 * style + depth`` (the caller
    compresses it into 1..k).
    """
    n = len(lines)
    blank = [not text.strip() or bool(_RULE_RE.match(text)) for _, text in lines]
    cands: dict[int, _Cand] = {}
    for i, (_, text) in enumerate(lines):
        if blank[i]:
            continue
        cand = _plain_candidate(text, allow_bare=pdf)
        if cand is None:
            continue
        prev_ok = i == 0 or blank[i - 1] or (i - 1) in cands
        if not prev_ok and pdf:
            prev = lines[i - 1][1].rstrip()
            prev_ok = prev.endswith((".", "!", "?"))
        if not prev_ok:
            continue
        if i + 1 < n and not blank[i + 1]:
            nxt = lines[i + 1][1]
            marker = _marker_key(nxt)
            if marker is not None and marker != _BULLET and not _is_child(cand, nxt):
                continue
            if not pdf and nxt[:1].isspace() and not text[:1].isspace():
                continue  # an indented continuation: a wrapped list item
        cands[i] = cand

    demoted: set[int] = set()
    order = sorted(cands)
    for i in order:
        cand = cands[i]
        # a paragraph whose lines include a sibling number is a list (not in PDF text: no blank lines there)
        if not pdf:
            j = i + 1
            while j < n and not blank[j]:
                if _marker_key(lines[j][1]) == cand.key:
                    demoted.add(i)
                    break
                j += 1
        # introduced by "...:" -> a list
        j = i - 1
        while j >= 0 and blank[j]:
            j -= 1
        if j >= 0 and j not in cands and lines[j][1].rstrip().endswith(":"):
            demoted.add(i)
    # Runs of candidates with nothing but blank lines between them. A heading is followed by its content or by
    # a deeper heading (Part > Chapter > 1.1); one followed directly by a sibling or an uncle is an empty
    # entry: a list item or a table-of-contents line. Everything up to the last such step is demoted, and
    # the next one too when it merely continues the same numbering ("2." after "1.").
    run: list[int] = []

    def close_run() -> None:
        last = max((k for k in range(len(run) - 1) if cands[run[k + 1]].key <= cands[run[k]].key), default=None)
        if last is None:
            return
        demoted.update(run[: last + 1])
        a, b = cands[run[last]], cands[run[last + 1]]
        if a.key == b.key and _continues(a.number, b.number):
            demoted.add(run[last + 1])

    for i in order:
        if run and all(blank[j] for j in range(run[-1] + 1, i)):
            run.append(i)
        else:
            close_run()
            run = [i]
    close_run()

    blocks: list[Block] = []
    para: list[tuple[int, str]] = []

    def flush() -> None:
        if para:
            text = "\n".join(t.strip() for _, t in para).strip()
            if text:
                blocks.append(Block(kind="paragraph", text=text, line=para[0][0]))
            para.clear()

    for i, (lineno, text) in enumerate(lines):
        if i in cands and i not in demoted:
            flush()
            cand = cands[i]
            blocks.append(
                Block(
                    kind="heading",
                    text=" ".join(text.split()),
                    level=16 * cand.style + cand.depth,
                    number=cand.number,
                    line=lineno,
                )
            )
        elif blank[i]:
            flush()
        else:
            para.append((lineno, text))
    flush()
    return blocks


def _compress_levels(blocks: list[Block]) -> None:
    """Map the rank codes of plain-text headings onto 1..k (keeping their order)."""
    levels = sorted({b.level for b in blocks if b.kind == "heading" and b.level is not None})
    rank = {lvl: i + 1 for i, lvl in enumerate(levels)}
    for b in blocks:
        if b.kind == "heading" and b.level is not None:
            b.level = rank[b.level]


# --------------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------------

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HR_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_CAPTION_RE = re.compile(r"^(?:table|tab\.)\s+[A-Za-z0-9][\w.\-]*(?:\s*[:.\-\u2013\u2014]\s*|\s+)\S", re.IGNORECASE)
_NOT_SETEXT_RE = re.compile(r"^\s*(?:[-*+>]\s|\d{1,9}[.)]\s|\|)")


def _split_cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s)]


def _caption_text(line: str) -> str | None:
    s = line.strip().strip("*_").strip()
    return s if len(s) <= 200 and _CAPTION_RE.match(s) else None


def _make_table(header: list[str], rows: list[list[str]], caption: str | None) -> Table | None:
    width = max([len(header), *(len(r) for r in rows)]) if (header or rows) else 0
    rows = [r + [""] * (width - len(r)) for r in rows if any(c.strip() for c in r)]
    header = header + [""] * (width - len(header))
    if not any(h.strip() for h in header) and not rows:
        return None
    return Table(header=header, rows=rows, caption=caption or None)


def _markdown_blocks(text: str, line0: int) -> tuple[list[Block], bool]:
    """Markdown to blocks: ATX / setext headings, fenced code, GFM pipe tables, paragraphs.

    Without any heading markup, the text regions are read with the plain-text numbering rules."""
    lines = text.split("\n")
    n = len(lines)
    # segments in reading order: ("text", [(lineno, line), ...]) or ("block", Block)
    segments: list[tuple[str, Any]] = []
    region: list[tuple[int, str]] = []
    has_headings = False

    def end_region() -> None:
        nonlocal region
        if region:
            segments.append(("text", region))
            region = []

    i = 0
    while i < n:
        line = lines[i]
        lineno = line0 + i + 1
        fence = _FENCE_RE.match(line)
        if fence:
            end_region()
            mark = fence.group(2)
            body: list[str] = []
            i += 1
            while i < n:
                close = lines[i].strip()
                if close.startswith(mark[0] * len(mark)) and not close.strip(mark[0]):
                    break
                body.append(lines[i])
                i += 1
            code = "\n".join(body).strip("\n")
            if code.strip():
                segments.append(("block", Block(kind="paragraph", text=code, line=lineno)))
            i += 1
            continue
        atx = _ATX_RE.match(line)
        if atx:
            end_region()
            content = _ATX_CLOSE_RE.sub("", atx.group(2) or "").strip()
            if content:
                has_headings = True
                segments.append(
                    (
                        "block",
                        Block(
                            kind="heading",
                            text=content,
                            level=len(atx.group(1)),
                            number=_heading_number(content),
                            line=lineno,
                        ),
                    )
                )
            i += 1
            continue
        if "|" in line and i + 1 < n and "|" in lines[i + 1] and _TABLE_SEP_RE.match(lines[i + 1]):
            header = _split_cells(line)
            if len(_split_cells(lines[i + 1])) == len(header):
                caption = None
                if region and region[-1][1].strip():
                    caption = _caption_text(region[-1][1])
                    if caption:
                        region.pop()
                else:  # "Table 2: ..." as its own paragraph just before (blank line between)
                    k = len(region) - 1
                    while k >= 0 and not region[k][1].strip():
                        k -= 1
                    if k >= 0 and (k == 0 or not region[k - 1][1].strip()) and _caption_text(region[k][1]):
                        caption = _caption_text(region[k][1])
                        region = region[:k]
                end_region()
                rows: list[list[str]] = []
                i += 2
                while i < n and lines[i].strip() and "|" in lines[i]:
                    rows.append(_split_cells(lines[i])[: len(header)])
                    i += 1
                table = _make_table(header, rows, caption)
                if table:
                    segments.append(("block", Block(kind="table", table=table, line=lineno)))
                continue
        setext = _SETEXT_RE.match(line)
        if setext and region and region[-1][1].strip() and (len(region) == 1 or not region[-2][1].strip()):
            prev_no, prev = region[-1]
            if not _NOT_SETEXT_RE.match(prev) and not _ATX_RE.match(prev):
                region.pop()
                end_region()
                content = prev.strip()
                has_headings = True
                level = 1 if setext.group(1).startswith("=") else 2
                segments.append(
                    (
                        "block",
                        Block(kind="heading", text=content, level=level, number=_heading_number(content), line=prev_no),
                    )
                )
                i += 1
                continue
        if _HR_RE.match(line):
            region.append((lineno, ""))  # a thematic break separates paragraphs
            i += 1
            continue
        region.append((lineno, line))
        i += 1
    end_region()

    blocks: list[Block] = []
    for kind, payload in segments:
        if kind == "block":
            blocks.append(payload)
        elif has_headings:
            blocks.extend(_paragraphs(payload))
        else:
            blocks.extend(_plain_blocks(payload, pdf=False))
    if not has_headings:
        _compress_levels(blocks)
    return blocks, has_headings


def _paragraphs(lines: list[tuple[int, str]]) -> list[Block]:
    """Blank-line separated paragraphs (no heading detection)."""
    out: list[Block] = []
    cur: list[tuple[int, str]] = []
    for lineno, text in [*lines, (0, "")]:
        if text.strip():
            cur.append((lineno, text.rstrip()))
        elif cur:
            body = "\n".join(t for _, t in cur).strip()
            if body:
                out.append(Block(kind="paragraph", text=body, line=cur[0][0]))
            cur = []
    return out


# --------------------------------------------------------------------------------------------------
# Format parsers: (file, key, bytes, settings) -> (documents, issues)
# --------------------------------------------------------------------------------------------------

_Parsed = tuple[list[SourceDocument], list[LoadIssue]]


def _parse_text_like(file: Path, key: str, data: bytes, settings: Settings, fmt: str) -> _Parsed:
    text, warnings, issues = _decode_with_warning(key, data)
    front, body, offset = _front_matter(text)
    if not body.strip():
        raise _LoadError("empty file (front matter only)" if front is not None else "empty file")
    lines = body.split("\n")
    if fmt == "md":
        blocks, markup = _markdown_blocks(body, offset)
    else:
        blocks = _plain_blocks([(offset + i + 1, ln) for i, ln in enumerate(lines)], pdf=False)
        _compress_levels(blocks)
        markup = False
    metadata = {**filename_metadata(file.name), **(front or {})}
    title = _str_title((front or {}).get("title")) or _first_title(blocks, markup) or file.stem
    return [_document(key, fmt, title, blocks, metadata, warnings)], issues


def _str_title(value: Any) -> str | None:
    if value is None:
        return None
    s = " ".join(str(value).split())
    return s or None


def _parse_txt(file: Path, key: str, data: bytes, settings: Settings) -> _Parsed:
    return _parse_text_like(file, key, data, settings, "txt")


def _parse_md(file: Path, key: str, data: bytes, settings: Settings) -> _Parsed:
    return _parse_text_like(file, key, data, settings, "md")


def _drop_running_lines(pages: list[str], edge: int = 2) -> list[str]:
    """Pages without their running headers and footers: lines among the first / last ``edge`` lines of a page
    that recur (digits ignored, so page numbers do not matter) on at least half of the pages (3 or more)."""
    if len(pages) < 3:
        return pages
    lines = [p.split("\n") for p in pages]

    def norm(line: str) -> str:
        return re.sub(r"\d+", "#", " ".join(line.split()))

    def edges(page: list[str]) -> set[int]:
        filled = [i for i, ln in enumerate(page) if ln.strip()]
        k = edge if len(filled) >= 2 * edge + 2 else 1
        return set(filled[:k] + filled[-k:])

    page_edges = [edges(page) for page in lines]
    counts: dict[str, int] = {}
    for page, at in zip(lines, page_edges, strict=True):
        for key in {norm(page[i]) for i in at}:
            counts[key] = counts.get(key, 0) + 1
    running = {k for k, c in counts.items() if c >= max(3, (len(pages) + 1) // 2)}
    if not running:
        return pages
    return [
        "\n".join(ln for i, ln in enumerate(page) if not (i in at and norm(ln) in running))
        for page, at in zip(lines, page_edges, strict=True)
    ]


def _parse_pdf(file: Path, key: str, data: bytes, settings: Settings) -> _Parsed:
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise _LoadError("encrypted PDF (password required)")
        pages = [(page.extract_text() or "") for page in reader.pages]
    except _LoadError:
        raise
    except Exception as exc:
        raise _LoadError(f"cannot parse PDF: {_one_line(exc) or type(exc).__name__}") from exc
    pages = [p.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n") for p in pages]
    text = "\n\n".join(_drop_running_lines(pages))
    if not text.strip():
        raise _LoadError("no extractable text in PDF (scanned images?)")
    blocks = _plain_blocks([(i + 1, ln) for i, ln in enumerate(text.split("\n"))], pdf=True)
    _compress_levels(blocks)
    for b in blocks:
        b.line = None  # lines of extracted text are not lines of the file
    return [_document(key, "pdf", file.stem, blocks, filename_metadata(file.name), [])], []


# HTML --------------------------------------------------------------------------------------------

_HTML_DROP = {"script", "style", "nav", "noscript", "template", "head", "title", "svg", "iframe", "object"}
_HTML_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_HTML_TEXT = {"p", "li", "pre", "blockquote", "dd", "dt", "figcaption", "address", "summary"}
_HTML_INLINE = {
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "font", "i", "img", "ins",
    "kbd", "label", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
    "tt", "u", "var", "wbr", "big", "nobr", "math",
}  # fmt: skip
_HTML_INLINE_OK = _HTML_INLINE | {"br"}
_SKIP_STRINGS = (Comment, Doctype, Declaration, ProcessingInstruction)


def _html_text(el: Tag, pre: bool = False) -> str:
    """Visible text of ``el``: HTML whitespace collapsed, line breaks at ``br`` and block elements."""
    out: list[str] = []

    def walk(node: Tag, in_pre: bool) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if isinstance(child, _SKIP_STRINGS):
                    continue
                s = str(child)
                out.append(s if in_pre else re.sub(r"\s+", " ", s))
            elif isinstance(child, Tag):
                if child.name in _HTML_DROP:
                    continue
                if child.name == "br":
                    out.append("\n")
                elif child.name in _HTML_INLINE:
                    walk(child, in_pre)
                else:
                    out.append("\n")
                    walk(child, in_pre or child.name == "pre")
                    out.append("\n")

    walk(el, pre)
    raw = "".join(out)
    if pre:
        return raw.strip("\n").rstrip()
    return "\n".join(ln for ln in (" ".join(x.split()) for x in raw.split("\n")) if ln)


def _html_table(tbl: Tag) -> Table | None:
    header: list[str] | None = None
    rows: list[list[str]] = []
    for tr in tbl.find_all("tr"):
        if tr.find_parent("table") is not tbl:
            continue
        cells = tr.find_all(["th", "td"], recursive=False)
        if not cells:
            continue
        texts: list[str] = []
        for cell in cells:
            value = " ".join(_html_text(cell).split())
            try:
                span = max(1, min(int(str(cell.get("colspan") or 1)), 64))
            except ValueError:
                span = 1
            texts.extend([value] * span)
        in_head = tr.parent is not None and tr.parent.name == "thead"
        all_th = all(c.name == "th" for c in cells)
        if not rows and (in_head or all_th):
            if header is None:
                header = texts
            else:  # a second header row: merge it into the first, column by column
                width = max(len(header), len(texts))
                top, sub = header + [""] * (width - len(header)), texts + [""] * (width - len(texts))
                header = [" ".join(dict.fromkeys(x for x in (a, b) if x)) for a, b in zip(top, sub, strict=True)]
            continue
        rows.append(texts)
    if header is None:
        if not rows:
            return None
        header = rows.pop(0)
    cap = tbl.find("caption")
    caption = " ".join(_html_text(cap).split()) if isinstance(cap, Tag) else None
    return _make_table(header, rows, caption)


def _html_blocks(root: Tag) -> list[Block]:
    blocks: list[Block] = []
    buf: list[str] = []

    def flush() -> None:
        text = "\n".join(ln for ln in (" ".join(x.split()) for x in "".join(buf).split("\n")) if ln)
        if text:
            blocks.append(Block(kind="paragraph", text=text))
        buf.clear()

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if not isinstance(child, _SKIP_STRINGS) and not isinstance(child, CData):
                    buf.append(re.sub(r"\s+", " ", str(child)))
                continue
            if not isinstance(child, Tag) or child.name in _HTML_DROP:
                continue
            name = child.name
            if name in _HTML_HEADINGS:
                flush()
                text = " ".join(_html_text(child).split())
                if text:
                    blocks.append(Block(kind="heading", text=text, level=int(name[1]), number=_heading_number(text)))
            elif name == "table":
                flush()
                table = _html_table(child)
                if table is not None:
                    blocks.append(Block(kind="table", table=table))
            elif name in _HTML_TEXT:
                flush()
                text = _html_text(child, pre=name == "pre")
                if text.strip():
                    blocks.append(Block(kind="paragraph", text=text))
            elif name == "br":
                buf.append("\n")
            elif name in _HTML_INLINE and child.find(lambda t: t.name not in _HTML_INLINE_OK) is None:
                buf.append(_html_text(child).replace("\n", " "))
            else:
                flush()
                walk(child)
                flush()

    walk(root)
    flush()
    return blocks


def _parse_html(file: Path, key: str, data: bytes, settings: Settings) -> _Parsed:
    text, warnings, issues = _decode_with_warning(key, data)
    soup = BeautifulSoup(text, "html.parser")
    title_tag = soup.find("title")
    html_title = _str_title(title_tag.get_text()) if isinstance(title_tag, Tag) else None
    root = soup.body if isinstance(soup.body, Tag) else soup
    blocks = _html_blocks(root)
    if not any(b.kind == "table" or b.text.strip() for b in blocks):
        raise _LoadError("no text content in HTML")
    title = _first_title(blocks, markup=True) or html_title or file.stem
    return [_document(key, "html", title, blocks, filename_metadata(file.name), warnings)], issues


# JSON / JSONL records -----------------------------------------------------------------------------

_RECORD_LIST_KEYS = ("records", "data", "documents")


def _record_docs(
    file: Path,
    key: str,
    fmt: str,
    records: list[tuple[str, int, Any]],
    settings: Settings,
    warnings: list[str],
) -> _Parsed:
    """One document per record; ``records`` holds (label for issues, index, value)."""
    docs: list[SourceDocument] = []
    issues: list[LoadIssue] = []
    file_meta = filename_metadata(file.name)
    tf, xf, idf = settings.json_title_field, settings.json_text_field, settings.json_id_field
    used: set[str] = set()
    for label, index, rec in records:
        if not isinstance(rec, dict):
            issues.append(LoadIssue(source=label, message=f"record is not a JSON object (got {type(rec).__name__})"))
            continue
        raw_text = rec.get(xf)
        if isinstance(raw_text, list) and all(isinstance(x, str) for x in raw_text):
            raw_text = "\n\n".join(raw_text)
        if not isinstance(raw_text, str) or not raw_text.strip():
            problem = "has no" if raw_text is None else "has an empty or non-text"
            issues.append(LoadIssue(source=label, message=f"record {problem} '{xf}' field"))
            continue
        rid_value = rec.get(idf)
        if isinstance(rid_value, (str, int)) and not isinstance(rid_value, bool) and str(rid_value).strip():
            rid = str(rid_value).strip()
        else:
            rid = str(index)
        if rid in used:
            issues.append(LoadIssue(source=label, message=f"duplicate record id '{rid}' (record skipped)"))
            continue
        used.add(rid)
        meta = dict(file_meta)
        for k, v in rec.items():
            if k in (tf, xf, idf) or v is None or not isinstance(v, (str, int, float, bool)):
                continue
            meta[str(k)] = v
        title = _str_title(rec.get(tf)) or f"{file.stem} {rid}"
        text = raw_text.replace("\r\n", "\n").replace("\r", "\n")
        blocks = [Block(kind="paragraph", text=p.strip()) for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
        docs.append(_document(key, fmt, title, blocks, meta, warnings, record=rid))
    if not docs and not issues:
        issues.append(LoadIssue(source=key, message="no records found"))
    return docs, issues


def _parse_json(file: Path, key: str, data: bytes, settings: Settings) -> _Parsed:
    text, warnings, issues = _decode_with_warning(key, data)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _LoadError(f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    if isinstance(value, dict):
        for k in _RECORD_LIST_KEYS:
            if isinstance(value.get(k), list):
                value = value[k]
                break
        else:
            value = [value]
    if not isinstance(value, list):
        kind = type(value).__name__
        raise _LoadError(f"unsupported JSON structure: expected records (a list or an object), got {kind}")
    records = [(f"{key}[{i}]", i, rec) for i, rec in enumerate(value)]
    docs, rec_issues = _record_docs(file, key, "json", records, settings, warnings)
    return docs, issues + rec_issues


def _parse_jsonl(file: Path, key: str, data: bytes, settings: Settings) -> _Parsed:
    text, warnings, issues = _decode_with_warning(key, data)
    records: list[tuple[str, int, Any]] = []
    index = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        label = f"{key}:line {lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            issues.append(LoadIssue(source=label, message=f"invalid JSON: {exc.msg} (column {exc.colno})"))
            index += 1
            continue
        records.append((label, index, rec))
        index += 1
    docs, rec_issues = _record_docs(file, key, "jsonl", records, settings, warnings)
    return docs, issues + rec_issues


_PARSERS: dict[str, Callable[[Path, str, bytes, Settings], _Parsed]] = {
    "txt": _parse_txt,
    "md": _parse_md,
    "html": _parse_html,
    "pdf": _parse_pdf,
    "json": _parse_json,
    "jsonl": _parse_jsonl,
}


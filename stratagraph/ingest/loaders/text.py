"""Shared by the format loaders: reading with the size limit, decoding (binary detection, encodings), YAML
front matter, file-name metadata, JSON-able metadata, the :class:`LoadError` that becomes a one-line issue,
and building a :class:`SourceDocument`."""

from __future__ import annotations

import codecs
import datetime as dt
import re
import unicodedata
from pathlib import Path
from typing import Any

import charset_normalizer
import yaml

from stratagraph import ids
from stratagraph.schema import Block, LoadIssue, SourceDocument

_SNIFF_BYTES = 8192


class LoadError(Exception):
    """A problem that stops one file (or record) from loading; its message is the LoadIssue message."""


def one_line(text: str) -> str:
    return " ".join(str(text).split())


#: what a format parser returns: (documents, issues)
Parsed = tuple[list[SourceDocument], list[LoadIssue]]


# --------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------


def read(file: Path, limit: int) -> bytes:
    try:
        if not file.is_file():
            raise LoadError("not a regular file")
        size = file.stat().st_size
        if size > limit:
            raise LoadError(
                f"file too large: {size} bytes exceeds the limit of {limit} bytes "
                "(raise it with STRATAGRAPH_MAX_FILE_BYTES)"
            )
        with open(file, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise LoadError(f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise LoadError(f"file too large: more than {limit} bytes (raise it with STRATAGRAPH_MAX_FILE_BYTES)")
    if not data.strip():
        raise LoadError("empty file")
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
                    raise LoadError(_BINARY) from exc
                break
    if text is None:
        if b"\x00" in data[:_SNIFF_BYTES]:
            raise LoadError(_BINARY)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            best = charset_normalizer.from_bytes(data).best()
            if best is None:
                raise LoadError(_BINARY) from None
            text, encoding = str(best), best.encoding
    sample = text[:_SNIFF_BYTES]
    bad = sum(1 for ch in sample if _is_junk(ch))
    if sample and bad > 0.3 * len(sample):
        raise LoadError(_BINARY)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    if _CONTROL_RE.search(text):
        text = _CONTROL_RE.sub("", text)
    if not text.strip():
        raise LoadError("empty file")
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


def front_matter(text: str) -> tuple[dict[str, Any] | None, str, int]:
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
        raise LoadError(f"malformed YAML front matter: {one_line(exc)}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise LoadError("malformed YAML front matter: expected 'key: value' pairs")
    return _jsonable(data), "\n".join(lines[close + 1 :]), close + 1


def document(
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


def decode_with_warning(key: str, data: bytes) -> tuple[str, list[str], list[LoadIssue]]:
    text, encoding = _decode(data)
    if encoding is None:
        return text, [], []
    message = f"not valid UTF-8; decoded as {encoding} (detected)"
    return text, [message], [LoadIssue(source=key, message=message, severity="warning")]


def first_title(blocks: list[Block], markup: bool) -> str | None:
    if not markup:
        return None
    return next((b.text.strip() for b in blocks if b.kind == "heading" and b.level == 1 and b.text.strip()), None)


def str_title(value: Any) -> str | None:
    if value is None:
        return None
    s = " ".join(str(value).split())
    return s or None

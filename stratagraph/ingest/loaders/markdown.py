"""Markdown blocks (ATX / setext headings, fenced code, GFM pipe tables, paragraphs) and the ``.txt`` /
``.md`` parsers (YAML front matter, then Markdown or plain-text blocks)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from stratagraph.config import Settings
from stratagraph.ingest.loaders.plaintext import compress_levels, heading_number, opening_title, plain_blocks
from stratagraph.ingest.loaders.text import (
    LoadError,
    Parsed,
    decode_with_warning,
    document,
    filename_metadata,
    first_title,
    front_matter,
    str_title,
)
from stratagraph.schema import Block, Table

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


def make_table(header: list[str], rows: list[list[str]], caption: str | None) -> Table | None:
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
                            number=heading_number(content),
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
                table = make_table(header, rows, caption)
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
                        Block(kind="heading", text=content, level=level, number=heading_number(content), line=prev_no),
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
            blocks.extend(plain_blocks(payload, pdf=False))
    if not has_headings:
        compress_levels(blocks)
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
# Text files: .txt and .md
# --------------------------------------------------------------------------------------------------


def _parse_text_like(file: Path, key: str, data: bytes, settings: Settings, fmt: str) -> Parsed:
    text, warnings, issues = decode_with_warning(key, data)
    front, body, offset = front_matter(text)
    if not body.strip():
        raise LoadError("empty file (front matter only)" if front is not None else "empty file")
    lines = body.split("\n")
    if fmt == "md":
        blocks, markup = _markdown_blocks(body, offset)
    else:
        blocks = plain_blocks([(offset + i + 1, ln) for i, ln in enumerate(lines)], pdf=False)
        compress_levels(blocks)
        markup = False
    metadata = {**filename_metadata(file.name), **(front or {})}
    opening = opening_title(lines) if fmt == "txt" else None
    title = str_title((front or {}).get("title")) or first_title(blocks, markup) or opening or file.stem
    return [document(key, fmt, title, blocks, metadata, warnings)], issues


def parse_txt(file: Path, key: str, data: bytes, settings: Settings) -> Parsed:
    return _parse_text_like(file, key, data, settings, "txt")


def parse_md(file: Path, key: str, data: bytes, settings: Settings) -> Parsed:
    return _parse_text_like(file, key, data, settings, "md")

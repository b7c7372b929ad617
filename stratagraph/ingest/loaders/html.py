"""HTML (BeautifulSoup): ``h1``-``h6`` headings, tables and text blocks in reading order."""

from __future__ import annotations

import re
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import CData, Comment, Declaration, Doctype, ProcessingInstruction

from stratagraph.config import Settings
from stratagraph.ingest.loaders.markdown import make_table
from stratagraph.ingest.loaders.plaintext import heading_number
from stratagraph.ingest.loaders.text import (
    LoadError,
    Parsed,
    decode_with_warning,
    document,
    filename_metadata,
    first_title,
    str_title,
)
from stratagraph.schema import Block, Table

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
    return make_table(header, rows, caption)


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
                    blocks.append(Block(kind="heading", text=text, level=int(name[1]), number=heading_number(text)))
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


def parse_html(file: Path, key: str, data: bytes, settings: Settings) -> Parsed:
    text, warnings, issues = decode_with_warning(key, data)
    soup = BeautifulSoup(text, "html.parser")
    title_tag = soup.find("title")
    html_title = str_title(title_tag.get_text()) if isinstance(title_tag, Tag) else None
    root = soup.body if isinstance(soup.body, Tag) else soup
    blocks = _html_blocks(root)
    if not any(b.kind == "table" or b.text.strip() for b in blocks):
        raise LoadError("no text content in HTML")
    title = first_title(blocks, markup=True) or html_title or file.stem
    return [document(key, "html", title, blocks, filename_metadata(file.name), warnings)], issues

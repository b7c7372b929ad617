"""The heading tree of a document: structural nodes (BAG-RAG §3.1 "Structural Node Extraction").

Each heading ``h_k`` maps to one :class:`SectionRecord` ``s_k``; its level is its depth in the tree
(``level(h_k)``, top-level = 1). A heading's parent is the nearest preceding heading with a smaller raw level
(the ``Block.level`` a loader wrote: Markdown ``#`` count, HTML ``h1``-``h6``, or for numbered plain-text
headings the rank Part < Chapter < roman < decimal depth, see :func:`number_style`). Text before the first
heading becomes a preamble section (path ``"0"``); a document without headings is one root section.
"""

from __future__ import annotations

import re

from stratagraph import ids
from stratagraph.schema import Block, Outline, SectionRecord, SourceDocument

__all__ = ["build_outline", "number_style", "STYLE_PART", "STYLE_CHAPTER", "STYLE_ROMAN", "STYLE_DECIMAL"]

# Numbering styles, outermost first (the rank order used for mixed styles).
STYLE_PART = 0
STYLE_CHAPTER = 1
STYLE_ROMAN = 2
STYLE_DECIMAL = 3

_PART_RE = re.compile(r"^part\b", re.IGNORECASE)
_CHAPTER_RE = re.compile(r"^chapter\b", re.IGNORECASE)
_ROMAN_RE = re.compile(r"^[IVXLCDM]+$")
_DECIMAL_RE = re.compile(r"^\d+(?:\.\d+)*\.?$")

PREAMBLE_PATH = "0"


def number_style(number: str | None) -> tuple[int, int] | None:
    """``(style, depth)`` of a heading number as written: ``"Part I"`` -> (0, 1), ``"Chapter 2"`` -> (1, 1),
    ``"IV"`` -> (2, 1), ``"3.2"`` -> (3, 2). ``None`` when there is no (recognised) number."""
    if not number:
        return None
    num = number.strip()
    if _PART_RE.match(num):
        return (STYLE_PART, 1)
    if _CHAPTER_RE.match(num):
        return (STYLE_CHAPTER, 1)
    if _ROMAN_RE.match(num):
        return (STYLE_ROMAN, 1)
    if _DECIMAL_RE.match(num):
        return (STYLE_DECIMAL, num.rstrip(".").count(".") + 1)
    return None


def _raw_level(block: Block) -> int:
    """The loader's raw level; when absent, the rank of the numbering style (decimal: 3 + depth)."""
    if block.level is not None:
        return block.level
    style = number_style(block.number)
    if style is None:
        return 1
    return style[0] + 1 if style[0] != STYLE_DECIMAL else STYLE_DECIMAL + style[1]


def _has_content(blocks: list[Block]) -> bool:
    return any(b.kind == "table" or b.text.strip() for b in blocks)


def build_outline(doc: SourceDocument) -> Outline:
    """Build the section tree of ``doc`` (BAG-RAG §3.1): sections in reading order, each with its own blocks.

    ``path`` is the 1-based ordinal position in the tree ("1", "1.2"), ``"0"`` for the preamble / root section;
    ``level`` is the depth (1 = top); ``parent_id`` is the document id for top-level sections.
    """
    sections: list[SectionRecord] = []
    blocks: dict[str, list[Block]] = {}

    def is_heading(b: Block) -> bool:
        return b.kind == "heading" and bool(b.text.strip())

    first = next((i for i, b in enumerate(doc.blocks) if is_heading(b)), None)
    lead = [b for b in (doc.blocks if first is None else doc.blocks[:first]) if b.kind != "heading"]
    if first is None or _has_content(lead):
        root = SectionRecord(
            id=ids.section_id(doc.doc_id, PREAMBLE_PATH),
            doc_id=doc.doc_id,
            title=doc.title,
            level=1,
            path=PREAMBLE_PATH,
            number=None,
            parent_id=doc.doc_id,
            order=0,
            heading_path=[doc.title],
        )
        sections.append(root)
        blocks[root.id] = lead
    if first is None:
        return Outline(doc_id=doc.doc_id, sections=sections, blocks=blocks)

    # stack of (raw level, section, [number of children so far])
    stack: list[tuple[int, SectionRecord, list[int]]] = []
    top_children = [0]
    current: SectionRecord | None = None
    for block in doc.blocks[first:]:
        if block.kind == "heading":
            if not is_heading(block):
                continue
            raw = _raw_level(block)
            while stack and stack[-1][0] >= raw:
                stack.pop()
            parent = stack[-1][1] if stack else None
            counter = stack[-1][2] if stack else top_children
            counter[0] += 1
            path = f"{parent.path}.{counter[0]}" if parent else str(counter[0])
            title = block.text.strip()
            current = SectionRecord(
                id=ids.section_id(doc.doc_id, path),
                doc_id=doc.doc_id,
                title=title,
                level=len(stack) + 1,
                path=path,
                number=block.number,
                parent_id=parent.id if parent else doc.doc_id,
                order=len(sections),
                heading_path=[*(parent.heading_path if parent else []), title],
            )
            sections.append(current)
            blocks[current.id] = []
            stack.append((raw, current, [0]))
        elif current is not None:
            blocks[current.id].append(block)
    return Outline(doc_id=doc.doc_id, sections=sections, blocks=blocks)

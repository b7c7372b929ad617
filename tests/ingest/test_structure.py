"""The heading tree (BAG-RAG §3.1 structural nodes) from real files of every heading style."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagraph import ids
from stratagraph.config import Settings
from stratagraph.ingest.loaders import load_paths
from stratagraph.ingest.structure import build_outline, number_style
from stratagraph.schema import Block, Outline, SourceDocument


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "store")


def outline_of(tmp_path: Path, cfg: Settings, name: str, text: str) -> tuple[SourceDocument, Outline]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = load_paths([path], cfg, base=tmp_path)
    assert result.issues == []
    doc = result.documents[0]
    return doc, build_outline(doc)


def tree(outline: Outline) -> list[tuple[str, int, str]]:
    return [(s.path, s.level, s.title) for s in outline.sections]


def own_text(outline: Outline, path: str) -> list[str]:
    section = next(s for s in outline.sections if s.path == path)
    return [b.text for b in outline.blocks[section.id]]


MD = """# Budget Report

Intro of the report.

## 1. Revenue

Revenue text.

### 1.1 Taxes

Tax text.

#### 1.1.1 Property Tax

Property text.

### 1.2 Fees

## 2. Spending

1. Roads are repaired every year.
2. Parks

# Appendix

##### Deep note

Note text.
"""


def test_markdown_tree_levels_paths_parents(tmp_path: Path, cfg: Settings) -> None:
    doc, outline = outline_of(tmp_path, cfg, "budget.md", MD)
    assert tree(outline) == [
        ("1", 1, "Budget Report"),
        ("1.1", 2, "1. Revenue"),
        ("1.1.1", 3, "1.1 Taxes"),
        ("1.1.1.1", 4, "1.1.1 Property Tax"),
        ("1.1.2", 3, "1.2 Fees"),
        ("1.2", 2, "2. Spending"),
        ("2", 1, "Appendix"),
        ("2.1", 2, "Deep note"),  # h1 -> h5: a child at depth 2
    ]
    assert outline.max_level == 4
    by_path = {s.path: s for s in outline.sections}
    assert by_path["1"].parent_id == doc.doc_id and by_path["2"].parent_id == doc.doc_id
    assert by_path["1.1.1.1"].parent_id == by_path["1.1.1"].id == ids.section_id(doc.doc_id, "1.1.1")
    assert by_path["1.1.1.1"].heading_path == ["Budget Report", "1. Revenue", "1.1 Taxes", "1.1.1 Property Tax"]
    assert by_path["1.1.1.1"].number == "1.1.1" and by_path["2"].number is None
    assert [s.order for s in outline.sections] == list(range(len(outline.sections)))
    # the single H1 equal to the title stays the top-level section (no preamble: nothing before it)
    assert doc.title == "Budget Report" and outline.sections[0].path == "1"
    # each section holds only its own blocks
    assert own_text(outline, "1") == ["Intro of the report."]
    assert own_text(outline, "1.1") == ["Revenue text."]
    assert own_text(outline, "1.1.2") == []
    assert own_text(outline, "1.2") == ["1. Roads are repaired every year.\n2. Parks"]
    assert set(outline.blocks) == {s.id for s in outline.sections}


def test_html_tree(tmp_path: Path, cfg: Settings) -> None:
    html = (
        "<html><body><p>Before.</p><h1>Guide</h1><p>g</p><h2>Install</h2><h3>Linux</h3><p>apt</p>"
        "<h3>Mac</h3><p>brew</p><h2>Use</h2><p>run</p></body></html>"
    )
    doc, outline = outline_of(tmp_path, cfg, "guide.html", html)
    assert tree(outline) == [
        ("0", 1, "Guide"),
        ("1", 1, "Guide"),
        ("1.1", 2, "Install"),
        ("1.1.1", 3, "Linux"),
        ("1.1.2", 3, "Mac"),
        ("1.2", 2, "Use"),
    ]
    assert own_text(outline, "0") == ["Before."]
    assert outline.sections[0].heading_path == ["Guide"]


TXT = """Preamble line of the document.

Part I

Chapter 1: Beginnings

I. Overview

Overview text.

1. Context

Context text.

1.1 History

History text.

1.1.1 Early Years

Early text.

II. Details

Details text.

Chapter 2: Later

Later text.

Part II

Chapter 3

Final text.
"""


def test_plain_text_part_chapter_roman_decimal(tmp_path: Path, cfg: Settings) -> None:
    doc, outline = outline_of(tmp_path, cfg, "book.txt", TXT)
    assert tree(outline) == [
        ("0", 1, "book"),
        ("1", 1, "Part I"),
        ("1.1", 2, "Chapter 1: Beginnings"),
        ("1.1.1", 3, "I. Overview"),
        ("1.1.1.1", 4, "1. Context"),
        ("1.1.1.1.1", 5, "1.1 History"),
        ("1.1.1.1.1.1", 6, "1.1.1 Early Years"),
        ("1.1.2", 3, "II. Details"),
        ("1.2", 2, "Chapter 2: Later"),
        ("2", 1, "Part II"),
        ("2.1", 2, "Chapter 3"),
    ]
    numbers = [s.number for s in outline.sections]
    assert numbers == [None, "Part I", "Chapter 1", "I", "1", "1.1", "1.1.1", "II", "Chapter 2", "Part II", "Chapter 3"]
    assert own_text(outline, "0") == ["Preamble line of the document."]


def test_numbered_lists_are_not_headings_in_plain_text(tmp_path: Path, cfg: Settings) -> None:
    text = """Contents

1. Introduction

2. Method

3. Results

1. Introduction

We study lists. The procedure is:

1. Gather the documents

2. Clean the documents

3. Index them

Then we stop. Another list follows without blank lines.
1. Apples
2. Pears

4. Short item one
   which wraps onto a second line

2. Method

5. This numbered line is a full sentence.

Method text.

3. Results

Results text.
"""
    _, outline = outline_of(tmp_path, cfg, "lists.txt", text)
    assert [s.title for s in outline.sections] == ["lists", "1. Introduction", "2. Method", "3. Results"]
    intro = own_text(outline, "1")
    assert any("1. Gather the documents" in t for t in intro)
    assert any("3. Index them" in t for t in intro)
    assert "1. Apples" in " ".join(intro)
    assert any("4. Short item one" in t for t in intro)
    assert any("Contents" in t for t in own_text(outline, "0"))
    assert "5. This numbered line is a full sentence." in own_text(outline, "2")


def test_numbered_lists_are_not_headings_in_markdown_with_headings(tmp_path: Path, cfg: Settings) -> None:
    text = "# Setup\n\n1. Install\n\n2. Configure\n\n## 1. Details\n\nText.\n\n3. Run\n"
    _, outline = outline_of(tmp_path, cfg, "setup.md", text)
    assert tree(outline) == [("1", 1, "Setup"), ("1.1", 2, "1. Details")]
    assert own_text(outline, "1") == ["1. Install", "2. Configure"]


def test_document_without_headings_has_one_root_section(tmp_path: Path, cfg: Settings) -> None:
    doc, outline = outline_of(tmp_path, cfg, "flat.txt", "Just one paragraph.\n\nAnd a second one.\n")
    (root,) = outline.sections
    assert (root.path, root.level, root.title, root.parent_id) == ("0", 1, "flat", doc.doc_id)
    assert root.id == ids.section_id(doc.doc_id, "0") and root.heading_path == ["flat"]
    assert own_text(outline, "0") == ["Just one paragraph.", "And a second one."]


def test_outline_from_blocks_without_levels_uses_number_rank() -> None:
    doc = SourceDocument(
        doc_id="x.txt",
        source="x.txt",
        title="X",
        format="txt",
        blocks=[
            Block(kind="heading", text="Chapter 1", number="Chapter 1"),
            Block(kind="heading", text="IV. Roman", number="IV"),
            Block(kind="heading", text="2.3 Dec", number="2.3"),
            Block(kind="paragraph", text="body"),
            Block(kind="heading", text="Chapter 2", number="Chapter 2"),
        ],
    )
    outline = build_outline(doc)
    assert tree(outline) == [("1", 1, "Chapter 1"), ("1.1", 2, "IV. Roman"), ("1.1.1", 3, "2.3 Dec"), ("2", 1, "Chapter 2")]
    assert number_style("Part II") == (0, 1) and number_style("3.2.1") == (3, 3) and number_style("Intro") is None


def test_outline_is_deterministic(tmp_path: Path, cfg: Settings) -> None:
    doc, outline = outline_of(tmp_path, cfg, "budget.md", MD)
    assert build_outline(doc).model_dump() == outline.model_dump()


def test_budget_example_heading_tree(tmp_path: Path) -> None:
    """The bundled budget: three numbered heading levels, tables kept with their header under the lowest
    heading, and the numbered list in 2.1 left as text."""
    from tests.conftest import EXAMPLES

    settings = Settings(home=tmp_path / "s")
    (doc,) = load_paths([EXAMPLES / "budget"], settings, base=EXAMPLES.parent).documents
    outline = build_outline(doc)
    by_title = {s.title: s for s in outline.sections}
    top = [s.title for s in outline.sections if s.level == 1 and s.path != "0"]
    assert top == ["1. General Fund", "2. Capital Improvement Program", "3. Revenue"]
    police = by_title["1.1.1 Police Department"]
    assert police.level == 3 and police.number == "1.1.1"
    assert police.parent_id == by_title["1.1 Public Safety"].id
    assert police.heading_path == ["1. General Fund", "1.1 Public Safety", "1.1.1 Police Department"]
    assert outline.max_level == 3
    # tables under the lowest heading, with their header row
    tables = [b.table for b in outline.blocks[police.id] if b.kind == "table"]
    assert tables and tables[0].header[0] == "Line item"
    assert any(row[0] == "Personnel" for row in tables[0].rows)
    # the numbered list in 2.1 is text, not headings
    assert not any("patrol vehicles" in s.title for s in outline.sections)
    fleet = by_title["2.1 Public Safety Facilities and Fleet"]
    fleet_text = "\n".join(b.text for b in outline.blocks[fleet.id] if b.kind == "paragraph")
    assert "Replace two patrol vehicles" in fleet_text
    # the text before the first heading is the preamble section
    assert outline.sections[0].path == "0" and outline.blocks[outline.sections[0].id]

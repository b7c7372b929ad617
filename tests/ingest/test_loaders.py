"""Loaders on real files: every format, metadata, decoding, errors, traversal and document ids."""

from __future__ import annotations

import json
from pathlib import Path

import pypdf
import pytest

from stratagraph.config import Settings
from stratagraph.ingest.loaders import filename_metadata, load_paths
from stratagraph.schema import Block, LoadResult, SourceDocument


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "store")


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


def load_one(path: Path, cfg: Settings, **kw) -> SourceDocument:
    result = load_paths([path], cfg, base=path.parent, **kw)
    assert [i for i in result.issues if i.severity == "error"] == []
    assert len(result.documents) == 1
    return result.documents[0]


def headings(doc: SourceDocument) -> list[tuple[int | None, str | None, str]]:
    return [(b.level, b.number, b.text) for b in doc.blocks if b.kind == "heading"]


def errors(result: LoadResult) -> list[str]:
    return [str(i) for i in result.issues if i.severity == "error"]


def make_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF (Helvetica text, one line per entry) with a correct xref table."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    objs: dict[int, str] = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids = []
    for i, lines in enumerate(pages):
        page_id, content_id = 4 + 2 * i, 5 + 2 * i
        kids.append(f"{page_id} 0 R")
        content = "BT /F1 12 Tf 72 720 Td 14 TL\n" + "".join(f"({esc(ln)}) Tj T*\n" for ln in lines) + "ET"
        objs[page_id] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>"
        )
        objs[content_id] = f"<< /Length {len(content.encode('latin-1'))} >>\nstream\n{content}\nendstream"
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for k in sorted(objs):
        offsets[k] = len(out)
        out += f"{k} 0 obj\n{objs[k]}\nendobj\n".encode("latin-1")
    xref = len(out)
    size = max(objs) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offsets[k]:010d} 00000 n \n" for k in range(1, size)).encode()
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# --------------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------------

MD = """---
title: Quarterly Call
company: ACME
date: 2024-10-01
tags: [earnings, q3]
---
Welcome to the call.

Overview
========

Opening remarks on the quarter.

## 1. Results ##

Revenue grew.

1. First point of the list
2. Second point of the list

Table 2: Revenue by region

| Region | Revenue | Growth |
|:-------|--------:|-------:|
| North  |  10     | 5%     |
| South \\| East | 20 | 7% |

### 1.1 Details

```python
# not a heading
x = 1
```

Setext Two
----------

Last words.

---

After a rule.
"""


def test_markdown_front_matter_setext_atx_table_and_code(tmp_path: Path, cfg: Settings) -> None:
    doc = load_one(write(tmp_path / "call.md", MD), cfg)
    assert doc.format == "md"
    assert doc.title == "Quarterly Call"
    assert doc.metadata["company"] == "ACME"
    assert doc.metadata["date"] == "2024-10-01"  # a YAML date becomes an ISO string
    assert doc.metadata["tags"] == ["earnings", "q3"]
    json.dumps(doc.metadata)
    assert headings(doc) == [
        (1, None, "Overview"),
        (2, "1", "1. Results"),
        (3, "1.1", "1.1 Details"),
        (2, None, "Setext Two"),
    ]
    tables = [b.table for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1
    table = tables[0]
    assert table is not None
    assert table.header == ["Region", "Revenue", "Growth"]
    assert table.rows == [["North", "10", "5%"], ["South | East", "20", "7%"]]
    assert table.caption == "Table 2: Revenue by region"
    paragraphs = [b.text for b in doc.blocks if b.kind == "paragraph"]
    assert "1. First point of the list\n2. Second point of the list" in paragraphs
    assert any("# not a heading" in p for p in paragraphs)  # fenced code is a paragraph
    assert "Table 2: Revenue by region" not in paragraphs
    assert "After a rule." in paragraphs
    # line numbers count the front matter
    first_heading = next(b for b in doc.blocks if b.kind == "heading")
    assert first_heading.line == MD.split("\n").index("Overview") + 1


def test_markdown_title_from_first_h1_else_stem(tmp_path: Path, cfg: Settings) -> None:
    doc = load_one(write(tmp_path / "a.md", "Intro.\n\n## Sub\n\ntext\n\n# The Title\n\nbody\n"), cfg)
    assert doc.title == "The Title"
    doc = load_one(write(tmp_path / "notes_v2.md", "## Only H2\n\ntext\n"), cfg)
    assert doc.title == "notes_v2"


def test_markdown_without_heading_markup_uses_plain_text_rules(tmp_path: Path, cfg: Settings) -> None:
    text = "1. Introduction\n\nSome intro text.\n\n2. Method\n\nWe did it.\n\n2.1 Data\n\nThe data.\n"
    doc = load_one(write(tmp_path / "plain.md", text), cfg)
    assert headings(doc) == [(1, "1", "1. Introduction"), (1, "2", "2. Method"), (2, "2.1", "2.1 Data")]


def test_markdown_with_headings_never_reads_numbered_lines_as_headings(tmp_path: Path, cfg: Settings) -> None:
    text = "# Guide\n\nSteps:\n\n1. Install\n\n2. Configure\n\n3. Run\n\nDone.\n"
    doc = load_one(write(tmp_path / "guide.md", text), cfg)
    assert headings(doc) == [(1, None, "Guide")]


def test_front_matter_lookalike_is_not_front_matter(tmp_path: Path, cfg: Settings) -> None:
    doc = load_one(write(tmp_path / "banner.txt", "---\nA decorated banner line\n---\n\nBody text.\n"), cfg)
    assert doc.metadata == {}
    assert any("Body text." in b.text for b in doc.blocks)


def test_malformed_front_matter_is_an_error_for_that_file(tmp_path: Path, cfg: Settings) -> None:
    write(tmp_path / "d" / "bad.md", "---\ntitle: [unclosed\nauthor: x\n---\nBody.\n")
    write(tmp_path / "d" / "good.md", "# Good\n\nBody.\n")
    result = load_paths([tmp_path / "d"], cfg, base=tmp_path)
    assert [d.doc_id for d in result.documents] == ["d/good.md"]
    (issue,) = result.issues
    assert issue.source == "d/bad.md" and "front matter" in issue.message and "\n" not in issue.message


# --------------------------------------------------------------------------------------------------
# File-name metadata
# --------------------------------------------------------------------------------------------------


def test_filename_metadata_and_front_matter_override(tmp_path: Path, cfg: Settings) -> None:
    doc = load_one(write(tmp_path / "acme_q3_2024_call.md", "# Call\n\nText.\n"), cfg)
    assert doc.metadata == {"year": 2024, "quarter": "Q3"}
    doc = load_one(write(tmp_path / "x" / "acme_q3_2024_call.md", "---\nyear: 2023\n---\n# Call\n\nText.\n"), cfg)
    assert doc.metadata == {"year": 2023, "quarter": "Q3"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("acme_q3_2024_call.md", {"year": 2024, "quarter": "Q3"}),
        ("ACME-3Q-2023.txt", {"year": 2023, "quarter": "Q3"}),
        ("report_FY2024.pdf", {"fiscal_year": 2024}),
        ("report_fy24_Q1.pdf", {"fiscal_year": 2024, "quarter": "Q1"}),
        ("2019Q4 results.md", {"year": 2019, "quarter": "Q4"}),
        ("faq12 notes.md", {}),
        ("budget_12345.md", {}),
    ],
)
def test_filename_metadata(name: str, expected: dict) -> None:
    assert filename_metadata(name) == expected


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------

HTML = """<!DOCTYPE html>
<html><head><title>City Budget Page</title><style>p { color: red }</style></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<script>var secret = 1;</script>
<div>Loose text in a div with <b>bold</b> words.</div>
<h1>City Budget 2024</h1>
<p>The city plans to spend
   more money.</p>
<h2>1. Parks</h2>
<p>Parks get funds.<br>A new line.</p>
<ul><li>Item one</li><li>Item two</li></ul>
<h3>1.1 Playgrounds</h3>
<table>
  <caption>Table 1: Spending</caption>
  <tr><th>Item</th><th>Amount</th></tr>
  <tr><td>Swings</td><td>100</td></tr>
  <tr><td>Slides</td><td>200</td></tr>
</table>
<h2>2. Roads</h2><p>Roads too.</p>
</body></html>
"""


def test_html_headings_paragraphs_tables(tmp_path: Path, cfg: Settings) -> None:
    doc = load_one(write(tmp_path / "budget.html", HTML), cfg)
    assert doc.format == "html"
    assert doc.title == "City Budget 2024"
    assert headings(doc) == [
        (1, None, "City Budget 2024"),
        (2, "1", "1. Parks"),
        (3, "1.1", "1.1 Playgrounds"),
        (2, "2", "2. Roads"),
    ]
    texts = [b.text for b in doc.blocks if b.kind == "paragraph"]
    assert "Loose text in a div with bold words." in texts
    assert "The city plans to spend more money." in texts
    assert "Parks get funds.\nA new line." in texts
    assert "Item one" in texts and "Item two" in texts
    joined = " ".join(texts)
    assert "secret" not in joined and "color" not in joined and "About" not in joined
    (table,) = [b.table for b in doc.blocks if b.kind == "table"]
    assert table is not None
    assert table.header == ["Item", "Amount"]
    assert table.rows == [["Swings", "100"], ["Slides", "200"]]
    assert table.caption == "Table 1: Spending"


def test_html_title_tag_when_no_h1_and_first_row_header(tmp_path: Path, cfg: Settings) -> None:
    html = "<html><head><title>Page T</title></head><body><h2>Sub</h2><table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table></body></html>"
    doc = load_one(write(tmp_path / "p.htm", html), cfg)
    assert doc.title == "Page T"
    (table,) = [b.table for b in doc.blocks if b.kind == "table"]
    assert table is not None and table.header == ["a", "b"] and table.rows == [["1", "2"]]


# --------------------------------------------------------------------------------------------------
# Plain text and PDF
# --------------------------------------------------------------------------------------------------


def test_txt_numbered_headings_and_lists(tmp_path: Path, cfg: Settings) -> None:
    text = """Annual report of the agency.

1. Introduction
This report covers the year.

The steps were:

1. Collect the data

2. Analyse the data

1.1 Background

Background text. More text.

1.2 Scope
1. Apples are red.
2. Bananas are yellow.

2. Methods

We did things.

3. The method we used was a survey of all residents.

4. Results

Numbers went up.
"""
    doc = load_one(write(tmp_path / "report.txt", text), cfg)
    assert doc.format == "txt"
    assert doc.title == "report"
    assert headings(doc) == [
        (1, "1", "1. Introduction"),
        (2, "1.1", "1.1 Background"),
        (1, "2", "2. Methods"),
        (1, "4", "4. Results"),
    ]


def test_pdf_text_and_numbered_headings(tmp_path: Path, cfg: Settings) -> None:
    pdf = make_pdf(
        [
            ["1 Introduction", "This paper studies budget graphs.", "2 Methods", "We use (simple) counting."],
            ["2.1 Data", "The data covers ten cities.", "1. a list item that is a sentence."],
        ]
    )
    path = tmp_path / "paper_2023.pdf"
    path.write_bytes(pdf)
    assert "budget graphs" in pypdf.PdfReader(path).pages[0].extract_text()
    doc = load_one(path, cfg)
    assert doc.format == "pdf"
    assert doc.title == "paper_2023"
    assert doc.metadata == {"year": 2023}
    assert headings(doc) == [(1, "1", "1 Introduction"), (1, "2", "2 Methods"), (2, "2.1", "2.1 Data")]
    text = " ".join(b.text for b in doc.blocks if b.kind == "paragraph")
    assert "We use (simple) counting." in text and "ten cities" in text


def test_pdf_running_headers_and_footers_are_dropped(tmp_path: Path, cfg: Settings) -> None:
    topics = ["parks", "roads", "schools", "water"]
    pages = [
        [f"{n} Journal of Urban Tests", *(["1 Introduction"] if n == 1 else []), f"Body text about {topic}.",
         f"More on {topic} funding.", f"The {topic} budget grew.", f"Page {n}"]
        for n, topic in enumerate(topics, 1)
    ]  # fmt: skip
    path = tmp_path / "journal.pdf"
    path.write_bytes(make_pdf(pages))
    doc = load_one(path, cfg)
    text = "\n".join(b.text for b in doc.blocks)
    assert "Journal of Urban Tests" not in text and "Page 3" not in text
    assert "Body text about schools." in text and "Body text about water." in text
    assert headings(doc)[0] == (1, "1", "1 Introduction")


def test_plain_heading_followed_by_bullets_is_a_heading(tmp_path: Path, cfg: Settings) -> None:
    text = "Intro.\n\n1. Requirements\n- fast\n- safe\n\n2. Design\nIt is simple.\n"
    doc = load_one(write(tmp_path / "spec.txt", text), cfg)
    assert headings(doc) == [(1, "1", "1. Requirements"), (1, "2", "2. Design")]
    text = "Intro.\n\n1. Fruits\n- apples\n2. Vegetables\n- carrots\n"
    assert headings(load_one(write(tmp_path / "list.txt", text), cfg)) == []


def test_broken_pdf_is_an_error(tmp_path: Path, cfg: Settings) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    result = load_paths([path], cfg, base=tmp_path)
    assert result.documents == []
    assert len(errors(result)) == 1 and errors(result)[0].startswith("broken.pdf: ")


# --------------------------------------------------------------------------------------------------
# JSON / JSONL
# --------------------------------------------------------------------------------------------------


def test_json_list_of_records(tmp_path: Path, cfg: Settings) -> None:
    records = [
        {"id": "a1", "title": "First", "text": "Alpha text.\n\nSecond paragraph.", "company": "ACME", "year": 2022, "tags": ["x"]},
        {"title": "Second", "text": "Beta text."},
        {"title": "No text"},
        "not an object",
    ]
    path = write(tmp_path / "recs_2024.json", json.dumps(records))
    result = load_paths([path], cfg, base=tmp_path)
    assert [d.doc_id for d in result.documents] == ["recs_2024.json:a1", "recs_2024.json:1"]
    first, second = result.documents
    assert first.source == "recs_2024.json:a1" and first.title == "First" and first.format == "json"
    assert [b.text for b in first.blocks] == ["Alpha text.", "Second paragraph."]
    assert first.metadata == {"year": 2022, "company": "ACME"}  # record fields win over the file name
    assert second.metadata == {"year": 2024}
    assert sorted(i.source for i in result.issues) == ["recs_2024.json[2]", "recs_2024.json[3]"]
    assert any("'text'" in i.message for i in result.issues)


def test_json_object_with_list_and_single_record(tmp_path: Path, cfg: Settings) -> None:
    path = write(tmp_path / "wrapped.json", json.dumps({"meta": 1, "documents": [{"text": "One."}, {"text": "Two."}]}))
    assert [d.doc_id for d in load_paths([path], cfg, base=tmp_path).documents] == ["wrapped.json:0", "wrapped.json:1"]
    path = write(tmp_path / "single.json", json.dumps({"id": 7, "title": "T", "text": "Only one."}))
    (doc,) = load_paths([path], cfg, base=tmp_path).documents
    assert doc.doc_id == "single.json:7" and doc.title == "T"


def test_jsonl_malformed_line_and_custom_fields(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", json_text_field="body", json_title_field="headline", json_id_field="key")
    lines = [
        json.dumps({"key": "k1", "headline": "H1", "body": "First body."}),
        "{not json",
        "",
        json.dumps({"headline": "H3", "body": "Third body.", "score": 0.5}),
        json.dumps({"key": "k4", "body": ""}),
    ]
    path = write(tmp_path / "feed.jsonl", "\n".join(lines) + "\n")
    result = load_paths([path], cfg, base=tmp_path)
    assert [(d.doc_id, d.title) for d in result.documents] == [("feed.jsonl:k1", "H1"), ("feed.jsonl:2", "H3")]
    assert result.documents[1].metadata == {"score": 0.5}
    by_source = {i.source: i.message for i in result.issues}
    assert set(by_source) == {"feed.jsonl:line 2", "feed.jsonl:line 5"}
    assert "invalid JSON" in by_source["feed.jsonl:line 2"]
    assert "'body'" in by_source["feed.jsonl:line 5"]
    assert str(result.issues[0]).startswith("feed.jsonl:line 2: ")


def test_invalid_json_file_is_an_error(tmp_path: Path, cfg: Settings) -> None:
    result = load_paths([write(tmp_path / "bad.json", "[{]")], cfg, base=tmp_path)
    assert result.documents == [] and errors(result)[0].startswith("bad.json: invalid JSON")


# --------------------------------------------------------------------------------------------------
# Decoding and file errors
# --------------------------------------------------------------------------------------------------


def test_latin1_file_is_decoded_with_a_warning(tmp_path: Path, cfg: Settings) -> None:
    text = (
        "Le café de la gare était fermé. Nous avons mangé une crêpe à la crème près de l'église.\n"
        "Le garçon a réservé une table pour déjeuner à midi, où il a goûté un gâteau délicieux.\n"
    )
    path = write(tmp_path / "fr.txt", text, encoding="latin-1")
    result = load_paths([path], cfg, base=tmp_path)
    (doc,) = result.documents
    assert "café" in doc.blocks[0].text and "délicieux" in doc.blocks[0].text
    (issue,) = result.issues
    assert issue.severity == "warning" and issue.source == "fr.txt"
    encoding = issue.message.split("decoded as ")[1].split()[0]
    assert encoding  # the detected encoding is named
    assert doc.warnings == [issue.message]


def test_utf8_bom_and_utf16(tmp_path: Path, cfg: Settings) -> None:
    path = tmp_path / "bom.md"
    path.write_bytes(b"\xef\xbb\xbf# Title\n\nText.\n")
    result = load_paths([path], cfg, base=tmp_path)
    assert result.issues == [] and result.documents[0].title == "Title"
    path = tmp_path / "wide.txt"
    path.write_bytes("Wide text here.\n".encode("utf-16"))
    result = load_paths([path], cfg, base=tmp_path)
    assert result.documents[0].blocks[0].text == "Wide text here."
    assert [i.severity for i in result.issues] == ["warning"] and "utf-16" in result.issues[0].message


def test_binary_empty_huge_unsupported_missing(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", max_file_bytes=1000)
    (tmp_path / "bin.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("  \n\n\t\n")
    (tmp_path / "huge.txt").write_text("word " * 400)
    (tmp_path / "sheet.xlsx").write_bytes(b"PK\x03\x04")
    paths = ["bin.txt", "empty.md", "blank.txt", "huge.txt", "sheet.xlsx", "missing.txt"]
    result = load_paths([tmp_path / p for p in paths], cfg, base=tmp_path)
    assert result.documents == []
    messages = {i.source: i.message for i in result.issues}
    assert all(i.severity == "error" for i in result.issues)
    assert messages["bin.txt"] == "binary or undecodable content"
    assert messages["empty.md"] == "empty file"
    assert messages["blank.txt"] == "empty file"
    assert "2000" in messages["huge.txt"] and "1000" in messages["huge.txt"]
    assert "unsupported" in messages["sheet.xlsx"] and ".xlsx" in messages["sheet.xlsx"]
    assert messages[str(tmp_path / "missing.txt")] == "no such file or directory"
    assert all("\n" not in m for m in messages.values())


# --------------------------------------------------------------------------------------------------
# Traversal and ids
# --------------------------------------------------------------------------------------------------


def make_tree(root: Path) -> None:
    write(root / "b.md", "# B\n\nb.")
    write(root / "a.txt", "a.")
    write(root / "sub" / "c.html", "<p>c.</p>")
    write(root / "sub" / "deep" / "d.json", json.dumps([{"text": "d."}]))
    write(root / "drafts" / "e.md", "e.")
    write(root / ".hidden" / "f.md", "f.")
    write(root / ".secret.md", "g.")
    write(root / "notes.docx", "not supported")
    write(root / "sub" / "data.csv", "x,y")


def test_directory_traversal_sorted_hidden_and_unsupported_skipped(tmp_path: Path, cfg: Settings) -> None:
    make_tree(tmp_path / "corpus")
    result = load_paths([tmp_path / "corpus"], cfg, base=tmp_path)
    assert result.issues == []
    assert [d.doc_id for d in result.documents] == [
        "corpus/a.txt",
        "corpus/b.md",
        "corpus/drafts/e.md",
        "corpus/sub/c.html",
        "corpus/sub/deep/d.json:0",
    ]
    again = load_paths([tmp_path / "corpus"], cfg, base=tmp_path)
    assert [d.model_dump() for d in again.documents] == [d.model_dump() for d in result.documents]


def test_include_exclude(tmp_path: Path, cfg: Settings) -> None:
    make_tree(tmp_path / "corpus")
    ids_ = lambda r: [d.doc_id for d in r.documents]  # noqa: E731
    r = load_paths([tmp_path / "corpus"], cfg, base=tmp_path, include=["*.md"])
    assert ids_(r) == ["corpus/b.md", "corpus/drafts/e.md"]
    r = load_paths([tmp_path / "corpus"], cfg, base=tmp_path, exclude=["drafts"])
    assert "corpus/drafts/e.md" not in ids_(r) and len(ids_(r)) == 4
    r = load_paths([tmp_path / "corpus"], cfg, base=tmp_path, include=["sub/*"], exclude=["*.json"])
    assert ids_(r) == ["corpus/sub/c.html"]


def test_document_ids_relative_to_base_or_argument_parent(tmp_path: Path, cfg: Settings) -> None:
    make_tree(tmp_path / "corpus")
    # under base: relative to base, whether the directory or the file is given
    r1 = load_paths([tmp_path / "corpus" / "sub"], cfg, base=tmp_path)
    r2 = load_paths([tmp_path / "corpus" / "sub" / "c.html"], cfg, base=tmp_path)
    assert r1.documents[0].doc_id == r2.documents[0].doc_id == "corpus/sub/c.html"
    assert r2.documents[0].source == "corpus/sub/c.html"
    # outside base: relative to the parent of the argument
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r3 = load_paths([tmp_path / "corpus" / "sub"], cfg, base=elsewhere)
    assert [d.doc_id for d in r3.documents] == ["sub/c.html", "sub/deep/d.json:0"]
    r4 = load_paths([tmp_path / "corpus" / "b.md"], cfg, base=elsewhere)
    assert r4.documents[0].doc_id == "b.md"


def test_default_base_is_working_directory(tmp_path: Path, cfg: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    result = load_paths(["corpus/b.md"], cfg)
    assert result.documents[0].doc_id == "corpus/b.md"


def test_same_file_twice_loads_once_and_hash_sign_is_escaped(tmp_path: Path, cfg: Settings) -> None:
    path = write(tmp_path / "c#1.md", "# X\n\ny.")
    result = load_paths([tmp_path, path], cfg, base=tmp_path)
    assert [d.doc_id for d in result.documents] == ["c%231.md"]
    assert isinstance(result.documents[0].blocks[0], Block)


def test_txt_opening_title_and_conventional_part_names(tmp_path: Path, cfg: Settings) -> None:
    text = """Tidal Scour Around Harbour Piles
================================

Maren Oduya and Per Lisk. Coastal Works Letters, 2020.

Abstract
--------

We measure scour around piles.

1. Method

Echo sounding at low tide.

References:

[1] Brack, T. (2011). Pile Scour in Sandy Beds. Coastal Works Letters, 1, 3-9.
"""
    doc = load_one(write(tmp_path / "scour.txt", text), cfg)
    assert doc.title == "Tidal Scour Around Harbour Piles"
    assert [(n, t) for _, n, t in headings(doc)] == [(None, "Abstract"), ("1", "1. Method"), (None, "References")]
    assert headings(doc)[0][0] == headings(doc)[1][0]  # a part's name ranks with the top numbered level


@pytest.mark.parametrize(
    "opening",
    ["The committee met on Tuesday and agreed the following.", "Contents", "Results",
     "minutes of the meeting", "A first line that wraps\nonto a second line of the same paragraph"],
)
def test_txt_opening_lines_that_are_no_title(tmp_path: Path, cfg: Settings, opening: str) -> None:
    doc = load_one(write(tmp_path / "notes.txt", f"{opening}\n\nBody text follows here.\n"), cfg)
    assert doc.title == "notes"

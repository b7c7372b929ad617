"""Hierarchy-aware chunking (BAG-RAG "Document Splitting", BiG-RAG Alg. 1) with real spaCy on real files."""

from __future__ import annotations

import json
import random
from pathlib import Path


from stratagraph import ids
from stratagraph.config import Settings
from stratagraph.ingest.chunking import chunk_documents, chunk_outline, count_tokens, sentence_spans
from stratagraph.ingest.loaders import load_paths
from stratagraph.ingest.structure import build_outline
from stratagraph.schema import ChunkRecord, SourceDocument, Table

WORDS = "the city council approved a budget for parks roads schools and water systems with revenue growth".split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def load(tmp_path: Path, name: str, text: str, cfg: Settings) -> SourceDocument:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = load_paths([path], cfg, base=tmp_path)
    assert not [i for i in result.issues if i.severity == "error"]
    return result.documents[0]


def chunks_of(doc: SourceDocument, cfg: Settings) -> list[ChunkRecord]:
    return chunk_outline(doc, build_outline(doc), cfg)


def test_count_tokens() -> None:
    assert count_tokens("Revenue grew 5.2% in Q3, to $10m.") == 13
    assert count_tokens("") == 0 and count_tokens("   \n") == 0


def test_sentence_spans_with_spacy() -> None:
    text = "First sentence here. Second one follows!  Third?"
    spans = sentence_spans([text, "", "No punctuation at all"])
    assert [text[a:b] for a, b in spans[0]] == ["First sentence here.", "Second one follows!", "Third?"]
    assert spans[1] == [] and len(spans[2]) == 1


def test_packing_respects_budget_and_headings(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", chunk_tokens=40, carry_over_sentences=2)
    rng = random.Random(7)
    parts = []
    for h in range(1, 4):
        parts.append(f"## Section {h}\n")
        for _ in range(3):
            parts.append(" ".join(sentence(rng, rng.randint(3, 15)) for _ in range(rng.randint(1, 6))) + "\n")
    doc = load(tmp_path, "doc.md", "# Title\n\n" + "\n".join(parts), cfg)
    outline = build_outline(doc)
    chunks = chunk_outline(doc, outline, cfg)
    assert chunks and all(c.text.strip() for c in chunks)
    assert all(c.tokens == count_tokens(c.text) <= 40 for c in chunks)
    # never across a heading: every chunk's sentences come from its own section's blocks
    for c in chunks:
        own = "\n\n".join(b.text for b in outline.blocks[c.section_id])
        for piece in c.text.split("\n\n"):
            assert piece in own
    # all text is kept, in reading order
    body = " ".join(" ".join(b.text for b in outline.blocks[s.id]) for s in outline.sections)
    assert " ".join(c.text.replace("\n\n", " ") for c in chunks).split() == body.split()
    # greedy: a chunk plus the first sentence of the next chunk in its section would exceed the budget
    for a, b in zip(chunks, chunks[1:], strict=False):
        if a.section_id == b.section_id:
            start, end = sentence_spans([b.text])[0][0]
            first = b.text[start:end]
            assert a.tokens + count_tokens(first) > 40


def test_ids_order_and_metadata(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", chunk_tokens=16)
    text = "---\ncompany: ACME\n---\nLead sentence here.\n\n# A\n\n" + "One two three four five six seven. " * 6 + "\n\n## B\n\nShort.\n"
    doc = load(tmp_path, "q3_2024.md", text, cfg)
    chunks = chunks_of(doc, cfg)
    assert [c.order for c in chunks] == list(range(len(chunks)))
    assert chunks[0].id == "q3_2024.md#0#0" and chunks[0].para == "0"
    a_chunks = [c for c in chunks if c.para == "1"]
    assert [c.n for c in a_chunks] == [0, 1, 2]  # 8 tokens a sentence, two per chunk
    assert [c.id for c in a_chunks] == [ids.chunk_id(doc.doc_id, "1", n) for n in range(3)]
    assert ids.split_chunk_id(a_chunks[2].id) == (doc.doc_id, "1", 2)
    assert chunks[-1].id == "q3_2024.md#1.1#0" and chunks[-1].text == "Short."
    assert all(c.metadata == {"company": "ACME", "year": 2024, "quarter": "Q3"} for c in chunks)
    assert all(c.section_id == ids.section_id(doc.doc_id, c.para) for c in chunks)


def test_carry_over_context(tmp_path: Path) -> None:
    sentences = [f"Sentence number {i} is here." for i in range(12)]  # 6 tokens each
    cfg = Settings(home=tmp_path / "s", chunk_tokens=18, carry_over_sentences=2)
    doc = load(tmp_path, "c.md", "# H\n\n" + " ".join(sentences) + "\n\n# K\n\nOther section.\n", cfg)
    chunks = chunks_of(doc, cfg)
    h = [c for c in chunks if c.para == "1"]
    assert [c.text for c in h] == [" ".join(sentences[i : i + 3]) for i in range(0, 12, 3)]
    assert h[0].context == ""
    assert h[1].context == " ".join(sentences[1:3])
    assert h[3].context == " ".join(sentences[7:9])
    assert [c.context for c in chunks if c.para == "2"] == [""]  # first chunk of a section: no carry-over
    none = Settings(home=tmp_path / "s", chunk_tokens=18, carry_over_sentences=0)
    assert all(c.context == "" for c in chunks_of(doc, none))


def test_long_sentence_split_at_word_boundaries_and_long_token_runs(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", chunk_tokens=16, carry_over_sentences=1)
    words = [f"word{i}" for i in range(50)]
    url = "https://example.org/" + "/".join(f"p{i}" for i in range(30))
    doc = load(tmp_path, "long.txt", " ".join(words) + " " + url + " end.\n", cfg)
    chunks = chunks_of(doc, cfg)
    assert all(c.tokens <= 16 for c in chunks)
    text_words = [w for c in chunks for w in c.text.split()]
    assert text_words[:50] == words  # no word is cut
    assert "".join(text_words[50:-1]) == url  # the over-long "word" is cut at token boundaries only
    assert chunks[1].context == chunks[0].text


def test_table_chunks_repeat_header(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", chunk_tokens=40, carry_over_sentences=1)
    rows = "\n".join(f"| City {i} | {i * 100} | {i}% |" for i in range(12))
    text = f"# Budget\n\nIntro sentence.\n\nTable 3: Spending by city\n\n| City | Amount | Share |\n|---|---|---|\n{rows}\n\nAfter text.\n"
    doc = load(tmp_path, "t.md", text, cfg)
    chunks = chunks_of(doc, cfg)
    kinds = [c.kind for c in chunks]
    assert kinds[0] == "text" and kinds[-1] == "text" and set(kinds[1:-1]) == {"table"} and len(kinds) > 3
    tables = [c for c in chunks if c.kind == "table"]
    all_rows = []
    for c in tables:
        lines = c.text.split("\n")
        assert lines[0] == "Table 3: Spending by city"
        assert lines[1] == "City | Amount | Share"
        assert isinstance(c.table, Table) and c.table.header == ["City", "Amount", "Share"]
        assert lines[2:] == [c.table.row_text(r) for r in c.table.rows]
        assert c.tokens <= 40
        all_rows.extend(c.table.rows)
    assert all_rows == [[f"City {i}", str(i * 100), f"{i}%"] for i in range(12)]
    assert tables[0].context == "Intro sentence."
    assert tables[1].context == tables[0].text.split("\n")[-1]
    assert chunks[-1].text == "After text." and chunks[-1].context == tables[-1].text.split("\n")[-1]


def test_determinism_and_batch_equivalence(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", chunk_tokens=30)
    rng = random.Random(3)
    records = [{"id": f"r{i}", "text": " ".join(sentence(rng, rng.randint(4, 12)) for _ in range(rng.randint(1, 8)))} for i in range(50)]
    path = tmp_path / "recs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    docs = load_paths([path], cfg, base=tmp_path).documents
    first = [[c.model_dump() for c in chunks_of(d, cfg)] for d in docs]
    second = [[c.model_dump() for c in chunks_of(d, cfg)] for d in docs]
    batch = [[c.model_dump() for c in cs] for cs in chunk_documents([(d, build_outline(d)) for d in docs], cfg)]
    assert first == second == batch
    assert first[0][0]["id"] == "recs.jsonl:r0#0#0"


def test_many_short_passages_one_pass(tmp_path: Path) -> None:
    """6,000 passages through the batched path (speed is measured in benchmarks/, not here)."""
    rng = random.Random(0)
    path = tmp_path / "passages.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(6000):
            fh.write(json.dumps({"id": i, "text": " ".join(sentence(rng, 12) for _ in range(8))}) + "\n")
    for budget in (200, 48):  # fits whole / must be sentence-split
        cfg = Settings(home=tmp_path / "s", chunk_tokens=budget)
        docs = load_paths([path], cfg, base=tmp_path).documents
        chunks = chunk_documents([(d, build_outline(d)) for d in docs], cfg)
        assert len(chunks) == 6000 and all(chunks)
        assert all(c.tokens <= budget for cs in chunks for c in cs)
        if budget == 200:
            assert sum(map(len, chunks)) == 6000


def test_table_with_oversized_row_and_header_only_table(tmp_path: Path) -> None:
    cfg = Settings(home=tmp_path / "s", chunk_tokens=16)
    long_cell = " ".join(f"w{i}" for i in range(40))
    text = (
        "# T\n\n| Name | Note |\n|---|---|\n| a | short |\n| b | " + long_cell + " |\n\n"
        "## Empty\n\n| Only | Header |\n|---|---|\n"
    )
    doc = load(tmp_path, "wide.md", text, cfg)
    chunks = chunks_of(doc, cfg)
    assert all(c.tokens <= 16 and c.kind == "table" for c in chunks)
    b_parts = [c for c in chunks if c.table and c.table.rows == [["b", long_cell]]]
    assert len(b_parts) > 1 and all(c.text.startswith("Name | Note\n") for c in b_parts)
    words = [w for c in b_parts for w in c.text.split("\n", 1)[1].replace("Note:", "").replace(";", "").split()]
    assert words == ["b", *long_cell.split()]
    assert chunks[-1].text == "Only | Header" and chunks[-1].table is not None and chunks[-1].table.rows == []

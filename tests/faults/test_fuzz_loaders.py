"""Fuzzed documents through the loaders and on into the heading tree, the chunker and the graph nodes (what
``ingest``'s build step runs), with Hypothesis: a loader raises nothing but :class:`LoadError` (which becomes
a one-line issue), every later step takes whatever a loader returns, and each input takes bounded time.

Examples per target: ``EXAMPLES`` (README "Faults and hostile input")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagraph.config import Settings
from stratagraph.ingest.chunking import chunk_outline
from stratagraph.ingest.loaders import _PARSERS
from stratagraph.ingest.loaders.text import LoadError
from stratagraph.ingest.steps import pending_hash, structure_graph, vector_items
from stratagraph.ingest.structure import build_outline
from tests.faults.strategies import html_doc, json_value, markdown_doc
from tests.ingest.test_loaders import make_pdf

EXAMPLES = int(os.environ.get("STRATAGRAPH_FUZZ_EXAMPLES", "150"))  # raise it for a longer hunt
DEADLINE_MS = 5000  # per input, on 2 busy cores
CFG = Settings(home=Path("/nonexistent"), chunk_tokens=64)
FUZZ = settings(max_examples=EXAMPLES, deadline=DEADLINE_MS, suppress_health_check=[HealthCheck.too_slow], derandomize=not os.environ.get("STRATAGRAPH_FUZZ_EXAMPLES"))


def load_and_build(fmt: str, name: str, data: bytes) -> int:
    """What ingest does with one file before anything is stored; the number of chunks built."""
    try:
        docs, issues = _PARSERS[fmt](Path(name), name, data, CFG)
    except LoadError as exc:
        assert str(exc).strip() and "\n" not in str(exc)
        return 0
    built = 0
    for doc in docs:
        outline = build_outline(doc)
        chunks = chunk_outline(doc, outline, CFG)
        nodes, edges = structure_graph(doc, pending_hash("h"), outline, chunks)
        vector_items(doc, outline, chunks)
        assert nodes[0].id == doc.doc_id
        assert all(c.text.strip() for c in chunks)
        built += len(chunks)
    return built


@FUZZ
@given(markdown_doc)
def test_markdown(text: str) -> None:
    load_and_build("md", "fuzz.md", text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(markdown_doc, st.sampled_from(["utf-8", "utf-16", "latin-1", "cp1252"]))
def test_text(text: str, encoding: str) -> None:
    load_and_build("txt", "fuzz.txt", text.encode(encoding, "replace"))


@FUZZ
@given(html_doc)
def test_html(markup: str) -> None:
    load_and_build("html", "fuzz.html", f"<html><head><title>t</title></head><body>{markup}</body></html>".encode())


@FUZZ
@given(st.lists(json_value, max_size=6), st.booleans())
def test_jsonl(records: list, broken: bool) -> None:
    lines = [json.dumps(r) for r in records]
    if broken and lines:
        lines[0] = lines[0][: len(lines[0]) // 2]
    load_and_build("jsonl", "fuzz.jsonl", "\n".join(lines).encode())


@FUZZ
@given(json_value)
def test_json(value) -> None:
    load_and_build("json", "fuzz.json", json.dumps(value).encode())


_PDF = make_pdf([["1. Introduction", "Acme earned $1.2m in 2024."], ["2. Results", "Revenue rose."]])


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(_PDF) - 1), st.binary(max_size=8)), max_size=6), st.booleans())
def test_pdf_bytes(edits: list[tuple[int, bytes]], truncate: bool) -> None:
    """A valid PDF with bytes overwritten (and maybe cut short): an error issue or text, never a crash."""
    data = bytearray(_PDF)
    for at, chunk in edits:
        data[at : at + len(chunk)] = chunk
    if truncate:
        data = data[: len(data) // 2]
    load_and_build("pdf", "fuzz.pdf", bytes(data))


@FUZZ
@given(st.binary(min_size=1, max_size=2000))
def test_random_bytes_as_every_format(data: bytes) -> None:
    for fmt in _PARSERS:
        load_and_build(fmt, f"fuzz.{fmt}", data)


@pytest.mark.parametrize("fmt", ["md", "txt", "html"])
def test_a_parsed_pdf_still_builds(fmt: str) -> None:
    """The fuzz helper itself: a document that loads yields chunks (so the tests above exercise the build)."""
    text = "# Title\n\nAcme earned $1.2m in 2024. Revenue rose.\n"
    data = f"<h1>Title</h1><p>{text}</p>".encode() if fmt == "html" else text.encode()
    assert load_and_build(fmt, f"x.{fmt}", data) > 0
    assert load_and_build("pdf", "x.pdf", _PDF) > 0


# ------------------------------------------------------------------------------------------ nothing stored
REJECTED = {
    "empty.md": b"   \n",
    "binary.txt": bytes(range(256)) * 4,
    "broken.json": b'{"title": "x", "text": ',
    "wrong.json": b"42",
    "broken.pdf": _PDF[: len(_PDF) // 3],
}


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory):
    from stratagraph import StrataGraph

    sg = StrataGraph(Settings(home=tmp_path_factory.mktemp("rejected"), max_file_bytes=4096))
    yield sg
    sg.close()


def _nothing_stored(sg) -> bool:
    return sum(sg.stats().nodes.values()) == 0 and all(sg.vectors.count(c) == 0 for c in ("chunks", "sections", "facts", "entities"))


def test_rejected_files_store_nothing(empty_store, tmp_path: Path) -> None:
    for name, data in {**REJECTED, "huge.md": b"# Big\n\n" + b"word " * 2000}.items():
        (tmp_path / name).write_bytes(data)
    result = empty_store.ingest([tmp_path], base=tmp_path)
    assert result.failed == len(REJECTED) + 1 and all(r.error for r in result.documents)
    assert _nothing_stored(empty_store)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          derandomize=True)  # fmt: skip
@given(st.binary(min_size=1, max_size=600), st.sampled_from(["json", "jsonl", "pdf", "html", "md"]))
def test_a_fuzzed_file_that_is_rejected_stores_nothing(empty_store, tmp_path_factory, data: bytes, fmt: str) -> None:
    """Through the whole ingest workflow: a file the loaders reject leaves the store empty."""
    folder = tmp_path_factory.mktemp("fuzzed")
    (folder / f"x.{fmt}").write_bytes(data)
    result = empty_store.ingest([folder], base=folder)
    if result.failed == len(result.documents):  # rejected (random bytes usually are)
        assert _nothing_stored(empty_store)
    else:  # loaded after all: take it out again, for the next example
        for report in result.documents:
            if report.doc_id and not report.error:
                empty_store.delete(report.doc_id)

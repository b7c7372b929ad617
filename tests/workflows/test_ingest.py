"""The ingest workflow end to end on real stores: idempotency, delete + re-ingest, order independence,
bad input next to good input, and concurrency (threads and processes)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, canonical

from stratagraph import Settings, StrataGraph
from stratagraph.graph_store.base import DocumentNotFound
from stratagraph.schema import IngestStatus

SMALL = """---
title: Harbor Notes
company: Acme Shipping
---
# Harbor Notes

## Operations

The harbor handled 1,200 containers in March. Cranes were serviced twice.

## Finance

Revenue rose 4% to $3.1 million. Costs were flat.
"""


def _write(folder: Path, files: dict[str, str | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return folder


def _statuses(result) -> dict[str, str]:
    return {r.source: r.status.value for r in result.documents}


def test_examples_build_structure_and_text_layers(sg: StrataGraph, tmp_path: Path) -> None:
    result = sg.ingest([EXAMPLES], base=EXAMPLES.parent)
    assert result.failed == 0, [r for r in result.documents if r.error]
    counts = sg.stats()
    assert counts.nodes["Document"] >= 8
    assert counts.nodes["Section"] > counts.nodes["Document"]
    assert counts.nodes["Chunk"] >= counts.nodes["Document"]
    assert counts.max_section_level >= 3
    assert counts.edges["HAS_SECTION"] == counts.nodes["Section"]
    assert counts.edges["HAS_CHUNK"] == counts.nodes["Chunk"]
    assert counts.edges["NEXT"] == counts.nodes["Chunk"] - counts.nodes["Document"]
    # every chunk has a vector and appears in the BM25 index
    assert sg.vectors.count("chunks") == counts.nodes["Chunk"]
    assert sg.vectors.count("sections") == counts.nodes["Section"]
    hits = sg.context.bm25().search("Personnel overtime", 3)
    assert hits and all("#" in h.id for h in hits)


def test_reingest_is_a_no_op_and_byte_identical(sg: StrataGraph) -> None:
    first = sg.ingest([EXAMPLES], base=EXAMPLES.parent)
    before = canonical(sg.export())
    second = sg.ingest([EXAMPLES], base=EXAMPLES.parent)
    assert {r.status for r in second.documents} == {IngestStatus.UNCHANGED}
    assert len(second.documents) == len(first.documents)
    assert canonical(sg.export()) == before


def test_delete_then_reingest_restores_the_same_graph(sg: StrataGraph, tmp_path: Path) -> None:
    docs = _write(tmp_path / "docs", {"harbor.md": SMALL, "plain.txt": "Just one line of plain text here."})
    sg.ingest([docs], base=tmp_path)
    before = canonical(sg.export())
    chunks_before = sg.vectors.count("chunks")

    summary = sg.delete("docs/harbor.md")
    assert summary.nodes_deleted > 0
    assert not [n for n in sg.export()["nodes"] if "docs/harbor.md" in n["doc_ids"]]
    assert sg.vectors.ids("chunks", filters={"doc_id": "docs/harbor.md"}) == []
    assert sg.vectors.count("chunks") < chunks_before

    again = sg.ingest([docs], base=tmp_path)
    assert _statuses(again) == {"docs/harbor.md": "added", "docs/plain.txt": "unchanged"}
    assert canonical(sg.export()) == before
    assert sg.vectors.count("chunks") == chunks_before


def test_unknown_document_id_raises_and_changes_nothing(sg: StrataGraph, tmp_path: Path) -> None:
    sg.ingest([_write(tmp_path / "d", {"a.md": SMALL})], base=tmp_path)
    before = canonical(sg.export())
    with pytest.raises(DocumentNotFound, match="nope.md"):
        sg.delete("nope.md")
    assert canonical(sg.export()) == before


def test_updated_document_replaces_old_version_without_orphans(sg: StrataGraph, tmp_path: Path) -> None:
    folder = _write(tmp_path / "d", {"a.md": SMALL})
    sg.ingest([folder], base=tmp_path)
    (folder / "a.md").write_text(SMALL.replace("## Finance", "## Money").replace("flat", "down 2%"), "utf-8")
    result = sg.ingest([folder], base=tmp_path)
    assert _statuses(result) == {"d/a.md": "updated"}
    titles = {n["props"].get("title") for n in sg.export()["nodes"] if n["label"] == "Section"}
    assert "Money" in titles and "Finance" not in titles
    chunk_ids = {n["id"] for n in sg.export()["nodes"] if n["label"] == "Chunk"}
    assert set(sg.vectors.ids("chunks")) == chunk_ids

    # the same content in a fresh store gives the same graph as the update did
    with StrataGraph(Settings(home=tmp_path / "fresh")) as fresh:
        fresh.ingest([folder], base=tmp_path)
        assert canonical(fresh.export()) == canonical(sg.export())


def test_ingest_order_does_not_change_the_graph(tmp_path: Path) -> None:
    a = _write(tmp_path / "A", {"harbor.md": SMALL, "notes.txt": "1. Intro\n\nSome text about the port."})
    b = _write(tmp_path / "B", {"harbor.md": SMALL.replace("March", "April"), "x.md": "# X\n\nAbout X."})
    exports = []
    for order, name in (([a, b], "ab"), ([b, a], "ba")):
        with StrataGraph(Settings(home=tmp_path / name)) as graph:
            for folder in order:
                assert graph.ingest([folder], base=tmp_path).failed == 0
            exports.append(canonical(graph.export()))
    assert exports[0] == exports[1]


def test_bad_files_are_reported_and_stored_documents_untouched(sg: StrataGraph, tmp_path: Path) -> None:
    sg.ingest([EXAMPLES / "budget"], base=EXAMPLES.parent)
    before = sg.export()
    old_ids = {d.id for d in sg.graph.nodes_by_label("Document")}

    bad = _write(
        tmp_path / "incoming",
        {
            "good.md": SMALL,
            "empty.txt": "",
            "binary.txt": bytes(range(256)) * 8,
            "latin1.txt": "Café de la Gare: résumé of the año fiscal, naïve façade.\n".encode("latin-1"),
            "records.jsonl": '{"title": "Good record", "text": "A fine record about harbors."}\n{"title": broken\n',
        },
    )
    result = sg.ingest([bad], base=tmp_path)
    by_source = {r.source: r for r in result.documents}
    assert by_source["incoming/good.md"].status == IngestStatus.ADDED
    latin = by_source["incoming/latin1.txt"]
    assert latin.status == IngestStatus.ADDED and "decoded as" in latin.warnings[0]
    assert [r.status for r in result.documents if r.source.startswith("incoming/records.jsonl:")].count(
        IngestStatus.ADDED
    ) == 1
    failed = [r for r in result.documents if r.status == IngestStatus.FAILED]
    assert result.failed == len(failed) == 3
    joined = "\n".join(f"{r.source}: {r.error}" for r in failed)
    assert "empty.txt" in joined and "binary.txt" in joined and "records.jsonl" in joined
    assert all("\n" not in (r.error or "") for r in failed)

    after = sg.export()
    keep = lambda ex: [x for x in ex["nodes"] + ex["edges"] if set(x["doc_ids"]) & old_ids]  # noqa: E731
    assert keep(after) == keep(before)


def test_workflow_from_a_thread_pool(tmp_path: Path, settings: Settings) -> None:
    folders = [_write(tmp_path / f"f{i}", {f"doc{i}.md": SMALL.replace("March", f"month {i}")}) for i in range(4)]
    with StrataGraph(settings) as graph:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda f: graph.ingest([f], base=tmp_path), folders))
        assert all(r.failed == 0 for r in results)
        assert len(graph.graph.nodes_by_label("Document")) == 4
        threaded = canonical(graph.export())
    with StrataGraph(Settings(home=tmp_path / "seq")) as seq:
        for f in folders:
            seq.ingest([f], base=tmp_path)
        assert canonical(seq.export()) == threaded


def test_two_processes_ingesting_into_one_store(tmp_path: Path) -> None:
    a = tmp_path / "A"
    b = tmp_path / "B"
    shutil.copytree(EXAMPLES / "research", a)
    shutil.copytree(EXAMPLES / "earnings", b)
    store = tmp_path / "shared-store"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "stratagraph.cli", "--store", str(store), "ingest", str(folder), "--json"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in (a, b)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]

    with StrataGraph(Settings(home=store)) as together, StrataGraph(Settings(home=tmp_path / "seq")) as seq:
        seq.ingest([a], base=tmp_path)
        seq.ingest([b], base=tmp_path)
        assert canonical(together.export()) == canonical(seq.export())
        assert together.vectors.count("chunks") == seq.vectors.count("chunks")
        assert sorted(together.vectors.ids("chunks")) == sorted(seq.vectors.ids("chunks"))


def test_a_failing_batch_is_retried_per_document(sg: StrataGraph, tmp_path: Path, monkeypatch) -> None:
    """Fault injection: the graph store refuses any write that contains one poisoned document. The batch
    write fails, the workflow retries document by document, and only the poisoned one is reported."""
    folder = _write(tmp_path / "d", {f"doc{i}.md": SMALL.replace("March", f"month {i}") for i in range(3)})
    store = sg.graph
    real = type(store).replace_documents

    def refuse_poisoned(self, versions, merges=None):
        if any(v.doc_id == "d/doc1.md" for v in versions):
            raise RuntimeError("disk full")
        return real(self, versions, merges)

    monkeypatch.setattr(type(store), "replace_documents", refuse_poisoned)
    result = sg.ingest([folder], base=tmp_path)
    assert _statuses(result) == {"d/doc0.md": "added", "d/doc1.md": "failed", "d/doc2.md": "added"}
    assert "disk full" in next(r.error for r in result.documents if r.source == "d/doc1.md")
    assert sorted([d.id for d in sg.graph.nodes_by_label("Document")]) == ["d/doc0.md", "d/doc2.md"]
    chunk_ids = {n["id"] for n in sg.export()["nodes"] if n["label"] == "Chunk"}
    assert set(sg.vectors.ids("chunks")) == chunk_ids  # the refused document's vectors were taken back
    monkeypatch.setattr(type(store), "replace_documents", real)
    again = sg.ingest([folder], base=tmp_path)
    assert _statuses(again) == {"d/doc0.md": "unchanged", "d/doc1.md": "added", "d/doc2.md": "unchanged"}
    chunk_ids = {n["id"] for n in sg.export()["nodes"] if n["label"] == "Chunk"}
    assert set(sg.vectors.ids("chunks")) == chunk_ids


def test_a_failed_update_keeps_the_old_version_in_both_stores(sg: StrataGraph, tmp_path: Path, monkeypatch) -> None:
    """Fault injection: the graph refuses the new version of an updated document; its old graph and its old
    vectors (same chunk ids, other text) must both survive."""
    folder = _write(tmp_path / "d", {"a.md": SMALL})
    sg.ingest([folder], base=tmp_path)
    graph_before = canonical(sg.export())
    ids = sg.vectors.ids("chunks")
    vectors_before = sg.vectors.get_embeddings("chunks", ids)

    (folder / "a.md").write_text(SMALL.replace("containers", "pallets of grain"), "utf-8")
    monkeypatch.setattr(type(sg.graph), "replace_documents", lambda self, versions: (_ for _ in ()).throw(OSError("io")))
    result = sg.ingest([folder], base=tmp_path)
    assert _statuses(result) == {"d/a.md": "failed"}

    assert canonical(sg.export()) == graph_before
    assert sg.vectors.ids("chunks") == ids
    after = sg.vectors.get_embeddings("chunks", ids)
    assert all((after[i] == vectors_before[i]).all() for i in ids)


def test_unreachable_embedding_endpoint_fails_documents_clearly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(
        home=tmp_path / "store",
        embeddings="openai",
        openai_base_url=f"http://127.0.0.1:{port}/v1",
        request_retries=1,
        request_timeout=2,
    )
    folder = _write(tmp_path / "d", {"a.md": SMALL})
    with StrataGraph(settings) as graph:
        result = graph.ingest([folder], base=tmp_path)
        assert _statuses(result) == {"d/a.md": "failed"}
        assert "embedding failed" in result.documents[0].error and "Connection" in result.documents[0].error
        assert [d.id for d in graph.graph.nodes_by_label("Document")] == []

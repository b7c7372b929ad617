"""The per-generation indexes updated from the store's change feed, end to end: Markdown documents ingested,
deleted and ingested again (changed) in random order; after each step the index, the lexical index, the title
index and the fact vectors a long-lived context updated equal ones read whole (the fact vectors read only for
the facts written anew), and ``default``'s top 5 is the one of a context that reads everything again."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from stratagraph import StrataGraph
from stratagraph.retrieval import RetrievalContext, retrieve
from stratagraph.retrieval import index as index_module
from stratagraph.retrieval.bm25 import BM25Index
from stratagraph.retrieval.index import GraphIndex
from stratagraph.retrieval.table_vectors import table_vectors
from stratagraph.retrieval.traversal import fact_vectors, load_index
from stratagraph.text.titles import title_index
from tests.graph_store.test_changes import index_state

DOCS = {
    "acme.md": [
        "# Acme Corp\n\n## History\n\nAcme Corp was founded by Bob Smith in Denver in 1990. Bob Smith studied at MIT.\n\n"
        "## Products\n\nAcme Corp sells rockets to Zeta Labs. The rockets are built in Ohio.\n",
        "# Acme Corp\n\n## History\n\nAcme Corp was founded by Bob Smith and Dana White in Boulder in 1991.\n\n"
        "## Staff\n\nDana White leads the engineers of Acme Corp in Ohio.\n",
    ],
    "zeta.md": [
        "# Zeta Labs\n\n## Company\n\nZeta Labs was founded by Carol Jones in Paris in 1995. Zeta Labs buys rockets from Acme Corp.\n",
        "# Zeta Labs\n\n## Company\n\nZeta Labs was founded by Carol Jones in Lyon.\n\n## Research\n\nCarol Jones works on batteries.\n",
    ],
    "ohio.md": [
        "# Ohio\n\n## Industry\n\nOhio hosts the rocket factory of Acme Corp. Columbus is the capital of Ohio.\n",
        "# Ohio\n\n## Cities\n\nColumbus and Cleveland are cities in Ohio. Bob Smith lives in Cleveland.\n",
    ],
    "carol.md": [
        "# Carol Jones\n\n## Life\n\nCarol Jones was born in Paris. She founded Zeta Labs and studied at MIT.\n",
        "# Carol Jones\n\n## Life\n\nCarol Jones was born in Lyon and moved to Denver.\n",
    ],
}
QUESTIONS = ["Who founded Acme Corp?", "Where was Carol Jones born?", "What is the capital of Ohio?", "Who buys rockets?"]


def top5(ctx: RetrievalContext, question: str) -> list[str]:
    return [e.chunk_id for e in retrieve(ctx, "default", question, k=5).evidence]


def bm25_state(ix: BM25Index) -> tuple:
    """What BM25 ranks by: per chunk, its length and weighted term frequencies by term, and each term's df."""
    terms = {col: t for t, col in ix.vocabulary.items()}
    tf = ix.weighted_tf.tocsr()
    rows = {
        cid: sorted((terms[j], round(float(v), 9)) for j, v in zip(tf.indices[tf.indptr[i] : tf.indptr[i + 1]], tf.data[tf.indptr[i] : tf.indptr[i + 1]], strict=True))
        for i, cid in enumerate(ix.chunk_ids)
    }
    df = {terms[j]: int(n) for j, n in enumerate(ix.document_frequency) if n}
    return ix.chunk_ids, rows, df, np.round(ix.norm, 9).tolist()


@pytest.mark.parametrize("seed", [0, 1])
def test_indexes_follow_ingests_and_deletes(settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(index_module, "INCREMENTAL_SHARE", 1e6)  # tiny store: every change is a large share
    monkeypatch.setattr(BM25Index, "updated", classmethod(_bm25_updated_any_share))
    reads: list[str] = []
    real_index, real_bm25 = GraphIndex.from_store.__func__, BM25Index.from_graph.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(GraphIndex, "from_store", classmethod(lambda cls, g: reads.append("index") or real_index(cls, g)))
    monkeypatch.setattr(BM25Index, "from_graph", classmethod(lambda cls, g: reads.append("bm25") or real_bm25(cls, g)))
    docs = tmp_path / "docs"
    docs.mkdir()
    rng = random.Random(seed)
    sg = StrataGraph(settings)
    try:
        ctx = sg.context
        present: dict[str, int] = {}
        (docs / "acme.md").write_text(DOCS["acme.md"][0], encoding="utf-8")
        sg.ingest([docs / "acme.md"], base=tmp_path)
        present["acme.md"] = 0
        ctx.index(), ctx.bm25()
        assert reads == ["index", "bm25"]
        fewer = 0  # steps that read fewer fact vectors than the store holds
        for step in range(6):
            name = rng.choice(sorted(DOCS))
            if name in present and rng.random() < 0.4 and len(present) > 1:
                sg.delete(f"docs/{name}")
                del present[name]
                (docs / name).unlink()
            else:
                version = 1 - present[name] if name in present else rng.randrange(2)
                (docs / name).write_text(DOCS[name][version], encoding="utf-8")
                sg.ingest([docs / name], base=tmp_path)
                present[name] = version
            reads.clear()
            updated, lexical = ctx.index(), ctx.bm25()
            assert reads == []  # both came from the feed
            assert updated.generation == sg.graph.generation() == lexical.generation
            assert index_state(updated) == index_state(GraphIndex.from_store(sg.graph))
            assert bm25_state(lexical) == bm25_state(BM25Index.from_graph(sg.graph))
            fresh = RetrievalContext(graph=sg.graph, vectors=sg.vectors, settings=settings.model_copy(update={"incremental_index": False}))
            read = GraphIndex.from_store(sg.graph)  # the titles as title_index reads them whole
            whole = title_index(zip(read.documents.ids, read.doc_title, read.doc_metadata, strict=True),
                                [(s, t, d) for s, t, d in zip(read.sections.ids, read.section_title, read.section_doc, strict=True) if t])  # fmt: skip
            assert title_state(ctx.title_index()) == title_state(whole) == title_state(fresh.title_index())
            asked: list[str] = []
            real_read = sg.vectors.embedding_blocks
            monkeypatch.setattr(sg.vectors, "embedding_blocks", lambda col, ids: asked.extend(ids) or real_read(col, ids))
            carried = fact_vectors(ctx, load_index(ctx))
            monkeypatch.setattr(sg.vectors, "embedding_blocks", real_read)
            written = updated.renumbered.get("facts", (None, []))[1] if step else updated.facts.ids  # step 0: none kept yet
            assert sorted(asked) == sorted(written)
            fewer += len(asked) < len(updated.facts)
            assert np.array_equal(carried, fact_vectors(fresh, load_index(fresh))) and carried.shape[1] == 384
            for layer in ("sections", "chunks"):  # top_down's matrices, carried the same way
                assert np.array_equal(table_vectors(ctx, layer, layer), table_vectors(fresh, layer, layer)), layer
            for q in QUESTIONS:
                assert top5(ctx, q) == top5(fresh, q), q
                assert lexical.search(q, 5) == fresh.bm25().search(q, 5)
        assert fewer >= 3
    finally:
        sg.close()


def title_state(index) -> tuple:  # noqa: ANN001
    return index._entries, index._by_norm, index._section_docs


def _bm25_updated_any_share(cls: type[BM25Index], previous: BM25Index | None, graph) -> BM25Index:  # noqa: ANN001
    """:meth:`BM25Index.updated` without its quarter bound (the test's store is tiny)."""
    if previous is not None and previous.generation is not None:
        changes = graph.changes_since(previous.generation, {"Chunk": ["text", "section"]})
        if changes is not None:
            return previous.apply(changes)
    return cls.from_graph(graph)


def test_context_drops_what_was_derived_from_an_older_graph(tmp_path: Path) -> None:
    """Only the updatable entries survive a generation change; everything else is built again."""
    from stratagraph.graph_store import SQLiteGraphStore
    from tests.graph_store.test_contract import load

    with SQLiteGraphStore(tmp_path / "g.sqlite") as store:
        load(store, "d1")
        ctx = RetrievalContext(graph=store, vectors=None)  # type: ignore[arg-type]
        first, derived = ctx.index(), ctx.cached("derived", lambda: object())
        assert ctx.cached("derived", lambda: object()) is derived
        load(store, "d2")
        second = ctx.index()
        assert second is not first and second.generation == store.generation()
        assert ctx.cached("derived", lambda: object()) is not derived
        assert "d2" in second.documents and "d2" not in first.documents  # the old one was left as it was
        assert ctx._previous == {}  # the older index is not kept once updated

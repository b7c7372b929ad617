"""The shared graph index and the one PageRank."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stratagraph.graph_store import SQLiteGraphStore
from stratagraph.retrieval import RetrievalContext
from stratagraph.retrieval.index import GraphIndex, PageRankParams, column_stochastic, personalized_pagerank
from stratagraph.schema import EdgeType
from tests.graph_store.test_contract import load


def test_index_holds_the_graph_without_text(tmp_path: Path) -> None:
    with SQLiteGraphStore(tmp_path / "g.sqlite") as store:
        load(store)
        ix = GraphIndex.from_store(store)
        assert ix.generation == store.generation()
        assert ix.chunks.ids == ["d1#1#0", "d1#1#1", "d1#2#0", "d2#1#0"]
        assert ix.documents.ids == ["d1", "d2"] and ix.doc_title == ["Acme report", "Alice profile"]
        assert ix.facts_of_entity("ent:alice") == ["fact:founded"] and ix.facts_of_entity("ent:bob") == []
        assert ix.entities_of_fact("fact:founded") == ["ent:acme", "ent:alice"]
        assert ix.chunks_of_fact("fact:founded") == ["d1#1#0"] and ix.chunks_of_fact("nope") == []
        assert ix.section_parent == {"d1::sA": "d1", "d1::sA.1": "d1::sA", "d1::sB": "d1", "d2::s1": "d2"}
        assert ix.own_chunks["d1::sB"] == ("d1#1#0", "d1#1#1")
        assert ix.related[ix.entities.pos["ent:alice"], ix.entities.pos["ent:bob"]] == 1
        assert [e.dst for e in ix.edges_of(EdgeType.CITES)] == ["d1"]
        assert ix.entity_chunk[ix.entities.pos["ent:alice"]].nnz == 2


def test_context_rebuilds_the_index_after_a_write_only(tmp_path: Path) -> None:
    with SQLiteGraphStore(tmp_path / "g.sqlite") as store:
        load(store, "d1")
        ctx = RetrievalContext(graph=store, vectors=None)  # type: ignore[arg-type]
        first = ctx.index()
        assert ctx.index() is first  # no write, no rebuild
        load(store, "d2")
        assert ctx.index() is not first and "d2#1#0" in ctx.index().chunks


def test_pagerank_matches_the_closed_form() -> None:
    weighted = {(0, 1): 2.0, (1, 2): 1.0, (2, 0): 1.0, (2, 3): 3.0, (3, 4): 0.5}
    transition, dangling = column_stochastic(weighted, 5)
    reset = np.array([1.0, 0, 0, 0, 3.0], dtype=np.float32)
    params = PageRankParams(damping=0.85, max_iter=500, tol=1e-12)
    got = personalized_pagerank(transition, dangling, reset, params)
    a = np.zeros((5, 5))
    for (s, t), w in weighted.items():
        a[s, t] += w
        a[t, s] += w
    p = a / a.sum(axis=1, keepdims=True)
    want = np.linalg.solve(np.eye(5) - 0.85 * p.T, 0.15 * reset / reset.sum())
    assert got == pytest.approx(want, abs=1e-5)
    assert got.sum() == pytest.approx(1.0, abs=1e-5) and not dangling.any()


def test_pagerank_dangling_mass_restarts_at_the_seeds() -> None:
    transition, dangling = column_stochastic({(0, 1): 1.0}, 3)  # node 2 has no edges
    got = personalized_pagerank(transition, dangling, np.array([0, 0, 1.0], dtype=np.float32))
    assert dangling.tolist() == [False, False, True]
    assert got == pytest.approx([0.0, 0.0, 1.0])
    assert not personalized_pagerank(transition, dangling, np.zeros(3, dtype=np.float32)).any()

"""The baselines (vector, lexical, rrf), the registry and the evidence shape, on a hand-built graph."""

from __future__ import annotations

import pytest

from stratagraph.retrieval import RetrievalError, retrieve, rrf
from stratagraph.retrieval.base import parse_filters, vector_filters
from tests.retrieval.graph_builder import GraphBuilder


@pytest.fixture
def ctx(settings):
    g = GraphBuilder(settings)
    g.doc("solar", "Solar Power Report", metadata={"year": 2024})
    g.section("solar", "solar/s1", "Panels")
    g.chunk("solar/s1", "solar#1#0", "Photovoltaic panels convert sunlight into electricity on rooftops.")
    g.chunk("solar/s1", "solar#1#1", "Panel prices fell sharply between 2010 and 2020.")
    g.doc("wind", "Wind Power Report", metadata={"year": 2023})
    g.section("wind", "wind/s1", "Turbines")
    g.chunk("wind/s1", "wind#1#0", "Offshore wind turbines produce electricity from strong sea winds.")
    g.chunk("wind/s1", "wind#1#1", "The zygomorphic gearbox of turbine model XK-9 failed twice.")
    ctx = g.build()
    yield ctx
    g.close()


def test_vector_ranks_the_paraphrase_first_with_provenance(ctx):
    res = retrieve(ctx, "vector", "solar cells turning sunshine into power", k=2)
    top = res.evidence[0]
    assert top.chunk_id == "solar#1#0"
    assert (top.doc_id, top.title, top.source, top.section_id) == ("solar", "Solar Power Report", "solar.md", "solar/s1")
    assert top.section == "Solar Power Report > Panels"
    assert [e.rank for e in res.evidence] == [1, 2]
    assert res.evidence[0].score >= res.evidence[1].score


def test_lexical_finds_the_rare_word(ctx):
    res = retrieve(ctx, "lexical", "zygomorphic gearbox", k=3)
    assert [e.chunk_id for e in res.evidence] == ["wind#1#1"]


def test_filters_apply_to_every_baseline(ctx):
    for name in ("vector", "lexical", "rrf"):
        res = retrieve(ctx, name, "electricity", k=4, filters={"year": "2023"})
        assert res.evidence and {e.doc_id for e in res.evidence} == {"wind"}, name


def test_rrf_equals_hand_computed_fusion():
    fused = rrf([["a", "b", "c"], ["c", "a", "d"]], k=60)
    expected = {"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 63}
    assert [s.id for s in fused] == ["a", "c", "b", "d"]
    for s in fused:
        assert s.score == pytest.approx(expected[s.id])
    # ties break by id, weights scale a list
    assert [s.id for s in rrf([["y"], ["x"]])] == ["x", "y"]
    assert [s.id for s in rrf([["y"], ["x"]], weights=[2.0, 1.0])] == ["y", "x"]


def test_unknown_strategy_empty_question_and_bad_filter_are_clear(ctx):
    with pytest.raises(RetrievalError, match="unknown retrieval strategy 'nope'"):
        retrieve(ctx, "nope", "x")
    with pytest.raises(RetrievalError, match="empty"):
        retrieve(ctx, "vector", "   ")
    with pytest.raises(RetrievalError, match="key=value"):
        parse_filters(["year"])
    assert vector_filters({"year": "2024"}) == {"year": ["2024", 2024]}

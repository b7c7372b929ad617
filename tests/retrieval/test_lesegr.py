"""LeSeGR (CG-RAG §4.3-4.4): sparse-gated dense message passing over the chunk graph, on hand-built graphs
written through the real stores, plus the equations on hand-made vectors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from stratagraph.retrieval import retrieve
from stratagraph.retrieval.lesegr import (
    LeSeGRParams,
    build_chunk_graph,
    lesegr,
    message_senders,
    messages,
    propagate,
)

QUERY = "Which enzyme binds the Korvath zygote receptor in the Plimsoll assay?"
A = "zeta#1#0"  # cited by B
A_COPY = "alpha#1#0"  # the same text, no links; sorts before A, so a tie would put it first
B = "beta#1#0"
TWIN_TEXT = "The Xylo enzyme binds a membrane receptor during cell division."


@pytest.fixture
def ctx(builder):
    g = builder
    g.doc("alpha", "Enzyme Notes", metadata={"year": 2023})
    g.section("alpha", "alpha/s1", "Binding")
    g.chunk("alpha/s1", A_COPY, TWIN_TEXT)
    g.doc("zeta", "Enzyme Notes", metadata={"year": 2023})
    g.section("zeta", "zeta/s1", "Binding")
    g.chunk("zeta/s1", A, TWIN_TEXT)
    g.section("zeta", "zeta/s2", "Purification")
    g.chunk("zeta/s2", "zeta#1#1", "Purification used a nickel column and imidazole buffer.")
    g.doc("beta", "Assay Report", metadata={"year": 2024})
    g.section("beta", "beta/s1", "Methods")
    g.chunk("beta/s1", B, "The Plimsoll assay measures the Korvath zygote receptor; its ligand was reported earlier.")
    g.doc("other", "Weather", metadata={"year": 2023})
    g.section("other", "other/s1", "Rain")
    g.chunk("other/s1", "other#1#0", "Rainfall in the valley doubled during the monsoon season.")
    g.chunk("other/s1", "other#1#1", "Storm drains overflowed twice in August.")
    g.edge("CITES", B, A, weight=0.8)
    return g.build()


def _rank(result, chunk_id: str) -> int:
    return [e.chunk_id for e in result.evidence].index(chunk_id)


def test_cited_chunk_outranks_its_uncited_look_alike(ctx):
    res = retrieve(ctx, "lesegr", QUERY, k=5)
    ids = [e.chunk_id for e in res.evidence]
    assert A in ids and A_COPY in ids
    assert _rank(res, A) < _rank(res, A_COPY)
    scores = lesegr(ctx, QUERY, 5, LeSeGRParams())
    a, copy = scores[A], scores[A_COPY]
    assert a.own == pytest.approx(copy.own)  # same text, same section title: same own relevance
    assert copy.message == 0 and a.message > 0
    assert [m.id for m in a.messages] == [B]
    assert res.evidence[_rank(res, A)].via == [B]


def test_contextual_subgraph_lists_the_neighbours(ctx):
    res = retrieve(ctx, "lesegr", QUERY, k=5)
    graphs = res.context["subgraphs"]
    assert set(graphs) == {e.chunk_id for e in res.evidence}
    around_a = graphs[A]["neighbors"]
    assert around_a[0]["id"] == B and around_a[0]["edge_type"] == "CITES"
    assert around_a[0]["direction"] == "in" and around_a[0]["weight"] == pytest.approx(0.8)
    assert around_a[0]["gate"] > 0
    assert {(n["id"], n["edge_type"]) for n in around_a} == {(B, "CITES"), ("zeta#1#1", "NEXT")}
    assert graphs[A]["n_neighbors"] == 2
    assert graphs[A_COPY]["neighbors"] == [] and graphs[A_COPY]["n_neighbors"] == 0
    if B in graphs:
        assert [(n["id"], n["direction"]) for n in graphs[B]["neighbors"]] == [(A, "out")]
    assert graphs[A]["score"] == pytest.approx(res.evidence[_rank(res, A)].score)
    assert json.loads(json.dumps(res.context))["subgraphs"][A]["neighbors"][0]["id"] == B


def test_filters_restrict_centres_and_neighbours(ctx):
    res = retrieve(ctx, "lesegr", QUERY, k=10, filters={"year": "2023"})
    assert res.evidence and {e.doc_id for e in res.evidence} <= {"alpha", "zeta", "other"}
    # B (2024) is filtered out, so it sends no message: A and its copy tie, and the tie goes to the id
    assert _rank(res, A_COPY) < _rank(res, A)
    assert res.evidence[_rank(res, A)].score == pytest.approx(res.evidence[_rank(res, A_COPY)].score)
    assert all(n["id"] != B for n in res.context["subgraphs"][A]["neighbors"])
    only_b = retrieve(ctx, "lesegr", QUERY, k=10, filters={"year": 2024})
    assert [e.chunk_id for e in only_b.evidence] == [B]


def test_same_store_and_query_give_the_same_result(ctx):
    first = retrieve(ctx, "lesegr", QUERY, k=6)
    second = retrieve(ctx, "lesegr", QUERY, k=6)
    assert [(e.chunk_id, e.score) for e in first.evidence] == [(e.chunk_id, e.score) for e in second.evidence]
    assert first.context == second.context
    assert [e.score for e in first.evidence] == sorted((e.score for e in first.evidence), reverse=True)


def test_chunk_graph_expands_documents_and_sections(builder):
    g = builder
    g.doc("p", "Paper", metadata={})
    g.section("p", "p/s1", "Intro")
    g.chunk("p/s1", "p#0", "We build on prior results.")
    g.chunk("p/s1", "p#1", "See the appendix for proofs.")
    g.section("p", "p/s2", "Appendix")
    g.section("p", "p/s2a", "Proofs", level=2, parent="p/s2")
    g.chunk("p/s2a", "p#2", "Proof of lemma one.")
    g.doc("r", "Prior Work", metadata={})
    g.section("r", "r/s1", "Body")
    g.chunk("r/s1", "r#0", "Prior result one.")
    g.chunk("r/s1", "r#1", "Prior result two.")
    g.edge("CITES", "p#0", "r")  # chunk -> document: the cited document's chunks
    g.edge("REFERS_TO", "p#1", "p/s2")  # chunk -> section: that section's (sub)tree of chunks
    g.edge("SIMILAR", "r#1", "p#2", weight=0.7)
    ctx = g.build()
    cg = build_chunk_graph(ctx.index())

    def around(c: str) -> set[tuple[str, str, str, str]]:
        return {(n.id, n.edge_type, n.direction, n.via) for n in cg.neighbours(c)}

    assert around("p#0") == {
        ("p#1", "NEXT", "out", ""), ("r#0", "CITES", "out", "r"), ("r#1", "CITES", "out", "r")
    }
    assert around("p#1") == {
        ("p#0", "NEXT", "in", ""), ("p#2", "NEXT", "out", ""), ("p#2", "REFERS_TO", "out", "p/s2")
    }
    assert around("p#2") == {
        ("p#1", "NEXT", "in", ""), ("p#1", "REFERS_TO", "in", "p/s2"), ("r#1", "SIMILAR", "in", "")
    }
    assert around("r#0") == {("r#1", "NEXT", "out", ""), ("p#0", "CITES", "in", "r")}
    assert ("p#2", "SIMILAR", "out", "") in around("r#1")


def test_message_senders_need_sparse_relevance_and_are_capped(builder):
    g = builder
    g.doc("d", "D", metadata={"year": 1})
    g.section("d", "d/s", "S")
    for i in range(5):
        g.chunk("d/s", f"d#{i}", f"text {i}")
    g.doc("e", "E", metadata={"year": 2})
    g.section("e", "e/s", "S")
    g.chunk("e/s", "e#0", "text e")
    for i in range(1, 5):
        g.edge("SIMILAR", "d#0", f"d#{i}")
    g.edge("SIMILAR", "d#0", "e#0")
    ctx = g.build()
    cg = build_chunk_graph(ctx.index())
    sparse = {"d#1": 1.0, "d#2": 3.0, "d#3": 3.0, "e#0": 5.0}  # d#4 is not in the BM25 list
    assert message_senders(cg, ["d#0"], sparse, None, 10) == {"d#0": ["e#0", "d#2", "d#3", "d#1"]}
    assert message_senders(cg, ["d#0"], sparse, None, 2) == {"d#0": ["e#0", "d#2"]}
    assert message_senders(cg, ["d#0"], sparse, {"d"}, 10) == {"d#0": ["d#2", "d#3", "d#1"]}


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_messages_follow_the_gate_weight_and_value_equations():
    q = _unit(1, 1, 0)
    vecs = {"i": _unit(1, 0, 0), "j": _unit(1, 1, 0), "dup": _unit(1, 0, 0), "far": _unit(-1, 0, 1)}
    alpha = {"j": 0.5, "dup": 1.0, "far": 1.0}
    msgs = {m.id: m for m in messages("i", ["j", "dup", "far"], q, vecs, lambda c: alpha.get(c, 0.0))}
    assert set(msgs) == {"j", "dup"}  # "far" has cos(e_i, e_far) < 0: beta = 0, no message
    beta_j = 1 / math.sqrt(2)
    assert msgs["j"].beta == pytest.approx(beta_j)
    assert msgs["j"].gate == pytest.approx(0.5 * beta_j)
    z = 0.5 * beta_j + 1.0  # the gates add up to more than 1: pi = g / sum g
    assert msgs["j"].weight == pytest.approx(0.5 * beta_j / z)
    assert msgs["dup"].weight == pytest.approx(1.0 / z)
    # e_j - beta e_i = (0, 1/sqrt2, 0)/...: its cosine with q is 1/sqrt2; an exact copy adds nothing
    assert msgs["j"].value == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert msgs["dup"].value == 0.0
    one = messages("i", ["j"], q, vecs, lambda c: alpha.get(c, 0.0))[0]
    assert one.weight == pytest.approx(one.gate)  # gates under 1 in total are not rescaled


def test_without_context_lesegr_is_additive_sparse_dense_fusion():
    """Prop. 4.1: no neighbours -> score = (1 - lambda) d^ + lambda s^ (min-max dense, BM25 / max)."""
    q = _unit(1, 0, 0)
    vecs = {"a": _unit(1, 0, 0), "b": _unit(1, 1, 0), "c": _unit(0, 1, 0)}
    sparse = {"a": 2.0, "c": 8.0}
    params = LeSeGRParams(sparse_weight=0.25, message_weight=0.5)
    out = propagate(["a", "b", "c"], {}, q, vecs, sparse, 8.0, params)
    d = {"a": 1.0, "b": 1 / math.sqrt(2), "c": 0.0}
    for cid in "abc":
        expected = 0.75 * d[cid] + 0.25 * sparse.get(cid, 0.0) / 8.0
        assert out[cid].score == pytest.approx(expected, abs=1e-6)
        assert out[cid].message == 0.0
    with_context = propagate(["a", "b", "c"], {"c": ["b"]}, q, vecs, sparse | {"b": 4.0}, 8.0, params)
    m = with_context["c"].messages[0]
    assert with_context["c"].score == pytest.approx(out["c"].score + 0.5 * m.weight * m.value, abs=1e-6)
    assert m.value > 0 and with_context["c"].score > out["c"].score

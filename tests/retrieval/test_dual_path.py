"""BiG-RAG §4.2 dual-path retrieval on a hand-built entity/fact graph: both paths, their RRF fusion
(checked against hand-computed scores), a fact reached only through a similar entity, and filters."""

from __future__ import annotations

import pytest

from stratagraph.retrieval import dual_path as dp
from stratagraph.retrieval import retrieve


@pytest.fixture
def ctx(founders):
    g = founders  # Acme Corp History / Zeta Labs with their founding chunks, companies and founders
    g.chunk("acme/s1", "acme#1#1", "Acme Corp sells solar panels across Europe.")
    g.chunk("acme/s1", "acme#1#2", "Jonathan Hargreave played the cello in a Leeds orchestra.")
    g.chunk("zeta/s1", "zeta#1#1", "Zeta Labs builds quantum sensors.")
    g.chunk("zeta/s1", "zeta#1#2", "The cafeteria serves soup on Fridays.")  # no fact: reachable by the dense list only
    g.entity("jonathan hargreave", "Jonathan Hargreave", type="PERSON", docs=["acme"])
    # confidences chosen so both paths' orders are unambiguous
    g.fact("f1", "Acme Corp was founded by Bob Smith in 1990.", ["acme", "bob smith"], ["acme#1#0"], confidence=0.9)
    g.fact("f2", "Acme Corp sells solar panels across Europe.", ["acme"], ["acme#1#1"], confidence=0.3)
    g.fact(
        "f3", "Zeta Labs was founded by Carol Jones in 1995.", ["zeta labs", "carol jones"], ["zeta#1#0"], confidence=0.8
    )
    g.fact("f4", "Zeta Labs builds quantum sensors.", ["zeta labs"], ["zeta#1#1"], confidence=0.1)
    g.fact("f5", "Jonathan Hargreave played the cello in a Leeds orchestra.", ["jonathan hargreave"], ["acme#1#2"])
    return g.build()


QUESTION = "Who founded Acme Corp?"


def test_dual_path_fusion_equals_hand_computed_rrf(ctx):
    linked = dp.link_entities(ctx, QUESTION)
    entities, entity_facts = dp.entity_path(ctx, linked)
    # R_E = {Acme Corp} (exact name, sim 1, no entity confidence -> 1); it has two facts, so each gets 1/2
    assert [(e.entity_id, e.weight, e.how) for e in entities] == [("ent:acme", 1.0, "exact")]
    assert [f.id for f in entity_facts] == ["f1", "f2"]
    assert [f.score for f in entity_facts] == pytest.approx([0.9 * 0.5, 0.3 * 0.5])
    assert entity_facts[0].via == ["ent:acme"]

    relation_facts = dp.relation_path(ctx, QUESTION, k_relations=10)
    # every fact is in the pool; sim * conf puts f1 (similar, conf 0.9) first, then f3 (similar, 0.8), f2
    # (less similar, 0.3), f4 (0.1) and the unrelated cello fact f5 (cosine ~0)
    assert [f.id for f in relation_facts] == ["f1", "f3", "f2", "f4", "f5"]
    for f in relation_facts:
        assert f.score <= f.confidence + 1e-9

    fused = dp.fuse_facts([f.id for f in entity_facts], [f.id for f in relation_facts])
    # by hand: rank_E = (f1: 1, f2: 2), rank_R = (f1: 1, f3: 2, f2: 3, f4: 4, f5: 5)
    expected = [
        ("f1", 1 / 61 + 1 / 61),
        ("f2", 1 / 62 + 1 / 63),
        ("f3", 1 / 62),
        ("f4", 1 / 64),
        ("f5", 1 / 65),
    ]
    assert [s.id for s in fused] == [f for f, _ in expected]
    assert [s.score for s in fused] == pytest.approx([score for _, score in expected])
    assert [s.id for s in dp.fuse_facts(["f1", "f2"], [f.id for f in relation_facts], limit=2)] == ["f1", "f2"]

    # the retriever wires the same pieces: its context carries the fused facts with their entities
    res = retrieve(ctx, "dual_path", QUESTION, k=3)
    facts = {f["id"]: f for f in res.context["facts"]}
    assert facts["f1"]["score"] == pytest.approx(2 / 61)
    assert facts["f1"]["entities"] == ["Acme Corp", "Bob Smith"]
    assert facts["f1"]["rank_entity_path"] == 1 and facts["f1"]["rank_relation_path"] == 1
    assert facts["f3"]["rank_entity_path"] is None
    assert res.context["entities"][0]["entity_id"] == "ent:acme"
    # f1's chunk is first in both the fact-derived and the dense list
    assert res.evidence[0].chunk_id == "acme#1#0"
    assert res.evidence[0].via == ["f1"]


def test_passage_ranking_sums_fact_scores_and_keeps_chunks_without_facts(ctx):
    fused = dp.fuse_facts(["f1", "f2"], ["f1", "f4"])  # f1: 2/61, f2: 1/62, f4: 1/62
    chunks = dp.chunks_from_facts(fused, {"f1": ["a", "b"], "f2": ["b"], "f4": ["c"]})
    assert [(c.id, c.via) for c in chunks] == [("b", ["f1", "f2"]), ("a", ["f1"]), ("c", ["f4"])]
    assert chunks[0].score == pytest.approx(2 / 61 + 1 / 62)
    dense = dp.rrf([["z", "c"]])  # a chunk with no fact at all ("z") still ranks
    ranking = dp.passage_ranking(chunks, dense)
    scores = {s.id: s.score for s in ranking}
    assert scores == pytest.approx({"b": 1 / 61, "a": 1 / 62, "c": 1 / 63 + 1 / 62, "z": 1 / 61})
    assert [s.id for s in ranking] == ["c", "b", "z", "a"]

    # end to end: the fact-less cafeteria chunk is reachable through the dense list alone (first there, so
    # it scores 1/61; the five chunks with facts are on both lists of this tiny store and rank above it)
    question = "What does the cafeteria serve on Fridays?"
    assert ctx.chunk_scores(question, 1)[0].id == "zeta#1#2"
    res = retrieve(ctx, "dual_path", question, k=6)
    cafeteria = [e for e in res.evidence if e.chunk_id == "zeta#1#2"]
    assert cafeteria and cafeteria[0].score == pytest.approx(1 / 61) and cafeteria[0].via == []


def test_fact_reached_only_through_a_similar_entity(ctx):
    question = "Did Jon Hargreave found Acme Corp in 1990?"
    params = dp.DualPathParams(k_relations=1)
    # the relation path alone (k_R = 1) does not see the cello fact ...
    assert [f.id for f in dp.relation_path(ctx, question, k_relations=1)] == ["f1"]
    # ... and no exact name matches "Jon Hargreave"; the mention's similar entity is Jonathan Hargreave
    linked = dp.link_entities(ctx, question, params)
    hargreave = [e for e in linked if e.entity_id == "ent:jonathan hargreave"]
    assert hargreave and hargreave[0].how == "similar" and 0.75 <= hargreave[0].score < 1.0
    _, entity_facts = dp.entity_path(ctx, linked)
    assert "f5" in [f.id for f in entity_facts]

    res = dp.retrieve(ctx, question, k=5, params=params)
    facts = {f["id"]: f for f in res.context["facts"]}
    assert facts["f5"]["rank_relation_path"] is None and facts["f5"]["rank_entity_path"] is not None
    assert "acme#1#2" in [e.chunk_id for e in res.evidence]


def test_filters_are_honoured_on_both_paths(ctx):
    question = "Who founded Acme Corp and Zeta Labs?"
    unfiltered = retrieve(ctx, "dual_path", question, k=6)
    assert {f["id"] for f in unfiltered.context["facts"]} >= {"f1", "f3"}

    res = retrieve(ctx, "dual_path", question, k=6, filters={"year": "2023"})
    assert res.evidence and {e.doc_id for e in res.evidence} == {"zeta"}
    assert {f["id"] for f in res.context["facts"]} <= {"f3", "f4"}
    assert "f3" in {f["id"] for f in res.context["facts"]}
    assert "ent:acme" not in {e["entity_id"] for e in res.context["entities"]}
    allowed = ctx.allowed_docs({"year": "2023"})
    assert allowed == {"zeta"}
    linked = dp.link_entities(ctx, question)
    assert {f.id for f in dp.entity_path(ctx, linked, allowed)[1]} <= {"f3", "f4"}
    assert {f.id for f in dp.relation_path(ctx, question, 10, {"year": "2023"})} == {"f3", "f4"}


def test_same_store_same_question_same_result(ctx):
    a = retrieve(ctx, "dual_path", QUESTION, k=5)
    b = retrieve(ctx, "dual_path", QUESTION, k=5)
    assert a.model_dump() == b.model_dump()

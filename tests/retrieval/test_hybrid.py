"""HybridRAG §4.4 on a hand-built graph: the graph context (facts and 1-hop triples of the query
entities), metadata filters on both contexts, and the RRF passage ranking checked by hand."""

from __future__ import annotations

import pytest

from stratagraph.retrieval import hybrid as hy
from stratagraph.retrieval import retrieve
from stratagraph.retrieval.query_linking import link_query


@pytest.fixture
def ctx(founders):
    g = founders  # Acme Corp History / Zeta Labs with their founding chunks, companies and founders
    g.chunk("acme/s1", "acme#1#1", "Acme Corp is headquartered in Denver, where its engineers design solar panels.")
    g.chunk("acme/s1", "acme#1#2", "The annual picnic was held by the river.")
    g.chunk("zeta/s1", "zeta#1#1", "Zeta Labs opened an office in Denver that builds quantum sensors.")
    g.entity("denver", "Denver", type="GPE", docs=["acme", "zeta"])
    g.fact("f1", "Acme Corp was founded by Bob Smith in 1990.", ["acme", "bob smith"], ["acme#1#0"], confidence=0.9)
    g.fact("f2", "Acme Corp is headquartered in Denver.", ["acme", "denver"], ["acme#1#1"], confidence=0.8)
    g.fact("f3", "Zeta Labs was founded by Carol Jones in 1995.", ["zeta labs", "carol jones"], ["zeta#1#0"])
    g.fact("f4", "Zeta Labs opened an office in Denver.", ["zeta labs", "denver"], ["zeta#1#1"], confidence=0.7)
    for chunk, keys in {
        "acme#1#0": ["acme", "bob smith"],
        "acme#1#1": ["acme", "denver"],
        "zeta#1#0": ["zeta labs", "carol jones"],
        "zeta#1#1": ["zeta labs", "denver"],
    }.items():
        for key in keys:
            g.mention(chunk, key)
    g.related("bob smith", "acme", "founded", chunk="acme#1#0")  # chunk listed on the edge
    g.related("acme", "denver", "headquartered_in")  # no chunk listed: chunks mentioning both ends
    g.related("zeta labs", "denver", "has_office_in", chunk="zeta#1#1")
    g.related("carol jones", "zeta labs", "founded", chunk="zeta#1#0")
    return g.build()


def _triples(context: dict) -> set[tuple[str, str, str]]:
    return {(t["subject"], t["predicate"], t["object"]) for t in context["triples"]}


def test_graph_context_holds_the_query_entitys_facts_and_triples(ctx):
    res = retrieve(ctx, "hybrid", "Who founded Acme Corp?", k=3)
    graph = res.context["graph_context"]
    assert [e["id"] for e in graph["entities"]] == ["ent:acme"]
    assert graph["facts"] == [
        {"id": "f1", "description": "Acme Corp was founded by Bob Smith in 1990."},
        {"id": "f2", "description": "Acme Corp is headquartered in Denver."},
    ]
    # 1-hop RELATED triples in either direction, with their predicate; Zeta's triples are not Acme's
    assert _triples(graph) == {("Bob Smith", "founded", "Acme Corp"), ("Acme Corp", "headquartered_in", "Denver")}
    assert res.context["vector_context"] == [h.id for h in ctx.chunk_scores("Who founded Acme Corp?", 3)]

    # supporting chunks: SUPPORTED_BY for facts, props.chunks for the "founded" edge, and for the edge
    # without chunks the chunk that MENTIONS both Acme Corp and Denver
    linked = link_query(ctx, "Who founded Acme Corp?").entities
    gc = hy.graph_context(ctx, linked)
    support = hy.supporting_chunks(ctx, gc)
    assert support.facts == {"f1": ["acme#1#0"], "f2": ["acme#1#1"]}
    by_triple = {(t.subject_id, t.predicate): support.triples.get(i) for i, t in enumerate(gc.triples)}
    assert by_triple == {("ent:bob smith", "founded"): ["acme#1#0"], ("ent:acme", "headquartered_in"): ["acme#1#1"]}
    # Acme Corp has four graph items, so each weighs 1/4; each chunk backs one fact and one triple
    ranking = hy.graph_chunk_ranking(gc, support)
    assert [(c.id, c.score) for c in ranking] == [("acme#1#0", 0.5), ("acme#1#1", 0.5)]
    assert ranking[0].via == ["f1", "ent:bob smith|founded|ent:acme"]


def test_filter_excludes_other_documents_facts_triples_and_chunks(ctx):
    question = "What is in Denver?"
    everything = retrieve(ctx, "hybrid", question, k=5)
    graph = everything.context["graph_context"]
    assert [e["id"] for e in graph["entities"]] == ["ent:denver"]
    assert {f["id"] for f in graph["facts"]} == {"f2", "f4"}
    assert _triples(graph) == {("Acme Corp", "headquartered_in", "Denver"), ("Zeta Labs", "has_office_in", "Denver")}

    res = retrieve(ctx, "hybrid", question, k=5, filters={"year": "2023"})
    graph = res.context["graph_context"]
    assert {f["id"] for f in graph["facts"]} == {"f4"}
    assert _triples(graph) == {("Zeta Labs", "has_office_in", "Denver")}
    assert res.evidence and {e.doc_id for e in res.evidence} == {"zeta"}
    assert all(c.startswith("zeta#") for c in res.context["vector_context"])
    # the supporting chunks themselves are filtered too (the triple Acme-Denver is gone with its chunk)
    allowed = ctx.allowed_docs({"year": "2023"})
    gc = hy.graph_context(ctx, link_query(ctx, question).entities, allowed)
    chunks = hy.graph_chunk_ranking(gc, hy.supporting_chunks(ctx, gc, allowed))
    assert [c.id for c in chunks] == ["zeta#1#1"]


def test_fused_ranking_lifts_a_graph_supported_chunk_above_an_unrelated_dense_hit(ctx):
    question = "Where did Acme Corp hold the annual picnic by the river?"
    dense = ctx.chunk_scores(question, 3)
    # the dense list puts the (unrelated, entity-free) picnic chunk first ...
    assert [h.id for h in dense] == ["acme#1#2", "acme#1#1", "acme#1#0"]
    gc = hy.graph_context(ctx, link_query(ctx, question).entities)
    graph_chunks = hy.graph_chunk_ranking(gc, hy.supporting_chunks(ctx, gc))
    # ... while the graph context of Acme Corp backs its two other chunks (each 1/4 + 1/4, tie -> id)
    assert [c.id for c in graph_chunks] == ["acme#1#0", "acme#1#1"]

    res = retrieve(ctx, "hybrid", question, k=5)
    scores = {e.chunk_id: e.score for e in res.evidence}
    # by hand: score = 1/(60 + dense rank) + 1/(60 + graph rank); the picnic is on the dense list only
    assert scores["acme#1#0"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["acme#1#1"] == pytest.approx(1 / 62 + 1 / 62)
    assert scores["acme#1#2"] == pytest.approx(1 / 61)
    assert [e.chunk_id for e in res.evidence][:3] == ["acme#1#0", "acme#1#1", "acme#1#2"]
    assert res.evidence[0].via  # a graph-backed chunk says which facts/triples put it there


def test_no_linked_entity_leaves_the_vector_ranking(ctx):
    question = "annual outdoor gathering by the water"
    res = retrieve(ctx, "hybrid", question, k=3)
    assert res.context["graph_context"] == {"entities": [], "facts": [], "triples": []}
    assert [e.chunk_id for e in res.evidence] == [h.id for h in ctx.chunk_scores(question, 3)]

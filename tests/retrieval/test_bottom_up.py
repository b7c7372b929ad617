"""``bottom_up`` (BAG-RAG eq. 4): Leiden communities of the instance nodes under the kept sections, on the
hand-built budget tree of ``test_top_down`` plus a knowledge layer, through the real stores."""

from __future__ import annotations

import pytest

from stratagraph.retrieval import RetrievalContext, retrieve
from stratagraph.retrieval import bottom_up as bu
from stratagraph.retrieval import top_down as td
from tests.retrieval.test_top_down import QUERY, build_budget_tree

LEAK = "How many potholes did road crews fill? 4,000 potholes."


@pytest.fixture
def ctx(builder):
    g = builder
    build_budget_tree(g)
    for key, name in [("road crews", "Road Crews"), ("city streets", "City Streets"), ("state grant", "State Grant"),
                      ("inspectors", "Bridge Inspectors"), ("harbor bridge", "Harbor Bridge"),
                      ("teachers union", "Teachers Union")]:
        g.entity(key, name, docs=["budget"])
    g.mention("other#0", "road crews")
    g.mention("other#0", "city streets")
    g.mention("pot#0", "state grant")
    g.mention("bridge#0", "inspectors")
    g.mention("bridge#0", "harbor bridge")
    g.related("road crews", "city streets", "works_on")
    g.fact("f_fill", "Road crews filled 4,000 potholes on city streets", entities=["road crews", "city streets"],
           chunks=["other#0"])
    g.fact("f_grant", "A state grant of two million dollars funds pothole repair", entities=["state grant"],
           chunks=["pot#0"])
    g.fact("f_bridge", "Bridge inspectors examined the Harbor Bridge", entities=["inspectors", "harbor bridge"],
           chunks=["bridge#0"])
    g.fact("f_salary", "The teachers union won a three percent raise", entities=["teachers union"],
           chunks=["salaries#0"])
    # The most query-like statement of the store, supported by a chunk of an unkept section ("Annex Tables",
    # whose heading and text are unrelated) and sharing the entity "Road Crews" with a kept fact.
    g.fact("f_leak", LEAK, entities=["road crews"], chunks=["annex#0"])
    return g.build()


def test_stays_inside_the_kept_sections(ctx):
    # the leaking fact is the closest fact to the question in the whole store ...
    assert ctx.vectors.query("facts", text=QUERY, k=1)[0].id == "f_leak"
    result = bu.run(ctx, QUERY)
    kept = set(result.screening.screening.kept_ids())
    assert "annex" not in kept and {"other", "pot"} <= kept
    # ... yet no community holds it, although its entity "Road Crews" is in one
    fact_ids = {f.id for c in result.communities for f in c.facts}
    assert "f_leak" not in fact_ids and "f_bridge" not in fact_ids and "f_salary" not in fact_ids
    assert "f_fill" in fact_ids
    assert any("Road Crews" in c.members for c in result.communities)
    # every community lives in a kept section, and its evidence is kept chunks only
    assert all(c.section in kept for c in result.communities)
    assert {h.id for h in result.ranking} <= {"other#0", "pot#0", "parkroads#0"}
    assert "annex#0" not in {h.id for h in result.ranking}


def test_communities_layers_and_evidence(ctx):
    result = bu.run(ctx, QUERY)
    top = result.communities[0]
    assert {f.id for f in top.facts} == {"f_fill"}
    assert sorted(top.members) == ["City Streets", "Road Crews"]
    assert (top.section, top.depth) == ("other", 3)
    assert top.score >= result.tau_q
    # aggregated up the section tree: Other Items -> Road Maintenance -> Transportation -> Context(Q)
    by_depth = {layer.depth: {g.section: g.communities for g in layer.groups} for layer in result.layers}
    assert top.id in by_depth[3]["other"]
    assert top.id in by_depth[2]["road"]
    assert top.id in by_depth[1]["tr"]
    assert top.id in by_depth[0][None]
    assert [layer.depth for layer in result.layers] == sorted(by_depth, reverse=True)
    assert result.ranking[0].id == "other#0"
    assert result.fused[0].id == "other#0"


def test_communities_are_deterministic_across_runs(ctx):
    first = retrieve(ctx, "bottom_up", QUERY, k=5)
    fresh = RetrievalContext(graph=ctx.graph, vectors=ctx.vectors, settings=ctx.settings)  # no caches
    second = retrieve(fresh, "bottom_up", QUERY, k=5)
    assert first.context["communities"] == second.context["communities"]
    assert first.context["layers"] == second.context["layers"]
    assert [e.chunk_id for e in first.evidence] == [e.chunk_id for e in second.evidence]
    assert first.context["communities"]  # not vacuous
    assert first.strategy == "bottom_up" and first.evidence[0].chunk_id == "other#0"


def test_leiden_splits_two_cliques_joined_by_one_weak_edge_the_same_way_every_time():
    nodes = ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"]
    pos = {n: i for i, n in enumerate(nodes)}
    edges: dict[tuple[int, int], float] = {}
    for group in (nodes[:4], nodes[4:]):
        for i, x in enumerate(group):
            for y in group[i + 1 :]:
                edges[(pos[x], pos[y])] = 1.0
    edges[(pos["a4"], pos["b1"])] = 0.1
    graph = bu.InstanceGraph(nodes=nodes, edges=edges, facts=set())
    runs = [bu.detect_communities(graph, seed=42, resolution=1.0) for _ in range(3)]
    assert runs[0] == [nodes[:4], nodes[4:]]
    assert runs[0] == runs[1] == runs[2]


def test_instance_graph_takes_only_the_kept_chunks_instances(ctx):
    index = bu.instance_index(ctx)
    graph = bu.instance_graph(index, ["other#0"])
    assert graph.facts == {"f_fill"}
    assert graph.nodes == ["ent:city streets", "ent:road crews", "f_fill"]
    pos = {n: i for i, n in enumerate(graph.nodes)}
    pair = tuple(sorted((pos["ent:city streets"], pos["ent:road crews"])))
    assert graph.edges[pair] == pytest.approx(2.0)  # RELATED + co-mention (1 / (2 - 1))
    assert graph.chunks_of["ent:road crews"] == ["other#0"]  # not annex#0, where f_leak is
    assert td.section_index(ctx).chunk_pos["other#0"] >= 0

"""BiG-RAG algorithmic mode (Alg. 3-5) as the ``traversal`` retriever, on a hand-built graph through the real
stores (SQLite, Chroma, MiniLM, spaCy)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stratagraph.retrieval import retrieve
from stratagraph.retrieval.classify import PARAMS, Complexity, TraversalParams
from stratagraph.retrieval.traversal import SETTINGS, _relation_path, expand, extract_answers, load_index
from stratagraph.schema import EdgeType
from tests.retrieval.graph_builder import GraphBuilder

QUESTION = "Where was the director of Blue Harbor born?"

DISTRACTORS = [
    ("bell", "Tom Bell", "Tom Bell, the film director, was born in Leeds in 1931.", "leeds", "Leeds"),
    ("lind", "Anna Lind", "The film director Anna Lind was born in Malmo.", "malmo", "Malmo"),
    ("reyes", "Carla Reyes", "Director Carla Reyes was born in Seville and made drama films.", "seville", "Seville"),
    ("okafor", "Ben Okafor", "Film director Ben Okafor was born in Lagos.", "lagos", "Lagos"),
]


def _page(g: GraphBuilder, doc: str, title: str, text: str, year: int = 2024) -> str:
    g.doc(doc, title, metadata={"year": year})
    g.section(doc, f"{doc}/s", title)
    g.chunk(f"{doc}/s", f"{doc}#0", text)
    return f"{doc}#0"


@pytest.fixture
def ctx(builder):
    g = builder
    # A -f_direct- B -f_born- C -f_city- D: the question names only A (Blue Harbor)
    _page(
        g,
        "harbor",
        "Blue Harbor",
        "Blue Harbor is a 1950 drama film directed by Mara Quill. It stars Ivo Lenz and Eda Marsh.",
    )
    _page(g, "quill", "Mara Quill", "Mara Quill grew up in Ostrava as the daughter of a coal miner.", year=2020)
    _page(g, "ostrava", "Ostrava", "Ostrava is a city in the Czech Republic.")
    _page(g, "song", "Paper Lanterns", "Paper Lanterns is a song recorded by Lena Vos.")
    _page(g, "vos", "Lena Vos", "Lena Vos came into the world in Utrecht.")
    for key, name, text, place_key, place in DISTRACTORS:
        _page(g, key, name, text)
        g.entity(name.lower(), name, type="PERSON", docs=[key])
        g.entity(place_key, place, type="GPE", docs=[key])
        g.fact(f"f_{key}", text.rstrip("."), entities=[name.lower(), place_key], chunks=[f"{key}#0"], confidence=0.9)
        g.edge("DESCRIBED_BY", f"ent:{name.lower()}", key)
    g.entity("blue harbor", "Blue Harbor", type="WORK_OF_ART", docs=["harbor"])
    g.entity("mara quill", "Mara Quill", type="PERSON", docs=["harbor", "quill"])
    g.entity("ivo lenz", "Ivo Lenz", type="PERSON", docs=["harbor"])
    g.entity("eda marsh", "Eda Marsh", type="PERSON", docs=["harbor"])
    g.entity("ostrava", "Ostrava", type="GPE", docs=["quill", "ostrava"])
    g.entity("czech republic", "Czech Republic", type="GPE", docs=["ostrava"])
    g.entity("lena vos", "Lena Vos", type="PERSON", docs=["song", "vos"])
    g.entity("utrecht", "Utrecht", type="GPE", docs=["vos"])
    g.fact(
        "f_direct",
        "Blue Harbor is a 1950 drama film directed by Mara Quill",
        entities=["blue harbor", "mara quill"],
        chunks=["harbor#0"],
    )
    g.fact(
        "f_cast",
        "It stars Ivo Lenz and Eda Marsh",
        entities=["blue harbor", "ivo lenz", "eda marsh"],
        chunks=["harbor#0"],
    )
    g.fact(
        "f_born",
        "Mara Quill grew up in Ostrava as the daughter of a coal miner",
        entities=["mara quill", "ostrava"],
        chunks=["quill#0"],
    )
    g.fact(
        "f_city",
        "Ostrava is a city in the Czech Republic",
        entities=["ostrava", "czech republic"],
        chunks=["ostrava#0"],
    )
    g.fact("f_song", "Paper Lanterns is a song recorded by Lena Vos", entities=["lena vos"], chunks=["song#0"])
    g.fact("f_vos", "Lena Vos came into the world in Utrecht", entities=["lena vos", "utrecht"], chunks=["vos#0"])
    for key, doc in [("blue harbor", "harbor"), ("mara quill", "quill"), ("ostrava", "ostrava"), ("lena vos", "vos")]:
        g.edge("DESCRIBED_BY", f"ent:{key}", doc)
    return g.build()


def test_expand_reaches_the_two_hop_fact(ctx):
    index = load_index(ctx)
    trace = expand(index, {"ent:blue harbor": 1.0}, PARAMS[Complexity.MODERATE])
    # R_0 = the facts of the seed (hop 0); Mara Quill's fact one entity further (hop 1); then Ostrava's
    assert set(trace.facts_at(0)) == {"f_direct", "f_cast"}
    assert trace.hop_of("f_born") == 1
    assert trace.hop_of("f_city") == 2
    assert trace.hop_of("f_bell") is None  # not connected
    assert trace.hops[1].frontier == ["ent:eda marsh", "ent:ivo lenz", "ent:mara quill"]
    assert trace.stopped == "frontier exhausted"
    assert [h.fact_id for h in trace.ranked] == ["f_cast", "f_direct", "f_born", "f_city"]


def test_scores_decay_with_hops_and_ties_break_by_degree(ctx):
    index = load_index(ctx)
    trace = expand(index, {"ent:blue harbor": 1.0}, PARAMS[Complexity.MODERATE])
    hits = {h.fact_id: h for h in trace.ranked}
    # without a query, score = seed weight * decay^hop * conf
    assert hits["f_direct"].score == pytest.approx(1.0)
    assert hits["f_born"].score == pytest.approx(SETTINGS.hop_decay)
    assert hits["f_city"].score == pytest.approx(SETTINGS.hop_decay**2)
    # equal scores at hop 0: the fact with the larger edge degree deg(e) + deg(r) first (Alg. 4 line 18)
    assert hits["f_cast"].edge_degree == 2 + 3 and hits["f_direct"].edge_degree == 2 + 2
    assert trace.hops[0].facts[0].fact_id == "f_cast"


def test_expand_stops_at_the_hop_limit_and_at_the_target_count(ctx):
    index = load_index(ctx)
    seeds = {"ent:blue harbor": 1.0}
    one_hop = expand(index, seeds, TraversalParams(max_hops=1, target_relations=15))
    assert one_hop.hop_of("f_born") == 1 and one_hop.hop_of("f_city") is None
    assert one_hop.stopped == "max hops"
    no_hop = expand(index, seeds, TraversalParams(max_hops=0, target_relations=15))
    assert set(no_hop.facts_at(0)) == {"f_direct", "f_cast"} and no_hop.hop_of("f_born") is None
    # K = 2 relations are collected at hop 0, so the adaptive stop (line 7) never expands further
    enough = expand(index, seeds, TraversalParams(max_hops=3, target_relations=2))
    assert enough.stopped == "target reached" and len(enough.hops) == 1 and len(enough.ranked) == 2


def test_query_relevance_orders_the_facts_of_a_hop(ctx):
    from stratagraph.retrieval.traversal import FactRelevance, fact_vectors

    index = load_index(ctx)
    rel = FactRelevance(index, fact_vectors(ctx, index), ctx.query_vector("Who directed the film Blue Harbor?"))
    trace = expand(index, {"ent:blue harbor": 1.0}, PARAMS[Complexity.SIMPLE], relevance=rel)
    assert trace.ranked[0].fact_id == "f_direct"
    assert trace.ranked[0].relevance > next(h.relevance for h in trace.ranked if h.fact_id == "f_cast")
    # ExtractAnswer: the director, not the seed, is the candidate answer
    answers = extract_answers(index, trace, ["ent:blue harbor"])
    assert next(iter(answers)) == "ent:mara quill"


def test_traversal_retrieves_the_answer_two_hops_from_the_named_entity(ctx):
    res = retrieve(ctx, "traversal", QUESTION, k=3)
    ids = [e.chunk_id for e in res.evidence]
    assert "quill#0" in ids  # Mara Quill's page: reached only through the director fact
    answer = res.evidence[ids.index("quill#0")]
    assert {"ent:mara quill", "f_born"} <= set(answer.via)  # her page (bound answer) and her fact
    assert res.strategy == "traversal" and len(ids) == 3
    dense = [e.chunk_id for e in retrieve(ctx, "vector", QUESTION, k=3).evidence]
    assert "quill#0" not in dense  # the dense list alone misses it
    c = json.loads(json.dumps(res.context))  # JSON-serialisable
    assert c["classification"]["label"] == "COMPLEX"
    assert [s["target"] for s in c["sub_queries"]] == ["var1", "final_answer"]
    first, final = c["runs"]
    assert [s["entity_id"] for s in first["seeds"]] == ["ent:blue harbor"]
    assert first["bindings"][0]["entity_id"] == "ent:mara quill"
    assert "ent:mara quill" in [s["entity_id"] for s in final["seeds"]]
    # ReplaceVariables: the bound answer seeds the next sub-question at full weight, as a name written in it
    # would, whatever its (small) answer score; other candidates keep their share of it
    assert 0 < first["bindings"][0]["score"] < 1
    assert {s["entity_id"]: s["weight"] for s in final["seeds"]}["ent:mara quill"] == 1.0
    assert "f_born" in [f["fact_id"] for f in final["hops"][0]["facts"]]


def test_replace_variables_seeds_the_best_answer_at_one_and_the_others_in_proportion():
    from stratagraph.retrieval.traversal import replace_variables

    assert replace_variables({"ent:a": 0.4, "ent:b": 0.2, "ent:c": 0.1}) == pytest.approx(
        {"ent:a": 1.0, "ent:b": 0.5, "ent:c": 0.25}
    )
    assert replace_variables({}) == {}


def test_a_quoted_page_title_seeds_the_walk_when_no_entity_has_that_name(ctx):
    res = retrieve(ctx, "traversal", "Where was the performer of song Paper Lanterns born?", k=4)
    first = res.context["runs"][0]
    assert first["start"] == "pages" and "song" in first["pages"]
    assert first["bindings"][0]["entity_id"] == "ent:lena vos"
    assert {"song#0", "vos#0"} <= {e.chunk_id for e in res.evidence}


def test_relation_path_starts_a_sub_question_that_links_nothing(ctx):
    res = retrieve(ctx, "traversal", "which town did the coal miner's daughter grow up in", k=3)
    runs = res.context["runs"]
    assert runs[0]["start"] == "relations" and not runs[0]["seeds"]
    assert "f_born" in [f["fact_id"] for f in runs[0]["hops"][0]["facts"]]
    assert res.evidence[0].chunk_id == "quill#0"


def test_relation_path_breaks_ties_by_fact_id(ctx):
    index = load_index(ctx)
    scores = np.full(len(index.fact_ids), 0.5)
    scores[-1] = 0.9  # the best fact, then the tied rest: the lowest ids win the remaining two places
    assert set(_relation_path(index, scores, 3, None)) == {index.fact_ids[-1], *index.fact_ids[:2]}
    hidden = np.ones(len(index.fact_ids), dtype=bool)
    hidden[0] = False  # a filtered-out fact is never a starting relation
    assert set(_relation_path(index, scores, 3, hidden)) == {index.fact_ids[-1], *index.fact_ids[1:3]}


def test_filters_hide_facts_and_chunks_of_other_documents(ctx):
    res = retrieve(ctx, "traversal", QUESTION, k=5, filters={"year": "2024"})
    assert res.evidence and all(e.metadata["year"] == 2024 for e in res.evidence)
    assert "quill#0" not in [e.chunk_id for e in res.evidence]
    reached = {f["fact_id"] for run in res.context["runs"] for h in run["hops"] for f in h["facts"]}
    assert "f_born" not in reached and "f_direct" in reached


def test_same_store_and_question_give_the_same_result(ctx):
    a = retrieve(ctx, "traversal", QUESTION, k=5)
    b = retrieve(ctx, "traversal", QUESTION, k=5)
    assert [(e.chunk_id, e.score) for e in a.evidence] == [(e.chunk_id, e.score) for e in b.evidence]
    assert a.context == b.context


def test_a_store_without_facts_falls_back_to_the_dense_ranking(builder):
    _page(builder, "solar", "Solar Power", "Photovoltaic panels convert sunlight into electricity.")
    _page(builder, "wind", "Wind Power", "Offshore turbines turn sea winds into electricity.")
    ctx = builder.build()
    q = "Who makes electricity from sunlight?"
    res = retrieve(ctx, "traversal", q, k=2)
    assert [e.chunk_id for e in res.evidence] == [e.chunk_id for e in retrieve(ctx, "vector", q, k=2).evidence]
    assert res.context["graph_chunks"] == [] and all(not r["ranked"] for r in res.context["runs"])


def test_extract_answer_prefers_the_type_the_sub_question_asks_for(ctx):
    from stratagraph.retrieval.traversal import expected_labels

    index = load_index(ctx)
    assert index.entity_type[index.entity_pos["ent:ostrava"]] == "GPE"
    trace = expand(index, {"ent:mara quill": 1.0}, PARAMS[Complexity.SIMPLE])  # her facts: Blue Harbor, Ostrava
    untyped = extract_answers(index, trace, ["ent:mara quill"], ratio=0.0)
    typed = extract_answers(index, trace, ["ent:mara quill"], ratio=0.0,
                            expected=expected_labels("What is the birthplace of Mara Quill?"))  # fmt: skip
    assert expected_labels("What is the birthplace of Mara Quill?") == frozenset({"GPE", "LOC", "FAC"})
    assert expected_labels("What year was Blue Harbor made?") == frozenset()
    assert typed["ent:ostrava"] == pytest.approx(untyped["ent:ostrava"])  # a place: unchanged
    assert typed["ent:blue harbor"] == pytest.approx(untyped["ent:blue harbor"] * 0.5)  # a work of art: halved


def test_entity_types_of_any_extractor_are_read_for_the_expected_type():
    from stratagraph.retrieval.traversal import TYPE_MISMATCH, TYPE_UNKNOWN, _type_weight

    place = frozenset({"GPE", "LOC", "FAC"})
    assert _type_weight("GPE", place) == 1.0 and _type_weight("LOCATION", place) == 1.0  # the LLM extractor's
    assert _type_weight("organization", frozenset({"ORG"})) == 1.0
    for weak in ("", "PROPN", "THING", "LINE_ITEM"):
        assert _type_weight(weak, place) == TYPE_UNKNOWN < 1.0
    assert _type_weight("PERSON", place) == TYPE_MISMATCH < TYPE_UNKNOWN


def test_each_sub_question_passes_its_expected_type_to_extract_answer(ctx, monkeypatch):
    """The walk hands ExtractAnswer the labels each sub-question asks for: a place for "the birthplace of ...",
    a person for "the director of ...", none for a question about a year."""
    import stratagraph.retrieval.traversal as T

    seen: list[frozenset[str]] = []
    real = T.extract_answers

    def spy(index, trace, exclude, *args, expected=frozenset(), **kwargs):  # noqa: ANN001, ANN002, ANN003
        seen.append(expected)
        return real(index, trace, exclude, *args, expected=expected, **kwargs)

    monkeypatch.setattr(T, "extract_answers", spy)
    res = retrieve(ctx, "traversal", "What is the birthplace of the director of Blue Harbor?", k=4)
    asked = [r["sub_query"]["text"] for r in res.context["runs"]]
    assert asked == ["What is the director of Blue Harbor?", "What is the birthplace of {var1}?"]
    assert seen == [frozenset({"PERSON"}), frozenset({"GPE", "LOC", "FAC"})]
    assert res.context["runs"][1]["bindings"][0]["entity_id"] == "ent:ostrava"


def test_bipartite_index_is_the_layer_its_edges_say(ctx):
    """The arrays built from the shared index's edge positions hold what the edges say, read one by one."""
    ix, index = ctx.index(), load_index(ctx)
    facts_of: dict[str, set[str]] = {}
    chunks_of: dict[str, set[str]] = {}
    for e in ix.edges_of(EdgeType.IN_FACT):
        facts_of.setdefault(e.src, set()).add(e.dst)
    for e in ix.edges_of(EdgeType.SUPPORTED_BY):
        chunks_of.setdefault(e.src, set()).add(e.dst)
    described = {e.src: set(ix.page_chunks(e.dst)) for e in ix.edges_of(EdgeType.DESCRIBED_BY)}
    assert index.entity_ids == sorted(set(facts_of) | set(described))
    for ent, facts in facts_of.items():
        i = index.entity_pos[ent]
        assert [index.fact_ids[j] for j in index.facts_of(i)] == sorted(facts)
        for j in index.facts_of(i):
            assert i in index.entities_of(j).tolist()
    for j, fact in enumerate(index.fact_ids):
        assert index.fact_chunks[j] == tuple(sorted(chunks_of.get(fact, ())))
        assert index.fact_weight[j] == pytest.approx(index.fact_conf[j] * max(len(chunks_of.get(fact, ())), 1))
    for chunk, js in index.chunk_facts.items():
        assert [index.fact_ids[j] for j in js] == sorted(f for f, cs in chunks_of.items() if chunk in cs)
    assert {index.entity_ids[i]: set(cs) for i, cs in index.entity_pages.items()} == {e: cs for e, cs in described.items() if cs}
    assert index.entity_type[index.entity_pos["ent:mara quill"]] == "PERSON"

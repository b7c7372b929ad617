"""``ppr`` on a hand-built graph: the walk from the question's entity reaches the page of what that
entity's page mentions (a second hop) and outranks a look-alike that only shares words with the question."""

from __future__ import annotations

import numpy as np
import pytest

from stratagraph.retrieval import retrieve
from stratagraph.retrieval import ppr as P
from stratagraph.retrieval.query_linking import link_query
from tests.retrieval.graph_builder import GraphBuilder

QUESTION = "Where was the director of Moonfall Harbor born?"


@pytest.fixture
def ctx(settings):
    g = GraphBuilder(settings)
    g.doc("film", "Moonfall Harbor", metadata={"kind": "wiki"})
    g.section("film", "film/s", "Moonfall Harbor")
    g.chunk("film/s", "film#1#0", "Moonfall Harbor is a 1994 drama film directed by Ilse Varga.")
    g.doc("varga", "Ilse Varga", metadata={"kind": "wiki"})
    g.section("varga", "varga/s", "Ilse Varga")
    g.chunk("varga/s", "varga#1#0", "Ilse Varga (1950-2011) was a Hungarian filmmaker from Pécs.")
    g.doc("decoy", "Harbor Directors Guild", metadata={"kind": "guild"})
    g.section("decoy", "decoy/s", "Harbor Directors Guild")
    g.chunk("decoy/s", "decoy#1#0", "The Harbor Directors Guild asks where a director was born before admitting them.")
    g.doc("other", "Pécs", metadata={"kind": "wiki"})
    g.section("other", "other/s", "Pécs")
    g.chunk("other/s", "other#1#0", "Pécs is a city in southern Hungary.")
    g.entity("moonfall harbor", "Moonfall Harbor", "WORK_OF_ART", docs=["film"])
    g.entity("ilse varga", "Ilse Varga", "PERSON", docs=["film", "varga"])
    g.entity("pecs", "Pécs", "GPE", docs=["varga", "other"])
    g.mention("film#1#0", "moonfall harbor")
    g.mention("film#1#0", "ilse varga")
    g.mention("varga#1#0", "ilse varga")
    g.mention("varga#1#0", "pecs")
    g.mention("other#1#0", "pecs")
    g.edge("DESCRIBED_BY", "ent:moonfall harbor", "film")
    g.edge("DESCRIBED_BY", "ent:ilse varga", "varga")
    g.edge("DESCRIBED_BY", "ent:pecs", "other")
    g.fact("fact:directed", "Moonfall Harbor was directed by Ilse Varga.", ["moonfall harbor", "ilse varga"], ["film#1#0"])
    ctx = g.build()
    yield ctx
    g.close()


def test_the_second_hop_page_outranks_the_look_alike(ctx):
    res = retrieve(ctx, "ppr", QUESTION, k=4)
    order = [e.doc_id for e in res.evidence]
    assert order[:2] == ["film", "varga"]
    assert order.index("varga") < order.index("decoy")
    assert "ent:moonfall harbor" in res.context["seeds"]


def test_hop_lists_are_the_quoted_page_and_its_out_links(ctx):
    params = P.PPRParams()
    wg = P.walk_graph(ctx, params)
    links = link_query(ctx, QUESTION)
    assert [p.title for p in links.pages if p.kind == "document"] == ["Moonfall Harbor"]
    scores = P.run_walk(wg, P.seed_weights(ctx, wg, links, [], params), params)
    linked, outs = P.hop_lists(ctx, wg, links, scores)
    assert linked == ["film#1#0"]
    assert outs == [["varga#1#0"]]  # "Pécs" is two hops out: not an out-link of the question's page
    # two hops: the pages first reached on the second hop, never a page of an earlier list again
    assert P.hop_lists(ctx, wg, links, scores, hops=2)[1] == [["varga#1#0"], ["other#1#0"]]
    assert P.hop_lists(ctx, wg, links, scores, hops=3)[1] == [["varga#1#0"], ["other#1#0"], []]


def test_the_page_lists_follow_the_decomposed_chain(ctx):
    """A question that Alg. 5 decomposes into a chain of three sub-questions (the director of the film,
    that director's birthplace, its country) gets a list of the pages two hops out of its own page; a
    two-step question does not; ``max_page_hops`` caps the chain."""
    three = "In which country is the birthplace of the director of Moonfall Harbor?"
    res = P.retrieve(ctx, three, k=4)
    assert res.context["out_links"] == ["varga#1#0"] and res.context["out_links_further"] == [["other#1#0"]]
    assert "out_link_2" in next(e.via for e in res.evidence if e.chunk_id == "other#1#0")
    assert P.retrieve(ctx, QUESTION, k=4).context["out_links_further"] == []
    assert P.retrieve(ctx, three, k=4, params=P.PPRParams(max_page_hops=1)).context["out_links_further"] == []
    # without the traversal list the chain still comes from Alg. 5
    no_chains = P.PPRParams(fuse_weights=(1, 0, 1, 2, 2, 0))
    assert P.retrieve(ctx, three, k=4, params=no_chains).context["out_links_further"] == [["other#1#0"]]


def test_pagerank_is_a_distribution_that_favours_the_seed(ctx):
    params = P.PPRParams()
    wg = P.walk_graph(ctx, params)
    x = P.run_walk(wg, {"ent:ilse varga": 1.0}, params)
    assert x.sum() == pytest.approx(1.0, abs=1e-4)
    assert int(np.argmax(x)) == wg.index["ent:ilse varga"]
    # mass reaches both pages Ilse Varga's entity touches, more than the page two hops away
    assert x[wg.index["varga#1#0"]] > x[wg.index["other#1#0"]] > 0


def test_ppr_is_deterministic_and_filtered(ctx):
    a = retrieve(ctx, "ppr", QUESTION, k=4)
    b = retrieve(ctx, "ppr", QUESTION, k=4)
    assert [e.model_dump() for e in a.evidence] == [e.model_dump() for e in b.evidence]
    wiki = retrieve(ctx, "ppr", QUESTION, k=4, filters={"kind": "wiki"})
    assert [e.doc_id for e in wiki.evidence][:2] == ["film", "varga"]
    assert "decoy" not in {e.doc_id for e in wiki.evidence}
    assert [e.doc_id for e in retrieve(ctx, "ppr", QUESTION, k=4, filters={"kind": "guild"}).evidence] == ["decoy"]


def test_the_fused_lists_are_reported_and_traversal_can_be_switched_off(ctx):
    res = retrieve(ctx, "ppr", QUESTION, k=4)
    assert res.context["pages"] == ["film#1#0"] and res.context["out_links"] == ["varga#1#0"]
    assert res.context["traversal_top"], "the fact chain from Moonfall Harbor reaches its chunk"
    top = res.evidence[0]
    assert top.chunk_id == "film#1#0" and {"page", "ppr"} <= set(top.via)
    no_chains = P.retrieve(ctx, QUESTION, k=4, params=P.PPRParams(fuse_weights=(1, 0, 1, 1, 2, 0)))
    assert "traversal_top" in no_chains.context and no_chains.context["traversal_top"] == []


def test_the_question_adaptive_weights(ctx):
    """Anchored to a page: the graph fusion; not anchored: dense + BM25 as rrf, the graph lists back in
    proportion to how few documents the named entities appear in (cubed)."""
    params = P.PPRParams()
    wg = P.walk_graph(ctx, params)
    anchored = link_query(ctx, QUESTION)
    assert P.anchored(wg, anchored) and P.fusion_weights(wg, anchored, params) == list(params.fuse_weights)
    nothing = link_query(ctx, "what happened next?")
    assert not P.anchored(wg, nothing) and P.fusion_weights(wg, nothing, params) == [0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert P.document_specificity(wg, nothing, params.specificity_scale) == 0.0
    # "Pécs" has a page, so it anchors; without its DESCRIBED_BY edge it would be an unpaged name seen in 2 of 4
    # documents: it narrows the store from 5 to 3 (with one added to each), against 1000 to 1 for a fully
    # specific name: ln(5/3)/ln(1000) = 0.074, cubed 0.0004
    pecs = link_query(ctx, "Which films were made in Pécs?")
    pecs.pages = []
    unpaged = P.WalkGraph(**{**wg.__dict__, "pages": {}})
    s = P.document_specificity(unpaged, pecs, params.specificity_scale)
    assert s == pytest.approx(np.log(5 / 3) / np.log(1000))
    assert P.document_specificity(unpaged, pecs, scale=5) == pytest.approx(np.log(5 / 3) / np.log(5))
    assert P.fusion_weights(unpaged, pecs, params) == pytest.approx([s**3, 1 - s**3, 1.0, 0.0, 0.0, s**3])
    big = P.WalkGraph(**{**unpaged.__dict__, "documents": 10**6})  # the same name in a store of a million
    assert P.document_specificity(big, pecs, params.specificity_scale) == 1.0
    # the weights read the scale from the parameters
    narrow = P.PPRParams(specificity_scale=5)
    assert P.fusion_weights(unpaged, pecs, narrow)[0] == pytest.approx((np.log(5 / 3) / np.log(5)) ** 3)


def test_default_is_the_adaptive_ppr_and_says_which_regime(ctx):
    graph = retrieve(ctx, "default", QUESTION, k=4)
    assert graph.strategy == "default" and graph.context["regime"] == "graph"
    assert [e.chunk_id for e in graph.evidence] == [e.chunk_id for e in retrieve(ctx, "ppr", QUESTION, k=4).evidence]
    text = retrieve(ctx, "default", "which guild asks about birthplaces?", k=2)
    assert text.context["regime"] == "text"
    assert [e.chunk_id for e in text.evidence] == [e.chunk_id for e in retrieve(ctx, "rrf", "which guild asks about birthplaces?", k=2).evidence]


def test_a_question_naming_two_long_titled_papers_gets_the_best_passage_of_each(builder):
    """Titles of up to 24 words link exactly (a paper's is often longer than eight), and the question's own
    pages enter the fusion in turn, the best chunk of each first, so the first paper's other sections do not
    fill the top chunks."""
    long_a = "Migration Fronts of Ferrous Ions in Laid Paper: A Diffusion Model for Dating Iron-Gall Ink"
    long_b = "Hyperspectral Halo Imaging for Automated Iron-Gall Ink Dating"
    for doc, title, texts in [
        ("fe", long_a, ["The halo grows by 0.42 micrometres per decade.", "We sampled 40 letters.", "Ink recipes vary."]),
        ("halo", long_b, ["The halo grows by 0.38 micrometres per decade.", "HaloNet has six layers.", "Training took a day."]),
    ]:
        builder.doc(doc, title)
        for n, text in enumerate(texts):
            builder.section(doc, f"{doc}/s{n}", f"Part {n}")
            builder.chunk(f"{doc}/s{n}", f"{doc}#{n}", text)
    ctx = builder.build()
    question = f"'{long_a}' and '{long_b}' each report a halo growth rate. How far apart are they?"
    assert {p.doc_id for p in link_query(ctx, question).pages} == {"fe", "halo"}
    res = P.retrieve(ctx, question, k=3)
    assert sorted(c.split("#")[0] for c in res.context["pages"][:2]) == ["fe", "halo"]
    assert {e.doc_id for e in res.evidence[:2]} == {"fe", "halo"}
    # the own-pages list takes the pages in turn, at most page_chunks each, whatever the walk prefers
    wg = P.walk_graph(ctx, P.PPRParams())
    links = link_query(ctx, question)
    scores = np.zeros(len(wg.ids))
    for n, cid in enumerate(["fe#0", "fe#1", "fe#2", "halo#0", "halo#1", "halo#2"]):
        scores[wg.index[cid]] = 1.0 - n / 10  # every chunk of "fe" above every chunk of "halo"
    assert P.hop_lists(ctx, wg, links, scores, per_page=2)[0] == ["fe#0", "halo#0", "fe#1", "halo#1"]
    assert len(P.retrieve(ctx, question, k=5, params=P.PPRParams(page_chunks=1)).context["pages"]) == 2


def test_best_per_page_takes_the_best_chunks_of_each_document_in_turn():
    ranked = ["a#2", "a#0", "b#1", "a#1", "c#0", "b#0", "a#3"]
    assert P.best_per_page(ranked, 1) == ["a#2", "b#1", "c#0"]
    assert P.best_per_page(ranked, 3) == ["a#2", "b#1", "c#0", "a#0", "b#0", "a#1"]


def _local(ctx):
    """The same stores, with every store walked by local push (``local_walk_facts=0``)."""
    from stratagraph.retrieval.base import RetrievalContext

    return RetrievalContext(graph=ctx.graph, vectors=ctx.vectors, settings=ctx.settings.model_copy(update={"local_walk_facts": 0}))


def test_the_local_walk_ranks_as_the_whole_graph_walk(ctx):
    local = _local(ctx)
    assert not P.walks_locally(ctx) and P.walks_locally(local)
    params = P.PPRParams()
    wg = P.walk_graph(ctx, params)
    seeds = P.seed_weights(ctx, wg, link_query(ctx, QUESTION), ctx.chunk_scores(QUESTION, 10), params)
    whole = P.walk_scores(ctx, wg, seeds, params)
    pushed = P.walk_scores(local, wg, seeds, params)
    # the push never overestimates (up to the power iteration's own float32 / 1e-6 tolerance) and misses little
    assert pushed.max() > 0 and np.all(pushed <= whole + 1e-6)
    assert np.abs(whole - pushed).sum() < 1e-3
    for k in (2, 4):
        assert [e.chunk_id for e in retrieve(local, "ppr", QUESTION, k=k).evidence] == [
            e.chunk_id for e in retrieve(ctx, "ppr", QUESTION, k=k).evidence
        ]


def test_walk_graph_is_the_walk_over_its_pairs(examples_home):
    """The walk matrix built from the index's edge positions is, node by node, the column-stochastic walk over
    :func:`walk_pairs` (the readable definition), with each entity's chunk and document counts."""
    from stratagraph.graph_store import SQLiteGraphStore
    from stratagraph.retrieval.index import GraphIndex, column_stochastic
    from stratagraph.retrieval.neighbourhood import document_of

    with SQLiteGraphStore(examples_home / "graph.sqlite") as graph:
        index = GraphIndex.from_store(graph)
    wg = P.build_walk_graph(index)
    pairs, mentions, pages = P.walk_pairs(index)
    ids = sorted(set(index.chunks.ids) | {n for pair in pairs for n in pair})
    pos = {n: i for i, n in enumerate(ids)}
    want, _ = column_stochastic({(pos[a], pos[b]): w for (a, b), w in pairs.items()}, len(ids))
    assert set(wg.index) == set(ids)
    order = np.array([wg.index[n] for n in ids])
    assert (abs(wg.transition[order][:, order] - want) > 0).nnz == 0
    assert want.nnz > 1000 and any(w == 2.0 for w in pairs.values())  # DESCRIBED_BY pairs are in it
    for ent in (n for n in ids if n.startswith("ent:")):
        chunks = {c for c, ents in mentions.items() if ent in ents}
        assert wg.chunk_count[wg.index[ent]] == len(chunks), ent
        assert wg.doc_count[wg.index[ent]] == len({document_of(c) for c in chunks}), ent
    assert {c: sorted(set(es)) for c, es in mentions.items()} == {c: sorted(es) for c, es in wg.mentions.items()}
    assert wg.pages == pages

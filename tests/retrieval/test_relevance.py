"""Chunk relevance (issue 20): a page that enters ``ppr`` through a page list brings the chunks of it that
answer the question, not its opening chunks, and a chain's last step brings the chunk that answers it.

The stores are written here: pages whose opening section names the page and its links (what the walk scores
highest) and whose later sections hold the facts a question asks for."""

from __future__ import annotations

import pytest

from stratagraph.retrieval import ppr as P
from stratagraph.retrieval.decompose import SubQuery
from stratagraph.retrieval.relevance import Relevance, relevance
from tests.retrieval.graph_builder import GraphBuilder


def _page(g: GraphBuilder, doc: str, title: str, sections: list[tuple[str, str]]) -> None:
    g.doc(doc, title)
    for n, (heading, text) in enumerate(sections):
        g.section(doc, f"{doc}/s{n}", heading)
        g.chunk(f"{doc}/s{n}", f"{doc}#{n}", text)


@pytest.fixture
def works(builder: GraphBuilder):
    """Brannock Pumpworks (founded by Oda Venn, who was born in Quillby) and Quillby (on the Selder river),
    each with an opening chunk that names the page and its links and later chunks of facts; a look-alike page
    on another pump maker."""
    g = builder
    _page(g, "works", "Brannock Pumpworks", [
        ("Brannock Pumpworks", "Brannock Pumpworks is a maker of steam pumps founded by Oda Venn."),
        ("History", "The firm began in a rented shed and moved to a larger site after a decade."),
        ("Products", "Its beam engine for mine drainage lifted 410 litres per stroke."),
        ("Workforce", "At its peak the firm employed 1,240 workers across two sites."),
    ])  # fmt: skip
    _page(g, "venn", "Oda Venn", [
        ("Oda Venn", "Oda Venn was an engineer and the founder of Brannock Pumpworks."),
        ("Early life", "Venn was born in Quillby in 1841 and trained as a millwright."),
        ("Later years", "She retired to the coast and wrote a memoir about valves."),
    ])  # fmt: skip
    _page(g, "quillby", "Quillby", [
        ("Quillby", "Quillby is a market town known for its Tuesday fair."),
        ("Geography", "The town lies on the Selder, a river 87 kilometres long with a catchment of 1,320 square kilometres."),
        ("Economy", "Quillby's economy rests on wool and on a small brewery."),
    ])  # fmt: skip
    _page(g, "decoy", "Harrow Pump Company", [
        ("Harrow Pump Company", "The Harrow Pump Company made steam pumps and fire engines."),
        ("Workforce", "The company employed about 300 people."),
    ])  # fmt: skip
    g.entity("brannock pumpworks", "Brannock Pumpworks", "ORG", docs=["works", "venn"])
    g.entity("oda venn", "Oda Venn", "PERSON", docs=["works", "venn"])
    g.entity("quillby", "Quillby", "GPE", docs=["venn", "quillby"])
    for chunk, ent in [("works#0", "brannock pumpworks"), ("works#0", "oda venn"), ("venn#0", "oda venn"),
                       ("venn#0", "brannock pumpworks"), ("venn#1", "quillby"), ("quillby#0", "quillby")]:  # fmt: skip
        g.mention(chunk, ent)
    g.edge("DESCRIBED_BY", "ent:brannock pumpworks", "works")
    g.edge("DESCRIBED_BY", "ent:oda venn", "venn")
    g.edge("DESCRIBED_BY", "ent:quillby", "quillby")
    return g


def test_relevance_adds_standardised_dense_and_bm25_scores(works):
    """A chunk that alone holds the question's rare words is first; every chunk asked about is scored, the
    first text's dense ranking can be handed in, and an unscored chunk sorts last."""
    ctx = works.build()
    question = "How many workers did Brannock Pumpworks employ at its peak?"
    rel = relevance(ctx, [question], candidates=["quillby#2"], depth=5)[0]
    assert rel.ranking(1) == ["works#3"]
    assert "quillby#2" in rel.scores  # a candidate outside both top-5 lists is scored too
    assert rel.ranking(allowed={"decoy"}) == [c for c in rel.ranking() if c.startswith("decoy#")]
    assert rel.order(["works#0", "nowhere#9", "works#3"]) == ["works#3", "works#0", "nowhere#9"]
    dense = ctx.chunk_scores(question, 5)
    assert relevance(ctx, [question], ["quillby#2"], depth=5, dense=dense)[0].scores == pytest.approx(rel.scores)
    # BM25 alone (dense weight 0) still puts the chunk with "employed ... workers ... peak" first
    assert relevance(ctx, [question], depth=5, dense_weight=0.0)[0].ranking(1) == ["works#3"]


def test_best_per_page_takes_each_page_chunks_by_relevance():
    order = Relevance(text="q", scores={"a#0": 0.1, "a#2": 3.0, "a#1": 1.0, "b#0": 2.0, "b#1": 0.5})
    walk = ["a#0", "a#1", "b#0", "a#2", "b#1"]  # pages in walk order: a, then b
    assert P.best_per_page(walk, 2) == ["a#0", "b#0", "a#1", "b#1"]
    assert P.best_per_page(walk, 2, order) == ["a#2", "b#0", "a#1", "b#1"]


def test_chain_steps_follow_the_longest_dependency_path():
    subs = [
        SubQuery(text="What is the founder of Brannock Pumpworks?", target="var1", kind="of"),
        SubQuery(text="What is the birthplace of {var1}?", target="var2", depends_on=["var1"], kind="of"),
        SubQuery(text="How long is the river through {var2}?", target="final_answer", depends_on=["var2"]),
    ]
    assert [sq.target for sq in P.chain_steps(subs)] == ["var1", "var2", "final_answer"]
    conjuncts = [
        SubQuery(text="Which is older, A?", target="var1", kind="conjunct"),
        SubQuery(text="Which is older, B?", target="var2", kind="conjunct"),
        SubQuery(text="Which is older, A or B?", target="final_answer", depends_on=["var1", "var2"]),
    ]
    assert [sq.target for sq in P.chain_steps(conjuncts)] == ["final_answer"]
    assert P.chain_steps([]) == []


def test_a_named_page_brings_the_chunk_that_answers_not_its_opening(works):
    """The question names Brannock Pumpworks: its own-pages list holds the workforce chunk first, and the
    chunk is in the top two; by walk score the list led with the page's opening and history chunks."""
    ctx = works.build()
    question = "How many workers did Brannock Pumpworks employ at its peak?"
    res = P.retrieve(ctx, question, k=4)
    assert res.context["pages"][0] == "works#3"
    assert "works#3" in [e.chunk_id for e in res.evidence[:2]]
    assert {"page", "relevance"} <= set(next(e.via for e in res.evidence if e.chunk_id == "works#3"))
    walk_order = P.retrieve(ctx, question, k=4, params=P.PPRParams(pages_by_relevance=False, relevance_weights=(0, 0)))
    assert walk_order.context["pages"][0] != "works#3"


def test_a_chain_brings_the_chunk_of_its_last_step(works):
    """"the river of the birthplace of the founder of X": Alg. 5 leaves "How long is {var}?" as the last
    step; the pages out of the question's page are ranked by their steps and the last step's list is fused,
    so Quillby's geography chunk (87 kilometres), not its opening chunk, leads that list and reaches the top
    five."""
    ctx = works.build()
    question = "How long is the river of the birthplace of the founder of Brannock Pumpworks?"
    res = P.retrieve(ctx, question, k=5)
    assert res.context["last_step"] is not None and res.context["last_step"]["text"].startswith("How long is")
    assert res.context["last_step"]["top"][0] == "quillby#1"
    assert "quillby#1" in [e.chunk_id for e in res.evidence[:5]]
    further = [c for out in res.context["out_links_further"] for c in out] + res.context["out_links"]
    assert "quillby#1" in further and "quillby#0" not in further[: further.index("quillby#1")]


def test_a_question_not_anchored_is_ranked_as_before(works):
    """No page named: no relevance list is fused, and default is rrf's ranking, as in issue 9."""
    ctx = works.build()
    question = "which firm made fire engines?"
    res = P.retrieve(ctx, question, k=3)
    assert not res.context["anchored"] and res.context["relevant"] == [] and res.context["last_step"] is None

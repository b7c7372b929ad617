"""Every named strategy on the bundled examples, the LangChain retriever (sync and async) and
``stratagraph ask --retrieve-only`` (the real CLI in a fresh process)."""

from __future__ import annotations

import asyncio

import pytest

from stratagraph.retrieval import STRATEGIES, RetrievalError
from tests.conftest import EXAMPLES, cli_json, run_cli

QUESTIONS = [
    "How much was adopted for Public Safety in the Riverton FY2025 budget?",
    "What did Northwind Robotics say about gross margin in the third quarter of 2024?",
    "How much does tree canopy cool neighbourhoods at night?",
]


@pytest.fixture(scope="module")
def examples_sg(tmp_path_factory):
    from stratagraph import StrataGraph
    from stratagraph.config import Settings

    sg = StrataGraph(Settings(home=tmp_path_factory.mktemp("examples") / "store"))
    assert sg.ingest([EXAMPLES], base=EXAMPLES.parent).failed == 0
    yield sg
    sg.close()


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_strategy_returns_cited_evidence_on_the_examples(examples_sg, strategy):
    sources = {p.relative_to(EXAMPLES.parent).as_posix() for p in EXAMPLES.rglob("*.md")}
    for question in QUESTIONS:
        res = examples_sg.retrieve(question, strategy=strategy, k=5)
        assert res.strategy == strategy
        assert 1 <= len(res.evidence) <= 5, question
        assert [e.rank for e in res.evidence] == list(range(1, len(res.evidence) + 1))
        assert len({e.chunk_id for e in res.evidence}) == len(res.evidence)
        for e in res.evidence:
            assert e.source in sources and e.chunk_id.startswith(e.doc_id + "#") and e.text
            assert e.section.startswith(e.title)


def test_the_budget_question_finds_the_budget(examples_sg):
    for strategy in STRATEGIES:
        top = examples_sg.retrieve(QUESTIONS[0], strategy=strategy, k=3).evidence
        assert any("riverton" in e.source for e in top), strategy


def test_retriever_sync_and_async_give_documents_keyed_by_chunk(examples_sg):
    retriever = examples_sg.retriever("rrf", k=3, filters={"fiscal_year": "2025"})
    docs = retriever.invoke(QUESTIONS[0])
    assert docs and all(d.id == d.metadata["chunk_id"] for d in docs)
    assert {d.metadata["doc_id"] for d in docs} == {"examples/budget/riverton_city_budget_fy2025.md"}
    assert docs[0].metadata["rank"] == 1 and "section" in docs[0].metadata
    adocs = asyncio.run(retriever.ainvoke(QUESTIONS[0]))
    assert [d.id for d in adocs] == [d.id for d in docs]
    with pytest.raises(RetrievalError, match="unknown retrieval strategy"):
        examples_sg.retriever("nope")


def test_tools_come_from_the_api(examples_sg):
    names = [t.name for t in examples_sg.tools()]
    assert {"search_chunks", "search_entities", "search_facts", "expand_entity", "traverse", "browse_sections",
            "aggregate_communities", "personalized_pagerank", "calculate"} <= set(names)


def test_cli_ask_retrieve_only_json(examples_sg):
    store = str(examples_sg.settings.home)
    code, data, _ = cli_json("ask", QUESTIONS[1], "--strategy", "dual_path", "--retrieve-only", "--k", "3",
                             "--store", store)
    assert code == 0
    assert data["question"] == QUESTIONS[1] and data["strategy"] == "dual_path"
    assert [e["rank"] for e in data["evidence"]] == [1, 2, 3]
    assert set(data["evidence"][0]) == {"rank", "score", "doc_id", "source", "title", "section", "chunk_id", "text"}
    human = run_cli("ask", QUESTIONS[0], "--retrieve-only", "--store", store, "--filter", "fiscal_year=2025")
    assert human.returncode == 0 and "[1] City of Riverton Adopted Budget" in human.stdout


def test_cli_ask_usage_errors(examples_sg):
    store = str(examples_sg.settings.home)
    bad = run_cli("ask", "x", "--strategy", "nope", "--retrieve-only", "--store", store)
    assert bad.returncode == 2 and "unknown strategy 'nope'" in bad.stderr and "ppr" in bad.stderr
    no_llm = run_cli("ask", "x", "--store", store)  # no chat model: a workflow's rule answers, here "not found"
    assert no_llm.returncode == 0 and "(not found)" in no_llm.stdout
    bad_filter = run_cli("ask", "x", "--retrieve-only", "--filter", "year", "--store", store)
    assert bad_filter.returncode == 2 and "key=value" in bad_filter.stderr


def test_cli_ask_on_an_empty_store_and_an_unreachable_chroma(tmp_path):
    code, data, _ = cli_json("ask", "anything?", "--retrieve-only", "--strategy", "traversal",
                             "--store", str(tmp_path / "empty"))
    assert code == 0 and data["evidence"] == []
    from tests.scripted_llm import closed_port

    down = run_cli("ask", "anything?", "--retrieve-only", "--store", str(tmp_path / "s"),
                   env={"STRATAGRAPH_CHROMA_URL": f"http://127.0.0.1:{closed_port()}"})
    assert down.returncode == 1 and "unreachable" in down.stderr and "127.0.0.1" in down.stderr

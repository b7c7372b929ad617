"""Answer metrics: the no-model ones on real answers of the examples store, and HybridRAG's four judged by the
scripted OpenAI-compatible chat server over HTTP (control flow: which prompts, how many requests; arithmetic)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.eval.datasets import Question
from stratagraph.eval.metrics import Judge, citation_validity, computed_share, context_precision_at, gold_recall
from tests.scripted_llm import Reply, user_text

BUDGET_Q = "How much more does the Police Department request than the Fire Department?"


@pytest.fixture(scope="module")
def budget_answer(examples_home: Path):
    with StrataGraph(Settings(home=examples_home)) as sg:
        answer = sg.ask(BUDGET_Q, strategy="kag")
        chunks = {n.id: (n.props["doc_id"], n.props["text"]) for n in sg.graph.nodes_by_label("Chunk")}
    return answer, chunks


def test_citation_validity_holds_for_a_real_answer_and_fails_for_a_forged_quote(budget_answer) -> None:
    answer, chunks = budget_answer
    assert answer.found and answer.kind == "computed"
    assert citation_validity(answer, chunks.get)
    forged = answer.model_copy(deep=True)
    forged.computed.operands[0].citation.quote = "a sentence no chunk holds"
    assert not citation_validity(forged, chunks.get)
    moved = answer.model_copy(deep=True)
    moved.computed.operands[0].citation.doc_id = "examples/earnings/northwind_robotics_q2_2024_earnings_call.md"
    assert not citation_validity(moved, chunks.get)


def test_gold_recall_and_computed_share(budget_answer) -> None:
    answer, _ = budget_answer
    cited = sorted({o.citation.chunk_id for o in answer.computed.operands})
    assert gold_recall(Question(id="q", question=BUDGET_Q, gold_chunks=[cited[0], "nowhere#0#0"]), answer) == 0.5
    assert gold_recall(Question(id="q", question=BUDGET_Q, gold_docs=[answer.citations[0].doc_id]), answer) == 1.0
    assert gold_recall(Question(id="q", question=BUDGET_Q), answer) is None
    spanned = answer.model_copy(update={"kind": "span"})
    assert computed_share([answer, spanned, answer]) == 0.667
    assert computed_share([]) is None


def test_context_precision_at_k_arithmetic() -> None:
    assert context_precision_at([True, False, True]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert context_precision_at([False, True]) == pytest.approx(1 / 2)
    assert context_precision_at([False, False]) == 0.0


@pytest.fixture
def judge(chat_server, tmp_path: Path) -> Judge:
    from stratagraph.embeddings import get_embeddings
    from stratagraph.llm import get_chat_model

    settings = chat_server.settings(tmp_path)
    return Judge(get_chat_model(settings), get_embeddings(settings), n_questions=2)


def _system(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def test_faithfulness_scripted_model_two_calls_supported_over_statements(judge: Judge, chat_server) -> None:
    chat_server.script.extend([
        Reply.json({"statements": ["Police request $18,585 thousand.", "Fire requests $15,780 thousand.", "The gap is $9."]}),
        Reply.json({"verdicts": [{"statement": 1, "reason": "table", "verdict": "Yes"},
                                 {"statement": 2, "reason": "table", "verdict": "Yes"},
                                 {"statement": 3, "reason": "not stated", "verdict": "No"}]}),
    ])  # fmt: skip
    score = judge.faithfulness("How much?", "Police ask 18,585; fire 15,780; the gap is 9.", ["Police: 18,585", "Fire: 15,780"])
    assert score == pytest.approx(2 / 3)
    assert len(chat_server.requests) == 2 and judge.usage.llm_calls == 2
    assert "faithfulness, step 1" in _system(chat_server.requests[0])
    second = user_text(chat_server.requests[1])
    assert "Police: 18,585" in second and "statement 3: The gap is $9." in second


def test_faithfulness_scripted_model_without_context_asks_nothing(judge: Judge, chat_server) -> None:
    assert judge.faithfulness("q", "a", []) is None
    assert chat_server.requests == []


def test_faithfulness_scripted_model_malformed_reply_is_corrected_once(judge: Judge, chat_server) -> None:
    chat_server.script.extend([
        Reply(content="I think the statements are fine"),
        Reply.json({"statements": ["One."]}),
        Reply.json({"verdicts": [{"statement": 1, "reason": "r", "verdict": "yes"}]}),
    ])  # fmt: skip
    assert judge.faithfulness("q", "One.", ["One."]) == 1.0
    assert len(chat_server.requests) == 3


def test_answer_relevance_scripted_model_mean_cosine_with_our_embedder(judge: Judge, chat_server) -> None:
    from stratagraph.embeddings import embed_texts
    from stratagraph.eval.metrics import cosine

    question = "What did the Police Department request for FY2025?"
    generated = ["How much did the Police Department request for fiscal 2025?", "When do parks open?"]
    chat_server.script.append(Reply.json({"questions": generated}))
    score = judge.answer_relevance(question, "$18,585 thousand")
    vectors = embed_texts(judge.embeddings, [question, *generated])
    expected = (cosine(vectors[0], vectors[1]) + cosine(vectors[0], vectors[2])) / 2
    assert score == pytest.approx(expected, abs=1e-6)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert "Generate 2 different questions" in _system(chat_server.requests[0])


def test_context_precision_scripted_model_ranked_verdicts(judge: Judge, chat_server) -> None:
    chat_server.script.append(Reply.json({"verdicts": [{"chunk": 1, "relevant": True}, {"chunk": 2, "relevant": False},
                                                       {"chunk": 3, "relevant": True}]}))  # fmt: skip
    score = judge.context_precision("q", "18,585", ["a", "b", "c"])
    assert score == pytest.approx((1 + 2 / 3) / 2)
    assert "chunk 3:\nc" in user_text(chat_server.requests[0])


def test_context_precision_scripted_model_missing_verdicts_count_as_irrelevant(judge: Judge, chat_server) -> None:
    chat_server.script.append(Reply.json({"verdicts": [{"chunk": 1, "relevant": False}, {"chunk": 2, "relevant": True}]}))
    assert judge.context_precision("q", "gt", ["a", "b", "c", "d"]) == pytest.approx(1 / 2)


def test_context_recall_scripted_model_attributed_over_sentences(judge: Judge, chat_server) -> None:
    chat_server.script.append(Reply.json({"verdicts": [{"sentence": 1, "attributed": True},
                                                       {"sentence": 2, "attributed": False}]}))  # fmt: skip
    score = judge.context_recall("Police asked 18,585. Fire asked 15,780.", ["Police: 18,585"])
    assert score == 0.5
    assert "2. Fire asked 15,780." in user_text(chat_server.requests[0])
    assert judge.context_recall("One sentence.", []) == 0.0
    assert len(chat_server.requests) == 1


def test_score_scripted_model_all_four_in_order(judge: Judge, chat_server) -> None:
    def responder(body: dict) -> Reply:
        system = _system(body)
        if "step 1" in system:
            return Reply.json({"statements": ["A.", "B."]})
        if "step 2" in system:
            return Reply.json({"verdicts": [{"statement": 1, "reason": "", "verdict": "Yes"},
                                            {"statement": 2, "reason": "", "verdict": "Yes"}]})  # fmt: skip
        if "answer relevance" in system:
            return Reply.json({"questions": ["q", "q"]})
        if "context precision" in system:
            return Reply.json({"verdicts": [{"chunk": 1, "relevant": True}]})
        return Reply.json({"verdicts": [{"sentence": 1, "attributed": True}]})

    chat_server.responder = responder
    scores = judge.score(["faithfulness", "answer_relevance", "context_precision", "context_recall"], "q", "A. B.", "gt", ["ctx"])
    assert scores["faithfulness"] == 1.0 and scores["context_precision"] == 1.0 and scores["context_recall"] == 1.0
    assert scores["answer_relevance"] == pytest.approx(1.0, abs=1e-5)  # the generated question is the question
    assert judge.usage.llm_calls == 5 == len(chat_server.requests)
    assert json.loads(json.dumps(scores)) == scores


def test_judge_only_scripted_model_judges_and_the_workflows_answer_without_it(chat_server, tmp_path: Path) -> None:
    """``eval qa --judge-only``: every request the server sees is a judge's prompt; the workflow's answer is its
    no-model one (no LLM calls of its own)."""
    from stratagraph.eval.qa import evaluate_qa

    data = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "report"

    def responder(body: dict) -> Reply:
        system = _system(body)
        if "step 1" in system:
            return Reply.json({"statements": ["A."]})
        return Reply.json({"verdicts": [{"statement": 1, "reason": "", "verdict": "Yes"}]})

    chat_server.responder = responder
    settings = chat_server.settings(tmp_path, extractor="spacy")
    report = evaluate_qa(str(data), ["kag"], settings, limit=1, metrics=["faithfulness"], judge_only=True)
    row = report["results"]["kag"]
    assert report["answered_by"] == "rules (judge only)" and row["llm_calls"] == 0
    assert chat_server.requests and all("faithfulness" in _system(r) for r in chat_server.requests)
    assert row["metrics"]["faithfulness"] == 1.0
    with pytest.raises(Exception, match="judge only"):
        evaluate_qa(str(data), ["kag"], settings, limit=1, metrics=["citation_validity"], judge_only=True)

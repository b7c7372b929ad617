"""``hybrid`` (HybridRAG §4.4): vector context, then graph context, then the answer; with and without a chat
model (the chat model is a scripted one served over real HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.llm import LLMUnavailable
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text
from tests.workflows.conftest import assert_cited, assert_not_found

Q2_REVENUE = "What revenue did Northwind Robotics report for the quarter?"


def test_filtered_by_company_and_quarter_answers_from_that_quarter(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(Q2_REVENUE, "hybrid", filters={"company": "Northwind Robotics", "quarter": "Q2"})
    assert answer.found and answer.strategy == "hybrid"
    assert answer.answer == "$142.6 million"
    assert {c.doc_id for c in answer.citations} == {"examples/earnings/northwind_robotics_q2_2024_earnings_call.md"}
    assert_cited(examples_sg, answer)
    q3 = examples_sg.ask(Q2_REVENUE, "hybrid", filters={"company": "Northwind Robotics", "quarter": "Q3"})
    assert q3.found and "q3" in q3.citations[0].doc_id and q3.answer != answer.answer
    assert [t.node for t in answer.trace] == ["vector_context", "graph_context", "answer"]
    assert answer.usage.llm_calls == 0 and all(not t.llm for t in answer.trace)


def test_a_question_the_documents_cannot_answer_is_not_found(examples_sg: StrataGraph) -> None:
    assert_not_found(examples_sg.ask("Who painted the ceiling of the Sistine Chapel?", "hybrid"))


def test_a_filter_no_document_matches_finds_nothing(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(Q2_REVENUE, "hybrid", filters={"company": "Acme"})
    assert_not_found(answer)
    assert "0 chunks" in answer.trace[0].tool_calls[0].result


# ------------------------------------------------------------------------------------------ with a chat model
def _llm_sg(server: ScriptedChatServer, home: Path, **settings: object) -> StrataGraph:
    return StrataGraph(server.settings(home, llm_cache=False, **settings))


def _answering(amount: str):  # noqa: ANN202
    """A scripted model that answers ``amount``, citing the first passage that states it."""

    def reply(body: dict) -> Reply:
        passages = user_text(body).split("Passages:\n", 1)[1]
        numbered = [p for p in passages.split("\n\n") if p.startswith("[")]
        n = next((i for i, p in enumerate(numbered, start=1) if amount in p), 1)
        return Reply.json({"answer": amount, "found": True, "evidence": [n]})

    return reply


_answer_reply = _answering("$142.6 million")  # answers from the passage that states the revenue


def test_the_model_answers_and_quotes_are_taken_verbatim_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _answer_reply
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(Q2_REVENUE, "hybrid", filters={"quarter": "Q2"})
        assert answer.found and answer.answer == "$142.6 million"
        assert "$142.6 million" in answer.citations[0].quote
        assert_cited(sg, answer)
    assert answer.usage.llm_calls == len(chat_server.requests) == 1
    body = chat_server.requests[0]
    assert body["response_format"]["json_schema"]["name"] == "GeneratedAnswer"
    assert "Knowledge graph context" in user_text(body)  # the graph context after the passages' question


def test_malformed_then_good_reply_against_scripted_http_server(examples_home: Path, chat_server: ScriptedChatServer) -> None:
    chat_server.script.append(Reply(content="The revenue was big."))
    chat_server.responder = _answer_reply
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(Q2_REVENUE, "hybrid", filters={"quarter": "Q2"})
    assert answer.answer == "$142.6 million" and answer.usage.llm_calls == 2 == len(chat_server.requests)
    assert answer.trace[-1].fallback is None


def test_malformed_twice_falls_back_to_extraction_and_says_so_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply(content="no idea")
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(Q2_REVENUE, "hybrid", filters={"quarter": "Q2"})
        assert answer.found and answer.answer == "$142.6 million"  # the no-LLM rule
        assert_cited(sg, answer)
    assert answer.usage.llm_calls == 2 == len(chat_server.requests)
    assert "no usable reply" in (answer.trace[-1].fallback or "")


def test_429_then_good_is_counted_once_per_request_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.error(429, "slow down", **{"Retry-After": "0"}))
    chat_server.responder = _answer_reply
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(Q2_REVENUE, "hybrid", filters={"quarter": "Q2"})
    assert answer.found and answer.usage.llm_calls == 2 == len(chat_server.requests)


def test_an_unreachable_endpoint_is_a_clear_error_naming_it(examples_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = Settings(home=examples_home, llm_model="scripted", openai_base_url=url, request_retries=0,
                        request_timeout=2, llm_cache=False)  # fmt: skip
    with StrataGraph(settings) as sg, pytest.raises(LLMUnavailable, match=url.replace(".", r"\.")):
        sg.ask(Q2_REVENUE, "hybrid")


def test_cli_prints_the_cited_answer_and_node_events(examples_home: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("--store", str(examples_home), "ask", Q2_REVENUE, "--strategy", "hybrid", "--filter", "quarter=Q2",
                   "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "$142.6 million" and data["citations"][0]["chunk_id"]
    assert "vector_context" in proc.stderr and "graph_context" in proc.stderr
    bad = run_cli("--store", str(examples_home), "ask", Q2_REVENUE, "--strategy", "nope")
    assert bad.returncode == 2 and "unknown workflow" in bad.stderr


def test_an_amount_stated_of_another_subject_does_not_stand_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _answering("$18.6 million")  # the Police Department's request
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask("How much does the Fire Department request for FY2025?", "hybrid")
    assert answer.answer != "$18.6 million"  # the Police Department's figure, written in a cited passage
    entry = next(e for e in answer.trace if e.node == "answer")
    assert "stated only of something the question does not name" in (entry.fallback or "")
    assert "$15.8 million" in answer.answer  # the reader, the one fallback


def test_a_computation_asked_is_the_one_computed_in_code_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _answering("$570 thousand")  # a figure the passage states: the Police increase
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask("How much more does the Police Department request than the Fire Department for FY2025?", "hybrid")
    assert answer.kind == "computed" and answer.answer == "$2,805 thousand"
    assert [o.raw for o in answer.computed.operands] == ["18,585", "15,780"]
    entry = next(e for e in answer.trace if e.node == "answer")
    assert "is not the computation asked" in (entry.fallback or "")

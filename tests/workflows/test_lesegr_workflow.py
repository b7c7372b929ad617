"""``lesegr`` (CG-RAG §4.4): LeSeGR retrieval with each chunk's contextual subgraph, a summary per subgraph,
the answer from the summaries with citations into the subgraphs' chunks; with and without a chat model (the
chat model is a scripted one served over real HTTP)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.llm import LLMUnavailable
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text
from tests.workflows.conftest import assert_cited, assert_not_found

SENSORS = "examples/research/a_street_level_sensor_networks.md"  # cited by every other paper
ROOFS = "examples/research/c_cool_roof_retrofits.md"  # cites the sensor network paper as [1]
# a result the sensor network paper reports, asked through the paper that cites it
CITED_Q = (
    "What share of the variance in mean nighttime temperature did impervious surface explain in the sensor "
    "network study that the cool roof paper used?"
)


# ------------------------------------------------------------------------------------------ without a chat model
def test_a_result_of_a_cited_paper_is_answered_from_the_subgraphs_with_citations(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(CITED_Q, "lesegr")
    assert answer.found and answer.strategy == "lesegr"
    assert answer.answer == "61%"
    (cite,) = answer.citations
    assert cite.doc_id == SENSORS and "explained 61% of the variance" in cite.quote
    assert_cited(examples_sg, answer)
    assert [t.node for t in answer.trace] == ["subgraphs", "summarize", "answer"]
    assert answer.usage.llm_calls == 0 and all(not t.llm for t in answer.trace)


def test_the_citing_papers_subgraph_holds_the_cited_papers_chunk(examples_sg: StrataGraph) -> None:
    """Eq. 18: the cool roof paper's method chunk, which cites [1], has the sensor paper's chunks as CITES
    neighbours in its contextual subgraph, so its summary can draw on them."""
    graph = examples_sg.workflow("lesegr")
    state: dict = {}
    for state in graph.stream({"question": CITED_Q}, context=examples_sg.services, stream_mode="values"):
        pass  # the last value is the whole final state
    roofs = [g for g in state["subgraphs"] if g["centre"].startswith(ROOFS)]
    assert roofs, [g["centre"] for g in state["subgraphs"]]
    cites = [n for g in roofs for n in g["neighbours"] if n["edge_type"] == "CITES" and n["direction"] == "out"]
    assert any(n["id"].startswith(SENSORS) for n in cites)
    assert "Summaries of the passages' citation context" in state["summaries"]
    assert any(p.doc_id == SENSORS for p in state["passages"])


def test_a_number_keeps_its_currency_sign(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask("How much did the cool roof retrofit cost per home?", "lesegr")
    assert answer.answer == "$2,900 per home" and answer.citations[0].doc_id == ROOFS
    assert_cited(examples_sg, answer)


def test_a_question_the_documents_cannot_answer_is_not_found(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask("Who painted the ceiling of the Sistine Chapel?", "lesegr")
    assert_not_found(answer)
    assert answer.citations == []


# ------------------------------------------------------------------------------------------ with a chat model
def _schema(body: dict) -> str:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    text = "\n".join(m["content"] for m in body["messages"])
    return next((n for n in ("SubgraphSummary", "GeneratedAnswer") if n in text), "")


def _passage_numbers(text: str, needle: str) -> list[int]:
    blocks = re.split(r"\n\n(?=\[\d+\])", text.split("Passages", 1)[1])
    return [int(m.group(1)) for b in blocks if needle in b and (m := re.search(r"\[(\d+)\]", b))]


def _research_model(body: dict) -> Reply:
    """The scripted model: summarises what each subgraph says about the 61%, and answers from the passage
    that states it."""
    text = user_text(body)
    if _schema(body) == "SubgraphSummary":
        hits = _passage_numbers(text, "61% of the variance")
        if not hits:
            return Reply.json({"summary": "", "passages": []})
        return Reply.json({"summary": "The sensor network paper reports that impervious surface explained 61% "
                                      "of the variance in mean nighttime temperature.", "passages": hits})  # fmt: skip
    if "The sensor network paper reports" not in text:
        return Reply.json({"answer": "", "found": False, "evidence": []})
    n = _passage_numbers(text, "61% of the variance")[0]
    return Reply.json({"answer": "61%", "found": True, "evidence": [n]})


def _llm_sg(server: ScriptedChatServer, home: Path) -> StrataGraph:
    return StrataGraph(server.settings(home, llm_cache=False))


def test_the_model_summarises_each_subgraph_and_answers_from_the_summaries_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _research_model
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(CITED_Q, "lesegr")
        assert_cited(sg, answer)
    assert answer.found and answer.answer == "61%"
    assert answer.citations[0].doc_id == SENSORS and "61%" in answer.citations[0].quote
    names = [_schema(b) for b in chat_server.requests]
    assert names == ["SubgraphSummary"] * 3 + ["GeneratedAnswer"]  # one summary per subgraph (the first three)
    assert "(centre passage)" in user_text(chat_server.requests[0])
    assert "The sensor network paper reports" in user_text(chat_server.requests[-1])  # eq. 19: the summaries
    summarize = next(t for t in answer.trace if t.node == "summarize")
    assert summarize.llm and summarize.fallback is None and "(3 by the chat model" in summarize.decision
    assert answer.usage.llm_calls == len(chat_server.requests) == 4


def test_malformed_then_good_reply_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply(content="It is about heat."))
    chat_server.responder = _research_model
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(CITED_Q, "lesegr")
    assert answer.answer == "61%"
    assert all(t.fallback is None for t in answer.trace)
    assert answer.usage.llm_calls == len(chat_server.requests) == 5


def test_malformed_twice_falls_back_to_extracts_and_says_so_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply(content="no idea")
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(CITED_Q, "lesegr")
        assert_cited(sg, answer)
    assert answer.found and answer.citations  # the no-LLM rules, still cited
    summarize = next(t for t in answer.trace if t.node == "summarize")
    assert "no usable reply" in (summarize.fallback or "")
    assert "no usable reply" in (answer.trace[-1].fallback or "")
    assert answer.usage.llm_calls == len(chat_server.requests) == 8  # 3 summaries and the answer, each twice


def test_429_then_good_is_counted_once_per_request_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.error(429, "slow down", **{"Retry-After": "0"}))
    chat_server.responder = _research_model
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(CITED_Q, "lesegr")
    assert answer.answer == "61%"
    assert answer.usage.llm_calls == len(chat_server.requests) == 5


def test_an_unreachable_endpoint_is_a_clear_error_naming_it(examples_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = Settings(home=examples_home, llm_model="scripted", openai_base_url=url, request_retries=0,
                        request_timeout=2, llm_cache=False)  # fmt: skip
    with StrataGraph(settings) as sg, pytest.raises(LLMUnavailable, match=url.replace(".", r"\.")):
        sg.ask(CITED_Q, "lesegr")


def test_cli_prints_the_cited_answer(examples_home: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("--store", str(examples_home), "ask", CITED_Q, "--strategy", "lesegr", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "61%" and data["citations"][0]["doc_id"] == SENSORS
    assert "subgraphs" in proc.stderr and "summarize" in proc.stderr

"""``bidirectional`` (``bag``, BAG-RAG §3.2): top-down screening with Miss, bottom-up communities, exact
arithmetic over the aggregated quantities with every operand cited; with and without a chat model (the chat
model is a scripted one served over real HTTP)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.answers import Answer
from stratagraph.llm import LLMUnavailable
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text
from tests.workflows.conftest import assert_cited, assert_not_found

BUDGET = "examples/budget/riverton_city_budget_fy2025.md"
POLICE = f"{BUDGET}#1.1.1#1"  # the Police Department's line-item table
FIRE = f"{BUDGET}#1.1.2#1"  # the Fire Department's
SUM_Q = "What is the combined FY2025 adopted overtime budget of the Police Department and the Fire Department?"
DIFF_Q = "How much more is the Police Department's FY2025 equipment budget than the Fire Department's?"


def _operands(answer: Answer) -> list[tuple[str, str, str]]:
    assert answer.computed is not None
    return [(o.raw, o.citation.chunk_id, o.citation.quote) for o in answer.computed.operands]


# ------------------------------------------------------------------------------------------ without a chat model
def test_a_sum_of_line_items_of_two_sections_is_computed_exactly_and_every_operand_cited(
    examples_sg: StrataGraph,
) -> None:
    answer = examples_sg.ask(SUM_Q, "bag")
    assert answer.found and answer.strategy == "bag"
    assert answer.computed is not None and answer.computed.operation == "sum"
    assert answer.computed.result == Decimal("2820000") and answer.computed.unit == "USD"  # 1,170 + 1,650 thousand
    assert answer.answer == "$2,820 thousand"
    assert _operands(answer) == [
        ("1,170", POLICE, "Overtime; FY2024 Actual: 1,320; FY2025 Adopted: 1,170; Change: (150)"),
        ("1,650", FIRE, "Overtime; FY2024 Actual: 1,880; FY2025 Adopted: 1,650; Change: (230)"),
    ]
    assert {c.chunk_id for c in answer.citations} == {POLICE, FIRE}
    assert_cited(examples_sg, answer)
    assert [t.node for t in answer.trace] == ["screen", "aggregate", "calculate", "answer"]
    screen = answer.trace[0]
    assert "Police Department" in screen.decision and "Fire Department" in screen.decision
    assert answer.usage.llm_calls == 0 and all(not t.llm for t in answer.trace)


def test_a_difference_of_line_items_is_computed_exactly_and_every_operand_cited(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(DIFF_Q, "bag")
    assert answer.found and answer.computed is not None
    assert answer.computed.operation == "difference" and answer.computed.expression == "710 - 585"
    assert answer.computed.result == Decimal("125000") and answer.answer == "$125 thousand"
    assert [o.citation.chunk_id for o in answer.computed.operands] == [POLICE, FIRE]
    assert all(o.citation.quote.startswith("Equipment; ") for o in answer.computed.operands)
    assert_cited(examples_sg, answer)


def test_a_change_from_one_period_to_the_next_is_the_later_minus_the_earlier(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(
        "By how much did Police Department overtime change from FY2024 Actual to FY2025 Adopted?", "bag"
    )
    assert answer.computed is not None and answer.computed.expression == "1,170 - 1,320"
    assert answer.computed.result == Decimal("-150000") and answer.answer == "-$150 thousand"
    assert_cited(examples_sg, answer)


def test_a_comparison_answers_with_the_option_and_cites_both_values(examples_sg: StrataGraph) -> None:
    q = "Which had the larger FY2025 adopted overtime budget, the Police Department or the Fire Department?"
    answer = examples_sg.ask(q, "bag")
    assert answer.found and answer.answer == "Fire Department"
    assert answer.computed is not None and answer.computed.result == "Fire Department"
    assert sorted(o.raw for o in answer.computed.operands) == ["1,170", "1,650"]
    assert_cited(examples_sg, answer)


def test_a_hierarchy_question_is_answered_with_the_heading_of_the_section_that_holds_the_answer(
    examples_sg: StrataGraph,
) -> None:
    answer = examples_sg.ask("Which section describes the regional dispatch agreement with Harlow County?", "bag")
    assert answer.found and answer.answer == "Police Department" and answer.computed is None
    (cite,) = answer.citations
    assert cite.chunk_id == f"{BUDGET}#1.1.1#0" and "regional dispatch agreement" in cite.quote
    assert cite.section.endswith("1.1.1 Police Department")
    assert_cited(examples_sg, answer)
    assert [t.node for t in answer.trace] == ["screen", "aggregate", "calculate"]


def test_a_table_cell_the_question_names_is_looked_up(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask("What is the five-year total of the Elm Street Bridge rehabilitation?", "bag")
    assert answer.found and answer.answer == "$7,000 thousand"  # the cell as written, at the table's scale
    assert answer.citations[0].quote.startswith("Elm Street Bridge rehabilitation; ")
    assert_cited(examples_sg, answer)


def test_a_question_the_documents_cannot_answer_is_not_found(examples_sg: StrataGraph) -> None:
    assert_not_found(examples_sg.ask("Who painted the ceiling of the Sistine Chapel?", "bag"))


def test_a_sum_the_documents_cannot_support_is_not_computed(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask("What is the combined salary of the mayor and the city attorney?", "bag")
    assert answer.computed is None
    assert "no amount for" in answer.trace[2].decision


# ------------------------------------------------------------------------------------------ with a chat model
def _schema(body: dict) -> str:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    text = "\n".join(m["content"] for m in body["messages"])
    for name in ("ScreenReply", "ArithmeticReply", "GeneratedAnswer"):
        if name in text:
            return name
    return ""


def _numbered(text: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\[(\d+)\] (.*)$", text, flags=re.MULTILINE)}


def _budget_model(body: dict) -> Reply:
    """The scripted model: keeps the sections on the General Fund's public safety, picks the two overtime
    lines and sums them."""
    text = user_text(body)
    name = _schema(body)
    if name == "ScreenReply":
        listed = _numbered(text)
        keep = ("General Fund", "Public Safety", "Police Department", "Fire Department")
        verdicts = [
            {"section": n, "relevant": any(k in path.split(" > ")[-1] for k in keep)} for n, path in listed.items()
        ]
        return Reply.json({"verdicts": verdicts})
    if name == "ArithmeticReply":
        listed = _numbered(text)
        picks = [
            n
            for who in ("Police Department", "Fire Department")
            for n, line in listed.items()
            if line.startswith(f"1.1.{1 if who.startswith('Police') else 2} {who}: Overtime | FY2025 Adopted")
        ]
        return Reply.json({"operation": "sum", "operands": picks})
    return Reply.json({"answer": "", "found": False, "evidence": []})


def _llm_sg(server: ScriptedChatServer, home: Path) -> StrataGraph:
    return StrataGraph(server.settings(home, llm_cache=False))


def test_the_model_screens_the_tree_and_picks_the_operands_the_code_adds_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _budget_model
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(SUM_Q, "bag")
        assert_cited(sg, answer)
    assert answer.found and answer.answer == "$2,820 thousand"
    assert [o.raw for o in answer.computed.operands] == ["1,170", "1,650"]  # type: ignore[union-attr]
    screen, _, calculate, _ = answer.trace
    assert screen.llm and screen.fallback is None and calculate.llm and calculate.fallback is None
    assert "the model's sum" in calculate.decision
    kept = [lv for lv in screen.decision.split("; ")]
    assert any("Police Department" in k for k in kept) and not any("Capital Improvement" in k for k in kept)
    assert answer.usage.llm_calls == len(chat_server.requests) >= 4  # three levels at least, and the operands
    names = [_schema(b) for b in chat_server.requests]
    assert names.count("ArithmeticReply") == 1 and names.count("ScreenReply") == len(names) - 1
    first = user_text(chat_server.requests[0])
    assert "City of Riverton Adopted Budget, Fiscal Year 2025 > 1. General Fund" in first


def test_malformed_then_good_reply_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply(content="The police and the fire department look relevant."))
    chat_server.responder = _budget_model
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(SUM_Q, "bag")
    assert answer.answer == "$2,820 thousand"
    assert answer.trace[0].fallback is None  # the correction round got a usable reply
    assert answer.usage.llm_calls == len(chat_server.requests)
    assert "validation" in user_text(chat_server.requests[1]).lower() or len(chat_server.requests[1]["messages"]) > 2


def test_malformed_twice_falls_back_to_the_embedding_rule_and_says_so_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply(content="I cannot say.")
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(SUM_Q, "bag")
        assert_cited(sg, answer)
    assert answer.found and answer.answer == "$2,820 thousand"  # the no-LLM rules, end to end
    screen, _, calculate, _ = answer.trace
    assert "no usable reply" in (screen.fallback or "") and "no usable reply" in (calculate.fallback or "")
    assert answer.usage.llm_calls == len(chat_server.requests)
    assert len(chat_server.requests) % 2 == 0  # every question asked twice


def test_429_then_good_is_counted_once_per_request_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.error(429, "slow down", **{"Retry-After": "0"}))
    chat_server.responder = _budget_model
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(SUM_Q, "bag")
    assert answer.answer == "$2,820 thousand"
    assert answer.usage.llm_calls == len(chat_server.requests)


def test_an_unreachable_endpoint_is_a_clear_error_naming_it(examples_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = Settings(home=examples_home, llm_model="scripted", openai_base_url=url, request_retries=0,
                        request_timeout=2, llm_cache=False)  # fmt: skip
    with StrataGraph(settings) as sg, pytest.raises(LLMUnavailable, match=url.replace(".", r"\.")):
        sg.ask(SUM_Q, "bag")


def test_cli_prints_the_computed_answer_and_node_events(examples_home: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("--store", str(examples_home), "ask", DIFF_Q, "--strategy", "bag", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "$125 thousand" and data["computed"]["expression"] == "710 - 585"
    assert "screen" in proc.stderr and "calculate" in proc.stderr

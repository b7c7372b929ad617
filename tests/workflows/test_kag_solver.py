"""``kag`` (KAG §2.3, Alg. 1 and 2): logical-form plan, step-by-step execution (graph first, hybrid retrieval
when the graph result is weak; Math, Sort and Deduce in code over typed quantities), memory, judge,
reflection, answer; without a chat model and with a scripted one served over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.answers import Answer
from stratagraph.llm import LLMUnavailable
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text
from tests.workflows.conftest import assert_cited, assert_not_found

BUDGET = "examples/budget/riverton_city_budget_fy2025.md"
OVERTIME = "What is the combined FY2025 overtime budget of the Police and Fire departments?"
MORE = "How much more does the Police Department request than the Fire Department in FY2025?"

# An unseen budget, laid out unlike the bundled one: a summary table whose rows are departments, detail tables
# whose rows are expenses under nested headings, two-year fiscal periods, "Proposed" rather than "Adopted".
MARLOW = """---
title: Marlow County Proposed Budget, Fiscal Year 2025-26
organization: Marlow County
document_type: budget
---

This volume presents the proposed operating budget of Marlow County for fiscal year 2025-26. All tables are in
thousands of dollars. The Board of Supervisors will hold two public hearings before adoption in June.

# Summary by Department

General Fund appropriations rise by $1.6 million. The Sheriff's Office remains the largest department; Roads and
Bridges declines because the bridge deck program moves to the capital budget.

| Department | FY2024-25 Budget | FY2025-26 Proposed |
|---|---:|---:|
| Sheriff's Office | 42,310 | 44,020 |
| Public Library | 6,480 | 6,915 |
| Roads and Bridges | 18,200 | 17,650 |
| Total | 66,990 | 68,585 |

# Departmental Detail

## Public Library

The Public Library operates five branches and a mobile outreach service.

### Branch Operations

Branch Operations covers the five branches, their staff and their collections.

| Expense | FY2024-25 Budget | FY2025-26 Proposed |
|---|---:|---:|
| Salaries and benefits | 3,940 | 4,105 |
| Books and materials | 820 | 905 |
| Facilities | 610 | 640 |
| Total | 5,370 | 5,650 |

### Outreach

Outreach runs the bookmobile, the literacy program and the homebound delivery service.

| Expense | FY2024-25 Budget | FY2025-26 Proposed |
|---|---:|---:|
| Salaries and benefits | 700 | 760 |
| Programs | 410 | 505 |
| Total | 1,110 | 1,265 |
"""


def _operands(answer: Answer) -> list[tuple[Decimal, str]]:
    assert answer.computed is not None
    return [(o.value, o.citation.quote) for o in answer.computed.operands]


def _row(sg: StrataGraph, answer: Answer, i: int) -> str:
    """The section (last heading) of the chunk the i-th operand cites."""
    assert answer.computed is not None
    node = sg.graph.get_node(answer.computed.operands[i].citation.chunk_id)
    assert node is not None
    return str(node.props["heading_path"][-1])


# ------------------------------------------------------------------------------------------ without a chat model
def test_a_sum_of_two_line_items_is_computed_exactly_and_cites_both_rows(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask(OVERTIME, "kag")
    assert answer.found and answer.strategy == "kag"
    assert answer.computed is not None and answer.computed.operation == "sum"
    assert answer.computed.result == Decimal(2820000) and answer.answer == "$2,820 thousand"
    assert _operands(answer) == [
        (Decimal(1170000), "Overtime; FY2024 Actual: 1,320; FY2025 Adopted: 1,170; Change: (150)"),
        (Decimal(1650000), "Overtime; FY2024 Actual: 1,880; FY2025 Adopted: 1,650; Change: (230)"),
    ]
    assert [_row(examples_sg, answer, i) for i in (0, 1)] == ["1.1.1 Police Department", "1.1.2 Fire Department"]
    assert {c.doc_id for c in answer.citations} == {BUDGET}
    assert_cited(examples_sg, answer)
    nodes = [t.node for t in answer.trace]
    assert nodes == ["plan", "execute", "execute", "execute", "execute", "judge", "answer"]
    assert "sum of 2" in answer.trace[0].decision and "Math(sum(o1, o2))" in answer.trace[0].decision
    assert answer.trace[1].tool_calls[0].name == "search_facts"  # graph retrieval first
    assert answer.usage.llm_calls == 0 and all(not t.llm for t in answer.trace)


def test_a_difference_takes_the_exact_figure_a_rounded_one_stands_for(examples_sg: StrataGraph) -> None:
    """"requests $18.6 million" is the Police table's total, 18,585 (thousands): the difference is exact."""
    answer = examples_sg.ask(MORE, "kag")
    assert answer.found and answer.computed is not None and answer.computed.operation == "difference"
    assert answer.computed.result == Decimal(2805000) and answer.answer == "$2,805 thousand"
    assert _operands(answer) == [
        (Decimal(18585000), "Total; FY2024 Actual: 18,015; FY2025 Adopted: 18,585; Change: 570"),
        (Decimal(15780000), "Total; FY2024 Actual: 15,230; FY2025 Adopted: 15,780; Change: 550"),
    ]
    assert [_row(examples_sg, answer, i) for i in (0, 1)] == ["1.1.1 Police Department", "1.1.2 Fire Department"]
    assert_cited(examples_sg, answer)


def test_sort_count_and_a_numeric_deduce_run_in_code(examples_sg: StrataGraph) -> None:
    top = examples_sg.ask("Which line item of the Fire Department has the largest FY2025 budget?", "kag")
    assert top.found and top.answer == "Personnel" and top.computed is not None
    assert top.computed.operation.startswith("sort") and len(top.computed.operands) == 5  # the total row is not one
    assert_cited(examples_sg, top)
    count = examples_sg.ask("How many line items of the Fire Department exceed $500 thousand in FY2025?", "kag")
    assert count.found and count.answer == "3" and count.computed is not None and count.computed.result == 3
    assert_cited(examples_sg, count)
    greater = examples_sg.ask("Is the Police Department overtime greater than the Fire Department overtime in FY2025?", "kag")
    assert greater.found and greater.answer == "no" and greater.computed is not None
    assert [o.value for o in greater.computed.operands] == [Decimal(1170000), Decimal(1650000)]
    change = examples_sg.ask("By what percentage did property tax revenue grow from FY2024 to FY2025?", "kag")
    assert change.answer == "4%" and change.computed is not None
    assert [o.value for o in change.computed.operands] == [Decimal(24380000), Decimal(25350000)]


def test_a_set_spans_the_tables_that_fit_and_a_coordinated_name_is_one_thing(examples_sg: StrataGraph) -> None:
    top = examples_sg.ask("Which capital project has the largest five-year total?", "kag")
    assert top.found and top.answer == "Elm Street Bridge rehabilitation"
    assert top.computed is not None and len(top.computed.operands) == 9  # the projects of 2.1, 2.2 and 2.3
    assert_cited(examples_sg, top)
    one = examples_sg.ask("What is the total FY2025 adopted amount of the Streets and Bridges projects?", "kag")
    assert one.found and one.answer == "$4,920 thousand"  # a section name, not two operands
    assert one.citations[0].quote.startswith("Total; FY2025 Adopted: 4,920")
    assert "is one heading, not 2 operands" in one.trace[0].decision
    assert_cited(examples_sg, one)
    margin = examples_sg.ask("How much larger was Northwind's gross margin in Q3 than in Q2 2024?", "kag")
    assert margin.answer == "0.9 percentage points" and margin.computed is not None and margin.computed.unit == "pp"


def test_amounts_across_two_earnings_calls_are_added_per_quarter(examples_sg: StrataGraph) -> None:
    answer = examples_sg.ask("What was Northwind Robotics' combined revenue in Q2 and Q3 2024?", "kag")
    assert answer.found and answer.computed is not None and answer.computed.result == Decimal(294500000)
    assert [("q2" in c.doc_id, "q3" in c.doc_id) for c in answer.citations] == [(True, False), (False, True)]
    assert_cited(examples_sg, answer)


def test_questions_the_documents_cannot_answer_are_not_found(examples_sg: StrataGraph) -> None:
    painted = examples_sg.ask("Who painted the ceiling of the Sistine Chapel?", "kag")
    assert_not_found(painted)
    assert [t.node for t in painted.trace].count("plan") == 3  # every round was tried (kag_max_rounds)
    assert any(t.node == "reflect" and "again" in t.decision for t in painted.trace)
    missing = examples_sg.ask("What is the combined FY2025 overtime budget of the Library and the Airport?", "kag")
    assert_not_found(missing)  # no operand matches: no number read off the evidence instead
    assert "no number for it" in next(t for t in missing.trace if t.node == "execute").decision


def test_an_unseen_budget_is_answered_by_the_same_rules(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "marlow_county_budget.md").write_text(MARLOW, encoding="utf-8")
    with StrataGraph(Settings(home=tmp_path / "store", llm_model=None, openai_base_url=None, openai_api_key=None)) as sg:
        assert sg.ingest([docs], base=docs).failed == 0
        both = sg.ask("What are the combined FY2025-26 proposed salaries and benefits of Branch Operations and Outreach?", "kag")
        assert both.computed is not None and both.computed.result == Decimal(4865000)
        assert [_row(sg, both, i) for i in (0, 1)] == ["Branch Operations", "Outreach"]
        assert_cited(sg, both)
        more = sg.ask("How much more is proposed for the Sheriff's Office than for Roads and Bridges in FY2025-26?", "kag")
        assert more.computed is not None and more.computed.result == Decimal(26370000)
        assert [q for _, q in _operands(more)] == ["Sheriff's Office; FY2024-25 Budget: 42,310; FY2025-26 Proposed: 44,020",
                                                   "Roads and Bridges; FY2024-25 Budget: 18,200; FY2025-26 Proposed: 17,650"]  # fmt: skip
        assert_cited(sg, more)
        library = sg.ask("What is the combined FY2025-26 budget of the Public Library and the Sheriff's Office?", "kag")
        assert library.computed is not None and library.computed.result == Decimal(50935000)  # the summary rows
        assert_cited(sg, library)


# ------------------------------------------------------------------------------------------ with a chat model
def _schema(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    return str((fmt.get("json_schema") or {}).get("name") or "")


def _step(action: str, var: str, **fields: Any) -> dict[str, Any]:
    base = {"action": action, "var": var, "question": "", "subject": "", "predicate": "", "object": "",
            "constraints": [], "numeric": False, "inputs": [], "operation": "", "limit": 1}  # fmt: skip
    return {**base, **fields}


OVERTIME_PLAN = {
    "steps": [
        _step("Retrieval", "o1", question="What is the Police Department's FY2025 overtime budget?",
              subject="Police Department", predicate="overtime budget", constraints=["period=FY2025"], numeric=True),
        _step("Retrieval", "o2", question="What is the Fire Department's FY2025 overtime budget?",
              subject="Fire Department", predicate="overtime budget", constraints=["period=FY2025"], numeric=True),
        _step("Math", "math1", inputs=["o1", "o2"], operation="sum"),
        _step("Output", "out", inputs=["math1"]),
    ]
}  # fmt: skip


def _by_schema(replies: dict[str, Callable[[dict[str, Any]], Reply] | Reply]) -> Callable[[dict[str, Any]], Reply]:
    def respond(body: dict[str, Any]) -> Reply:
        reply = replies[_schema(body)]
        return reply(body) if callable(reply) else reply

    return respond


def _llm_sg(server: ScriptedChatServer, home: Path) -> StrataGraph:
    return StrataGraph(server.settings(home, llm_cache=False))


def test_the_models_plan_is_run_in_code_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = _by_schema({"KagPlan": Reply.json(OVERTIME_PLAN), "KagJudgement": Reply.json({"answered": True, "missing": ""})})
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(OVERTIME, "kag")
        assert answer.found and answer.computed is not None and answer.computed.result == Decimal(2820000)
        assert_cited(sg, answer)
    assert [_schema(b) for b in chat_server.requests] == ["KagPlan", "KagJudgement"]
    assert answer.usage.llm_calls == len(chat_server.requests) == 2
    plan = answer.trace[0]
    assert plan.node == "plan" and plan.llm and plan.fallback is None and "rule:" not in plan.decision
    assert "o1 = Retrieval(s=Police Department, p=overtime budget, o=number, period=FY2025)" in plan.decision
    assert "the model judges the question answered" in next(t for t in answer.trace if t.node == "judge").decision
    assert "What is the Police Department's FY2025 overtime budget?" not in user_text(chat_server.requests[0])
    assert OVERTIME in user_text(chat_server.requests[0])


def test_a_change_asked_which_way_says_its_direction_whoever_planned_it_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    """The direction of a change is said by the question, so the model's plan (a bare Math difference) is
    written as the rules' plan is: "down by ..."."""
    question = "How did the Police Department's overtime in FY2025 compare with FY2024?"
    plan = {"steps": [
        _step("Retrieval", "o1", question="What is the Police Department's FY2024 overtime?", subject="Police Department",
              predicate="overtime", constraints=["period=FY2024"], numeric=True),
        _step("Retrieval", "o2", question="What is the Police Department's FY2025 overtime?", subject="Police Department",
              predicate="overtime", constraints=["period=FY2025"], numeric=True),
        _step("Math", "math1", inputs=["o2", "o1"], operation="difference"),
        _step("Output", "out", inputs=["math1"]),
    ]}  # fmt: skip
    chat_server.responder = _by_schema({"KagPlan": Reply.json(plan), "KagJudgement": Reply.json({"answered": True, "missing": ""})})
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(question, "kag")
    assert answer.trace[0].llm and answer.computed is not None and answer.computed.result == Decimal(-150000)
    assert answer.answer == "down by $150 thousand"


def test_reflection_asks_a_supplementary_question_and_a_second_round_uses_the_memory_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    first = {"steps": [OVERTIME_PLAN["steps"][0], _step("Output", "out", inputs=["o1"])]}
    second = {"steps": [OVERTIME_PLAN["steps"][1], *OVERTIME_PLAN["steps"][2:]]}
    plans = [Reply.json(first), Reply.json(second)]
    judgements = [Reply.json({"answered": False, "missing": "the Fire Department's overtime"}),
                  Reply.json({"answered": True, "missing": ""})]  # fmt: skip
    chat_server.responder = _by_schema({
        "KagPlan": lambda body: plans.pop(0),
        "KagJudgement": lambda body: judgements.pop(0),
        "KagSupplement": Reply.json({"question": "What is the Fire Department's FY2025 overtime budget?"}),
    })  # fmt: skip
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(OVERTIME, "kag")
        assert answer.computed is not None and answer.computed.result == Decimal(2820000)
        assert_cited(sg, answer)
    assert [_schema(b) for b in chat_server.requests] == ["KagPlan", "KagJudgement", "KagSupplement", "KagPlan", "KagJudgement"]
    replan = user_text(chat_server.requests[3])
    assert "Plan for: What is the Fire Department's FY2025 overtime budget?" in replan
    assert "o1" in replan and "1,170" in replan  # the memory of round 1, its variable usable in round 2
    assert answer.usage.llm_calls == len(chat_server.requests) == 5


def test_a_text_step_is_answered_by_the_model_with_verbatim_quotes_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    plan = {"steps": [_step("Retrieval", "o1", question="Who is the Chief Financial Officer of Northwind Robotics?",
                            subject="Northwind Robotics", predicate="chief financial officer", object="Person"),
                      _step("Output", "out", inputs=["o1"])]}  # fmt: skip

    def sub_answer(body: dict[str, Any]) -> Reply:
        passages = user_text(body).split("Passages:\n", 1)[1]
        numbered = [p for p in passages.split("\n\n") if p.startswith("[")]
        n = next(i for i, p in enumerate(numbered, start=1) if "Marcus Adeyemi" in p)
        return Reply.json({"answer": "marcus adeyemi", "found": True, "evidence": [n]})

    chat_server.responder = _by_schema({"KagPlan": Reply.json(plan), "GeneratedAnswer": sub_answer,
                                        "KagJudgement": Reply.json({"answered": True, "missing": ""})})  # fmt: skip
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask("Who is the Chief Financial Officer of Northwind Robotics?", "kag")
        assert answer.found and answer.answer == "Marcus Adeyemi"  # as the passage writes it
        assert "Marcus Adeyemi" in answer.citations[0].quote
        assert_cited(sg, answer)
    assert [_schema(b) for b in chat_server.requests] == ["KagPlan", "GeneratedAnswer", "KagJudgement"]
    assert answer.usage.llm_calls == 3


def test_a_server_without_json_schema_gets_the_schema_in_the_prompt_against_scripted_http_server(examples_home: Path) -> None:
    """llama-cpp-python's server refuses json_schema; the nodes still get their structured replies, fenced in
    prose as a chatty model writes them."""
    server = ScriptedChatServer("llama_cpp").start()
    try:
        def respond(body: dict[str, Any]) -> Reply:
            system = next(m["content"] for m in body["messages"] if m["role"] == "system")
            if system.startswith("You plan how to answer"):
                return Reply.json(OVERTIME_PLAN)
            return Reply.json({"answered": True, "missing": ""})

        server.responder = respond
        with _llm_sg(server, examples_home) as sg:
            answer = sg.ask(OVERTIME, "kag")
            assert answer.computed is not None and answer.computed.result == Decimal(2820000)
            assert_cited(sg, answer)
        assert all(t.fallback is None for t in answer.trace)
        assert answer.usage.llm_calls == len(server.requests)
        assert {(b.get("response_format") or {}).get("type") for b in server.requests} >= {"json_object"}
    finally:
        server.close()


def test_malformed_then_good_reply_against_scripted_http_server(examples_home: Path, chat_server: ScriptedChatServer) -> None:
    chat_server.script.append(Reply(content="Step 1: look up the police overtime. Step 2: add."))
    chat_server.responder = _by_schema({"KagPlan": Reply.json(OVERTIME_PLAN), "KagJudgement": Reply.json({"answered": True, "missing": ""})})
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(OVERTIME, "kag")
    assert answer.computed is not None and answer.computed.result == Decimal(2820000)
    assert answer.usage.llm_calls == len(chat_server.requests) == 3
    assert answer.trace[0].fallback is None and "rule:" not in answer.trace[0].decision


def test_malformed_twice_falls_back_to_the_rules_and_says_so_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply(content="I think the answer is about two million.")
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(OVERTIME, "kag")
        assert answer.found and answer.computed is not None and answer.computed.result == Decimal(2820000)
        assert_cited(sg, answer)
    plan, judge = answer.trace[0], next(t for t in answer.trace if t.node == "judge")
    assert "no usable reply" in (plan.fallback or "") and "rule: sum of 2" in plan.decision
    assert "no usable reply" in (judge.fallback or "") and "computed in code" in judge.decision
    assert answer.usage.llm_calls == len(chat_server.requests) == 4  # plan and judge, each asked twice


def test_a_plan_reading_unbound_variables_is_repaired_or_replaced_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    bad = {"steps": [_step("Math", "math1", inputs=["o7", "o8"], operation="add up"), _step("Output", "out", inputs=["math1"])]}
    chat_server.responder = _by_schema({"KagPlan": Reply.json(bad), "KagJudgement": Reply.json({"answered": True, "missing": ""})})
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(OVERTIME, "kag")
        assert answer.computed is not None and answer.computed.result == Decimal(2820000)
    plan = answer.trace[0]
    assert "reads o7, o8, which no earlier step binds" in plan.decision
    assert "no executable step" in (plan.fallback or "") and "rule: sum of 2" in plan.decision


def test_429_then_good_is_counted_once_per_request_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.script.append(Reply.error(429, "slow down", **{"Retry-After": "0"}))
    chat_server.responder = _by_schema({"KagPlan": Reply.json(OVERTIME_PLAN), "KagJudgement": Reply.json({"answered": True, "missing": ""})})
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask(OVERTIME, "kag")
    assert answer.found and answer.usage.llm_calls == len(chat_server.requests) == 3


def test_an_unreachable_endpoint_is_a_clear_error_naming_it(examples_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = Settings(home=examples_home, llm_model="scripted", openai_base_url=url, request_retries=0,
                        request_timeout=2, llm_cache=False)  # fmt: skip
    with StrataGraph(settings) as sg, pytest.raises(LLMUnavailable, match=url.replace(".", r"\.")):
        sg.ask(OVERTIME, "kag")


def test_cli_prints_the_computed_answer_as_json(examples_home: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("--store", str(examples_home), "ask", MORE, "--strategy", "kag", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "$2,805 thousand" and data["computed"]["result"] == "2805000"
    assert [o["value"] for o in data["computed"]["operands"]] == ["18585000", "15780000"]
    assert "plan" in proc.stderr and "judge" in proc.stderr


def test_one_numeric_step_of_a_cell_in_thousands_is_a_cited_computation_against_scripted_http_server(
    examples_home: Path, chat_server: ScriptedChatServer
) -> None:
    """A plan whose output is one number read from a table stated in thousands answers with the amount at its
    scale as a computation of that one cell, so its citations check (the answer is not the cell's text)."""
    one = {"steps": [OVERTIME_PLAN["steps"][0], _step("Output", "out", inputs=["o1"])]}
    chat_server.responder = _by_schema({"KagPlan": Reply.json(one), "KagJudgement": Reply.json({"answered": True, "missing": ""})})
    with _llm_sg(chat_server, examples_home) as sg:
        answer = sg.ask("What is the Police Department's FY2025 overtime budget?", "kag")
        assert answer.found and answer.kind == "computed" and answer.computed is not None
        assert answer.computed.result == Decimal(1170000) and answer.computed.operation == "value"
        assert_cited(sg, answer)

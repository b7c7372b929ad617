"""The ``chat`` workflow without a chat model, on examples/: follow-ups resolved by the rewrite rules (an
ellipsis, the previous quarter, "compare that with", pronouns, "why?"), each turn's answer checked, memory
across processes, threads kept apart."""

from __future__ import annotations

from decimal import Decimal
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from stratagraph import Settings, StrataGraph
from stratagraph.agents.rewrite import Turn, rewrite_by_rules
from stratagraph.answers import Answer
from tests.conftest import run_cli
from tests.workflows.conftest import assert_cited, assert_not_found

Q2 = "examples/earnings/northwind_robotics_q2_2024_earnings_call.md"
Q3 = "examples/earnings/northwind_robotics_q3_2024_earnings_call.md"
BUDGET = "examples/budget/riverton_city_budget_fy2025.md"


def _decision(answer: Answer, node: str) -> str:
    return " ".join(e.decision for e in answer.trace if e.node == node)


def _sources(answer: Answer) -> set[str]:
    cites = [*answer.citations, *(o.citation for o in (answer.computed.operands if answer.computed else []))]
    return {c.source for c in cites}


def test_a_five_turn_conversation_about_two_quarters(examples_sg: StrataGraph) -> None:
    chat = examples_sg.chat(f"quarters-{uuid.uuid4().hex[:6]}")

    first = chat.ask("What was Northwind Robotics' revenue in the second quarter of 2024?")
    assert first.answer == "$142.6 million" and _sources(first) == {Q2}
    assert_cited(examples_sg, first)

    # an ellipsis naming another period: the last question with its period swapped (the year kept)
    second = chat.ask("And in Q3?")
    assert "Q3 2024" in _decision(second, "rewrite") and "ellipsis" in _decision(second, "rewrite")
    assert second.answer == "$151.9 million" and Q3 in _sources(second)
    assert_cited(examples_sg, second)

    # "the previous quarter" of Q3 2024, and "compare that with": both answered, the difference computed
    third = chat.ask("How does that compare with the previous quarter?")
    assert "Q2 2024" in _decision(third, "rewrite") and "compare" in _decision(third, "rewrite")
    assert third.computed is not None and third.computed.operation == "difference"
    assert third.answer == "$9.3 million"
    assert [o.value for o in third.computed.operands] == [Decimal(151900000), Decimal(142600000)]
    assert _sources(third) == {Q2, Q3}
    assert_cited(examples_sg, third)

    # a pronoun for the conversation's subject
    fourth = chat.ask("How many robots did it ship in the third quarter of 2024?")
    assert "Northwind Robotics ship" in _decision(fourth, "rewrite")
    assert fourth.answer == "1,230 robots" and _sources(fourth) == {Q3}
    assert_cited(examples_sg, fourth)

    # an ellipsis naming an ordinal quarter
    fifth = chat.ask("What about the second quarter?")
    assert "Q2 2024" in _decision(fifth, "rewrite")
    assert fifth.answer == "1,150 robots" and _sources(fifth) == {Q2}
    assert_cited(examples_sg, fifth)

    history = chat.history()
    assert [type(m) for m in history] == [HumanMessage, AIMessage] * 5
    last = history[-1]
    assert Answer.model_validate(last.response_metadata["answer"]).answer == "1,150 robots"
    assert "[1]" in str(last.content) and "1,150 robots" in str(last.content)


def test_why_follow_ups_and_a_why_question_answer_with_the_cause_their_evidence_states(examples_sg: StrataGraph) -> None:
    chat = examples_sg.chat(f"budget-{uuid.uuid4().hex[:6]}")

    first = chat.ask("How much does the Police Department request for FY2025?")
    assert first.answer == "$18.6 million" and _sources(first) == {BUDGET}

    why = chat.ask("Why?")  # about the last answer: the cause its cited chunks state
    assert "why" in _decision(why, "rewrite") and why.found
    assert why.answer.startswith("reflecting the negotiated wage increase")
    assert why.citations[0].chunk_id in {c.chunk_id for c in first.citations}
    assert_cited(examples_sg, why)

    fire = chat.ask("Why does the Fire Department's overtime fall?")
    assert fire.answer.startswith("because the recruit academy that graduated in January 2024")
    assert "Fire Department" in fire.citations[0].section
    assert_cited(examples_sg, fire)

    # "its" is the Fire Department (the question the "why?" turns were about), not the Police Department
    equipment = chat.ask("By how much does its equipment rise?")
    assert "Fire Department's equipment" in _decision(equipment, "rewrite")
    assert equipment.answer == "$65 thousand"
    assert "Fire Department" in equipment.citations[0].section
    assert_cited(examples_sg, equipment)

    unanswerable = chat.ask("Who painted the ceiling of the Sistine Chapel?")
    assert "already standalone" in _decision(unanswerable, "rewrite")
    assert_not_found(unanswerable)


@pytest.mark.parametrize(
    ("message", "question", "rule"),
    [
        ("And in Q3?", "What was Acme's revenue in Q3 FY2025?", "another period"),
        ("What about the second quarter of fiscal 2024?", "What was Acme's revenue in Q2 FY2024?", "another period"),
        ("And the previous quarter?", "What was Acme's revenue in Q1 FY2025?", "previous quarter"),
        ("Compare that with the next quarter.", "What was Acme's revenue in Q2 FY2025, compared with Q3 FY2025?", "compare"),
        ("What about Globex?", "What was Globex's revenue in Q2 FY2025?", "another subject"),
        ("Who is its CEO?", "Who is Acme's CEO?", "pronoun"),
        ("Why?", "Why: What was Acme's revenue in Q2 FY2025?", "why"),
        ("Who founded Globex?", "Who founded Globex?", "already standalone"),
    ],
)
def test_the_rewrite_rules(message: str, question: str, rule: str) -> None:
    last = Turn(message="", question="What was Acme's revenue in Q2 FY2025?", answer="$10 million", found=True,
                subject="Acme", chunks=["c1"])  # fmt: skip
    rewritten, why, evidence_from, compare = rewrite_by_rules(message, [last])
    assert rewritten == question and rule in why
    assert evidence_from == (["c1"] if rule == "why" else [])
    if rule == "compare":
        assert compare == ["What was Acme's revenue in Q2 FY2025?", "What was Acme's revenue in Q3 FY2025?"]


def test_a_thread_resumes_in_a_new_process_with_its_history(examples_home: Path) -> None:
    thread = f"restart-{uuid.uuid4().hex[:6]}"
    settings = Settings(home=examples_home, llm_model=None, openai_base_url=None, openai_api_key=None)
    with StrataGraph(settings) as sg:
        assert sg.chat(thread).ask("What was Northwind Robotics' revenue in the second quarter of 2024?").found

    env = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": "", "STRATAGRAPH_LLM_MODEL": ""}
    proc = run_cli("ask", "And in Q3?", "--thread", thread, "--store", str(examples_home), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["thread_id"] == thread and out["answer"] == "$151.9 million"  # resolved against the turn before
    assert "Q3 2024" in " ".join(e["decision"] for e in out["trace"] if e["node"] == "rewrite")

    listed = run_cli("threads", "--store", str(examples_home), "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert any(t["thread_id"] == thread and t["turns"] == 2 for t in json.loads(listed.stdout)["threads"])
    with StrataGraph(settings) as sg:
        assert len(sg.chat(thread).history()) == 4
        assert sg.delete_thread(thread) and sg.chat(thread).history() == []


def test_two_threads_at_once_keep_their_memories_apart(examples_sg: StrataGraph) -> None:
    budget, earnings = examples_sg.chat(f"a-{uuid.uuid4().hex[:6]}"), examples_sg.chat(f"b-{uuid.uuid4().hex[:6]}")
    scripts = {
        budget: ["How much does the Police Department request for FY2025?", "Why does its overtime fall?"],
        earnings: ["What was Northwind Robotics' revenue in the second quarter of 2024?", "And in Q3?"],
    }

    def converse(chat) -> list[Answer]:  # noqa: ANN001
        return [chat.ask(m) for m in scripts[chat]]

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = dict(zip(scripts, pool.map(converse, scripts), strict=True))
    assert "Police Department's overtime" in _decision(answers[budget][1], "rewrite")
    assert answers[earnings][1].answer == "$151.9 million"
    assert [m.content for m in budget.history() if isinstance(m, HumanMessage)] == scripts[budget]
    assert [m.content for m in earnings.history() if isinstance(m, HumanMessage)] == scripts[earnings]


def test_two_processes_hold_conversations_on_one_store_at_once(examples_home: Path) -> None:
    env = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": "", "STRATAGRAPH_LLM_MODEL": ""}
    threads = {f"proc-a-{uuid.uuid4().hex[:6]}": ["How much does the Police Department request for FY2025?", "Why?"],
               f"proc-b-{uuid.uuid4().hex[:6]}": ["What was Northwind Robotics' revenue in the second quarter of 2024?",
                                                  "And in Q3?"]}  # fmt: skip

    def converse(thread: str) -> list[dict]:
        out = []
        for message in threads[thread]:
            proc = run_cli("ask", message, "--thread", thread, "--store", str(examples_home), "--json", env=env)
            assert proc.returncode == 0, proc.stderr
            out.append(json.loads(proc.stdout))
        return out

    with ThreadPoolExecutor(max_workers=2) as pool:  # each turn its own process, the two threads at once
        results = dict(zip(threads, pool.map(converse, threads), strict=True))
    a, b = results.values()
    assert a[0]["answer"] == "$18.6 million" and a[1]["answer"].startswith("reflecting")
    assert b[1]["answer"] == "$151.9 million"
    with StrataGraph(Settings(home=examples_home, llm_model=None, openai_base_url=None, openai_api_key=None)) as sg:
        for thread, script in threads.items():
            assert [m.content for m in sg.chat(thread).history() if isinstance(m, HumanMessage)] == script

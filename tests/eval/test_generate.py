"""``eval generate`` on the examples store (real SQLite, Chroma, spaCy): the question kinds, determinism, gold
chunks that hold the answer, answers a separate parser re-derives from the documents' text, and ``eval
retrieval`` / ``eval qa`` run on the generated folder against the current store."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from stratagraph import Settings
from stratagraph.eval.generate import KINDS, generate, write_questions
from stratagraph.services import Services
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from check_generated import check  # noqa: E402


@pytest.fixture(scope="module")
def examples_questions(examples_home: Path) -> list:
    svc = Services(Settings(home=examples_home))
    try:
        return generate(svc.graph, n=50, seed=0)
    finally:
        svc.close()


def test_fifty_questions_of_every_kind_the_examples_hold(examples_questions: list) -> None:
    kinds = Counter(q.kind for q in examples_questions)
    assert len(examples_questions) == 50
    assert set(kinds) <= set(KINDS)
    assert set(KINDS) == set(kinds)  # every kind, 2-hop chains included
    assert len({q.id for q in examples_questions}) == 50
    assert all(q.answers and q.gold_docs and q.gold_chunks and q.derivation for q in examples_questions)


def test_same_seed_same_set_other_seed_other_set(examples_home: Path, examples_questions: list) -> None:
    svc = Services(Settings(home=examples_home))
    try:
        again = generate(svc.graph, n=50, seed=0)
        other = generate(svc.graph, n=50, seed=7)
    finally:
        svc.close()
    assert [q.model_dump() for q in again] == [q.model_dump() for q in examples_questions]
    assert [q.question for q in other] != [q.question for q in examples_questions]


def test_gold_chunks_hold_the_cell_and_the_name(examples_home: Path, examples_questions: list) -> None:
    svc = Services(Settings(home=examples_home))
    try:
        for q in examples_questions:
            texts = [svc.graph.get_node(c).props["text"] for c in q.gold_chunks]
            assert all(svc.graph.get_node(c).doc_ids[0] in q.gold_docs for c in q.gold_chunks), q
            if q.kind == "table_cell":
                assert any(q.answers[0] in t for t in texts), q
            if q.kind == "section":
                assert any(q.derivation["name"].casefold() in t.casefold() for t in texts), q
            if q.kind == "chain_2hop":  # the first chunk states the bridge, the second the answer
                assert q.derivation["bridge"] in texts[0] and q.answers[0] in texts[-1], q
    finally:
        svc.close()


def test_answers_rederived_from_the_documents_text(examples_questions: list, tmp_path: Path) -> None:
    path = write_questions(examples_questions, tmp_path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    result = check(rows, REPO)
    assert result["share"] >= 95.0, result["disagree"]


def test_checker_disagrees_with_a_wrong_answer(examples_questions: list) -> None:
    rows = [q.model_dump() for q in examples_questions if q.kind in ("table_cell", "sum_comparison", "section")][:6]
    for row in rows:
        row["answers"] = ["Nonexistent Heading" if row["kind"] == "section" else "987,654"]
    assert check(rows, REPO)["agree"] == 0


def test_eval_retrieval_and_qa_run_on_a_generated_folder_against_the_store(examples_home: Path, examples_questions: list,
                                                                         tmp_path: Path) -> None:
    from stratagraph.eval.qa import evaluate_qa
    from stratagraph.eval.retrieval import evaluate

    write_questions(examples_questions[:12], tmp_path / "gen")
    settings = Settings(home=examples_home)
    retrieval = evaluate(str(tmp_path / "gen"), ["vector", "lexical"], [1, 5], settings)
    assert retrieval["questions"] == 12
    assert 0 < retrieval["results"]["lexical"]["recall@5"] <= 100
    assert "kinds" in retrieval["results"]["vector"]
    qa = evaluate_qa(str(tmp_path / "gen"), ["kag"], settings, metrics=["gold_recall", "citation_validity", "computed_share"])
    row = qa["results"]["kag"]
    assert set(row["metrics"]) == {"gold_recall", "citation_validity", "computed_share"}
    assert row["metrics"]["citation_validity"] == 1.0  # every found answer's quotes are verbatim in their chunks
    assert not (examples_home / "eval").exists()  # no copy of the corpus was ingested


def test_cli_eval_generate_and_an_unknown_metric(examples_home: Path, tmp_path: Path) -> None:
    from tests.conftest import cli_json, run_cli

    code, out, _ = cli_json("--store", str(examples_home), "eval", "generate", "--n", "8", "--out", str(tmp_path / "g"), "--json")
    assert code == 0 and out["questions"] == 8 and sum(out["kinds"].values()) == 8
    assert len((tmp_path / "g" / "questions.jsonl").read_text(encoding="utf-8").splitlines()) == 8
    proc = run_cli("--store", str(examples_home), "eval", "qa", "--dataset", str(tmp_path / "g"), "--strategies", "kag",
                   "--metrics", "faithfulness")  # fmt: skip
    assert proc.returncode == 2 and "need a chat model" in proc.stderr


def test_reword_scripted_model_keeps_a_rewording_only_when_it_keeps_the_question(examples_questions: list, chat_server) -> None:
    """``eval generate --reword`` over a scripted chat server (control flow and the checks in code): a faithful
    rewording stands; one that drops a period or a label, or states the answer, leaves the template."""
    from stratagraph.eval.reword import keeps, reword
    from stratagraph.llm import get_chat_model
    from tests.scripted_llm import Reply

    cell = next(q for q in examples_questions if q.kind == "table_cell")
    d = cell.derivation
    import re

    title = re.search(r'in "([^"]+)"', cell.question).group(1)
    natural = f"In {title}, what is the {d['column']} figure for {d['row']} under the {d['section'].split(' ', 1)[-1]}?"
    assert keeps(cell, natural) == ""
    assert keeps(cell, natural.replace(d["row"], "that line")).startswith("drops the label")
    assert keeps(cell, f"In {title}, is the {d['column']} of {d['row']} {cell.answers[0]}?") == "states the answer"
    assert keeps(cell, "Tell me the figure.") == "not one question"
    replies = [Reply.json({"question": natural}), Reply.json({"question": "What is that figure?"}),
               Reply(content="no JSON here"), Reply(content="still none")]  # fmt: skip
    chat_server.script.extend(replies)
    settings = chat_server.settings(Path("/tmp"))
    out, summary = reword([cell, cell, cell], get_chat_model(settings))
    assert [q.question for q in out] == [natural, cell.question, cell.question]
    assert summary["reworded"] == 1 and summary["kept"] == 2 and len(chat_server.requests) == 4
    assert all(q.derivation["template"] == cell.question for q in out) and out[0].derivation["reworded"]
    assert "<<<" in chat_server.requests[0]["messages"][1]["content"]  # the template is quoted as data


def test_cli_reword_without_a_chat_model_is_refused(examples_home: Path, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    proc = run_cli("--store", str(examples_home), "eval", "generate", "--n", "3", "--reword", "--out", str(tmp_path / "g"))
    assert proc.returncode == 2 and "--reword needs a chat model" in proc.stderr
    assert not (tmp_path / "g").exists()


def test_reword_a_choice_names_its_answer_among_its_options() -> None:
    from stratagraph.eval.datasets import Question
    from stratagraph.eval.reword import keeps

    q = Question(id="g", question='Which is larger, the FY2025 Plan of Fuel or of Salt, in "Brin Budget", section "Roads"?',
                 answers=["Fuel"], kind="sum_comparison", derivation={"rows": ["Fuel", "Salt"], "column": "FY2025 Plan"})  # fmt: skip
    assert keeps(q, "In the Brin budget, which is larger in the FY2025 Plan: fuel or salt?") == ""
    assert keeps(q, "In the Brin budget, is the FY2025 Plan for salt larger?").startswith("drops the label")

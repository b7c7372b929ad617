"""``eval retrieval``: the metrics by hand, and the real command on a small dataset written here."""

from __future__ import annotations

import json

import pytest

from stratagraph.eval.datasets import DatasetError, Question, load_dataset
from stratagraph.eval.retrieval import (
    QuestionRun,
    StrategyRun,
    distinct_titles,
    format_table,
    hit_at,
    percentile,
    recall_at,
    summarize,
)
from tests.conftest import cli_json, run_cli

PASSAGES = [
    ("Lake Orvena", "Lake Orvena is a glacial lake in the fictional country of Valdoria, fed by the Sarn river."),
    ("Sarn (river)", "The Sarn is a river that rises in the Kessel Mountains and drains into Lake Orvena."),
    ("Kessel Mountains", "The Kessel Mountains are a range in northern Valdoria whose highest peak is Mount Tarrow."),
    ("Mount Tarrow", "Mount Tarrow rises 3,120 metres and was first climbed by Ines Dalca in 1931."),
    ("Ines Dalca", "Ines Dalca (1902-1988) was a Valdorian mountaineer and geologist born in Port Emry."),
    ("Port Emry", "Port Emry is a fishing town on the western coast of Valdoria."),
    ("Valdoria", "Valdoria is a small country with lakes, mountains and a long western coastline."),
    ("Orvena Ferry", "The Orvena Ferry crosses the lake twice a day in summer."),
]
QUESTIONS = [
    {"id": "q1", "question": "Which river drains into Lake Orvena?", "answers": ["Sarn"], "gold_titles": ["Lake Orvena", "Sarn (river)"]},
    {"id": "q2", "question": "Who first climbed Mount Tarrow?", "answers": ["Ines Dalca"], "gold_titles": ["Mount Tarrow"]},
    {"id": "q3", "question": "Where was the first person to climb Mount Tarrow born?", "answers": ["Port Emry"], "gold_titles": ["Mount Tarrow", "Ines Dalca"]},
    {"id": "q4", "question": "How high is the highest peak of the Kessel Mountains?", "answers": ["3,120 metres"], "gold_titles": ["Kessel Mountains", "Mount Tarrow"]},
]


@pytest.fixture
def dataset(tmp_path):
    folder = tmp_path / "tiny-qa"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in PASSAGES))
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return folder


def test_metrics_by_hand():
    assert distinct_titles(["a", "a", "b", "c", "b"], 2) == ["a", "b"]
    assert recall_at(["a", "b"], ["a", "x", "b"], 2) == 0.5
    assert recall_at(["a", "b"], ["a", "x", "b"], 3) == 1.0
    assert hit_at(["b"], ["a", "b"], 1) == 0.0 and hit_at(["b"], ["a", "b"], 2) == 1.0
    assert percentile([5, 1, 3, 2, 4], 50) == 3 and percentile(list(range(1, 101)), 95) == 95
    qs = [Question(id=str(i), question="q", gold_titles=["g"]) for i in range(4)]
    runs = [QuestionRun(id=str(i), titles=t, ms=float(i)) for i, t in enumerate([["g"], ["x", "g"], ["x"], ["g"]])]
    out = summarize(qs, StrategyRun(strategy="s", runs=runs), [1, 2])
    assert out["recall@1"] == 50.0 and out["recall@2"] == 75.0 and out["hit@3"] == 75.0
    assert out["first_half"]["recall@1"] == 50.0 and out["second_half"]["recall@2"] == 50.0
    assert out["p50_ms"] == 1.5
    text = format_table({"dataset": "d", "questions": 4, "results": {"s": out}})
    head, row = text.splitlines()[1:]
    assert head.split()[:3] == ["strategy", "recall@1", "recall@2"] and head.endswith("2nd half recall@2")
    assert row.split()[0] == "s" and row.split()[1:3] == ["50.0", "75.0"] and row.split()[-1] == "50.0"


def test_unknown_dataset_and_bad_lines_are_named(tmp_path, dataset):
    with pytest.raises(DatasetError, match="'nowhere' not found"):
        load_dataset("nowhere")
    (dataset / "questions.jsonl").write_text('{"id": "q1", "question": "ok"}\nnot json\n')
    with pytest.raises(DatasetError, match="questions.jsonl:line 2"):
        load_dataset(str(dataset))


def test_cli_eval_retrieval_reports_every_metric_and_reuses_its_store(tmp_path, dataset):
    store = tmp_path / "store"
    args = ("eval", "retrieval", "--dataset", str(dataset), "--strategies", "vector,rrf,ppr", "--k", "1,2",
            "--store", str(store))
    code, report, err = cli_json(*args)
    assert code == 0, err
    assert report["dataset"] == "tiny-qa" and report["questions"] == 4
    assert list(report["results"]) == ["vector", "rrf", "ppr"]
    for row in report["results"].values():
        assert {"recall@1", "recall@2", "hit@1", "hit@3", "p50_ms", "p95_ms", "first_half", "second_half"} <= set(row)
        assert 0 <= row["recall@1"] <= row["recall@2"] <= 100
        assert set(row["first_half"]) == set(row["second_half"]) == set(row) - {"first_half", "second_half", "first_query_ms"}
    assert report["results"]["vector"]["hit@3"] == 100.0  # every question names its first gold passage
    cached = list((store / "eval").iterdir())
    assert len(cached) == 1 and (cached[0] / "eval-ready.json").is_file()
    marker = (cached[0] / "eval-ready.json").read_text()
    code, again, _ = cli_json(*args[:5], "vector", *args[6:])
    assert code == 0 and again["results"]["vector"]["recall@2"] == report["results"]["vector"]["recall@2"]
    assert (cached[0] / "eval-ready.json").read_text() == marker  # not ingested again


def test_cli_eval_usage_errors(tmp_path, dataset):
    bad = run_cli("eval", "retrieval", "--dataset", "no-such-set", "--store", str(tmp_path / "s"))
    assert bad.returncode == 2 and "no-such-set" in bad.stderr
    bad = run_cli("eval", "retrieval", "--dataset", str(dataset), "--strategies", "vector,nope", "--store", str(tmp_path / "s"))
    assert bad.returncode == 2 and "nope" in bad.stderr
    bad = run_cli("eval", "retrieval", "--dataset", str(dataset), "--k", "two", "--store", str(tmp_path / "s"))
    assert bad.returncode == 2 and "--k" in bad.stderr


def test_document_sets_score_gold_documents_sections_and_kinds(tmp_path):
    """A folder of documents with gold document paths: recall over documents, chunk recall over gold
    sections, a row per kind, and unanswerable questions left out of the retrieval metrics."""
    folder = tmp_path / "docs-set"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "plan.md").write_text(
        "# Plan\n\n## 1 Water\n\nThe water plant spends 240 thousand dollars on fluoride.\n\n"
        "## 2 Roads\n\nThe road crews patch potholes in spring.\n", encoding="utf-8")  # fmt: skip
    (folder / "docs" / "review.md").write_text(
        "# Review\n\nThe review says fluoride costs 260 thousand dollars, not 240.\n", encoding="utf-8"
    )
    questions = [
        {"id": "d1", "question": "How much is spent on fluoride at the water plant?", "kind": "number_lookup",
         "answers": ["240"], "gold_docs": ["docs/plan.md"], "gold_sections": ["1 Water"]},
        {"id": "d2", "question": "Which figure for fluoride does the review give?", "kind": "discrepancy",
         "answers": ["260"], "gold_docs": ["docs/plan.md", "docs/review.md"]},
        {"id": "d3", "question": "Who painted the town hall?", "kind": "unanswerable", "answers": [], "gold_docs": []},
    ]  # fmt: skip
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    loaded = load_dataset(str(folder))
    assert loaded.documents and loaded.corpus == folder / "docs" and loaded.questions[0].gold == ["docs/plan.md"]
    code, report, err = cli_json("--store", str(tmp_path / "store"), "eval", "retrieval", "--dataset", str(folder),
                                 "--strategies", "vector,lexical", "--k", "1,2")  # fmt: skip
    assert code == 0, err
    lexical = report["results"]["lexical"]
    assert lexical["recall@2"] == 100.0 and lexical["chunk_recall@2"] > 0
    assert set(lexical["kinds"]) == {"number_lookup", "discrepancy"}  # the unanswerable one has no gold
    assert lexical["kinds"]["number_lookup"] == {**lexical["kinds"]["number_lookup"], "questions": 1, "chunk_recall@1": 100.0}
    text = run_cli("--store", str(tmp_path / "store"), "eval", "retrieval", "--dataset", str(folder), "--strategies", "lexical")
    assert "recall@5 by kind of question" in text.stdout and "discrepancy" in text.stdout

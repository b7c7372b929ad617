"""``stratagraph eval retrieval``: every named strategy over one dataset, side by side in one run.

Metrics, in percent, over the top-k *distinct passages* (a passage is a document title here: the chunks a
strategy returns are reduced to their documents' titles in rank order):

* ``recall@k``: the share of a question's gold titles among the top-k titles, averaged (HippoRAG, KAG);
* ``hit@k``: the share of questions with any gold title in the top k (CG-RAG);
* ``p50_ms`` / ``p95_ms``: wall time of one ``retrieve`` call, after one warm-up query per strategy (which
  builds the per-store caches; its time is ``first_query_ms``);
* ``first_half`` / ``second_half``: the same metrics over each half of the questions, in file order.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from stratagraph.config import Settings
from stratagraph.eval.datasets import Dataset, Question, load_dataset, store_settings
from stratagraph.retrieval import STRATEGIES, RetrievalContext, RetrievalError, RetrievalResult, retrieve
from stratagraph.retrieval.base import Filters

READY_MARKER = "eval-ready.json"
HITS = (1, 3)


class QuestionRun(BaseModel):
    id: str
    titles: list[str]  # distinct titles, best first (as many as the deepest k)
    ms: float


class StrategyRun(BaseModel):
    strategy: str
    first_query_ms: float = 0.0  # the warm-up query: builds the strategy's per-store caches
    runs: list[QuestionRun] = Field(default_factory=list)


def distinct_titles(titles: Sequence[str], limit: int) -> list[str]:
    return list(dict.fromkeys(titles))[:limit]


def recall_at(gold: Sequence[str], titles: Sequence[str], k: int) -> float:
    wanted = set(gold)
    return len(wanted & set(titles[:k])) / len(wanted) if wanted else 0.0


def hit_at(gold: Sequence[str], titles: Sequence[str], k: int) -> float:
    return 1.0 if set(gold) & set(titles[:k]) else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def metrics(questions: Sequence[Question], runs: Sequence[QuestionRun], ks: Sequence[int]) -> dict[str, float]:
    out: dict[str, float] = {}
    n = len(questions)
    for k in ks:
        out[f"recall@{k}"] = round(100 * sum(recall_at(q.gold_titles, r.titles, k) for q, r in zip(questions, runs, strict=True)) / n, 1)
    for k in HITS:
        out[f"hit@{k}"] = round(100 * sum(hit_at(q.gold_titles, r.titles, k) for q, r in zip(questions, runs, strict=True)) / n, 1)
    times = [r.ms for r in runs]
    out["p50_ms"] = round(statistics.median(times), 1)
    out["p95_ms"] = round(percentile(times, 95), 1)
    return out


def summarize(questions: Sequence[Question], run: StrategyRun, ks: Sequence[int]) -> dict[str, Any]:
    half = len(questions) // 2
    result: dict[str, Any] = metrics(questions, run.runs, ks)
    result["first_query_ms"] = run.first_query_ms
    if half:
        result["first_half"] = metrics(questions[:half], run.runs[:half], ks)
        result["second_half"] = metrics(questions[half:], run.runs[half:], ks)
    return result


def ensure_store(dataset: Dataset, settings: Settings, progress: Callable[[str, int, int], None] | None = None) -> Settings:
    """Ingest the corpus into its cached store unless a completed ingest is already there."""
    from stratagraph.api import StrataGraph

    eval_settings = store_settings(dataset, settings)
    marker = Path(eval_settings.home) / READY_MARKER
    if marker.is_file():
        return eval_settings
    started = time.perf_counter()
    with StrataGraph(eval_settings, progress=progress) as sg:
        result = sg.ingest([dataset.corpus])
        if result.failed:
            bad = next(d for d in result.documents if d.status == "failed")
            raise RuntimeError(f"ingesting {dataset.corpus} failed for {result.failed} record(s), e.g. {bad.source}: {bad.error}")
        counts = sg.stats()
    marker.write_text(
        json.dumps({"corpus": str(dataset.corpus), "seconds": round(time.perf_counter() - started, 1), "nodes": counts.nodes}),
        encoding="utf-8",
    )
    return eval_settings


def run_strategy(
    ctx: RetrievalContext,
    strategy: str,
    questions: Sequence[Question],
    depth: int,
    filters: Filters | None = None,
    search: Callable[[str, int], RetrievalResult] | None = None,
) -> StrategyRun:
    """One strategy over every question; chunks are asked for generously (3 per wanted passage) so that
    several chunks of one passage cannot crowd out the top-k distinct passages. ``search(question, k)``
    replaces the named strategy (for ablations of a strategy's parameters)."""
    chunk_k = max(depth * 3, 10)
    if search is None:
        def search(question: str, k: int) -> RetrievalResult:
            return retrieve(ctx, strategy, question, k=k, filters=filters)

    started = time.perf_counter()
    search(questions[0].question, chunk_k)  # warm-up: caches, models
    run = StrategyRun(strategy=strategy, first_query_ms=round((time.perf_counter() - started) * 1000, 1))
    for q in questions:
        started = time.perf_counter()
        result = search(q.question, chunk_k)
        ms = (time.perf_counter() - started) * 1000
        run.runs.append(QuestionRun(id=q.id, titles=distinct_titles([e.title for e in result.evidence], depth), ms=ms))
    return run


def evaluate(
    dataset_name: str,
    strategies: Sequence[str],
    ks: Sequence[int],
    settings: Settings,
    limit: int | None = None,
    filters: Filters | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """The ``eval retrieval`` report: ``{"dataset", "questions", "results": {strategy: metrics}}``."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise RetrievalError(f"unknown strategy {', '.join(unknown)}; choose from {', '.join(STRATEGIES)}")
    if not ks or any(k < 1 for k in ks):
        raise RetrievalError(f"--k needs positive integers, not {list(ks)}")
    dataset = load_dataset(dataset_name, limit=limit)
    eval_settings = ensure_store(dataset, settings, progress)
    from stratagraph.services import Services

    svc = Services(eval_settings)
    try:
        ctx = RetrievalContext.from_services(svc)
        results = {}
        for i, name in enumerate(strategies):
            if progress is not None:
                progress(f"eval {name}", i, len(strategies))
            results[name] = summarize(dataset.questions, run_strategy(ctx, name, dataset.questions, max(ks), filters), ks)
    finally:
        svc.close()
    return {"dataset": dataset.name, "questions": len(dataset.questions), "results": results}


HALVES = ("first_half", "second_half")


def table(report: dict[str, Any], half_metrics: Sequence[str] | None = None) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of a report: the overall metrics in report order, then each half's ``half_metrics``
    (default: its recall@k columns). One row per strategy."""
    results = report["results"]
    first = next(iter(results.values()), {})
    cols = [c for c in first if c not in HALVES]
    if half_metrics is None:
        half_metrics = [c for c in first.get(HALVES[0], {}) if c.startswith("recall")]
    halves = [(h, c) for h in HALVES for c in half_metrics]
    head = ["strategy", *cols, *(f"{'1st' if h == HALVES[0] else '2nd'} half {c}" for h, c in halves)]
    rows = [[name, *(row[c] for c in cols), *(row.get(h, {}).get(c, "") for h, c in halves)] for name, row in results.items()]
    return head, rows


def format_table(report: dict[str, Any]) -> str:
    """The report as an aligned text table (one row per strategy)."""
    if not report["results"]:
        return "no strategies"
    head, rows = table(report)
    widths = [max(len(str(v)) for v in column) for column in zip(head, *rows, strict=True)]
    lines = [f"{report['dataset']} ({report['questions']} questions)"]
    for cells in (head, *rows):
        lines.append(str(cells[0]).ljust(widths[0]) + "".join(str(v).rjust(w + 2) for v, w in zip(cells[1:], widths[1:], strict=True)))
    return "\n".join(lines)

"""``stratagraph eval retrieval``: every named strategy over one dataset, side by side in one run.

Metrics, in percent, over the top-k *distinct passages* (a passage is a document: the chunks a strategy
returns are reduced to their documents in rank order, by title for a passage set, by document id for a
document set):

* ``recall@k``: the share of a question's gold documents among the top-k documents, averaged (HippoRAG, KAG);
* ``chunk_recall@k`` (document sets): the share of a question's gold units covered by the top-k *chunks*
  themselves (not the top-k documents): its gold sections when it names them (a chunk under a gold heading
  covers it), else its gold documents;
* ``answer_recall@k`` (questions whose answer is a span of a document): the share of them with an accepted answer
  inside one of the top-k chunks' text (:func:`stratagraph.eval.accuracy.contains`: numbers as numbers);
* ``hit@k``: the share of questions with any gold document in the top k (CG-RAG);
* ``p50_ms`` / ``p95_ms``: wall time of one ``retrieve`` call, after one warm-up query per strategy (which
  builds the per-store caches; its time is ``first_query_ms``);
* ``first_half`` / ``second_half``: the same metrics over each half of the questions, in file order;
* ``kinds`` (when questions have a ``kind``): the same metrics per kind of question.

Questions without gold documents (unanswerable ones) are left out of retrieval metrics.
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
from stratagraph.eval.accuracy import contains
from stratagraph.eval.datasets import Dataset, Question, load_dataset, store_settings
from stratagraph.retrieval import STRATEGIES, RetrievalContext, RetrievalError, RetrievalResult, retrieve
from stratagraph.retrieval.base import Filters

READY_MARKER = "eval-ready.json"
HITS = (1, 3)


class QuestionRun(BaseModel):
    id: str
    titles: list[str]  # distinct documents (titles or ids), best first (as many as the deepest k)
    chunks: list[list[str]] = Field(default_factory=list)  # per top chunk: its document and heading path
    answer_at: int | None = None  # rank (1-based) of the first top chunk holding an accepted answer
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


def _heading(text: str) -> str:
    return " ".join(text.casefold().split())


def chunk_recall_at(q: Question, chunks: Sequence[Sequence[str]], k: int) -> float:
    """The share of ``q``'s gold sections (else gold documents) that one of its top-k chunks lies in."""
    top = chunks[:k]
    if q.gold_sections:
        wanted = {_heading(s) for s in q.gold_sections}
        covered = {w for c in top for w in wanted if w in {_heading(h) for h in c[1:]}}
        return len(covered) / len(wanted)
    docs = set(q.gold)
    return len(docs & {c[0] for c in top}) / len(docs) if docs else 0.0


def metrics(questions: Sequence[Question], runs: Sequence[QuestionRun], ks: Sequence[int]) -> dict[str, float]:
    out: dict[str, float] = {}
    pairs = [(q, r) for q, r in zip(questions, runs, strict=True) if q.gold]
    n = max(len(pairs), 1)
    for k in ks:
        out[f"recall@{k}"] = round(100 * sum(recall_at(q.gold, r.titles, k) for q, r in pairs) / n, 1)
    if any(r.chunks for _, r in pairs):
        for k in ks:
            out[f"chunk_recall@{k}"] = round(100 * sum(chunk_recall_at(q, r.chunks, k) for q, r in pairs) / n, 1)
    spans = [(q, r) for q, r in pairs if q.answer_type == "span" and q.answers]
    if spans and any(r.chunks for _, r in spans):
        for k in ks:
            hits = sum(1 for _, r in spans if r.answer_at is not None and r.answer_at <= k)
            out[f"answer_recall@{k}"] = round(100 * hits / len(spans), 1)
    for k in HITS:
        out[f"hit@{k}"] = round(100 * sum(hit_at(q.gold, r.titles, k) for q, r in pairs) / n, 1)
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
    kinds = sorted({q.kind for q in questions if q.kind and q.gold})
    if kinds:
        result["kinds"] = {
            kind: {"questions": sum(1 for q in questions if q.kind == kind)}
            | metrics(*zip(*[(q, r) for q, r in zip(questions, run.runs, strict=True) if q.kind == kind], strict=True), ks)  # type: ignore[arg-type]
            for kind in kinds
        }
    return result


#: the graphs a benchmark runs on (issue 24): the extractor's as ingested, an imported OpenIE graph alone
#: (``import openie --replace``), or both side by side
GRAPHS = ("extractor", "openie", "both")
#: the OpenIE file looked for beside a dataset's corpus when none is given (HippoRAG's GPT-3.5 extraction)
OPENIE_FILE = "openie_gpt35.json"


def ensure_store(
    dataset: Dataset,
    settings: Settings,
    progress: Callable[[str, int, int], None] | None = None,
    graph: str = "extractor",
    openie: Path | None = None,
) -> Settings:
    """Settings of the dataset's cached store on ``graph`` (:data:`GRAPHS`): the ingested store, or a copy of it
    in a folder of its own (keyed by the OpenIE file's hash) with ``openie`` (default: the dataset's
    ``openie_gpt35.json``) imported, alone or beside the extractor's graph."""
    if graph not in GRAPHS:
        raise RetrievalError(f"unknown graph {graph!r}; choose from {', '.join(GRAPHS)}")
    base = _ingested_store(dataset, settings, progress)
    if graph == "extractor":
        return base
    from stratagraph.eval.datasets import DatasetError

    if dataset.on_store:
        raise DatasetError(f"dataset {dataset.name}: an OpenIE graph is imported into a copy of its cached store, not the current one")
    path = Path(openie) if openie is not None else dataset.path / OPENIE_FILE
    if not path.is_file():
        raise DatasetError(f"dataset {dataset.name}: no OpenIE file at {path}")
    import hashlib
    import shutil

    from stratagraph.api import StrataGraph

    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    home = Path(base.home).with_name(f"{Path(base.home).name}-openie-{graph}-{digest}")
    out = base.model_copy(update={"home": home})
    if (home / READY_MARKER).is_file():
        return out
    if home.exists():  # an import that did not finish
        shutil.rmtree(home)
    shutil.copytree(base.home, home, ignore=shutil.ignore_patterns(READY_MARKER, "*.lock"))
    started = time.perf_counter()
    with StrataGraph(out, progress=progress) as sg:
        report = sg.import_openie(path, replace=graph == "openie")
        counts = sg.stats()
    (home / READY_MARKER).write_text(
        json.dumps({"corpus": str(dataset.corpus), "openie": str(path), "graph": graph, "seconds": round(time.perf_counter() - started, 1),
                    "import": {k: v for k, v in report.to_json().items() if k != "unmatched"}, "unmatched": len(report.unmatched),
                    "nodes": counts.nodes}),  # fmt: skip
        encoding="utf-8",
    )
    return out


def _ingested_store(dataset: Dataset, settings: Settings, progress: Callable[[str, int, int], None] | None = None) -> Settings:
    """Ingest the corpus into its cached store unless a completed ingest is already there."""
    from stratagraph.api import StrataGraph

    if dataset.on_store:
        return settings
    eval_settings = store_settings(dataset, settings)
    marker = Path(eval_settings.home) / READY_MARKER
    if marker.is_file():
        return eval_settings
    started = time.perf_counter()
    with StrataGraph(eval_settings, progress=progress) as sg:
        result = sg.ingest([dataset.corpus], base=dataset.path if dataset.documents else None)
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
    by_doc_id: bool = False,
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
        keys = [e.doc_id if by_doc_id else e.title for e in result.evidence]
        chunks = [[e.doc_id, *e.section_path] for e in result.evidence[:depth]] if by_doc_id else []
        answer_at = next((i for i, e in enumerate(result.evidence[:depth], start=1)
                          if any(contains(e.text, a) for a in q.answers)), None) if by_doc_id else None  # fmt: skip
        run.runs.append(QuestionRun(id=q.id, titles=distinct_titles(keys, depth), chunks=chunks, answer_at=answer_at,
                                    ms=ms))  # fmt: skip
    return run


def evaluate(
    dataset_name: str,
    strategies: Sequence[str],
    ks: Sequence[int],
    settings: Settings,
    limit: int | None = None,
    filters: Filters | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    graph: str = "extractor",
    openie: Path | None = None,
) -> dict[str, Any]:
    """The ``eval retrieval`` report: ``{"dataset", "questions", "results": {strategy: metrics}}``; ``graph`` and
    ``openie`` choose the graph (:func:`ensure_store`)."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise RetrievalError(f"unknown strategy {', '.join(unknown)}; choose from {', '.join(STRATEGIES)}")
    if not ks or any(k < 1 for k in ks):
        raise RetrievalError(f"--k needs positive integers, not {list(ks)}")
    dataset = load_dataset(dataset_name, limit=limit)
    eval_settings = ensure_store(dataset, settings, progress, graph=graph, openie=openie)
    from stratagraph.services import Services

    svc = Services(eval_settings)
    try:
        ctx = svc.new_retrieval()
        results = {}
        for i, name in enumerate(strategies):
            if progress is not None:
                progress(f"eval {name}", i, len(strategies))
            run = run_strategy(ctx, name, dataset.questions, max(ks), filters, by_doc_id=dataset.documents)
            results[name] = summarize(dataset.questions, run, ks)
    finally:
        svc.close()
    return {"dataset": dataset.name, "questions": len(dataset.questions), "results": results}


HALVES = ("first_half", "second_half")


def table(report: dict[str, Any], half_metrics: Sequence[str] | None = None) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of a report: the overall metrics in report order, then each half's ``half_metrics``
    (default: its recall@k columns). One row per strategy."""
    results = report["results"]
    first = next(iter(results.values()), {})
    cols = [c for c in first if c not in HALVES and c != "kinds"]
    if half_metrics is None:
        half_metrics = [c for c in first.get(HALVES[0], {}) if c.startswith("recall")]
    halves = [(h, c) for h in HALVES for c in half_metrics]
    head = ["strategy", *cols, *(f"{'1st' if h == HALVES[0] else '2nd'} half {c}" for h, c in halves)]
    rows = [[name, *(row[c] for c in cols), *(row.get(h, {}).get(c, "") for h, c in halves)] for name, row in results.items()]
    return head, rows


def kind_table(report: dict[str, Any], metric: str) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of one metric per kind of question: a row per kind (with its question count), a
    column per strategy; empty when the questions have no kinds."""
    results = report["results"]
    kinds = sorted({k for row in results.values() for k in row.get("kinds", {})})
    if not kinds:
        return [], []
    head = ["kind", "questions", *results]
    rows = []
    for kind in kinds:
        cells = [row.get("kinds", {}).get(kind, {}) for row in results.values()]
        rows.append([kind, next((c["questions"] for c in cells if c), 0), *(c.get(metric, "") for c in cells)])
    return head, rows


def _aligned(title: str, head: list[str], rows: list[list[Any]]) -> list[str]:
    widths = [max(len(str(v)) for v in column) for column in zip(head, *rows, strict=True)]
    lines = [title]
    for cells in (head, *rows):
        lines.append(str(cells[0]).ljust(widths[0]) + "".join(str(v).rjust(w + 2) for v, w in zip(cells[1:], widths[1:], strict=True)))
    return lines


def format_table(report: dict[str, Any]) -> str:
    """The report as aligned text tables: one row per strategy, then (for questions with kinds) the largest
    recall@k per kind of question."""
    if not report["results"]:
        return "no strategies"
    head, rows = table(report)
    lines = _aligned(f"{report['dataset']} ({report['questions']} questions)", head, rows)
    recalls = [c for c in head if c.startswith("recall@")]
    if recalls:
        khead, krows = kind_table(report, recalls[-1])
        if krows:
            lines += ["", *_aligned(f"{recalls[-1]} by kind of question", khead, krows)]
    return "\n".join(lines)

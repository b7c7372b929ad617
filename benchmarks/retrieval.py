"""Every retrieval strategy on the shared multi-hop sets, side by side in one run per dataset.

    .venv/bin/python benchmarks/retrieval.py [--datasets hotpotqa-100,musique-100,2wiki-101]
        [--strategies vector,lexical,rrf,...] [--k 2,5] [--limit N] [--store .stratagraph] [--out FILE.json]
        [--graphs extractor,openie,both] [--openie FILE]

The same code path as ``stratagraph eval retrieval`` (``stratagraph.eval.retrieval.evaluate``): each corpus is
ingested once into a store cached under ``<store>/eval/``, then every strategy answers every question in this
one process (so latencies are comparable within a run). Prints a Markdown table per dataset and, with
``--out``, the JSON reports. Datasets are read from ``$STRATAGRAPH_DATA_DIR`` or ``../shared/data``; a missing
dataset is skipped with a note.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight onnxruntime's on 2 cores
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATASETS = "hotpotqa-100,musique-100,2wiki-101"
OOD = ",".join(str(p) for p in sorted((REPO / "benchmarks" / "data").glob("*")) if (p / "questions.jsonl").is_file())


def pooled_answer_recall(reports: list[dict], k: int) -> str:
    """answer_recall@k per strategy over the span questions of every document set run (weighted by their
    number), as a Markdown table."""
    from stratagraph.eval.datasets import load_dataset

    totals: dict[str, list[float]] = {}
    for report in reports:
        try:
            questions = load_dataset(report["path"]).questions
        except Exception:  # noqa: BLE001 - a passage set has no span questions
            continue
        n = sum(1 for q in questions if q.answer_type == "span" and q.answers)
        for name, row in report["results"].items():
            if f"answer_recall@{k}" in row:
                t = totals.setdefault(name, [0.0, 0.0])
                t[0] += row[f"answer_recall@{k}"] * n / 100
                t[1] += n
    if not totals:
        return ""
    lines = [f"**answer_recall@{k} pooled over the document sets**", "", "| strategy | span questions | answer_recall@{k} |".replace("{k}", str(k)),
             "|---|---|---|"]  # fmt: skip
    lines += [f"| {name} | {int(n)} | {round(100 * hit / n, 1)} |" for name, (hit, n) in totals.items() if n]
    return "\n".join(lines)


def markdown(report: dict, ks: list[int]) -> str:
    from stratagraph.eval.retrieval import kind_table, table

    def block(head: list, rows: list) -> list[str]:
        return ["| " + " | ".join(str(c) for c in head) + " |", "|" + "---|" * len(head),
                *("| " + " | ".join(str(c) for c in cells) + " |" for cells in rows)]

    head, rows = table(report, half_metrics=[f"recall@{max(ks)}"])
    lines = [f"**{report['dataset']}** ({report['questions']} questions)", "", *block(head, rows)]
    khead, krows = kind_table(report, f"recall@{max(ks)}")
    if krows:
        lines += ["", f"recall@{max(ks)} by kind of question:", "", *block(khead, krows)]
    return "\n".join(lines)


ABLATIONS = {  # ppr walk, dense, bm25, question's pages, one hop out, traversal (the default: 1, 0, 1, 1, 2, 1)
    "ppr +dense": (1, 1, 1, 1, 2, 1),
    "ppr -walk": (0, 0, 1, 1, 2, 1),
    "ppr -bm25": (1, 0, 0, 1, 2, 1),
    "ppr -pages": (1, 0, 1, 0, 2, 1),
    "ppr -out": (1, 0, 1, 1, 0, 1),
    "ppr -trav": (1, 0, 1, 1, 2, 0),
    "ppr out1": (1, 0, 1, 1, 1, 1),
}


def ppr_ablation(name: str, ks: list[int], settings, limit: int | None, graph: str = "extractor",  # noqa: ANN001
                 openie: Path | None = None) -> dict:
    """``ppr`` with each fused list switched off in turn (same store, same process, same questions)."""
    from stratagraph.eval.datasets import load_dataset
    from stratagraph.eval.retrieval import ensure_store, run_strategy, summarize
    from stratagraph.retrieval import RetrievalContext
    from stratagraph.retrieval import ppr as P
    from stratagraph.services import Services

    dataset = load_dataset(name, limit=limit)
    svc = Services(ensure_store(dataset, settings, graph=graph, openie=openie))
    try:
        ctx = svc.new_retrieval()
        out = {}
        for label, weights in ABLATIONS.items():
            params = P.PPRParams(fuse_weights=weights)
            run = run_strategy(ctx, label, dataset.questions, max(ks),
                               search=lambda q, k, p=params: P.retrieve(ctx, q, k=k, params=p))
            out[label] = summarize(dataset.questions, run, ks)
        return out
    finally:
        svc.close()


DEEP = 16


def misses(name: str, strategy: str, k: int, settings, limit: int | None) -> str:  # noqa: ANN001
    """Rank (among the top 16 distinct passages) of every gold passage missed at k, and recall@k by the
    number of gold passages a question has (MuSiQue: its number of hops). 16 passages are 48 chunks, inside
    the 50-deep lists the strategies fuse, so the top k is the same as in the main table."""
    from collections import Counter, defaultdict

    from stratagraph.eval.datasets import load_dataset
    from stratagraph.eval.retrieval import ensure_store, recall_at, run_strategy
    from stratagraph.retrieval import RetrievalContext
    from stratagraph.services import Services

    dataset = load_dataset(name, limit=limit)
    svc = Services(ensure_store(dataset, settings))
    try:
        run = run_strategy(svc.new_retrieval(), strategy, dataset.questions, DEEP)
    finally:
        svc.close()
    buckets: Counter[str] = Counter()
    by_size: dict[int, list[float]] = defaultdict(list)
    for q, r in zip(dataset.questions, run.runs, strict=True):
        by_size[len(set(q.gold_titles))].append(recall_at(q.gold_titles, r.titles, k))
        for gold in set(q.gold_titles) - set(r.titles[:k]):
            rank = r.titles.index(gold) + 1 if gold in r.titles else None
            buckets[f"not in top {DEEP}" if rank is None else f"{k + 1}-10" if rank <= 10 else f"11-{DEEP}"] += 1
    total = sum(len(set(q.gold_titles)) for q in dataset.questions)
    lines = [f"{strategy} on {name}: {sum(buckets.values())} of {total} gold passages outside the top {k}; "
             "their ranks: " + ", ".join(f"{b} {n}" for b, n in sorted(buckets.items()))]
    lines += [f"  questions with {n} gold passages: {len(v)}, recall@{k} {100 * sum(v) / len(v):.1f}"
              for n, v in sorted(by_size.items())]
    return "\n".join(lines)


def main() -> int:
    from stratagraph.config import Settings
    from stratagraph.eval.datasets import DatasetError, data_dir
    from stratagraph.eval.retrieval import evaluate
    from stratagraph.retrieval import STRATEGIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=f"{DATASETS},{OOD}",
                        help="dataset names under ../shared/data or folders (default: the three shared sets and "
                             "our out-of-domain sets in benchmarks/data)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--k", default="2,5")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--store", type=Path, default=REPO / ".stratagraph")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--graphs", default="extractor",
                        help="the graphs to run on, comma-separated (issue 24): extractor (as ingested), openie (an "
                             "imported OpenIE graph alone, import openie --replace), both (side by side); each in a "
                             "store folder of its own")  # fmt: skip
    parser.add_argument("--openie", type=Path, default=None,
                        help="the OpenIE file for --graphs openie/both (default: the dataset's openie_gpt35.json)")
    parser.add_argument("--misses", default=None, metavar="STRATEGY",
                        help="also print where the strategy ranks the gold passages it misses, and recall@k by "
                             "the number of gold passages per question")
    parser.add_argument("--ppr-ablation", action="store_true",
                        help="also run ppr with each of its fused lists switched off, one at a time")
    args = parser.parse_args()
    if os.environ.get("STRATAGRAPH_DATA_DIR") is None and data_dir() is None:
        os.environ["STRATAGRAPH_DATA_DIR"] = str(REPO.parent / "shared" / "data")
    ks = [int(k) for k in args.k.split(",")]
    strategies = [s for s in args.strategies.split(",") if s]
    settings = Settings(home=args.store)
    reports = []
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}; OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}\n")
    graphs = [g for g in args.graphs.split(",") if g]
    for name, graph in [(n, g) for n in args.datasets.split(",") for g in graphs]:
        started = time.perf_counter()
        try:
            report = evaluate(name, strategies, ks, settings, limit=args.limit, graph=graph, openie=args.openie)
        except DatasetError as exc:
            print(f"skipped {name}: {exc}\n", file=sys.stderr)
            continue
        if graphs != ["extractor"]:
            report["graph"] = graph
            report["dataset"] += f" ({graph} graph)"
        if args.misses and graph == "extractor":
            print(misses(name, args.misses, max(ks), settings, args.limit) + "\n", flush=True)
        if args.ppr_ablation:
            report["results"].update(ppr_ablation(name, ks, settings, args.limit, graph, args.openie))
        report["seconds"] = round(time.perf_counter() - started, 1)
        report["path"] = name
        reports.append(report)
        report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
        print(markdown(report, ks) + f"\n\n({report['seconds']} s including any ingest; peak RSS of this process "
              f"so far {report['peak_rss_mb']} MB)\n", flush=True)
    pooled = pooled_answer_recall(reports, max(ks))
    if pooled:
        print(pooled + "\n")
    if args.out:
        args.out.write_text(json.dumps(reports, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

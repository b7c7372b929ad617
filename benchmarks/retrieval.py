"""Every retrieval strategy on the shared multi-hop sets, side by side in one run per dataset.

    .venv/bin/python benchmarks/retrieval.py [--datasets hotpotqa-100,musique-100,2wiki-101]
        [--strategies vector,lexical,rrf,...] [--k 2,5] [--limit N] [--store .stratagraph] [--out FILE.json]

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
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATASETS = "hotpotqa-100,musique-100,2wiki-101"


def markdown(report: dict, ks: list[int]) -> str:
    cols = [f"recall@{k}" for k in ks] + ["hit@1", "hit@3", "p50_ms", "p95_ms", "first_query_ms"]
    halves = [f"recall@{max(ks)}"]
    head = ["strategy", *cols, *(f"{h} {c}" for h in ("1st half", "2nd half") for c in halves)]
    lines = [f"**{report['dataset']}** ({report['questions']} questions)", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for name, row in report["results"].items():
        cells = [row[c] for c in cols]
        cells += [row.get(h, {}).get(c, "") for h in ("first_half", "second_half") for c in halves]
        lines.append(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main() -> int:
    from stratagraph.config import Settings
    from stratagraph.eval.datasets import DatasetError, data_dir
    from stratagraph.eval.retrieval import evaluate
    from stratagraph.retrieval import STRATEGIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--k", default="2,5")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--store", type=Path, default=REPO / ".stratagraph")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if os.environ.get("STRATAGRAPH_DATA_DIR") is None and data_dir() is None:
        os.environ["STRATAGRAPH_DATA_DIR"] = str(REPO.parent / "shared" / "data")
    ks = [int(k) for k in args.k.split(",")]
    strategies = [s for s in args.strategies.split(",") if s]
    settings = Settings(home=args.store)
    reports = []
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}; OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}\n")
    for name in args.datasets.split(","):
        started = time.perf_counter()
        try:
            report = evaluate(name, strategies, ks, settings, limit=args.limit)
        except DatasetError as exc:
            print(f"skipped {name}: {exc}\n", file=sys.stderr)
            continue
        report["seconds"] = round(time.perf_counter() - started, 1)
        reports.append(report)
        print(markdown(report, ks) + f"\n\n({report['seconds']} s including any ingest)\n", flush=True)
    if args.out:
        args.out.write_text(json.dumps(reports, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

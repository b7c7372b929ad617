"""Every strategy's top-5 chunks for every question of some datasets, to compare two versions of the code.

    .venv/bin/python benchmarks/rankings.py dump [--datasets hotpotqa-100,musique-100,2wiki-101]
        [--strategies default,...] [--store DIR] --out before.json
    .venv/bin/python benchmarks/rankings.py diff before.json after.json

``dump`` answers each question with each strategy (``k`` = 5, no filters) on the stores ``stratagraph eval``
ingests (cached under ``<store>/eval/``) and writes ``{"<dataset>:<strategy>": [[chunk ids], ...]}``. Run it
from two checkouts (``PYTHONPATH=<checkout>``) on the same stores; ``diff`` prints, per dataset and strategy,
how many questions' lists differ, and exits 1 when any does. For a change meant to leave rankings alone.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
K = 5


def dump(datasets: list[str], strategies: list[str], store: Path) -> dict[str, list[list[str]]]:
    from stratagraph.config import Settings
    from stratagraph.eval.datasets import load_dataset
    from stratagraph.eval.retrieval import ensure_store
    from stratagraph.retrieval import retrieve
    from stratagraph.services import Services

    out: dict[str, list[list[str]]] = {}
    for name in datasets:
        dataset = load_dataset(name)
        svc = Services(ensure_store(dataset, Settings(home=store)))
        try:
            ctx = svc.new_retrieval()
            for strategy in strategies:
                out[f"{dataset.name}:{strategy}"] = [
                    [e.chunk_id for e in retrieve(ctx, strategy, q.question, k=K).evidence] for q in dataset.questions
                ]
        finally:
            svc.close()
    return out


def diff(before: dict[str, list[list[str]]], after: dict[str, list[list[str]]]) -> int:
    changed = total = 0
    for key in sorted(before.keys() & after.keys()):
        n = sum(a != b for a, b in zip(before[key], after[key], strict=True))
        changed, total = changed + n, total + len(before[key])
        print(f"{key}: {n} of {len(before[key])} lists differ")
    print(f"all: {changed} of {total} top-{K} lists differ; only in one: {sorted(before.keys() ^ after.keys())}")
    return 1 if changed or before.keys() != after.keys() else 0


def main() -> int:
    from stratagraph.retrieval import STRATEGIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--datasets", default="hotpotqa-100,musique-100,2wiki-101")
    d.add_argument("--strategies", default=",".join(STRATEGIES))
    d.add_argument("--store", type=Path, default=REPO / ".stratagraph")
    d.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("diff")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "diff":
        return diff(json.loads(args.before.read_text()), json.loads(args.after.read_text()))
    if os.environ.get("STRATAGRAPH_DATA_DIR") is None:
        os.environ["STRATAGRAPH_DATA_DIR"] = str(REPO.parent / "shared" / "data")
    result = dump(args.datasets.split(","), args.strategies.split(","), args.store)
    args.out.write_text(json.dumps(result))
    print(f"{sum(len(v) for v in result.values())} lists written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

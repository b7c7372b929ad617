"""Top-5 lists of every strategy, dumped and compared: a refactor of the retrieval layer must not move them.

    .venv/bin/python benchmarks/index_parity.py --dump before.json     # on the old code
    .venv/bin/python benchmarks/index_parity.py --dump after.json      # on the new code
    .venv/bin/python benchmarks/index_parity.py --compare before.json after.json
    .venv/bin/python benchmarks/index_parity.py --cold-pass cold.json                # the cost after a change

``--dump`` ingests (once, cached under ``<store>/eval/`` like ``eval retrieval``) each dataset of
``../shared/data`` and writes, per dataset and strategy, the top-5 chunk ids of every question, the cold
first-query time of each strategy (a fresh retrieval context per strategy, after the embedder and spaCy are
loaded, so it is the strategy's own index build), and the resident memory of one process with every
strategy's caches loaded. ``--compare`` prints, per dataset and strategy, how many of the lists differ and
the first-query times side by side; exit 1 when any list differs. Missing datasets are skipped.

``--cold-pass`` measures what a process pays after a graph change: one fresh retrieval context, every
strategy's first query in turn (so a shared index is built by the first strategy that needs it and reused by
the others), the total, and the resident memory the caches added. Run it with the old and the new code
(``PYTHONPATH=<old checkout>``) against stores each built by its own code, alternating, and compare.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight onnxruntime's on 2 cores
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATASETS = "hotpotqa-100,musique-100,2wiki-101"


def _rss_mb() -> float:
    """Current resident memory of this process (VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024.0, 1)
    return 0.0


def _warmed(datasets: list[str], store: Path) -> Iterator[tuple[str, Any, Any]]:
    """Each dataset's (name, dataset, services) over its cached eval store, the embedder and spaCy loaded; a
    dataset that cannot be read is skipped with a note; the services are closed when the caller moves on."""
    from stratagraph.config import Settings
    from stratagraph.eval.datasets import DatasetError, load_dataset
    from stratagraph.eval.retrieval import ensure_store
    from stratagraph.retrieval import RetrievalContext
    from stratagraph.services import Services

    for name in datasets:
        try:
            dataset = load_dataset(name)
        except DatasetError as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        svc = Services(ensure_store(dataset, Settings(home=store)))
        try:
            warm = svc.new_retrieval()
            warm.query_vector("warm up the embedder")
            warm.nlp()("Warm up spaCy.")
            yield name, dataset, svc
        finally:
            svc.close()


def dump(datasets: list[str], strategies: list[str], store: Path) -> dict:
    from stratagraph.retrieval import RetrievalContext, retrieve

    out: dict = {"datasets": {}}
    for name, dataset, svc in _warmed(datasets, store):
        entry: dict = {"lists": {}, "first_query_ms": {}}
        shared = svc.new_retrieval()
        for strategy in strategies:
            cold = svc.new_retrieval()
            started = time.perf_counter()
            retrieve(cold, strategy, dataset.questions[0].question, k=5)
            entry["first_query_ms"][strategy] = round((time.perf_counter() - started) * 1000, 1)
            del cold
            entry["lists"][strategy] = {
                q.id: [e.chunk_id for e in retrieve(shared, strategy, q.question, k=5).evidence]
                for q in dataset.questions
            }
            print(f"{name} {strategy}: first query {entry['first_query_ms'][strategy]} ms", file=sys.stderr)
        entry["rss_mb_all_caches"] = _rss_mb()
        out["datasets"][name] = entry
    return out


def cold_pass(datasets: list[str], strategies: list[str], store: Path) -> dict:
    from stratagraph.retrieval import RetrievalContext, retrieve

    out: dict = {}
    for name, dataset, svc in _warmed(datasets, store):
        ctx = svc.new_retrieval()
        question = dataset.questions[0].question
        before, started, firsts = _rss_mb(), time.perf_counter(), {}
        for strategy in strategies:
            t = time.perf_counter()
            retrieve(ctx, strategy, question, k=5)
            firsts[strategy] = round((time.perf_counter() - t) * 1000, 1)
        total = round((time.perf_counter() - started) * 1000, 1)
        out[name] = {"first_query_ms": firsts, "total_ms": total, "rss_added_mb": round(_rss_mb() - before, 1)}
        print(f"{name}: {total} ms, +{out[name]['rss_added_mb']} MB {firsts}", file=sys.stderr)
    return out


def compare(before: dict, after: dict) -> int:
    differing_total = 0
    for name, old in before["datasets"].items():
        new = after["datasets"].get(name)
        if new is None:
            print(f"{name}: missing from the second dump")
            continue
        print(f"**{name}** (resident memory with every strategy's caches: {old.get('rss_mb_all_caches')} MB -> "
              f"{new.get('rss_mb_all_caches')} MB)\n")  # fmt: skip
        print("| strategy | lists differing | first query ms before | after |")
        print("|---|---:|---:|---:|")
        for strategy, lists in old["lists"].items():
            if strategy not in new["lists"]:
                continue
            differ = sum(1 for q, ids in lists.items() if new["lists"][strategy].get(q) != ids)
            differing_total += differ
            print(f"| {strategy} | {differ} of {len(lists)} | {old['first_query_ms'][strategy]} | "
                  f"{new['first_query_ms'][strategy]} |")  # fmt: skip
        print()
    print(f"{differing_total} differing lists in all")
    return 1 if differing_total else 0


def main() -> int:
    from stratagraph.retrieval import STRATEGIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--strategies", default=",".join(s for s in STRATEGIES if s != "default"))
    parser.add_argument("--store", type=Path, default=REPO / ".stratagraph")
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2)
    parser.add_argument("--cold-pass", type=Path, help="write the cold pass over every strategy (docstring)")
    args = parser.parse_args()
    if os.environ.get("STRATAGRAPH_DATA_DIR") is None:
        os.environ["STRATAGRAPH_DATA_DIR"] = str(REPO.parent / "shared" / "data")
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        return compare(before, after)
    if args.cold_pass:
        result = cold_pass(args.datasets.split(","), args.strategies.split(","), args.store)
        args.cold_pass.write_text(json.dumps(result), encoding="utf-8")
        return 0
    if not args.dump:
        parser.error("give --dump FILE, --cold-pass FILE or --compare BEFORE AFTER")
    result = dump(args.datasets.split(","), args.strategies.split(","), args.store)
    args.dump.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``default`` on synthetic stores of growing size: the whole-graph walk and the local push side by side.

    .venv/bin/python benchmarks/scale.py [--sizes 20000,200000] [--queries 40] [--root DIR] [--json]

For each size, the store of ``benchmarks/synth.py`` (seed 0) is built once under ``<root>/synth-<size>`` and
reused on later runs. Then, for each path, a fresh query process opens it and asks ``default`` ``--queries``
questions about entities drawn by the store's own popularity (hubs and tail names alike, half of them naming a
page): ``whole`` walks by power iteration over the whole-graph index (``local_walk_facts`` above the store's
size), ``local`` by push from the seeds over neighbourhood reads (``local_walk_facts=0``). Reported per path:
the first query (it builds the per-generation caches), p50 and p95 of the rest, and the query process's peak
RSS. Prints a Markdown table, or with ``--json``
``{"sizes": {"20000": {"build": {...}, "whole": {...}, "local": {...}}, ...}}``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

PATHS = {"whole": None, "local": 0}
TEMPLATES = ["Who founded {}?", "Where was {} born?", "What did {} write?", "Who succeeded {} and {}?"]


def questions(facts: int, n: int, seed: int = 1) -> list[str]:
    """``n`` questions naming entities drawn from the store's Zipf popularity (deterministic)."""
    rng = np.random.default_rng(seed)
    ents = synth.zipf(rng, 3 * facts, 2 * n, synth.ENTITY_EXPONENT)
    out = []
    for i in range(n):
        t = TEMPLATES[i % len(TEMPLATES)]
        out.append(t.format(*(synth.name(int(e)) for e in ents[2 * i : 2 * i + t.count("{}")])))
    return out


def worker(home: Path, facts: int, local_walk_facts: int | None, n: int) -> dict:
    """One query process: ``n`` + 1 questions to ``default``; latencies and peak RSS."""
    from stratagraph.config import Settings
    from stratagraph.retrieval import retrieve
    from stratagraph.services import Services

    svc = Services(Settings(home=home, local_walk_facts=local_walk_facts))
    try:
        ctx = svc.new_retrieval()
        qs = questions(facts, n + 1)
        ms = []
        for q in qs:
            started = time.perf_counter()
            retrieve(ctx, "default", q, k=5)
            ms.append((time.perf_counter() - started) * 1000)
    finally:
        svc.close()
    rest = np.asarray(ms[1:])
    return {"first_query_ms": round(ms[0]), "p50_ms": round(float(np.percentile(rest, 50)), 1),
            "p95_ms": round(float(np.percentile(rest, 95)), 1),
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}  # fmt: skip


def run_size(size: int, root: Path, n: int) -> dict:
    out: dict = {"build": synth.build(size, root / f"synth-{size}")}
    for path, threshold in PATHS.items():
        cmd = [sys.executable, __file__, "--worker", str(root / f"synth-{size}"), "--facts", str(size),
               "--threshold", str(threshold), "--queries", str(n)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(f"query process failed ({path}, {size}):\n{proc.stderr[-3000:]}")
        out[path] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def table(report: dict) -> str:
    lines = ["| facts | nodes | edges | store MB | path | first query ms | p50 ms | p95 ms | peak RSS MB |", "|---|---|---|---|---|---|---|---|---|"]
    for size, row in report["sizes"].items():
        b = row["build"]
        for path in PATHS:
            r = row[path]
            lines.append(f"| {size} | {sum(b['nodes'].values())} | {sum(b['edges'].values())} | {b['store_mb']} | {path} | "
                         f"{r['first_query_ms']} | {r['p50_ms']} | {r['p95_ms']} | {r['rss_mb']} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1] / ".stratagraph" / "scale")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--facts", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=lambda v: None if v == "None" else int(v), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.facts, args.threshold, args.queries)))
        return 0
    report = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}", "sizes": {}}
    for size in (int(s) for s in args.sizes.split(",")):
        report["sizes"][str(size)] = run_size(size, args.root, args.queries)
        print(json.dumps({size: report["sizes"][str(size)]}), file=sys.stderr, flush=True)  # kept if a later size fails
    print(json.dumps(report) if args.json else table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

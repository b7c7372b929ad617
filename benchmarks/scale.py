"""Every strategy on synthetic stores of growing size: latency, memory, the first query after a write.

    .venv/bin/python benchmarks/scale.py [--sizes 20000,200000] [--queries 40] [--strategies ...] [--local]
        [--root DIR] [--work DIR] [--json]

For each size, the store of ``benchmarks/synth.py`` (seed 0) is built once under ``<root>/synth-<size>`` and
reused on later runs. A fresh query process opens it and asks each strategy ``--queries`` questions about
entities drawn by the store's own popularity (hubs and tail names alike, half of them naming a page), after one
first question that builds what the strategy derives per graph generation. Reported: per strategy the first
query and p50 / p95 of the rest; the query process's peak RSS (``rss_mb``, after every strategy ran) and its
RSS after ``default`` alone; and the first query of ``default`` after another process wrote one document
(``first_query_after_write_ms``, the indexes updated from the change feed; below). With ``--local``, ``default``
is asked again in a third process with the walk by local push over neighbourhood reads (``local_walk_facts=0``).
Prints a Markdown table, or with ``--json``
``{"sizes": {"20000": {"rss_mb": ..., "first_query_after_write_ms": ..., "strategies": {"default": {"p50_ms": ...,
"p95_ms": ..., "first_query_ms": ...}, ...}, "build": {...}, ...}, ...}}``.

``--bolt`` builds and queries the stores on the Neo4j backend instead: a local ArcadeDB server over Bolt started
under ``<root>/arcadedb`` (or the server of ``NEO4J_URI`` / ``NEO4J_USER`` / ``NEO4J_PASSWORD``), one database
``synth<size>`` per size, the store folders (vectors) ``<root>/bolt-synth-<size>``; the write before the first
query after a write rewrites the same document in place (the server's database cannot be copied).

``--after-write`` measures instead the first query after another process's write, with the per-generation
indexes read whole (``full``, ``incremental_index=False``) and updated from the store's change feed
(``incremental``): on a copy of each size's store (``<work>/synth-<size>-after-write``, made once), a fresh
query process per mode asks one question (building its caches), has a child process write one document again
(``synth.document_version`` through ``replace_documents``: every row of it written anew), then times the next
question, split into the graph index, the lexical index and the rest (the strategies' derived caches and the
query itself); ``{"sizes": {"20000": {"full": {"first_query_after_write_ms": ...}, "incremental": {...}}}}``.
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
from collections.abc import Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth  # noqa: E402

PATHS = {"whole": None, "local": 0}
STRATEGIES = "default,vector,lexical,rrf,hybrid,dual_path,traversal,ppr,lesegr,top_down,bottom_up"
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


def worker(home: Path, facts: int, local_walk_facts: int | None, n: int, strategies: list[str]) -> dict:
    """One query process: ``n`` + 1 questions to each strategy in turn; latencies and peak RSS."""
    from stratagraph.config import Settings
    from stratagraph.retrieval import retrieve
    from stratagraph.services import Services

    svc = Services(Settings(home=home, graph=GRAPH, local_walk_facts=local_walk_facts))
    out: dict = {"strategies": {}}
    try:
        ctx = svc.new_retrieval()
        qs = questions(facts, n + 1)
        for strategy in strategies:
            ms = []
            for q in qs:
                started = time.perf_counter()
                retrieve(ctx, strategy, q, k=5)
                ms.append((time.perf_counter() - started) * 1000)
            rest = np.asarray(ms[1:])
            out["strategies"][strategy] = {"first_query_ms": round(ms[0]), "p50_ms": round(float(np.percentile(rest, 50)), 1),
                                           "p95_ms": round(float(np.percentile(rest, 95)), 1)}  # fmt: skip
            if strategy == "default":
                out["rss_after_default_mb"] = peak_rss_mb()
    finally:
        svc.close()
    out["rss_mb"] = peak_rss_mb()
    return out


def peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


#: the graph backend of the stores (``--bolt``: ``neo4j``, the server named by the environment)
GRAPH = os.environ.get("STRATAGRAPH_SCALE_GRAPH", "sqlite")

REWRITE = r"""
import sys
sys.path.insert(0, sys.argv[3])
import synth
from stratagraph.config import Settings
from stratagraph.graph_store import open_graph_store
facts, d = int(sys.argv[2]), int(sys.argv[4])
plan = synth.draw(facts, 0)
chunks = [c for c, doc in enumerate(plan.chunk_doc) if doc == d]
version, _ = synth.document_version(plan, d, chunks)
with open_graph_store(Settings(home=sys.argv[1], graph=sys.argv[5])) as graph:
    graph.replace_documents([version])
"""


def after_write_worker(home: Path, facts: int, incremental: bool, doc: int) -> dict:
    """One query process: a first question (caches built), another process's write, the next question."""
    from stratagraph.config import Settings
    from stratagraph.retrieval import retrieve
    from stratagraph.services import Services

    svc = Services(Settings(home=home, graph=GRAPH, incremental_index=incremental))
    try:
        ctx = svc.new_retrieval()
        qs = questions(facts, 3)
        started = time.perf_counter()
        retrieve(ctx, "default", qs[0], k=5)
        first = time.perf_counter() - started
        gen = svc.graph.generation()
        subprocess.run([sys.executable, "-c", REWRITE, str(home), str(facts), str(Path(__file__).parent), str(doc), GRAPH],
                       check=True, timeout=3600)  # fmt: skip
        assert svc.graph.generation() > gen
        t0 = time.perf_counter()
        ctx.index()
        t1 = time.perf_counter()
        ctx.bm25()
        t2 = time.perf_counter()
        retrieve(ctx, "default", qs[1], k=5)
        t3 = time.perf_counter()
        retrieve(ctx, "default", qs[2], k=5)
        t4 = time.perf_counter()
    finally:
        svc.close()
    ms = lambda s: round(s * 1000)  # noqa: E731
    return {"first_query_ms": ms(first), "first_query_after_write_ms": ms(t3 - t0), "graph_index_ms": ms(t1 - t0),
            "bm25_ms": ms(t2 - t1), "rest_ms": ms(t3 - t2), "next_query_ms": ms(t4 - t3)}  # fmt: skip


def store_home(root: Path, size: int) -> Path:
    return root / (f"synth-{size}" if GRAPH == "sqlite" else f"bolt-synth-{size}")


def build(size: int, root: Path) -> dict:
    """The size's store, built once (on a Bolt server: into the database the environment names)."""
    with bolt_database(size):
        return synth.build(size, store_home(root, size), graph_backend=GRAPH)


def run_after_write(size: int, root: Path, work: Path) -> dict:
    out: dict = {"build": build(size, root)}
    for doc, (mode, incremental) in enumerate((("full", False), ("incremental", True))):
        out[mode] = after_write(size, root, work, mode, incremental, doc)
    return out


def after_write(size: int, root: Path, work: Path, mode: str, incremental: bool, doc: int) -> dict:
    """One query process on a copy of the size's store (made once): a question, another process's write of
    document ``doc``, the next question, timed."""
    import shutil

    from stratagraph.graph_store import SQLiteGraphStore

    if GRAPH == "sqlite":
        home = work / f"synth-{size}-after-write"
        if not home.exists():
            shutil.copytree(store_home(root, size), home)
        SQLiteGraphStore(home / "graph.sqlite").close()  # any schema migration happens here, not in a timed query
    else:  # a server's database: the document is rewritten in place, as it was
        home = store_home(root, size)
    cmd = [sys.executable, __file__, "--after-write-worker", str(home), "--facts", str(size),
           "--incremental", str(int(incremental)), "--doc", str(doc)]  # fmt: skip
    with bolt_database(size):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=3 * 3600)
    if proc.returncode != 0:
        raise RuntimeError(f"query process failed ({mode}, {size}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def after_write_table(report: dict) -> str:
    lines = ["| facts | nodes | edges | mode | first query ms | first query after write ms | of which graph index ms | "
             "lexical index ms | rest ms | next query ms |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for size, row in report["sizes"].items():
        b = row["build"]
        for mode in ("full", "incremental"):
            r = row[mode]
            lines.append(f"| {size} | {sum(b['nodes'].values())} | {sum(b['edges'].values())} | {mode} | {r['first_query_ms']} | "
                         f"{r['first_query_after_write_ms']} | {r['graph_index_ms']} | {r['bm25_ms']} | {r['rest_ms']} | "
                         f"{r['next_query_ms']} |")  # fmt: skip
    return "\n".join(lines)


def run_size(size: int, root: Path, n: int, strategies: list[str], work: Path, local: bool) -> dict:
    out: dict = {"build": build(size, root)}
    runs = [("whole", None, strategies)] + ([("local", 0, ["default"])] if local else [])
    for path, threshold, asked in runs:
        cmd = [sys.executable, __file__, "--worker", str(store_home(root, size)), "--facts", str(size),
               "--threshold", str(threshold), "--queries", str(n), "--strategies", ",".join(asked)]  # fmt: skip
        with bolt_database(size):
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=3 * 3600)
        if proc.returncode != 0:
            raise RuntimeError(f"query process failed ({path}, {size}):\n{proc.stderr[-3000:]}")
        out[path] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["strategies"] = out["whole"]["strategies"]
    out["rss_mb"], out["rss_after_default_mb"] = out["whole"]["rss_mb"], out["whole"].get("rss_after_default_mb")
    out["after_write"] = after_write(size, root, work, "incremental", True, doc=0)
    out["first_query_after_write_ms"] = out["after_write"]["first_query_after_write_ms"]
    return out


@contextmanager
def bolt_database(size: int) -> Iterator[None]:
    """With ``--bolt``: ``NEO4J_DATABASE`` names the size's database (created when absent) meanwhile."""
    if GRAPH == "sqlite":
        yield
        return
    name = f"synth{size}"
    if _SERVER is not None and not _SERVER.has_database(name):
        _SERVER.create_database(name)
    before = os.environ.get("NEO4J_DATABASE")
    os.environ["NEO4J_DATABASE"] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("NEO4J_DATABASE", None)
        else:
            os.environ["NEO4J_DATABASE"] = before


_SERVER = None  # the local ArcadeDB server of --bolt (None: SQLite, or the server of NEO4J_URI)


def start_bolt(root: Path) -> None:
    """``--bolt``: the Neo4j backend from here on (and in every child process), on ``NEO4J_URI``'s server or a
    local ArcadeDB one started under ``<root>/arcadedb``."""
    global GRAPH, _SERVER
    GRAPH = os.environ["STRATAGRAPH_SCALE_GRAPH"] = "neo4j"
    if os.environ.get("NEO4J_URI"):
        return
    from stratagraph.graph_store.arcadedb import LocalArcadeDB

    _SERVER = LocalArcadeDB(root / "arcadedb").start()
    os.environ.update(NEO4J_URI=_SERVER.uri, NEO4J_USER=_SERVER.user, NEO4J_PASSWORD=_SERVER.password)


def table(report: dict) -> str:
    lines = ["| facts | nodes | edges | store MB | peak RSS MB (after default) | first query after write ms | strategy | first query ms | p50 ms | p95 ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for size, row in report["sizes"].items():
        b = row["build"]
        runs = [(name, r) for name, r in row["strategies"].items()]
        runs += [("default, local push", row["local"]["strategies"]["default"])] if "local" in row else []
        for i, (name, r) in enumerate(runs):
            head = (f"| {size} | {sum(b['nodes'].values())} | {sum(b['edges'].values())} | {b['store_mb']} | "
                    f"{row['rss_mb']} ({row['rss_after_default_mb']}) | {row['first_query_after_write_ms']} |") if i == 0 else "| | | | | | |"  # fmt: skip
            lines.append(f"{head} {name} | {r['first_query_ms']} | {r['p50_ms']} | {r['p95_ms']} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1] / ".stratagraph" / "scale")
    parser.add_argument("--strategies", default=STRATEGIES)
    parser.add_argument("--local", action="store_true", help="also default with the walk by local push")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bolt", action="store_true", help="the Neo4j backend, on a local ArcadeDB server (or NEO4J_URI's)")
    parser.add_argument("--after-write", action="store_true", help="only the first query after another process's write, "
                        "with the indexes read whole and updated from the change feed side by side")  # fmt: skip
    parser.add_argument("--work", type=Path, help="where --after-write copies the stores it writes to (default --root)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--after-write-worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--incremental", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--doc", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--facts", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=lambda v: None if v == "None" else int(v), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.facts, args.threshold, args.queries, args.strategies.split(","))))
        return 0
    if args.after_write_worker is not None:
        print(json.dumps(after_write_worker(args.after_write_worker, args.facts, bool(args.incremental), args.doc)))
        return 0
    if args.bolt:
        start_bolt(args.root)
    try:
        return run(args)
    finally:
        if _SERVER is not None:
            _SERVER.stop()


def run(args: argparse.Namespace) -> int:
    report = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
              "graph": GRAPH, "sizes": {}}  # fmt: skip
    if args.after_write:
        for size in (int(s) for s in args.sizes.split(",")):
            report["sizes"][str(size)] = run_after_write(size, args.root, args.work or args.root)
            print(json.dumps({size: report["sizes"][str(size)]}), file=sys.stderr, flush=True)
        print(json.dumps(report) if args.json else after_write_table(report))
        return 0
    for size in (int(s) for s in args.sizes.split(",")):
        report["sizes"][str(size)] = run_size(size, args.root, args.queries, args.strategies.split(","), args.work or args.root, args.local)
        print(json.dumps({size: report["sizes"][str(size)]}), file=sys.stderr, flush=True)  # kept if a later size fails
    print(json.dumps(report) if args.json else table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

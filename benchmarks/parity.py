"""Neo4j backend parity with the embedded store (issue 12): one corpus, both backends, one run.

    .venv/bin/python benchmarks/parity.py [--dataset hotpotqa-100] [--strategies ppr,dual_path,...] [--work DIR]

1. Ingests the dataset's corpus into a fresh SQLite store and a fresh Neo4j store (a local ArcadeDB over Bolt,
   started here, unless ``NEO4J_URI`` names a server; its database must be empty), and checks that
   ``export`` is byte-identical (the bytes ``stratagraph export --json`` prints).
2. Asks every question with every strategy (top 5) on both and counts the lists that differ.
3. ``stratagraph migrate --to neo4j`` of the SQLite store into a fresh database, then the same checks on the
   migrated store (its vectors are the SQLite store's Chroma).
4. Prints the graph write throughput of both backends during the ingest (nodes + edges handed to the store's
   write calls, per second spent in those calls), the migration's copy rate, and the p50 / p95 of ``ppr``
   per question on each store, all measured in this run.

Exit 0 only when every export and every list matches; the last line is the summary. Without the dataset
(``../shared/data`` absent) it says so and exits 0.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight onnxruntime's on 2 cores
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
STRATEGIES = "ppr,dual_path,traversal,lesegr,top_down,hybrid"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def export_bytes(export: dict) -> bytes:
    """What ``stratagraph export --json`` prints for this export."""
    return (json.dumps(export, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


@dataclass
class WriteMeter:
    """Rows handed to a store's write calls and the seconds spent in them."""

    rows: int = 0
    seconds: float = 0.0
    calls: int = 0

    @property
    def rate(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


@contextmanager
def metered(store_class: type, meter: WriteMeter):  # noqa: ANN201
    """Time every write call of ``store_class`` (replace_documents, write_batch, merge_nodes) into ``meter``."""

    def rows_of(name: str, args: tuple, kwargs: dict) -> int:
        if name == "replace_documents":
            versions = args[0] if args else kwargs.get("versions", ())
            return sum(len(v.nodes) + len(v.edges) for v in versions)
        if name == "write_batch":
            nodes = args[0] if args else kwargs.get("nodes", ())
            edges = args[1] if len(args) > 1 else kwargs.get("edges", ())
            return len(nodes) + len(edges)
        return 0

    originals = {name: getattr(store_class, name) for name in ("replace_documents", "write_batch", "merge_nodes")}

    def wrap(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                meter.seconds += time.perf_counter() - started
                meter.rows += rows_of(name, args, kwargs)
                meter.calls += 1

        return timed

    for name, original in originals.items():
        setattr(store_class, name, wrap(name, original))
    try:
        yield meter
    finally:
        for name, original in originals.items():
            setattr(store_class, name, original)


@dataclass
class Run:
    """What one store answered: its export and the top-5 chunk ids per strategy and question."""

    name: str
    export: bytes = b""
    lists: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    ppr_ms: list[float] = field(default_factory=list)


def ask_all(name: str, settings: Any, questions: list[Any], strategies: list[str]) -> Run:
    from stratagraph import StrataGraph
    from stratagraph.retrieval import retrieve

    run = Run(name)
    with StrataGraph(settings) as sg:
        run.export = export_bytes(sg.export())
        ctx = sg.context
        ctx.query_vector("warm up the embedder")
        ctx.nlp()("Warm up spaCy.")
        for strategy in strategies:
            retrieve(ctx, strategy, questions[0].question, k=5)  # warm-up: this store's caches
            lists = {}
            for q in questions:
                started = time.perf_counter()
                result = retrieve(ctx, strategy, q.question, k=5)
                if strategy == "ppr":
                    run.ppr_ms.append((time.perf_counter() - started) * 1000)
                lists[q.id] = [e.chunk_id for e in result.evidence]
            run.lists[strategy] = lists
            log(f"  {name} {strategy}: {len(lists)} questions")
    return run


def differing(a: Run, b: Run) -> dict[str, int]:
    return {s: sum(1 for q, ids in a.lists[s].items() if b.lists[s].get(q) != ids) for s in a.lists}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="hotpotqa-100")
    parser.add_argument("--strategies", default=STRATEGIES)
    parser.add_argument("--work", type=Path, help="Folder for the stores (default: a temporary one, removed)")
    args = parser.parse_args()
    data_dir = Path(os.environ.get("STRATAGRAPH_DATA_DIR") or REPO.parent / "shared" / "data")
    os.environ["STRATAGRAPH_DATA_DIR"] = str(data_dir)
    if not (data_dir / args.dataset).is_dir():
        print(f"parity: skipped, no dataset {args.dataset} under {data_dir}")
        return 0

    from stratagraph import StrataGraph
    from stratagraph.config import Settings
    from stratagraph.eval.datasets import load_dataset
    from stratagraph.graph_store import SQLiteGraphStore
    from stratagraph.graph_store.arcadedb import LocalArcadeDB
    from stratagraph.graph_store.neo4j import Neo4jGraphStore

    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    dataset = load_dataset(args.dataset)
    tmp = tempfile.TemporaryDirectory(prefix="stratagraph-parity-") if args.work is None else None
    work = Path(tmp.name) if tmp else args.work
    work.mkdir(parents=True, exist_ok=True)

    server: LocalArcadeDB | None = None
    uri = os.environ.get("NEO4J_URI")
    if uri:
        user, password = os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", "")
        ingest_db = migrate_db = os.environ.get("NEO4J_DATABASE") or None
        server_name = f"Neo4j at {uri}"
    else:
        started = time.perf_counter()
        server = LocalArcadeDB(work / "arcadedb").start()
        log(f"ArcadeDB started in {time.perf_counter() - started:.1f} s at {server.uri}")
        uri, user, password = server.uri, server.user, server.password
        ingest_db, migrate_db = "parity_ingest", "parity_migrate"
        server.create_database(ingest_db)
        server.create_database(migrate_db)
        server_name = "ArcadeDB (arcadedb-embedded) over Bolt"

    def neo4j_settings(home: Path, database: str | None) -> Settings:
        return Settings(
            home=home, graph="neo4j", neo4j_uri=uri, neo4j_user=user, neo4j_password=password, neo4j_database=database
        )

    try:
        with Neo4jGraphStore(uri, user, password, ingest_db) as probe:
            if probe.node_count():
                print(f"parity: refused, the database {probe.info().location} is not empty")
                return 2
            server_agent = probe.info().server

        runs: dict[str, Run] = {}
        meters: dict[str, WriteMeter] = {}
        ingest_s: dict[str, float] = {}
        homes = {"sqlite": work / "sqlite", "neo4j": work / "neo4j"}
        settings = {
            "sqlite": Settings(home=homes["sqlite"]),
            "neo4j": neo4j_settings(homes["neo4j"], ingest_db),
        }
        classes = {"sqlite": SQLiteGraphStore, "neo4j": Neo4jGraphStore}
        for name in ("sqlite", "neo4j"):
            log(f"ingesting {dataset.corpus} into {name} ...")
            with metered(classes[name], WriteMeter()) as meter, StrataGraph(settings[name]) as sg:
                started = time.perf_counter()
                result = sg.ingest([dataset.corpus], base=dataset.corpus.parent)
                ingest_s[name] = time.perf_counter() - started
                counts = sg.stats()
            if result.failed:
                print(f"parity: ingest into {name} failed for {result.failed} documents")
                return 1
            meters[name] = meter
            log(
                f"  {name}: {sum(counts.nodes.values())} nodes, {sum(counts.edges.values())} edges in "
                f"{ingest_s[name]:.1f} s; graph writes {meter.rows} rows in {meter.seconds:.2f} s ({meter.calls} calls)"
            )
        for name in ("sqlite", "neo4j"):
            runs[name] = ask_all(name, settings[name], dataset.questions, strategies)

        if server is None:  # one real Neo4j database: empty it, then migrate into it
            with Neo4jGraphStore(uri, user, password, migrate_db) as store:
                store._write(lambda tx: tx.run("MATCH (n:Node) DETACH DELETE n").consume())
        log("migrating the SQLite store ...")
        env = {
            **os.environ,
            "NEO4J_URI": uri,
            "NEO4J_USER": user,
            "NEO4J_PASSWORD": password,
            "NEO4J_DATABASE": migrate_db or "",
        }
        proc = subprocess.run(
            [sys.executable, "-m", "stratagraph.cli", "migrate", "--to", "neo4j", "--store", str(homes["sqlite"]), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        migrated = json.loads(proc.stdout) if proc.stdout.strip() else {"verified": False, "error": proc.stderr[-500:]}
        if proc.returncode != 0:
            print(f"parity: migrate failed: {migrated.get('error')}")
            return 1
        runs["migrated"] = ask_all("migrated", neo4j_settings(homes["sqlite"], migrate_db), dataset.questions, strategies)
    finally:
        if server is not None:
            server.stop()
        if tmp is not None:
            tmp.cleanup()

    q = len(dataset.questions)
    print(f"\n## Neo4j backend parity on {dataset.name} ({q} questions, top 5; server: {server_agent}, {server_name})\n")
    exports_equal = {n: runs[n].export == runs["sqlite"].export for n in ("neo4j", "migrated")}
    print(f"export --json bytes: sqlite {len(runs['sqlite'].export)}, neo4j {len(runs['neo4j'].export)}, "
          f"migrated {len(runs['migrated'].export)}; identical: neo4j {exports_equal['neo4j']}, "
          f"migrated {exports_equal['migrated']}\n")  # fmt: skip
    print("| strategy | lists differing, neo4j vs sqlite | migrated vs sqlite |")
    print("|---|---:|---:|")
    diff_ingest, diff_migrated = differing(runs["sqlite"], runs["neo4j"]), differing(runs["sqlite"], runs["migrated"])
    for s in strategies:
        print(f"| {s} | {diff_ingest[s]} of {q} | {diff_migrated[s]} of {q} |")
    print("\n| store | graph write rows | seconds in write calls | rows/s | whole ingest s | ppr p50 ms | ppr p95 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in ("sqlite", "neo4j"):
        m, r = meters[name], runs[name]
        print(f"| {name} | {m.rows} | {m.seconds:.2f} | {m.rate:,.0f} | {ingest_s[name]:.1f} | "
              f"{statistics.median(r.ppr_ms):.1f} | {percentile(r.ppr_ms, 0.95):.1f} |")  # fmt: skip
    r = runs["migrated"]
    rows = migrated["nodes"] + migrated["edges"]
    print(f"| migrated (copy_from) | {rows} | {migrated['copy_seconds']:.2f} | {rows / migrated['copy_seconds']:,.0f} | "
          f"{migrated['seconds']:.1f} (whole migrate) | {statistics.median(r.ppr_ms):.1f} | {percentile(r.ppr_ms, 0.95):.1f} |")  # fmt: skip
    bad_lists = sum(diff_ingest.values()) + sum(diff_migrated.values())
    total = 2 * q * len(strategies)
    ok = all(exports_equal.values()) and bad_lists == 0
    print(
        f"\nparity {'OK' if ok else 'FAILED'}: exports identical {sum(exports_equal.values())}/2, "
        f"top-5 lists identical {total - bad_lists}/{total} ({', '.join(strategies)}); "
        f"write rows/s sqlite {meters['sqlite'].rate:,.0f} vs neo4j {meters['neo4j'].rate:,.0f}; "
        f"ppr p50 {statistics.median(runs['sqlite'].ppr_ms):.1f} ms vs {statistics.median(runs['neo4j'].ppr_ms):.1f} ms"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

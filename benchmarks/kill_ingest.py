"""Kill -9 at seeded random instants of an ingest, then ingest again: is the store the one a clean ingest makes?

    .venv/bin/python benchmarks/kill_ingest.py [--trials 30] [--seed 22] [--window run|writes] [--graph sqlite|neo4j]

A clean ingest of a few documents (``CORPUS``, from examples/) in a subprocess is timed first; its store is
the reference. Each trial then starts the same ingest (``stratagraph ingest`` in its own process group, as a
container or the OOM killer would stop it) on a fresh store, kills the group with SIGKILL at a seeded random
instant of the run, records the state the kill left (documents final / pending / absent, vectors without
their graph node and graph nodes without their vector), ingests again in a new process, and checks:

* the graph export is byte-identical to the clean ingest's (canonical JSON);
* every vector row has its graph node and every Chunk, Section and Fact node its vector row; every
  entity-name row names a stored Entity; the vector ids equal the clean store's;
* ``stats`` equals the clean store's and the counts the export holds.

Prints one JSON document (per trial: kill time, state found, the check's problems) and a summary; exits 1 when
a trial's re-ingest is not clean. ``--graph neo4j`` runs on a local ArcadeDB server over Bolt (the test
extra's ``arcadedb-embedded``, as tests/graph_store/bolt.py), a fresh database per trial. The 3-trial version runs in tests/faults/test_kill_ingest.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = [
    REPO / "examples" / "earnings",
    REPO / "examples" / "research" / "a_street_level_sensor_networks.md",
    REPO / "examples" / "research" / "b_tree_canopy_nighttime_cooling.md",
]
COLLECTIONS = {"chunks": "Chunk", "sections": "Section", "facts": "Fact"}


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "ANONYMIZED_TELEMETRY": "False", "STRATAGRAPH_EXTRACT_PROCESSES": "1", "OPENBLAS_NUM_THREADS": "1"}  # fmt: skip
    for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "STRATAGRAPH_LLM_MODEL"):  # the spaCy extractor: no model
        env.pop(key, None)
    env.update(extra or {})
    return env


#: the ingest a trial kills: ``StrataGraph.ingest`` printing each progress event (stage) as it happens
DRIVER = """
import sys, time
from stratagraph import StrataGraph
from stratagraph.config import Settings
home, base, *paths = sys.argv[1:]
def progress(stage, done, total):
    print(stage, done, total, flush=True)
with StrataGraph(Settings(home=home), progress=progress) as sg:
    sys.exit(1 if sg.ingest(paths, base=base).failed else 0)
"""


def ingest_command(home: Path, corpus: list[Path]) -> list[str]:
    return [sys.executable, "-c", DRIVER, str(home), str(REPO), *map(str, corpus)]


def run_ingest(home: Path, corpus: list[Path], env: dict[str, str]) -> tuple[float, dict[str, float], str]:
    """A whole ingest in a subprocess: its wall time, when each stage first reported progress, and what it
    said it repaired at start (ingest/recovery.py's log line, "" for none)."""
    started = time.perf_counter()
    proc = subprocess.Popen(ingest_command(home, corpus), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stages: dict[str, float] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        stages.setdefault(line.split(" ", 1)[0], round(time.perf_counter() - started, 3))
    err = proc.stderr.read() if proc.stderr else ""
    if proc.wait() != 0:
        raise RuntimeError(f"ingest failed ({proc.returncode}):\n{err[-2000:]}")
    repaired = next((ln.split("recovery: ", 1)[1] for ln in err.splitlines() if "recovery: " in ln), "")
    return time.perf_counter() - started, stages, repaired


def killed_ingest(home: Path, corpus: list[Path], env: dict[str, str], after: float, stage: str | None = None) -> bool:
    """Start an ingest and SIGKILL its process group ``after`` seconds in (after the stage ``stage`` first
    reports progress, when given); False when it finished first."""
    proc = subprocess.Popen(ingest_command(home, corpus), env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        if stage is not None:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith(stage + " "):
                    break
            else:
                proc.wait()
                return False
        proc.wait(timeout=after)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return True


# ------------------------------------------------------------------------------------------ what a store holds
def snapshot(home: Path, env: dict[str, str], in_process: bool = False) -> dict[str, Any]:
    """The store's export, stats, vector ids and the links between them, read in a fresh process (so nothing
    of this process's caches hides a problem), or here (``in_process``: faster, for the test suite)."""
    if in_process:
        try:
            return _snapshot_here(str(home))
        except Exception as exc:  # noqa: BLE001 - a store the kill left unreadable is a finding
            return {"error": f"{type(exc).__name__}: {exc}"}
    code = "import json, sys; from benchmarks.kill_ingest import _snapshot_here; print(json.dumps(_snapshot_here(sys.argv[1])))"
    proc = subprocess.run([sys.executable, "-c", code, str(home)], env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout)


def _snapshot_here(home: str) -> dict[str, Any]:
    from stratagraph import StrataGraph
    from stratagraph.config import Settings

    settings = Settings(home=Path(home), graph=os.environ.get("STRATAGRAPH_GRAPH", "sqlite"))
    with StrataGraph(settings) as sg:
        export = sg.export()
        nodes = export.get("nodes", [])
        by_label: dict[str, set[str]] = {}
        for n in nodes:
            by_label.setdefault(n["label"], set()).add(n["id"])
        docs = [n for n in nodes if n["label"] == "Document"]
        vectors = {c: sorted(sg.vectors.ids(c)) for c in (*COLLECTIONS, "entities")}
        entity_rows = sg.vectors.get_metadata("entities", vectors["entities"])
        problems = []
        for collection, label in COLLECTIONS.items():
            have = set(vectors[collection])
            nodes_of = by_label.get(label, set())
            if have - nodes_of:
                problems.append(f"{len(have - nodes_of)} {collection} vectors without their {label} node")
            if nodes_of - have:
                problems.append(f"{len(nodes_of - have)} {label} nodes without their vector")
        dangling = [k for k, m in entity_rows.items() if str((m or {}).get("entity_id")) not in by_label.get("Entity", set())]
        if dangling:
            problems.append(f"{len(dangling)} entity-name rows naming no stored Entity")
        stats = sg.stats()
        counted = {label: len(ids) for label, ids in by_label.items()}
        if any(stats.nodes.get(label, 0) != n for label, n in counted.items()):
            problems.append(f"stats {stats.nodes} differ from the export's node counts {counted}")
        hashes = [str(d.get("props", {}).get("content_hash") or "") for d in docs]
        return {
            "export": json.dumps(export, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
            "stats": stats.model_dump(mode="json"),
            "vectors": vectors,
            "problems": problems,
            "documents": {"final": sum(1 for h in hashes if h and not h.startswith("pending:")),
                          "pending": sum(1 for h in hashes if h.startswith("pending:"))},  # fmt: skip
        }


def state_of(snap: dict[str, Any]) -> str:
    """A short name for the state a kill left."""
    if "error" in snap:
        return f"unreadable: {snap['error'][:120]}"
    d = snap["documents"]
    rows = sum(len(v) for v in snap["vectors"].values())
    parts = [f"{d['final']} final", f"{d['pending']} pending"]
    if not d["final"] and not d["pending"]:
        parts = ["no documents"]
    parts.append(f"{rows} vector rows")
    parts += snap["problems"]
    return ", ".join(parts)


def compare(snap: dict[str, Any], clean: dict[str, Any]) -> list[str]:
    if "error" in snap:
        return [f"cannot read the store: {snap['error']}"]
    problems = list(snap["problems"])
    if snap["export"] != clean["export"]:
        problems.append("the export differs from a clean ingest's")
    if snap["stats"] != clean["stats"]:
        problems.append("stats differ from a clean ingest's")
    for c, ids in clean["vectors"].items():
        if snap["vectors"].get(c) != ids:
            problems.append(f"the {c} vector ids differ from a clean ingest's")
    return problems


# ------------------------------------------------------------------------------------------ the run
def _fresh(root: Path, name: str, env: dict[str, str], server: Any) -> tuple[Path, dict[str, str]]:
    """A fresh store directory, and on Bolt a fresh database of the local ArcadeDB server."""
    home = root / name
    shutil.rmtree(home, ignore_errors=True)
    if server is None:
        return home, env
    server.create_database(name)
    return home, {**env, "NEO4J_URI": server.uri, "NEO4J_USER": server.user, "NEO4J_PASSWORD": server.password,
                  "NEO4J_DATABASE": name}  # fmt: skip


def _bolt_server(root: Path) -> Any:
    """A local ArcadeDB server with Bolt (the test extra's arcadedb-embedded), as tests/graph_store/bolt.py."""
    from stratagraph.graph_store.arcadedb import LocalArcadeDB, arcadedb_available

    if not arcadedb_available():
        raise SystemExit("no Bolt server: install arcadedb-embedded (the test extra)")
    return LocalArcadeDB(root / "arcadedb").start()


def run(trials: int, seed: int, graph: str = "sqlite", corpus: list[Path] | None = None, log=print,  # noqa: ANN001
        in_process: bool = False, window: str = "run") -> dict[str, Any]:
    """``window``: ``run`` kills at a uniform instant of the whole run (start-up included); ``writes`` at a
    uniform instant between the embed stage's first progress and the end (where the stores are written)."""
    corpus = corpus or CORPUS
    base_env = _env({"STRATAGRAPH_GRAPH": graph})
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="kill-ingest-"))
    server = _bolt_server(root) if graph == "neo4j" else None
    try:
        clean_home, env = _fresh(root, "clean", base_env, server)
        clean_seconds, stages, _ = run_ingest(clean_home, corpus, env)
        clean = snapshot(clean_home, env, in_process and server is None)
        assert not clean.get("problems") and "error" not in clean, clean
        log(f"clean ingest: {clean_seconds:.1f} s, stages at {stages}, {clean['stats']['nodes']}")
        stage = "embed" if window == "writes" else None
        span = clean_seconds - stages.get("embed", 0.0) if stage else clean_seconds
        rows = []
        for t in range(trials):
            home, env = _fresh(root, f"trial{t}", base_env, server)
            after = round(rng.uniform(0.0, span), 3)
            killed = killed_ingest(home, corpus, env, after, stage)
            found = state_of(snapshot(home, env, in_process and server is None)) if killed else "finished before the kill"
            _, _, repaired = run_ingest(home, corpus, env)
            problems = compare(snapshot(home, env, in_process and server is None), clean)
            rows.append({"trial": t, "kill_after_s": after, "killed": killed, "state_found": found, "repaired": repaired,
                         "problems": problems})  # fmt: skip
            log(f"trial {t}: kill at {after:.2f} s -> {found}; repaired: {repaired or '-'}; after re-ingest: "
                f"{'; '.join(problems) or 'clean'}")
            shutil.rmtree(home, ignore_errors=True)
            if server is not None:
                server.drop_database(f"trial{t}")
        states: dict[str, int] = {}
        for r in rows:
            states[r["state_found"]] = states.get(r["state_found"], 0) + 1
        return {
            "graph": graph,
            "window": window,
            "stages_s": stages,
            "trials": trials,
            "seed": seed,
            "clean_ingest_s": round(clean_seconds, 2),
            "killed": sum(r["killed"] for r in rows),
            "not_clean_after_reingest": sum(bool(r["problems"]) for r in rows),
            "states_found": states,
            "sweeps_at_start": sum(1 for r in rows if "interrupted ingest" in r["repaired"]),
            "orphan_rows_deleted_in": sum(1 for r in rows if r["repaired"] and not r["repaired"].endswith("deleted: none")
                                          and "deleted:" in r["repaired"]),
            "rows": rows,
            "cpus": os.cpu_count(),
        }
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--graph", choices=["sqlite", "neo4j"], default="sqlite")
    parser.add_argument("--window", choices=["run", "writes"], default="run",
                        help="kill anywhere in the run, or only from the embed stage on (where the stores are written)")
    parser.add_argument("--in-process", action="store_true", help="read each store here, not in a fresh process (faster)")
    args = parser.parse_args(argv)
    out = run(args.trials, args.seed, args.graph, log=lambda s: print(s, file=sys.stderr, flush=True), window=args.window,
              in_process=args.in_process)
    print(json.dumps(out, indent=1))
    return 1 if out["not_clean_after_reingest"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

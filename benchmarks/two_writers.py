"""Two writers, two machines: two ingests at once into one Bolt server and one Chroma server, against one after
the other (issue 21, item 7).

    .venv/bin/python benchmarks/two_writers.py [--corpus ../shared/data/2wiki-101/corpus.jsonl] [--limit 600]

The first ``--limit`` passages of the JSONL corpus are dealt into two files (even and odd lines). A local
ArcadeDB server (Bolt, as tests/graph_store/bolt.py) and two ``chroma run`` servers are started; then

* ``together``: ``stratagraph --store <folder> ingest`` of each file, with separate store folders (as on two
  machines), started at the same moment, into one database and one Chroma server;
* ``sequential``: the same two ingests one after the other into a second database and Chroma server.

Prints one JSON document: wall time of each phase and of each writer, the seconds each writer of the pair
waited for the write lease (from its log), and whether the two graph exports are identical and the vector
rows (ids; for entity-name rows the entity each stands for) the same. Skips cleanly without the corpus, the
``chroma`` command or ``arcadedb-embedded``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "2wiki-101" / "corpus.jsonl"
_WAIT = re.compile(r"write lease taken by \S+ after waiting ([0-9.]+) s")


def _chroma(path: Path) -> tuple[str, subprocess.Popen]:
    from stratagraph.graph_store.arcadedb import free_port

    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if exe is None:
        raise SystemExit("the chroma command is not installed")
    port = free_port()
    proc = subprocess.Popen([exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
                response.read()
            return url, proc
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("chroma run did not start") from None
            time.sleep(0.1)


def _env(server, database: str, chroma_url: str) -> dict[str, str]:  # noqa: ANN001 - a LocalArcadeDB
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRATAGRAPH_", "NEO4J_", "OPENAI_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]),
        STRATAGRAPH_GRAPH="neo4j", NEO4J_URI=server.uri, NEO4J_USER=server.user, NEO4J_PASSWORD=server.password,
        NEO4J_DATABASE=database, STRATAGRAPH_CHROMA_URL=chroma_url, STRATAGRAPH_EXTRACT_PROCESSES="1",
        STRATAGRAPH_LLM_CACHE="false", ANONYMIZED_TELEMETRY="False",
    )  # fmt: skip
    return env


class _Writer:
    def __init__(self, store: Path, corpus: Path, base: Path, env: dict[str, str]) -> None:
        self.start = time.monotonic()
        self.log = store.with_suffix(".log")
        store.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stratagraph.cli", "--store", str(store), "ingest", str(corpus), "--base", str(base),
             "--json", "--verbose"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=self._log, text=True,
        )  # fmt: skip

    def finish(self) -> dict:
        out, _ = self.proc.communicate(timeout=7200)
        seconds = time.monotonic() - self.start
        self._log.close()
        if self.proc.returncode != 0:
            raise SystemExit(f"an ingest failed ({self.proc.returncode}); see {self.log}")
        docs = json.loads(out)["documents"]
        return {"seconds": round(seconds, 1), "documents": len(docs), "log": self.log}


def _waited(log: Path) -> float:
    """Seconds the writer waited for the write lease (its ``--verbose`` log)."""
    return round(sum(float(m) for m in _WAIT.findall(log.read_text(errors="replace"))), 2)


def _rows(url: str) -> dict[str, object]:
    import chromadb

    host, port = url.rsplit("//", 1)[1].split(":")
    client = chromadb.HttpClient(host=host, port=int(port))
    out: dict[str, object] = {}
    for col in client.list_collections():
        got = client.get_collection(col.name).get(include=["metadatas"])
        if col.name == "entities":
            out[col.name] = sorted((i, (m or {}).get("entity_id")) for i, m in zip(got["ids"], got["metadatas"], strict=True))
        else:
            out[col.name] = sorted(got["ids"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=600)
    args = ap.parse_args()
    if not args.corpus.exists():
        print(json.dumps({"skipped": f"no corpus at {args.corpus}"}))
        return
    sys.path.insert(0, str(REPO))
    from stratagraph.graph_store.arcadedb import LocalArcadeDB, arcadedb_available
    from stratagraph.graph_store.neo4j import Neo4jGraphStore

    if not arcadedb_available():
        print(json.dumps({"skipped": "arcadedb-embedded is not installed"}))
        return
    root = Path(tempfile.mkdtemp(prefix="two-writers-"))
    procs: list[subprocess.Popen] = []
    server = LocalArcadeDB(root / "arcadedb").start()
    try:
        lines = args.corpus.read_text(encoding="utf-8").splitlines()[: args.limit]
        docs = root / "docs"
        docs.mkdir()
        halves = [docs / "a.jsonl", docs / "b.jsonl"]
        halves[0].write_text("\n".join(lines[0::2]) + "\n", encoding="utf-8")
        halves[1].write_text("\n".join(lines[1::2]) + "\n", encoding="utf-8")
        out: dict[str, object] = {
            "corpus": str(args.corpus), "passages": len(lines), "cores": os.cpu_count(), "machine": platform.platform(),
        }  # fmt: skip
        exports, rows = {}, {}
        for phase in ("together", "sequential"):
            server.create_database(phase)
            url, proc = _chroma(root / f"chroma-{phase}")
            procs.append(proc)
            env = _env(server, phase, url)
            start = time.monotonic()
            if phase == "together":
                writers = [_Writer(root / phase / f"machine-{i}", half, docs, env) for i, half in enumerate(halves)]
                results = [w.finish() for w in writers]
            else:
                results = [_Writer(root / phase / f"machine-{i}", half, docs, env).finish() for i, half in enumerate(halves)]
            wall = time.monotonic() - start
            out[phase] = {
                "seconds": round(wall, 1),
                "writers": [{"seconds": r["seconds"], "documents": r["documents"], "lease_wait_s": _waited(r["log"])}
                            for r in results],  # fmt: skip
            }
            with Neo4jGraphStore(server.uri, server.user, server.password, phase) as store:
                exports[phase] = json.dumps(store.export(), sort_keys=True)
            rows[phase] = _rows(url)
        out["export_identical"] = exports["together"] == exports["sequential"]
        out["vector_rows_identical"] = rows["together"] == rows["sequential"]
        out["speedup"] = round(out["sequential"]["seconds"] / out["together"]["seconds"], 2)  # type: ignore[index]
        print(json.dumps(out, indent=1))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

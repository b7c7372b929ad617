"""Two writers, two machines (issue 21, item 7): two ingests with separate store folders into one Bolt server
and one ``chroma run`` server at once give the same export as one after the other.

Real processes (``python -m stratagraph.cli --store <folder> ingest <docs>``), the session's local Bolt server
(tests/graph_store/bolt.py) and two real Chroma servers (one for the concurrent pair, one for the sequential
reference). The two document sets share people and organisations, cite each other by exact title, hold
near-identical passages, and each has a page whose title names an entity of the other; so entity resolution
across documents, CITES, SIMILAR and DESCRIBED_BY all depend on what the other writer stored. A
``sitecustomize`` in the children holds each writer at the start of its resolve step until both have
arrived, so without coordination both resolve, write and link against a store without the other's
documents: the interleaving is forced, not left to timing.

Recovery across machines (in-process stores on the same servers, two store folders): a repair after a
killed ingest on one machine waits for the other machine's write section, and a writer that died inside
its write section on another machine is repaired by the next writer, with no marker file to go by.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.graph_store.arcadedb import free_port
from stratagraph.graph_store.base import LeaseRecord
from stratagraph.graph_store.lease import StoreLease
from stratagraph.schema import Node, NodeLabel
from tests.conftest import REPO
from tests.graph_store.bolt import BoltTarget, bolt_target

WEST = {
    "heat_islands.md": """---
title: Coastal Heat Islands in Marlow Bay
authors:
  - Maria Lopez
  - Kenji Sato
year: 2020
---

# Coastal Heat Islands in Marlow Bay

## Abstract

Maria Lopez and Kenji Sato of the Harbor Institute of Technology measured nighttime air temperature with 120 lamp-post sensors across Marlow Bay. The Green City Fund paid for the network. The mean nighttime heat island intensity was 2.4 °C and it peaked on calm, clear nights.

## Methods

Low-cost temperature sensors were mounted 3.5 m above the street on lamp posts and calibrated against a reference station of the Harbor Institute of Technology. Readings were averaged every ten minutes from June to September.

## Discussion

Tree canopy cooled the streets at night, as shown in Canopy Shade and Night Cooling in River Towns [1]. Impervious surface explained most of the variance in nighttime temperature.

## References

[1] Kenji Sato and Maria Lopez. Canopy Shade and Night Cooling in River Towns. Urban Forestry Letters, 2021.
""",
    "green_city_fund.md": """# Green City Fund

The Green City Fund is a charity in Marlow Bay that pays for street trees and climate research. It was founded by Maria Lopez in 2012 and funds projects of the Harbor Institute of Technology.
""",
}

EAST = {
    "canopy_cooling.md": """---
title: Canopy Shade and Night Cooling in River Towns
authors:
  - Kenji Sato
  - Maria Lopez
year: 2021
---

# Canopy Shade and Night Cooling in River Towns

## Abstract

Kenji Sato and Maria Lopez of the Harbour Institute of Technology compared tree canopy with nighttime air temperature in Kelden Falls and Marlow Bay. The Green City Fund supported the study. Streets under dense canopy were 1.1 °C cooler at night than open streets.

## Methods

Low-cost temperature sensors were mounted 3.5 m above the street on lamp posts and calibrated against a reference station of the Harbour Institute of Technology. Readings were averaged every ten minutes from June to August.

## Discussion

The heat island of Marlow Bay reported in Coastal Heat Islands in Marlow Bay [1] shrank where canopy cover was dense.

## References

[1] Maria Lopez and Kenji Sato. Coastal Heat Islands in Marlow Bay. Journal of Urban Climate, 2020.
""",
    "harbor_institute.md": """# Harbour Institute of Technology

The Harbour Institute of Technology is a university in Marlow Bay. Kenji Sato leads its urban climate laboratory, which receives grants from the Green City Fund.
""",
}

#: held at the start of each writer's resolve step until both writers are there (see the module docstring)
SITECUSTOMIZE = r'''
import os, time
_dir = os.environ.get("STRATAGRAPH_TEST_BARRIER")
if _dir:
    import stratagraph.ingest.steps as _steps
    _real = _steps.resolve

    def resolve(state, runtime):
        if any(p.active for p in state.get("prepared", [])):
            open(os.path.join(_dir, f"{os.getpid()}.arrived"), "w").close()
            deadline = time.monotonic() + 120
            while len([n for n in os.listdir(_dir) if n.endswith(".arrived")]) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        return _real(state, runtime)

    _steps.resolve = resolve
'''


@pytest.fixture
def bolt(tmp_path: Path) -> Iterator[BoltTarget]:
    target = bolt_target()
    if target.is_real_neo4j:
        pytest.skip("needs two databases on the local Bolt server (NEO4J_URI names one database)")
    yield target
    for key in list(target._created):
        if key.startswith(str(tmp_path)):
            target.drop(key)


def _chroma(path: Path) -> tuple[str, subprocess.Popen]:
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the chroma command is not installed")
    port = free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
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
                pytest.fail("chroma run did not start")
            time.sleep(0.05)


@pytest.fixture
def chroma_servers(tmp_path: Path) -> Iterator[tuple[str, str]]:
    procs = []
    try:
        urls = []
        for name in ("chroma-together", "chroma-sequential"):
            url, proc = _chroma(tmp_path / name)
            procs.append(proc)
            urls.append(url)
        yield urls[0], urls[1]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _docs(root: Path) -> tuple[Path, Path]:
    for name, files in (("west", WEST), ("east", EAST)):
        (root / name).mkdir(parents=True)
        for file, text in files.items():
            (root / name / file).write_text(text, encoding="utf-8")
    return root / "west", root / "east"


def _env(bolt: BoltTarget, database: str, chroma_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRATAGRAPH_", "NEO4J_"))}
    path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env.update(
        PYTHONPATH=os.pathsep.join(path),
        STRATAGRAPH_GRAPH="neo4j",
        NEO4J_URI=bolt.uri,
        NEO4J_USER=bolt.user,
        NEO4J_PASSWORD=bolt.password,
        NEO4J_DATABASE=database,
        STRATAGRAPH_CHROMA_URL=chroma_url,
        STRATAGRAPH_EXTRACT_PROCESSES="1",
        STRATAGRAPH_EMBEDDING_THREADS="1",
        STRATAGRAPH_LLM_CACHE="false",
        OPENBLAS_NUM_THREADS="1",
        **extra,
    )
    return env


def _ingest(store: Path, docs: Path, base: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "stratagraph.cli", "--store", str(store), "ingest", str(docs), "--base", str(base), "--json"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"ingest exited {proc.returncode}:\n{err[-4000:]}"
    return json.loads(out)


def _vector_rows(url: str) -> dict[str, dict[str, object]]:
    """Every collection's ids and metadata on a Chroma server (the rows both writers leave)."""
    import chromadb

    host, port = url.rsplit("//", 1)[1].split(":")
    client = chromadb.HttpClient(host=host, port=int(port))
    out: dict[str, dict[str, object]] = {}
    for col in client.list_collections():
        got = client.get_collection(col.name).get(include=["metadatas"])
        rows = dict(zip(got["ids"], got["metadatas"], strict=True))
        if col.name == "entities":
            rows = {i: (m or {}).get("entity_id") for i, m in rows.items()}
        out[col.name] = rows
    return out


def _export(bolt: BoltTarget, database: str) -> dict:
    from stratagraph.graph_store.neo4j import Neo4jGraphStore

    with Neo4jGraphStore(bolt.uri, bolt.user, bolt.password, database) as store:
        return store.export()


def test_two_writers_on_two_machines_equal_one_after_the_other(
    bolt: BoltTarget, chroma_servers: tuple[str, str], tmp_path: Path
) -> None:
    west, east = _docs(tmp_path / "docs")
    together_db = bolt.database_for(str(tmp_path / "together"))
    sequential_db = bolt.database_for(str(tmp_path / "sequential"))
    assert together_db and sequential_db
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    together_url, sequential_url = chroma_servers

    env = _env(bolt, together_db, together_url, STRATAGRAPH_TEST_BARRIER=str(barrier))
    env["PYTHONPATH"] = os.pathsep.join([str(hook), env["PYTHONPATH"]])
    procs = [
        _ingest(tmp_path / "machine-a", west, tmp_path / "docs", env),
        _ingest(tmp_path / "machine-b", east, tmp_path / "docs", env),
    ]
    reports = [_finish(p) for p in procs]
    assert len(list(barrier.iterdir())) == 2  # both writers reached resolve before either went on
    for env_one, docs, store in (
        (_env(bolt, sequential_db, sequential_url), west, tmp_path / "seq-a"),
        (_env(bolt, sequential_db, sequential_url), east, tmp_path / "seq-b"),
    ):
        reports.append(_finish(_ingest(store, docs, tmp_path / "docs", env_one)))
    for report in reports:
        assert all(d["status"] == "added" for d in report["documents"]), report

    together, sequential = _export(bolt, together_db), _export(bolt, sequential_db)
    # the links that depend on the other writer's documents are there (so the comparison is not vacuous)
    edges = {(e["type"], e["src"], e["dst"]) for e in sequential["edges"]}
    assert ("CITES", "west/heat_islands.md", "east/canopy_cooling.md") in edges
    assert ("CITES", "east/canopy_cooling.md", "west/heat_islands.md") in edges
    assert any(t == "SIMILAR" and s.startswith("west/") and d.startswith("east/") for t, s, d in edges)
    assert any(t == "DESCRIBED_BY" and d == "east/harbor_institute.md" for t, s, d in edges)
    shared = [n for n in sequential["nodes"] if n["label"] == "Entity" and n["props"].get("name") == "Maria Lopez"]
    assert len(shared) == 1 and {d.split("/")[0] for d in shared[0]["doc_ids"]} == {"west", "east"}
    institute = [n for n in sequential["nodes"] if n["label"] == "Entity" and "Institute" in n["props"].get("name", "")]
    assert len(institute) == 1, institute  # "Harbor" (west) and "Harbour" (east) resolve to one entity

    def diff(a: list[dict], b: list[dict]) -> list[str]:
        ka, kb = {x["id"]: x for x in a}, {x["id"]: x for x in b}
        return sorted(
            [f"only together: {i}" for i in ka.keys() - kb.keys()]
            + [f"only sequential: {i}" for i in kb.keys() - ka.keys()]
            + [f"differs: {i}" for i in ka.keys() & kb.keys() if ka[i] != kb[i]]
        )

    problems = diff(together["nodes"], sequential["nodes"]) + diff(together["edges"], sequential["edges"])
    assert not problems, "\n".join(problems[:60])
    # the vector rows: every row of the chunks, sections and facts, and which entity each name row stands for
    # (a name row's own name and type are the last writer's spelling, so they follow the order of the runs)
    assert _vector_rows(together_url) == _vector_rows(sequential_url)


# ------------------------------------------------------------------------------------------ recovery across machines


@pytest.fixture
def shared(bolt: BoltTarget, tmp_path: Path) -> Iterator[Callable[[str], Settings]]:
    """Settings of a store folder on "a machine" sharing one Bolt database and one ``chroma run`` server."""
    url, proc = _chroma(tmp_path / "chroma")
    database = bolt.database_for(str(tmp_path / "shared"))

    def settings(machine: str) -> Settings:
        return Settings(
            home=tmp_path / machine, graph="neo4j", neo4j_uri=bolt.uri, neo4j_user=bolt.user,
            neo4j_password=bolt.password, neo4j_database=database, chroma_url=url, extract_processes=1,
            write_lease_ttl=1.0,
        )  # fmt: skip

    yield settings
    proc.terminate()
    proc.wait(timeout=10)


def _killed_here(home: Path) -> None:
    """The marker a killed ingest leaves in its own store folder (ingest/recovery.py)."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (home / "ingest-running").mkdir(parents=True, exist_ok=True)
    (home / "ingest-running" / f"{int(dead.stdout)}.test").touch()


def test_a_sweep_here_waits_for_a_writer_on_another_machine(shared, tmp_path: Path) -> None:
    """Machine A finds the marker of its own killed ingest; machine B is inside its write section with a vector
    row whose graph node it has not written yet. A's repair waits for B's lease, so B's row is not swept."""
    a, b = shared("machine-a"), shared("machine-b")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "green_city_fund.md").write_text(WEST["green_city_fund.md"])
    with StrataGraph(b) as sg_b, StrataGraph(a) as sg_a:
        lease = StoreLease(sg_b.graph, "write", ttl=1.0, holder="machine-b:777:0a0b0c0d")
        lease.acquire()
        sg_b.vectors.upsert("chunks", ["b.md#1#0"], ["in flight"], [{"doc_id": "b.md"}])  # its node comes next

        def finish_b() -> None:
            time.sleep(2.0)
            sg_b.graph.write_batch(
                nodes=[Node(id="b.md#1#0", label=NodeLabel.CHUNK, doc_ids=["b.md"], props={"text": "in flight"})]
            )
            lease.release()

        _killed_here(a.home)
        other = threading.Thread(target=finish_b)
        start = time.monotonic()
        other.start()
        assert sg_a.ingest([docs], base=tmp_path).failed == 0
        other.join()
        assert time.monotonic() - start >= 1.9  # A's repair waited for B's write section
        assert "b.md#1#0" in sg_a.vectors.ids("chunks")  # and left B's row alone
        assert not list((a.home / "ingest-running").iterdir())  # the killed run's marker was handled


def test_a_writer_that_died_on_another_machine_is_repaired_by_the_next(shared, tmp_path: Path) -> None:
    """Machine B died inside its write section (its lease stands, never renewed again; a vector row without its
    graph node). Machine A, with no marker of any killed ingest, breaks the lease after its ttl and sweeps."""
    a, b = shared("machine-a"), shared("machine-b")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "green_city_fund.md").write_text(WEST["green_city_fund.md"])
    with StrataGraph(b) as sg_b, StrataGraph(a) as sg_a:
        dead = LeaseRecord("machine-b:777:0a0b0c0d", 3, 1.0, time.time())
        assert sg_b.graph.swap_lease("write", None, dead)
        sg_b.vectors.upsert("chunks", ["b.md#1#0"], ["orphan"], [{"doc_id": "b.md"}])
        sg_b.vectors.upsert("entities", ["gone entity"], ["Gone"], [{"entity_id": "ent:gone entity", "name": "Gone"}])
        assert sg_a.ingest([docs], base=tmp_path).failed == 0
        assert "b.md#1#0" not in sg_a.vectors.ids("chunks") and "gone entity" not in sg_a.vectors.ids("entities")
        assert sg_a.graph.read_lease("write") is None  # A released the lease it broke
        assert sg_a.graph.get_node("docs/green_city_fund.md") is not None

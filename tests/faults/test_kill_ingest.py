"""An ingest killed at any instant (stratagraph/ingest/recovery.py): the next ingest repairs what it left.

The 30-trial run is ``benchmarks/kill_ingest.py`` (BENCHMARKS.md "Issue 22"); here its 3-trial version, and
the repair itself on rows a killed ingest leaves (real SQLite, Chroma, spaCy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stratagraph import StrataGraph
from stratagraph.config import Settings
from tests.conftest import REPO, canonical

DOC = "# Harbor\n\nThe Riverton harbor handled 1.2 million tonnes of cargo in 2024.\n"


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(proc.stdout)


@pytest.fixture
def stored(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "harbor.md").write_text(DOC)
    sg = StrataGraph(Settings(home=tmp_path / "store"))
    assert sg.ingest([docs], base=docs).failed == 0
    yield sg, docs
    sg.close()


def _orphan(sg: StrataGraph) -> None:
    """What a kill between the vectors and the graph transaction leaves: a chunk row whose node is absent
    (a document that will not be ingested again), and an entity-name row naming no entity."""
    sg.vectors.upsert("chunks", ["gone.md#1#0"], ["a chunk of a gone document"], [{"doc_id": "gone.md"}])
    sg.vectors.upsert("entities", ["gone entity"], ["Gone Entity"], [{"entity_id": "ent:gone entity", "name": "Gone Entity"}])


def _marker(sg: StrataGraph, pid: int) -> Path:
    folder = sg.settings.home / "ingest-running"
    folder.mkdir(exist_ok=True)
    marker = folder / f"{pid}.test"
    marker.touch()
    return marker


def test_a_killed_ingests_orphan_rows_are_deleted_by_the_next(stored) -> None:
    sg, docs = stored
    before = canonical(sg.export())
    _orphan(sg)
    marker = _marker(sg, _dead_pid())
    assert sg.ingest([docs], base=docs).failed == 0
    assert "gone.md#1#0" not in sg.vectors.ids("chunks") and "gone entity" not in sg.vectors.ids("entities")
    assert not marker.exists() and list(marker.parent.iterdir()) == []  # this run's own marker is gone too
    assert canonical(sg.export()) == before


def test_without_a_killed_ingest_nothing_is_swept(stored) -> None:
    """The sweep runs only after a kill: the rows stay (the check above is not vacuous)."""
    sg, docs = stored
    _orphan(sg)
    sg.ingest([docs], base=docs)
    assert "gone.md#1#0" in sg.vectors.ids("chunks")


def test_the_repair_waits_while_another_ingest_is_alive(stored) -> None:
    sg, docs = stored
    _orphan(sg)
    dead = _marker(sg, _dead_pid())
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            alive = _marker(sg, other.pid)
            sg.ingest([docs], base=docs)
            assert "gone.md#1#0" in sg.vectors.ids("chunks")  # the other ingest's rows may be in flight
            assert dead.exists()
        finally:
            other.kill()
    alive.unlink()
    sg.ingest([docs], base=docs)
    assert "gone.md#1#0" not in sg.vectors.ids("chunks")


def test_kill_9_three_trials() -> None:
    """benchmarks/kill_ingest.py, 3 seeded trials on SQLite: each kill, then a re-ingest equal to a clean one."""
    sys.path.insert(0, str(REPO))
    from benchmarks.kill_ingest import run

    corpus = [Path(__file__).parent / "injection" / "acme.md", REPO / "examples" / "research" / "c_cool_roof_retrofits.md"]
    out = run(trials=3, seed=22, corpus=corpus, log=print, in_process=True, window="writes")
    assert out["killed"] >= 2
    assert [r["problems"] for r in out["rows"]] == [[], [], []]

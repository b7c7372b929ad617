"""The write lease kept in the store (stratagraph/graph_store/lease.py), on SQLite and on the local Bolt server:
compare-and-set, a second taker waits while the holder renews, a holder that dies is broken after its ttl,
a holder that stalls loses it, and real processes taking turns never overlap."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stratagraph.graph_store.base import GraphStore, LeaseRecord, StoreUnavailable
from stratagraph.graph_store.lease import LeaseLost, LeaseTimeout, StoreLease
from stratagraph.graph_store.sqlite import SQLiteGraphStore
from stratagraph.schema import Node, NodeLabel
from tests.conftest import REPO
from tests.graph_store.bolt import BoltTarget, bolt_target

BACKENDS = ["sqlite", "bolt"]


@pytest.fixture(params=BACKENDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Callable[[], GraphStore], dict[str, str]]]:
    """A factory of handles on one store (each call: a new connection, as another process would have) and the
    environment a child process opens it from (``CHILD``)."""
    if request.param == "sqlite":
        path = tmp_path / "graph.sqlite"
        yield (lambda: SQLiteGraphStore(path)), {"backend": "sqlite", "path": str(path)}
        return
    target: BoltTarget = bolt_target()
    key = str(tmp_path / "bolt")
    database = target.database_for(key)
    yield (
        (lambda: target.store(key)),
        {"backend": "bolt", "uri": target.uri, "user": target.user, "password": target.password, "database": database or ""},
    )
    if target.arcadedb is not None:
        target.drop(key)


def test_swap_is_compare_and_set_and_leaves_the_graph_alone(opener) -> None:
    open_store, _ = opener
    store = open_store()
    try:
        store.write_batch(nodes=[Node(id="d", label=NodeLabel.DOCUMENT, doc_ids=["d"], props={"title": "D"})])
        generation, export = store.generation(), store.export()
        a = LeaseRecord("a", 0, 5.0, 100.0)
        assert store.read_lease("write") is None
        assert store.swap_lease("write", None, a)
        assert not store.swap_lease("write", None, LeaseRecord("b", 0, 5.0, 1.0))  # taken: no
        assert store.read_lease("write") == a
        assert not store.swap_lease("write", a._replace(beat=1), None)  # a stale beat: no
        assert store.swap_lease("write", a, a._replace(beat=1))
        assert store.read_lease("other") is None  # leases are by name
        assert not store.swap_lease("write", a, None)
        assert store.swap_lease("write", a._replace(beat=1), None)
        assert store.read_lease("write") is None
        assert store.generation() == generation and store.export() == export  # not part of the graph
    finally:
        store.close()


def test_a_second_taker_waits_while_the_holder_renews(opener) -> None:
    open_store, _ = opener
    first, second = open_store(), open_store()
    try:
        holder = StoreLease(first, ttl=0.6)
        assert holder.acquire().broken is None
        waited_for: list[str] = []
        taker = StoreLease(second, ttl=0.6, on_wait=lambda rec: waited_for.append(rec.holder))
        got: list = []
        thread = threading.Thread(target=lambda: got.append(taker.acquire()))
        start = time.monotonic()
        thread.start()
        time.sleep(2.5)  # four times the ttl: the holder's renewals keep it
        assert thread.is_alive() and not got
        assert holder.held and second.read_lease("write").beat >= 3
        holder.release()
        thread.join(10)
        assert got and got[0].broken is None and got[0].waited >= 2.4 and time.monotonic() - start < 5
        assert waited_for == [holder.holder]
        assert second.read_lease("write").holder == taker.holder
        taker.release()
        assert second.read_lease("write") is None
        with pytest.raises(LeaseTimeout, match="still held by"):  # a live holder and a bounded wait
            with StoreLease(first, ttl=0.5):
                StoreLease(second, ttl=0.5, timeout=1.0).acquire()
    finally:
        first.close()
        second.close()


CHILD = r"""
import json, os, sys, time
from pathlib import Path
cfg = json.loads(sys.argv[1])
if cfg["backend"] == "sqlite":
    from stratagraph.graph_store.sqlite import SQLiteGraphStore
    store = SQLiteGraphStore(cfg["path"])
else:
    from stratagraph.graph_store.neo4j import Neo4jGraphStore
    store = Neo4jGraphStore(cfg["uri"], cfg["user"], cfg["password"], cfg["database"] or None)
from stratagraph.graph_store.lease import StoreLease
mode = sys.argv[2]
if mode == "hold":  # take the lease, say so, and wait to be killed
    lease = StoreLease(store, ttl=float(sys.argv[3]), holder=sys.argv[4] or None)
    lease.acquire()
    print(lease.holder, flush=True)
    time.sleep(600)
else:  # take turns: under the lease, a read-modify-write of a counter file that would lose updates if two overlapped
    counter, rounds = Path(sys.argv[3]), int(sys.argv[4])
    for _ in range(rounds):
        with StoreLease(store, ttl=2.0, poll=0.01):
            n = int(counter.read_text())
            time.sleep(0.05)
            counter.write_text(str(n + 1))
    print("done", flush=True)
"""


def _child(cfg: dict[str, str], *args: str, stdout: int | None = subprocess.PIPE) -> subprocess.Popen:
    path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(cfg), *args], cwd=REPO, stdout=stdout, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
    )  # fmt: skip


@pytest.mark.parametrize("where", ["another machine", "this machine"])
def test_a_holder_that_dies_is_broken(opener, where: str) -> None:
    """A dead holder on another machine (a holder id naming another host) is broken once its beat has stood
    still for its ttl; one of this machine (this pid space, its process gone) at once."""
    open_store, cfg = opener
    holder = "elsewhere:4242:0a0b0c0d@0123456789ab" if where == "another machine" else ""
    proc = _child(cfg, "hold", "1.0", holder)
    try:
        dead_holder = proc.stdout.readline().strip()
        assert dead_holder, proc.stderr.read()
        assert dead_holder == (holder or dead_holder)
        store = open_store()
        time.sleep(1.2)  # alive: it renews, nobody may take it
        assert store.read_lease("write").holder == dead_holder
        with pytest.raises(LeaseTimeout):
            StoreLease(store, ttl=1.0, timeout=1.5).acquire()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        killed = time.monotonic()
        taker = StoreLease(store, ttl=1.0)
        taken = taker.acquire()
        after = time.monotonic() - killed
        assert taken.broken is not None and taken.broken.holder == dead_holder
        if where == "another machine":
            assert 0.9 <= after <= 4.0  # between one and two ttls after its last renewal, plus polling
        else:
            assert after < 0.5
        assert store.read_lease("write").holder == taker.holder
        taker.release()
        store.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _stalled_holder(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> StoreLease:
    """A holder of the lease whose renewals have stopped, as in a process paused past its ttl."""
    lease = StoreLease(store, ttl=0.5)
    lease.acquire()
    monkeypatch.setattr(lease, "_stop", threading.Event())
    lease._stop.set()
    return lease


def test_a_holder_that_stalls_loses_the_lease_and_cannot_release_the_new_one(opener, monkeypatch) -> None:
    open_store, _ = opener
    a_store, b_store = open_store(), open_store()
    try:
        a = _stalled_holder(a_store, monkeypatch)
        a.check()
        b = StoreLease(b_store, ttl=0.5)
        assert b.acquire().broken.holder == a.holder
        assert not a.renew() and a.lost
        with pytest.raises(LeaseLost, match="no longer its own"):
            a.check()
        a.release()  # lost: it does not remove b's record
        assert b_store.read_lease("write").holder == b.holder
        b.release()
    finally:
        a_store.close()
        b_store.close()


def _doc(node_id: str) -> Node:
    return Node(id=node_id, label=NodeLabel.DOCUMENT, doc_ids=[node_id], props={"title": node_id})


def test_a_stalled_holders_writes_are_refused_once_its_lease_is_broken(opener, monkeypatch) -> None:
    """The fence: the stalled writer has not renewed or checked yet, so only the store can stop it."""
    open_store, _ = opener
    a_store, b_store = open_store(), open_store()
    try:
        a = _stalled_holder(a_store, monkeypatch)
        a_store.write_batch(nodes=[_doc("a1")])  # while it holds the lease its writes go through
        b = StoreLease(b_store, ttl=0.5)
        assert b.acquire().broken.holder == a.holder
        assert not a.lost  # it does not know yet
        generation, export = b_store.generation(), b_store.export()
        with pytest.raises(LeaseLost, match=r"refused: the lease is now held by " + re.escape(b.holder)):
            a_store.write_batch(nodes=[_doc("a2")])
        with pytest.raises(LeaseLost):
            a_store.delete_document("a1")
        assert b_store.generation() == generation and b_store.export() == export  # nothing of either landed
        b_store.write_batch(nodes=[_doc("b1")])  # the new holder writes
        assert {n.id for n in b_store.nodes_by_label(NodeLabel.DOCUMENT)} == {"a1", "b1"}
        b.release()
        with pytest.raises(LeaseLost, match="the lease is now free"):
            a_store.write_batch(nodes=[_doc("a3")])  # released, not its own: still refused
        a.release()  # letting go lifts its fence: the handle writes unfenced again, as before it took one
        a_store.write_batch(nodes=[_doc("a4")])
        assert b_store.get_node("a4") is not None and b_store.get_node("a2") is None
    finally:
        a_store.close()
        b_store.close()


def test_no_fenced_write_commits_after_its_lease_changed_hands(opener) -> None:
    """A writer making a burst of writes while another handle breaks its lease: every write either committed
    before the break (its generation at most the one read after the break) or was refused. Were the fence's
    read not serialised with the change of holder, a write that read the old holder could commit after it
    (measured: with the Bolt backend's lock taken out, this fails every run). The burst is short, so that an
    optimistic server (ArcadeDB) lets the breaker's retried transaction through once it ends."""
    open_store, _ = opener
    a_store, b_store = open_store(), open_store()
    rng = random.Random(7)
    try:
        for turn in range(15):
            a, b = LeaseRecord(f"a{turn}", 0, 30.0, 0.0), LeaseRecord(f"b{turn}", 0, 30.0, 0.0)
            assert a_store.swap_lease("write", None, a)
            a_store.fence("write", a.holder)
            written: list[str] = []

            def burst() -> None:
                for i in range(6):
                    try:
                        a_store.write_batch(nodes=[_doc(f"a{turn}-{i}")])
                    except LeaseLost:
                        return
                    written.append(f"a{turn}-{i}")

            writer = threading.Thread(target=burst)
            writer.start()
            time.sleep(rng.uniform(0.0, 0.04))
            assert b_store.swap_lease("write", a, b)  # broken while a writes
            after = b_store.generation()
            writer.join(timeout=60)
            assert not writer.is_alive()
            changes = b_store.changes_since(after)
            late = [row[0] for rows in changes.nodes.values() for row in rows] if changes is not None else []
            assert late == [], f"turn {turn}: writes of the old holder committed after the break: {late}"
            assert all(b_store.get_node(n) is not None for n in written)
            assert b_store.swap_lease("write", b, None)
            a_store.unfence("write", a.holder)
    finally:
        a_store.close()
        b_store.close()


def test_processes_taking_turns_never_overlap(opener, tmp_path: Path) -> None:
    _, cfg = opener
    counter = tmp_path / "counter"
    counter.write_text("0")
    rounds = 8
    procs = [_child(cfg, "turns", str(counter), str(rounds)) for _ in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "done", err[-3000:]
    assert int(counter.read_text()) == 3 * rounds  # no lost update: never two inside at once


def test_a_lease_this_process_could_not_release_is_broken_at_once(opener, monkeypatch) -> None:
    """The store was unreachable when the holder let go (its record stays); a later taker in this process knows
    that holder is gone and does not wait out the ttl."""
    open_store, _ = opener
    store = open_store()
    try:
        first = StoreLease(store, ttl=30.0)
        first.acquire()
        real = store.swap_lease

        def unreachable(name, expect, new):  # noqa: ANN001, ANN202 - the store's own signature
            if new is None:
                raise StoreUnavailable("the server is gone")
            return real(name, expect, new)

        monkeypatch.setattr(store, "swap_lease", unreachable)
        first.release()  # logged, not raised
        monkeypatch.setattr(store, "swap_lease", real)
        assert store.read_lease("write").holder == first.holder
        start = time.monotonic()
        second = StoreLease(store, ttl=30.0)
        taken = second.acquire()
        try:
            assert taken.broken.holder == first.holder and time.monotonic() - start < 1.0
        finally:
            second.release()  # its renewing thread must not outlive the store (it logged a failure every 10 s)
    finally:
        store.close()


def test_a_lease_held_when_its_store_is_closed_stops_renewing_and_is_lost(opener, caplog) -> None:
    open_store, _ = opener
    store, other = open_store(), open_store()
    try:
        lease = StoreLease(store, ttl=0.3)
        lease.acquire()
        renewer = lease._renewer
        assert renewer is not None and renewer.is_alive() and not store.closed
        store.close()
        assert store.closed
        renewer.join(timeout=2.0)
        assert not renewer.is_alive() and lease.lost  # it stopped, rather than retrying on a closed store forever
        assert "closed while it was held" in caplog.text and "retrying" not in caplog.text
        assert StoreLease(other, ttl=0.3).acquire().broken.holder == lease.holder  # the record expired
    finally:
        other.close()

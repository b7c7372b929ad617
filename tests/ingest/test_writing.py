"""The write section of an ingest (stratagraph/ingest/writing.py) on a real SQLite store: a run working in its
steps keeps the write lease; a run abandoned between two steps gives it up after the idle limit, so other
writers are held up for a bounded time, and it cannot write on with it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph.config import Settings
from stratagraph.graph_store.lease import LeaseLost, LeaseTimeout, StoreLease
from stratagraph.ingest import writing
from stratagraph.services import Services


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    services = Services(settings=Settings(home=tmp_path / "store", write_lease_ttl=0.5))
    yield services
    services.close()


def test_a_working_run_keeps_the_lease_past_the_idle_limit(svc: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """However long one step takes (a slow chat model), and however many steps follow one another."""
    monkeypatch.setattr(writing, "IDLE_LIMIT", 0.6)
    token, taken = writing.take(svc)
    assert taken.broken is None and svc.graph.read_lease(writing.LEASE).holder == token
    for _ in range(2):  # two steps of 2 s each, over three idle limits: the other writer waits all along
        with writing.working(token), pytest.raises(LeaseTimeout):
            StoreLease(svc.graph, writing.LEASE, ttl=0.5, timeout=2.0).acquire()
        writing.check(token)
    writing.let_go(token)
    assert svc.graph.read_lease(writing.LEASE) is None


def test_an_abandoned_run_gives_the_lease_up(svc: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writing, "IDLE_LIMIT", 0.6)
    token, _ = writing.take(svc)  # ... and the run never comes back (no check, no let_go)
    start = time.monotonic()
    taker = StoreLease(svc.graph, writing.LEASE, ttl=0.5)
    taken = taker.acquire()
    assert taken.broken is not None and taken.broken.holder == token
    assert time.monotonic() - start < 4.0  # the idle limit, then one or two ttls
    with pytest.raises(LeaseLost):
        writing.check(token)  # were it to come back, it writes nothing more
    writing.let_go(token)
    assert svc.graph.read_lease(writing.LEASE).holder == taker.holder  # and does not drop the new holder's lease
    taker.release()

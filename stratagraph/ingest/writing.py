"""The write section of an ingest, and of a delete: held under the store's write lease.

An ingest reads what is stored and writes what follows from it in three steps: entity resolution against
the stored entities (``steps.resolve``), the write of the documents' vectors and graph (``steps.write``) and
their cross-document links (``steps.link``: CITES, DESCRIBED_BY, SIMILAR, the entity-name rows). Two writers
that interleave these steps each resolve and link against a store without the other's documents, and end
in a graph that neither order of the two ingests gives. So the section holds the write lease kept in the
graph store (:mod:`stratagraph.graph_store.lease`), which reaches every machine that shares the Neo4j and
Chroma servers (on SQLite the database file is the shared store). Loading, chunking, extraction and
embedding stay outside it: two machines do them at the same time.

Every vector row written ahead of its graph node (what ``ingest/recovery.py`` sweeps after a crash) is
written inside this section, so a sweep that holds the lease never deletes another writer's rows in flight.

The lease is taken in one workflow step and released in a later one, so the run keeps it under a token (a
string in the workflow state): :func:`take` returns it, :func:`check` raises when the lease was lost,
:func:`let_go` releases it (at the end of ``link``, on an error in any step of the section, and in
``summarize`` in any case). A run abandoned between two of its steps (a LangGraph Studio run cancelled
after ``resolve``) never lets go: so each step of the section runs inside :func:`working`, and once the run
has spent :data:`IDLE_LIMIT` seconds outside every step the lease stops being renewed and expires; other
writers are held up for a bounded time, not for the life of the process. (Inside a step the run counts as
working however long the step takes: a slow chat model typing concepts does not lose the lease.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from stratagraph.graph_store.base import LeaseRecord
from stratagraph.graph_store.lease import StoreLease, Taken, holder_id

if TYPE_CHECKING:
    from stratagraph.services import Services

__all__ = ["IDLE_LIMIT", "LEASE", "check", "let_go", "section", "take", "working"]

LEASE = "write"  # the one lease every writer of a store takes
#: seconds a run holding the lease may spend between two of its steps before it counts as abandoned
IDLE_LIMIT = 600.0

log = logging.getLogger(__name__)

_held: dict[str, StoreLease] = {}
_touched: dict[str, float] = {}  # token -> when the run last left a step of the section (monotonic)
_busy: dict[str, int] = {}  # token -> steps of the run running now
_held_lock = threading.Lock()


def _lease(svc: Services, holder: str | None = None, active: Callable[[], bool] | None = None) -> StoreLease:
    def waiting(record: LeaseRecord) -> None:
        svc.report(f"waiting for the write lease ({record.holder})", 0, 1)

    return StoreLease(
        svc.graph, LEASE, ttl=svc.settings.write_lease_ttl, timeout=svc.settings.write_lease_timeout, on_wait=waiting,
        holder=holder, active=active,
    )  # fmt: skip


def take(svc: Services) -> tuple[str, Taken]:
    """Take the store's write lease (waiting while another writer holds it); the run's token and what taking
    it found (``Taken.broken``: a writer died holding it)."""
    token = holder_id()
    with _held_lock:
        _touched[token] = time.monotonic()

    def active() -> bool:  # in a step of the section, or not out of one for long
        return _busy.get(token, 0) > 0 or time.monotonic() - _touched.get(token, 0.0) < IDLE_LIMIT

    lease = _lease(svc, token, active=active)
    taken = lease.acquire()
    log.info("write lease taken by %s after waiting %.2f s", lease.holder, taken.waited)
    with _held_lock:
        _touched[lease.holder] = time.monotonic()
        _held[lease.holder] = lease
    return lease.holder, taken


def check(token: str | None) -> None:
    """Raise :class:`~stratagraph.graph_store.lease.LeaseLost` when the run's lease is no longer its own (broken by
    another writer, or given up after :data:`IDLE_LIMIT` outside its steps)."""
    lease = _held.get(token or "")
    if lease is not None:
        lease.check()


@contextmanager
def working(token: str | None) -> Iterator[None]:
    """A step of the run's write section is running (the run is not abandoned, however long it takes)."""
    key = token or ""
    with _held_lock:
        _busy[key] = _busy.get(key, 0) + 1
    try:
        yield
    finally:
        with _held_lock:
            _busy[key] -= 1
            if not _busy[key]:
                del _busy[key]
            if key in _held:
                _touched[key] = time.monotonic()


def let_go(token: str | None) -> None:
    """Release the run's lease (nothing when it holds none)."""
    with _held_lock:
        lease = _held.pop(token or "", None)
        _touched.pop(token or "", None)
    if lease is not None:
        lease.release()


@contextmanager
def section(svc: Services) -> Iterator[Taken]:
    """The write lease around one block (a delete, an import, a recovery sweep)."""
    lease = _lease(svc)
    taken = lease.acquire()
    try:
        yield taken
    finally:
        lease.release()

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
after ``resolve``) never lets go: every :func:`check` marks the run as still working, and after
:data:`IDLE_LIMIT` seconds without one the lease stops being renewed and expires, so other writers are held
up for a bounded time, not for the life of the process.
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

__all__ = ["LEASE", "check", "let_go", "section", "take"]

LEASE = "write"  # the one lease every writer of a store takes
#: seconds a run may hold the lease without a :func:`check` (the write step checks before each batch, the link
#: step when it starts) before it counts as abandoned
IDLE_LIMIT = 3600.0

log = logging.getLogger(__name__)

_held: dict[str, StoreLease] = {}
_touched: dict[str, float] = {}  # token -> when the run last checked its lease (monotonic)
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
    lease = _lease(svc, token, active=lambda: time.monotonic() - _touched.get(token, 0.0) < IDLE_LIMIT)
    taken = lease.acquire()
    log.info("write lease taken by %s after waiting %.2f s", lease.holder, taken.waited)
    with _held_lock:
        _touched[lease.holder] = time.monotonic()
        _held[lease.holder] = lease
    return lease.holder, taken


def check(token: str | None) -> None:
    """Raise :class:`~stratagraph.graph_store.lease.LeaseLost` when the run's lease is no longer its own (broken by
    another writer, or given up after :data:`IDLE_LIMIT`); else mark the run as still working."""
    lease = _held.get(token or "")
    if lease is not None:
        lease.check()
        _touched[lease.holder] = time.monotonic()


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

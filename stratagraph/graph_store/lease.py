"""A lease kept in the shared store: how writers on several machines take turns.

Two ingests into one Bolt server and one Chroma server (separate store folders, as on two machines) must not
interleave the part of an ingest that reads what is stored and writes what follows from it (entity
resolution against the stored entities, the write, the cross-document links): each would resolve and link
against a store without the other's documents. A lock file cannot reach the other machine, so the lock
lives in the graph store itself, written through its own write path (:meth:`GraphStore.swap_lease`, a
compare-and-set in one transaction; SQLite: a ``leases`` table in the database file, Neo4j: a
``StratagraphMeta`` node), never moving the store's generation.

* **Taking**: a free lease is taken by writing ``(holder, beat 0, ttl)`` where there was none.
* **Holding**: a thread of the holder renews it every ``ttl / 3`` seconds by bumping ``beat`` (compare and set
  on the beat it last wrote). A renewal that finds another holder's record means the lease was broken (this
  process stalled longer than ``ttl``): the lease is *lost*, and :meth:`StoreLease.check` raises
  :class:`LeaseLost` before the holder's next write.
* **Fencing**: while it holds the lease, the holder's store handle is fenced to it (:meth:`GraphStore.fence`):
  each graph write reads the lease inside its own transaction and is refused whole when another holder has
  it. A holder that stalled past its ttl (a paused VM, a long GC) and wakes mid-write cannot write over the
  writer that broke its lease, even before a renewal or a check tells it so. The vector store has no such
  check: a refused batch's vector rows stay without their graph node, as after a kill between the two writes
  (``ingest/recovery.py``): never evidence (a chunk id the graph does not hold is skipped) and overwritten when
  the document is ingested again.
* **Waiting**: a taker that finds the lease held polls it. Clocks of different machines are never compared:
  the waiter notes, on its own monotonic clock, when it first saw the current ``(holder, beat)``; if that
  stays unchanged for longer than the holder's ``ttl``, the holder has died (or stalled) and the waiter
  **breaks** the lease, taking it by compare-and-set on exactly that record (two waiters cannot both win).
  A holder that died is noticed between ``ttl`` and ``2 * ttl`` after its last renewal; at once when it was a
  process of the taker's own pid space (same host, boot and pid namespace, :func:`holder_id`) that no longer
  runs, as after a kill -9 and a re-run on one machine.
* **Releasing**: the holder removes its record (compare-and-set on its own beat), at the end or on an error.
  A holder may also say when it has stopped using the lease without releasing it (``active``: a run
  abandoned between two steps); the renewals stop then and the lease expires as a dead holder's does.

:attr:`Taken.broken` tells the new holder that the previous one died holding the lease, so what it was
writing may be half done (``ingest/recovery.py`` sweeps then, under the lease).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import TracebackType

from stratagraph.graph_store.base import GraphStore, LeaseLost, LeaseRecord, StoreUnavailable

__all__ = ["LeaseLost", "LeaseTimeout", "StoreLease", "Taken", "holder_id", "process_alive"]

log = logging.getLogger(__name__)


class LeaseTimeout(StoreUnavailable):
    """The lease stayed held by a live writer for longer than the taker was willing to wait."""


@cache
def _pid_space() -> str | None:
    """What names this process's pid space: the kernel's boot id and the pid namespace (Linux), so two
    containers with one host name are told apart; None where it cannot be known."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    return hashlib.sha1(f"{socket.gethostname()}|{boot}|{ns}".encode()).hexdigest()[:12]


def holder_id() -> str:
    """Who takes a lease: host, process, a random part (two leases of one process are two holders) and, after
    ``@``, the pid space the process lives in (when known)."""
    space = _pid_space()
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}" + (f"@{space}" if space else "")


#: holders of this process that let go of their lease but could not remove its record (the store was
#: unreachable then): known to be gone, so a taker in this process breaks their record at once
_abandoned: set[str] = set()


def _dead_here(holder: str) -> bool:
    """True when ``holder`` is a process of this pid space (same host, boot and namespace) that no longer
    runs, or a holder of this process that let go of the lease: its lease can be broken at once, without
    waiting out its ttl. False whenever unsure (another machine, a pid that runs again, possibly reused: the
    ttl decides then)."""
    if holder in _abandoned:
        return True
    head, _, space = holder.rpartition("@")
    if not head or space != _pid_space():
        return False
    parts = head.split(":")
    if len(parts) < 3 or not parts[-2].isdigit():
        return False
    pid = int(parts[-2])
    return pid != os.getpid() and not process_alive(pid)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine runs (another user's process counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: alive
        return True
    return True


@dataclass(frozen=True)
class Taken:
    """What taking the lease found: the record of a holder that stopped renewing (broken to take it), if any,
    and how long the taker waited (seconds)."""

    broken: LeaseRecord | None
    waited: float


class StoreLease:
    """The lease ``name`` of ``graph`` for one holder (module docstring). A context manager: ``with lease:``
    takes it (waiting) and releases it."""

    def __init__(
        self,
        graph: GraphStore,
        name: str = "write",
        *,
        ttl: float = 30.0,
        timeout: float | None = None,
        poll: float | None = None,
        holder: str | None = None,
        on_wait: Callable[[LeaseRecord], None] | None = None,
        active: Callable[[], bool] | None = None,
    ) -> None:
        if ttl <= 0:
            raise ValueError("a lease's ttl must be positive")
        self.graph = graph
        self.name = name
        self.ttl = float(ttl)
        self.timeout = timeout
        self.poll = poll if poll is not None else min(1.0, self.ttl / 10)
        self.holder = holder or holder_id()
        self.on_wait = on_wait
        self.active = active  # while it says False the renewals stop (a holder that forgot its lease)
        self._mine: LeaseRecord | None = None  # the record as this holder last wrote it
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False

    def __repr__(self) -> str:
        return f"StoreLease({self.name!r}, holder={self.holder!r}, held={self.held})"

    @property
    def held(self) -> bool:
        return self._mine is not None and not self.lost

    # ---------------------------------------------------------------- taking
    def acquire(self) -> Taken:
        """Take the lease, waiting while a live holder has it and breaking it when its holder stopped renewing
        for longer than its ttl; raises :class:`LeaseTimeout` after ``timeout`` seconds of waiting."""
        if self._mine is not None:
            raise RuntimeError(f"{self!r} is already held")
        start = time.monotonic()
        seen: tuple[str, int] | None = None
        seen_at = start
        told = False
        while True:
            now = time.monotonic()
            current = self.graph.read_lease(self.name)
            mine = LeaseRecord(self.holder, 0, self.ttl, time.time())
            if current is None:
                if self.graph.swap_lease(self.name, None, mine):
                    return self._took(mine, None, now - start)
                continue  # someone took it between the read and the swap: look again
            if (current.holder, current.beat) != seen:
                seen, seen_at = (current.holder, current.beat), now
            if _dead_here(current.holder) or now - seen_at > current.ttl:
                if self.graph.swap_lease(self.name, current, mine):
                    log.warning(
                        "lease %r: holder %s stopped renewing it (no renewal seen for %.1f s, its ttl %.1f s, or its "
                        "process is gone): broken", self.name, current.holder, now - seen_at, current.ttl,
                    )  # fmt: skip
                    return self._took(mine, current, now - start)
                continue
            if self.timeout is not None and now - start > self.timeout:
                raise LeaseTimeout(
                    f"the store's {self.name} lease is still held by {current.holder} after {self.timeout:.0f} s "
                    "of waiting (it renews it, so it is alive: try again when it has finished)"
                )
            if not told:
                told = True
                log.info("lease %r is held by %s: waiting", self.name, current.holder)
                if self.on_wait is not None:
                    self.on_wait(current)
            time.sleep(self.poll)

    def _took(self, mine: LeaseRecord, broken: LeaseRecord | None, waited: float) -> Taken:
        self._mine = mine
        self.lost = False
        self.graph.fence(self.name, self.holder)
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew_loop, name=f"lease-{self.name}", daemon=True)
        self._renewer.start()
        return Taken(broken=broken, waited=waited)

    # ---------------------------------------------------------------- holding
    def renew(self) -> bool:
        """Bump the beat; False (and :attr:`lost`) when another holder has the lease now."""
        with self._mutex:
            mine = self._mine
            if mine is None or self.lost:
                return False
            nxt = mine._replace(beat=mine.beat + 1)
            if self.graph.swap_lease(self.name, mine, nxt):
                self._mine = nxt
                return True
            self.lost = True
            log.error("lease %r of %s was broken by another writer (this one stalled past its ttl)", self.name, self.holder)
            return False

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            if self.active is not None and not self.active():
                log.error("lease %r of %s: its holder stopped using it; no longer renewed", self.name, self.holder)
                self.lost = True  # it expires: whatever the holder does next must not count on it
                return
            if self.graph.closed:  # its store was closed under it: nothing to renew through, it expires
                log.warning("lease %r of %s: its store was closed while it was held; no longer renewed", self.name, self.holder)
                self.lost = True
                return
            try:
                if not self.renew():
                    return
            except Exception:  # a store that is briefly unreachable: try again at the next beat
                log.warning("renewing lease %r failed; retrying", self.name, exc_info=True)

    def check(self) -> None:
        """Raise :class:`LeaseLost` when another writer broke this holder's lease."""
        if self.lost:
            raise LeaseLost(
                f"the store's {self.name} lease of {self.holder} is no longer its own (another writer took it over "
                f"after {self.ttl:.0f} s without a renewal, or its holder gave it up); nothing more is written: run "
                "the ingest again"
            )

    # ---------------------------------------------------------------- releasing
    def release(self) -> None:
        """Stop renewing and remove this holder's record (nothing when another writer has it, or none was taken)."""
        self._stop.set()
        renewer, self._renewer = self._renewer, None
        if renewer is not None and renewer is not threading.current_thread():
            renewer.join()
        self.graph.unfence(self.name, self.holder)
        with self._mutex:
            mine, self._mine = self._mine, None
            if mine is not None:  # (a compare and set: a record another writer took over stays)
                try:
                    self.graph.swap_lease(self.name, mine, None)
                except Exception:  # the store is unreachable: the record stops being renewed and expires
                    _abandoned.add(mine.holder)
                    log.warning("releasing lease %r failed; it expires in %.0f s", self.name, self.ttl, exc_info=True)

    def __enter__(self) -> StoreLease:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

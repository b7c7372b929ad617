"""An ingest killed at any instant (kill -9, the OOM killer, a container stopped) and what the next one repairs.

What each write leaves when the process dies right after it (``steps.write`` / ``steps.link``):

* the vectors of a batch are written, its graph transaction is not: vector rows without their graph node.
  The graph is untouched, so the documents are still absent (or at their old hash) and the next ingest of
  them writes them again; the rows stay orphaned only for a document that is never ingested again;
* the graph transaction is committed with the documents' *pending* hash (``steps.pending_hash``), linking
  not done: the next ingest sees the hash differ and does the document again;
* the stale vectors of an old version are not yet deleted: rows without a node (as above);
* the entity-name rows are not yet written or reconciled: the document is pending, so it is done again.

The two stores cannot share one transaction, so the orphan rows are the one state that is not atomic. An
ingest marks itself running (a file ``<home>/ingest-running/<pid>.<run>``, removed when it ends); an ingest that
finds the marker of a process no longer alive knows one was killed and, before anything else, deletes the
vector rows whose graph node is absent (chunks, sections, facts) and the entity-name rows that name no stored
entity (:func:`sweep`). While another ingest of this store folder is alive the sweep waits for a later run.

Stores shared by several machines (one Neo4j and one Chroma server, a store folder on each machine): a marker
file reaches only its own folder, so it can neither tell an ingest on another machine is running nor that
one was killed. What can leave orphan rows (the vector and graph writes) happens only inside an ingest's
write section, under the write lease kept in the graph store itself (``ingest/writing.py``). Hence:

* every sweep holds the write lease: no writer anywhere has rows in flight while it runs, so a running
  ingest on another machine is never swept as if it were interrupted;
* a writer killed inside its write section stops renewing its lease; the next writer to take the lease,
  on any machine, breaks it after the lease's ttl and sweeps first (``steps.resolve``), no marker needed.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from stratagraph.graph_store.lease import process_alive
from stratagraph.ingest import writing
from stratagraph.schema import NodeLabel

if TYPE_CHECKING:
    from stratagraph.services import Services

__all__ = ["Recovery", "begin", "end", "sweep"]

log = logging.getLogger(__name__)

#: vector collection -> the label of the graph node each row stands for
NODE_COLLECTIONS = {"chunks": NodeLabel.CHUNK, "sections": NodeLabel.SECTION, "facts": NodeLabel.FACT}
ENTITY_COLLECTION = "entities"


@dataclass
class Recovery:
    """What starting an ingest found and did."""

    interrupted: int = 0  # markers of killed ingests
    deleted: dict[str, int] = field(default_factory=dict)  # orphan rows deleted, by collection
    deferred: bool = False  # another ingest is alive: the sweep waits

    def __str__(self) -> str:
        if not self.interrupted:
            return "no interrupted ingest"
        if self.deferred:
            return f"{self.interrupted} interrupted ingest(s); the repair waits for the running ingest to end"
        rows = ", ".join(f"{n} {c}" for c, n in sorted(self.deleted.items()) if n) or "none"
        return f"{self.interrupted} interrupted ingest(s) found; orphan vector rows deleted: {rows}"


def _markers(home: Path) -> Path:
    return home / "ingest-running"


def begin(svc: Services) -> tuple[Path, Recovery]:
    """Mark this ingest running, after repairing what killed ingests left (module docstring)."""
    folder = _markers(svc.settings.home)
    folder.mkdir(parents=True, exist_ok=True)
    me = os.getpid()
    dead, others = [], 0
    for marker in folder.iterdir():
        head = marker.name.split(".", 1)[0]
        pid = int(head) if head.isdigit() else -1
        if pid == me or (pid > 0 and process_alive(pid)):  # this process's other ingests (threads) are alive too
            others += 1
        else:
            dead.append(marker)
    recovery = Recovery(interrupted=len(dead))
    if dead and others:
        recovery.deferred = True
    elif dead:
        with writing.section(svc):  # no writer on any machine has rows in flight meanwhile
            recovery.deleted = sweep(svc)
        for marker in dead:
            marker.unlink(missing_ok=True)
    if recovery.interrupted:
        log.warning("recovery: %s", recovery)
    mine = folder / f"{me}.{uuid.uuid4().hex[:8]}"
    mine.touch()
    return mine, recovery


def end(marker: Path) -> None:
    marker.unlink(missing_ok=True)


def sweep(svc: Services) -> dict[str, int]:
    """Delete the vector rows whose graph node is absent and the entity-name rows naming no stored entity;
    the rows deleted, by collection."""
    graph, vectors = svc.graph, svc.vectors
    deleted: dict[str, int] = {}
    for collection, label in NODE_COLLECTIONS.items():
        stored = {row[0] for row in graph.node_tuples(label, [])}
        orphans = [i for i in vectors.ids(collection) if i not in stored]
        if orphans:
            vectors.delete(collection, orphans)
        deleted[collection] = len(orphans)
    entities = {row[0] for row in graph.node_tuples(NodeLabel.ENTITY, [])}
    rows = vectors.get_metadata(ENTITY_COLLECTION, vectors.ids(ENTITY_COLLECTION))
    orphans = [key for key, meta in rows.items() if str((meta or {}).get("entity_id")) not in entities]
    if orphans:
        vectors.delete(ENTITY_COLLECTION, orphans)
    deleted[ENTITY_COLLECTION] = len(orphans)
    return deleted

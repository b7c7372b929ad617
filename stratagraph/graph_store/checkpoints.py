"""Conversation memory: a LangGraph checkpointer and the threads it holds. It lives in ``graph_store/``
because only this package opens databases.

* By default LangGraph's SQLite checkpointer in the store directory (``<home>/checkpoints.sqlite``): one file
  in WAL mode serves many threads at once (LangGraph serialises each thread's checkpoints; SQLite's WAL lets
  readers of one thread proceed while another writes) and several processes (a writer waits up to
  ``BUSY_TIMEOUT`` seconds for another's lock).
* With ``STRATAGRAPH_CHECKPOINTER=postgresql://...``, LangGraph's Postgres checkpointer
  (:mod:`stratagraph.graph_store.postgres_checkpoints`), for deployments with several workers.

Both keep LangGraph's ``checkpoints`` table, so the thread list is read the same way from either.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from stratagraph.config import Settings

__all__ = ["BUSY_TIMEOUT", "CHECKPOINT_TYPES", "Checkpoints", "SQLiteCheckpoints", "checkpoints_path"]

BUSY_TIMEOUT = 60.0
#: the types a conversation's state holds, which the checkpointer may read back (module, class)
CHECKPOINT_TYPES: tuple[tuple[str, str], ...] = (
    ("stratagraph.answers", "Answer"),
    ("stratagraph.answers", "Citation"),
    ("stratagraph.answers", "Computation"),
    ("stratagraph.answers", "Operand"),
    ("stratagraph.answers", "ToolCall"),
    ("stratagraph.answers", "TraceEntry"),
    ("stratagraph.llm", "LLMUsage"),
    ("stratagraph.agents.common", "NewTurn"),
    ("stratagraph.agents.common", "NewTurnUsage"),
    ("stratagraph.agents.rewrite", "Turn"),
    ("stratagraph.retrieval.base", "Evidence"),
    ("decimal", "Decimal"),
)
#: the thread list's query, the same on LangGraph's SQLite and Postgres schemas
THREAD_COUNTS = "SELECT thread_id, COUNT(*) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY thread_id"


def checkpoints_path(settings: Settings) -> Path:
    return Path(settings.home) / "checkpoints.sqlite"


def serializer() -> JsonPlusSerializer:
    """LangGraph's serializer, allowed to read back the types a conversation's state holds."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=list(CHECKPOINT_TYPES))


class Checkpoints(ABC):
    """A checkpointer (``saver``, what ``compile(checkpointer=...)`` takes) and its thread list."""

    saver: BaseCheckpointSaver

    @abstractmethod
    def _thread_counts(self) -> list[tuple[str, int]]:
        """``(thread_id, checkpoints)`` of every thread, sorted by id."""

    @abstractmethod
    def close(self) -> None: ...

    def threads(self) -> list[dict[str, Any]]:
        """Every thread: its id, its turns (the human messages it holds), its first message, when it was last
        updated, and how many checkpoints it has."""
        out = []
        for thread_id, count in self._thread_counts():
            latest = self.saver.get_tuple({"configurable": {"thread_id": thread_id}})
            messages = list((latest.checkpoint.get("channel_values") or {}).get("messages") or []) if latest else []
            human = [m for m in messages if getattr(m, "type", "") == "human"]
            out.append({
                "thread_id": thread_id,
                "turns": len(human),
                "first_message": str(human[0].content) if human else "",
                "updated": latest.checkpoint.get("ts", "") if latest else "",
                "checkpoints": int(count),
            })  # fmt: skip
        return out

    def delete(self, thread_id: str) -> bool:
        """Remove a thread's checkpoints; False when there was no such thread."""
        known = any(t == thread_id for t, _ in self._thread_counts())
        if known:
            self.saver.delete_thread(thread_id)
        return known


class SQLiteCheckpoints(Checkpoints):
    """The store's checkpointer: a ``SqliteSaver`` on one shared connection to ``<home>/checkpoints.sqlite``."""

    def __init__(self, path: str | Path) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        self.saver: SqliteSaver = SqliteSaver(self._conn, serde=serializer())
        self.saver.setup()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> SQLiteCheckpoints:
        return cls(checkpoints_path(settings))

    def _thread_counts(self) -> list[tuple[str, int]]:
        with self._lock:
            return [(str(t), int(n)) for t, n in self._conn.execute(THREAD_COUNTS).fetchall()]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


"""Conversation memory: LangGraph's SQLite checkpointer in the store directory (``<home>/checkpoints.sqlite``),
and the threads it holds. It lives in ``graph_store/`` because only this package opens database files.

One file in WAL mode serves many threads at once (LangGraph serialises each thread's checkpoints; SQLite's
WAL lets readers of one thread proceed while another writes) and several processes (a writer waits up to
``BUSY_TIMEOUT`` seconds for another's lock).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from stratagraph.config import Settings

__all__ = ["BUSY_TIMEOUT", "CHECKPOINT_TYPES", "Checkpoints", "checkpoints_path"]

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


def checkpoints_path(settings: Settings) -> Path:
    return Path(settings.home) / "checkpoints.sqlite"


class Checkpoints:
    """The store's checkpointer (a ``SqliteSaver`` on one shared connection) and its thread list."""

    def __init__(self, path: str | Path) -> None:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        serde = JsonPlusSerializer(allowed_msgpack_modules=list(CHECKPOINT_TYPES))
        self.saver: SqliteSaver = SqliteSaver(self._conn, serde=serde)
        self.saver.setup()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> Checkpoints:
        return cls(checkpoints_path(settings))

    def threads(self) -> list[dict[str, Any]]:
        """Every thread: its id, its turns (the human messages it holds), its first message, when it was last
        updated, and how many checkpoints it has."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT thread_id, COUNT(*) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY thread_id"
            ).fetchall()
        out = []
        for thread_id, count in rows:
            latest = self.saver.get_tuple({"configurable": {"thread_id": thread_id}})
            messages = list((latest.checkpoint.get("channel_values") or {}).get("messages") or []) if latest else []
            human = [m for m in messages if getattr(m, "type", "") == "human"]
            out.append({
                "thread_id": thread_id,
                "turns": len(human),
                "first_message": str(human[0].content) if human else "",
                "updated": latest.checkpoint.get("ts", "") if latest else "",
                "checkpoints": count,
            })  # fmt: skip
        return out

    def delete(self, thread_id: str) -> bool:
        """Remove a thread's checkpoints; False when there was no such thread."""
        known = any(t["thread_id"] == thread_id for t in self.threads())
        if known:
            self.saver.delete_thread(thread_id)
        return known

    def close(self) -> None:
        with self._lock:
            self._conn.close()

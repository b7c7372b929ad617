"""The store's LLM database (``<home>/llm_cache.sqlite``): reply texts of the chat model, keyed by
:func:`stratagraph.llm.cache_key`, and the structured-output level each endpoint was found to accept.

It lives in ``graph_store/`` because only this package opens database files. One SQLite file in WAL mode:
readers never block the writer, and several processes may share the file (a writer waits up to
``busy_timeout`` seconds for another's lock). One connection per instance, used under a lock, so an
instance can be shared by threads. ``hits`` / ``misses`` count :meth:`LLMCache.get` results.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stratagraph.config import Settings

__all__ = ["LLMCache"]


class LLMCache:
    """Reply texts of a chat model on disk, and the output mode each (endpoint, model) accepts."""

    def __init__(self, path: str | Path, *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS llm_replies ("
            " key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL)"
        )
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS llm_endpoints ("
            " endpoint TEXT NOT NULL, model TEXT NOT NULL, mode TEXT NOT NULL, reason TEXT NOT NULL,"
            " updated REAL NOT NULL, PRIMARY KEY (endpoint, model))"
        )
        self.hits = 0
        self.misses = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMCache:
        """The cache at ``settings.llm_cache_path`` (the store's ``llm_cache.sqlite``)."""
        return cls(settings.llm_cache_path)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"LLMCache {self.path} is closed")
        return self._conn

    # ---------------------------------------------------------------- replies
    def get(self, key: str) -> str | None:
        """The reply stored under ``key``, or None; counts a hit or a miss."""
        with self._lock:
            row = self._connection().execute("SELECT reply FROM llm_replies WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            return str(row[0])

    def put(self, key: str, text: str) -> None:
        """Store ``text`` under ``key`` (replacing what was there)."""
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO llm_replies (key, reply, created) VALUES (?, ?, ?)", (key, text, time.time())
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM llm_replies").fetchone()[0])

    # ---------------------------------------------------------------- endpoint modes
    def output_mode(self, endpoint: str, model: str) -> str | None:
        """The structured-output mode last recorded for ``(endpoint, model)``, or None."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT mode FROM llm_endpoints WHERE endpoint = ? AND model = ?", (endpoint, model))
                .fetchone()
            )
        return None if row is None else str(row[0])

    def set_output_mode(self, endpoint: str, model: str, mode: str, reason: str = "") -> None:
        """Record that ``(endpoint, model)`` accepts ``mode`` (and why the better ones were given up)."""
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO llm_endpoints (endpoint, model, mode, reason, updated) VALUES (?, ?, ?, ?, ?)",
                (endpoint, model, mode, reason, time.time()),
            )

    # ---------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LLMCache({str(self.path)!r}, hits={self.hits}, misses={self.misses})"

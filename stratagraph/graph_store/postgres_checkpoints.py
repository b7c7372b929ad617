"""Conversation memory in PostgreSQL (``STRATAGRAPH_CHECKPOINTER=postgresql://user:pass@host:5432/db``):
LangGraph's ``PostgresSaver`` (``langgraph-checkpoint-postgres``, the ``postgres`` extra) on a psycopg
connection pool, for a deployment whose workers (several ``stratagraph serve`` or LangGraph server processes
behind a load balancer) share threads.

The tables are created on first use (``PostgresSaver.setup``) under an advisory lock (polled, never waited
on), so workers starting together do not race on the migrations. Connections are checked before use, so a process outlives a restart
of the server; a server that cannot be reached is one :class:`~stratagraph.graph_store.base.StoreUnavailable`
naming it (password hidden).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from stratagraph.graph_store.base import StoreUnavailable
from stratagraph.graph_store.checkpoints import THREAD_COUNTS, Checkpoints, serializer

__all__ = ["CONNECT_TIMEOUT", "PostgresCheckpoints", "redact"]

CONNECT_TIMEOUT = 10.0
#: pg_advisory_lock key held while the checkpoint tables are created or migrated
_SETUP_LOCK = 0x5354_4741  # "STGA"


def redact(url: str) -> str:
    """The URL with its password replaced by ``***`` (for messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


class PostgresCheckpoints(Checkpoints):
    """``PostgresSaver`` on a ``ConnectionPool`` (autocommit, dict rows, no prepared statements: what the
    saver needs) and the thread list."""

    def __init__(self, url: str, *, max_size: int = 8) -> None:
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - the postgres extra is in the test extra
            raise StoreUnavailable(
                f"STRATAGRAPH_CHECKPOINTER is a PostgreSQL URL but {exc.name} is not installed: "
                "pip install 'stratagraph[postgres]'"
            ) from exc
        self.url = url
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
                                  "connect_timeout": int(CONNECT_TIMEOUT)}  # fmt: skip
        self.pool = ConnectionPool(
            url, min_size=1, max_size=max_size, kwargs=kwargs, check=ConnectionPool.check_connection, open=False,
            name="stratagraph-checkpoints",
        )  # fmt: skip
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT)
            self.saver = PostgresSaver(self.pool, serde=serializer())
            with self.pool.connection() as conn:
                _lock(conn)
                try:
                    self.saver.setup()
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))
        except Exception as exc:
            self.pool.close()
            raise StoreUnavailable(f"cannot use the PostgreSQL checkpointer at {redact(url)}: {_one_line(exc)}") from exc

    def _thread_counts(self) -> list[tuple[str, int]]:
        with self.pool.connection() as conn:
            rows = conn.execute(THREAD_COUNTS).fetchall()
        return [(str(r["thread_id"]), int(r["count"])) for r in rows]

    def close(self) -> None:
        self.pool.close()


def _lock(conn: Any, timeout: float = 120.0) -> None:
    """Take the setup lock, polling: a session blocked in ``pg_advisory_lock`` holds a snapshot, which the
    saver's ``CREATE INDEX CONCURRENTLY`` in the session holding the lock would wait for (a deadlock)."""
    deadline = time.monotonic() + timeout
    while not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (_SETUP_LOCK,)).fetchone()["ok"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"another worker held the checkpoint tables' setup lock for {timeout:.0f} s")
        time.sleep(0.05)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())

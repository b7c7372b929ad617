"""The optional chat model: building it from settings, a disk cache of its replies, and one error for "the
endpoint cannot serve us".

* :func:`get_chat_model`: ``langchain_openai.ChatOpenAI`` for any OpenAI-compatible endpoint (OpenAI, vLLM,
  llama.cpp, Ollama, LM Studio), temperature 0, or None when no chat model is configured.
* One retry layer only: the ``openai`` client's own (``max_retries=settings.request_retries``): it retries
  connection errors, timeouts, 408/409/429 and 5xx with exponential backoff and honours ``Retry-After``.
  Nothing here wraps it in a second retry loop, so a failing request is sent ``request_retries + 1`` times.
* :class:`LLMCache`: reply texts in a SQLite file (WAL, usable from several threads and processes), keyed by
  :func:`cache_key` over the model, the messages, the output schema and the temperature.
* :class:`LLMUnavailable`: what :func:`unavailable_error` turns endpoint failures into (unreachable, timed out,
  rate-limited or failing after the client's retries, key refused, unknown model), with a one-line message
  naming the endpoint, so a pipeline can stop cleanly instead of producing an empty graph.

``langchain_openai`` and ``openai`` are imported only when used (``langchain_openai`` takes about a second).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from stratagraph.config import Settings

__all__ = [
    "LLMCache",
    "LLMUnavailable",
    "cache_key",
    "chat_endpoint",
    "endpoint_errors",
    "get_chat_model",
    "is_context_overflow",
    "model_name",
    "unavailable_error",
]

_DEFAULT_OPENAI_URL = "https://api.openai.com/v1"


class LLMUnavailable(RuntimeError):
    """The chat endpoint cannot be used: unreachable, timing out, refusing the key, not knowing the model, or
    still failing (429/5xx) after the client's retries. The message is one line and names the endpoint."""


# --------------------------------------------------------------------------------------------- model
def get_chat_model(settings: Settings) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for ``settings.llm_model`` at ``settings.openai_base_url``, or None.

    None when no model is named, or when neither a base URL nor an API key is set (there is nowhere to send
    requests). A local server needs no key: ``"not-needed"`` is sent then. Retries and timeout come from
    ``request_retries``/``request_timeout`` and are the client's only retry layer; temperature is 0.
    """
    if not settings.llm_model or not (settings.openai_base_url or settings.openai_api_key):
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key or "not-needed",
        max_retries=settings.request_retries,
        timeout=settings.request_timeout,
        temperature=0,
    )


def chat_endpoint(chat_model: Any) -> str:
    """Where ``chat_model`` sends requests: its base URL for OpenAI chat models, else its class name."""
    openai_mod = sys.modules.get("langchain_openai")
    if openai_mod is not None and isinstance(chat_model, openai_mod.ChatOpenAI):
        return str(chat_model.openai_api_base or _DEFAULT_OPENAI_URL).rstrip("/")
    base = getattr(chat_model, "base_url", None) or getattr(chat_model, "openai_api_base", None)
    return str(base).rstrip("/") if base else type(chat_model).__name__


def model_name(chat_model: Any) -> str:
    """The model name a chat model requests (``model_name`` or ``model``), else its class name."""
    name = getattr(chat_model, "model_name", None) or getattr(chat_model, "model", None)
    return str(name) if name else type(chat_model).__name__


# --------------------------------------------------------------------------------------------- errors
def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost cause of ``exc`` ("Connection refused" hides under the client's "Connection error.")."""
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def is_context_overflow(exc: BaseException) -> bool:
    """True when ``exc`` says the prompt is longer than the model's context (a problem of one input)."""
    from langchain_core.exceptions import ContextOverflowError

    return isinstance(exc, ContextOverflowError)


def unavailable_error(exc: BaseException, chat_model: Any) -> LLMUnavailable | None:
    """``exc`` as an :class:`LLMUnavailable` when it means the endpoint cannot serve requests, else None.

    Translated: connection errors and timeouts; HTTP 401/403 (key refused), 404 (wrong URL or model), 408,
    409, 429 and 5xx (still failing after the client's retries), and other 4xx (the server rejects requests
    of this shape). Not translated: a context overflow (one input is too long, the caller decides) and
    anything that is not an ``openai`` API error.
    """
    import openai

    if not isinstance(exc, openai.APIError) or is_context_overflow(exc):
        return None
    endpoint = chat_endpoint(chat_model)
    retries = getattr(chat_model, "max_retries", None)
    after = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
    where = f"chat endpoint {endpoint} (model {model_name(chat_model)!r})"
    if isinstance(exc, openai.APITimeoutError):
        return LLMUnavailable(f"{where} timed out{after}")
    if isinstance(exc, openai.APIConnectionError):
        return LLMUnavailable(f"{where} is unreachable{after}: {_one_line(str(_root_cause(exc)) or repr(exc))}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = _one_line(exc.message)
        if status in (401, 403):
            return LLMUnavailable(f"{where} refused the API key (HTTP {status}): {detail}")
        if status == 404:
            return LLMUnavailable(f"{where} answered HTTP 404 (wrong base URL or model name?): {detail}")
        if status in (408, 409, 429) or status >= 500:
            return LLMUnavailable(f"{where} kept failing with HTTP {status}{after}: {detail}")
        return LLMUnavailable(f"{where} rejected the request (HTTP {status}): {detail}")
    return LLMUnavailable(f"{where} failed: {_one_line(str(exc))}")


@contextmanager
def endpoint_errors(chat_model: Any) -> Iterator[None]:
    """Re-raise endpoint failures inside the block as :class:`LLMUnavailable` (see :func:`unavailable_error`)."""
    try:
        yield
    except Exception as exc:
        translated = unavailable_error(exc, chat_model)
        if translated is None:
            raise
        raise translated from exc


# --------------------------------------------------------------------------------------------- cache
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "developer": "developer"}


def _message_dict(message: BaseMessage | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(message, Mapping):
        return {"role": str(message["role"]), "content": message["content"]}
    return {"role": _ROLES.get(message.type, message.type), "content": message.content}


def cache_key(
    *,
    model: str,
    messages: Sequence[BaseMessage | Mapping[str, Any]],
    schema_name: str | None = None,
    schema: Mapping[str, Any] | None = None,
    temperature: float | None = None,
) -> str:
    """The hex sha256 of the canonical JSON (sorted keys, no whitespace) of the model, the messages (role and
    content, in order), the output schema's name and JSON schema, and the temperature."""
    payload = {
        "model": model,
        "messages": [_message_dict(m) for m in messages],
        "schema": {"name": schema_name, "json_schema": schema},
        "temperature": temperature,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class LLMCache:
    """Reply texts of a chat model on disk, keyed by :func:`cache_key`.

    One SQLite file in WAL mode: readers never block the writer, and several processes may share the file
    (a writer waits up to ``busy_timeout`` seconds for another's lock). One connection per instance, used
    under a lock, so an instance can be shared by threads. ``hits``/``misses`` count :meth:`get` results.
    """

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

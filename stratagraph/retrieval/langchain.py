"""The strategies as LangChain retrievers: ``StrataGraph.retriever(name, k=..., filters=...)``.

A :class:`GraphRetriever` returns ``Document``s whose ``id`` is the chunk id and whose metadata carries the
provenance (doc id, source, title, section path, rank, score); sync and async (the async path runs the
same retrieval in a worker thread, so an event loop is never blocked by the embedder or the stores).
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from stratagraph.retrieval import STRATEGIES, RetrievalContext, RetrievalError, RetrievalResult, retrieve


class GraphRetriever(BaseRetriever):
    """One named strategy over one store."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    strategy: str = "default"
    k: int = Field(default=5, ge=1)
    filters: dict[str, Any] = Field(default_factory=dict)
    _ctx: RetrievalContext = PrivateAttr()

    def __init__(self, ctx: RetrievalContext, **data: Any) -> None:
        super().__init__(**data)
        self._ctx = ctx

    @field_validator("strategy")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in STRATEGIES:
            raise RetrievalError(f"unknown retrieval strategy {v!r}; choose from {', '.join(STRATEGIES)}")
        return v

    def result(self, query: str) -> RetrievalResult:
        """The full result (evidence plus the strategy's context), not only the documents."""
        return retrieve(self._ctx, self.strategy, query, k=self.k, filters=self.filters or None)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self.result(query).documents()

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = await asyncio.to_thread(self.result, query)
        return result.documents()

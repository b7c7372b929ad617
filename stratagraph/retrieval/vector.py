"""``vector``: the dense baseline. Chunks ranked by the cosine of their embedding and the query's
(HybridRAG §4.4's VectorRAG side; the dense list every graph strategy fuses with)."""

from __future__ import annotations

from stratagraph.retrieval.base import Filters, RetrievalContext, RetrievalResult


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    hits = ctx.chunk_scores(query, k, filters)
    return RetrievalResult(strategy="vector", query=query, k=k, evidence=ctx.evidence(hits, k, filters))

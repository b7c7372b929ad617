"""``rrf``: reciprocal rank fusion of the dense and BM25 rankings (k = 60), the fused baseline every
graph strategy is measured against."""

from __future__ import annotations

from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, rrf
from stratagraph.retrieval.lexical import bm25

#: how deep each list is read before fusing (a passage far down one list can still win on the other)
DEPTH = 50


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    depth = max(DEPTH, k)
    dense = [h.id for h in ctx.chunk_scores(query, depth, filters)]
    sparse = [h.id for h in bm25(ctx, query, depth, filters)]
    fused = rrf([dense, sparse], k=RRF_K)
    return RetrievalResult(
        strategy="rrf", query=query, k=k, evidence=ctx.evidence(fused, k, filters), context={"rrf_k": RRF_K}
    )

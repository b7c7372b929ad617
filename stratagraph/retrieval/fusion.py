"""``rrf``: reciprocal rank fusion of the dense and BM25 rankings (k = 60), the fused baseline every
graph strategy is measured against."""

from __future__ import annotations

from pydantic import BaseModel, Field

from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, rrf
from stratagraph.retrieval.lexical import bm25

class FusionParams(BaseModel):
    depth: int = Field(50, description="ours: how deep each list is read before fusing (a far passage can still win)")
    rrf_k: int = Field(RRF_K, description="paper (Cormack et al.; BiG-RAG §4.2.3): the RRF constant")


DEFAULTS = FusionParams()


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    depth = max(DEFAULTS.depth, k)
    dense = [h.id for h in ctx.chunk_scores(query, depth, filters)]
    sparse = [h.id for h in bm25(ctx, query, depth, filters)]
    fused = rrf([dense, sparse], k=DEFAULTS.rrf_k)
    return RetrievalResult(
        strategy="rrf", query=query, k=k, evidence=ctx.evidence(fused, k, filters), context={"rrf_k": RRF_K}
    )

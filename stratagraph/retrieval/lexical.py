"""``lexical``: the sparse baseline. Okapi BM25 over chunk text (Robertson & Zaragoza), from the lexical
index every backend shares (:mod:`stratagraph.retrieval.bm25`)."""

from __future__ import annotations

import numpy as np

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import Filters, RetrievalContext, RetrievalResult


def bm25(ctx: RetrievalContext, query: str, k: int, filters: Filters | None = None) -> list[ScoredId]:
    """BM25 chunk ranking, restricted to the documents that pass ``filters``."""
    allowed = ctx.allowed_docs(filters)
    if k <= 0 or (allowed is not None and not allowed):
        return []
    index = ctx.bm25()
    mask = None
    if allowed is not None:
        graph = ctx.index()
        mask = np.fromiter((graph.chunk_doc_of(c) in allowed for c in index.chunk_ids), dtype=bool, count=len(index.chunk_ids))
    return index.search(query, k, mask)


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    hits = bm25(ctx, query, k, filters)
    return RetrievalResult(strategy="lexical", query=query, k=k, evidence=ctx.evidence(hits, k, filters))

"""``lexical``: the sparse baseline. BM25 over chunk text through the graph store's full-text index
(SQLite FTS5; Robertson & Zaragoza's Okapi BM25 with the store's k1/b)."""

from __future__ import annotations

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import Filters, RetrievalContext, RetrievalResult


def bm25(ctx: RetrievalContext, query: str, k: int, filters: Filters | None = None) -> list[ScoredId]:
    """BM25 chunk ranking, restricted to the documents that pass ``filters``."""
    allowed = ctx.allowed_docs(filters)
    if k <= 0 or (allowed is not None and not allowed):
        return []
    return ctx.graph.bm25_search(query, k=k, doc_ids=sorted(allowed) if allowed is not None else None)


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    hits = bm25(ctx, query, k, filters)
    return RetrievalResult(strategy="lexical", query=query, k=k, evidence=ctx.evidence(hits, k, filters))

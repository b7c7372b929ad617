"""``default``: the retriever to use when you don't know better (issue 9; DESIGN.md names table).

A question-adaptive choice, without an LLM, made by :func:`stratagraph.retrieval.ppr.fusion_weights`: a
question anchored to a page (it quotes a document or section title, or names an entity that has a page of
its own) is ranked by ``ppr``'s graph fusion (personalised PageRank, the question's own pages, the pages one
hop out and, for a chain that Alg. 5 decomposes into more steps, further out, BiG-RAG's fact chains, BM25);
any other question by dense + BM25 as ``rrf`` does, the graph lists weighted by how specific to few
documents the entities it names are. On the three Wikipedia sets this ranks like ``ppr``; on documents like
a user's (reports, quarterly letters, cross-citing papers) like ``rrf`` or better. BENCHMARKS.md gives the
evidence, set by set and per kind of question.
"""

from __future__ import annotations

from stratagraph.retrieval import ppr
from stratagraph.retrieval.base import Filters, RetrievalContext, RetrievalResult


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    result = ppr.retrieve(ctx, query, k=k, filters=filters)
    regime = "graph" if result.context.get("anchored") else "text"
    return result.model_copy(update={"strategy": "default", "context": {**result.context, "regime": regime}})

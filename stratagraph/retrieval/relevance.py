"""How relevant each chunk is to a question, on its own: its dense and BM25 scores standardised against the
store and added (issue 20).

The fused rankings of ``ppr`` say which *documents* hold a question's answer (a page it names, the pages that
page links to); which *chunk* of such a document holds it (a table row, a results paragraph) is a matter of
the chunk's text against the question. Reciprocal rank fusion of the dense and BM25 rankings reads only
ranks, so a chunk that BM25 puts first by a wide margin (it alone holds the question's rare words: a dataset's
name, "catchment", "lift station") counts no more than one at the top of a close race; on the document sets
such chunks were lexical's top 3 and rrf's 6-14 (BENCHMARKS.md). Here each score is a standard score over the
store's chunks (``(s - mean) / std``: BM25 over every chunk, 0 where no query word occurs; the cosine against a
sample of the stored chunk vectors), and a chunk's relevance is

    dense_weight * z(cosine) + z(BM25)

(CombSUM of standardised scores; Fox & Shaw 1994, Montague & Aslam 2001), so a wide margin in either counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import Filters, RetrievalContext, vector_filters

__all__ = ["Relevance", "relevance"]

#: chunk vectors read to measure the spread of a question's cosines (calibration.py reads as many)
SAMPLE = 2000


@dataclass
class Relevance:
    """The relevance of chunks to one text: ``scores`` of every chunk it was asked about, best first by
    :meth:`ranking`."""

    text: str
    scores: dict[str, float]

    def ranking(self, limit: int | None = None, allowed: set[str] | None = None) -> list[str]:
        """The scored chunks best first (score desc, id asc), only those of ``allowed`` documents if given."""
        ids = sorted(self.scores, key=lambda c: (-round(self.scores[c], 12), c))
        if allowed is not None:
            ids = [c for c in ids if c.split("#", 1)[0] in allowed]
        return ids[:limit] if limit is not None else ids

    def order(self, chunks: Iterable[str]) -> list[str]:
        """``chunks`` best first (an unscored chunk last, in the order given)."""
        chunks = list(chunks)
        floor = min(self.scores.values(), default=0.0) - 1.0
        at = {c: i for i, c in enumerate(chunks)}
        return sorted(chunks, key=lambda c: (-round(self.scores.get(c, floor), 12), at[c]))


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2 or not len(matrix):
        return np.zeros((0, 0), dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def _chunk_vectors(ctx: RetrievalContext, ids: Iterable[str]) -> dict[str, np.ndarray]:
    """Unit vectors of these chunks, read once per store generation and kept."""
    memo: dict[str, np.ndarray | None] = ctx.cached("relevance:chunk_vectors", dict)
    todo = sorted({c for c in ids if c not in memo})
    if todo:
        found = ctx.vectors.get_embeddings("chunks", todo)
        for cid in todo:
            vec = found.get(cid)
            if vec is None:
                memo[cid] = None
                continue
            v = np.asarray(vec, dtype=np.float32).reshape(-1)
            norm = float(np.linalg.norm(v))
            memo[cid] = v / norm if norm > 0 else None
    return {c: v for c in ids if (v := memo.get(c)) is not None}


def _background(ctx: RetrievalContext) -> np.ndarray:
    """Up to :data:`SAMPLE` stored chunk vectors, unit length (once per store generation)."""
    return ctx.cached("relevance:sample", lambda: _unit(ctx.vectors.sample_embeddings("chunks", SAMPLE)))


def _bm25_positions(ctx: RetrievalContext) -> dict[str, int]:
    return ctx.cached("relevance:bm25_pos", lambda: {c: i for i, c in enumerate(ctx.bm25().chunk_ids)})


def _standard(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    std = float(values.std()) if len(values) else 0.0
    return (x - (float(values.mean()) if len(values) else 0.0)) / (std if std > 1e-12 else 1.0)


def relevance(
    ctx: RetrievalContext,
    texts: Sequence[str],
    candidates: Iterable[str] = (),
    depth: int = 50,
    dense_weight: float = 0.5,
    filters: Filters | None = None,
    dense: Sequence[ScoredId] | None = None,
) -> list[Relevance]:
    """The relevance (module docstring) of chunks to each of ``texts``: the ``candidates`` given and each
    text's top ``depth`` chunks by cosine and by BM25. ``dense``: the first text's dense ranking when the
    caller has it already (its scores are the cosines; one vector-store query fewer)."""
    if not texts:
        return []
    vectors = ctx.query_vectors(list(texts))
    todo = [i for i in range(len(texts)) if not (i == 0 and dense is not None)]
    found = ctx.vectors.query_many("chunks", vectors[todo], k=depth, filters=vector_filters(filters)) if todo and depth > 0 else []
    hits: list[Sequence[ScoredId]] = [[] for _ in texts]
    for i, h in zip(todo, found, strict=False):
        hits[i] = h
    if dense is not None:
        hits[0] = dense[:depth]
    index = ctx.bm25()
    positions = _bm25_positions(ctx)
    sample = _background(ctx)
    candidates = list(dict.fromkeys(candidates))
    out = []
    for text, qv, dense_hits in zip(texts, vectors, hits, strict=True):
        q = np.asarray(qv, dtype=np.float32).reshape(-1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        bm25, _ = index.scores(text)
        top = np.argsort(-bm25, kind="stable")[:depth] if depth > 0 and len(bm25) else np.zeros(0, dtype=np.int64)
        pool = list(dict.fromkeys([*candidates, *(h.id for h in dense_hits), *(index.chunk_ids[i] for i in top if bm25[i] > 0)]))
        pool = [c for c in pool if c in positions]
        cosine = {h.id: float(h.score) for h in dense_hits}
        missing = [c for c in pool if c not in cosine]
        if missing:
            for cid, v in _chunk_vectors(ctx, missing).items():
                cosine[cid] = float(v @ q)
        pool = [c for c in pool if c in cosine]
        background = sample @ q if sample.size and sample.shape[1] == len(q) else np.array([cosine[c] for c in pool])
        z_dense = _standard(background, np.array([cosine[c] for c in pool], dtype=np.float64))
        z_bm25 = _standard(bm25, np.array([bm25[positions[c]] for c in pool], dtype=np.float64))
        scores = dense_weight * z_dense + z_bm25
        out.append(Relevance(text=text, scores=dict(zip(pool, scores.tolist(), strict=True))))
    return out

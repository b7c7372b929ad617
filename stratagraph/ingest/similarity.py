"""``SIMILAR`` chunk -> chunk edges across documents (CG-RAG §4.2.2, inter-document edges).

Each chunk links to the ``k`` chunks of *other* documents with the highest relevance

    s(c_i, c_j) = (cos(sparse_i, sparse_j) + cos(dense_i, dense_j)) / 2

where ``dense`` is the chunk's stored embedding and ``sparse`` a log-scaled term-frequency vector of its
content words. Both parts depend only on the two chunks (no corpus statistics), so the score is symmetric
and stable: the edges are a function of the set of chunks stored, whatever the order they came in.

That is what makes incremental maintenance exact (:func:`update_top_k`): when chunks arrive, each new
chunk is scored against all chunks; an old chunk's new top-k can only gain new chunks, and the scores it
needs are the same new-by-all products (symmetry). When chunks leave, only the chunks that pointed at
them are scored again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

_WORD = re.compile(r"[^\W_]{2,}", re.UNICODE)
# a small closed list: function words carry no topic
_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves""".split()
)


def content_terms(text: str) -> dict[str, float]:
    """Log-scaled term frequencies of a text's content words (lower-cased, function words dropped)."""
    counts: dict[str, int] = {}
    for word in _WORD.findall(text.casefold()):
        if word not in _STOP:
            counts[word] = counts.get(word, 0) + 1
    return {w: 1.0 + math.log(n) for w, n in counts.items()}


def sparse_matrix(texts: Sequence[str], vocabulary: dict[str, int] | None = None) -> csr_matrix:
    """L2-normalised rows of :func:`content_terms`; ``vocabulary`` is extended in place when given, so
    several calls can share one column space."""
    vocab = vocabulary if vocabulary is not None else {}
    indptr, indices, data = [0], [], []
    for text in texts:
        terms = content_terms(text)
        norm = math.sqrt(sum(v * v for v in terms.values())) or 1.0
        for word in sorted(terms):
            col = vocab.setdefault(word, len(vocab))
            indices.append(col)
            data.append(terms[word] / norm)
        indptr.append(len(indices))
    return csr_matrix(
        (np.asarray(data, dtype=np.float32), np.asarray(indices, dtype=np.int64), np.asarray(indptr)),
        shape=(len(texts), max(len(vocab), 1)),
    )


@dataclass
class ChunkTable:
    """Every chunk the scores are computed over: ids, owning documents, dense rows, sparse rows."""

    ids: list[str]
    doc_ids: list[str]
    dense: np.ndarray  # (n, d) unit rows
    sparse: csr_matrix  # (n, V) unit rows

    @classmethod
    def build(cls, ids: Sequence[str], doc_ids: Sequence[str], texts: Sequence[str], dense: np.ndarray) -> ChunkTable:
        return cls(list(ids), list(doc_ids), np.asarray(dense, dtype=np.float32), sparse_matrix(texts))

    def scores(self, rows: Sequence[int]) -> np.ndarray:
        """``(len(rows), n)`` relevance of the given chunks to every chunk; same-document pairs are -inf."""
        if not rows:
            return np.zeros((0, len(self.ids)), dtype=np.float32)
        rows = list(rows)
        dense = self.dense[rows] @ self.dense.T
        sparse = (self.sparse[rows] @ self.sparse.T).toarray()
        out = ((dense + sparse) / 2.0).astype(np.float32)
        docs = np.asarray(self.doc_ids)
        out[docs[rows][:, None] == docs[None, :]] = -np.inf
        return out


def top_k(scores: np.ndarray, ids: Sequence[str], k: int, min_score: float) -> list[tuple[str, float]]:
    """The best ``k`` (id, score) of one row at or above ``min_score``; ties by id."""
    if k <= 0:
        return []
    cand = np.flatnonzero(np.round(scores, 5) >= min_score)
    if cand.size == 0:
        return []
    if cand.size > 4 * k:
        part = cand[np.argpartition(-scores[cand], 4 * k)[: 4 * k]]
        cutoff = scores[part].min()
        cand = cand[scores[cand] >= cutoff]  # keep every tie at the edge
    pairs = sorted(((_round(scores[i]), ids[i]) for i in cand), key=lambda p: (-p[0], p[1]))
    return [(i, s) for s, i in pairs[:k]]


def update_top_k(
    table: ChunkTable,
    current: Mapping[str, list[tuple[str, float]]],
    recompute: set[str],
    new: set[str],
    k: int,
    min_score: float,
    block: int = 512,
) -> dict[str, list[tuple[str, float]]]:
    """The top-k lists that change. ``current`` holds every stored list (chunk -> [(target, score)]);
    ``recompute`` the chunks scored against everything (new chunks and those that lost a target); ``new``
    the chunks that arrived, whose scores may enter any other list."""
    index = {c: i for i, c in enumerate(table.ids)}
    new_rows = sorted(index[c] for c in new if c in index)
    full_rows = sorted(index[c] for c in recompute | new if c in index)
    changed: dict[str, list[tuple[str, float]]] = {}
    for start in range(0, len(full_rows), block):
        rows = full_rows[start : start + block]
        for r, row in zip(rows, table.scores(rows), strict=True):
            changed[table.ids[r]] = top_k(row, table.ids, k, min_score)
    if new_rows:
        new_ids = [table.ids[r] for r in new_rows]
        working: dict[str, list[tuple[str, float]]] = {}
        old_cols = [j for j, cid in enumerate(table.ids) if cid not in changed and cid not in new]
        for start in range(0, len(new_rows), block):  # the new chunks' scores as columns, by symmetry
            rows = new_rows[start : start + block]
            cols = table.scores(rows)
            for j in old_cols:
                column = cols[:, j]
                ok = np.flatnonzero(column >= min_score)
                if ok.size == 0:
                    continue
                cid = table.ids[j]
                mine = working.get(cid, current.get(cid, []))
                floor = mine[-1][1] if len(mine) >= k else min_score
                gains = {new_ids[start + i]: _round(column[i]) for i in ok if _round(column[i]) >= floor}
                if gains:
                    merged = dict(mine) | gains
                    working[cid] = sorted(merged.items(), key=lambda p: (-p[1], p[0]))[:k]
        for cid, pairs in working.items():
            if pairs != list(current.get(cid, [])):
                changed[cid] = pairs
    return changed


def _round(x: float) -> float:
    """Scores are rounded so that the same pair scores the same whichever block computed it."""
    return round(float(x), 5)

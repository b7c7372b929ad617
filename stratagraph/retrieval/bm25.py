"""The lexical index: Okapi BM25 over chunk text, the same implementation on every graph backend.

Built once per graph generation from one light read (``node_tuples(Chunk, ["text", "section"])``), so the
embedded store and a server backend rank identically. It reproduces what the embedded store used to ask of
SQLite FTS5 (``porter unicode61 remove_diacritics 2``, ``bm25(chunk_fts, 1.0, 0.3)``), formula for formula:

* tokens: maximal runs of letters and digits, lower-cased, diacritics removed from Latin letters, stemmed by
  Porter's algorithm as FTS5's ``porter`` tokenizer does it (:mod:`stratagraph.retrieval.porter`);
* two fields per chunk, its text (weight 1.0) and its section title (weight 0.3); a term's frequency in a
  chunk is ``f = 1.0 * tf_text + 0.3 * tf_section``, the chunk's length ``D`` counts the tokens of both;
* ``idf(t) = ln((N - n_t + 0.5) / (n_t + 0.5))`` (1e-6 where that is not positive), ``N`` chunks in the
  store, ``n_t`` of them holding ``t``; ``score = sum_t idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * D /
  avgdl))`` with ``k1 = 1.2``, ``b = 0.75`` (Robertson & Zaragoza; FTS5's constants);
* the query: its distinct words that are not stop words (at most 64), each a term (two words with one stem
  count twice, as two FTS5 phrases did); a chunk matches when it holds any of them. Statistics are those of
  the whole store even when a filter restricts which chunks may be returned.

Ranking: score descending, then chunk id.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.sparse import csc_matrix

from stratagraph.graph_store.base import GraphStore, ScoredId
from stratagraph.retrieval.porter import stem
from stratagraph.schema import NodeLabel

__all__ = ["BM25Index", "query_terms", "tokenize"]

K1 = 1.2  # Robertson & Zaragoza; SQLite FTS5's bm25()
B = 0.75
FIELD_WEIGHTS = (1.0, 0.3)  # chunk text, section title
MAX_QUERY_TERMS = 64
IDF_FLOOR = 1e-6

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves""".split()
)
_WORD = re.compile(r"[^\W_]+")


def _fold(word: str) -> str:
    """Lower case (final sigma as sigma), diacritics removed from Latin letters only (FTS5's unicode61
    ``remove_diacritics 2`` leaves Greek and Cyrillic marks alone)."""
    word = word.lower()
    if word.isascii():
        return word
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", word.replace("ς", "σ")):
        if unicodedata.combining(ch) and out and unicodedata.name(out[-1], "").startswith("LATIN"):
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


@lru_cache(maxsize=200_000)
def _term(word: str) -> str:
    """One word of the text as an index term: folded, then stemmed (:func:`stratagraph.retrieval.porter.stem`)."""
    return stem(_fold(word))


def tokenize(text: str) -> list[str]:
    """The index terms of ``text``, in order."""
    return [_term(w) for w in _WORD.findall(text)] if text else []


def query_terms(text: str) -> list[str]:
    """The terms a question searches for: its distinct non-stop words (at most 64), one term each."""
    words: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS and word not in words:
            words.append(word)
            if len(words) == MAX_QUERY_TERMS:
                break
    return [_term(w) for w in words]


@dataclass(frozen=True)
class BM25Index:
    """Term frequencies of every chunk (two weighted fields), column-wise for fast term lookups."""

    chunk_ids: list[str]  # sorted
    vocabulary: dict[str, int]
    weighted_tf: csc_matrix  # (chunks, terms): 1.0 * tf_text + 0.3 * tf_section
    document_frequency: np.ndarray  # (terms,) chunks holding the term in either field
    norm: np.ndarray  # (chunks,) k1 * (1 - b + b * D / avgdl)

    @classmethod
    def build(cls, rows: Sequence[tuple[str, str | None, str | None]]) -> BM25Index:
        """From ``(chunk_id, text, section)`` rows (any order)."""
        rows = sorted(rows, key=lambda r: r[0])
        vocabulary: dict[str, int] = {}
        lengths = np.zeros(len(rows), dtype=np.float64)
        data: list[float] = []
        indices: list[int] = []
        indptr = [0]
        for i, (_, text, section) in enumerate(rows):
            counts: dict[int, float] = {}
            length = 0
            for weight, field in zip(FIELD_WEIGHTS, (text, section), strict=True):
                terms = tokenize(str(field)) if field else []
                length += len(terms)
                for t in terms:
                    col = vocabulary.setdefault(t, len(vocabulary))
                    counts[col] = counts.get(col, 0.0) + weight
            lengths[i] = length
            for col in sorted(counts):
                indices.append(col)
                data.append(counts[col])
            indptr.append(len(indices))
        from scipy.sparse import csr_matrix

        tf = csr_matrix(
            (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(rows), len(vocabulary)),
        ).tocsc()
        avgdl = float(lengths.sum()) / len(rows) if len(rows) else 0.0
        ratio = lengths / avgdl if avgdl > 0 else np.zeros_like(lengths)
        return cls(
            chunk_ids=[r[0] for r in rows],
            vocabulary=vocabulary,
            weighted_tf=tf,
            document_frequency=np.diff(tf.indptr),
            norm=K1 * (1.0 - B + B * ratio),
        )

    @classmethod
    def from_graph(cls, graph: GraphStore) -> BM25Index:
        return cls.build(graph.node_tuples(NodeLabel.CHUNK, ["text", "section"]))

    def idf(self, col: int) -> float:
        n = len(self.chunk_ids)
        hits = int(self.document_frequency[col])
        value = math.log((n - hits + 0.5) / (hits + 0.5))
        return value if value > 0 else IDF_FLOOR

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk's score for ``query`` (aligned with ``chunk_ids``; 0 where it holds no query term) and
        which chunks hold any query term."""
        scores = np.zeros(len(self.chunk_ids), dtype=np.float64)
        matched = np.zeros(len(self.chunk_ids), dtype=bool)
        tf = self.weighted_tf
        for term in query_terms(query):
            col = self.vocabulary.get(term)
            if col is None:
                continue
            rows = tf.indices[tf.indptr[col] : tf.indptr[col + 1]]
            f = tf.data[tf.indptr[col] : tf.indptr[col + 1]]
            scores[rows] += self.idf(col) * f * (K1 + 1.0) / (f + self.norm[rows])
            matched[rows] = True
        return scores, matched

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[ScoredId]:
        """The ``k`` best chunks for ``query`` (score desc, id asc); ``allowed``: a boolean mask over
        ``chunk_ids`` of the chunks that may be returned (None: all)."""
        if k <= 0 or not self.chunk_ids:
            return []
        scores, matched = self.scores(query)
        if allowed is not None:
            matched &= allowed
        cand = np.flatnonzero(matched)
        if not len(cand):
            return []
        order = sorted(zip((-scores[cand]).tolist(), cand.tolist(), strict=True), key=lambda p: (p[0], self.chunk_ids[p[1]]))
        return [ScoredId.model_construct(id=self.chunk_ids[i], score=-neg) for neg, i in order[:k]]

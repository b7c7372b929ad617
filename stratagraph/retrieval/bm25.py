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
from bisect import bisect_left
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.sparse import csc_matrix, csr_matrix, vstack

from stratagraph.graph_store.base import Changes, GraphStore, ScoredId
from stratagraph.retrieval.porter import stem
from stratagraph.schema import NodeLabel

__all__ = ["BM25Index", "query_terms", "tokenize"]

K1 = 1.2  # Robertson & Zaragoza; SQLite FTS5's bm25()
B = 0.75
FIELD_WEIGHTS = (1.0, 0.3)  # chunk text, section title
FIELDS = ("text", "section")  # the chunk props they come from
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
    lengths: np.ndarray | None = None  # (chunks,) D, the tokens of both fields
    generation: int | None = None  # the graph generation read (None: built from rows handed in)

    @staticmethod
    def _rows(
        rows: Sequence[tuple[str, str | None, str | None]], vocabulary: dict[str, int]
    ) -> tuple[csr_matrix, np.ndarray]:
        """Term frequencies (rows in the order given) over ``vocabulary`` (extended in place) and lengths."""
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
        tf = csr_matrix(
            (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(rows), len(vocabulary)),
        )
        return tf, lengths

    @classmethod
    def _of(
        cls, chunk_ids: list[str], vocabulary: dict[str, int], tf: csc_matrix, lengths: np.ndarray, generation: int | None
    ) -> BM25Index:
        avgdl = float(lengths.sum()) / len(lengths) if len(lengths) else 0.0
        ratio = lengths / avgdl if avgdl > 0 else np.zeros_like(lengths)
        return cls(
            chunk_ids=chunk_ids,
            vocabulary=vocabulary,
            weighted_tf=tf,
            document_frequency=np.diff(tf.indptr),
            norm=K1 * (1.0 - B + B * ratio),
            lengths=lengths,
            generation=generation,
        )

    @classmethod
    def build(cls, rows: Sequence[tuple[str, str | None, str | None]], generation: int | None = None) -> BM25Index:
        """From ``(chunk_id, text, section)`` rows (any order)."""
        rows = sorted(rows, key=lambda r: r[0])
        vocabulary: dict[str, int] = {}
        tf, lengths = cls._rows(rows, vocabulary)
        return cls._of([r[0] for r in rows], vocabulary, tf.tocsc(), lengths, generation)

    @classmethod
    def from_graph(cls, graph: GraphStore) -> BM25Index:
        generation = graph.generation()
        return cls.build(graph.node_tuples(NodeLabel.CHUNK, list(FIELDS)), generation)

    @classmethod
    def updated(cls, previous: BM25Index | None, graph: GraphStore) -> BM25Index:
        """The index of the store's chunks now: ``previous`` plus the change feed since its generation (only the
        chunks written since are tokenized; the document frequencies, lengths and average length follow),
        or read whole (:meth:`from_graph`) when there is no previous index, the feed cannot say, or more
        than a quarter of the chunks changed."""
        if previous is not None and previous.generation is not None and previous.lengths is not None:
            limit = max(len(previous.chunk_ids) // 4, 1)
            changes = graph.changes_since(previous.generation, {NodeLabel.CHUNK.value: list(FIELDS)}, limit=limit)
            if changes is not None:
                return previous.apply(changes)
        return cls.from_graph(graph)

    def apply(self, changes: Changes) -> BM25Index:
        """A new index: this one with the chunks of ``changes`` (this one is left as it is)."""
        from stratagraph.retrieval.index import _splice

        assert self.lengths is not None
        gone = set(changes.deleted_nodes)
        for rows in changes.nodes.values():
            gone.update(r[0] for r in rows)
        drop = []
        for c in sorted(gone):
            i = bisect_left(self.chunk_ids, c)
            if i < len(self.chunk_ids) and self.chunk_ids[i] == c:
                drop.append(i)
        added = sorted(changes.nodes.get(NodeLabel.CHUNK.value, ()), key=lambda r: r[0])
        if not drop and not added:
            return type(self)._of(self.chunk_ids, self.vocabulary, self.weighted_tf, self.lengths, changes.generation)
        vocabulary = dict(self.vocabulary)
        fresh, fresh_lengths = self._rows(added, vocabulary)
        ids = _splice(self.chunk_ids, drop, (), ())
        points = [bisect_left(ids, r[0]) for r in added]
        kept = len(ids)
        ids = _splice(ids, (), points, [r[0] for r in added])
        keep = np.ones(len(self.chunk_ids), dtype=bool)
        keep[drop] = False
        old = self.weighted_tf.tocsr()[np.flatnonzero(keep)]
        old.resize((kept, len(vocabulary)))
        fresh.resize((len(added), len(vocabulary)))
        order = _splice(np.arange(kept, dtype=np.int64), (), points, np.arange(kept, kept + len(added), dtype=np.int64))
        stacked = vstack([old, fresh], format="csr")[order]
        lengths = np.concatenate([self.lengths[keep], fresh_lengths])[order]
        return type(self)._of(ids, vocabulary, stacked.tocsc(), lengths, changes.generation)

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

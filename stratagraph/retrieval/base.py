"""What every retriever shares: the context it reads, the evidence it returns, and reciprocal rank fusion.

A retriever is a pure function ``retrieve(ctx, query, k=10, filters=None) -> RetrievalResult`` over the
stores in a :class:`RetrievalContext`; it never calls an LLM and never writes. Rankings break ties
deterministically (score descending, then id ascending), so the same store and query give the same list.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from stratagraph.config import Settings
from stratagraph.graph_store.base import ScoredId
from stratagraph.schema import Node, NodeLabel

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from spacy.language import Language

    from stratagraph.graph_store.base import GraphStore
    from stratagraph.graph_store.vectors import VectorStore
    from stratagraph.text.titles import TitleIndex
    from stratagraph.retrieval.bm25 import BM25Index
    from stratagraph.retrieval.index import GraphIndex

#: ``key=value`` metadata filters (document metadata, inherited by chunks), all of which must hold.
Filters = Mapping[str, Any]

RRF_K = 60  # Cormack et al.; the constant BiG-RAG §4.2 and HybridRAG fuse with


class RetrievalError(ValueError):
    """A retrieval request that cannot be served (unknown strategy, bad parameter, unknown id)."""


class Scored(BaseModel):
    """A ranked id with the ids that put it there (``via``: seed entities, facts, sections...)."""

    id: str
    score: float
    via: list[str] = Field(default_factory=list)


class Evidence(BaseModel):
    """One ranked chunk with its provenance: document, source, section path."""

    rank: int
    score: float
    chunk_id: str
    doc_id: str
    source: str
    title: str
    section: str  # the heading path, "Title > 2 Results > 2.1 Recall"
    section_id: str
    section_path: list[str] = Field(default_factory=list)
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    via: list[str] = Field(default_factory=list)
    context: str = ""  # the text carried over from the chunk before it in its section (BAG-RAG eq. 2): a table's caption

    def citation(self) -> str:
        """A short human citation: ``[rank] title § section (source)``."""
        where = self.section_path[-1] if self.section_path else ""
        sec = f" § {where}" if where and where != self.title else ""
        return f"[{self.rank}] {self.title}{sec} ({self.source})"

    def to_document(self) -> Document:
        from langchain_core.documents import Document

        meta = {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "source": self.source,
            "title": self.title,
            "section": self.section,
            "section_id": self.section_id,
            "section_path": list(self.section_path),
            "rank": self.rank,
            "score": self.score,
            "via": list(self.via),
            **{f"meta_{k}" if k in _RESERVED else k: v for k, v in self.metadata.items()},
        }
        return Document(id=self.chunk_id, page_content=self.text, metadata=meta)


    @classmethod
    def from_document(cls, doc: Any) -> Evidence | None:
        """A chunk document (:meth:`to_document`, a tool's artifact) back as evidence; None for a document of
        another graph object (a fact, an entity)."""
        meta = dict(getattr(doc, "metadata", {}) or {})
        if "chunk_id" not in meta:
            return None
        extra = {k.removeprefix("meta_"): v for k, v in meta.items() if k not in _RESERVED}
        return cls(rank=int(meta.get("rank") or 0), score=float(meta.get("score") or 0.0), chunk_id=str(meta["chunk_id"]),
                   doc_id=str(meta.get("doc_id") or ""), source=str(meta.get("source") or ""),
                   title=str(meta.get("title") or ""), section=str(meta.get("section") or ""),
                   section_id=str(meta.get("section_id") or ""), section_path=[str(p) for p in meta.get("section_path") or []],
                   text=str(doc.page_content), metadata=extra, via=[str(v) for v in meta.get("via") or []])  # fmt: skip


_RESERVED = frozenset(
    {"chunk_id", "doc_id", "source", "title", "section", "section_id", "section_path", "rank", "score", "via"}
)


class RetrievalResult(BaseModel):
    """Ranked evidence plus what the strategy found on the way (facts, triples, kept sections,
    communities, subgraphs: ``context``, strategy-specific, JSON-serialisable)."""

    strategy: str
    query: str
    k: int
    evidence: list[Evidence] = Field(default_factory=list)
    context: dict[str, Any] = Field(default_factory=dict)

    def documents(self) -> list[Document]:
        return [e.to_document() for e in self.evidence]


def chunk_doc_id(node: Node) -> str:
    """The document a chunk node belongs to."""
    return str(node.props.get("doc_id") or (node.doc_ids[0] if node.doc_ids else ""))


# ------------------------------------------------------------------------------------------ fusion


def rrf(
    rankings: Sequence[Sequence[str]],
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[ScoredId]:
    """Reciprocal rank fusion (Cormack et al. 2009; BiG-RAG §4.2, HybridRAG §4.4):
    ``score(d) = sum_i w_i / (k + rank_i(d))`` with 1-based ranks; an id repeated within one list counts at
    its best rank. Score descending, then id ascending."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("rrf: one weight per ranking")
    scores: dict[str, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else float(weights[i])
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    ranked = sorted(scores.items(), key=lambda p: (-round(p[1], 12), p[0]))
    if limit is not None:
        ranked = ranked[:limit]
    return [ScoredId.model_construct(id=i, score=s) for i, s in ranked]


def ranked(scores: Mapping[str, float], limit: int | None = None) -> list[ScoredId]:
    """``{id: score}`` as a deterministic ranking (score desc, id asc)."""
    items = sorted(scores.items(), key=lambda p: (-round(p[1], 12), p[0]))
    if limit is not None:
        items = items[:limit]
    return [ScoredId.model_construct(id=i, score=float(s)) for i, s in items]


# ------------------------------------------------------------------------------------------ filters


def _filter_values(value: Any) -> list[Any]:
    """A CLI value "2024" also matches metadata stored as the number 2024 (and "true" as True)."""
    if not isinstance(value, str):
        return [value]
    out: list[Any] = [value]
    low = value.strip().lower()
    if low in ("true", "false"):
        out.append(low == "true")
    try:
        out.append(int(value))
    except ValueError:
        try:
            out.append(float(value))
        except ValueError:
            pass
    return out


def vector_filters(filters: Filters | None) -> dict[str, list[Any]] | None:
    """Metadata filters as the vector store takes them: each key with every spelling its value may be
    stored under ("2024" also as 2024), any of which matches."""
    if not filters:
        return None
    return {key: _filter_values(value) for key, value in sorted(filters.items())}


def metadata_matches(meta: Mapping[str, Any], filters: Filters | None) -> bool:
    if not filters:
        return True
    return all(meta.get(k) in _filter_values(v) for k, v in filters.items())


def check_filters(filters: Filters | None) -> None:
    """Refuse (:class:`RetrievalError`) a filter that is not plain metadata equality: a key that is empty or
    names a vector-store operator (``$and``, ``$where``...), a value that is not a string, a whole or finite
    number or a bool. Callers' filters arrive from the CLI, tools, MCP and the API; the vector store would
    otherwise read an operator key as its own syntax."""
    if not filters:
        return
    if not isinstance(filters, Mapping):
        raise RetrievalError(f"filters are a key -> value mapping, not {type(filters).__name__}")
    for key, value in filters.items():
        if not isinstance(key, str) or not key.strip():
            raise RetrievalError(f"filter key {key!r} is empty or not a string")
        if key.startswith("$"):
            raise RetrievalError(f"filter key {key!r} starts with '$', which is operator syntax; filters are key=value")
        if isinstance(value, float) and not math.isfinite(value):
            raise RetrievalError(f"filter {key!r}: {value!r} is not a finite number")
        if not isinstance(value, (str, int, float, bool)):
            raise RetrievalError(f"filter {key!r}: {value!r} is not a string, number or bool")


def parse_filters(pairs: Iterable[str]) -> dict[str, str]:
    """``["year=2024", "company=Acme"]`` -> ``{"year": "2024", "company": "Acme"}``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise RetrievalError(f"filter {pair!r} is not key=value")
        out[key.strip()] = value.strip()
    check_filters(out)
    return out


# ------------------------------------------------------------------------------------------ the context


@dataclass(eq=False)
class RetrievalContext:
    """The stores a retriever reads, plus per-store caches (query vectors, the title index, document
    nodes) that are dropped whenever the graph changes."""

    graph: GraphStore
    vectors: VectorStore
    settings: Settings = field(default_factory=Settings)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _qvec: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _cache_gen: int | None = field(default=None, repr=False)
    _previous: dict[str, Any] = field(default_factory=dict, repr=False)  # updatable entries of an older generation
    _updatable: set[str] = field(default_factory=set, repr=False)

    # -------------------------------------------------------------- caches
    def cached(self, name: str, build: Any, update: Any = None) -> Any:
        """``build()`` once per graph generation (what it read stays valid while no one writes). With
        ``update``, the value is instead ``update(previous)`` from the value of the last generation it was
        built for (``update`` reads only what changed since, and builds whole when it must); every other
        entry is dropped when the generation moves, so nothing derived from an older graph is served."""
        gen = self.graph.generation()
        with self._lock:
            if update is not None:
                self._updatable.add(name)
            if gen != self._cache_gen:
                self._previous.update((n, self._cache[n]) for n in self._updatable if n in self._cache)
                self._cache.clear()
                self._cache_gen = gen
            if name not in self._cache:
                previous = self._previous.pop(name, None)
                self._cache[name] = build() if update is None or previous is None else update(previous)
            return self._cache[name]

    def query_vector(self, text: str) -> np.ndarray:
        """The query's embedding (the last 256 texts embedded here are kept)."""
        found = self._recall([text])
        if text not in found:
            found[text] = self._remember({text: np.asarray(self.vectors.embed_query(text), dtype=np.float32)})[text]
        return found[text]

    def query_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of several short texts, the ones not kept yet in one model call (rows in order)."""
        from stratagraph.embeddings import embed_texts

        found = self._recall(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in found]
        if todo:
            fresh = np.asarray(embed_texts(self.vectors.embeddings, todo), dtype=np.float32)
            found.update(self._remember(dict(zip(todo, fresh, strict=True))))
        return np.vstack([found[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def _recall(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            found = {t: self._qvec[t] for t in texts if t in self._qvec}
            for t in found:
                self._qvec.move_to_end(t)
            return found

    def _remember(self, vectors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        with self._lock:
            self._qvec.update(vectors)
            while len(self._qvec) > 256:
                self._qvec.popitem(last=False)
        return vectors

    def nlp(self) -> Language:
        """The shared spaCy pipeline (loaded once per process)."""
        from stratagraph.text.nlp import load_nlp

        return load_nlp()

    def index(self) -> GraphIndex:
        """The shared :class:`~stratagraph.retrieval.index.GraphIndex` of the graph, built once per generation."""
        from stratagraph.retrieval.index import GraphIndex

        if not self.settings.incremental_index:
            return self.cached("graph_index", lambda: GraphIndex.from_store(self.graph))
        return self.cached(
            "graph_index", lambda: GraphIndex.from_store(self.graph), lambda old: GraphIndex.updated(old, self.graph)
        )

    def bm25(self) -> BM25Index:
        """The lexical index (:mod:`stratagraph.retrieval.bm25`), built once per generation."""
        from stratagraph.retrieval.bm25 import BM25Index

        if not self.settings.incremental_index:
            return self.cached("bm25_index", lambda: BM25Index.from_graph(self.graph))
        return self.cached(
            "bm25_index", lambda: BM25Index.from_graph(self.graph), lambda old: BM25Index.updated(old, self.graph)
        )

    def title_index(self) -> TitleIndex:
        """Normalised titles of every document and section (entity pages, query linking); after a write, the
        previous generation's index with the pages that changed taken out and put in again."""
        from stratagraph.text.titles import TitleIndex, page_titles, updated_title_index

        def update(previous: tuple[TitleIndex, dict[str, Any]]) -> tuple[TitleIndex, dict[str, Any]]:
            ix = self.index()
            now = page_titles(
                zip(ix.documents.ids, ix.doc_title, ix.doc_metadata, strict=True),
                ((s, t, d) for s, t, d in zip(ix.sections.ids, ix.section_title, ix.section_doc, strict=True) if t),
            )
            return updated_title_index(previous[0], previous[1], now), now

        def build() -> tuple[TitleIndex, dict[str, Any]]:  # every page changed since an empty index
            return update((TitleIndex(), {}))

        return self.cached("title_index", build, update if self.settings.incremental_index else None)[0]

    # -------------------------------------------------------------- filters
    def allowed_docs(self, filters: Filters | None) -> set[str] | None:
        """Ids of the documents whose metadata matches ``filters`` (None: no filter)."""
        if not filters:
            return None
        key = "allowed:" + repr(sorted(filters.items()))
        return self.cached(key, lambda: self.index().documents_matching(filters, metadata_matches))

    # -------------------------------------------------------------- evidence
    def chunk_scores(self, query: str, k: int, filters: Filters | None = None) -> list[ScoredId]:
        """Dense chunk ranking (cosine of the query and chunk vectors), metadata-filtered."""
        if k <= 0:
            return []
        return self.vectors.query("chunks", embedding=self.query_vector(query), k=k, filters=vector_filters(filters))

    @staticmethod
    def _evidence(node: Any, doc: Any, doc_id: str, item: ScoredId | Scored, rank: int) -> Evidence:
        dprops = doc.props if doc is not None else {}
        title = str(dprops.get("title") or doc_id)
        path = [str(p) for p in node.props.get("heading_path") or []]
        return Evidence(
            rank=rank,
            score=float(item.score),
            chunk_id=node.id,
            doc_id=doc_id,
            source=str(dprops.get("source") or doc_id),
            title=title,
            section=" > ".join([title, *[p for p in path if p != title]]),
            section_id=str(node.props.get("section_id") or ""),
            section_path=path,
            text=str(node.props.get("text") or ""),
            metadata=dict(node.props.get("metadata") or {}),
            via=list(getattr(item, "via", []) or []),
            context=str(node.props.get("context") or ""),
        )

    def evidence(
        self,
        items: Sequence[ScoredId | Scored],
        k: int | None = None,
        filters: Filters | None = None,
    ) -> list[Evidence]:
        """Chunk ids (best first) as :class:`Evidence` with provenance; ids that are not stored chunks, or
        whose document fails ``filters``, are skipped; at most ``k``."""
        allowed = self.allowed_docs(filters)
        order = list(dict.fromkeys(i.id for i in items))  # a repeated id is listed once, at its best place
        best = {}
        for item in items:
            best.setdefault(item.id, item)
        out: list[Evidence] = []
        window = max(2 * (k or 10), 16)
        for start in range(0, len(order), window):  # read nodes a window at a time: k rarely needs them all
            part = order[start : start + window]
            nodes = {n.id: n for n in self.graph.get_nodes(part) if n.label == NodeLabel.CHUNK}
            doc_ids = sorted({chunk_doc_id(n) for n in nodes.values()})
            docs = {d.id: d for d in self.graph.get_nodes(doc_ids)}
            for cid in part:
                node = nodes.get(cid)
                if node is None:
                    continue
                doc_id = chunk_doc_id(node)
                if allowed is not None and doc_id not in allowed:
                    continue
                out.append(self._evidence(node, docs.get(doc_id), doc_id, best[cid], len(out) + 1))
                if k is not None and len(out) >= k:
                    return out
        return out

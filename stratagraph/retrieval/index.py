"""The one graph index every strategy and tool reads: built once per graph generation from narrow reads.

:class:`GraphIndex` is read with one ``node_tuples`` call per label (ids and the few properties an index
needs: a chunk's document and section, a fact's confidence and documents, a section's parent data, an
entity's type; never chunk text) and one ``edge_tuples`` call for every edge type, so it costs the same
light reads on every backend. It holds

* the node tables (ids sorted, positions by id) with those properties;
* every edge as an :class:`~stratagraph.graph_store.base.EdgeRow`, grouped by type, in the store's canonical
  order (type, src, dst, key);
* sparse matrices built from them on first use: chunk -> entity (``MENTIONS``, weights summed), entity ->
  fact (``IN_FACT``), fact -> chunk (``SUPPORTED_BY``), entity -> entity (``RELATED``), the section tree,
  chunk -> document / section, and the chunk-level links.

After a write the next generation's index is the previous one plus the store's change feed
(:meth:`GraphIndex.updated`, :meth:`GraphStore.changes_since`): node tables and edge lists spliced, not read
again; it is read whole when the feed cannot say or more than :data:`INCREMENTAL_SHARE` of it changed.
Strategies derive what they need from it (a walk matrix, a bipartite CSR, a chunk graph) and keep those in
the same generation cache (:meth:`RetrievalContext.cached`), built again for each generation, so the first
query after a graph change reads the store at most once, whatever the strategy. :func:`personalized_pagerank` is the one PageRank.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy.sparse import csr_matrix

from stratagraph.graph_store.base import Changes, EdgeRow, GraphStore
from stratagraph.schema import EdgeType, NodeLabel

__all__ = ["GraphIndex", "NodeTable", "PageRankParams", "personalized_pagerank"]


@dataclass(frozen=True, eq=False)
class NodeTable:
    """The ids of one label, sorted, and their positions."""

    ids: list[str]
    pos: dict[str, int]

    @classmethod
    def of(cls, ids: Iterable[str]) -> NodeTable:
        ordered = sorted(ids)
        return cls(ordered, {i: n for n, i in enumerate(ordered)})

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.pos


def _text(value: Any) -> str:
    return "" if value is None else str(value)


#: what the index reads of each label (``node_tuples`` fields), and how a tuple becomes the table's columns
FIELDS: dict[str, tuple[str, ...]] = {
    NodeLabel.DOCUMENT.value: ("title", "source", "metadata"),
    NodeLabel.SECTION.value: ("doc_id", "title", "order", "doc_ids"),
    NodeLabel.CHUNK.value: ("doc_id", "section_id", "doc_ids"),
    NodeLabel.ENTITY.value: ("type",),
    NodeLabel.FACT.value: ("confidence", "doc_ids"),
}
_COLUMNS: dict[str, tuple[str, ...]] = {  # the GraphIndex fields of each label's table, then its columns
    NodeLabel.DOCUMENT.value: ("documents", "doc_title", "doc_source", "doc_metadata"),
    NodeLabel.SECTION.value: ("sections", "section_doc", "section_title", "section_order"),
    NodeLabel.CHUNK.value: ("chunks", "chunk_doc", "chunk_section"),
    NodeLabel.ENTITY.value: ("entities", "entity_type"),
    NodeLabel.FACT.value: ("facts", "fact_confidence", "fact_docs"),
}
_ROW: dict[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {  # a node tuple -> its column values
    NodeLabel.DOCUMENT.value: lambda d: (_text(d[1]), _text(d[2]), dict(d[3]) if isinstance(d[3], dict) else {}),
    NodeLabel.SECTION.value: lambda s: (_text(s[1] or (s[4][0] if s[4] else "")), _text(s[2]), s[3]),
    NodeLabel.CHUNK.value: lambda c: (_text(c[1] or (c[3][0] if c[3] else "")), _text(c[2])),
    NodeLabel.ENTITY.value: lambda e: (_text(e[1]),),
    NodeLabel.FACT.value: lambda f: (confidence(f[1]), tuple(f[2] or ())),
}
#: an index updated from the change feed when at most this share of its rows changed (else read whole)
INCREMENTAL_SHARE = 0.25


_TABLES = tuple(columns[0] for columns in _COLUMNS.values())


def _positions(table: NodeTable, ids: Iterable[str], n: int) -> np.ndarray:
    """The positions of ``ids`` in ``table`` (-1 for an id not in it)."""
    return np.fromiter(map(table.pos.get, ids, repeat(-1)), dtype=np.int64, count=n)


def _renumbered(positions: np.ndarray, moved: np.ndarray | None) -> np.ndarray:
    """``positions`` in a table renumbered by ``moved`` (None: the table did not change); -1 stays -1."""
    if moved is None:
        return positions
    if not len(moved):  # the table was empty: no position was in it
        return np.full(len(positions), -1, dtype=np.int64)
    return np.where(positions >= 0, moved[np.maximum(positions, 0)], -1)


def _moved(table: NodeTable, new: NodeTable, drop: Sequence[int], points: Sequence[int], added: Sequence[str]) -> np.ndarray:
    """Old position -> new position of each node of ``table`` after :func:`_splice` dropped ``drop`` and
    inserted ``added`` at ``points`` (-1 when dropped; a node dropped and added again has its new place)."""
    dropped = np.zeros(len(table), dtype=bool)
    dropped[np.asarray(drop, dtype=np.int64)] = True
    kept = np.flatnonzero(~dropped)
    out = np.full(len(table), -1, dtype=np.int64)
    out[kept] = np.arange(len(kept)) + np.searchsorted(np.asarray(points, dtype=np.int64), np.arange(len(kept)), side="right")
    for node in added:
        if node in table.pos:
            out[table.pos[node]] = new.pos[node]
    return out


def _splice(column: Any, drop: Sequence[int], points: Sequence[int], values: Sequence[Any]) -> Any:
    """``column`` without the positions ``drop`` (ascending), then with ``values[i]`` inserted before
    position ``points[i]`` of what is left (``points`` non-decreasing): slices, not a loop over the column."""
    if isinstance(column, np.ndarray):
        kept = np.delete(column, np.asarray(drop, dtype=np.int64)) if len(drop) else column
        if not len(values):
            return kept.copy() if kept is column else kept
        return np.insert(kept, np.asarray(points, dtype=np.int64), np.asarray(values, dtype=column.dtype))
    kept = column
    if len(drop):
        kept, prev = [], 0
        for p in drop:
            kept.extend(column[prev:p])
            prev = p + 1
        kept.extend(column[prev:])
    if not len(values):
        return list(kept)
    out, prev = [], 0
    for p, v in zip(points, values, strict=True):
        out.extend(kept[prev:p])
        out.append(v)
        prev = p
    out.extend(kept[prev:])
    return out


@dataclass(eq=False)
class GraphIndex:
    """Whole-graph index of one generation (module docstring)."""

    generation: int
    documents: NodeTable
    doc_title: list[str]
    doc_source: list[str]
    doc_metadata: list[dict[str, Any]]
    sections: NodeTable
    section_doc: list[str]
    section_title: list[str]
    section_order: list[Any]
    chunks: NodeTable
    chunk_doc: list[str]  # the chunk's document ("props.doc_id", else its first provenance)
    chunk_section: list[str]  # "props.section_id" ("" when none)
    entities: NodeTable
    facts: NodeTable
    fact_confidence: np.ndarray  # conf in [0, 1] (1 when missing or unreadable; BiG-RAG §3)
    fact_docs: list[tuple[str, ...]]
    edges: dict[EdgeType, list[EdgeRow]] = field(default_factory=dict)
    entity_type: list[str] = field(default_factory=list)  # the entity's type ("PERSON", "GPE", an LLM's "LOCATION"...)
    edge_keys: dict[EdgeType, list[str]] = field(default_factory=dict)  # each edge's key, aligned with ``edges``
    _positions: dict[tuple[EdgeType, str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False
    )  # edge_positions of every edge (-1: an end not in its table), kept for the index's life and carried by apply
    #: set by :meth:`apply`: the generation this index was updated from, and per node table that changed, each
    #: old position's new one (-1: gone) and the ids written anew, so that what is derived per table (fact
    #: vectors) can be carried over as well
    updated_from: int | None = field(default=None, init=False, repr=False)
    renumbered: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict, init=False, repr=False)

    # ---------------------------------------------------------------- building
    @classmethod
    def from_store(cls, graph: GraphStore) -> GraphIndex:
        """Read the graph with one light call per label and one for the edges (no chunk text)."""
        generation = graph.generation()
        tables = {label: graph.node_tuples(label, fields) for label, fields in FIELDS.items()}
        edges: dict[EdgeType, list[EdgeRow]] = defaultdict(list)
        keys: dict[EdgeType, list[str]] = defaultdict(list)
        for row, key in graph.keyed_edge_tuples(list(EdgeType)):
            edges[row.type].append(row)
            keys[row.type].append(key)
        values: dict[str, Any] = {}
        for label, rows in tables.items():
            rows.sort(key=lambda r: r[0])  # sorted already (the protocol's order): linear
            table, *columns = _COLUMNS[label]
            values[table] = NodeTable([r[0] for r in rows], {r[0]: n for n, r in enumerate(rows)})
            converted = [_ROW[label](r) for r in rows]
            for c, name in enumerate(columns):
                values[name] = [v[c] for v in converted]
        values["fact_confidence"] = np.array(values["fact_confidence"], dtype=np.float64)
        return cls(generation=generation, edges=dict(edges), edge_keys=dict(keys), **values)

    @classmethod
    def updated(cls, previous: GraphIndex | None, graph: GraphStore) -> GraphIndex:
        """The index of the store's graph now: ``previous`` plus the store's change feed since its
        generation (:meth:`GraphStore.changes_since`), without reading the unchanged graph; read whole
        (:meth:`from_store`) when there is no previous index, the feed cannot say (pruned, another store,
        a backend without a feed) or more than :data:`INCREMENTAL_SHARE` of its rows changed."""
        if previous is not None:
            rows = sum(len(getattr(previous, _COLUMNS[label][0])) for label in FIELDS)
            rows += sum(len(v) for v in previous.edges.values())
            limit = max(int(rows * INCREMENTAL_SHARE), 1)
            changes = graph.changes_since(previous.generation, FIELDS, limit=limit)
            if changes is not None:
                return previous.apply(changes)
        return cls.from_store(graph)

    def apply(self, changes: Changes) -> GraphIndex:
        """A new index: this one with ``changes`` (this one is left as it is: other threads may read it)."""
        if changes.generation == self.generation and not changes.size:
            return self
        gone = set(changes.deleted_nodes)
        for rows in changes.nodes.values():
            gone.update(r[0] for r in rows)
        values: dict[str, Any] = {}
        renumber: dict[str, tuple[NodeTable, list[int], list[int], list[str]]] = {}
        for label in FIELDS:
            table_name, *columns = _COLUMNS[label]
            table: NodeTable = getattr(self, table_name)
            drop = sorted(table.pos[i] for i in gone if i in table.pos)
            added = sorted(changes.nodes.get(label, ()), key=lambda r: r[0])
            if not drop and not added:
                values[table_name] = table
                values.update((name, getattr(self, name)) for name in columns)
                continue
            ids = _splice(table.ids, drop, (), ())
            points = [bisect_left(ids, r[0]) for r in added]
            ids = _splice(ids, (), points, [r[0] for r in added])
            values[table_name] = NodeTable(ids, dict(zip(ids, range(len(ids)))))
            renumber[table_name] = (table, drop, points, [r[0] for r in added])
            converted = [_ROW[label](r) for r in added]
            for c, name in enumerate(columns):
                values[name] = _splice(getattr(self, name), drop, points, [v[c] for v in converted])
        edges, keys = dict(self.edges), dict(self.edge_keys)
        spliced: dict[EdgeType, Any] = {}
        by_type: dict[EdgeType, tuple[set[tuple[str, str, str]], list[Any]]] = {}
        for e in changes.deleted_edges:
            by_type.setdefault(e.type, (set(), []))[0].add((e.src, e.dst, e.key))
        for e in changes.edges:
            dropped, added = by_type.setdefault(e.type, (set(), []))
            dropped.add((e.src, e.dst, e.key))
            added.append(e)
        for type_, (dropped, added) in by_type.items():
            rows, ks = self.edges.get(type_, []), self.edge_keys.get(type_, [])

            def at(i: int, rows: list[EdgeRow] = rows, ks: list[str] = ks) -> tuple[str, str, str]:
                return (rows[i].src, rows[i].dst, ks[i])

            drop = []
            for want in sorted(dropped):
                i = bisect_left(range(len(rows)), want, key=at)
                if i < len(rows) and at(i) == want:
                    drop.append(i)
            kept_rows, kept_keys = _splice(rows, drop, (), ()), _splice(ks, drop, (), ())
            added.sort(key=lambda e: (e.src, e.dst, e.key))
            points = [
                bisect_left(range(len(kept_rows)), (e.src, e.dst, e.key), key=lambda i: (kept_rows[i].src, kept_rows[i].dst, kept_keys[i]))
                for e in added
            ]
            new_rows = _splice(kept_rows, (), points, [EdgeRow(e.type, e.src, e.dst, float(e.weight)) for e in added])
            new_keys = _splice(kept_keys, (), points, [e.key for e in added])
            spliced[type_] = (drop, points, added)
            if new_rows:
                edges[type_], keys[type_] = new_rows, new_keys
            else:
                edges.pop(type_, None)
                keys.pop(type_, None)
        out = type(self)(generation=changes.generation, edges=edges, edge_keys=keys, **values)
        moved = {name: _moved(old, values[name], *rest) for name, (old, *rest) in renumber.items()}
        out._carried(self, moved, spliced)
        out.updated_from = self.generation
        out.renumbered = {name: (moved[name], renumber[name][3]) for name in moved}
        return out

    def edges_of(self, *types: EdgeType) -> list[EdgeRow]:
        """The edges of ``types``, each type in canonical order, types in the order given."""
        return [e for t in types for e in self.edges.get(t, ())]

    # ---------------------------------------------------------------- chunk membership
    @cached_property
    def doc_chunks(self) -> dict[str, tuple[str, ...]]:
        """Document id -> its chunks (by the chunks' own document), sorted."""
        out: dict[str, list[str]] = defaultdict(list)
        for cid, doc in zip(self.chunks.ids, self.chunk_doc, strict=True):
            out[doc].append(cid)
        return {d: tuple(cs) for d, cs in out.items()}

    @cached_property
    def section_chunks(self) -> dict[str, tuple[str, ...]]:
        """Section id -> its own chunks (by the chunks' ``section_id``), sorted."""
        out: dict[str, list[str]] = defaultdict(list)
        for cid, sec in zip(self.chunks.ids, self.chunk_section, strict=True):
            if sec:
                out[sec].append(cid)
        return {s: tuple(cs) for s, cs in out.items()}

    def page_chunks(self, page: str) -> tuple[str, ...]:
        """The chunks of a page: a document's chunks, or a section's own chunks."""
        return self.doc_chunks.get(page) or self.section_chunks.get(page) or ()

    def chunk_doc_of(self, chunk_id: str) -> str | None:
        i = self.chunks.pos.get(chunk_id)
        return None if i is None else self.chunk_doc[i]

    # ---------------------------------------------------------------- the bipartite layer
    @cached_property
    def entity_fact(self) -> csr_matrix:
        """(entities, facts): 1 where an ``IN_FACT`` edge joins them."""
        return self._binary(EdgeType.IN_FACT, self.entities, self.facts)

    @cached_property
    def fact_entity(self) -> csr_matrix:
        return self.entity_fact.T.tocsr()

    @cached_property
    def fact_chunk(self) -> csr_matrix:
        """(facts, chunks): 1 where a ``SUPPORTED_BY`` edge joins them."""
        return self._binary(EdgeType.SUPPORTED_BY, self.facts, self.chunks)

    @cached_property
    def chunk_fact(self) -> csr_matrix:
        return self.fact_chunk.T.tocsr()

    @cached_property
    def chunk_entity(self) -> csr_matrix:
        """(chunks, entities): the summed weights of ``MENTIONS`` edges (mention counts)."""
        return self._weighted(EdgeType.MENTIONS, self.chunks, self.entities)

    @cached_property
    def entity_chunk(self) -> csr_matrix:
        return self.chunk_entity.T.tocsr()

    @cached_property
    def related(self) -> csr_matrix:
        """(entities, entities): how many ``RELATED`` edges go from row to column."""
        return self._weighted(EdgeType.RELATED, self.entities, self.entities, ones=True)

    def row(self, matrix: csr_matrix, i: int) -> np.ndarray:
        """Column positions of row ``i`` (ascending)."""
        return matrix.indices[matrix.indptr[i] : matrix.indptr[i + 1]]

    def facts_of_entity(self, entity_id: str) -> list[str]:
        i = self.entities.pos.get(entity_id)
        return [] if i is None else [self.facts.ids[j] for j in self.row(self.entity_fact, i)]

    def entities_of_fact(self, fact_id: str) -> list[str]:
        j = self.facts.pos.get(fact_id)
        return [] if j is None else [self.entities.ids[i] for i in self.row(self.fact_entity, j)]

    def chunks_of_fact(self, fact_id: str) -> list[str]:
        j = self.facts.pos.get(fact_id)
        return [] if j is None else [self.chunks.ids[c] for c in self.row(self.fact_chunk, j)]

    @cached_property
    def described_by(self) -> dict[str, tuple[str, ...]]:
        """Entity id -> the pages (documents, sections) it is ``DESCRIBED_BY``, in edge order."""
        out: dict[str, list[str]] = defaultdict(list)
        for e in self.edges.get(EdgeType.DESCRIBED_BY, ()):
            out[e.src].append(e.dst)
        return {k: tuple(v) for k, v in out.items()}

    # ---------------------------------------------------------------- the structure layer
    @cached_property
    def section_parent(self) -> dict[str, str]:
        """Section id -> the section or document it hangs under (``HAS_SECTION``)."""
        return {e.dst: e.src for e in self.edges.get(EdgeType.HAS_SECTION, ()) if e.dst in self.sections}

    @cached_property
    def own_chunks(self) -> dict[str, tuple[str, ...]]:
        """Section id -> its ``HAS_CHUNK`` chunks, sorted."""
        out: dict[str, set[str]] = defaultdict(set)
        for e in self.edges.get(EdgeType.HAS_CHUNK, ()):
            out[e.src].add(e.dst)
        return {s: tuple(sorted(cs)) for s, cs in out.items()}

    # ---------------------------------------------------------------- metadata
    def documents_matching(self, filters: Mapping[str, Any], matches: Any) -> set[str]:
        """Ids of the documents whose metadata ``matches(metadata, filters)``."""
        return {d for d, meta in zip(self.documents.ids, self.doc_metadata, strict=True) if matches(meta, filters)}

    # ---------------------------------------------------------------- helpers
    def edge_positions(self, type_: EdgeType, rows: NodeTable, cols: NodeTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ``type_`` edges as row positions in ``rows``, column positions in ``cols`` and weights, in edge
        order, those whose ends are not in the two tables left out. Read once per index with the lookups
        mapped in C (the walk matrix, the bipartite index and the layer matrices share them), and carried to
        the next generation's index by :meth:`apply` at the cost of the change."""
        memo = (type_, self._table_name(rows), self._table_name(cols))
        if memo not in self._positions:
            edges = self.edges.get(type_, ())
            self._positions[memo] = (_positions(rows, map(itemgetter(1), edges), len(edges)),
                                     _positions(cols, map(itemgetter(2), edges), len(edges)),
                                     np.fromiter(map(itemgetter(3), edges), dtype=np.float64, count=len(edges)))  # fmt: skip
        r, c, w = self._positions[memo]
        keep = (r >= 0) & (c >= 0)
        return (r, c, w) if keep.all() else (r[keep], c[keep], w[keep])

    def _table_name(self, table: NodeTable) -> str:
        name = next((t for t in _TABLES if getattr(self, t) is table), None)
        if name is None:
            raise ValueError("edge_positions reads the index's own node tables")
        return name

    def _carried(self, previous: GraphIndex, moved: Mapping[str, np.ndarray], spliced: Mapping[EdgeType, Any]) -> None:
        """Take ``previous``'s edge positions over into this index (its next generation): positions renumbered
        by ``moved`` (per changed table: old position -> new, -1 when gone), edges spliced as the edge lists
        were (``spliced``: per changed type, the dropped indexes, insertion points and added edges)."""
        for (type_, rn, cn), (r, c, w) in previous._positions.items():
            rows, cols = getattr(self, rn), getattr(self, cn)
            r, c = _renumbered(r, moved.get(rn)), _renumbered(c, moved.get(cn))
            if type_ in spliced:
                drop, points, added = spliced[type_]
                d = np.asarray(drop, dtype=np.int64)
                at = np.asarray(points, dtype=np.int64)
                r = np.insert(np.delete(r, d), at, _positions(rows, (e.src for e in added), len(added)))
                c = np.insert(np.delete(c, d), at, _positions(cols, (e.dst for e in added), len(added)))
                w = np.insert(np.delete(w, d), at, np.array([float(e.weight) for e in added], dtype=np.float64))
            edges = self.edges.get(type_, ())
            for ends, table, name, field_ in ((r, rows, rn, 1), (c, cols, cn, 2)):
                missing = np.flatnonzero(ends < 0) if name in moved else ()
                if len(missing):  # an end that was in no table before may be in it now
                    ends[missing] = _positions(table, (edges[i][field_] for i in missing.tolist()), len(missing))
            self._positions[(type_, rn, cn)] = (r, c, w)

    def _weighted(self, type_: EdgeType, rows: NodeTable, cols: NodeTable, ones: bool = False) -> csr_matrix:
        r, c, w = self.edge_positions(type_, rows, cols)
        m = csr_matrix((np.ones(len(r)) if ones else w, (r, c)), shape=(len(rows), len(cols)))
        m.sum_duplicates()
        return m

    def _binary(self, type_: EdgeType, rows: NodeTable, cols: NodeTable) -> csr_matrix:
        m = self._weighted(type_, rows, cols, ones=True)
        m.data[:] = 1.0
        return m


def confidence(value: Any) -> float:
    """An extraction confidence in [0, 1]; 1 when missing or unreadable (BiG-RAG §3's ``conf``)."""
    try:
        conf = float(value) if value is not None else 1.0
    except (TypeError, ValueError):
        return 1.0
    return min(max(conf, 0.0), 1.0) if conf == conf else 1.0


# ------------------------------------------------------------------------------------------ PageRank


class PageRankParams(BaseModel):
    """The one PageRank's parameters (HippoRAG §2; one setting for every caller)."""

    model_config = ConfigDict(frozen=True)

    damping: float = Field(0.5, description="paper (HippoRAG): the walk restarts at the seeds with probability 0.5")
    max_iter: int = Field(50, description="ours: power iteration stops after this many steps...")
    tol: float = Field(1e-6, description="ours: ...or when the L1 change falls below this")


def personalized_pagerank(
    transition: csr_matrix, dangling: np.ndarray, reset: np.ndarray, params: PageRankParams = PageRankParams()
) -> np.ndarray:
    """Power iteration of ``x = d * P x + (d * dangling mass + 1 - d) * r`` (HippoRAG eq. 1 with reset ``r``,
    normalised here; all zeros when ``r`` is). ``transition`` is column-stochastic (``P[i, j]``: the
    probability of stepping j -> i), ``dangling`` marks nodes without edges, whose mass restarts."""
    total = reset.sum()
    if total <= 0:
        return reset
    reset = reset / total
    x = reset.copy()
    d = params.damping
    for _ in range(params.max_iter):
        nxt = d * (transition @ x) + (d * x[dangling].sum() + 1.0 - d) * reset
        done = np.abs(nxt - x).sum() < params.tol
        x = nxt
        if done:
            break
    return x


def column_stochastic(pairs: Mapping[tuple[int, int], float], n: int) -> tuple[csr_matrix, np.ndarray]:
    """The undirected walk over weighted node pairs (both directions, self-pairs dropped), as a
    column-stochastic float32 CSR matrix, and the mask of nodes without edges."""
    keys = np.fromiter((k for pair in pairs for k in pair), dtype=np.int64, count=2 * len(pairs)).reshape(-1, 2)
    weights = np.fromiter(pairs.values(), dtype=np.float64, count=len(pairs))
    return walk_matrix(keys[:, 0], keys[:, 1], weights, n)


def walk_matrix(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n: int) -> tuple[csr_matrix, np.ndarray]:
    """:func:`column_stochastic` of the pairs ``(rows[i], cols[i])`` with ``weights[i]`` (a pair given twice
    counts twice; the reverse of a pair is another pair)."""
    off = rows != cols
    rows, cols, weights = rows[off], cols[off], weights[off]
    adj = csr_matrix((np.concatenate([weights, weights]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
                     shape=(n, n))  # fmt: skip
    adj.sum_duplicates()
    adj = adj.astype(np.float32)
    out_weight = np.asarray(adj.sum(axis=0)).ravel()  # symmetric: column sums = row sums
    dangling = out_weight == 0
    scale = np.divide(1.0, out_weight, out=np.zeros(n, dtype=np.float32), where=~dangling).astype(np.float32)
    return csr_matrix(adj.multiply(scale[np.newaxis, :])), dangling


def rank_positions(scores: np.ndarray, candidates: Sequence[int] | np.ndarray, ids: Sequence[str], limit: int) -> list[tuple[str, float]]:
    """The ``limit`` best of ``candidates`` by score rounded to 12 digits (float noise cannot reorder ties),
    then by id."""
    cand = np.asarray(candidates, dtype=np.int64)
    if not len(cand):
        return []
    rounded = np.round(scores[cand], 12)
    if len(cand) > limit:
        top = np.argpartition(-rounded, limit - 1)[:limit]
        threshold = rounded[top].min()
        keep = rounded >= threshold
        cand, rounded = cand[keep], rounded[keep]
    order = sorted(zip((-rounded).tolist(), (ids[i] for i in cand), strict=True))
    return [(nid, -neg) for neg, nid in order[:limit]]

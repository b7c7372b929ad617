"""``lesegr``: CG-RAG's Lexical-Semantic Graph Retrieval (§4.3) over the chunk graph, without training,
returning each chunk with its contextual subgraph (§4.4, eq. 18).

The chunk graph (CG-RAG §4.2). Neighbours of a chunk, every edge taken in both directions:

* ``NEXT`` chunk - chunk (adjacency, intra-document);
* ``REFERS_TO`` chunk -> section (explicit cross-reference): the chunks of that section's subtree;
* ``CITES`` chunk -> chunk, and chunk -> document: the cited document's chunks (inter-document);
* ``SIMILAR`` chunk - chunk (the inter-document top-k edges of §4.2.2).

Query-time message passing (one layer). For a query q, the candidate centre chunks C are the union of the
top dense and the top BM25 chunks. Notation: ``e_j`` the chunk's unit dense vector, ``q`` the unit query
vector, ``d_j = cos(q, e_j)``, ``s_j`` its BM25 score, normalised as

    d^_j = clip((d_j - min_C d) / (max_C d - min_C d), 0, 1)      min-max over the centres C
    s^_j = s_j / max s                                             BM25's own floor is 0 (no shared term)

The BM25 scores come from one BM25 list read ``sparse_depth`` deep; a chunk not in it scores 0 (its BM25
is below the last one listed, which is close to 0 after normalising). The paper's terms, parameter-free:

* eq. 7, sparse query-context relevance: ``alpha(q, c_j) = s^_j`` (non-negative, as Prop. 4.1 requires);
* eq. 8, dense centre-neighbour relevance: ``beta(c_i, c_j) = max(0, cos(e_i, e_j))`` (the trained
  ``MLP(h_i - h_j)`` replaced by the cosine), ``beta_ii = 1``;
* eq. 5, the message of neighbour j to centre i is ``alpha(q, c_j) * beta(c_i, c_j) * e_j``: a gate
  ``g_ij = s^_j * beta_ij`` on the neighbour's dense vector;
* eq. 6, aggregation with normalised weights over the neighbourhood N(i):
  ``pi_ij = g_ij / max(1, sum_k g_ik)`` (the gates, rescaled only when they add up to more than 1, so a
  neighbourhood counts at most as much as one perfect neighbour and many weak neighbours do not add up to
  a strong one), added to the centre (sum AGG, which Prop. 4.1 allows): ``h_i' = e_i + sum_j pi_ij e_j``;
* eq. 9, the score ``g(q, h_i')`` with the dot product, which is linear, so each message contributes
  ``pi_ij * (q . e_j)``. Split ``e_j = beta_ij e_i + (e_j - beta_ij e_i)``: the first part only rescales the
  centre's own relevance (a chunk would score higher for having near-copies around it, which lifts clusters
  of look-alike passages over a lone relevant one; SIMILAR edges join exactly such look-alikes), so only
  the second part, what the neighbour adds to the centre, is scored, as a cosine:
  ``v_ij = max(0, cos(q, e_j - beta_ij e_i))``, and the aggregated message is ``M_i = sum_j pi_ij v_ij``.

The centre's own term is the additive sparse + dense fusion that Prop. 4.1 (eqs. 10-17) shows LeSeGR
reduces to when a chunk has no relevant context: ``r_i = (1 - lambda) * d^_i + lambda * s^_i``. The final
score is ``score_i = r_i + mu * M_i``: context can only add, at most ``mu``. Neighbours with ``s^_j = 0``
send no message (their gate is 0), so only neighbours in the BM25 list are read from the vector store; each
centre hears at most ``max_messages`` of them (highest ``s^_j`` first, then id).

The contextual subgraph of every returned chunk (eq. 18: the chunk and its direct neighbours) is in
``context["subgraphs"][chunk_id]``: its neighbours (id, edge type, weight, direction, the document or
section a link was expanded through, gate) and the parts of its score. Metadata filters restrict the centres
and the neighbours alike (a chunk of a filtered-out document neither ranks nor sends messages).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import Filters, RetrievalContext, RetrievalResult, Scored, ranked
from stratagraph.retrieval.index import GraphIndex
from stratagraph.retrieval.lexical import bm25
from stratagraph.schema import EdgeType

CHUNK_EDGE_TYPES: tuple[EdgeType, ...] = (EdgeType.NEXT, EdgeType.SIMILAR, EdgeType.CITES, EdgeType.REFERS_TO)
_CACHE_KEY = "lesegr:chunk_graph"


class LeSeGRParams(BaseModel):
    """One configuration for every corpus."""

    dense_centres: int = Field(default=40, ge=1, description="ours: top dense chunks taken as centres")
    sparse_centres: int = Field(default=40, ge=0, description="ours: top BM25 chunks taken as centres")
    sparse_depth: int = Field(default=200, ge=1, description="ours: how deep the BM25 list is read for alpha (eq. 7)")
    sparse_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="ours: lambda, the sparse share of the centre's own term (Prop. 4.1)")
    message_weight: float = Field(default=0.5, ge=0.0, description="ours: mu, the weight of the aggregated messages (eq. 6)")
    max_messages: int = Field(default=32, ge=0, description="ours: neighbours a centre hears at most")
    context_neighbours: int = Field(default=32, ge=0, description="ours: neighbours listed per contextual subgraph (eq. 18)")


# ------------------------------------------------------------------------------------------ the chunk graph


@dataclass(frozen=True, slots=True)
class Link:
    """One edge of a chunk's neighbourhood. ``via``: the Document or Section a CITES / REFERS_TO link was
    expanded through ("" for a chunk -> chunk edge); ``direction``: "out" when the centre is the source."""

    id: str
    edge_type: str
    weight: float
    direction: Literal["out", "in"]
    via: str = ""


@dataclass
class ChunkGraph:
    """The chunk-level citation graph of CG-RAG §4.2, in memory (built once per graph generation)."""

    doc_of: dict[str, str] = field(default_factory=dict)  # chunk -> document
    section_of: dict[str, str] = field(default_factory=dict)  # chunk -> section
    parent: dict[str, str] = field(default_factory=dict)  # section -> parent section or document
    doc_chunks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    section_chunks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # subtree chunks of REFERS_TO targets
    direct: dict[str, list[tuple[str, str, float, str]]] = field(default_factory=dict)  # chunk <-> chunk edges, both
    # directions, as (neighbour, edge type, weight, direction): made into Links when a chunk's neighbours are asked
    targets: dict[str, list[tuple[str, str, float]]] = field(default_factory=dict)  # chunk -> (type, doc|section, w)
    cited_by_doc: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # doc -> citing chunks
    referred_by_section: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # section -> chunks

    def ancestors(self, chunk_id: str) -> list[str]:
        """The chunk's section and every section above it (not the document)."""
        out: list[str] = []
        node = self.section_of.get(chunk_id)
        while node is not None and node in self.parent and node not in out:
            out.append(node)
            node = self.parent[node]
        return out

    def neighbours(self, chunk_id: str) -> list[Link]:
        """Every link of a chunk (one per neighbour, edge type and direction; the heaviest kept), sorted by
        edge type, neighbour id, direction."""
        links = [Link(id=n, edge_type=t, weight=w, direction=d) for n, t, w, d in self.direct.get(chunk_id, ())]  # type: ignore[arg-type]
        for type_, target, weight in self.targets.get(chunk_id, ()):
            expand = self.doc_chunks if type_ == EdgeType.CITES else self.section_chunks
            members = expand.get(target, ())
            links += [Link(id=x, edge_type=type_, weight=weight, direction="out", via=target) for x in members]
        doc = self.doc_of.get(chunk_id)
        cites, refers = EdgeType.CITES.value, EdgeType.REFERS_TO.value
        if doc is not None:
            for src, weight in self.cited_by_doc.get(doc, ()):
                links.append(Link(id=src, edge_type=cites, weight=weight, direction="in", via=doc))
        for section in self.ancestors(chunk_id):
            for src, weight in self.referred_by_section.get(section, ()):
                links.append(Link(id=src, edge_type=refers, weight=weight, direction="in", via=section))
        best: dict[tuple[str, str, str], Link] = {}
        for link in links:
            if link.id == chunk_id:
                continue
            key = (link.edge_type, link.id, link.direction)
            if key not in best or (link.weight, link.via) > (best[key].weight, best[key].via):
                best[key] = link
        return [best[k] for k in sorted(best)]


TYPE_NAMES = {t: t.value for t in EdgeType}  # an enum's .value is a Python call: read once


def build_chunk_graph(ix: GraphIndex) -> ChunkGraph:
    """Index the structure edges (for chunk -> document / section membership) and the four chunk-graph edge
    types of the shared graph index."""
    cg = ChunkGraph()
    children: dict[str, list[str]] = defaultdict(list)
    for e in ix.edges_of(EdgeType.HAS_SECTION, EdgeType.HAS_CHUNK):
        if e.type == EdgeType.HAS_SECTION:
            cg.parent[e.dst] = e.src
            children[e.src].append(e.dst)
        elif e.type == EdgeType.HAS_CHUNK:
            cg.section_of[e.dst] = e.src
    own_chunks: dict[str, list[str]] = defaultdict(list)
    for chunk, section in cg.section_of.items():
        own_chunks[section].append(chunk)
    by_doc: dict[str, list[str]] = defaultdict(list)
    for chunk, section in cg.section_of.items():
        doc = _root(cg.parent, section)
        cg.doc_of[chunk] = doc
        by_doc[doc].append(chunk)
    cg.doc_chunks = {d: tuple(sorted(cs)) for d, cs in by_doc.items()}
    chunks = cg.section_of
    direct: dict[str, list[tuple[str, str, float, str]]] = defaultdict(list)
    targets: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    cited: dict[str, list[tuple[str, float]]] = defaultdict(list)
    referred: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for e in (e for t in sorted(CHUNK_EDGE_TYPES) for e in ix.edges.get(t, ())):
        if e.src not in chunks:
            continue
        w, type_ = float(e.weight), TYPE_NAMES[e.type]
        if e.dst in chunks:
            direct[e.src].append((e.dst, type_, w, "out"))
            direct[e.dst].append((e.src, type_, w, "in"))
        elif e.type == EdgeType.CITES and e.dst in cg.doc_chunks:
            targets[e.src].append((type_, e.dst, w))
            cited[e.dst].append((e.src, w))
        elif e.type == EdgeType.REFERS_TO and e.dst in cg.parent:
            targets[e.src].append((type_, e.dst, w))
            referred[e.dst].append((e.src, w))
            if e.dst not in cg.section_chunks:
                cg.section_chunks[e.dst] = tuple(sorted(_subtree_chunks(e.dst, children, own_chunks)))
    cg.direct, cg.targets = dict(direct), dict(targets)
    cg.cited_by_doc, cg.referred_by_section = dict(cited), dict(referred)
    return cg


def _root(parent: Mapping[str, str], node: str) -> str:
    seen: set[str] = set()
    while node in parent and node not in seen:
        seen.add(node)
        node = parent[node]
    return node


def _subtree_chunks(section: str, children: Mapping[str, list[str]], own: Mapping[str, list[str]]) -> list[str]:
    out: list[str] = []
    stack, seen = [section], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        out += own.get(node, [])
        stack += children.get(node, [])
    return out


def chunk_graph(ctx: RetrievalContext) -> ChunkGraph:
    return ctx.cached(_CACHE_KEY, lambda: build_chunk_graph(ctx.index()))


# ------------------------------------------------------------------------------------------ relevance


class Candidates(BaseModel):
    """The centre chunks and the raw query relevances read for this query."""

    centres: list[str]  # dense order first, then BM25-only ones in BM25 order
    sparse: dict[str, float]  # BM25 score of every chunk in the BM25 list (``sparse_depth`` deep)
    sparse_max: float


def candidates(ctx: RetrievalContext, query: str, k: int, params: LeSeGRParams, filters: Filters | None) -> Candidates:
    """Centres = top dense ∪ top BM25 chunks (metadata-filtered)."""
    dense = ctx.chunk_scores(query, max(params.dense_centres, k), filters)
    sparse_list = bm25(ctx, query, max(params.sparse_depth, params.sparse_centres, k), filters)
    centres = list(dict.fromkeys([h.id for h in dense] + [h.id for h in sparse_list[: max(params.sparse_centres, k)]]))
    sparse = {h.id: max(0.0, float(h.score)) for h in sparse_list}
    return Candidates(centres=centres, sparse=sparse, sparse_max=max(sparse.values(), default=0.0))


def unit_vectors(ctx: RetrievalContext, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Stored chunk vectors of ``ids`` (one batched read), scaled to unit length."""
    out: dict[str, np.ndarray] = {}
    for cid, vec in ctx.vectors.get_embeddings("chunks", sorted(set(ids))).items():
        v = np.asarray(vec, dtype=np.float32).reshape(-1)
        if float(np.linalg.norm(v)) > 0:
            out[cid] = _unit(v)
    return out


# ------------------------------------------------------------------------------------------ message passing


class Message(BaseModel):
    """Neighbour j's message to centre i: gate g_ij = alpha * beta (eqs. 7-8), weight pi_ij (eq. 6) and
    value v_ij = max(0, cos(q, e_j - beta_ij e_i)), the query relevance of what j adds to i (eq. 9)."""

    id: str
    alpha: float
    beta: float
    gate: float
    weight: float
    value: float

    @property
    def contribution(self) -> float:
        return self.weight * self.value


class CentreScore(BaseModel):
    id: str
    score: float
    dense: float  # d^_i
    sparse: float  # s^_i
    own: float  # r_i
    message: float  # M_i
    messages: list[Message] = Field(default_factory=list)  # largest contribution first, then id


def propagate(
    centres: Sequence[str],
    neighbourhoods: Mapping[str, Sequence[str]],
    qvec: np.ndarray,
    vectors: Mapping[str, np.ndarray],
    sparse: Mapping[str, float],
    sparse_max: float,
    params: LeSeGRParams,
) -> dict[str, CentreScore]:
    """One layer of sparse-gated dense message passing (eqs. 5-9, parameter-free; see the module docstring):
    ``score_i = r_i + mu * sum_j pi_ij v_ij``. ``neighbourhoods[i]``: the neighbours of centre i that may
    send a message; ``vectors``: unit vectors (a chunk without one has d^ = 0 and sends nothing)."""
    q = _unit(np.asarray(qvec, dtype=np.float32).reshape(-1))
    cos = {cid: float(v @ q) for cid, v in vectors.items()}
    present = [cos[c] for c in centres if c in cos]
    lo, hi = (min(present), max(present)) if present else (0.0, 0.0)

    def dnorm(cid: str) -> float:
        if cid not in cos:
            return 0.0
        if hi - lo <= 1e-12:
            return 1.0
        return min(1.0, max(0.0, (cos[cid] - lo) / (hi - lo)))

    def snorm(cid: str) -> float:
        return sparse.get(cid, 0.0) / sparse_max if sparse_max > 0 else 0.0

    lam, mu = params.sparse_weight, params.message_weight
    out: dict[str, CentreScore] = {}
    for i in centres:
        d_i, s_i = dnorm(i), snorm(i)
        own = (1.0 - lam) * d_i + lam * s_i
        msgs = messages(i, neighbourhoods.get(i, ()), q, vectors, snorm)
        message = sum(m.contribution for m in msgs)
        msgs.sort(key=lambda m: (-round(m.contribution, 12), m.id))
        out[i] = CentreScore(
            id=i, score=own + mu * message, dense=d_i, sparse=s_i, own=own, message=message, messages=msgs
        )
    return out


def messages(
    centre: str,
    nbrs: Sequence[str],
    q: np.ndarray,
    vectors: Mapping[str, np.ndarray],
    alpha_of: Callable[[str], float],
) -> list[Message]:
    """The messages to one centre (unit vectors, unit query): gates ``g_ij = alpha(q, c_j) * beta(c_i, c_j)``
    with ``beta = max(0, cos(e_i, e_j))`` (eqs. 7-8), weights ``pi_ij = g_ij / max(1, sum_k g_ik)`` (eq. 6)
    and values ``v_ij = max(0, cos(q, e_j - beta_ij e_i))`` (eq. 9 on the part of e_j that is not e_i)."""
    e_i = vectors.get(centre)
    if e_i is None:
        return []
    raw: list[tuple[str, float, float, float, float]] = []
    for j in nbrs:
        e_j = vectors.get(j)
        alpha = alpha_of(j)
        if e_j is None or alpha <= 0:
            continue
        beta = max(0.0, float(e_i @ e_j))
        if beta <= 0:
            continue
        rest = e_j - beta * e_i
        norm = float(np.linalg.norm(rest))
        value = max(0.0, float(rest @ q) / norm) if norm > 1e-6 else 0.0  # an exact copy adds nothing
        raw.append((j, alpha, beta, alpha * beta, value))
    z = max(1.0, sum(r[3] for r in raw))
    return [Message(id=j, alpha=a, beta=b, gate=g, weight=g / z, value=v) for j, a, b, g, v in raw]


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def message_senders(
    cg: ChunkGraph,
    centres: Sequence[str],
    sparse: Mapping[str, float],
    allowed: set[str] | None,
    max_messages: int,
) -> dict[str, list[str]]:
    """For each centre, the neighbours that can send a message: in the BM25 list (alpha > 0), of an allowed
    document, at most ``max_messages`` (highest BM25 first, then id)."""
    out: dict[str, list[str]] = {}
    for c in centres:
        ids = {link.id for link in cg.neighbours(c)}
        keep = [j for j in ids if sparse.get(j, 0.0) > 0 and _allowed(cg, j, allowed)]
        keep.sort(key=lambda j: (-sparse[j], j))
        out[c] = keep[:max_messages]
    return out


def _allowed(cg: ChunkGraph, chunk_id: str, allowed: set[str] | None) -> bool:
    return allowed is None or cg.doc_of.get(chunk_id) in allowed


# ------------------------------------------------------------------------------------------ eq. 18


def contextual_subgraph(
    cg: ChunkGraph, centre: CentreScore, allowed: set[str] | None, limit: int
) -> dict[str, object]:
    """The chunk's contextual subgraph (eq. 18): its direct neighbours (best gate first, then edge type and
    id; at most ``limit``) and the parts of its score."""
    gates = {m.id: m.gate for m in centre.messages}
    links = [link for link in cg.neighbours(centre.id) if _allowed(cg, link.id, allowed)]
    links.sort(key=lambda link: (-gates.get(link.id, 0.0), link.edge_type, link.id, link.direction))
    return {
        "neighbors": [
            {**asdict(link), "gate": round(gates.get(link.id, 0.0), 6)} for link in links[:limit]
        ],
        "n_neighbors": len(links),
        "score": centre.score,
        "own": centre.own,
        "dense": centre.dense,
        "sparse": centre.sparse,
        "message": centre.message,
    }


# ------------------------------------------------------------------------------------------ the retriever


def lesegr(
    ctx: RetrievalContext, query: str, k: int, params: LeSeGRParams, filters: Filters | None = None
) -> dict[str, CentreScore]:
    """Score the candidate centres of ``query`` by LeSeGR (all of them, unranked)."""
    cand = candidates(ctx, query, k, params, filters)
    if not cand.centres:
        return {}
    cg = chunk_graph(ctx)
    senders = message_senders(cg, cand.centres, cand.sparse, ctx.allowed_docs(filters), params.max_messages)
    wanted = set(cand.centres).union(*senders.values())
    vectors = unit_vectors(ctx, sorted(wanted))
    return propagate(cand.centres, senders, ctx.query_vector(query), vectors, cand.sparse, cand.sparse_max, params)


def retrieve(ctx: RetrievalContext, query: str, k: int = 10, filters: Filters | None = None) -> RetrievalResult:
    params = LeSeGRParams()
    scores = lesegr(ctx, query, k, params, filters)
    order: list[ScoredId] = ranked({cid: s.score for cid, s in scores.items()})
    items = [
        Scored(id=h.id, score=h.score, via=[m.id for m in scores[h.id].messages if m.contribution > 0][:3])
        for h in order
    ]
    evidence = ctx.evidence(items, k, filters)
    cg = chunk_graph(ctx)
    allowed = ctx.allowed_docs(filters)
    subgraphs = {
        e.chunk_id: contextual_subgraph(cg, scores[e.chunk_id], allowed, params.context_neighbours) for e in evidence
    }
    return RetrievalResult(
        strategy="lesegr",
        query=query,
        k=k,
        evidence=evidence,
        context={"subgraphs": subgraphs, "centres": len(scores), "params": params.model_dump()},
    )

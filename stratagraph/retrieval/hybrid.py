"""``hybrid``: HybridRAG's combined context, VectorRAG + GraphRAG (HybridRAG §4.2-4.4).

* **Vector context** (§4.2): the top dense chunks for the question, metadata-filtered (the paper filters
  by company, quarter and year).
* **Graph context** (§4.3): the entities the question names (query linking: exact name/alias n-grams and
  spaCy mentions matched by embedding) and their depth-1 neighbourhood ("a depth-first search constrained
  by a depth of one from the specified entity"): the facts they take part in (``IN_FACT``) and the binary
  triples around them (``RELATED``, either direction, with the predicate). Only facts and triples of
  allowed documents are kept (their ``doc_ids`` checked against the filter). Each query entity spreads
  its link score evenly over its graph items (its facts and triples), so an item weighs the sum of the
  shares of the query entities it touches: the few facts of a specific entity outrank the hundreds of a
  hub ("American"). At most ``max_facts`` facts and ``max_triples`` triples are kept, by weight, then
  fact confidence, then id.
* **Combined context** (§4.4): the vector context first, then the graph context; both go to ``context``
  so a workflow can put them into one prompt.

The entity -> facts adjacency and each entity's ``MENTIONS`` chunks come from the shared
:class:`~stratagraph.retrieval.index.GraphIndex` (built once per graph generation), so a hub entity costs a
lookup; the RELATED triples around the question's entities (with their predicates) are read per question.

Passage ranking (ours: the paper concatenates contexts for the generator; a retriever must rank chunks).
The graph context's supporting chunks are a fact's ``SUPPORTED_BY`` chunks and a triple's
``props.chunks`` (or, when the edge carries none, the chunks that ``MENTION`` both of its ends), all in
allowed documents. A chunk scores the sum of the weights of the graph items it supports, so a passage
backing several of the question's facts ranks first.
That list is fused with the dense list by RRF (k = 60, Cormack et al.; the constant BiG-RAG §4.2.3 uses
too), the vector list first.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval.base import RRF_K, Filters, RetrievalContext, RetrievalResult, Scored, ranked
from stratagraph.retrieval.dual_path import fact_descriptions, fuse_rankings, in_allowed
from stratagraph.retrieval.query_linking import LinkedEntity, link_query
from stratagraph.schema import Edge, EdgeType, NodeLabel

NAME = "hybrid"


class HybridParams(BaseModel):
    """One configuration for every corpus."""

    link_top_k: int = Field(5, ge=1, description="ours: similar entities per question mention (query linking's)")
    link_min_score: float | None = Field(None, description="ours: cosine floor of a similar entity (None: the embedding model's)")
    max_facts: int = Field(50, ge=0, description="ours: facts in the graph context (a prompt has to hold it)")
    max_triples: int = Field(50, ge=0, description="ours: triples in the graph context")
    dense_depth: int = Field(50, ge=1, description="ours: how deep the dense list is read for the fused ranking")
    rrf_k: int = Field(RRF_K, ge=1, description="paper (Cormack et al.; BiG-RAG §4.2.3): the RRF constant")


DEFAULTS = HybridParams()


class GraphFact(BaseModel):
    id: str
    description: str
    weight: float  # sum over its query entities of their share (link score / number of their graph items)
    confidence: float = 1.0
    entities: list[str] = Field(default_factory=list)  # the query entities it hangs from


class GraphTriple(BaseModel):
    subject: str
    predicate: str
    object: str
    subject_id: str
    object_id: str
    weight: float
    doc_ids: list[str] = Field(default_factory=list)
    chunks: list[str] = Field(default_factory=list)  # props.chunks of the RELATED edge, when it has them


class GraphContext(BaseModel):
    """The GraphRAG side of HybridRAG: query entities, their facts and their 1-hop triples."""

    entities: list[LinkedEntity] = Field(default_factory=list)
    facts: list[GraphFact] = Field(default_factory=list)
    triples: list[GraphTriple] = Field(default_factory=list)

    def as_context(self) -> dict:
        return {
            "entities": [
                {"id": e.entity_id, "name": e.name, "score": e.score, "mention": e.mention, "how": e.how}
                for e in self.entities
            ],
            "facts": [{"id": f.id, "description": f.description} for f in self.facts],
            "triples": [{"subject": t.subject, "predicate": t.predicate, "object": t.object} for t in self.triples],
        }


# ------------------------------------------------------------------------------------------ helpers


def predicate_of(edge: Edge) -> str:
    """A RELATED edge's predicate (its key when the props lack one)."""
    return str(edge.props.get("predicate") or edge.key or "related_to")


# ------------------------------------------------------------------------------------------ graph context


def graph_context(
    ctx: RetrievalContext,
    linked: Sequence[LinkedEntity],
    allowed: set[str] | None = None,
    params: HybridParams = DEFAULTS,
) -> GraphContext:
    """The depth-1 neighbourhood of the linked query entities (HybridRAG §4.3): their facts and the
    RELATED triples that touch them, restricted to documents in ``allowed`` (None: no filter)."""
    if not linked:
        return GraphContext()
    ix = ctx.index()
    seed_ids = sorted({e.entity_id for e in linked})
    around = ctx.graph.get_edges(src=seed_ids, types=[EdgeType.RELATED]) + ctx.graph.get_edges(
        dst=seed_ids, types=[EdgeType.RELATED]
    )
    related = sorted({e.id: e for e in around}.values(), key=lambda e: e.id)
    nodes = {n.id: n for n in ctx.graph.get_nodes(sorted({*seed_ids, *(x for e in related for x in (e.src, e.dst))}))}
    entities = [
        e
        for e in linked
        if (n := nodes.get(e.entity_id)) is not None and n.label == NodeLabel.ENTITY and in_allowed(n.doc_ids, allowed)
    ]
    seeds = {e.entity_id: e.score for e in entities}
    facts_of = {
        eid: [f for f in ix.facts_of_entity(eid) if in_allowed(ix.fact_docs[ix.facts.pos[f]], allowed)]
        for eid in sorted(seeds)
    }
    triple_edges = [
        e
        for e in related
        if (e.src in seeds or e.dst in seeds) and e.src in nodes and e.dst in nodes and in_allowed(e.doc_ids, allowed)
    ]
    degree = {eid: len(fs) for eid, fs in facts_of.items()}
    for e in triple_edges:
        for end in sorted({e.src, e.dst} & seeds.keys()):
            degree[end] += 1
    share = {s: seeds[s] / degree[s] for s in degree if degree[s]}  # link score spread over its items
    facts: dict[str, GraphFact] = {}
    for eid, fact_ids in facts_of.items():
        for fid in fact_ids:
            item = facts.get(fid)
            if item is None:
                conf = float(ix.fact_confidence[ix.facts.pos[fid]])
                item = facts[fid] = GraphFact(id=fid, description="", weight=0.0, confidence=conf)
            item.weight += share[eid]
            item.entities.append(eid)
    triples: list[GraphTriple] = []
    for edge in triple_edges:
        subj, obj = nodes[edge.src], nodes[edge.dst]
        triples.append(
            GraphTriple(
                subject=str(subj.props.get("name") or subj.id),
                predicate=predicate_of(edge),
                object=str(obj.props.get("name") or obj.id),
                subject_id=subj.id,
                object_id=obj.id,
                weight=sum(share[end] for end in sorted({edge.src, edge.dst} & share.keys())),
                doc_ids=list(edge.doc_ids),
                chunks=[str(c) for c in edge.props.get("chunks") or []],
            )
        )
    fact_list = sorted(facts.values(), key=lambda f: (-round(f.weight, 12), -f.confidence, f.id))[: params.max_facts]
    described = fact_descriptions(ctx, [f.id for f in fact_list])
    for f in fact_list:
        f.description = described.get(f.id, "")
    triples.sort(key=lambda t: (-round(t.weight, 12), t.subject_id, t.predicate, t.object_id))
    return GraphContext(entities=entities, facts=fact_list, triples=triples[: params.max_triples])


# ------------------------------------------------------------------------------------------ supporting chunks


class Support(BaseModel):
    """Chunks behind each graph item: ``facts`` fact id -> chunk ids, ``triples`` triple index -> chunk ids."""

    facts: dict[str, list[str]] = Field(default_factory=dict)
    triples: dict[int, list[str]] = Field(default_factory=dict)


def supporting_chunks(ctx: RetrievalContext, graph: GraphContext, allowed: set[str] | None = None) -> Support:
    """Facts' ``SUPPORTED_BY`` chunks; for a triple its edge's ``props.chunks``, else the chunks that
    ``MENTION`` both ends within the triple's documents. Only chunks of ``allowed`` documents (checked on
    the chunk nodes, read in one batch)."""
    ix = ctx.index()
    fact_chunks = {f.id: frozenset(ix.chunks_of_fact(f.id)) for f in graph.facts}

    def mentioned_in(entity_id: str) -> frozenset[str]:
        i = ix.entities.pos.get(entity_id)
        return frozenset() if i is None else frozenset(ix.chunks.ids[c] for c in ix.row(ix.entity_chunk, i))

    triple_chunks: dict[int, frozenset[str]] = {}
    for i, t in enumerate(graph.triples):
        triple_chunks[i] = frozenset(t.chunks) if t.chunks else mentioned_in(t.subject_id) & mentioned_in(t.object_id)
    wanted = sorted({c for cs in (*fact_chunks.values(), *triple_chunks.values()) for c in cs})
    doc_of = {c: d for c in wanted if (d := ix.chunk_doc_of(c)) is not None}
    ok = {c for c, d in doc_of.items() if allowed is None or d in allowed}
    out = Support()
    for fid, chunks in fact_chunks.items():
        if keep := sorted(chunks & ok):
            out.facts[fid] = keep
    for i, chunks in triple_chunks.items():
        docs = set(graph.triples[i].doc_ids)
        keep = sorted(c for c in chunks & ok if graph.triples[i].chunks or not docs or doc_of[c] in docs)
        if keep:
            out.triples[i] = keep
    return out


def graph_chunk_ranking(graph: GraphContext, support: Support) -> list[Scored]:
    """A chunk scores the sum of the weights of the graph items (facts, triples) it supports; best first,
    ties by id; ``via`` names those items (fact ids, ``subject|predicate|object`` for triples)."""
    scores: dict[str, float] = {}
    via: dict[str, list[str]] = {}

    def add(chunks: Sequence[str], weight: float, label: str) -> None:
        for c in chunks:
            scores[c] = scores.get(c, 0.0) + weight
            via.setdefault(c, []).append(label)

    for f in graph.facts:
        add(support.facts.get(f.id, []), f.weight, f.id)
    for i, t in enumerate(graph.triples):
        add(support.triples.get(i, []), t.weight, f"{t.subject_id}|{t.predicate}|{t.object_id}")
    return [Scored(id=s.id, score=s.score, via=via[s.id]) for s in ranked(scores)]


def fuse_passages(dense: Sequence[ScoredId], graph_chunks: Sequence[Scored], k: int = RRF_K) -> list[Scored]:
    """RRF of the vector list and the graph context's supporting chunks (HybridRAG §4.4 order: vector
    first; with equal weights the order only matters for ties, which break by id)."""
    return fuse_rankings([dense, graph_chunks], k=k)


# ------------------------------------------------------------------------------------------ retriever


def retrieve(
    ctx: RetrievalContext,
    query: str,
    k: int = 10,
    filters: Filters | None = None,
    params: HybridParams = DEFAULTS,
) -> RetrievalResult:
    allowed = ctx.allowed_docs(filters)
    dense = ctx.chunk_scores(query, max(params.dense_depth, k), filters)
    linked = link_query(ctx, query, top_k=params.link_top_k, min_score=params.link_min_score).entities
    graph = graph_context(ctx, linked, allowed, params)
    support = supporting_chunks(ctx, graph, allowed)
    passages = fuse_passages(dense, graph_chunk_ranking(graph, support), k=params.rrf_k)
    return RetrievalResult(
        strategy=NAME,
        query=query,
        k=k,
        evidence=ctx.evidence(passages, k, filters),
        context={
            "vector_context": [d.id for d in dense[:k]],
            "graph_context": graph.as_context(),
            "params": params.model_dump(),
        },
    )

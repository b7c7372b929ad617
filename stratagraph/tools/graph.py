"""``personalized_pagerank``: rank the graph's nodes by closeness to seed entities a model chose.

Personalised PageRank (HippoRAG §2) with the reset vector on the seeds, over the same walk graph and with
the same PageRank as the ``ppr`` strategy (:mod:`stratagraph.retrieval.ppr`, one implementation): Chunk
-MENTIONS- Entity, Entity -IN_FACT- Fact -SUPPORTED_BY- Chunk (BiG-RAG's bipartite graph), Entity -RELATED-
Entity and Entity -DESCRIBED_BY- its page's chunks, walked both ways with edge weights. Chunks, entities
and facts are ranked by their own score; a section or document by the summed score of its chunks (its own
chunks for a section). The seeds themselves are not listed (the model already has them).
"""

from __future__ import annotations

from typing import Literal

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

import numpy as np

from stratagraph.graph_store.base import ScoredId
from stratagraph.retrieval import RetrievalContext, Scored
from stratagraph.retrieval.base import ranked
from stratagraph.retrieval.ppr import PPRParams, walk_graph, walk_scores
from stratagraph.retrieval.dual_path import node_confidence
from stratagraph.schema import Node, NodeLabel
from stratagraph.tools.common import (
    MAX_K,
    ToolOutput,
    build_tool,
    clip,
    entity_label,
    evidence_documents,
    find_entity,
    format_evidence,
    node_document,
    suggestion_text,
)

MAX_SEEDS = 20

Label = Literal["Chunk", "Entity", "Fact", "Section", "Document"]


class PersonalizedPageRankArgs(BaseModel):
    seeds: list[str] = Field(
        min_length=1,
        max_length=MAX_SEEDS,
        description="Where the walk starts: entity ids ('ent:...', from search_entities) or exact entity names; "
        "any other node id (a chunk or fact id) works too. 1-20 seeds.",
    )
    k: int = Field(10, ge=1, le=MAX_K, description="How many ranked nodes to return (1-50).")
    labels: list[Label] = Field(
        default_factory=lambda: ["Chunk"],
        min_length=1,
        description="Which kinds of node to rank: 'Chunk' (passages, the default), 'Entity', 'Fact', "
        "'Section', 'Document'.",
    )


def resolve_seeds(ctx: RetrievalContext, seeds: list[str]) -> tuple[list[Node], list[str]]:
    """Seeds as nodes (an existing node id, else an entity name), and the ones not found."""
    refs = list(dict.fromkeys(s.strip() for s in seeds if s.strip()))
    by_id = {n.id: n for n in ctx.graph.get_nodes(refs)}
    found: dict[str, Node] = {}
    missing = []
    for ref in refs:
        node = by_id.get(ref) or find_entity(ctx, ref)
        if node is None:
            missing.append(ref)
        else:
            found.setdefault(node.id, node)
    return list(found.values()), missing


def rank_nodes(ctx: RetrievalContext, seeds: list[str], labels: list[str], limit: int) -> list[ScoredId]:
    """Nodes of ``labels`` by personalised PageRank from ``seeds`` (equal weights; seeds that are sections or
    documents start from their chunks), best first, then id; only nodes with a positive score."""
    params = PPRParams()
    wg = walk_graph(ctx, params)
    ix = ctx.index()
    reset: dict[str, float] = {}
    for seed in seeds:
        members = [seed] if seed in wg.index else list(ix.page_chunks(seed))
        for m in members:
            reset[m] = reset.get(m, 0.0) + 1.0 / len(members)
    scores = walk_scores(ctx, wg, reset, params)
    wanted = set(labels)
    out: dict[str, float] = {}
    tables = [ix.entities for label in ("Entity",) if label in wanted] + [ix.facts for label in ("Fact",) if label in wanted]
    for i in np.flatnonzero(scores > 0):
        nid, score = wg.ids[i], float(scores[i])
        if wg.is_chunk[i]:
            if "Chunk" in wanted:
                out[nid] = score
            j = ix.chunks.pos.get(nid)
            if j is not None and "Document" in wanted:
                out[ix.chunk_doc[j]] = out.get(ix.chunk_doc[j], 0.0) + score
            if j is not None and "Section" in wanted and ix.chunk_section[j]:
                out[ix.chunk_section[j]] = out.get(ix.chunk_section[j], 0.0) + score
        elif any(nid in table for table in tables):
            out[nid] = score
    return ranked(out, limit)


def describe_node(node: Node) -> str:
    """One line for a non-chunk node."""
    props = node.props
    if node.label == NodeLabel.ENTITY:
        return f"entity {entity_label(node)}"
    if node.label == NodeLabel.FACT:
        return f"fact [{node.id}] (confidence {node_confidence(node):.2f}) " + clip(
            str(props.get("description") or ""), 300
        )
    if node.label == NodeLabel.SECTION:
        path = " > ".join(str(p) for p in props.get("heading_path") or [props.get("title") or node.id])
        return f"section [{node.id}] {path} (document {props.get('doc_id', '')})"
    if node.label == NodeLabel.DOCUMENT:
        return f"document [{node.id}] {props.get('title') or node.id} ({props.get('source') or node.id})"
    return f"{node.label.value.lower()} [{node.id}]"


def _node_document(node: Node, score: float) -> Document:
    props = node.props
    text = str(props.get("description") or props.get("name") or props.get("title") or node.id)
    return node_document(node.label.value.lower(), node.id, text, score=score, doc_ids=list(node.doc_ids))


def personalized_pagerank(ctx: RetrievalContext, args: PersonalizedPageRankArgs) -> ToolOutput:
    seeds, missing = resolve_seeds(ctx, args.seeds)
    if not seeds:
        hint = suggestion_text(ctx, missing[0]) if missing else ""
        raise ToolException(f"none of the seeds was found: {', '.join(repr(m) for m in missing)}.{hint}")
    seed_ids = {n.id for n in seeds}
    ranking = [r for r in rank_nodes(ctx, sorted(seed_ids), args.labels, args.k + len(seed_ids)) if r.id not in seed_ids]
    ranking = ranking[: args.k]
    nodes = {n.id: n for n in ctx.graph.get_nodes([r.id for r in ranking])}
    chunk_items = [Scored(id=r.id, score=r.score, via=sorted(seed_ids)) for r in ranking if r.id in nodes and nodes[r.id].label == NodeLabel.CHUNK]
    evidence = ctx.evidence(chunk_items)
    others = [(nodes[r.id], r.score) for r in ranking if r.id in nodes and nodes[r.id].label != NodeLabel.CHUNK]

    text = [f"Personalised PageRank from {', '.join(describe_node(n) for n in seeds)}:"]
    if missing:
        text.append(f"(seeds not found, ignored: {', '.join(repr(m) for m in missing)})")
    if not evidence and not others:
        text.append(f"Nothing of kind {', '.join(args.labels)} is connected to the seeds.")
    if others:
        text.append("Nodes, closest first:\n" + "\n".join(f"- {describe_node(n)} score {s:.5f}" for n, s in others))
    if evidence:
        text.append("Passages, closest first (cite as [n]):\n" + format_evidence(evidence))
    docs = [_node_document(n, s) for n, s in others] + evidence_documents(evidence)
    return "\n\n".join(text), docs


def personalized_pagerank_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "personalized_pagerank",
        "Rank passages (or entities, facts, sections) by how closely the knowledge graph connects them to "
        "seed entities, with personalised PageRank. Use it for multi-hop questions once you know the entities "
        "involved: the top passages link the seeds to each other and to what lies one or two hops away.",
        PersonalizedPageRankArgs,
        personalized_pagerank,
    )

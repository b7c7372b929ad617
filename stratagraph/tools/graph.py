"""``personalized_pagerank``: rank the graph's nodes by closeness to seed entities a model chose.

Personalised PageRank (HippoRAG §2; the walk ``stratagraph.retrieval.ppr`` builds on) with the reset vector
on the seeds, run by ``GraphStore.personalized_pagerank`` over the knowledge layer: Chunk -MENTIONS- Entity,
Entity -IN_FACT- Fact -SUPPORTED_BY- Chunk (BiG-RAG's bipartite graph) and Entity -RELATED- Entity, walked
both ways with edge weights; when sections or documents are asked for, the structure edges (HAS_CHUNK,
HAS_SECTION, DESCRIBED_BY) join the walk so they can be reached. Damping 0.5 as in HippoRAG. The seeds
themselves are not listed (the model already has them).
"""

from __future__ import annotations

from typing import Literal

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from stratagraph.retrieval import RetrievalContext, Scored
from stratagraph.retrieval.dual_path import node_confidence
from stratagraph.schema import EdgeType, Node, NodeLabel
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

PPR_DAMPING = 0.5  # HippoRAG's reset probability 0.5
MAX_SEEDS = 20
KNOWLEDGE_EDGES = (EdgeType.MENTIONS, EdgeType.IN_FACT, EdgeType.SUPPORTED_BY, EdgeType.RELATED)
STRUCTURE_EDGES = (EdgeType.HAS_CHUNK, EdgeType.HAS_SECTION, EdgeType.DESCRIBED_BY)

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


def _edge_types(labels: list[str]) -> list[EdgeType]:
    types = list(KNOWLEDGE_EDGES)
    if {"Section", "Document"} & set(labels):
        types += STRUCTURE_EDGES
    return types


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
    ranking = ctx.graph.personalized_pagerank(
        dict.fromkeys(sorted(seed_ids), 1.0),
        types=_edge_types(args.labels),
        damping=PPR_DAMPING,
        labels=args.labels,
        top_k=args.k + len(seed_ids),
    )
    ranking = [r for r in ranking if r.id not in seed_ids][: args.k]
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


def personalized_pagerank_tool(ctx: RetrievalContext) -> StructuredTool:
    return build_tool(
        ctx,
        "personalized_pagerank",
        "Rank passages (or entities, facts, sections) by how closely the knowledge graph connects them to "
        "seed entities, with personalised PageRank. Use it for multi-hop questions once you know the entities "
        "involved: the top passages link the seeds to each other and to what lies one or two hops away.",
        PersonalizedPageRankArgs,
        personalized_pagerank,
    )

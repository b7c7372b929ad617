"""Tools over the knowledge layer: entities, n-ary facts and binary triples.

* ``search_entities``: entities whose name or alias is nearest the text (BiG-RAG §4.2's entity path: the
  top-k_E entities by embedding similarity of names; one row per entity though the ``entities`` collection
  holds a row per name and alias).
* ``search_facts``: facts whose description is nearest the text (BiG-RAG §4.2's fact path: top-k_F facts by
  similarity), each with its confidence (BiG-RAG §3's ``conf``), its entities (the IN_FACT edges of the
  bipartite graph), its arguments with their roles (KAG §2.2's SPO view, one line such as
  ``roles: direct(object=Quiet Harbour, agent=Ines Marlow)``) and its supporting chunks (SUPPORTED_BY
  provenance, KAG §2.2's mutual index).
* ``search_concepts``: the entities of a kind through the concept layer (KAG §2.4: BELONGS_TO, then IS_A).
* ``expand_entity``: one hop around an entity: its facts, its RELATED triples (HybridRAG §4.4's GraphRAG
  neighbourhood) and the chunks that MENTION it (KAG mutual index), most mentions first.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from stratagraph.retrieval import RetrievalContext, Scored
from stratagraph.retrieval.base import Evidence, vector_filters
from stratagraph.retrieval.concepts import KindMatch, entities_of_kind
from stratagraph.retrieval.dual_path import node_confidence
from stratagraph.retrieval.hybrid import predicate_of
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel
from stratagraph.text.roles import format_arguments
from stratagraph.tools.common import (
    FACT_COLLECTION,
    MAX_K,
    FilterValue,
    ToolOutput,
    build_tool,
    clip,
    entity_label,
    evidence_documents,
    format_evidence,
    node_document,
    plural,
    require_entity,
    similar_entities,
)

# ------------------------------------------------------------------------------------------ arguments


class SearchEntitiesArgs(BaseModel):
    query: str = Field(
        min_length=1,
        description="A name or short description of the entity to find, e.g. 'Acme Corporation' or 'the CEO of Acme'.",
    )
    k: int = Field(5, ge=1, le=MAX_K, description="How many entities to return (1-50).")


class SearchFactsArgs(BaseModel):
    query: str = Field(
        min_length=1,
        description="A statement or question the facts should be about, e.g. 'Acme revenue in 2023'.",
    )
    k: int = Field(5, ge=1, le=MAX_K, description="How many facts to return (1-50).")
    filters: dict[str, FilterValue] = Field(
        default_factory=dict,
        description="Document metadata every fact's document must match, e.g. {\"year\": \"2024\"}. Empty: no filter.",
    )


class ExpandEntityArgs(BaseModel):
    entity: str = Field(
        min_length=1,
        description="The entity's id (as 'ent:...', from search_entities) or its exact name or alias.",
    )
    k: int = Field(10, ge=1, le=MAX_K, description="At most this many facts, relations and passages each (1-50).")
    kind: str | None = Field(
        None,
        description="Optional: a kind of thing, e.g. 'composer' or 'city'; also lists the entities one hop away "
        "(sharing a fact or a relation) that are of that kind (BELONGS_TO, then IS_A in the concept layer).",
    )


class SearchConceptsArgs(BaseModel):
    kind: str = Field(
        min_length=1, description="A kind of thing the question asks for, e.g. 'composer', 'port cities', 'river'."
    )
    k: int = Field(10, ge=1, le=MAX_K, description="How many entities to return (1-50).")


# ------------------------------------------------------------------------------------------ facts


@dataclass
class FactInfo:
    node: Node
    entities: list[Node] = field(default_factory=list)  # sorted by name, then id
    chunk_ids: list[str] = field(default_factory=list)  # sorted
    #: the fact's arguments with their roles, as stored (predicate, role, text, start, end, prep, label,
    #: entity; offsets in the text of the fact's first chunk), by start offset then role
    arguments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def predicate(self) -> str:
        """The lemma of the fact's head verb ("" when unknown)."""
        return str(self.node.props.get("predicate") or "")


def _stored_arguments(node: Node) -> list[dict[str, Any]]:
    """A fact node's ``arguments`` prop (copies; anything but a list of mappings reads as none)."""
    found = node.props.get("arguments")
    return [dict(a) for a in found if isinstance(a, dict)] if isinstance(found, list) else []


def roles_text(info: FactInfo) -> str:
    """The fact's arguments for a model to read, one ``verb(role=text, ...)`` group per verb, the fact's own
    predicate first: ``be(subject=Quiet Harbour, attribute=a 1998 drama); direct(object=Quiet Harbour,
    agent=Ines Marlow)``. Empty when the fact has no arguments."""
    groups: dict[str, list[dict[str, Any]]] = {info.predicate: []} if info.predicate else {}
    for arg in info.arguments:
        groups.setdefault(str(arg.get("predicate") or ""), []).append(arg)
    return "; ".join(format_arguments(verb, args) for verb, args in groups.items() if args)


def fact_details(ctx: RetrievalContext, fact_ids: list[str]) -> dict[str, FactInfo]:
    """Each fact with its entities (IN_FACT), supporting chunk ids (SUPPORTED_BY) and arguments with their
    roles (its ``arguments`` prop), from the shared graph index; the fact and entity nodes in one read."""
    if not fact_ids:
        return {}
    ix = ctx.index()
    entities_of = {f: ix.entities_of_fact(f) for f in fact_ids}
    wanted = list(dict.fromkeys([*fact_ids, *(e for es in entities_of.values() for e in es)]))
    nodes = {n.id: n for n in ctx.graph.get_nodes(wanted)}
    out = {f: FactInfo(node=nodes[f]) for f in fact_ids if f in nodes and nodes[f].label == NodeLabel.FACT}
    for f, info in out.items():
        info.entities = [nodes[e] for e in entities_of[f] if e in nodes]
        info.chunk_ids = ix.chunks_of_fact(f)
        info.arguments = _stored_arguments(info.node)
    for info in out.values():
        info.entities.sort(key=lambda n: (str(n.props.get("name") or "").casefold(), n.id))
        info.chunk_ids = sorted(set(info.chunk_ids))
    return out


def chunk_facts(ctx: RetrievalContext, chunk_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The stored facts each chunk supports (KAG's mutual index, chunk -> facts: ``SUPPORTED_BY`` read
    backwards), as their props (type, description, quantities, arguments), by chunk id, in one read."""
    ix = ctx.index()
    wanted: dict[str, list[str]] = {}
    for c in dict.fromkeys(chunk_ids):
        pos = ix.chunks.pos.get(c)
        if pos is not None:
            wanted[c] = [ix.facts.ids[int(j)] for j in ix.row(ix.chunk_fact, pos)]
    nodes = {n.id: n for n in ctx.graph.get_nodes(sorted({f for fs in wanted.values() for f in fs}))}
    return {c: [dict(nodes[f].props) for f in fs if f in nodes] for c, fs in wanted.items()}


def _fact_line(info: FactInfo, cite: dict[str, int], score: float | None = None) -> str:
    props = info.node.props
    bits = [f"confidence {node_confidence(info.node):.2f}"]
    if props.get("type"):
        bits.append(f"type {props['type']}")
    if score is not None:
        bits.append(f"similarity {score:.3f}")
    line = f"- [{info.node.id}] ({', '.join(bits)}) {clip(str(props.get('description') or ''), 500)}"
    roles = roles_text(info)
    if roles:
        line += "\n  roles: " + clip(roles, 500)
    if info.entities:
        line += "\n  entities: " + "; ".join(entity_label(e) for e in info.entities)
    if info.chunk_ids:
        refs = [f"{c} [{cite[c]}]" if c in cite else c for c in info.chunk_ids]
        line += "\n  supported by chunks: " + ", ".join(refs)
    return line


def _fact_document(info: FactInfo, score: float | None = None) -> Document:
    props = info.node.props
    meta = {
        "confidence": node_confidence(info.node),
        "type": str(props.get("type") or ""),
        "entity_ids": [e.id for e in info.entities],
        "entities": [str(e.props.get("name") or e.id) for e in info.entities],
        "chunk_ids": list(info.chunk_ids),
        "doc_ids": list(info.node.doc_ids),
        "section_id": str(props.get("section_id") or ""),
        "predicate": info.predicate,
        "arguments": [dict(a) for a in info.arguments],
    }
    if props.get("quantities"):
        meta["quantities"] = props["quantities"]
    if score is not None:
        meta["score"] = score
    return node_document("fact", info.node.id, str(props.get("description") or ""), **meta)


def _supporting_evidence(
    ctx: RetrievalContext, facts: list[tuple[FactInfo, float]], filters: dict | None = None
) -> list[Evidence]:
    """The chunks supporting the listed facts, in fact order (each chunk once, ``via`` its facts)."""
    via: dict[str, list[str]] = defaultdict(list)
    order: dict[str, float] = {}
    for info, score in facts:
        for c in info.chunk_ids:
            via[c].append(info.node.id)
            order.setdefault(c, score)
    items = [Scored(id=c, score=s, via=via[c]) for c, s in order.items()]
    return ctx.evidence(items, None, filters)


# ------------------------------------------------------------------------------------------ search_entities


def search_entities(ctx: RetrievalContext, args: SearchEntitiesArgs) -> ToolOutput:
    hits = similar_entities(ctx, args.query, args.k)
    nodes = {n.id: n for n in ctx.graph.get_nodes([e for e, _, _ in hits]) if n.label == NodeLabel.ENTITY}
    lines, docs = [], []
    for eid, score, matched in hits:
        node = nodes.get(eid)
        if node is None:  # a vector row left behind by a deleted entity
            continue
        props = node.props
        name = str(props.get("name") or eid)
        head = f"{len(lines) + 1}. {entity_label(node)} similarity {score:.3f}"
        if matched.casefold() != name.casefold():
            head += f" (matched {matched!r})"
        body = [head]
        if props.get("description"):
            body.append(f"   {clip(str(props['description']), 400)}")
        aliases = [str(a) for a in props.get("aliases") or []]
        if aliases:
            body.append("   aliases: " + ", ".join(aliases[:10]))
        lines.append("\n".join(body))
        docs.append(
            node_document(
                "entity",
                eid,
                str(props.get("description") or name),
                name=name,
                type=str(props.get("type") or ""),
                aliases=aliases,
                mentions=int(props.get("mentions") or 0),
                score=score,
                matched=matched,
            )
        )
    if not lines:
        return f"No entities found for {args.query!r}.", []
    head = f"{plural(len(lines), 'entity', 'entities')} for {args.query!r} (expand_entity gives an entity's facts, relations and passages):"
    return head + "\n" + "\n".join(lines), docs


# ------------------------------------------------------------------------------------------ search_facts


def search_facts(ctx: RetrievalContext, args: SearchFactsArgs) -> ToolOutput:
    hits = ctx.vectors.query(
        FACT_COLLECTION, embedding=ctx.query_vector(args.query), k=args.k, filters=vector_filters(args.filters)
    )
    details = fact_details(ctx, [h.id for h in hits])
    facts = [(details[h.id], h.score) for h in hits if h.id in details]
    if not facts:
        return f"No facts found for {args.query!r}.", []
    evidence = _supporting_evidence(ctx, facts, args.filters or None)
    cite = {e.chunk_id: e.rank for e in evidence}
    lines = [f"{plural(len(facts), 'fact')} for {args.query!r} (best first):"]
    lines += [_fact_line(info, cite, score) for info, score in facts]
    text = "\n".join(lines)
    if evidence:
        text += "\n\nSupporting passages (cite as [n]):\n" + format_evidence(evidence)
    docs = [_fact_document(info, score) for info, score in facts] + evidence_documents(evidence)
    return text, docs


# ------------------------------------------------------------------------------------------ expand_entity


def _entity_facts(ctx: RetrievalContext, entity_id: str, k: int) -> tuple[list[FactInfo], int]:
    """The entity's facts, most confident first (then id), at most ``k``; and how many it has."""
    fact_ids = ctx.index().facts_of_entity(entity_id)
    nodes = [n for n in ctx.graph.get_nodes(fact_ids) if n.label == NodeLabel.FACT]
    nodes.sort(key=lambda n: (-node_confidence(n), n.id))
    chosen = [n.id for n in nodes[:k]]
    details = fact_details(ctx, chosen)
    return [details[f] for f in chosen if f in details], len(nodes)


def _relations(ctx: RetrievalContext, entity_id: str, k: int) -> tuple[list[tuple[Edge, Node, Node]], int]:
    """RELATED triples with the entity as subject or object: heaviest first, then predicate, then edge id."""
    edges = ctx.graph.get_edges(src=entity_id, types=[EdgeType.RELATED])
    edges += [e for e in ctx.graph.get_edges(dst=entity_id, types=[EdgeType.RELATED]) if e.src != entity_id]
    edges.sort(key=lambda e: (-e.weight, predicate_of(e), e.id))
    chosen = edges[:k]
    nodes = {n.id: n for n in ctx.graph.get_nodes(sorted({x for e in chosen for x in (e.src, e.dst)}))}
    out = [(e, nodes[e.src], nodes[e.dst]) for e in chosen if e.src in nodes and e.dst in nodes]
    return out, len(edges)


def _mentioning_chunks(ctx: RetrievalContext, entity_id: str, k: int) -> tuple[list[Evidence], int]:
    """Chunks that MENTION the entity, most mentions (edge weight) first, then chunk id."""
    edges = ctx.graph.get_edges(dst=entity_id, types=[EdgeType.MENTIONS])
    counts: dict[str, float] = {}
    for e in edges:
        counts[e.src] = max(counts.get(e.src, 0.0), e.weight)
    ranked = sorted(counts.items(), key=lambda p: (-p[1], p[0]))
    evidence = ctx.evidence([Scored(id=c, score=w, via=[entity_id]) for c, w in ranked], k)
    return evidence, len(counts)


def _neighbours_of_kind(ctx: RetrievalContext, entity_id: str, kind: str, k: int) -> list[KindMatch]:
    """Entities sharing a fact or a RELATED triple with ``entity_id`` that are of ``kind``."""
    graph = ctx.graph
    facts = [r.other for r in graph.neighbourhood([entity_id], [EdgeType.IN_FACT], "out")]
    near = {r.other for r in graph.neighbourhood(facts, [EdgeType.IN_FACT], "in")} if facts else set()
    near |= {r.other for r in graph.neighbourhood([entity_id], [EdgeType.RELATED], "both")}
    near.discard(entity_id)
    return [m for m in entities_of_kind(graph, kind, limit=10_000) if m.entity_id in near][:k]


def search_concepts(ctx: RetrievalContext, args: SearchConceptsArgs) -> ToolOutput:
    matches = entities_of_kind(ctx.graph, args.kind, args.k)
    if not matches:
        return f"No entity of kind {args.kind!r} in the concept layer (try search_entities).", []
    lines = [f"- {m.name} [{m.entity_id}] ({m.concept}" + (f", {m.depth} IS_A step(s) below" if m.depth else "") + ")"
             for m in matches]  # fmt: skip
    head = f"{plural(len(lines), 'entity', 'entities')} of kind {args.kind!r} (expand_entity gives each one's facts):"
    docs = [node_document("entity", m.entity_id, m.name, name=m.name, concept=m.concept, depth=m.depth) for m in matches]
    return "\n".join([head, *lines]), docs


def expand_entity(ctx: RetrievalContext, args: ExpandEntityArgs) -> ToolOutput:
    entity = require_entity(ctx, args.entity)
    props = entity.props
    facts, n_facts = _entity_facts(ctx, entity.id, args.k)
    relations, n_rel = _relations(ctx, entity.id, args.k)
    evidence, n_chunks = _mentioning_chunks(ctx, entity.id, args.k)
    cite = {e.chunk_id: e.rank for e in evidence}

    text = [f"Entity: {entity_label(entity)}"]
    if props.get("description"):
        text.append(f"Description: {clip(str(props['description']), 600)}")
    if props.get("aliases"):
        text.append("Aliases: " + ", ".join(str(a) for a in props["aliases"]))
    text.append(f"\nFacts ({len(facts)} of {n_facts}, most confident first):")
    text += [_fact_line(f, cite) for f in facts] or ["- none"]
    text.append(f"\nRelations ({len(relations)} of {n_rel}):")
    text += [f"- {_triple_text(e, s, o)}" for e, s, o in relations] or ["- none"]
    if args.kind:
        text.append(f"\nNeighbours of kind {args.kind!r}:")
        text += [f"- {m.name} [{m.entity_id}] ({m.concept})" for m in _neighbours_of_kind(ctx, entity.id, args.kind, args.k)] or ["- none"]
    text.append(f"\nPassages mentioning it ({len(evidence)} of {n_chunks}, most mentions first; cite as [n]):")
    text.append(format_evidence(evidence) if evidence else "none")

    docs = [
        node_document(
            "entity",
            entity.id,
            str(props.get("description") or props.get("name") or entity.id),
            name=str(props.get("name") or entity.id),
            type=str(props.get("type") or ""),
            aliases=[str(a) for a in props.get("aliases") or []],
            mentions=int(props.get("mentions") or 0),
        )
    ]
    docs += [_fact_document(f) for f in facts]
    docs += [_triple_document(e, s, o) for e, s, o in relations]
    docs += evidence_documents(evidence)
    return "\n".join(text), docs


def _name(node: Node) -> str:
    return str(node.props.get("name") or node.id)


def _triple_text(edge: Edge, subj: Node, obj: Node) -> str:
    chunks = [str(c) for c in edge.props.get("chunks") or []]
    text = f"{_name(subj)} [{subj.id}] --{predicate_of(edge)}--> {_name(obj)} [{obj.id}]"
    return text + (f" (chunks: {', '.join(chunks)})" if chunks else "")


def _triple_document(edge: Edge, subj: Node, obj: Node) -> Document:
    return node_document(
        "triple",
        edge.id,
        f"{_name(subj)} {predicate_of(edge)} {_name(obj)}",
        subject_id=subj.id,
        subject=_name(subj),
        predicate=predicate_of(edge),
        object_id=obj.id,
        object=_name(obj),
        weight=edge.weight,
        chunk_ids=[str(c) for c in edge.props.get("chunks") or []],
        doc_ids=list(edge.doc_ids),
    )


# ------------------------------------------------------------------------------------------ tools


def search_entities_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "search_entities",
        "Find entities (people, organisations, places, products, concepts) in the knowledge graph by name "
        "similarity. Returns each entity's id, type, description and aliases. Use it to get the id of "
        "something the question names before calling expand_entity or personalized_pagerank.",
        SearchEntitiesArgs,
        search_entities,
    )


def search_concepts_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "search_concepts",
        "Find the entities of a kind ('which composer', 'what river'): entities whose semantic type in the "
        "concept layer is that kind, else a narrower kind of it (IS_A). Returns ids for expand_entity.",
        SearchConceptsArgs,
        search_concepts,
    )


def search_facts_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "search_facts",
        "Find extracted facts (statements linking several entities, with numbers where the source has them) "
        "similar to a query. Each fact comes with its confidence (0-1), who plays which part in it "
        "(roles: verb(subject=..., object=..., agent=..., in=...)), the entities it involves and the "
        "passages that support it, numbered [n] for citation.",
        SearchFactsArgs,
        search_facts,
    )


def expand_entity_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "expand_entity",
        "Look one hop around an entity: its facts, its relations to other entities (subject --predicate--> "
        "object) and the passages that mention it, numbered [n] for citation. Takes an entity id from "
        "search_entities or an exact name; an unknown name gets the closest known names back.",
        ExpandEntityArgs,
        expand_entity,
    )


"""One document's knowledge layer as graph records: the BiG-RAG bipartite graph with KAG's mutual index.

From the extractions of a document's chunks and the entity ids resolution chose, this builds

* ``Fact`` nodes (n-ary relation nodes: description, type, confidence, typed quantities, attributes, the
  head verb's lemma as ``predicate`` and the ``arguments`` with their roles, KAG §2.2's SPO view, whose
  offsets are in the text of the fact's first chunk, ``chunk_ids[0]``), one per distinct description
  within a lowest-level section (BAG-RAG §3.1: identical facts under one heading merge), ``SUPPORTED_BY``
  the chunks that state them;
* ``Entity`` nodes carrying this document's contribution under ``by_doc`` (the store folds the
  contributions of every document into the visible name, type, aliases and description);
* ``MENTIONS`` chunk -> entity and ``IN_FACT`` entity -> fact (the mutual index, KAG §2.2), ``RELATED``
  entity -> entity binary triples with their predicate (HybridRAG's GraphRAG view);
* ``REFERS_TO`` chunk -> section for explicit cross-references ("see Section 2.1", CG-RAG §4.2.2
  intra-document edges).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, Field

from stratagraph.ingest.citations import (
    find_markers,
    find_section_refs,
    parse_references,
    reference_section_ids,
    resolve_marker,
    resolve_section_ref,
)
from stratagraph.ingest.extractors.base import ChunkExtraction, ChunkInput, DocumentInput
from stratagraph.ingest.quantities import detect_scale, parse_quantities, table_extraction
from stratagraph.ingest.resolution import DocumentEntities
from stratagraph.schema import (
    BY_DOC,
    ChunkRecord,
    Edge,
    EdgeType,
    Node,
    NodeLabel,
    Outline,
    SourceDocument,
    Table,
    combine_part,
)
from stratagraph.text.amounts import Quantity


class FactSpan(BaseModel):
    """Where a fact is stated: a chunk and character offsets in its text (None when unknown)."""

    fact_id: str
    chunk_id: str
    start: int | None = None
    end: int | None = None
    description: str


class KnowledgeRecords(BaseModel):
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)


def fact_id(section_id: str, description: str) -> str:
    digest = hashlib.sha1(" ".join(description.casefold().split()).encode("utf-8")).hexdigest()[:16]
    return f"fact:{section_id}:{digest}"


def extraction_input(doc: SourceDocument, outline: Outline, chunks: Sequence[ChunkRecord]) -> DocumentInput:
    """The text chunks of a document as extractors see them. Table chunks are read by
    :func:`table_extractions`; a reference list is not content (its entries become citations, CG-RAG
    §4.2, and its author initials and journal abbreviations would only be noise entities)."""
    by_id = {s.id: s for s in outline.sections}
    skip = reference_section_ids(outline)
    return DocumentInput(
        doc_id=doc.doc_id,
        title=doc.title,
        metadata=doc.metadata,
        chunks=[
            ChunkInput(
                chunk_id=c.id,
                text=c.text,
                context=c.context,
                section_id=c.section_id,
                section_title=by_id[c.section_id].title,
                heading_path=by_id[c.section_id].heading_path,
            )
            for c in chunks
            if c.kind == "text" and c.section_id not in skip
        ],
    )


def table_extractions(doc: SourceDocument, chunks: Sequence[ChunkRecord]) -> list[ChunkExtraction]:
    """One fact per table row, with typed quantities; the scale and currency a document states once for
    all its tables ("all tables are in thousands of dollars") apply unless a caption says otherwise."""
    tables = [c for c in chunks if c.kind == "table" and c.table is not None]
    if not tables:
        return []
    found = None
    for c in chunks:
        if c.kind == "text" and (found := detect_scale(c.text)):
            break
    prose = [] if found else [q for c in chunks if c.kind == "text" for q in parse_quantities(c.text)]
    out = []
    for c in tables:
        assert c.table is not None
        scale, currency = found or prose_unit(c.table, prose) or (1, None)
        out.append(table_extraction(c.id, c.table, section_id=c.section_id, default_scale=scale,
                                    default_currency=currency, context=c.context))  # fmt: skip
    return out


#: how many of a table's distinct figures its document's prose must state, each with one same currency and scale,
#: for the table to take them (one could be chance: "15" days and "$15 million")
PROSE_UNIT_MATCHES = 2


def prose_unit(table: Table, prose: Sequence[Quantity]) -> tuple[int, str] | None:
    """The scale and currency of a table that states none, from its document's prose: when at least
    :data:`PROSE_UNIT_MATCHES` of its distinct figures are written in the prose as amounts of money of one
    scale and currency ("Cloud Platform revenue was $97.8 million" and a cell "97.8"), and no figure of it is
    written with another; None otherwise. A call transcript's segment table under "Segment Results" is in the
    millions of dollars its speakers say."""
    said: dict[Decimal, set[tuple[int, str]]] = {}
    for q in prose:
        if q.currency and q.scale > 1:
            said.setdefault(q.value / q.scale, set()).add((q.scale, q.currency))
    matched: set[Decimal] = set()
    units: set[tuple[int, str]] = set()
    for row in table.rows:
        for cell in row[1:]:
            parsed = parse_quantities(cell.strip())
            if len(parsed) != 1 or parsed[0].unit or parsed[0].raw != cell.strip():
                continue  # a bare number only: "12%" or "$4.1 million" states its own unit
            value = abs(parsed[0].value)
            if value in said:
                matched.add(value)
                units |= said[value]
    return units.pop() if len(matched) >= PROSE_UNIT_MATCHES and len(units) == 1 else None


def fact_spans(chunks: Sequence[ChunkRecord], extractions: Sequence[ChunkExtraction]) -> list[FactSpan]:
    """Each distinct fact's first statement: its chunk and the offsets of its clause there (found by
    search when the extractor gave none), from which its vector is pooled."""
    chunk_by_id = {c.id: c for c in chunks}
    out: dict[str, FactSpan] = {}
    for ex in extractions:
        chunk = chunk_by_id.get(ex.chunk_id)
        if chunk is None:
            continue
        for fact in ex.facts:
            if not fact.description.strip():
                continue
            fid = fact_id(chunk.section_id, fact.description)
            if fid in out:
                continue
            start, end = fact.start, fact.end
            if start is None or end is None or not (0 <= start < end <= len(chunk.text)):
                at = chunk.text.find(fact.description)
                start, end = (at, at + len(fact.description)) if at >= 0 else (None, None)
            out[fid] = FactSpan(fact_id=fid, chunk_id=chunk.id, start=start, end=end, description=fact.description)
    return list(out.values())


def document_references(
    doc: SourceDocument, outline: Outline, chunks: Sequence[ChunkRecord]
) -> list[dict[str, Any]]:
    """The document's reference list (CG-RAG §4.2), each entry with the chunks whose in-text markers
    point at it; kept on the Document node so it can be matched again when a cited document arrives."""
    refs = parse_references(doc, outline)
    if not refs:
        return []
    skip = reference_section_ids(outline)
    citing: dict[int, set[str]] = {i: set() for i in range(len(refs))}
    position = {id(r): i for i, r in enumerate(refs)}
    for chunk in chunks:
        if chunk.section_id in skip:
            continue
        for marker in find_markers(chunk.text):
            for ref in resolve_marker(marker, refs):
                citing[position[id(ref)]].add(chunk.id)
    return [{**ref.model_dump(mode="json"), "chunks": sorted(citing[i])} for i, ref in enumerate(refs)]


def knowledge_records(
    doc: SourceDocument,
    outline: Outline,
    chunks: Sequence[ChunkRecord],
    extractions: Sequence[ChunkExtraction],
    entities: DocumentEntities,
    entity_of: Mapping[str, str],
) -> KnowledgeRecords:
    """Nodes and edges of one document's knowledge layer (see the module docstring)."""
    did = doc.doc_id
    chunk_by_id = {c.id: c for c in chunks}
    out = KnowledgeRecords()
    facts: dict[str, dict[str, Any]] = {}
    mentions: dict[tuple[str, str], int] = {}
    in_fact: set[tuple[str, str]] = set()
    related: set[tuple[str, str, str]] = set()
    supported: set[tuple[str, str]] = set()
    used_keys: dict[str, str] = {}  # key -> entity id
    for ex in extractions:
        chunk = chunk_by_id.get(ex.chunk_id)
        if chunk is None:
            continue
        keys = entities.key_of.get(ex.chunk_id, {})
        ents = {name: entity_of[k] for name, k in keys.items() if k in entity_of}
        for k in keys.values():
            if k in entity_of:
                used_keys[k] = entity_of[k]
                mentions[(ex.chunk_id, entity_of[k])] = mentions.get((ex.chunk_id, entity_of[k]), 0) + 1
        for fact in ex.facts:
            if not fact.description.strip():
                continue
            fid = fact_id(chunk.section_id, fact.description)
            record = facts.get(fid)
            if record is None:
                record = facts[fid] = {
                    "description": fact.description,
                    "type": fact.type,
                    "confidence": fact.confidence,
                    "doc_id": did,
                    "section_id": chunk.section_id,
                    "chunk_ids": [],
                    "quantities": [q.model_dump(mode="json") for q in fact.quantities],
                    "attributes": dict(fact.attributes),
                    "arity": 0,
                    "predicate": fact.predicate,
                    "arguments": [a.model_dump(mode="json") for a in fact.arguments],
                }
            else:
                record["confidence"] = max(record["confidence"], fact.confidence)
            if chunk.id not in record["chunk_ids"]:
                record["chunk_ids"].append(chunk.id)
            supported.add((fid, chunk.id))
            members = sorted({ents[n] for n in fact.entities if n in ents})
            for eid in members:
                in_fact.add((eid, fid))
        for rel in ex.relations:
            src, dst = ents.get(rel.subject), ents.get(rel.object)
            if src and dst and src != dst and rel.predicate.strip():
                related.add((src, dst, rel.predicate.strip().casefold()))
        for ref in find_section_refs(chunk.text):
            target = resolve_section_ref(ref, outline)
            if target and target != chunk.section_id:
                out.edges.append(
                    Edge(type=EdgeType.REFERS_TO, src=chunk.id, dst=target, doc_ids=[did], props={"text": ref.text})
                )
    arity: dict[str, int] = {}
    for _, fid in in_fact:
        arity[fid] = arity.get(fid, 0) + 1
    for fid, props in facts.items():
        props["arity"] = arity.get(fid, 0)
        out.nodes.append(Node(id=fid, label=NodeLabel.FACT, doc_ids=[did], props=props))
    by_entity: dict[str, dict[str, Any]] = {}
    for key, eid in sorted(used_keys.items()):
        contrib = entities.contributions[key]
        mine = {"names": contrib.names, "types": contrib.types, "keys": [key], "description": contrib.description}
        by_entity[eid] = combine_part(by_entity[eid], mine) if eid in by_entity else mine
    for eid, part in by_entity.items():
        props: dict[str, Any] = {BY_DOC: {did: part}}
        scopes = {k.split("@", 1)[1] for k in part["keys"] if "@" in k}
        if scopes:
            props["section_id"] = min(scopes)
        out.nodes.append(Node(id=eid, label=NodeLabel.ENTITY, doc_ids=[did], props=props))
    out.edges += [
        Edge(type=EdgeType.MENTIONS, src=c, dst=e, weight=float(n), doc_ids=[did]) for (c, e), n in sorted(mentions.items())
    ]
    out.edges += [Edge(type=EdgeType.IN_FACT, src=e, dst=f, doc_ids=[did]) for e, f in sorted(in_fact)]
    out.edges += [Edge(type=EdgeType.SUPPORTED_BY, src=f, dst=c, doc_ids=[did]) for f, c in sorted(supported)]
    # a triple several documents state is one edge: nothing on it may depend on which document wrote last
    out.edges += [
        Edge(type=EdgeType.RELATED, src=s, dst=d, key=p, doc_ids=[did], props={"predicate": p})
        for s, d, p in sorted(related)
    ]
    return out

"""Pydantic models of the one graph (DESIGN.md "The one graph") and of what flows between ingestion steps.

Storage sees only :class:`Node` and :class:`Edge`; the typed records (:class:`SectionRecord`, :class:`ChunkRecord`,
...) are what loaders, the heading tree and the chunker hand each other, and they know how to become nodes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class NodeLabel(StrEnum):
    DOCUMENT = "Document"
    SECTION = "Section"
    CHUNK = "Chunk"
    ENTITY = "Entity"
    FACT = "Fact"
    CONCEPT = "Concept"


class EdgeType(StrEnum):
    HAS_SECTION = "HAS_SECTION"  # Document/Section -> Section
    HAS_CHUNK = "HAS_CHUNK"  # Section -> Chunk
    NEXT = "NEXT"  # Chunk -> Chunk
    MENTIONS = "MENTIONS"  # Chunk -> Entity (KAG mutual index)
    IN_FACT = "IN_FACT"  # Entity -> Fact (BiG-RAG bipartite edge)
    SUPPORTED_BY = "SUPPORTED_BY"  # Fact -> Chunk (provenance)
    RELATED = "RELATED"  # Entity -> Entity (binary triple, predicate in props)
    CITES = "CITES"  # Document -> Document, Chunk -> Document, Chunk -> Chunk
    REFERS_TO = "REFERS_TO"  # Chunk -> Section (explicit cross-reference)
    BELONGS_TO = "BELONGS_TO"  # Entity -> Concept
    IS_A = "IS_A"  # Concept -> Concept
    SYNONYM = "SYNONYM"  # Entity -> Entity or Concept -> Concept (two fused surface forms, src < dst)
    DESCRIBED_BY = "DESCRIBED_BY"  # Entity -> Document/Section (the entity's own page)
    SIMILAR = "SIMILAR"  # Chunk -> Chunk


ALL_LABELS: tuple[str, ...] = tuple(label.value for label in NodeLabel)
ALL_EDGE_TYPES: tuple[str, ...] = tuple(t.value for t in EdgeType)

Direction = Literal["out", "in", "both"]


def _sorted_unique(values: list[str] | tuple[str, ...] | set[str]) -> list[str]:
    return sorted(set(values))


class Node(BaseModel):
    """A node of the graph. ``doc_ids`` are the documents that support it (provenance, for delete)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    label: NodeLabel
    doc_ids: list[str] = Field(default_factory=list)
    props: dict[str, Any] = Field(default_factory=dict)

    _norm = field_validator("doc_ids")(lambda cls, v: _sorted_unique(v))


class Edge(BaseModel):
    """A directed, typed edge. Its identity is (type, src, dst, key); ``key`` tells parallel edges apart
    (for example two RELATED triples with different predicates between the same entities)."""

    model_config = ConfigDict(extra="forbid")

    type: EdgeType
    src: str
    dst: str
    key: str = ""
    weight: float = 1.0
    doc_ids: list[str] = Field(default_factory=list)
    props: dict[str, Any] = Field(default_factory=dict)

    _norm = field_validator("doc_ids")(lambda cls, v: _sorted_unique(v))

    @property
    def id(self) -> str:
        return edge_id(self.type, self.src, self.dst, self.key)


def edge_id(type_: EdgeType | str, src: str, dst: str, key: str = "") -> str:
    """Deterministic edge id (hex digest: contains no ``#``)."""
    raw = "\x1f".join((str(type_), src, dst, key))
    return "e-" + hashlib.sha1(raw.encode("utf-8")).hexdigest()[:24]


def canonical_json(value: Any) -> str:
    """The one JSON spelling used for hashing and export: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


# --------------------------------------------------------------------------------------------------
# What loaders produce
# --------------------------------------------------------------------------------------------------


class Table(BaseModel):
    """A table kept as row records with their header (a later step turns rows into facts)."""

    header: list[str]
    rows: list[list[str]]
    caption: str | None = None

    def records(self) -> list[dict[str, str]]:
        out = []
        for row in self.rows:
            cells = list(row) + [""] * (len(self.header) - len(row))
            out.append({h or f"col{i + 1}": c for i, (h, c) in enumerate(zip(self.header, cells, strict=False))})
        return out

    def row_text(self, row: list[str]) -> str:
        """One row as ``Header: value; ...`` text, the form chunks, BM25 and embeddings see."""
        cells = list(row) + [""] * (len(self.header) - len(row))
        parts = []
        for i, (h, c) in enumerate(zip(self.header, cells, strict=False)):
            c = c.strip()
            if not c:
                continue
            parts.append(f"{h.strip()}: {c}" if h.strip() and i > 0 else c)
        return "; ".join(parts)


class Block(BaseModel):
    """One structural unit of a loaded document, in reading order."""

    kind: Literal["heading", "paragraph", "table"]
    text: str = ""
    level: int | None = None  # headings: raw level from the markup (md '#' count, h1-h6, numbering depth)
    number: str | None = None  # headings: numbering as written ("3.2", "IV", "Chapter 2"), if any
    table: Table | None = None
    line: int | None = None  # 1-based line in the source, where known


class SourceDocument(BaseModel):
    """A document as loaded: identity, metadata and blocks. ``content_hash`` decides added/unchanged/updated."""

    doc_id: str
    source: str  # the source path (relative, as ingested) or "path:record"
    title: str
    format: str  # txt | md | html | pdf | json | jsonl
    blocks: list[Block]
    metadata: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @field_validator("doc_id")
    @classmethod
    def _no_hash_sign(cls, v: str) -> str:
        if "#" in v:
            raise ValueError(f"document id may not contain '#': {v!r}")
        return v

    def content_hash(self, fingerprint: dict[str, Any] | None = None) -> str:
        payload = {
            "title": self.title,
            "format": self.format,
            "metadata": self.metadata,
            "blocks": [b.model_dump(exclude={"line"}) for b in self.blocks],
            "settings": fingerprint or {},
        }
        return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class LoadIssue(BaseModel):
    """A file or record that could not be loaded (error), or was loaded with a caveat (warning)."""

    source: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


class LoadResult(BaseModel):
    documents: list[SourceDocument] = Field(default_factory=list)
    issues: list[LoadIssue] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------------
# Structure and text layers
# --------------------------------------------------------------------------------------------------


class SectionRecord(BaseModel):
    """A structural node (BAG-RAG §3.1): one heading, at ``level`` 1..L (depth in the heading tree)."""

    id: str
    doc_id: str
    title: str
    level: int
    path: str  # ordinal position in the tree, "2.1.3"; also the KAG paraCode of its chunks
    number: str | None = None  # numbering as written in the heading, for "see Section 3.2"
    parent_id: str  # the document id for top-level sections
    order: int  # position among all sections of the document, in reading order
    heading_path: list[str]  # titles from the top-level section down to this one

    def to_node(self) -> Node:
        return Node(
            id=self.id,
            label=NodeLabel.SECTION,
            doc_ids=[self.doc_id],
            props={
                "title": self.title,
                "level": self.level,
                "path": self.path,
                "number": self.number,
                "order": self.order,
                "heading_path": self.heading_path,
                "doc_id": self.doc_id,
            },
        )


class Outline(BaseModel):
    """The heading tree of one document: its sections in reading order and each section's own blocks
    (not those of its subsections). A document without headings has one root section."""

    doc_id: str
    sections: list[SectionRecord]
    blocks: dict[str, list[Block]]  # section id -> the blocks directly under that heading

    @property
    def max_level(self) -> int:
        return max((s.level for s in self.sections), default=0)


class ChunkRecord(BaseModel):
    """A text chunk, id ``doc#para#n`` (KAG §2.2.1): para = the section path, n = position in the section."""

    id: str
    doc_id: str
    section_id: str
    para: str
    n: int
    order: int  # position among all chunks of the document
    text: str
    context: str = ""  # carried over from the previous chunk of the same section (BAG-RAG eq. 2, sen(i-1))
    tokens: int
    kind: Literal["text", "table"] = "text"
    table: Table | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)  # inherited from the document

    def to_node(self, section_title: str, heading_path: list[str]) -> Node:
        return Node(
            id=self.id,
            label=NodeLabel.CHUNK,
            doc_ids=[self.doc_id],
            props={
                "text": self.text,
                "context": self.context,
                "doc_id": self.doc_id,
                "section_id": self.section_id,
                "section": section_title,
                "heading_path": heading_path,
                "para": self.para,
                "n": self.n,
                "order": self.order,
                "tokens": self.tokens,
                "kind": self.kind,
                "table": self.table.model_dump() if self.table else None,
                "metadata": self.metadata,
            },
        )


class IngestStatus(StrEnum):
    ADDED = "added"
    UNCHANGED = "unchanged"
    UPDATED = "updated"
    FAILED = "failed"


class IngestReport(BaseModel):
    """One entry per Document (or per file/record that failed before becoming one)."""

    source: str
    doc_id: str | None
    status: IngestStatus
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------------------------------
# Shared nodes: per-document contributions and the props derived from them
# --------------------------------------------------------------------------------------------------

#: Props key of a shared node's per-document contributions ({doc_id: {...}}). Stores merge it on upsert
#: (entry by entry) and drop a document's entry when the document goes, then call :func:`derive_props`,
#: so a shared node's visible props are a function of the documents it has, never of the write order.
BY_DOC = "by_doc"

#: entity types that say nothing of what an entity is (no label, an unlabelled name, a line item)
WEAK_TYPES = frozenset({"THING", "PROPN", "ITEM", "COREF", "LINE_ITEM"})


def _top(counts: dict[str, int], prefer: Any = None) -> str | None:
    if not counts:
        return None
    return min(counts, key=lambda k: (prefer(k) if prefer else 0, -counts[k], -len(k), k))


def _entity_props(props: dict[str, Any]) -> dict[str, Any]:
    """Name (most mentioned surface form), type (most frequent, specific types first), aliases (every
    other surface form), description (the first document's, by id) and mention count of an Entity."""
    by_doc: dict[str, dict[str, Any]] = props.get(BY_DOC) or {}
    names: dict[str, int] = {}
    types: dict[str, int] = {}
    keys: set[str] = set()
    description = ""
    for doc in sorted(by_doc):
        part = by_doc[doc]
        for name, n in (part.get("names") or {}).items():
            names[name] = names.get(name, 0) + int(n)
        for type_, n in (part.get("types") or {}).items():
            types[type_] = types.get(type_, 0) + int(n)
        keys.update(part.get("keys") or ())
        if not description and part.get("description"):
            description = str(part["description"])
    out = {k: v for k, v in props.items() if k not in {"name", "type", "aliases", "description", "keys", "mentions"}}
    name = _top(names) or props.get("name") or ""
    seen = {name.casefold()}
    aliases = []
    for alias in sorted(names, key=lambda a: (-names[a], a)):
        if alias.casefold() not in seen:
            seen.add(alias.casefold())
            aliases.append(alias)
    out.update(
        name=name,
        type=_top(types, prefer=lambda t: t in WEAK_TYPES) or props.get("type") or "THING",
        aliases=sorted(aliases),
        description=description or props.get("description", ""),
        keys=sorted(keys),
        mentions=sum(names.values()),
    )
    return out


def _concept_props(props: dict[str, Any]) -> dict[str, Any]:
    """Description of a Concept: the first document's (by id) that gives one (its name is its id's key)."""
    by_doc: dict[str, dict[str, Any]] = props.get(BY_DOC) or {}
    description = next((str(by_doc[d]["description"]) for d in sorted(by_doc) if by_doc[d].get("description")), "")
    return {**props, "description": description}


_DERIVERS: dict[str, Any] = {NodeLabel.ENTITY.value: _entity_props, NodeLabel.CONCEPT.value: _concept_props}


def derive_props(label: str, props: dict[str, Any]) -> dict[str, Any]:
    """The visible props of a shared node, recomputed from its ``by_doc`` contributions."""
    derive = _DERIVERS.get(str(label))
    return derive(props) if derive and BY_DOC in props else props


def merge_by_doc(label: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Props after upserting ``new`` over ``old``: ``by_doc`` entries merge (new wins per document), the
    rest is replaced, then the visible props are derived again."""
    if BY_DOC not in new or BY_DOC not in old:
        return new
    merged = {**(old.get(BY_DOC) or {}), **(new.get(BY_DOC) or {})}
    return derive_props(label, {**new, BY_DOC: merged})


def combine_part(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two contributions of one document to one node as one: counts summed, lists united, the first
    non-empty value of anything else kept."""
    out = dict(a)
    for key, value in b.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            out[key] = {k: old.get(k, 0) + value.get(k, 0) for k in sorted({*old, *value})}
        elif isinstance(value, list) and isinstance(old, list):
            out[key] = sorted({*old, *value})
        elif not old:
            out[key] = value
    return out


def fold_by_doc(label: str, props: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Props of one node standing for several (entity resolution): contributions of the same document
    add up (counts summed, lists united), the first props' other keys win."""
    merged: dict[str, dict[str, Any]] = {}
    for p in props:
        for doc, part in (p.get(BY_DOC) or {}).items():
            merged[doc] = combine_part(merged[doc], part) if doc in merged else dict(part)
    return derive_props(label, {**props[0], BY_DOC: merged})


def drop_doc_props(label: str, props: dict[str, Any], doc_id: str) -> dict[str, Any] | None:
    """Props without ``doc_id``'s contribution, or None when nothing changes."""
    by_doc = props.get(BY_DOC)
    if not by_doc or doc_id not in by_doc:
        return None
    rest = {d: v for d, v in by_doc.items() if d != doc_id}
    return derive_props(label, {**props, BY_DOC: rest})

"""``browse_sections``: walk the structure layer (BAG-RAG §3.1's structural nodes) level by level.

The tree is Document -HAS_SECTION-> Section -HAS_SECTION-> Section ... -HAS_CHUNK-> Chunk. Without an id
the tool lists the documents; with a document id, its top-level sections; with a section id, that section's
subsections and its own chunks. Each child comes with its title, level, its own chunk count, the chunk count
of its whole subtree and how many subsections it has: what a model needs to choose where to descend, the
way BAG-RAG's top-down retrieval (eq. 3) picks relevant structural nodes one level at a time.

The whole outline (document and section nodes, without chunk text) is read once per graph generation and
joined with the tree of the shared graph index (``ctx.cached``), so browsing is a dictionary walk.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from stratagraph.retrieval import RetrievalContext, Scored
from stratagraph.schema import Node, NodeLabel
from stratagraph.tools.common import (
    ToolOutput,
    build_tool,
    compact,
    evidence_documents,
    format_evidence,
    node_document,
    plural,
)

MAX_LIMIT = 200
CACHE_KEY = "tools:structure_index"


class BrowseSectionsArgs(BaseModel):
    node_id: str | None = Field(
        None,
        description="A document id or section id to open. Leave empty to list the documents.",
    )
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description="How many children (or chunks) to list (1-200).")
    offset: int = Field(0, ge=0, description="Skip this many children first (for paging through long lists).")
    show_text: bool = Field(
        False,
        description="For a section: also return the text of its own chunks as passages numbered [n].",
    )


@dataclass
class StructureIndex:
    """The document/section tree with chunk counts (no chunk text)."""

    documents: dict[str, Node]
    sections: dict[str, Node]
    children: dict[str, list[str]] = field(default_factory=dict)  # parent -> sections, reading order
    parent: dict[str, str] = field(default_factory=dict)
    own_chunks: dict[str, list[str]] = field(default_factory=dict)  # section -> its HAS_CHUNK chunks
    total_chunks: dict[str, int] = field(default_factory=dict)  # document or section -> chunks in its subtree

    def chunk_count(self, node_id: str) -> int:
        return len(self.own_chunks.get(node_id, ()))

    def doc_order(self) -> list[str]:
        return sorted(self.documents, key=lambda d: (str(self.documents[d].props.get("title") or d).casefold(), d))


def build_index(ctx: RetrievalContext) -> StructureIndex:
    graph = ctx.graph
    docs = {n.id: n for n in graph.nodes_by_label(NodeLabel.DOCUMENT)}
    secs = {n.id: n for n in graph.nodes_by_label(NodeLabel.SECTION)}
    index = StructureIndex(documents=docs, sections=secs)
    ix = ctx.index()
    kids: dict[str, list[str]] = defaultdict(list)
    for child, parent in ix.section_parent.items():
        if child in secs:
            kids[parent].append(child)
            index.parent[child] = parent
    index.own_chunks = {s: list(c) for s, c in ix.own_chunks.items()}
    index.children = {
        p: sorted(set(c), key=lambda s: (int(secs[s].props.get("order") or 0), s)) for p, c in kids.items()
    }
    for root in [*docs, *secs]:
        _total(index, root)
    return index


def _total(index: StructureIndex, node_id: str) -> int:
    """Chunks in a node's subtree (iterative: deep outlines do not hit the recursion limit)."""
    if node_id in index.total_chunks:
        return index.total_chunks[node_id]
    stack, order = [node_id], []
    seen: set[str] = set()
    while stack:
        cur = stack.pop()
        if cur in seen or cur in index.total_chunks:
            continue
        seen.add(cur)
        order.append(cur)
        stack.extend(index.children.get(cur, ()))
    for cur in reversed(order):  # children before parents
        index.total_chunks[cur] = index.chunk_count(cur) + sum(
            index.total_chunks.get(c, 0) for c in index.children.get(cur, ()) if c != cur
        )
    return index.total_chunks[node_id]


def structure_index(ctx: RetrievalContext) -> StructureIndex:
    return ctx.cached(CACHE_KEY, lambda: build_index(ctx))


# ------------------------------------------------------------------------------------------ rendering


def _title(node: Node) -> str:
    return str(node.props.get("title") or node.id)


def _path(index: StructureIndex, section: Node) -> str:
    doc = index.documents.get(str(section.props.get("doc_id") or ""))
    heading = [str(p) for p in section.props.get("heading_path") or [_title(section)]]
    return " > ".join([_title(doc), *heading] if doc is not None else heading)


def _section_line(index: StructureIndex, i: int, sid: str) -> str:
    sec = index.sections[sid]
    n_sub = len(index.children.get(sid, ()))
    return (
        f"{i}. [{sid}] {_title(sec)} (level {sec.props.get('level', '?')}): {plural(index.chunk_count(sid), 'chunk')} here, "
        f"{index.total_chunks.get(sid, 0)} in all, {plural(n_sub, 'subsection')}"
    )


def _section_document(index: StructureIndex, sid: str) -> Document:
    sec = index.sections[sid]
    return node_document(
        "section",
        sid,
        _path(index, sec),
        title=_title(sec),
        level=sec.props.get("level"),
        doc_id=str(sec.props.get("doc_id") or ""),
        parent_id=index.parent.get(sid, ""),
        chunk_count=index.chunk_count(sid),
        total_chunks=index.total_chunks.get(sid, 0),
        subsections=len(index.children.get(sid, ())),
    )


def _page(total: int, offset: int, shown: int, what: str) -> str:
    if total == 0:
        return f"No {what}."
    if shown == 0:
        return f"No {what} past offset {offset} (there are {total})."
    more = f"; pass offset={offset + shown} for more" if offset + shown < total else ""
    return f"{what.capitalize()} {offset + 1}-{offset + shown} of {total}{more}:"


def _list_documents(index: StructureIndex, args: BrowseSectionsArgs) -> ToolOutput:
    order = index.doc_order()
    page = order[args.offset : args.offset + args.limit]
    lines = [_page(len(order), args.offset, len(page), "documents")]
    docs = []
    for i, did in enumerate(page, start=args.offset + 1):
        doc = index.documents[did]
        n_top = len(index.children.get(did, ()))
        lines.append(
            f"{i}. [{did}] {_title(doc)} ({doc.props.get('source') or did}): "
            f"{plural(n_top, 'top-level section')}, {plural(index.total_chunks.get(did, 0), 'chunk')}"
        )
        docs.append(
            node_document(
                "document",
                did,
                _title(doc),
                title=_title(doc),
                source=str(doc.props.get("source") or did),
                sections=n_top,
                total_chunks=index.total_chunks.get(did, 0),
                metadata=dict(doc.props.get("metadata") or {}),
            )
        )
    lines.append("Open one with browse_sections(node_id=<document id>).")
    return "\n".join(lines), docs


def _children_block(index: StructureIndex, parent: str, args: BrowseSectionsArgs) -> tuple[list[str], list[Document]]:
    kids = index.children.get(parent, [])
    page = kids[args.offset : args.offset + args.limit]
    lines = [_page(len(kids), args.offset, len(page), "subsections")]
    lines += [_section_line(index, i, s) for i, s in enumerate(page, start=args.offset + 1)]
    return lines, [_section_document(index, s) for s in page]


def _open_document(index: StructureIndex, did: str, args: BrowseSectionsArgs) -> ToolOutput:
    doc = index.documents[did]
    meta = doc.props.get("metadata") or {}
    head = f"Document [{did}] {_title(doc)} ({doc.props.get('source') or did})"
    if meta:
        head += f", metadata {compact(dict(meta))}"
    head += f": {index.total_chunks.get(did, 0)} chunks."
    lines, docs = _children_block(index, did, args)
    return "\n".join([head, *lines]), docs


def _open_section(ctx: RetrievalContext, index: StructureIndex, sid: str, args: BrowseSectionsArgs) -> ToolOutput:
    sec = index.sections[sid]
    head = (
        f"Section [{sid}] {_path(index, sec)} (level {sec.props.get('level', '?')}, document "
        f"[{sec.props.get('doc_id', '')}], parent [{index.parent.get(sid, '')}]): "
        f"{plural(index.chunk_count(sid), 'chunk')} here, {index.total_chunks.get(sid, 0)} in all."
    )
    lines, docs = _children_block(index, sid, args)
    all_own = _chunks_in_order(ctx, index.own_chunks.get(sid, []))
    own = all_own[: args.limit]
    text = "\n".join([head, *lines])
    if not own:
        return text, docs
    count = f"{len(own)}" if len(own) == len(all_own) else f"first {len(own)} of {len(all_own)}"
    if not args.show_text:
        return text + f"\nChunks here ({count}): " + ", ".join(own) + " (show_text=true returns their text)", docs
    evidence = ctx.evidence([Scored(id=c, score=1.0, via=[sid]) for c in own])
    text += f"\nPassages in this section ({count}), in reading order (cite as [n]):\n" + format_evidence(evidence)
    return text, docs + evidence_documents(evidence)


def _chunks_in_order(ctx: RetrievalContext, chunk_ids: list[str]) -> list[str]:
    nodes = ctx.graph.get_nodes(chunk_ids) if chunk_ids else []
    return [n.id for n in sorted(nodes, key=lambda n: (int(n.props.get("order") or 0), n.id))]


def browse_sections(ctx: RetrievalContext, args: BrowseSectionsArgs) -> ToolOutput:
    index = structure_index(ctx)
    node_id = (args.node_id or "").strip()
    if not node_id:
        return _list_documents(index, args)
    if node_id in index.documents:
        return _open_document(index, node_id, args)
    if node_id in index.sections:
        return _open_section(ctx, index, node_id, args)
    raise ToolException(_not_a_section(ctx, node_id))


def _not_a_section(ctx: RetrievalContext, node_id: str) -> str:
    node = ctx.graph.get_node(node_id)
    if node is None:
        return (
            f"unknown document or section id {node_id!r}; call browse_sections without node_id to list the "
            "documents, then open one by its id"
        )
    if node.label == NodeLabel.CHUNK:
        return (
            f"{node_id!r} is a chunk, not a document or section; its section is "
            f"{node.props.get('section_id')!r} (open that with browse_sections)"
        )
    label = node.label.value
    article = "an" if label[0] in "AEIOU" else "a"
    return f"{node_id!r} is {article} {label}, not a document or section"


def browse_sections_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "browse_sections",
        "Browse the documents' table of contents level by level. No id: list the documents. A document id: "
        "its top-level sections. A section id: its subsections and its own chunks (set show_text to read "
        "them, numbered [n] for citation). Each section shows its title, level and how many chunks it and "
        "its subtree hold.",
        BrowseSectionsArgs,
        browse_sections,
    )

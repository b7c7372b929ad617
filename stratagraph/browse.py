"""The store as people and outside agents browse it: documents, their heading trees and text, a chunk, a
document's entities, and an answer's evidence as a small subgraph. What ``stratagraph mcp`` serves as
resources and ``stratagraph serve`` draws; plain JSON-ready dicts, read through the ``GraphStore`` protocol
(so every backend serves the same).

Unknown ids raise :class:`NotInStore` naming the id and what was looked for.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from stratagraph.schema import EdgeType, NodeLabel

if TYPE_CHECKING:
    from stratagraph.answers import Answer
    from stratagraph.graph_store.base import GraphStore
    from stratagraph.schema import Node

__all__ = [
    "NotInStore",
    "chunk",
    "document_entities",
    "document_markdown",
    "documents",
    "evidence_graph",
    "heading_tree",
    "section_markdown",
]

#: the most entities and facts the evidence graph draws per cited chunk (the most mentioned first)
ENTITIES_PER_CHUNK = 8
FACTS_PER_CHUNK = 4


class NotInStore(KeyError):
    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(ident)
        self.kind, self.ident = kind, ident

    def __str__(self) -> str:
        return f"no {self.kind} {self.ident!r} in the store"


def _one(graph: GraphStore, ident: str, label: NodeLabel) -> Node:
    node = graph.get_node(ident)
    if node is None or node.label != label:
        raise NotInStore(label.value.lower(), ident)
    return node


def _order(node: Node) -> tuple[int, str]:
    return (int(node.props.get("order") or 0), node.id)


def documents(graph: GraphStore) -> list[dict[str, Any]]:
    """Every document: id, title, source, format, metadata, and how many sections and chunks it has."""
    sections = Counter(doc for _, doc in graph.node_tuples(NodeLabel.SECTION, ["doc_id"]))
    chunks = Counter(doc for _, doc in graph.node_tuples(NodeLabel.CHUNK, ["doc_id"]))
    return [
        {
            "id": d.id,
            "title": str(d.props.get("title") or d.id),
            "source": str(d.props.get("source") or d.id),
            "format": d.props.get("format"),
            "metadata": d.props.get("metadata") or {},
            "sections": sections.get(d.id, 0),
            "chunks": chunks.get(d.id, 0),
        }
        for d in graph.nodes_by_label(NodeLabel.DOCUMENT)
    ]


def _sections(graph: GraphStore, doc_id: str) -> tuple[list[Node], dict[str, list[Node]]]:
    """The document's sections in reading order, and its chunks by section id in reading order."""
    sections = sorted(graph.nodes_by_label(NodeLabel.SECTION, doc_id), key=_order)
    by_section: dict[str, list[Node]] = defaultdict(list)
    for c in sorted(graph.nodes_by_label(NodeLabel.CHUNK, doc_id), key=_order):
        by_section[str(c.props.get("section_id") or "")].append(c)
    return sections, by_section


def heading_tree(graph: GraphStore, doc_id: str) -> dict[str, Any]:
    """The document and its sections as a tree: ``{id, title, children: [{id, title, level, number, chunks,
    children}, ...]}`` in reading order."""
    doc = _one(graph, doc_id, NodeLabel.DOCUMENT)
    sections, chunks = _sections(graph, doc_id)
    ids = [s.id for s in sections]
    parent = {e.dst: e.src for e in graph.get_edges(dst=ids, types=[EdgeType.HAS_SECTION])} if ids else {}
    items: dict[str, dict[str, Any]] = {doc.id: {"id": doc.id, "title": str(doc.props.get("title") or doc.id), "children": []}}
    for s in sections:
        items[s.id] = {
            "id": s.id,
            "title": str(s.props.get("title") or ""),
            "level": int(s.props.get("level") or 0),
            "number": s.props.get("number"),
            "chunks": [c.id for c in chunks.get(s.id, [])],
            "children": [],
        }
    for s in sections:
        items.get(parent.get(s.id, doc.id), items[doc.id])["children"].append(items[s.id])
    return items[doc.id]


def document_markdown(graph: GraphStore, doc_id: str) -> str:
    """The document's text as Markdown: its headings at their levels, each section's chunks under it."""
    doc = _one(graph, doc_id, NodeLabel.DOCUMENT)
    sections, chunks = _sections(graph, doc_id)
    out = [f"<!-- {doc.id} -->"]
    for s in sections:
        out.append("#" * max(1, min(6, int(s.props.get("level") or 1))) + " " + str(s.props.get("title") or ""))
        out += [str(c.props.get("text") or "") for c in chunks.get(s.id, [])]
    out += [str(c.props.get("text") or "") for c in chunks.get("", [])]
    return "\n\n".join(out) + "\n"


def section_markdown(graph: GraphStore, section_id: str) -> str:
    """One section: its heading path, then its own chunks' text (not its subsections')."""
    section = _one(graph, section_id, NodeLabel.SECTION)
    texts = [
        str(c.props.get("text") or "")
        for c in sorted(graph.get_nodes([e.dst for e in graph.get_edges(src=section_id, types=[EdgeType.HAS_CHUNK])]), key=_order)
    ]
    path = " > ".join(str(p) for p in section.props.get("heading_path") or [section.props.get("title") or ""])
    return "\n\n".join([f"# {path}", *texts]) + "\n"


def chunk(graph: GraphStore, chunk_id: str) -> dict[str, Any]:
    """A chunk with where it sits: text, document (id, title, source), section path and id."""
    node = _one(graph, chunk_id, NodeLabel.CHUNK)
    doc_id = str(node.props.get("doc_id") or "")
    doc = graph.get_node(doc_id)
    return {
        "id": node.id,
        "text": str(node.props.get("text") or ""),
        "doc_id": doc_id,
        "title": str(doc.props.get("title") or doc_id) if doc else doc_id,
        "source": str(doc.props.get("source") or doc_id) if doc else doc_id,
        "section": " > ".join(str(p) for p in node.props.get("heading_path") or []),
        "section_id": node.props.get("section_id"),
    }


def document_entities(graph: GraphStore, doc_id: str, limit: int = 200) -> list[dict[str, Any]]:
    """The entities a document supports, most mentioned first (then by name): id, name, type, mentions."""
    _one(graph, doc_id, NodeLabel.DOCUMENT)
    rows = [
        {"id": e.id, "name": str(e.props.get("name") or e.id), "type": str(e.props.get("type") or ""),
         "mentions": int(e.props.get("mentions") or 0)}
        for e in graph.nodes_by_label(NodeLabel.ENTITY, doc_id)
    ]  # fmt: skip
    rows.sort(key=lambda r: (-r["mentions"], r["name"].lower(), r["id"]))
    return rows[:limit]


def _node_view(node: Node) -> dict[str, Any]:
    p = node.props
    label = {
        NodeLabel.DOCUMENT: p.get("title"),
        NodeLabel.SECTION: p.get("title"),
        NodeLabel.ENTITY: p.get("name"),
        NodeLabel.FACT: p.get("description"),
        NodeLabel.CHUNK: p.get("text"),
    }.get(node.label) or node.id
    text = " ".join(str(label).split())
    return {"id": node.id, "kind": node.label.value, "label": text[:80] + ("…" if len(text) > 80 else "")}


def evidence_graph(graph: GraphStore, answer: Answer) -> dict[str, Any]:
    """An answer's evidence as a subgraph: the cited chunks (citations and a computation's operands), their
    sections and documents, the entities they mention and the facts they support (the most mentioned
    first), the links between cited chunks, and the path the workflow took (one ``step`` node per trace
    entry, in order, ending in the ``answer`` node that cites the chunks). Nodes ``{id, kind, label}``
    (``cited`` on cited chunks), edges ``{src, dst, type}``."""
    cited = list(dict.fromkeys(
        c.chunk_id for c in [*answer.citations, *(o.citation for o in (answer.computed.operands if answer.computed else []))]
    ))  # fmt: skip
    chunks = graph.get_nodes(cited)
    keep: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, str]] = []
    for c in chunks:
        keep[c.id] = {**_node_view(c), "cited": True}
    structure = [str(c.props.get("section_id") or "") for c in chunks] + [str(c.props.get("doc_id") or "") for c in chunks]
    for node in graph.get_nodes(list(dict.fromkeys(s for s in structure if s))):
        keep[node.id] = _node_view(node)
    for node in list(keep.values()):
        doc_id = str(node["id"]).split("::", 1)[0]
        if node["kind"] == NodeLabel.SECTION.value and doc_id in keep:
            edges.append({"src": doc_id, "dst": node["id"], "type": EdgeType.HAS_SECTION.value})
    for c in chunks:
        for parent in (c.props.get("section_id"), c.props.get("doc_id")):
            if parent and parent in keep:
                edges.append({"src": str(parent), "dst": c.id, "type": EdgeType.HAS_CHUNK.value if parent == c.props.get("section_id") else "IN_DOCUMENT"})
                break
    ids = [c.id for c in chunks]
    if ids:
        mentions = graph.get_edges(src=ids, types=[EdgeType.MENTIONS])
        entities = {e.id: e for e in graph.get_nodes(list(dict.fromkeys(m.dst for m in mentions)))}
        for chunk_id in ids:
            mine = sorted((entities[m.dst] for m in mentions if m.src == chunk_id and m.dst in entities),
                          key=lambda e: (-int(e.props.get("mentions") or 0), e.id))[:ENTITIES_PER_CHUNK]  # fmt: skip
            for e in mine:
                keep.setdefault(e.id, _node_view(e))
                edges.append({"src": chunk_id, "dst": e.id, "type": EdgeType.MENTIONS.value})
        support = graph.get_edges(dst=ids, types=[EdgeType.SUPPORTED_BY])
        facts = {f.id: f for f in graph.get_nodes(list(dict.fromkeys(s.src for s in support)))}
        for chunk_id in ids:
            for s in sorted((s for s in support if s.dst == chunk_id and s.src in facts), key=lambda s: s.src)[:FACTS_PER_CHUNK]:
                keep.setdefault(s.src, _node_view(facts[s.src]))
                edges.append({"src": s.src, "dst": chunk_id, "type": EdgeType.SUPPORTED_BY.value})
        fact_ids = [f for f in keep if f in facts]
        for e in graph.get_edges(dst=fact_ids, types=[EdgeType.IN_FACT]) if fact_ids else []:
            if e.src in keep:
                edges.append({"src": e.src, "dst": e.dst, "type": EdgeType.IN_FACT.value})
        links = (EdgeType.NEXT, EdgeType.CITES, EdgeType.REFERS_TO, EdgeType.SIMILAR)
        for e in graph.get_edges(src=ids, types=links):
            if e.dst in keep:
                edges.append({"src": e.src, "dst": e.dst, "type": e.type.value})
    path: list[str] = []
    for i, entry in enumerate(answer.trace):
        step = f"step:{i}"
        keep[step] = {"id": step, "kind": "Step", "label": entry.node, "decision": entry.decision[:200]}
        if path:
            edges.append({"src": path[-1], "dst": step, "type": "THEN"})
        path.append(step)
    keep["answer"] = {"id": "answer", "kind": "Answer", "label": answer.answer[:80]}
    if path:
        edges.append({"src": path[-1], "dst": "answer", "type": "THEN"})
    path.append("answer")
    edges += [{"src": "answer", "dst": c, "type": "CITES_PASSAGE"} for c in ids]
    return {"nodes": list(keep.values()), "edges": edges, "path": path}

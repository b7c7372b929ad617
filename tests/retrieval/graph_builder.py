"""A small hand-built graph whose right answers are known, written through the real stores (SQLite graph,
Chroma vectors embedded by the real MiniLM), for testing each retrieval algorithm.

    g = GraphBuilder(settings)
    g.doc("d1", "Solar Power", metadata={"year": 2024})
    g.section("d1", "s1", "Panels", level=1)                # under the document
    g.section("d1", "s1a", "Costs", level=2, parent="s1")   # under s1
    g.chunk("s1a", "c1", "Panels cost $300 each.")         # NEXT edges follow the order of chunk() calls
    g.entity("acme", "Acme Corp", type="ORG", docs=["d1"])
    g.fact("f1", "Acme Corp sells panels.", entities=["acme"], chunks=["c1"], confidence=0.9)
    g.mention("c1", "acme"); g.related("acme", "bob", "employs"); g.edge("CITES", "c1", "c9")
    ctx = g.build()                                         # -> RetrievalContext over both stores
"""

from __future__ import annotations

from typing import Any

from stratagraph.config import Settings
from stratagraph.retrieval.base import RetrievalContext
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel
from stratagraph.services import Services


class GraphBuilder:
    def __init__(self, settings: Settings) -> None:
        self.svc = Services(settings)
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self._doc_of: dict[str, str] = {}  # node id -> doc id
        self._section_path: dict[str, list[str]] = {}
        self._chunks_in_doc: dict[str, list[str]] = {}
        self._order: dict[str, int] = {}
        self.vector_rows: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
            "chunks": [],
            "sections": [],
            "facts": [],
            "entities": [],
        }

    # ------------------------------------------------------------------ structure and text layers
    def doc(self, doc_id: str, title: str, metadata: dict[str, Any] | None = None, source: str | None = None) -> None:
        self._doc_of[doc_id] = doc_id
        self._section_path[doc_id] = []
        self.nodes[doc_id] = Node(
            id=doc_id,
            label=NodeLabel.DOCUMENT,
            doc_ids=[doc_id],
            props={"title": title, "source": source or f"{doc_id}.md", "metadata": metadata or {}, "format": "md"},
        )

    def section(self, doc_id: str, section_id: str, title: str, level: int = 1, parent: str | None = None) -> None:
        parent = parent or doc_id
        path = [*self._section_path[parent], title]
        self._section_path[section_id] = path
        self._doc_of[section_id] = doc_id
        order = self._order[doc_id] = self._order.get(doc_id, 0) + 1
        self.nodes[section_id] = Node(
            id=section_id,
            label=NodeLabel.SECTION,
            doc_ids=[doc_id],
            props={"title": title, "level": level, "path": str(order), "number": None, "order": order,
                   "heading_path": path, "doc_id": doc_id},
        )
        self.edges.append(Edge(type=EdgeType.HAS_SECTION, src=parent, dst=section_id, doc_ids=[doc_id]))
        meta = {**self.nodes[doc_id].props["metadata"], "doc_id": doc_id, "level": level, "order": order}
        self.vector_rows["sections"].append((section_id, " > ".join([self.nodes[doc_id].props["title"], *path]), meta))

    def chunk(self, section_id: str, chunk_id: str, text: str) -> None:
        doc_id = self._doc_of[section_id]
        self._doc_of[chunk_id] = doc_id
        previous = self._chunks_in_doc.setdefault(doc_id, [])
        order = len(previous)
        self.nodes[chunk_id] = Node(
            id=chunk_id,
            label=NodeLabel.CHUNK,
            doc_ids=[doc_id],
            props={"text": text, "context": "", "doc_id": doc_id, "section_id": section_id,
                   "section": self.nodes[section_id].props["title"], "heading_path": self._section_path[section_id],
                   "para": 0, "n": order, "order": order, "tokens": len(text.split()), "kind": "text",
                   "table": None, "metadata": dict(self.nodes[doc_id].props["metadata"])},
        )
        self.edges.append(Edge(type=EdgeType.HAS_CHUNK, src=section_id, dst=chunk_id, doc_ids=[doc_id]))
        if previous:
            self.edges.append(Edge(type=EdgeType.NEXT, src=previous[-1], dst=chunk_id, doc_ids=[doc_id]))
        previous.append(chunk_id)
        meta = {**self.nodes[doc_id].props["metadata"], "doc_id": doc_id, "section_id": section_id, "order": order,
                "kind": "text"}
        self.vector_rows["chunks"].append((chunk_id, text, meta))

    # ------------------------------------------------------------------ knowledge layer
    def entity(self, key: str, name: str, type: str = "", docs: list[str] | None = None,
               description: str = "", aliases: list[str] | None = None) -> str:
        eid = f"ent:{key}"
        docs = docs or sorted(set(self._doc_of.values()))[:1]
        self.nodes[eid] = Node(
            id=eid,
            label=NodeLabel.ENTITY,
            doc_ids=docs,
            props={"name": name, "type": type, "description": description, "aliases": aliases or [], "mentions": 1},
        )
        for alias_key, alias in [(key, name), *[(a.lower(), a) for a in aliases or []]]:
            self.vector_rows["entities"].append((alias_key, alias, {"entity_id": eid, "name": alias, "type": type}))
        return eid

    def fact(self, fact_id: str, description: str, entities: list[str], chunks: list[str],
             confidence: float = 1.0, type: str = "") -> None:
        doc_id = self._doc_of[chunks[0]]
        section_id = self.nodes[chunks[0]].props["section_id"]
        self.nodes[fact_id] = Node(
            id=fact_id,
            label=NodeLabel.FACT,
            doc_ids=sorted({self._doc_of[c] for c in chunks}),
            props={"description": description, "type": type, "confidence": confidence, "section_id": section_id,
                   "quantities": [], "attributes": {}},
        )
        for key in entities:
            self.edges.append(Edge(type=EdgeType.IN_FACT, src=f"ent:{key}", dst=fact_id, doc_ids=[doc_id]))
        for c in chunks:
            self.edges.append(Edge(type=EdgeType.SUPPORTED_BY, src=fact_id, dst=c, doc_ids=[self._doc_of[c]]))
        meta = {**self.nodes[doc_id].props["metadata"], "doc_id": doc_id, "section_id": section_id, "type": type}
        self.vector_rows["facts"].append((fact_id, description, meta))

    def mention(self, chunk_id: str, key: str, count: int = 1) -> None:
        self.edges.append(Edge(type=EdgeType.MENTIONS, src=chunk_id, dst=f"ent:{key}", weight=float(count),
                               doc_ids=[self._doc_of[chunk_id]]))

    def related(self, src_key: str, dst_key: str, predicate: str, chunk: str | None = None) -> None:
        doc = self._doc_of[chunk] if chunk else self.nodes[f"ent:{src_key}"].doc_ids[0]
        self.edges.append(Edge(type=EdgeType.RELATED, src=f"ent:{src_key}", dst=f"ent:{dst_key}", key=predicate,
                               doc_ids=[doc], props={"predicate": predicate, "chunks": [chunk] if chunk else []}))

    def edge(self, type_: str, src: str, dst: str, weight: float = 1.0, key: str = "") -> None:
        doc = self._doc_of.get(src) or self.nodes[src].doc_ids[0]
        self.edges.append(Edge(type=EdgeType(type_), src=src, dst=dst, key=key, weight=weight, doc_ids=[doc]))

    # ------------------------------------------------------------------ write
    def build(self) -> RetrievalContext:
        graph = self.svc.graph
        graph.write_batch(nodes=list(self.nodes.values()), edges=self.edges)
        for collection, rows in self.vector_rows.items():
            if rows:
                self.svc.vectors.upsert(collection, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
        return self.svc.new_retrieval()

    def close(self) -> None:
        self.svc.close()

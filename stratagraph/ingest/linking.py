"""Links between documents, made after their own layers are stored: CITES, DESCRIBED_BY and SIMILAR.

These edges depend on more than one document, so they are computed against everything stored, for the
documents a run wrote (and, after a delete, for what pointed at the deleted one), in both directions so
that the graph does not depend on the order documents arrive in:

* ``CITES`` (CG-RAG §4.2): a document's reference list is matched to stored documents by title, giving
  Document -> Document; each chunk holding an in-text marker of that reference gets Chunk -> Document and
  Chunk -> Chunk to the ``citation_top_k`` chunks of the cited document closest to it (§4.2.2). References
  of stored documents are matched again when a new document arrives (a late-arriving cited document).
* ``DESCRIBED_BY``: an entity whose name or alias is the title of a document or section points at it
  (the entity's own page, KAG's instance description); generic one-word titles are not linked.
* ``SIMILAR`` (CG-RAG §4.2.2 inter-document edges): maintained exactly by
  :func:`~stratagraph.ingest.similarity.update_top_k`.

Every link is owned by the document at its source end (its ``doc_ids``), so deleting or replacing either
end removes it: the citing side by provenance, the cited side because its nodes go.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from stratagraph.ingest.citations import Reference, ReferenceIndex
from stratagraph.ingest.similarity import ChunkTable, update_top_k
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel
from stratagraph.text.titles import TitleIndex, normalize_title, title_index, title_key

if TYPE_CHECKING:  # only annotations: a runtime import closed services -> retrieval.base -> linking -> services
    from stratagraph.services import Services

log = logging.getLogger(__name__)

ENTITY_COLLECTION = "entities"


def link_documents(
    svc: Services,
    doc_ids: Iterable[str],
    lost_similar: Iterable[str] = (),
    touched_entities: Iterable[str] = (),
    final_hashes: Mapping[str, str] | None = None,
) -> None:
    """Compute and write (one transaction) the cross-document links of ``doc_ids``; ``lost_similar`` are
    chunks whose SIMILAR targets went away; ``final_hashes`` replace the documents' pending content
    hashes in the same transaction, so a run that dies before linking is redone by the next one."""
    graph = svc.graph
    run = sorted(set(doc_ids))
    documents = {n.id: n for n in graph.nodes_by_label(NodeLabel.DOCUMENT)}
    sections = graph.nodes_by_label(NodeLabel.SECTION)
    index = title_index(_document_titles(documents.values()), _section_titles(sections), into=ReferenceIndex())
    edges: list[Edge] = []
    edges += citation_edges(svc, documents, index, set(run))
    edges += described_by_edges(svc, index, documents, sections, set(run), set(touched_entities))
    similar, stale = similar_edges(svc, set(run), set(lost_similar))
    edges += similar
    nodes: list[Node] = []
    for did, digest in sorted((final_hashes or {}).items()):
        node = documents.get(did)
        if node is not None:
            nodes.append(node.model_copy(update={"props": {**node.props, "content_hash": digest}}))
    graph.write_batch(nodes=nodes, edges=edges, delete_edges=stale)


def _document_titles(documents: Iterable[Node]) -> Iterable[tuple[str, object, Mapping | None]]:
    return ((d.id, d.props.get("title"), d.props.get("metadata")) for d in documents)


def _section_titles(sections: Iterable[Node]) -> Iterable[tuple[str, object, str]]:
    return ((s.id, s.props.get("title"), s.props.get("doc_id") or s.doc_ids[0]) for s in sections if s.props.get("title"))


def _title_index(documents: Iterable[Node], sections: Iterable[Node]) -> TitleIndex:
    """The page-title index of document and section nodes. Only ``retrieval/base.py`` still calls this; it
    goes once retrieval builds :func:`stratagraph.text.titles.title_index` from its own reads."""
    return title_index(_document_titles(documents), _section_titles(sections))


# ------------------------------------------------------------------------------------------ CITES


def citation_edges(svc: Services, documents: Mapping[str, Node], index: ReferenceIndex, run: set[str]) -> list[Edge]:
    """CITES edges of the run's documents' references, and of stored documents' references to the run's
    documents."""
    found: list[tuple[str, str, list[str]]] = []  # (citing doc, cited doc, citing chunk ids)
    for did in sorted(documents):
        refs = documents[did].props.get("references") or []
        for ref in refs:
            reference = Reference.model_validate({k: v for k, v in ref.items() if k != "chunks"})
            cited = index.match_reference(reference, exclude_doc=did)
            if cited is None or cited not in documents:
                continue
            if did in run or cited in run:
                found.append((did, cited, list(ref.get("chunks") or [])))
    if not found:
        return []
    k = svc.settings.citation_top_k
    cited_chunks = {cited: sorted(n.id for n in svc.graph.nodes_by_label(NodeLabel.CHUNK, cited)) for _, cited, _ in found}
    wanted = sorted({c for _, _, chunks in found for c in chunks} | {c for v in cited_chunks.values() for c in v})
    vectors = svc.vectors.get_embeddings("chunks", wanted) if k > 0 and wanted else {}
    edges: dict[str, Edge] = {}
    for citing, cited, chunks in found:
        doc_edge = Edge(type=EdgeType.CITES, src=citing, dst=cited, doc_ids=[citing])
        edges[doc_edge.id] = doc_edge
        targets = [c for c in cited_chunks[cited] if c in vectors]
        matrix = np.vstack([vectors[c] for c in targets]) if targets else None
        for chunk in chunks:
            e = Edge(type=EdgeType.CITES, src=chunk, dst=cited, doc_ids=[citing])
            edges[e.id] = e
            if matrix is None or chunk not in vectors:
                continue
            scores = matrix @ vectors[chunk]
            order = sorted(range(len(targets)), key=lambda i: (-round(float(scores[i]), 5), targets[i]))[:k]
            for i in order:
                e = Edge(
                    type=EdgeType.CITES, src=chunk, dst=targets[i], weight=round(float(scores[i]), 5), doc_ids=[citing]
                )
                edges[e.id] = e
    return [edges[i] for i in sorted(edges)]


# ------------------------------------------------------------------------------------------ DESCRIBED_BY


def described_by_edges(
    svc: Services,
    index: TitleIndex,
    documents: Mapping[str, Node],
    sections: list[Node],
    run: set[str],
    touched: set[str],
) -> list[Edge]:
    """Entity -> page edges for the run's entities (against every title) and the run's titles (against
    every entity)."""
    entities = svc.graph.nodes_by_label(NodeLabel.ENTITY)
    by_name: dict[str, set[str]] = defaultdict(set)
    for ent in entities:
        if ent.props.get("section_id"):  # a line item is not something with a page
            continue
        for name in [ent.props.get("name") or "", *(ent.props.get("aliases") or [])]:
            key = normalize_title(str(name))
            if key:
                by_name[key].add(ent.id)
    pairs: set[tuple[str, str, str]] = set()  # (entity, page node, page doc)
    for ent in entities:
        if ent.id not in touched or ent.props.get("section_id"):
            continue
        for name in {ent.props.get("name") or "", *(ent.props.get("aliases") or [])}:
            for match in index.lookup(str(name)):
                if not match.generic:
                    pairs.add((ent.id, match.node_id, match.doc_id))
    pages = [(d.id, d.id, title_key(str(d.props.get("title") or ""), "document")) for d in documents.values() if d.id in run]
    pages += [
        (s.id, str(s.props.get("doc_id") or s.doc_ids[0]), title_key(str(s.props.get("title") or ""), "section"))
        for s in sections
        if (s.props.get("doc_id") or s.doc_ids[0]) in run
    ]
    for node_id, doc_id, key in pages:
        if not key:
            continue
        matches = {m.node_id: m for m in index.lookup(key)}
        if node_id in matches and matches[node_id].generic:
            continue
        for eid in by_name.get(key, ()):
            pairs.add((eid, node_id, doc_id))
    return [
        Edge(type=EdgeType.DESCRIBED_BY, src=e, dst=page, doc_ids=[doc]) for e, page, doc in sorted(pairs)
    ]


# ------------------------------------------------------------------------------------------ SIMILAR


def similar_edges(svc: Services, run: set[str], lost: set[str]) -> tuple[list[Edge], list[str]]:
    """New SIMILAR edges and the ids of those they replace."""
    settings = svc.settings
    if settings.similar_top_k <= 0:
        return [], []
    chunks = svc.graph.nodes_by_label(NodeLabel.CHUNK)
    new = {c.id for c in chunks if c.doc_ids and (c.props.get("doc_id") or c.doc_ids[0]) in run}
    recompute = {c.id for c in chunks if c.id in lost}
    if not new and not recompute:
        return [], []
    vectors = svc.vectors.get_embeddings("chunks", [c.id for c in chunks])
    chunks = [c for c in chunks if c.id in vectors]
    if not chunks:
        return [], []
    table = ChunkTable.build(
        [c.id for c in chunks],
        [str(c.props.get("doc_id") or c.doc_ids[0]) for c in chunks],
        [str(c.props.get("text") or "") for c in chunks],
        np.vstack([vectors[c.id] for c in chunks]),
    )
    current: dict[str, list[tuple[str, float]]] = defaultdict(list)
    edge_ids: dict[str, list[str]] = defaultdict(list)
    for e in svc.graph.get_edges(types=[EdgeType.SIMILAR]):
        current[e.src].append((e.dst, e.weight))
        edge_ids[e.src].append(e.id)
    for src in current:
        current[src].sort(key=lambda p: (-p[1], p[0]))
    changed = update_top_k(table, current, recompute, new, settings.similar_top_k, settings.similar_min_score)
    doc_of = dict(zip(table.ids, table.doc_ids, strict=True))
    edges = [
        Edge(type=EdgeType.SIMILAR, src=src, dst=dst, weight=score, doc_ids=[doc_of[src]])
        for src in sorted(changed)
        for dst, score in changed[src]
    ]
    stale = [eid for src in sorted(changed) for eid in edge_ids.get(src, [])]
    return edges, stale


# ------------------------------------------------------------------------------------------ entity vectors


def reconcile_entity_vectors(svc: Services, entity_ids: Iterable[str]) -> None:
    """Make the entity-name rows of these entities match the graph: a row per key the entity has, tagged
    with the entity's id; rows of keys it no longer has (or of an entity that is gone) are deleted."""
    ids = sorted(set(entity_ids))
    if not ids:
        return
    vs = svc.vectors
    nodes = {n.id: n for n in svc.graph.get_nodes(ids)}
    owner = {k: n.id for n in nodes.values() for k in (n.props.get("keys") or [])}
    rows: dict[str, dict] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        rows.update(vs.metadata(ENTITY_COLLECTION, {"entity_id": part}))
    gone = sorted(r for r in rows if r not in owner)
    if gone:
        vs.delete(ENTITY_COLLECTION, gone)
    # rows of keys that moved to another entity (a merge) get their new entity id
    moved = sorted(r for r, meta in rows.items() if r in owner and meta.get("entity_id") != owner[r])
    if moved:
        snap = vs.snapshot(ENTITY_COLLECTION, moved)
        keys = sorted(snap.rows)
        vs.upsert(
            ENTITY_COLLECTION,
            keys,
            None,
            metadatas=[{**(snap.rows[k][1] or {}), "entity_id": owner[k]} for k in keys],
            embeddings=np.vstack([snap.rows[k][0] for k in keys]),
        )

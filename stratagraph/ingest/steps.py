"""Node functions of the ingest workflow (``workflows/ingest.py`` wires them).

load -> plan -> build -> embed -> write -> summarize. Each is a small function of the state that returns an
update; the stores come from ``runtime.context`` (a :class:`~stratagraph.services.Services`). One document's
failure is reported for that document and never touches what is stored for the others.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from stratagraph.embeddings import embed_texts
from stratagraph.graph_store.base import DocumentVersion, StoreUnavailable
from stratagraph.graph_store.vectors import VectorSnapshot
from stratagraph.ingest.chunking import chunk_outline
from stratagraph.ingest.loaders import load_paths
from stratagraph.ingest.structure import build_outline
from stratagraph.schema import (
    ChunkRecord,
    Edge,
    EdgeType,
    IngestReport,
    IngestStatus,
    LoadIssue,
    Node,
    NodeLabel,
    Outline,
    SourceDocument,
)
from stratagraph.services import Services, default_services

log = logging.getLogger(__name__)


#: Chroma collections that hold one document's own rows (metadata ``doc_id``), with the PreparedDocument
#: fields of their items and vectors.
DOCUMENT_COLLECTIONS: tuple[tuple[str, str, str], ...] = (
    ("chunks", "chunk_vectors", "chunk_embeddings"),
    ("sections", "section_vectors", "section_embeddings"),
)


class VectorItem(BaseModel):
    id: str
    text: str  # what is stored as the document text in the collection
    embed_text: str  # what is embedded (text with its heading context)
    metadata: dict[str, Any]


class PreparedDocument(BaseModel):
    """A document on its way through the workflow."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    doc: SourceDocument
    content_hash: str
    status: IngestStatus
    error: str | None = None
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    chunk_vectors: list[VectorItem] = Field(default_factory=list)
    section_vectors: list[VectorItem] = Field(default_factory=list)
    chunk_embeddings: Any = None  # np.ndarray (n x d), set by the embed step
    section_embeddings: Any = None

    @property
    def active(self) -> bool:
        return self.status in (IngestStatus.ADDED, IngestStatus.UPDATED) and self.error is None


class IngestInput(TypedDict, total=False):
    """What a caller gives: files or folders, the base of document ids, and include/exclude globs."""

    paths: list[str]
    base: str | None
    include: list[str]
    exclude: list[str]


class IngestOutput(TypedDict):
    """What a caller gets: one report per Document (and per file or record that failed to load)."""

    reports: list[IngestReport]


class IngestState(IngestInput, total=False):
    documents: list[SourceDocument]
    issues: list[LoadIssue]
    prepared: list[PreparedDocument]
    reports: list[IngestReport]


def services_of(runtime: Runtime[Services] | None) -> Services:
    ctx = getattr(runtime, "context", None)
    return ctx if isinstance(ctx, Services) else default_services()


# ------------------------------------------------------------------------------------------ steps


def load(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Read the given files and folders into SourceDocuments; bad files become issues."""
    svc = services_of(runtime)
    base = Path(state["base"]) if state.get("base") else None
    result = load_paths(
        [Path(p) for p in state.get("paths", [])],
        svc.settings,
        base=base,
        include=state.get("include") or (),
        exclude=state.get("exclude") or (),
    )
    for issue in result.issues:
        (log.warning if issue.severity == "warning" else log.error)("%s", issue)
    return {"documents": result.documents, "issues": result.issues}


def plan(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Decide added / unchanged / updated by content hash; a document id seen twice in one run counts once."""
    svc = services_of(runtime)
    svc.vectors  # noqa: B018 - open both stores now: an unreachable one stops the run before any work
    fingerprint = svc.settings.settings_fingerprint()
    prepared: list[PreparedDocument] = []
    seen: set[str] = set()
    for doc in state.get("documents", []):
        if doc.doc_id in seen:
            continue
        seen.add(doc.doc_id)
        digest = doc.content_hash(fingerprint)
        stored = svc.graph.document_hash(doc.doc_id)
        if stored is None:
            status = IngestStatus.ADDED
        elif stored == digest:
            status = IngestStatus.UNCHANGED
        else:
            status = IngestStatus.UPDATED
        prepared.append(PreparedDocument(doc=doc, content_hash=digest, status=status))
    return {"prepared": prepared}


def build(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Structure and text layers of each new or changed document: heading tree (BAG-RAG §3.1), chunks
    (BiG-RAG Alg. 1 with BAG-RAG eq. 2 carry-over), and their nodes, edges and vector items."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active]
    for n, i in enumerate(todo, 1):
        item = prepared[i]
        try:
            outline = build_outline(item.doc)
            chunks = chunk_outline(item.doc, outline, svc.settings)
            nodes, edges = structure_graph(item.doc, item.content_hash, outline, chunks)
            chunk_vectors, section_vectors = vector_items(item.doc, outline, chunks)
            update = {
                "nodes": nodes,
                "edges": edges,
                "chunk_vectors": chunk_vectors,
                "section_vectors": section_vectors,
            }
        except Exception as exc:  # one bad document must not stop the others
            log.exception("building %s failed", item.doc.source)
            update = {"error": f"{type(exc).__name__}: {exc}"}
        prepared[i] = item.model_copy(update=update)
        svc.report("structure", n, len(todo))
    return {"prepared": prepared}


def embed(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Embed all chunks and sections of the run in large batches (one pass over the model). If the
    embedder fails (an unreachable endpoint after its retries), every document waiting for it fails with
    that message and nothing is written."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active]
    texts = [v.embed_text for i in todo for v in (*prepared[i].chunk_vectors, *prepared[i].section_vectors)]
    if not texts:
        return {}
    try:
        vectors = _embed_all(svc, texts)
    except Exception as exc:
        log.exception("embedding failed")
        error = f"embedding failed: {type(exc).__name__}: {exc}"
        for i in todo:
            prepared[i] = prepared[i].model_copy(update={"error": error})
        return {"prepared": prepared}
    at = 0
    for i in todo:
        item = prepared[i]
        n_c, n_s = len(item.chunk_vectors), len(item.section_vectors)
        prepared[i] = item.model_copy(
            update={
                "chunk_embeddings": vectors[at : at + n_c],
                "section_embeddings": vectors[at + n_c : at + n_c + n_s],
            }
        )
        at += n_c + n_s
    return {"prepared": prepared}


def write(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Write documents in batches: vectors first, then the graph in one transaction per batch (the stored
    content hash moves last, so a failure leaves the old version and a re-run repeats the work), then drop
    stale vectors. A batch that fails is written again document by document, so only the bad one fails."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active]
    done = 0
    for batch in _batches(todo, prepared, max_docs=512, max_items=4096):
        try:
            write_documents(svc, [prepared[i] for i in batch])
        except StoreUnavailable:
            raise  # the store is gone, not this batch: stop the run (written batches are complete)
        except Exception:
            log.exception("batch write failed; retrying its %d documents one by one", len(batch))
            for i in batch:
                try:
                    write_documents(svc, [prepared[i]])
                except StoreUnavailable:
                    raise
                except Exception as exc:
                    log.exception("writing %s failed", prepared[i].doc.source)
                    prepared[i] = prepared[i].model_copy(update={"error": f"{type(exc).__name__}: {exc}"})
        done += len(batch)
        svc.report("write", done, len(todo))
    return {"prepared": prepared}


def summarize(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """One report per Document, then one per file or record that failed to load."""
    reports = [
        IngestReport(
            source=p.doc.source,
            doc_id=p.doc.doc_id,
            status=IngestStatus.FAILED if p.error else p.status,
            error=p.error,
            warnings=list(p.doc.warnings),
        )
        for p in state.get("prepared", [])
    ]
    reports += [
        IngestReport(source=i.source, doc_id=None, status=IngestStatus.FAILED, error=i.message)
        for i in state.get("issues", [])
        if i.severity == "error"
    ]
    return {"reports": reports}


# ------------------------------------------------------------------------------------------ helpers


def structure_graph(
    doc: SourceDocument, content_hash: str, outline: Outline, chunks: list[ChunkRecord]
) -> tuple[list[Node], list[Edge]]:
    """Document, Section and Chunk nodes with HAS_SECTION, HAS_CHUNK and NEXT edges."""
    did = doc.doc_id
    nodes = [
        Node(
            id=did,
            label=NodeLabel.DOCUMENT,
            doc_ids=[did],
            props={
                "title": doc.title,
                "source": doc.source,
                "format": doc.format,
                "content_hash": content_hash,
                "metadata": doc.metadata,
            },
        )
    ]
    edges: list[Edge] = []
    by_id = {s.id: s for s in outline.sections}
    for sec in outline.sections:
        nodes.append(sec.to_node())
        edges.append(Edge(type=EdgeType.HAS_SECTION, src=sec.parent_id, dst=sec.id, doc_ids=[did]))
    for chunk in chunks:
        sec = by_id[chunk.section_id]
        nodes.append(chunk.to_node(sec.title, sec.heading_path))
        edges.append(Edge(type=EdgeType.HAS_CHUNK, src=chunk.section_id, dst=chunk.id, doc_ids=[did]))
    ordered = sorted(chunks, key=lambda c: c.order)
    for a, b in zip(ordered, ordered[1:], strict=False):
        edges.append(Edge(type=EdgeType.NEXT, src=a.id, dst=b.id, doc_ids=[did]))
    return nodes, edges


def _scalar_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if isinstance(v, (str, int, float, bool))}


def _context_line(doc_title: str, heading_path: list[str]) -> str:
    parts: list[str] = []
    for part in [doc_title, *heading_path]:
        if part and (not parts or part.casefold() != parts[-1].casefold()):
            parts.append(part)
    return " > ".join(parts)


def vector_items(
    doc: SourceDocument, outline: Outline, chunks: list[ChunkRecord]
) -> tuple[list[VectorItem], list[VectorItem]]:
    """Chunk and section entries for Chroma. Chunks are embedded with their heading path in front (the
    structural context BAG-RAG attaches to each chunk); metadata carries the document's filterable fields."""
    base_meta = _scalar_metadata(doc.metadata)
    by_id = {s.id: s for s in outline.sections}
    chunk_items = []
    for c in chunks:
        sec = by_id[c.section_id]
        meta = {**base_meta, "doc_id": doc.doc_id, "section_id": sec.id, "order": c.order, "kind": c.kind}
        chunk_items.append(
            VectorItem(
                id=c.id,
                text=c.text,
                embed_text=f"{_context_line(doc.title, sec.heading_path)}\n{c.text}",
                metadata=meta,
            )
        )
    section_items = [
        VectorItem(
            id=s.id,
            text=s.title,
            embed_text=_context_line(doc.title, s.heading_path),
            metadata={**base_meta, "doc_id": doc.doc_id, "level": s.level, "order": s.order},
        )
        for s in outline.sections
    ]
    return chunk_items, section_items


def _embed_all(svc: Services, texts: list[str]) -> np.ndarray:
    """Embed every text of the run, longest first across the whole run (so each model batch pads little),
    in windows that report progress; rows come back in the order of ``texts``."""
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
    window = max(svc.settings.embedding_batch_size * 8, 256)
    parts = []
    for start in range(0, len(order), window):
        part = [texts[i] for i in order[start : start + window]]
        parts.append(embed_texts(svc.embeddings, part))
        svc.report("embed", min(start + window, len(texts)), len(texts))
    stacked = np.vstack(parts)
    out = np.empty_like(stacked)
    out[order] = stacked
    return out


def _batches(todo: list[int], prepared: list[PreparedDocument], max_docs: int, max_items: int) -> list[list[int]]:
    """Positions of ``todo`` grouped so a batch holds at most ``max_docs`` documents and about
    ``max_items`` vectors (a larger document gets a batch of its own)."""
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i in todo:
        n = len(prepared[i].chunk_vectors) + len(prepared[i].section_vectors)
        if current and (len(current) >= max_docs or size + n > max_items):
            out.append(current)
            current, size = [], 0
        current.append(i)
        size += n
    if current:
        out.append(current)
    return out


def write_documents(svc: Services, items: list[PreparedDocument]) -> None:
    """Vectors of every document of the batch, then their graph versions in one transaction, then the
    vectors the new versions no longer have. If the graph write fails, the vectors it overwrote are put
    back, so both stores keep the old version."""
    vs = svc.vectors
    undo: list[VectorSnapshot] = []
    try:
        for collection, attr, emb_attr in DOCUMENT_COLLECTIONS:
            entries = [v for item in items for v in getattr(item, attr)]
            if not entries:
                continue
            ids = [v.id for v in entries]
            undo.append(vs.snapshot(collection, ids))
            vs.upsert(
                collection,
                ids,
                [v.text for v in entries],
                [v.metadata for v in entries],
                embeddings=np.vstack([getattr(item, emb_attr) for item in items if getattr(item, attr)]),
            )
        svc.graph.replace_documents(
            [DocumentVersion(doc_id=item.doc.doc_id, nodes=item.nodes, edges=item.edges) for item in items]
        )
    except Exception:
        for snap in reversed(undo):
            vs.restore(snap)
        raise
    doc_ids = [item.doc.doc_id for item in items]
    where = {"doc_id": doc_ids[0]} if len(doc_ids) == 1 else {"doc_id": {"$in": doc_ids}}
    for collection, attr, _ in DOCUMENT_COLLECTIONS:
        keep = {v.id for item in items for v in getattr(item, attr)}
        stale = [i for i in vs.ids(collection, where=where) if i not in keep]
        if stale:
            vs.delete(collection, stale)

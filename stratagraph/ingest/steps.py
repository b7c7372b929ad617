"""Node functions of the ingest workflow (``workflows/ingest.py`` wires them).

load -> plan -> build -> extract -> embed -> resolve (entities, facts, concepts) -> write -> link -> summarize. Each is a small function of
the state that returns an update; the stores come from ``runtime.context`` (a :class:`~stratagraph.services.Services`). One document's
failure is reported for that document and never touches what is stored for the others. From the moment
``resolve`` reads the stored entities to the end of ``link``, the run holds the store's write lease
(``ingest/writing.py``), so writers sharing the stores, on this machine or another, take turns there; the
steps before it overlap.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from stratagraph.embeddings import embed_texts, embed_texts_with_spans
from stratagraph.graph_store.base import DocumentVersion, StoreUnavailable
from stratagraph.graph_store.vectors import VectorSnapshot
from stratagraph.ingest.chunking import chunk_outline
from stratagraph.ingest.concepts import concept_records, fuse_aliases, line_item_kinds, synonym_pairs
from stratagraph.ingest.extractors.base import ChunkExtraction
from stratagraph.ingest.knowledge import (
    FactSpan,
    document_references,
    extraction_input,
    fact_spans,
    knowledge_records,
    table_extractions,
)
from stratagraph.ingest import writing
from stratagraph.ingest.recovery import begin as begin_ingest
from stratagraph.ingest.recovery import end as end_ingest
from stratagraph.ingest.recovery import sweep
from stratagraph.ingest.linking import ENTITY_COLLECTION, link_documents, reconcile_entity_vectors
from stratagraph.ingest.loaders import load_paths
from stratagraph.ingest.resolution import DocumentEntities, KeyInfo, block_tokens, cluster_keys, resolve_document
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
from stratagraph.text.wordnet import wordnet

log = logging.getLogger(__name__)


#: Chroma collections that hold one document's own rows (metadata ``doc_id``), with the PreparedDocument
#: fields of their items and vectors.
DOCUMENT_COLLECTIONS: tuple[tuple[str, str, str], ...] = (
    ("chunks", "chunk_vectors", "chunk_embeddings"),
    ("sections", "section_vectors", "section_embeddings"),
    ("facts", "fact_vectors", "fact_embeddings"),
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
    outline: Outline | None = None
    chunks: list[ChunkRecord] = Field(default_factory=list)
    extractions: list[ChunkExtraction] = Field(default_factory=list)
    fact_spans: list[FactSpan] = Field(default_factory=list)  # facts' first statements, set by extract
    fact_span_vectors: Any = None  # np.ndarray, one row per fact span, set by the embed step
    entities: DocumentEntities | None = None  # set by resolve
    fact_vectors: list[VectorItem] = Field(default_factory=list)
    fact_embeddings: Any = None
    old_entities: list[str] = Field(default_factory=list)  # an updated document's entities before the write
    lost_similar: list[str] = Field(default_factory=list)  # other documents' chunks with SIMILAR edges into it

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


class EntityRow(BaseModel):
    """One entity-name vector (collection ``entities``, id = the name's key)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    key: str
    name: str
    type: str
    entity_id: str
    doc_ids: list[str]
    vector: Any


class IngestState(IngestInput, total=False):
    documents: list[SourceDocument]
    issues: list[LoadIssue]
    prepared: list[PreparedDocument]
    merges: dict[str, list[str]]  # entity id -> stored entity ids folded into it (set by resolve)
    entity_rows: list[EntityRow]
    reports: list[IngestReport]
    marker: str  # this run's running-marker (ingest/recovery.py)
    recovery: str  # what starting this run repaired
    lease: str  # the token of the store's write lease while the run holds it (resolve -> write -> link; ingest/writing.py)


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
    marker, recovery = begin_ingest(svc)  # repair what a killed ingest left (ingest/recovery.py)
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
    return {"prepared": prepared, "marker": str(marker), "recovery": str(recovery)}


def build(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Structure and text layers of each new or changed document: heading tree (BAG-RAG §3.1), chunks
    (BiG-RAG Alg. 1 with BAG-RAG eq. 2 carry-over), and their nodes, edges and vector items."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active]
    if todo:  # the extractor's workers start (spaCy loads) while the chunks are built: a document has a chunk or more
        try:
            svc.extractor.prepare(len(todo))
        except Exception:  # only a hint: an extractor that cannot start fails its documents in extract
            log.warning("preparing the extractor failed", exc_info=True)
    for n, i in enumerate(todo, 1):
        item = prepared[i]
        try:
            outline = build_outline(item.doc)
            chunks = chunk_outline(item.doc, outline, svc.settings)
            nodes, edges = structure_graph(item.doc, pending_hash(item.content_hash), outline, chunks)
            nodes[0].props["references"] = document_references(item.doc, outline, chunks)
            chunk_vectors, section_vectors = vector_items(item.doc, outline, chunks)
            update = {
                "nodes": nodes,
                "edges": edges,
                "chunk_vectors": chunk_vectors,
                "section_vectors": section_vectors,
                "outline": outline,
                "chunks": chunks,
            }
        except Exception as exc:  # one bad document must not stop the others
            log.exception("building %s failed", item.doc.source)
            update = {"error": f"{type(exc).__name__}: {exc}"}
        prepared[i] = item.model_copy(update=update)
        svc.report("structure", n, len(todo))
    return {"prepared": prepared}


def extract(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Entities, n-ary facts and relations of every text chunk (spaCy, or the LLM when configured), and
    one fact per table row with typed quantities. An extractor that cannot work at all (an unreachable
    LLM endpoint after its retries) fails every waiting document with its message; nothing is written."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active and p.outline is not None]
    if not todo:
        return {}
    inputs = [extraction_input(prepared[i].doc, prepared[i].outline, prepared[i].chunks) for i in todo]
    try:
        results = svc.extractor.extract(inputs)
    except Exception as exc:
        return {"prepared": _fail_all(prepared, todo, "extraction failed", exc)}
    for n, (i, text_results) in enumerate(zip(todo, results, strict=True), 1):
        item = prepared[i]
        extractions = [*text_results, *table_extractions(item.doc, item.chunks)]
        order = {c.id: c.order for c in item.chunks}
        extractions.sort(key=lambda ex: order.get(ex.chunk_id, 0))
        spans = fact_spans(item.chunks, extractions)
        prepared[i] = item.model_copy(update={"extractions": extractions, "fact_spans": spans})
        svc.report("extract", n, len(todo))
    return {"prepared": prepared}


def embed(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Embed all chunks and sections of the run in large batches (one pass over the model); each fact's
    vector is pooled from the tokens of its clause in its chunk's own forward pass. If the embedder fails
    (an unreachable endpoint after its retries), every document waiting for it fails with that message and
    nothing is written."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active]
    texts: list[str] = []
    spans: list[list[tuple[int, int]]] = []
    span_owner: list[list[int]] = []  # per text: index of each span in its document's fact_spans
    n_texts: dict[int, int] = {}  # per document: how many of ``texts`` are its own
    for i in todo:
        first = len(texts)
        item = prepared[i]
        by_chunk: dict[str, list[tuple[int, FactSpan]]] = {}
        loose: list[int] = []
        for k, fs in enumerate(item.fact_spans):
            if fs.start is not None and fs.end is not None and fs.end > fs.start:
                by_chunk.setdefault(fs.chunk_id, []).append((k, fs))
            else:
                loose.append(k)
        for v in item.chunk_vectors:
            offset = len(v.embed_text) - len(v.text)
            own = by_chunk.get(v.id, [])
            texts.append(v.embed_text)
            spans.append([(offset + fs.start, offset + fs.end) for _, fs in own])  # type: ignore[operator]
            span_owner.append([k for k, _ in own])
        for v in item.section_vectors:
            texts.append(v.embed_text)
            spans.append([])
            span_owner.append([])
        for k in loose:  # a fact whose clause could not be located is embedded on its own
            desc = item.fact_spans[k].description
            texts.append(desc)
            spans.append([(0, len(desc))])
            span_owner.append([k])
        n_texts[i] = len(texts) - first
    if not texts:
        return {}
    try:
        vectors, span_vectors = _embed_all(svc, texts, spans)
    except Exception as exc:
        return {"prepared": _fail_all(prepared, todo, "embedding failed", exc)}
    at = 0
    dim = vectors.shape[1]
    for i in todo:
        item = prepared[i]
        n_c, n_s = len(item.chunk_vectors), len(item.section_vectors)
        facts = np.zeros((len(item.fact_spans), dim), dtype=np.float32)
        for t in range(at, at + n_texts[i]):
            for k, row in zip(span_owner[t], span_vectors[t], strict=True):
                facts[k] = row
        prepared[i] = item.model_copy(
            update={
                "chunk_embeddings": vectors[at : at + n_c],
                "section_embeddings": vectors[at + n_c : at + n_c + n_s],
                "fact_span_vectors": facts,
            }
        )
        at += n_texts[i]
    return {"prepared": prepared}


def resolve(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Entity resolution (BiG-RAG §4.1.3) for the run against the store, then each document's knowledge
    layer: Entity, Fact and their edges, fact vectors, and the entity-name rows to store; with
    ``settings.concept_layer``, KAG §2.4's synonym fusion of the document's entities (aliases and SYNONYM
    edges) and its concept layer (``ingest/concepts.py``: Concept, BELONGS_TO, IS_A, SYNONYM; the chat
    model's types, hypernyms and synonyms too when the LLM extractor is in use). The run's entity names are
    embedded first; then the store's write lease is taken (waiting for another writer to finish its write
    section; after a writer that died holding it, the orphan rows it left are swept first) and held to the
    end of ``link``."""
    svc = services_of(runtime)
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active and p.outline is not None]
    if not todo:
        return {}
    resolved: dict[int, DocumentEntities] = {}
    for i in todo:
        item = prepared[i]
        section_of = {c.id: c.section_id for c in item.chunks}
        resolved[i] = resolve_document(item.doc.metadata, item.extractions, section_of, (c.text for c in item.chunks))
    names = name_vectors(svc, resolved)  # the embedder's work, before the lease: other writers go on meanwhile
    token, taken = writing.take(svc)  # from here to the end of link, one writer at a time (ingest/writing.py)
    try:
        with writing.working(token):
            recovery = state.get("recovery") or ""
            if taken.broken is not None:  # a writer died inside its write section: repair what it left first (its
                deleted = sweep(svc)  # orphan entity-name rows would otherwise be resolved against)
                rows = ", ".join(f"{n} {c}" for c, n in sorted(deleted.items()) if n) or "none"
                note = f"writer {taken.broken.holder} died holding the write lease; orphan vector rows deleted: {rows}"
                log.warning("recovery: %s", note)
                recovery = f"{recovery}; {note}".lstrip("; ")
            update = _resolve_against_store(svc, prepared, todo, resolved, names)
            update["recovery"] = recovery
    except BaseException:
        writing.let_go(token)
        raise
    return {**update, "lease": token}


def _resolve_against_store(
    svc: Services,
    prepared: list[PreparedDocument],
    todo: list[int],
    resolved: dict[int, DocumentEntities],
    names: dict[str, np.ndarray],
) -> IngestState:
    """The part of :func:`resolve` that reads the store (under the write lease)."""
    entity_of, merges, rows = cluster_run(svc, {i: prepared[i].doc.doc_id for i in todo}, resolved, names)
    concepts = svc.settings.concept_layer
    lexicon = wordnet() if concepts and svc.settings.concept_wordnet else None
    vector_of = {r.key: r.vector for r in rows} if concepts else {}
    docs = [(prepared[i].doc.doc_id, prepared[i].doc.title, resolved[i]) for i in todo]
    hints = concept_hints(svc, docs, entity_of) if concepts else {}
    for i in todo:
        item = prepared[i]
        assert item.outline is not None
        pairs: list[tuple[str, str, str, str]] = []
        if concepts:  # KAG §2.4 synonym fusion: the fused names become aliases (before the entity records)
            pairs = synonym_pairs(item.extractions, resolved[i], entity_of, vector_of, svc.settings.synonym_name_floor)
            fuse_aliases(resolved[i], pairs)
        records = knowledge_records(item.doc, item.outline, item.chunks, item.extractions, resolved[i], entity_of)
        if concepts:
            c_nodes, c_edges = concept_records(
                item.doc.doc_id,
                resolved[i],
                entity_of,
                item_kinds=line_item_kinds(item.outline, item.chunks, item.extractions, resolved[i]),
                wordnet=lexicon,
                hints=hints.get(item.doc.doc_id),
                synonyms=[(a, b) for _, _, a, b in pairs],
            )
            records.nodes += c_nodes
            records.edges += c_edges
        vectors = item.fact_span_vectors if item.fact_span_vectors is not None else np.zeros((0, 0), np.float32)
        by_fact = {fs.fact_id: k for k, fs in enumerate(item.fact_spans)}
        fact_nodes = [n for n in records.nodes if n.label == NodeLabel.FACT]
        meta = scalar_metadata(item.doc.metadata)
        fact_items = [
            VectorItem(
                id=n.id,
                text=n.props["description"],
                embed_text=n.props["description"],
                metadata={**meta, "doc_id": item.doc.doc_id, "section_id": n.props["section_id"], "type": n.props["type"]},
            )
            for n in fact_nodes
            if n.id in by_fact
        ]
        emb = np.vstack([vectors[by_fact[v.id]] for v in fact_items]) if fact_items else None
        prepared[i] = item.model_copy(
            update={
                "entities": resolved[i],
                "nodes": [*item.nodes, *records.nodes],
                "edges": [*item.edges, *records.edges],
                "fact_vectors": fact_items,
                "fact_embeddings": emb,
            }
        )
    return {"prepared": prepared, "merges": merges, "entity_rows": rows}


def concept_hints(
    svc: Services, docs: list[tuple[str, str, DocumentEntities]], entity_of: dict[str, str]
) -> dict[str, Any]:
    """Per document id, what the chat model says of its entities' types and their concepts' hypernyms and
    synonyms (``ingest/concept_llm.py``), when the LLM extractor is in use; else nothing."""
    if not svc.settings.extractor_name().startswith("llm:"):
        return {}
    from stratagraph.ingest.concept_llm import ConceptTyper

    with ConceptTyper.from_settings(svc.settings) as typer:
        return typer.hints(docs, entity_of)


def name_vectors(svc: Services, resolved: dict[int, DocumentEntities]) -> dict[str, np.ndarray]:
    """The name vector of every entity key of the run, embedded as short texts in one batch. A key's vector
    embeds the key itself (the model is uncased and strips accents, so this is the name's vector) and never a
    run-dependent spelling: the same key gets the same vector whatever the order. Computed before the write
    lease is taken, so it never waits for another writer nor makes one wait."""
    keys = sorted({k for de in resolved.values() for k, c in de.contributions.items() if c.names})
    if not keys:
        return {}
    vectors = _embed_all(svc, [k.split("@", 1)[0] for k in keys], None)[0]
    return {k: vectors[j] for j, k in enumerate(keys)}


def cluster_run(
    svc: Services,
    doc_of: dict[int, str],
    resolved: dict[int, DocumentEntities],
    names_vectors: dict[str, np.ndarray] | None = None,
) -> tuple[dict[str, str], dict[str, list[str]], list[EntityRow]]:
    """Cluster the run's entity keys with the stored ones (name vectors: stored rows reused, the others from
    ``names_vectors`` (:func:`name_vectors`), or embedded here as short texts in one batch)."""
    names: dict[str, dict[str, int]] = {}
    types: dict[str, dict[str, int]] = {}
    docs: dict[str, set[str]] = {}
    for i, de in resolved.items():
        for key, c in de.contributions.items():
            for name, n in c.names.items():
                names.setdefault(key, {})[name] = names.get(key, {}).get(name, 0) + n
            for t, n in c.types.items():
                types.setdefault(key, {})[t] = types.get(key, {}).get(t, 0) + n
            docs.setdefault(key, set()).add(doc_of[i])
    if not names:
        return {}, {}, []
    vs = svc.vectors
    stored_ids = set(vs.ids(ENTITY_COLLECTION))
    run_tokens = {t for k in names if "@" not in k for t in block_tokens(k)}
    candidates = {k for k in stored_ids if "@" not in k and run_tokens.intersection(block_tokens(k))}
    snap = vs.snapshot(ENTITY_COLLECTION, sorted(candidates | (stored_ids & set(names))))
    top = lambda counts: min(counts, key=lambda x: (-counts[x], x))  # noqa: E731
    fresh = sorted(k for k in names if k not in snap.rows)
    known = names_vectors or {}
    missing = [k for k in fresh if k not in known]  # (all of them when no vectors were handed in)
    # a key's vector embeds the key itself, never a run-dependent spelling (see name_vectors)
    missing_vectors = _embed_all(svc, [k.split("@", 1)[0] for k in missing], None)[0] if missing else np.zeros((0, 0))
    vec_of = {k: missing_vectors[j] for j, k in enumerate(missing)}
    vec_of.update({k: known[k] for k in fresh if k in known})
    existing: dict[str, KeyInfo] = {}
    for k, (vec, meta) in snap.rows.items():
        meta = meta or {}
        vec_of.setdefault(k, vec)
        existing[k] = KeyInfo(
            name=str(meta.get("name", k)), type=str(meta.get("type", "")), vector=vec,
            entity_id=str(meta.get("entity_id") or f"ent:{k}"), mergeable="@" not in k,
        )
    new = {
        # line items are keyed within their section and never merge
        k: KeyInfo(name=top(names[k]), type=top(types[k]), vector=vec_of[k], mergeable="@" not in k) for k in names
    }
    res = cluster_keys(new, existing, svc.settings.entity_merge_threshold)
    rows = [
        EntityRow(
            key=k, name=new[k].name, type=new[k].type, entity_id=res.entity_of[k], doc_ids=sorted(docs[k]), vector=vec_of[k]
        )
        for k in sorted(names)
    ]
    return res.entity_of, res.merges, rows


def write(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Write documents in batches: vectors first, then the graph in one transaction per batch (the stored
    content hash moves last, so a failure leaves the old version and a re-run repeats the work), then drop
    stale vectors. A batch that fails is written again document by document, so only the bad one fails."""
    try:
        with writing.working(state.get("lease")):
            return _write(services_of(runtime), state)
    except BaseException:
        writing.let_go(state.get("lease"))
        raise


def _write(svc: Services, state: IngestState) -> IngestState:
    """:func:`write` (under the run's write lease)."""
    prepared = list(state.get("prepared", []))
    todo = [i for i, p in enumerate(prepared) if p.active]
    merges = dict(state.get("merges") or {})
    writing.check(state.get("lease"))  # this run's lease was not broken by another writer
    for i in todo:
        if prepared[i].status == IngestStatus.UPDATED:
            prepared[i] = prepared[i].model_copy(update=document_dependents(svc, prepared[i].doc.doc_id))
    done = 0
    for batch in _batches(todo, prepared, max_docs=512, max_items=4096):
        writing.check(state.get("lease"))
        try:
            write_documents(svc, [prepared[i] for i in batch], merges)
            merges = {}
        except StoreUnavailable:
            raise  # the store is gone, not this batch: stop the run (written batches are complete)
        except Exception:
            log.exception("batch write failed; retrying its %d documents one by one", len(batch))
            for i in batch:
                try:
                    write_documents(svc, [prepared[i]], merges)
                    merges = {}
                except StoreUnavailable:
                    raise
                except Exception as exc:
                    log.exception("writing %s failed", prepared[i].doc.source)
                    prepared[i] = prepared[i].model_copy(update={"error": f"{type(exc).__name__}: {exc}"})
        done += len(batch)
        svc.report("write", done, len(todo))
    written = {prepared[i].doc.doc_id for i in todo if prepared[i].error is None}
    rows = [r for r in state.get("entity_rows") or [] if written.intersection(r.doc_ids)]
    if rows:
        svc.vectors.upsert(
            ENTITY_COLLECTION,
            [r.key for r in rows],
            [r.name for r in rows],
            [{"entity_id": r.entity_id, "name": r.name, "type": r.type} for r in rows],
            embeddings=np.vstack([r.vector for r in rows]),
        )
    return {"prepared": prepared}


def link(state: IngestState, runtime: Runtime[Services]) -> IngestState:
    """Cross-document links of the written documents (CITES, DESCRIBED_BY, SIMILAR; ``ingest/linking.py``),
    stale entity-name rows dropped, and the documents' content hashes made final."""
    try:
        with writing.working(state.get("lease")):
            return _link(services_of(runtime), state)
    finally:  # the end of the write section (ingest/writing.py)
        writing.let_go(state.get("lease"))


def _link(svc: Services, state: IngestState) -> IngestState:
    prepared = state.get("prepared", [])
    written = [p for p in prepared if p.active]
    if not written:
        return {}
    writing.check(state.get("lease"))
    touched = {n.id for p in written for n in p.nodes if n.label == NodeLabel.ENTITY}
    touched |= {e for target, sources in (state.get("merges") or {}).items() for e in (target, *sources)}
    touched |= {e for p in written for e in p.old_entities}
    try:
        reconcile_entity_vectors(svc, touched)
        link_documents(
            svc,
            [p.doc.doc_id for p in written],
            lost_similar={c for p in written for c in p.lost_similar},
            touched_entities=touched,
            final_hashes={p.doc.doc_id: p.content_hash for p in written},
        )
    except StoreUnavailable:
        raise
    except Exception as exc:  # the documents are stored with a pending hash: the next run links them again
        log.exception("linking failed")
        error = f"linking failed (the next ingest retries it): {type(exc).__name__}: {exc}"
        return {"prepared": [p.model_copy(update={"error": error}) if p.active else p for p in prepared]}
    svc.report("link", 1, 1)
    return {}


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
    writing.let_go(state.get("lease"))  # (released at the end of link already; this is for a run that skipped it)
    if state.get("marker"):
        end_ingest(Path(state["marker"]))
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


def _fail_all(prepared: list[PreparedDocument], todo: list[int], what: str, exc: Exception) -> list[PreparedDocument]:
    """Every waiting document fails with the one message of a step that could not work at all (an
    unreachable extractor or embedding endpoint after its retries); nothing of theirs is written."""
    log.exception("%s", what)
    error = f"{what}: {type(exc).__name__}: {exc}"
    out = list(prepared)
    for i in todo:
        out[i] = out[i].model_copy(update={"error": error})
    return out


def pending_hash(content_hash: str) -> str:
    """The content hash a document carries until its cross-document links are written: a run that stops
    before linking leaves it, so the next run sees the document as changed and does it again."""
    return f"pending:{content_hash}"


def document_dependents(svc: Services, doc_id: str) -> dict[str, list[str]]:
    """What replacing a stored document takes away from others: its entities (their name rows may go
    stale) and the chunks of other documents whose SIMILAR lists point into it."""
    graph = svc.graph
    chunk_ids = [n.id for n in graph.nodes_by_label(NodeLabel.CHUNK, doc_id)]
    lost = {
        e.src
        for c in chunk_ids
        for e in graph.get_edges(dst=c, types=[EdgeType.SIMILAR])
        if not e.src.startswith(f"{doc_id}#")
    }
    return {
        "old_entities": [n.id for n in graph.nodes_by_label(NodeLabel.ENTITY, doc_id)],
        "lost_similar": sorted(lost),
    }


def scalar_metadata(meta: dict[str, Any]) -> dict[str, Any]:
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
    base_meta = scalar_metadata(doc.metadata)
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


def _embed_all(
    svc: Services, texts: list[str], spans: list[list[tuple[int, int]]] | None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Embed every text of the run, longest first across the whole run (so each model batch pads little),
    in windows that report progress; rows come back in the order of ``texts``. With ``spans``, also one
    vector per character span of each text, pooled from the same forward pass. Without, a text given twice
    is embedded once (line items of one name in several sections)."""
    if spans is None and len(set(texts)) < len(texts):
        unique = list(dict.fromkeys(texts))
        vectors = _embed_all(svc, unique, None)[0]
        row = {t: j for j, t in enumerate(unique)}
        return vectors[[row[t] for t in texts]], [np.zeros((0, 0), np.float32)] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
    window = max(svc.settings.embedding_batch_size * 8, 256)
    parts = []
    span_out: list[np.ndarray] = [np.zeros((0, 0), np.float32)] * len(texts)
    for start, stop in _windows([len(texts[i]) for i in order], window):
        idx = order[start:stop]
        part = [texts[i] for i in idx]
        if spans is None:
            parts.append(embed_texts(svc.embeddings, part))
        else:
            vecs, span_vecs = embed_texts_with_spans(svc.embeddings, part, [spans[i] for i in idx])
            parts.append(vecs)
            for i, rows in zip(idx, span_vecs, strict=True):
                span_out[i] = rows
        svc.report("embed", stop, len(texts))
    stacked = np.vstack(parts)
    out = np.empty_like(stacked)
    out[order] = stacked
    return out, span_out


#: a window of :func:`_embed_all` holds ``window`` texts, or more short ones up to this many characters a text
WINDOW_CHARS = 512


def _windows(sorted_chars: list[int], window: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each call to the embedder over texts sorted longest first: ``window`` texts, or
    as many more short ones as fit in ``window * WINDOW_CHARS`` characters (at most 32 windows' worth). A
    window of 256 entity names is a single model batch, too little to spread over the cores; 8,000 of them
    embed in about half the time of 256 at a time. Vectors do not depend on the window."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(sorted_chars)
    while start < n:
        stop = min(start + window, n)
        chars = sum(sorted_chars[start:stop])
        while stop < n and stop - start < window * 32 and chars + sorted_chars[stop] <= window * WINDOW_CHARS:
            chars += sorted_chars[stop]
            stop += 1
        out.append((start, stop))
        start = stop
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


def write_documents(
    svc: Services, items: list[PreparedDocument], merges: dict[str, list[str]] | None = None
) -> None:
    """Vectors of every document of the batch, then their graph versions in one transaction (after
    folding merged entities, ``merges``), then the vectors the new versions no longer have. If the graph
    write fails, the vectors it overwrote are put back, so both stores keep the old version."""
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
            [DocumentVersion(doc_id=item.doc.doc_id, nodes=item.nodes, edges=item.edges) for item in items],
            merges=merges,
        )
    except Exception:
        for snap in reversed(undo):
            vs.restore(snap)
        raise
    doc_ids = [item.doc.doc_id for item in items]
    for collection, attr, _ in DOCUMENT_COLLECTIONS:
        keep = {v.id for item in items for v in getattr(item, attr)}
        stale = [i for i in vs.ids(collection, {"doc_id": doc_ids}) if i not in keep]
        if stale:
            vs.delete(collection, stale)

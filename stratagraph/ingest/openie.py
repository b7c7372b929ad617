"""Importing an LLM-built graph: HippoRAG's OpenIE output as entities and BiG-RAG n-ary facts on stored chunks.

HippoRAG's OpenIE file (``openie_<model>.json``) holds, per passage, its ``title`` and ``text`` (or ``passage``
= title, newline, text), the ``extracted_entities`` an LLM named and the ``extracted_triples`` (subject,
predicate, object) it read. :func:`import_openie` puts them on the documents already ingested, so every
retriever and workflow runs on a graph an LLM built (issue 24 item 5: what does the extractor cost us?):

* **Matching.** A passage belongs to the stored documents whose title and text are its title and text
  (compared case- and accent-folded with all whitespace removed, so chunk boundaries do not matter). A
  passage that matches nothing is reported, not guessed. Within a document, an entity goes to the chunks
  whose text contains it and a triple to the first chunk containing its subject (else its object, else the
  document's first chunk).
* **Entities** are resolved exactly as ingestion resolves the extractor's: :func:`resolve_document` (the
  normalised key of the name, acronyms the text defines), then the embedding merge against every stored key
  (``steps.cluster_run``: the same threshold and guards), so "American Institute of Physics" from GPT-3.5 and
  from spaCy are one node. An OpenIE name carries no type: it counts as ``THING`` (a weak type), so a type
  spaCy gave the same entity wins.
* **Facts**: one per distinct triple description (``"subject predicate object"``) within a section, with
  ``predicate``, ``roles`` {subject, object}, ``arguments`` with their roles (offsets in the fact's first
  chunk, for the phrases found there verbatim), ``source`` (e.g. ``openie:gpt-3.5``); ``IN_FACT`` from the
  subject's and object's entities, ``SUPPORTED_BY`` the chunk, ``MENTIONS`` chunk -> entity, ``RELATED``
  subject -> object with the predicate, and a fact vector (the description embedded). Imported edges carry
  ``props.source`` and a ``key`` of their own (``openie`` / ``openie:<predicate>``), so they sit beside the
  extractor's edges instead of overwriting them.
* **Provenance**: everything imported carries the document's id. Each touched document is written as one
  new version (``GraphStore.replace_documents``: every document of the file in one transaction, all or
  nothing) holding what it had, minus any earlier OpenIE import (and, with ``replace``, minus the extractor's
  entities and facts: clause and table-row facts alike), plus this import. Stored entities that a new key
  outranks are folded into its id first, in a transaction of their own, as ingestion's resolution would fold
  them (so a failure after it leaves a store that is consistent, with the import not yet written). Deleting or
  re-ingesting a changed document removes the import with no orphans; importing the same file again writes
  the same graph (the export is byte-identical). An entity's per-document contribution keeps what the import
  added under ``openie_names`` / ``openie_types`` / ``openie_keys`` so a later import can take it out again.
  One OpenIE import per document is kept: a second one (any source) replaces the first.
* **Errors**: the whole file is read and checked before anything is written; a malformed file raises
  :class:`OpenIEError` naming the file and the passage. Triples that are not three strings (HippoRAG's output
  has some with 2, 4 or 5 parts; HippoRAG itself skips them) are skipped and counted.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field

from stratagraph.embeddings import embed_texts
from stratagraph.graph_store.base import DocumentVersion
from stratagraph.ingest.extractors.base import (
    ChunkExtraction,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelation,
    FactArgument,
)
from stratagraph.ingest.linking import (
    ENTITY_COLLECTION,
    link_documents,
    reconcile_entity_vectors,
)
from stratagraph.ingest import writing
from stratagraph.ingest.resolution import resolve_document
from stratagraph.ingest.steps import cluster_run, scalar_metadata
from stratagraph.schema import BY_DOC, Edge, EdgeType, Node, NodeLabel, combine_part
from stratagraph.text.titles import fold

if TYPE_CHECKING:
    from stratagraph.services import Services

__all__ = ["DEFAULT_SOURCE", "OpenIEError", "OpenIEPassage", "OpenIEReport", "import_openie", "read_openie"]

#: the provenance mark of HippoRAG's published extraction (GPT-3.5-turbo)
DEFAULT_SOURCE = "openie:gpt-3.5"
#: the confidence of an imported fact: that of the spaCy extractor's clause facts, so neither side is favoured
FACT_CONFIDENCE = 0.9
FACTS_COLLECTION = "facts"
_KNOWLEDGE_EDGES = frozenset({EdgeType.MENTIONS, EdgeType.IN_FACT, EdgeType.SUPPORTED_BY, EdgeType.RELATED})
_MARKS = ("openie_names", "openie_types", "openie_keys")


class OpenIEError(ValueError):
    """A malformed OpenIE file (the message names the file and the problem)."""


class OpenIEPassage(BaseModel):
    index: int  # position in the file's passage list
    title: str
    text: str
    entities: list[str]
    triples: list[tuple[str, str, str]]


class OpenIEReport(BaseModel):
    """What an import did."""

    file: str
    source: str
    replace: bool
    passages: int
    matched: int
    unmatched: list[dict[str, Any]] = Field(default_factory=list)  # {"index", "title", "reason"}
    documents: int = 0
    entities: int = 0  # distinct entity nodes the import contributes to
    facts: int = 0
    skipped_triples: int = 0  # not three non-empty strings
    removed_facts: int = 0  # the extractor's facts taken out (replace) or an earlier import's

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# ------------------------------------------------------------------------------------------------ reading


def read_openie(path: str | Path) -> tuple[list[OpenIEPassage], int]:
    """The passages of an OpenIE file and the number of triples skipped (not three non-empty strings).
    Raises :class:`OpenIEError` naming the file and the problem for anything else that is malformed."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OpenIEError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OpenIEError(f"{path}: cannot read it: {exc}") from None
    except json.JSONDecodeError as exc:
        raise OpenIEError(f"{path}: not JSON: {exc}") from None
    docs = raw.get("docs") if isinstance(raw, dict) else raw
    if not isinstance(docs, list):
        raise OpenIEError(f"{path}: expected HippoRAG's OpenIE format, an object with a 'docs' list (or a list of passages)")
    passages: list[OpenIEPassage] = []
    skipped = 0
    for i, item in enumerate(docs):
        where = f"{path}: passage {i}"
        if not isinstance(item, dict):
            raise OpenIEError(f"{where}: expected an object, found {type(item).__name__}")
        title, text = item.get("title"), item.get("text")
        if title is None or text is None:
            passage = item.get("passage")
            if not isinstance(passage, str) or "\n" not in passage:
                raise OpenIEError(f"{where}: needs 'title' and 'text' (or 'passage' as title, newline, text)")
            title, text = passage.split("\n", 1) if title is None and text is None else (title, text)
        if not isinstance(title, str) or not isinstance(text, str):
            raise OpenIEError(f"{where}: 'title' and 'text' must be strings")
        entities = item.get("extracted_entities", [])
        triples = item.get("extracted_triples", [])
        if not isinstance(entities, list) or not all(isinstance(e, str) for e in entities):
            raise OpenIEError(f"{where} ({title!r}): 'extracted_entities' must be a list of strings")
        if not isinstance(triples, list) or not all(isinstance(t, list) for t in triples):
            raise OpenIEError(f"{where} ({title!r}): 'extracted_triples' must be a list of [subject, predicate, object] lists")
        good: list[tuple[str, str, str]] = []
        for t in triples:
            if len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t):
                good.append((" ".join(t[0].split()), " ".join(t[1].split()), " ".join(t[2].split())))
            else:
                skipped += 1
        names = [" ".join(e.split()) for e in entities if e.strip()]
        passages.append(OpenIEPassage(index=i, title=title, text=text, entities=names, triples=good))
    return passages, skipped


# ------------------------------------------------------------------------------------------------ matching


def _squash(text: str) -> str:
    return "".join(fold(text).split())


def match_passages(
    passages: Sequence[OpenIEPassage], documents: Iterable[Node], chunks_of: dict[str, list[Node]]
) -> tuple[dict[str, OpenIEPassage], list[dict[str, Any]]]:
    """Stored document id -> its passage, and the passages that match no document (with why)."""
    by_title: dict[str, list[str]] = defaultdict(list)
    text_of: dict[str, str] = {}
    for doc in documents:
        by_title[_squash(str(doc.props.get("title") or ""))].append(doc.id)
        text_of[doc.id] = "".join(_squash(str(c.props.get("text") or "")) for c in chunks_of.get(doc.id, []))
    matched: dict[str, OpenIEPassage] = {}
    unmatched: list[dict[str, Any]] = []
    for p in passages:
        same_title = by_title.get(_squash(p.title), [])
        squashed = _squash(p.text)
        hits = [d for d in same_title if text_of[d] == squashed and chunks_of.get(d)]  # text chunks to put it on
        if not hits:
            reason = "no stored document has this title" if not same_title else "a document has this title but another text"
            unmatched.append({"index": p.index, "title": p.title, "reason": reason})
        for d in hits:
            matched.setdefault(d, p)  # a passage listed twice: the first wins
    return matched, unmatched


def _find(text: str, phrase: str) -> tuple[int, int] | None:
    """Where ``phrase`` is written in ``text`` (case-insensitive), or None."""
    folded = text.casefold()
    at = folded.find(phrase.casefold()) if len(folded) == len(text) else text.find(phrase)
    return (at, at + len(phrase)) if at >= 0 else None


def passage_extractions(passage: OpenIEPassage, chunks: Sequence[Node]) -> list[ChunkExtraction]:
    """The passage's entities and triples as extractions of the document's chunks (in reading order)."""
    texts = [str(c.props.get("text") or "") for c in chunks]
    folded = [fold(t) for t in texts]

    def home(name: str) -> int | None:
        key = fold(name)
        return next((i for i, t in enumerate(folded) if key in t), None)

    out = [ChunkExtraction(chunk_id=c.id) for c in chunks]
    names: list[set[str]] = [set() for _ in chunks]
    for name in passage.entities:
        found = [i for i, t in enumerate(folded) if fold(name) in t] or [0]
        for i in found:
            names[i].add(name)
    for s, p, o in passage.triples:
        at = home(s)
        at = home(o) if at is None else at
        at = 0 if at is None else at
        names[at].update((s, o))
        text = texts[at]
        args = []
        for role, phrase in (("subject", s), ("object", o)):
            span = _find(text, phrase)
            if span is not None and text[span[0] : span[1]].casefold() == phrase.casefold():
                args.append(FactArgument(predicate=p, role=role, text=text[span[0] : span[1]], start=span[0], end=span[1], entity=phrase))
        out[at].facts.append(
            ExtractedFact(
                description=f"{s} {p} {o}",
                type=p.casefold(),
                confidence=FACT_CONFIDENCE,
                entities=[s, o],
                predicate=p.casefold(),
                arguments=sorted(args, key=lambda a: (a.start, a.role)),
            )
        )
        out[at].relations.append(ExtractedRelation(subject=s, predicate=p, object=o))
    for i, ex in enumerate(out):
        ex.entities.extend(ExtractedEntity(name=n, type="THING") for n in sorted(names[i]))
    return out


def openie_fact_id(section_id: str, description: str) -> str:
    digest = hashlib.sha1(" ".join(description.casefold().split()).encode("utf-8")).hexdigest()[:16]
    return f"fact:openie:{section_id}:{digest}"


# ------------------------------------------------------------------------------------------------ versions


def _is_imported(props: dict[str, Any]) -> bool:
    return str(props.get("source") or "").startswith("openie:")


def _without_import(part: dict[str, Any]) -> dict[str, Any]:
    """An entity's per-document contribution minus what an OpenIE import added to it."""
    out = {k: v for k, v in part.items() if k not in _MARKS}
    for field, mark in (("names", "openie_names"), ("types", "openie_types")):
        added = part.get(mark) or {}
        counts = {k: int(v) - int(added.get(k, 0)) for k, v in (part.get(field) or {}).items()}
        out[field] = {k: v for k, v in counts.items() if v > 0 or (v == 0 and k not in added)}
    out["keys"] = sorted(set(part.get("keys") or ()) - set(part.get("openie_keys") or ()))
    return out


def _empty(part: dict[str, Any]) -> bool:
    return not part.get("names") and not part.get("keys")


def _current_version(svc: Services, doc_id: str) -> tuple[list[Node], list[Edge]]:
    """Everything the store holds with ``doc_id`` in its provenance (the document's current version)."""
    graph = svc.graph
    nodes = [n for label in NodeLabel for n in graph.nodes_by_label(label, doc_id)]
    ids = [n.id for n in nodes]
    edges: dict[str, Edge] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        for e in [*graph.get_edges(src=part), *graph.get_edges(dst=part)]:
            if doc_id in e.doc_ids:
                edges[e.id] = e
    return nodes, [edges[k] for k in sorted(edges)]


def _import_records(
    doc_id: str,
    chunks: Sequence[Node],
    extractions: Sequence[ChunkExtraction],
    key_of: dict[str, dict[str, str]],
    contributions: dict[str, Any],
    entity_of: dict[str, str],
    source: str,
) -> tuple[list[Node], list[Edge], dict[str, dict[str, Any]]]:
    """Fact nodes and the import's edges for one document, and each entity's contribution."""
    section_of = {c.id: str(c.props.get("section_id") or "") for c in chunks}
    facts: dict[str, dict[str, Any]] = {}
    mentions: dict[tuple[str, str], int] = {}
    in_fact: set[tuple[str, str]] = set()
    supported: set[tuple[str, str]] = set()
    related: set[tuple[str, str, str]] = set()
    used: dict[str, str] = {}
    for ex in extractions:
        keys = key_of.get(ex.chunk_id, {})
        ents = {name: entity_of[k] for name, k in keys.items() if k in entity_of}
        for k in keys.values():
            if k in entity_of:
                used[k] = entity_of[k]
                pair = (ex.chunk_id, entity_of[k])
                mentions[pair] = mentions.get(pair, 0) + 1
        for fact, rel in zip(ex.facts, ex.relations, strict=True):
            fid = openie_fact_id(section_of[ex.chunk_id], fact.description)
            record = facts.setdefault(
                fid,
                {
                    "description": fact.description,
                    "type": fact.type,
                    "confidence": fact.confidence,
                    "doc_id": doc_id,
                    "section_id": section_of[ex.chunk_id],
                    "chunk_ids": [],
                    "quantities": [],
                    "attributes": {},
                    "arity": 0,
                    "predicate": fact.predicate,
                    "arguments": [a.model_dump(mode="json") for a in fact.arguments],
                    "roles": {"subject": rel.subject, "object": rel.object},
                    "source": source,
                },
            )
            if ex.chunk_id not in record["chunk_ids"]:
                record["chunk_ids"].append(ex.chunk_id)
            supported.add((fid, ex.chunk_id))
            for name in fact.entities:
                if name in ents:
                    in_fact.add((ents[name], fid))
            src, dst = ents.get(rel.subject), ents.get(rel.object)
            if src and dst and src != dst:
                related.add((src, dst, rel.predicate.casefold()))
    arity: dict[str, int] = defaultdict(int)
    for _, fid in in_fact:
        arity[fid] += 1
    nodes = []
    for fid in sorted(facts):
        facts[fid]["arity"] = arity.get(fid, 0)
        nodes.append(Node(id=fid, label=NodeLabel.FACT, doc_ids=[doc_id], props=facts[fid]))
    parts: dict[str, dict[str, Any]] = {}
    for key, eid in sorted(used.items()):
        c = contributions[key]
        mine = {"names": dict(c.names), "types": dict(c.types), "keys": [key], "description": c.description}
        parts[eid] = combine_part(parts[eid], mine) if eid in parts else mine
    mark = {"source": source}
    edges = [
        Edge(type=EdgeType.MENTIONS, src=c, dst=e, key="openie", weight=float(n), doc_ids=[doc_id], props=mark)
        for (c, e), n in sorted(mentions.items())
    ]
    edges += [Edge(type=EdgeType.IN_FACT, src=e, dst=f, doc_ids=[doc_id], props=mark) for e, f in sorted(in_fact)]
    edges += [Edge(type=EdgeType.SUPPORTED_BY, src=f, dst=c, doc_ids=[doc_id], props=mark) for f, c in sorted(supported)]
    edges += [
        Edge(type=EdgeType.RELATED, src=s, dst=d, key=f"openie:{p}", doc_ids=[doc_id], props={"predicate": p, **mark})
        for s, d, p in sorted(related)
    ]
    return nodes, edges, parts


def _version_nodes(
    doc_id: str,
    nodes: list[Node],
    parts: dict[str, dict[str, Any]],
    entity_nodes: dict[str, Node],
    replace: bool,
) -> tuple[list[Node], set[str]]:
    """The document's nodes with an earlier import (and with ``replace`` the extractor's knowledge) taken out
    and this import's entity contributions put in; also the ids of the nodes taken out."""
    parts = dict(parts)
    kept: list[Node] = []
    removed: set[str] = set()
    for n in nodes:
        if n.label == NodeLabel.FACT and (replace or _is_imported(n.props)):
            removed.add(n.id)
            continue
        if n.label == NodeLabel.ENTITY:
            part = (n.props.get(BY_DOC) or {}).get(doc_id, {})
            part = {} if replace else _without_import(part)
            props = {k: v for k, v in n.props.items() if k != BY_DOC}
            if n.id in parts:
                part = _add_import(part, parts.pop(n.id))
            if _empty(part):
                removed.add(n.id)
                continue
            kept.append(Node(id=n.id, label=n.label, doc_ids=[doc_id], props={**props, BY_DOC: {doc_id: part}}))
            continue
        kept.append(Node(id=n.id, label=n.label, doc_ids=[doc_id], props=n.props))
    for eid, part in sorted(parts.items()):  # entities the document did not have yet
        base = entity_nodes.get(eid)
        props = {k: v for k, v in (base.props if base else {}).items() if k != BY_DOC}
        kept.append(Node(id=eid, label=NodeLabel.ENTITY, doc_ids=[doc_id], props={**props, BY_DOC: {doc_id: _add_import({}, part)}}))
    return kept, removed


def _version_edges(doc_id: str, edges: list[Edge], gone: set[str], replace: bool) -> list[Edge]:
    """The document's stored edges that stay: not an earlier import's, not (with ``replace``) the extractor's
    knowledge edges, and none touching a node that no document supports any more (``gone``, over every
    document of the import: an entity page edge is another document's while its entity may be this one's)."""
    out = []
    for e in edges:
        if e.src in gone or e.dst in gone:
            continue
        if e.type in _KNOWLEDGE_EDGES and (replace or _is_imported(e.props)):
            continue
        out.append(Edge(**{**e.model_dump(), "doc_ids": [doc_id]}))
    return out


def _add_import(part: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    """An entity's contribution with this import's added, marked so that it can be taken out again."""
    had_keys = set(part.get("keys") or ())
    out = combine_part(part, {k: v for k, v in mine.items() if k != "description"}) if part else dict(mine)
    if not out.get("description") and mine.get("description"):
        out["description"] = mine["description"]
    out["openie_names"] = dict(mine.get("names") or {})
    out["openie_types"] = dict(mine.get("types") or {})
    out["openie_keys"] = sorted(set(mine.get("keys") or ()) - had_keys)
    return out


# ------------------------------------------------------------------------------------------------ import


def import_openie(svc: Services, path: str | Path, *, replace: bool = False, source: str = DEFAULT_SOURCE) -> OpenIEReport:
    """Import an OpenIE file onto the stored documents it matches (see the module docstring), under the
    store's write lease (it resolves against the stored entities and links, as an ingest does:
    ``ingest/writing.py``)."""
    if not source.startswith("openie:"):
        raise OpenIEError(f"{path}: the source mark must start with 'openie:' (got {source!r})")
    passages, skipped = read_openie(path)
    with writing.section(svc):
        return _import(svc, path, passages, skipped, replace=replace, source=source)


def _import(
    svc: Services, path: str | Path, passages: list[OpenIEPassage], skipped: int, *, replace: bool, source: str
) -> OpenIEReport:
    graph = svc.graph
    documents = graph.nodes_by_label(NodeLabel.DOCUMENT)
    chunks_of: dict[str, list[Node]] = defaultdict(list)
    for c in graph.nodes_by_label(NodeLabel.CHUNK):
        if c.props.get("kind", "text") == "text":
            chunks_of[str(c.props.get("doc_id") or c.doc_ids[0])].append(c)
    for chunks in chunks_of.values():
        chunks.sort(key=lambda c: (int(c.props.get("order") or 0), c.id))
    matched, unmatched = match_passages(passages, documents, chunks_of)
    report = OpenIEReport(
        file=str(path), source=source, replace=replace, passages=len(passages),
        matched=len(passages) - len(unmatched), unmatched=unmatched, skipped_triples=skipped,
    )
    if not matched:
        return report
    doc_nodes = {d.id: d for d in documents}
    order = sorted(matched)
    extractions = {d: passage_extractions(matched[d], chunks_of[d]) for d in order}
    resolved = {
        i: resolve_document(
            doc_nodes[d].props.get("metadata") or {},
            extractions[d],
            {c.id: str(c.props.get("section_id") or "") for c in chunks_of[d]},
            (str(c.props.get("text") or "") for c in chunks_of[d]),
        )
        for i, d in enumerate(order)
    }
    entity_of, merges, rows = cluster_run(svc, dict(enumerate(order)), resolved)
    if merges:
        # stored entities a new key outranks are folded into its id first (as ingestion does), so the
        # versions below are read with the ids they keep
        graph.replace_documents([], merges=merges)
        reconcile_entity_vectors(svc, {e for target, sources in merges.items() for e in (target, *sources)})
    versions: list[DocumentVersion] = []
    fact_items: list[tuple[str, str, dict[str, Any]]] = []
    stale_facts: dict[str, set[str]] = {}
    old_entities: set[str] = set()
    entities: set[str] = set()
    staged = []
    dropped_by: dict[str, set[str]] = defaultdict(set)
    support: dict[str, set[str]] = {}
    for i, d in enumerate(order):
        fact_nodes, edges, parts = _import_records(
            d, chunks_of[d], extractions[d], resolved[i].key_of, resolved[i].contributions, entity_of, source
        )
        nodes, old_edges = _current_version(svc, d)
        old_entities |= {n.id for n in nodes if n.label == NodeLabel.ENTITY}
        entities |= set(parts)
        stored = {n.id: n for n in graph.get_nodes(sorted(set(parts)))}
        kept, removed = _version_nodes(d, nodes, parts, stored, replace)
        for n in nodes:
            support[n.id] = set(n.doc_ids)
            if n.id in removed:
                dropped_by[n.id].add(d)
        staged.append((d, kept, old_edges, fact_nodes, edges))
        removed_facts = {n.id for n in nodes if n.id in removed and n.label == NodeLabel.FACT}
        report.removed_facts += len(removed_facts)
        stale_facts[d] = removed_facts
        meta = scalar_metadata(doc_nodes[d].props.get("metadata") or {})
        fact_items += [
            (n.id, n.props["description"], {**meta, "doc_id": d, "section_id": n.props["section_id"], "type": n.props["type"]})
            for n in fact_nodes
        ]
        report.facts += len(fact_nodes)
    # a node is gone when every document that supports it takes it out
    gone = {n for n, docs in dropped_by.items() if support[n] <= docs}
    gone -= {n.id for _, kept, _, _, _ in staged for n in kept}  # unless another document's import brings it
    for d, kept, old_edges, fact_nodes, edges in staged:
        versions.append(
            DocumentVersion(doc_id=d, nodes=[*kept, *fact_nodes], edges=[*_version_edges(d, old_edges, gone, replace), *edges])
        )
    report.documents = len(order)
    report.entities = len(entities)
    _write(svc, versions, fact_items, stale_facts, rows, old_entities | entities)
    return report


def _write(
    svc: Services,
    versions: list[DocumentVersion],
    fact_items: list[tuple[str, str, dict[str, Any]]],
    stale_facts: dict[str, set[str]],
    rows: list[Any],
    touched: set[str],
) -> None:
    """Fact vectors, then the graph in one transaction (the vectors put back if it fails), then what the
    new versions no longer have, the entity-name rows and the entity pages (DESCRIBED_BY)."""
    vs = svc.vectors
    snap = None
    if fact_items:
        ids = [i for i, _, _ in fact_items]
        snap = vs.snapshot(FACTS_COLLECTION, ids)
        vectors = embed_texts(svc.embeddings, [t for _, t, _ in fact_items])
        vs.upsert(FACTS_COLLECTION, ids, [t for _, t, _ in fact_items], [m for _, _, m in fact_items], embeddings=np.asarray(vectors))
    try:
        svc.graph.replace_documents(versions)
    except Exception:
        if snap is not None:
            vs.restore(snap)
        raise
    keep = {i for i, _, _ in fact_items}
    stale = sorted({f for fs in stale_facts.values() for f in fs} - keep)
    if stale:
        vs.delete(FACTS_COLLECTION, stale)
    if rows:
        vs.upsert(
            ENTITY_COLLECTION,
            [r.key for r in rows],
            [r.name for r in rows],
            [{"entity_id": r.entity_id, "name": r.name, "type": r.type} for r in rows],
            embeddings=np.vstack([r.vector for r in rows]),
        )
    reconcile_entity_vectors(svc, touched)
    link_documents(svc, [], touched_entities=touched)

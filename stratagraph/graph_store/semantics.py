"""The backend-neutral rules of the :class:`~stratagraph.graph_store.base.GraphStore` protocol, computed once.

Every backend stores a node as ``(id, label, props as canonical JSON, doc_ids)`` and an edge as ``(id, type,
src, dst, key, weight, props as canonical JSON, doc_ids)``; what differs is how rows are read and written.
What a write *means* is decided here, in plain Python over those rows, so the SQLite and the Neo4j store
cannot drift apart:

* :func:`fold_nodes` / :func:`node_writes`: upserting nodes (a batch's duplicates folded, ``by_doc``
  contributions merged with the stored ones, provenance united, props in canonical JSON);
* :func:`fold_edges` / :func:`check_endpoints` / :func:`edge_writes`: the same for edges, and the
  ValueError for a missing endpoint (raised before anything is written);
* :func:`merge_plan`: entity resolution's fold of source nodes into a target (props, provenance, edges
  re-pointed, self-loops dropped);
* :func:`drop_plan`: what dropping a document's provenance does (which nodes and edges die, which stay
  with less provenance, which shared props are derived again) and its :class:`DeleteSummary`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stratagraph.graph_store.base import DeleteSummary
from stratagraph.schema import (
    BY_DOC,
    Edge,
    Node,
    NodeLabel,
    canonical_json,
    derive_props,
    drop_doc_props,
    fold_by_doc,
    merge_by_doc,
)

__all__ = [
    "DropPlan",
    "EdgeWrite",
    "MergePlan",
    "NodeWrite",
    "StoredNode",
    "check_endpoints",
    "docs_json",
    "drop_plan",
    "edge_writes",
    "fold_edges",
    "fold_nodes",
    "has_by_doc",
    "merge_plan",
    "node_writes",
]

_LIST_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def docs_json(doc_ids: Iterable[str]) -> str:
    """Sorted doc ids as JSON, spelled exactly as :func:`canonical_json` spells them (but faster)."""
    return _LIST_ENCODER.encode(sorted(doc_ids))


def has_by_doc(props_json: str) -> bool:
    """Whether stored props (canonical JSON) carry per-document contributions: the cheap test both stores
    use before parsing props (the spelling ``"by_doc":`` only occurs as that key or inside a string)."""
    return f'"{BY_DOC}":' in props_json


@dataclass(frozen=True)
class StoredNode:
    """A node as a store holds it: props still as canonical JSON (parsed only when a rule needs them)."""

    label: str
    props_json: str
    doc_ids: Sequence[str]


@dataclass(frozen=True)
class NodeWrite:
    """One node row to write: the full new state, plus the batch's own documents (for provenance indexes)."""

    id: str
    label: str
    props_json: str
    doc_ids: list[str]  # sorted, the stored provenance united with the batch's
    batch_docs: frozenset[str]
    previous_label: str | None  # the stored label when the node existed (a backend with labels moves it)


@dataclass(frozen=True)
class EdgeWrite:
    """One edge row to write (see :class:`NodeWrite`)."""

    id: str
    type: str
    src: str
    dst: str
    key: str
    weight: float
    props_json: str
    doc_ids: list[str]
    batch_docs: frozenset[str]
    exists: bool


# ------------------------------------------------------------------------------------------ upserts

PendingNode = tuple[str, dict[str, Any], set[str]]


def fold_nodes(nodes: Sequence[Node]) -> dict[str, PendingNode]:
    """A batch's nodes by id, ``(label, props, doc_ids)``: a repeated id unites provenance and merges
    ``by_doc`` contributions (the later one wins per document and for every other prop); shared props are
    derived from the contributions."""
    merged: dict[str, PendingNode] = {}
    for node in nodes:
        docs = set(node.doc_ids)
        props = node.props
        if node.id in merged:
            docs |= merged[node.id][2]
            props = merge_by_doc(str(node.label), merged[node.id][1], props)
        elif BY_DOC in props:
            props = derive_props(str(node.label), props)
        merged[node.id] = (str(node.label), props, docs)
    return merged


def node_writes(folded: Mapping[str, PendingNode], existing: Mapping[str, StoredNode]) -> list[NodeWrite]:
    """The rows an upsert of ``folded`` writes over the ``existing`` rows of the same ids: provenance
    united; props replaced, except that ``by_doc`` contributions merge with the stored ones when both sides
    have them (so a shared node's props depend on its documents, never on the write order)."""
    out = []
    for nid, (label, props, docs) in folded.items():
        old = existing.get(nid)
        if old is not None and BY_DOC in props and has_by_doc(old.props_json):
            props = merge_by_doc(label, json.loads(old.props_json), props)
        all_docs = docs | set(old.doc_ids) if old is not None else docs
        out.append(
            NodeWrite(
                id=nid,
                label=label,
                props_json=canonical_json(props),
                doc_ids=sorted(all_docs),
                batch_docs=frozenset(docs),
                previous_label=old.label if old is not None else None,
            )
        )
    return out


def fold_edges(edges: Sequence[Edge]) -> dict[str, tuple[Edge, set[str]]]:
    """A batch's edges by id: a repeated id unites provenance, the later edge's props and weight win."""
    merged: dict[str, tuple[Edge, set[str]]] = {}
    for edge in edges:
        eid = edge.id
        docs = set(edge.doc_ids)
        if eid in merged:
            docs |= merged[eid][1]
        merged[eid] = (edge, docs)
    return merged


def edge_endpoints(folded: Mapping[str, tuple[Edge, set[str]]]) -> set[str]:
    return {e.src for e, _ in folded.values()} | {e.dst for e, _ in folded.values()}


def check_endpoints(edges: Sequence[Edge], found: set[str]) -> None:
    """ValueError naming the first edge (in batch order) whose endpoint is not among ``found``."""
    for edge in edges:
        for end in (edge.src, edge.dst):
            if end not in found:
                raise ValueError(
                    f"edge {edge.type.value} {edge.src!r} -> {edge.dst!r}: endpoint node {end!r} does not exist"
                )


def edge_writes(
    folded: Mapping[str, tuple[Edge, set[str]]], existing_docs: Mapping[str, Sequence[str]]
) -> list[EdgeWrite]:
    """The rows an upsert of ``folded`` writes: provenance united with the stored one, props and weight
    replaced (an edge's identity, hence its type and endpoints, never changes)."""
    out = []
    for eid, (edge, docs) in folded.items():
        old = existing_docs.get(eid)
        all_docs = docs | set(old) if old is not None else docs
        out.append(
            EdgeWrite(
                id=eid,
                type=str(edge.type),
                src=edge.src,
                dst=edge.dst,
                key=edge.key,
                weight=float(edge.weight),
                props_json=canonical_json(edge.props),
                doc_ids=sorted(all_docs),
                batch_docs=frozenset(docs),
                exists=old is not None,
            )
        )
    return out


# ------------------------------------------------------------------------------------------ merges


@dataclass(frozen=True)
class MergePlan:
    """What folding sources into a target does: delete ``dead_edges`` and the ``dead_nodes`` (with every
    edge still touching them), then upsert ``target`` and ``new_edges``."""

    target: Node
    dead_nodes: list[str]
    dead_edges: list[str]
    new_edges: list[Edge]


def merge_plan(
    target: str, existing_target: Node | None, sources: Sequence[Node], touching: Sequence[Edge]
) -> MergePlan | None:
    """Fold the stored ``sources`` (the ones that exist) into ``target`` (:meth:`GraphStore.merge_nodes`):
    the target's own non-provenance props win (else the first source's, by id), ``by_doc`` contributions
    add up, provenance unites, every edge ``touching`` a source is re-pointed to the target (one that would
    become a self-loop is dropped; edges that land on one id fold in (type, src, dst, key) order, the last
    one's props and weight winning). None when no source exists."""
    found = sorted((s for s in sources if s.id != target), key=lambda s: s.id)
    if not found:
        return None
    parts = ([existing_target] if existing_target else []) + found
    first = parts[0]
    props = fold_by_doc(first.label, [p.props for p in parts]) if BY_DOC in first.props else first.props
    folded = Node(id=target, label=first.label, doc_ids=sorted({d for p in parts for d in p.doc_ids}), props=props)
    moved = {s.id for s in found}
    touching = sorted(touching, key=lambda e: (str(e.type), e.src, e.dst, e.key))
    new_edges = []
    for edge in touching:
        src = target if edge.src in moved else edge.src
        dst = target if edge.dst in moved else edge.dst
        if src != dst:
            new_edges.append(edge.model_copy(update={"src": src, "dst": dst}))
    return MergePlan(
        target=folded, dead_nodes=sorted(moved), dead_edges=[e.id for e in touching], new_edges=new_edges
    )


# ------------------------------------------------------------------------------------------ deletion


@dataclass
class DropPlan:
    """What dropping one document's provenance does. Apply: set ``kept_nodes`` / ``kept_edges`` doc ids,
    write ``reprops``, delete ``dead_edges``, then delete ``dead_nodes`` with every edge touching them."""

    doc_id: str
    dead_nodes: list[str] = field(default_factory=list)
    kept_nodes: dict[str, list[str]] = field(default_factory=dict)  # id -> remaining doc ids
    reprops: dict[str, str] = field(default_factory=dict)  # id -> props (canonical JSON) without the doc
    dead_edges: set[str] = field(default_factory=set)
    kept_edges: dict[str, list[str]] = field(default_factory=dict)

    def summary(self, cascaded_edges: int) -> DeleteSummary:
        """The :class:`DeleteSummary`, given how many other edges died with the dead nodes."""
        return DeleteSummary(
            doc_id=self.doc_id,
            nodes_deleted=len(self.dead_nodes),
            edges_deleted=len(self.dead_edges) + cascaded_edges,
            nodes_kept=len(self.kept_nodes),
        )


def drop_plan(
    doc_id: str,
    nodes: Iterable[tuple[str, Sequence[str]]],
    shared: Iterable[tuple[str, str, str]],
    edges: Iterable[tuple[str, Sequence[str]]],
    document: tuple[str, Sequence[str]] | None,
) -> DropPlan | None:
    """Plan :meth:`GraphStore.delete_document` from the rows a store read: ``nodes`` ``(id, doc_ids)`` and
    ``edges`` ``(id, doc_ids)`` that ``doc_id`` supports, ``shared`` ``(id, label, props JSON)`` the subset
    of those nodes with ``by_doc`` props, and ``document`` ``(id, doc_ids)``, the Document node of that id
    if any. A node or edge left without provenance dies (so does a Document node that never had any); the
    others keep the rest, and shared props are derived again without the document's contribution. None when
    the document is unknown."""
    node_rows = list(nodes)
    edge_rows = list(edges)
    if not node_rows and not edge_rows and document is None:
        return None
    if document is not None and not document[1]:
        node_rows.append(document)  # a Document node without any provenance goes too
    plan = DropPlan(doc_id=doc_id)
    for nid, docs in node_rows:
        rest = [d for d in docs if d != doc_id]
        if rest:
            plan.kept_nodes[nid] = sorted(rest)
        else:
            plan.dead_nodes.append(nid)
    for nid, label, props_json in shared:
        if nid in plan.kept_nodes:
            props = drop_doc_props(label, json.loads(props_json), doc_id)
            if props is not None:
                plan.reprops[nid] = canonical_json(props)
    for eid, docs in edge_rows:
        rest = [d for d in docs if d != doc_id]
        if rest:
            plan.kept_edges[eid] = sorted(rest)
        else:
            plan.dead_edges.add(eid)
    return plan


def is_document(label: str) -> bool:
    return label == NodeLabel.DOCUMENT.value

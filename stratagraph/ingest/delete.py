"""Deleting a document: the graph and vector rows it owns, then what other documents' links depended on it.

``StrataGraph.delete`` and the ``delete`` command call :func:`delete_document`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratagraph.ingest import writing
from stratagraph.ingest.linking import link_documents, reconcile_entity_vectors
from stratagraph.ingest.steps import DOCUMENT_COLLECTIONS, document_dependents

if TYPE_CHECKING:
    from stratagraph.graph_store.base import DeleteSummary
    from stratagraph.services import Services

__all__ = ["delete_document"]


def delete_document(svc: Services, doc_id: str) -> DeleteSummary:
    """Remove a document and everything only it supported (raises DocumentNotFound), then repair what
    pointed at it: other chunks' SIMILAR lists are recomputed and entity-name rows follow the entities. Under
    the store's write lease (``ingest/writing.py``): a writer on another machine does not link meanwhile."""
    with writing.section(svc):
        return _delete(svc, doc_id)


def _delete(svc: Services, doc_id: str) -> DeleteSummary:
    dependents = document_dependents(svc, doc_id)
    summary = svc.graph.delete_document(doc_id)
    for collection, _, _ in DOCUMENT_COLLECTIONS:
        svc.vectors.delete_where(collection, {"doc_id": doc_id})
    reconcile_entity_vectors(svc, dependents["old_entities"])
    link_documents(svc, [], lost_similar=dependents["lost_similar"])
    return summary

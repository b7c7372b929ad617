"""Graph stores: the :class:`GraphStore` protocol, the embedded SQLite backend and a factory from settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratagraph.graph_store.base import (
    DeleteSummary,
    DocumentNotFound,
    DocumentVersion,
    EdgeRow,
    GraphCounts,
    GraphStore,
    ScoredId,
    StoreUnavailable,
)
from stratagraph.graph_store.sqlite import SQLiteGraphStore

if TYPE_CHECKING:
    from stratagraph.config import Settings

__all__ = [
    "DeleteSummary",
    "DocumentNotFound",
    "DocumentVersion",
    "EdgeRow",
    "GraphCounts",
    "GraphStore",
    "SQLiteGraphStore",
    "ScoredId",
    "StoreUnavailable",
    "open_graph_store",
]


def open_graph_store(settings: Settings) -> GraphStore:
    """The graph store ``settings.graph`` names: SQLite at ``settings.sqlite_path`` (Neo4j comes later)."""
    if settings.graph == "sqlite":
        return SQLiteGraphStore(settings.sqlite_path)
    if settings.graph == "neo4j":
        raise StoreUnavailable(
            "the neo4j backend is not available yet; use STRATAGRAPH_GRAPH=sqlite (the embedded default)"
        )
    raise StoreUnavailable(f"unknown graph backend {settings.graph!r}")

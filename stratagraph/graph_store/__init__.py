"""Graph stores: the :class:`GraphStore` protocol, the embedded SQLite backend, the Neo4j backend
(``neo4j.py``, imported on demand) and a factory from settings."""

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
    StoreInfo,
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
    "StoreInfo",
    "StoreUnavailable",
    "open_graph_store",
]


def open_graph_store(settings: Settings) -> GraphStore:
    """The graph store ``settings.graph`` names: SQLite at ``settings.sqlite_path``, or Neo4j at
    ``NEO4J_URI`` (``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``)."""
    if settings.graph == "sqlite":
        return SQLiteGraphStore(settings.sqlite_path)
    if settings.graph == "neo4j":
        from stratagraph.graph_store.neo4j import Neo4jGraphStore

        return Neo4jGraphStore.from_settings(settings)
    raise StoreUnavailable(f"unknown graph backend {settings.graph!r}")

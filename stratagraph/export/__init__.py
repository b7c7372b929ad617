"""The graph in the formats other tools read: GraphML (yEd, Gephi, igraph, networkx), GEXF (Gephi) and Cypher
(Neo4j Browser, cypher-shell), written from :meth:`~stratagraph.graph_store.base.GraphStore.export`'s canonical
dump, so the same graph gives the same bytes, as ``export --json`` does.

Every format carries each node's ``label`` and ``doc_ids`` and each edge's ``type``, ``key``, ``weight`` and
``doc_ids``; top-level scalar props become typed attributes, nested ones canonical JSON strings
(:mod:`stratagraph.export.attributes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from stratagraph.export.cypher import to_cypher
from stratagraph.export.gexf import to_gexf
from stratagraph.export.graphml import to_graphml

__all__ = ["FORMATS", "render"]

#: format name -> writer of the canonical dump
FORMATS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "graphml": to_graphml,
    "gexf": to_gexf,
    "cypher": to_cypher,
}


def render(graph: Mapping[str, Any], fmt: str) -> str:
    """The dump ``graph`` in format ``fmt``; ValueError naming the formats for an unknown one."""
    writer = FORMATS.get(fmt)
    if writer is None:
        raise ValueError(f"unknown export format {fmt!r}; choose from json, {', '.join(FORMATS)}")
    return writer(graph)

"""Cypher statements that rebuild the graph in Neo4j (Neo4j Browser, cypher-shell ``-f``) in the Neo4j
backend's own model (:mod:`stratagraph.graph_store.neo4j`): ``(:Node:<Label> {id, label, doc_ids, props})``
with ``props`` as canonical JSON and the top-level scalar props copied as plain properties, and typed
relationships ``{id, key, weight, doc_ids, props}``. So a database loaded from it is a stratagraph store:
``STRATAGRAPH_GRAPH=neo4j`` reads it, and its ``export --json`` is the one this was written from.

Statements end with ``;``, one ``UNWIND [...] AS row`` per :data:`BATCH` rows of one label or type, every
value a literal (no parameters needed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from stratagraph.graph_store.neo4j import EDGE_RESERVED, NODE, NODE_RESERVED, scalar_copies
from stratagraph.schema import EdgeType, NodeLabel, canonical_json

__all__ = ["BATCH", "cypher_literal", "to_cypher"]

BATCH = 200
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _string(value: str) -> str:
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def _key(name: str) -> str:
    return name if _IDENTIFIER.fullmatch(name) else "`" + name.replace("`", "``") + "`"


def cypher_literal(value: Any) -> str:
    """A JSON-like value as a Cypher literal."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)  # finite: the dump is JSON
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k))}: {cypher_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    return _string(str(value))


def _node_row(node: Mapping[str, Any]) -> dict[str, Any]:
    props = node.get("props") or {}
    row = scalar_copies(props, NODE_RESERVED)
    row.update(id=node["id"], label=node["label"], doc_ids=list(node.get("doc_ids") or []), props=canonical_json(props))
    return dict(sorted(row.items()))


def _edge_row(edge: Mapping[str, Any]) -> dict[str, Any]:
    props = edge.get("props") or {}
    row = scalar_copies(props, EDGE_RESERVED)
    row.update(
        id=edge["id"], key=edge.get("key") or "", weight=float(edge.get("weight", 1.0)),
        doc_ids=list(edge.get("doc_ids") or []), props=canonical_json(props),
    )  # fmt: skip
    return {"src": edge["src"], "dst": edge["dst"], "map": dict(sorted(row.items()))}


def _batches(rows: Sequence[dict[str, Any]]) -> Iterator[str]:
    for start in range(0, len(rows), BATCH):
        yield "[\n" + ",\n".join("  " + cypher_literal(r) for r in rows[start : start + BATCH]) + "\n]"


def to_cypher(graph: Mapping[str, Any]) -> str:
    nodes, edges = list(graph.get("nodes", [])), list(graph.get("edges", []))
    out = [
        f"// stratagraph graph: {len(nodes)} nodes, {len(edges)} edges, in the Neo4j backend's model\n",
        f"CREATE CONSTRAINT stratagraph_node_id IF NOT EXISTS FOR (n:{NODE}) REQUIRE n.id IS UNIQUE;\n",
    ]
    for label, group in groupby(sorted(nodes, key=lambda n: (n["label"], n["id"])), key=lambda n: n["label"]):
        label = NodeLabel(label).value  # only the schema's labels become identifiers
        for rows in _batches([_node_row(n) for n in group]):
            out.append(f"UNWIND {rows} AS row\nCREATE (n:{NODE}:{label}) SET n = row;\n")
    for type_, group in groupby(sorted(edges, key=lambda e: (e["type"], e["id"])), key=lambda e: e["type"]):
        type_ = EdgeType(type_).value
        for rows in _batches([_edge_row(e) for e in group]):
            out.append(
                f"UNWIND {rows} AS row\nMATCH (a:{NODE} {{id: row.src}}) MATCH (b:{NODE} {{id: row.dst}})\n"
                f"CREATE (a)-[r:{type_}]->(b) SET r = row.map;\n"
            )
    return "".join(out)

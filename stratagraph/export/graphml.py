"""GraphML (yEd, Gephi, igraph, networkx): one ``<key>`` per attribute column, a directed graph whose nodes
and edges keep their stratagraph ids."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from stratagraph.export.attributes import EDGE_FIXED, NODE_FIXED, columns, display_name, edge_values, node_values, xml_text

__all__ = ["to_graphml"]

_HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
)


def to_graphml(graph: Mapping[str, Any]) -> str:
    nodes, edges = graph.get("nodes", []), graph.get("edges", [])
    node_cols = columns(nodes, NODE_FIXED)
    edge_cols = columns(edges, EDGE_FIXED)
    lines = [_HEADER]
    node_keys = {c.name: f"n{i}" for i, c in enumerate(node_cols)}
    edge_keys = {c.name: f"e{i}" for i, c in enumerate(edge_cols)}
    lines.append('  <key id="display" for="node" attr.name="display_name" attr.type="string"/>\n')
    for cols, keys, domain in ((node_cols, node_keys, "node"), (edge_cols, edge_keys, "edge")):
        for c in cols:
            lines.append(f'  <key id="{keys[c.name]}" for="{domain}" attr.name={quoteattr(c.name)} attr.type="{c.type}"/>\n')
    lines.append('  <graph id="stratagraph" edgedefault="directed">\n')
    for node in nodes:
        lines.append(f"    <node id={quoteattr(xml_text(node['id']))}>\n")
        lines.append(f'      <data key="display">{escape(display_name(node))}</data>\n')
        for col, value in node_values(node, node_cols):
            lines.append(f'      <data key="{node_keys[col.name]}">{escape(value)}</data>\n')
        lines.append("    </node>\n")
    for edge in edges:
        ident, src, dst = (quoteattr(xml_text(edge[k])) for k in ("id", "src", "dst"))
        lines.append(f"    <edge id={ident} source={src} target={dst}>\n")
        for col, value in edge_values(edge, edge_cols):
            lines.append(f'      <data key="{edge_keys[col.name]}">{escape(value)}</data>\n')
        lines.append("    </edge>\n")
    lines.append("  </graph>\n</graphml>\n")
    return "".join(lines)

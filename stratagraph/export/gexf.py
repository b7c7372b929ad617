"""GEXF 1.2 (Gephi): a static directed graph, node labels for display, attribute columns declared once,
edges labelled with their type and weighted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import quoteattr

from stratagraph.export.attributes import EDGE_FIXED, NODE_FIXED, Column, columns, display_name, edge_values, node_values, xml_text

__all__ = ["to_gexf"]

_HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<gexf xmlns="http://www.gexf.net/1.2draft" version="1.2">\n'
    "  <meta>\n    <creator>stratagraph</creator>\n  </meta>\n"
    '  <graph defaultedgetype="directed" mode="static">\n'
)


def _declare(cols: list[Column], domain: str) -> list[str]:
    out = [f'    <attributes class="{domain}">\n']
    out += [f'      <attribute id="{i}" title={quoteattr(c.name)} type="{c.type}"/>\n' for i, c in enumerate(cols)]
    return [*out, "    </attributes>\n"]


def _attvalues(values: list[tuple[Column, str]], ids: dict[str, int]) -> list[str]:
    if not values:
        return []
    out = ["        <attvalues>\n"]
    out += [f'          <attvalue for="{ids[c.name]}" value={quoteattr(v)}/>\n' for c, v in values]
    return [*out, "        </attvalues>\n"]


def to_gexf(graph: Mapping[str, Any]) -> str:
    nodes, edges = graph.get("nodes", []), graph.get("edges", [])
    node_cols = columns(nodes, NODE_FIXED)
    edge_cols = columns(edges, EDGE_FIXED)
    node_ids = {c.name: i for i, c in enumerate(node_cols)}
    edge_ids = {c.name: i for i, c in enumerate(edge_cols)}
    lines = [_HEADER, *_declare(node_cols, "node"), *_declare(edge_cols, "edge"), "    <nodes>\n"]
    for node in nodes:
        lines.append(f"      <node id={quoteattr(xml_text(node['id']))} label={quoteattr(display_name(node))}>\n")
        lines += _attvalues(node_values(node, node_cols), node_ids)
        lines.append("      </node>\n")
    lines.append("    </nodes>\n    <edges>\n")
    for edge in edges:
        ident, src, dst = (quoteattr(xml_text(edge[k])) for k in ("id", "src", "dst"))
        weight = repr(float(edge.get("weight", 1.0)))
        lines.append(f'      <edge id={ident} source={src} target={dst} label="{edge["type"]}" weight="{weight}">\n')
        lines += _attvalues(edge_values(edge, edge_cols), edge_ids)
        lines.append("      </edge>\n")
    lines.append("    </edges>\n  </graph>\n</gexf>\n")
    return "".join(lines)

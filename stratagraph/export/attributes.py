"""Node and edge attributes as the XML formats declare them: one typed column per name, in a fixed order.

A prop whose values are all booleans is ``boolean``, all integers ``long``, numbers ``double``, anything
else ``string``; nested values (lists, maps) are written as canonical JSON. A node's label is the column ``node_label`` and
an edge's key ``edge_key`` (GEXF's own ``label`` is the name a viewer shows); a prop named like one of the
fixed columns or like a name the formats take (``id``, ``label``, ``key``, ...) is written as ``prop_<name>``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stratagraph.schema import canonical_json

__all__ = ["Column", "columns", "display_name", "node_values", "edge_values", "xml_text"]

NODE_FIXED = ("node_label", "doc_ids")
EDGE_FIXED = ("type", "edge_key", "weight", "doc_ids")
#: fixed columns read from another field of the dump: a GEXF node's ``label`` is what a viewer shows, and
#: networkx reserves an edge attribute named ``key``
_FIELD = {"node_label": "label", "edge_key": "key"}
#: characters XML 1.0 does not allow (a PDF's form feed, a stray NUL), replaced by U+FFFD
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string | long | double | boolean


def xml_text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float) and math.isfinite(value):
        return "double"
    return "string"


def _merge(a: str | None, b: str) -> str:
    if a is None or a == b:
        return b
    return "double" if {a, b} == {"long", "double"} else "string"


#: names the formats or their readers give a meaning of their own
_TAKEN = frozenset({"id", "label", "key", "source", "target", "display_name"})


def _prop_name(name: str, fixed: tuple[str, ...]) -> str:
    return f"prop_{name}" if name in fixed or name in _TAKEN or name.startswith("prop_") else name


def columns(items: Iterable[Mapping[str, Any]], fixed: tuple[str, ...]) -> list[Column]:
    """The fixed columns, then every prop name seen (sorted) with the type all its values share."""
    kinds: dict[str, str] = {}
    for item in items:
        for name, value in (item.get("props") or {}).items():
            if value is None:
                continue
            key = _prop_name(name, fixed)
            kinds[key] = _merge(kinds.get(key), _kind(value))
    out = [Column(name, "double" if name == "weight" else "string") for name in fixed]
    return out + [Column(name, kinds[name]) for name in sorted(kinds)]


def _value(value: Any, kind: str) -> str:
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("long", "double"):
        return repr(float(value)) if kind == "double" else str(int(value))
    return value if isinstance(value, str) else canonical_json(value)


def _values(item: Mapping[str, Any], fixed: tuple[str, ...], cols: list[Column]) -> list[tuple[Column, str]]:
    props = {_prop_name(k, fixed): v for k, v in (item.get("props") or {}).items() if v is not None}
    out = []
    for col in cols:
        if col.name in fixed:
            value: Any = item.get(_FIELD.get(col.name, col.name), "")
        elif col.name in props:
            value = props[col.name]
        else:
            continue
        out.append((col, xml_text(_value(value, col.type))))
    return out


def node_values(node: Mapping[str, Any], cols: list[Column]) -> list[tuple[Column, str]]:
    """``(column, value as text)`` of a node, in column order; absent props left out."""
    return _values(node, NODE_FIXED, cols)


def edge_values(edge: Mapping[str, Any], cols: list[Column]) -> list[tuple[Column, str]]:
    return _values(edge, EDGE_FIXED, cols)


def display_name(node: Mapping[str, Any], width: int = 80) -> str:
    """What a viewer shows on a node: its title or name, else the start of its description or text."""
    props = node.get("props") or {}
    for key in ("title", "name", "description", "text"):
        value = props.get(key)
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return xml_text(text if len(text) <= width else text[: width - 1] + "…")
    return xml_text(str(node.get("id", "")))

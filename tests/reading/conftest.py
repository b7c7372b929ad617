"""Evidence written for the reader's tests: fictional passages, never text of a benchmark set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.retrieval.base import Evidence


def passage(text: str, *, title: str = "Notes", path: Sequence[str] = (), doc: str = "doc.md", n: int = 0,
            metadata: Mapping[str, Any] | None = None) -> Evidence:  # fmt: skip
    """One evidence chunk with its document title and heading path."""
    section = " > ".join([title, *path])
    return Evidence(rank=n, score=1.0, chunk_id=f"{doc}#{n}#0", doc_id=doc, source=doc, title=title, section=section,
                    section_id=f"{doc}::s{n}", section_path=list(path), text=text, metadata=dict(metadata or {}))  # fmt: skip


def row_fact(label: str, cells: Mapping[str, tuple[str, int]], currency: str | None = "USD") -> dict[str, Any]:
    """The stored fact of a table row: each column's value as written and its scale."""
    quantities = []
    for column, (raw, scale) in cells.items():
        value = int(raw.replace(",", "").strip("()")) * scale * (-1 if raw.startswith("(") else 1)
        quantities.append({"value": str(value), "raw": raw, "scale": scale, "currency": currency, "unit": currency,
                           "label": f"{label} | {column}", "is_total": label.lower().startswith("total")})  # fmt: skip
    return {"type": "table_row", "description": label, "quantities": quantities}

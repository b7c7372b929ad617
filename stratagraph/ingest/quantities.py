"""Tables as facts, parsed deterministically: each data row of a table chunk becomes a fact whose numeric cells
are typed quantities (:func:`table_extraction`), without any model. Amounts in text are parsed by
:mod:`stratagraph.text.amounts` (re-exported here), so numbers never depend on the extractor.
"""

from __future__ import annotations

import re

from stratagraph.ingest.extractors.base import ChunkExtraction, ExtractedEntity, ExtractedFact
from stratagraph.schema import Table
from stratagraph.text.amounts import Quantity, detect_scale, is_total_label, parse_quantities

__all__ = ["detect_scale", "is_total_label", "parse_quantities", "table_extraction"]

# --------------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------------

_EMPTY_CELLS = frozenset({"", "-", "–", "—", "n/a", "na", "n.a.", "nm", "n.m.", "…", "..."})
_CELL_LEFTOVER_RE = re.compile(r"[^\w]*")


def _cell_quantity(
    cell: str,
    *,
    section_id: str,
    scale: int,
    currency: str | None,
    label: str,
) -> Quantity | None:
    """The one amount a table cell holds, or None when the cell is not a number (text, a year, empty)."""
    text = cell.strip()
    if text.lower() in _EMPTY_CELLS:
        return None
    found = parse_quantities(text, section_id=section_id, default_scale=scale, default_currency=currency, label=label)
    if len(found) != 1:
        return None
    q = found[0]
    rest = text.replace(q.raw, " ", 1)
    if q.unit and q.unit not in {"%", "pp", "bp"} and q.unit != q.currency:
        rest = rest.replace(q.unit, " ", 1)
    if not _CELL_LEFTOVER_RE.fullmatch(rest):
        return None  # more than a number: "Station 3 (rebuilt)", "about 5 sites and more"
    return q


def table_extraction(
    chunk_id: str,
    table: Table,
    *,
    section_id: str,
    default_scale: int = 1,
    default_currency: str | None = None,
    context: str = "",
) -> ChunkExtraction:
    """Facts of a table chunk: one :class:`ExtractedFact` per data row, no model involved.

    * ``description`` is ``table.row_text(row)``, ``type`` ``"table_row"``, ``confidence`` 1.0.
    * The row label is the first non-empty cell that is not a number; it becomes an
      :class:`ExtractedEntity` of type ``"LINE_ITEM"`` with ``line_item=True`` -- total rows included
      ("Total" is the line of its section; its ``description`` is ``"total row"``), and the fact lists it.
    * Each numeric cell gives one :class:`Quantity` labelled ``"<row label> | <column header>"``. Its scale and
      currency come from the column header when it states one ("Amount ($000s)"), else from the caption,
      else from ``context`` (text around the table, e.g. "all tables are in thousands of dollars"), else
      from the defaults. Header cells are never parsed as amounts.
    * ``is_total`` is set on every quantity of a row whose label names a total ("Total", "Subtotal",
      "Grand total", "Total revenue") and on quantities of a column whose header does ("Five-year total");
      the fact of a total row has ``attributes["total"] == "true"``.
    * A row with no numeric cell still gives a fact (without quantities) when it has two or more non-empty
      cells; other empty rows give nothing. ``attributes["caption"]`` carries the caption when there is one.
    """
    table_scale = detect_scale(table.caption or "") or detect_scale(context) or (default_scale, default_currency)
    header = [h.strip() for h in table.header]
    column_scale: list[tuple[int, str | None]] = []
    for h in header:
        declared = detect_scale(h)
        column_scale.append(declared if declared is not None else table_scale)

    entities: list[ExtractedEntity] = []
    seen: set[str] = set()
    facts: list[ExtractedFact] = []
    for row in table.rows:
        cells = [c.strip() for c in row]
        non_empty = [c for c in cells if c and c.lower() not in _EMPTY_CELLS]
        if not non_empty:
            continue
        row_label: str | None = None
        numeric: list[tuple[int, str]] = []
        for i, cell in enumerate(cells):
            if not cell or cell.lower() in _EMPTY_CELLS:
                continue
            probe = _cell_quantity(cell, section_id=section_id, scale=1, currency=None, label="")
            if probe is None:
                if row_label is None:
                    row_label = cell
            else:
                numeric.append((i, cell))
        if not numeric and len(non_empty) < 2:
            continue
        row_is_total = is_total_label(row_label)
        quantities: list[Quantity] = []
        for i, cell in numeric:
            col = header[i] if i < len(header) else ""
            scale, currency = column_scale[i] if i < len(column_scale) else table_scale
            parts = [p for p in (row_label, col) if p]
            label = " | ".join(parts) if parts else None
            q = _cell_quantity(cell, section_id=section_id, scale=scale, currency=currency, label=label or "")
            if q is None:
                continue
            if label is None:
                q = q.model_copy(update={"label": None})
            if row_is_total and not q.is_total:
                q = q.model_copy(update={"is_total": True})
            quantities.append(q)
        fact_entities: list[str] = []
        if row_label is not None:
            fact_entities.append(row_label)
            if row_label not in seen:
                seen.add(row_label)
                entities.append(
                    ExtractedEntity(
                        name=row_label,
                        type="LINE_ITEM",
                        description="total row" if row_is_total else "",
                        confidence=1.0,
                        line_item=True,
                    )
                )
        attributes: dict[str, str] = {}
        if table.caption:
            attributes["caption"] = table.caption.strip()
        if row_is_total:
            attributes["total"] = "true"
        facts.append(
            ExtractedFact(
                description=table.row_text(row),
                type="table_row",
                confidence=1.0,
                entities=fact_entities,
                quantities=quantities,
                attributes=attributes,
            )
        )
    return ChunkExtraction(chunk_id=chunk_id, entities=entities, facts=facts)

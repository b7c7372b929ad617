"""Tables: the typed cells of the evidence's table rows, a cell by (row, column, section, document), and
sums, changes and superlatives over rows, line-item groups and sections (BAG-RAG §3.2's bottom-up
aggregation over the heading tree; KAG's ``Math`` and ``Sort`` over typed quantities).

A cell's value is the typed quantity ingestion stored for it (the table row's fact: exact value with the
document's scale, "all tables are in thousands of dollars", unit and currency), else its text parsed the same
way (:func:`stratagraph.text.amounts.parse_quantities`, scale as written). It is cited with its row line, a
verbatim slice of the chunk.

* **The column** a question asks for (:func:`column_fit`): the one whose header names the question's period
  (FY2026, Q3 2024) and its other words ("Plan", "Actual"); a column that restates two others of its row (a
  "Change" column, found from the values: :func:`derived_columns`) only when the question asks about a change;
  with no period asked, the latest period's column.
* **A cell** (:func:`row_candidates`, used by the span reader): the row is the sentence the span reader
  chose (its label and context hold the question's words); the cell is its best column.
* **A set** (:func:`set_sum`): "every electricity line", "the two plants' electricity", "both divisions'
  overtime": the rows whose label the question names, one per section, in the sections whose headings hold
  the question's other words; summed (all of them, or the number the question says, when that many fit).
* **A section's total** (:func:`section_total`): "what do the subsections of X add up to": the total rows of
  X's child sections (else X's own total row), summed.
* **A superlative** (:func:`superlative`): "which line item grows the most", "which program gets the largest
  budget": over the rows of one table (the change between two columns when the question asks about a change),
  else over the total rows of sibling sections; the answer is the row's label or the section's heading (the
  value itself when a number is asked).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from decimal import Decimal
from stratagraph.answers import Computation
from stratagraph.reading.arithmetic import Figure, compute, render
from stratagraph.reading.frame import Frame
from stratagraph.reading.result import Reading
from stratagraph.reading.sentences import Candidate, Sentence, citation
from stratagraph.reading.words import content_forms, forms, word_forms
from stratagraph.text.amounts import Quantity, is_total_label, parse_quantities
from stratagraph.text.lexicon import DERIVED_COLUMNS, GROUP_WORDS, ORIGINAL_WORDS, RESTATED_WORDS
from stratagraph.text.periods import agreement, find_periods
from stratagraph.text.question import AnswerType

__all__ = ["TableCell", "cells_of", "column_figures", "column_fit", "count_over", "derived_columns", "exact_cell", "one_row", "rounded", "row_candidates", "same_row",
           "section_total", "set_sum", "superlative", "best_cell", "period_pair"]  # fmt: skip

_NUMBERING = re.compile(r"^\s*(?:(?:section|chapter|part)\s+)?(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\))\s+", re.IGNORECASE)


@dataclass(frozen=True)
class TableCell:
    """A numeric cell of a table row, as a cited figure."""

    row: Sentence
    column: str
    figure: Figure

    @property
    def label(self) -> str:
        return self.row.label

    @property
    def total(self) -> bool:
        """A cell of a total row ("Total", "Subtotal"); a total column's cell ("Five-year total") is its own
        row's amount, not a total of the rows."""
        if is_total_label(self.row.label):
            return True
        return self.figure.quantity.is_total and not is_total_label(self.column)


def _stored(row: Sentence) -> dict[tuple[str, str], Quantity]:
    """The quantities ingestion stored for a row's cells (its chunk's table-row facts), by (column, raw)."""
    out: dict[tuple[str, str], Quantity] = {}
    for fact in row.facts:
        if fact.get("type") != "table_row":
            continue
        for q in fact.get("quantities") or []:
            name, _, column = str(q.get("label") or "").partition(" | ")
            if name.strip() == row.label:
                try:
                    out[(column.strip(), str(q.get("raw") or ""))] = Quantity.model_validate(q)
                except ValueError:
                    continue
    return out


def cells_of(rows: Sequence[Sentence]) -> list[TableCell]:
    """The numeric cells of table rows, each with its typed quantity (module docstring)."""
    out: list[TableCell] = []
    for row in rows:
        if not row.is_row:
            continue
        stored = _stored(row)
        for cell in row.cells:
            q = stored.get((cell.column, cell.raw))
            if q is None:
                parsed = parse_quantities(cell.raw, label=f"{row.label} | {cell.column}")
                if len(parsed) != 1:
                    continue
                q = parsed[0]
            cite = citation(row.passage, row.start, row.end)
            fig = Figure(quantity=q, citation=cite, label=f"{_where(row)}{row.label} | {cell.column}", row=row.label,
                         column=cell.column)  # fmt: skip
            out.append(TableCell(row=row, column=cell.column, figure=fig))
    return out


def _where(row: Sentence) -> str:
    path = row.passage.section_path
    return f"{path[-1]}: " if path else ""


# ------------------------------------------------------------------------------------------ columns
def _year_of(text: str) -> int:
    years = [p.year for p in find_periods(text) if p.year is not None]
    return max(years) if years else -1


def derived_columns(cells: Sequence[TableCell]) -> set[tuple[str, str]]:
    """(chunk, column) of the columns that restate two columns before them in every row: a difference (as
    written) or a percentage change (as rounded), under a header that says so ("Change", "Difference")."""
    out: set[tuple[str, str]] = set()
    by_table: dict[str, dict[str, dict[str, Decimal]]] = {}
    for c in cells:
        by_table.setdefault(c.row.passage.chunk_id, {}).setdefault(c.row.label, {})[c.column] = _written(c)
    for chunk, rows in by_table.items():
        columns = list(dict.fromkeys(col for r in rows.values() for col in r))
        for k, col in enumerate(columns):
            if not word_forms(col) & _DERIVED_FORMS:
                continue
            full = [r for r in rows.values() if col in r and len(r) > 2]
            before = columns[:k]
            if full and any(all(a in r and b in r and (r[col] == r[a] - r[b] or _pct(r[col], r[b], r[a])) for r in full)
                            for a, b in itertools.permutations(before, 2)):  # fmt: skip
                out.add((chunk, col))
    return out


_DERIVED_FORMS = frozenset(f for w in DERIVED_COLUMNS for f in forms(w))


def _written(c: TableCell) -> Decimal:
    q = c.figure.quantity
    return q.value / q.scale if q.scale else q.value


def _pct(change: Decimal, old: Decimal, new: Decimal) -> bool:
    if old == 0:
        return False
    places = -change.as_tuple().exponent if change.as_tuple().exponent < 0 else 0  # type: ignore[operator]
    return abs((new - old) / abs(old) * 100 - change) <= Decimal(5) / Decimal(10) ** (places + 1)


def column_fit(column: str, frame: Frame, derived: bool = False, latest: int = -1) -> float:
    """How well a column header fits what the frame asks (module docstring)."""
    score = 0.0
    named = find_periods(column)
    years = {p.year for p in named if p.year is not None}
    if frame.periods:
        verdict = agreement(frame.periods, named)
        score += 2.0 if verdict is True else -2.0 if verdict is False else 0.0
    elif years and max(years) == latest:
        score += 0.25
    head = word_forms(column)
    score += 0.5 * sum(1 for w in frame.relation if forms(w) & head)
    score += 0.5 * sum(1 for w in content_forms(frame.source) if w & head)  # "Audited figure" for what "the auditor" says
    if derived or any(forms(w) & head for w in DERIVED_COLUMNS):
        score += 1.0 if frame.change else -3.0
    return score + _standing(column, frame)


@lru_cache(maxsize=4096)
def _letter_words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in re.findall(r"[A-Za-z]+", text))


def _standing(column: str, frame: Frame) -> float:
    """A restated column's figure is the one that stands ("Q2 2024 restated" over "Q2 2024 as reported"),
    unless the question asks for the first-published one ("as *originally* reported")."""
    words = _letter_words(column)
    original_asked = frame.asks_original
    if words & RESTATED_WORDS:
        return -1.0 if original_asked else 0.75
    if words & ORIGINAL_WORDS:
        return 1.0 if original_asked else -0.75
    return 0.0


def _period_verdict(frame: Frame, column: str) -> bool | None:
    """Whether a column's period is one the question asks (False: another; None: it names none, or the
    question names no period)."""
    return agreement(frame.periods, find_periods(column)) if frame.periods else None


def best_cell(cells: Sequence[TableCell], frame: Frame, derived: set[tuple[str, str]]) -> TableCell | None:
    cells = [c for c in cells if _period_verdict(frame, c.column) is not False]  # never a cell of another period
    if not cells:
        return None
    latest = max((_year_of(c.column) for c in cells), default=-1)
    ranked = sorted(cells, key=lambda c: (-column_fit(c.column, frame, (c.row.passage.chunk_id, c.column) in derived,
                                                      latest), c.figure.citation.quote))  # fmt: skip
    return ranked[0]


def row_candidates(row: Sentence, frame: Frame) -> list[Candidate]:
    """The cells of a row that may answer a number (module docstring): the best column first (as candidates
    of the span reader, their fit 1 for the best column, less for the others)."""
    if frame.type != AnswerType.NUMBER:
        return []
    cells = cells_of([row])
    if not cells:
        return []
    derived = derived_columns(cells)
    latest = max((_year_of(c.column) for c in cells), default=-1)
    fits = [column_fit(c.column, frame, (row.passage.chunk_id, c.column) in derived, latest) for c in cells]
    top = max(fits)
    out = []
    verdicts = [_period_verdict(frame, c.column) for c in cells]
    if False in verdicts and True not in verdicts:
        return []  # a table by period without the period asked ("Q3 2024", "Q3 2025" for "Q4 2025"): no cell
    for c, f in zip(cells, fits, strict=True):
        cell = next(x for x in row.cells if x.column == c.column)
        fit = 1.0 if f == top else 0.5 if f > top - 1 else 0.2
        q = c.figure.quantity
        if frame.unit and not frame.money and q.currency:
            continue  # never a number of another kind: an amount of money, asked for a count
        if (frame.money and not q.currency) or (frame.percent and q.unit not in ("%", "pp")):
            fit *= 0.5  # a count in a table of people, asked for money; a level, asked for a share
        out.append(Candidate(cell.start, cell.end, "NUMBER", fit, quantity=q))
    return out


# ------------------------------------------------------------------------------------------ sets and totals
def _section_forms(row: Sentence) -> frozenset[str]:
    return word_forms(" ".join([row.passage.title, *row.passage.section_path]))


def _named_labels(frame: Frame, labels: Sequence[str]) -> list[str]:
    """Row labels every content word of which the question holds (longest first)."""
    asked = word_forms(frame.question)
    named = [lb for lb in dict.fromkeys(labels) if content_forms(lb) and all(w & asked for w in content_forms(lb))]
    return sorted(named, key=lambda lb: (-len(content_forms(lb)), lb))


def set_sum(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """A sum over the rows the question names as a set (module docstring), or None when it names none."""
    if frame.quantifier is None and not (frame.plan is None and frame.type == AnswerType.NUMBER and _sum_asked(frame)):
        return None
    cells = [c for c in cells_of([s for s in sents if s.is_row]) if not c.total]
    derived = derived_columns(cells)
    for label in _named_labels(frame, [c.label for c in cells]):
        label_words = content_forms(label)
        rest = [w for w in content_forms(frame.question) if not any(w & lw for lw in label_words)]
        per_section: dict[str, list[TableCell]] = {}
        for c in cells:
            if c.label == label:
                per_section.setdefault(c.row.passage.section_id or c.row.passage.chunk_id, []).append(c)
        chosen: list[tuple[float, TableCell]] = []
        for group in per_section.values():
            best = best_cell(group, frame, derived)
            if best is None:
                continue
            where = _section_forms(best.row)
            fit = sum(1 for w in rest if w & where) / len(rest) if rest else 1.0
            chosen.append((fit, best))
        if len(chosen) < 2:
            continue
        chosen.sort(key=lambda p: -p[0])
        want = frame.quantifier
        if isinstance(want, int):
            if len(chosen) < want or (len(chosen) > want and chosen[want - 1][0] == chosen[want][0]):
                continue
            picked = [c for _, c in chosen[:want]]
        else:
            top = chosen[0][0]
            picked = [c for f, c in chosen if f == top]
        if len(picked) < 2:
            continue
        try:
            comp = compute("sum", [c.figure for c in picked])
        except ValueError:
            continue
        return _computed(comp, [c.figure for c in picked], f"sum over the {len(picked)} rows labelled {label!r}")
    return None


def _sum_asked(frame: Frame) -> bool:
    from stratagraph.text.lexicon import SUM_WORDS

    return bool(word_forms(frame.question) & frozenset(f for w in SUM_WORDS for f in forms(w)))


def section_total(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """"What do the subsections of X add up to" (module docstring), or None."""
    words = {w.lower() for w in re.findall(r"[a-z]+", frame.question.lower())}
    if not (words & GROUP_WORDS and _sum_asked(frame)):
        return None
    totals = [c for c in cells_of([s for s in sents if s.is_row]) if c.total]
    if not totals:
        return None
    rest = [w for w in content_forms(frame.question) if not any(w & forms(g) for g in GROUP_WORDS)]
    by_parent: dict[tuple[str, ...], list[TableCell]] = {}
    for c in totals:
        path = tuple(c.row.passage.section_path)
        if len(path) >= 2:
            by_parent.setdefault(path[:-1], []).append(c)
    best: tuple[float, list[TableCell]] | None = None
    for parent, group in by_parent.items():
        fit = sum(1 for w in rest if w & word_forms(parent[-1])) / len(rest) if rest else 0.0
        derived = derived_columns(group)
        per_child: dict[str, TableCell] = {}
        for child in dict.fromkeys(c.row.passage.section_path[-1] for c in group):
            cell = best_cell([c for c in group if c.row.passage.section_path[-1] == child], frame, derived)
            if cell is not None:
                per_child[child] = cell
        if len(per_child) >= 2 and fit >= 0.5 and (best is None or fit > best[0]):
            best = (fit, list(per_child.values()))
    if best is None:
        return None
    try:
        comp = compute("sum", [c.figure for c in best[1]])
    except ValueError:
        return None
    return _computed(comp, [c.figure for c in best[1]], f"sum of the total rows of {len(best[1])} subsections")


def _computed(comp: Computation, figures: Sequence[Figure], why: str) -> Reading:
    text = render(comp, figures)
    cites = list({(f.citation.chunk_id, f.citation.quote): f.citation for f in figures}.values())
    return Reading(kind="computed", answer=text, citations=cites, computed=comp, type="number", score=1.0,
                   reason=f"{why}: {comp.expression} = {text}")  # fmt: skip


# ------------------------------------------------------------------------------------------ superlatives
def _best_table(frame: Frame, sents: Sequence[Sentence]) -> list[TableCell]:
    """One cell per non-total row of the table that fits the question best (its context and first header hold
    most of the question's words), in its best column (a change, for a question about a change)."""
    cells = cells_of([s for s in sents if s.is_row])
    if not cells:
        return []
    derived = derived_columns(cells)
    by_table: dict[str, list[TableCell]] = {}
    for c in cells:
        by_table.setdefault(c.row.passage.chunk_id, []).append(c)
    fits: list[tuple[float, list[TableCell]]] = []
    focus = forms(frame.focus) if frame.focus else frozenset()
    for group in by_table.values():
        sample = group[0].row
        fit = float(sum(1 for w in content_forms(frame.question) if w & (sample.context | word_forms(sample.first_header))))
        if focus and focus & word_forms(sample.first_header):
            fit += 2.0  # its rows are of the kind asked ("which *project*": a table of projects)
        members = _row_values(group, frame, derived)
        if len(members) >= 2:
            fits.append((fit, members))
    if not fits:
        return []
    top = max(f for f, _ in fits)
    return [c for f, members in fits if f == top for c in members]  # tables of one kind that fit alike: one set


def _precision(raw: str, scale: int) -> Decimal:
    """Half the step of the last digit written ("$18.6 million" -> 50,000), at the amount's scale."""
    m = re.search(r"\d[\d,]*(?:\.(\d+))?", raw)
    places = len(m.group(1) or "") if m else 0
    return Decimal(1).scaleb(-places) * Decimal(scale) / 2


def rounded(fig: Figure) -> bool:
    """Whether a figure of a sentence is written rounded ("$18.6 million" stands for 18,550,000 to
    18,649,999): a table cell, or an amount written to its last digit, is exact."""
    if fig.table:
        return False
    q = fig.quantity
    tol = _precision(q.raw, q.scale)
    return tol > 0 and tol * 2 >= abs(q.value) / 1000


def exact_cell(fig: Figure, sents: Sequence[Sentence]) -> Figure:
    """The table cell a rounded figure of a sentence stands for ("requests $18.6 million" -> the total row's
    18,585 in thousands): a cell of the figure's own section (or one under it), of its currency, within the
    figure's rounding (half its last digit), a total row first; the figure itself when there is none, or
    it is exact."""
    if not rounded(fig):
        return fig
    q = fig.quantity
    tol = _precision(q.raw, q.scale)
    home = next((s.passage for s in sents if s.passage.chunk_id == fig.citation.chunk_id), None)
    if home is None:
        return fig
    path = list(home.section_path)
    rows = [s for s in sents if s.is_row and s.passage.doc_id == home.doc_id
            and list(s.passage.section_path[: len(path)]) == path]  # fmt: skip
    near = [c for c in cells_of(rows) if c.figure.quantity.currency == q.currency and abs(c.figure.value - q.value) <= tol]
    if not near:
        return fig
    best = min(near, key=lambda c: (not c.total, abs(c.figure.value - q.value), c.figure.citation.quote))
    return best.figure


def same_row(fig: Figure, frame: Frame, sents: Sequence[Sentence]) -> Figure | None:
    """The cell of a table figure's own row in the column of the period ``frame`` asks for ("Overtime" in
    FY2025 read from its row: the FY2024 operand is that row's FY2024 cell), or None when the row is not in
    the sentences or no other column is of that period. One line item's two periods are one row's two
    columns: structure before text."""
    if not fig.table or not frame.periods:
        return None
    row = next((s for s in sents if s.is_row and s.quote() == fig.citation), None)
    if row is None:
        return None
    for cell in cells_of([row]):
        if cell.column != fig.column and _period_verdict(frame, cell.column) is True:
            return cell.figure
    return None


def one_row(figs: Sequence[Figure], frames: Sequence[Frame], sents: Sequence[Sentence]) -> list[Figure]:
    """Two operands of one line item in two periods (``frames``: each operand's question): when one was read
    from a table row and the other is not a cell of that row (a sentence's figure, or another row's), the
    other becomes that row's cell for its own period (:func:`same_row`) when the row has one."""
    out = list(figs)
    if len(figs) != 2 or len(frames) != 2:
        return out
    for i, j in ((0, 1), (1, 0)):
        if figs[i].table and (not figs[j].table or figs[j].citation != figs[i].citation):
            cell = same_row(figs[i], frames[j], sents)
            if cell is not None and cell != figs[j]:
                out[j] = cell
                break
    return out


def column_figures(frame: Frame, sents: Sequence[Sentence]) -> list[Figure]:
    """The amounts of the best-fitting table's rows in its best column (KAG's set for ``Sort`` or ``count``)."""
    return [c.figure for c in _best_table(frame, sents)]


def count_over(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """"How many line items exceed $500 thousand": the rows of the best-fitting table whose value in its
    best column passes the question's threshold, counted."""
    if frame.threshold is None:
        return None
    members = _best_table(frame, sents)
    if not members:
        return None
    side, bound = frame.threshold
    keep = [c for c in members if (c.figure.value > bound if side == "above" else c.figure.value < bound)]
    from stratagraph.answers import Computation as _C

    comp = _C(operation="count", expression=f"count({side} {bound:,f}: " + ", ".join(
        f"{c.label} {c.figure.quantity.raw}" for c in members) + ")", operands=[c.figure.operand() for c in keep],
        result=Decimal(len(keep)))  # fmt: skip
    cites = list({(c.figure.citation.chunk_id, c.figure.citation.quote): c.figure.citation for c in keep or members}.values())
    return Reading(kind="computed", answer=str(len(keep)), citations=cites, computed=comp, type="number", score=1.0,
                   reason=f"{len(keep)} of {len(members)} rows {side} {bound:,f}")  # fmt: skip


def superlative(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """The largest / smallest row of the best-fitting table (module docstring)."""
    if not frame.superlative or frame.type == AnswerType.DATE:  # "which quarter": reading/series.py's
        return None
    members = _best_table(frame, sents)
    if not members:
        return None
    pick = max if frame.superlative == "max" else min
    chosen = pick(members, key=lambda c: c.figure.value)
    values = [c.figure for c in members]
    comp = Computation(operation=f"{frame.superlative} over rows", expression=f"{frame.superlative}(" + ", ".join(
        f"{c.label}: {c.figure.quantity.raw}" for c in members) + ")",
        operands=[f.operand() for f in values], result=chosen.label if frame.type != AnswerType.NUMBER else chosen.figure.value)  # fmt: skip
    answer = chosen.label if frame.type != AnswerType.NUMBER else chosen.figure.text()
    return Reading(kind="choice" if frame.type != AnswerType.NUMBER else "computed", answer=answer,
                   citations=[chosen.figure.citation], computed=comp, type=frame.type.value, score=1.0,
                   reason=f"the {frame.superlative} of {len(members)} rows of one table: {chosen.label}")  # fmt: skip


def _row_values(group: Sequence[TableCell], frame: Frame, derived: set[tuple[str, str]]) -> list[TableCell]:
    """One cell per non-total row: for a question about a change, the row's change column, else the later of
    the two periods asked minus the earlier (a computed figure); otherwise the best column's."""
    out = []
    for label in dict.fromkeys(c.label for c in group):
        row = [c for c in group if c.label == label]
        if any(c.total for c in row):
            continue
        cell = None
        if frame.change:
            cell = next((c for c in row if (c.row.passage.chunk_id, c.column) in derived), None)
            pair = period_pair(row, frame) if cell is None else None
            if pair is not None:
                old, new = pair
                q = Quantity(value=new.figure.value - old.figure.value, unit=new.figure.unit, scale=new.figure.quantity.scale,
                             currency=new.figure.quantity.currency, raw=f"{new.figure.quantity.raw} - {old.figure.quantity.raw}")  # fmt: skip
                cell = TableCell(row=new.row, column="change", figure=Figure(quantity=q, citation=new.figure.citation,
                                 label=new.figure.label, row=label, column="change"))  # fmt: skip
        cell = cell or best_cell(row, frame, derived)
        if cell is not None:
            out.append(cell)
    return out


def period_pair(row: Sequence[TableCell], frame: Frame) -> tuple[TableCell, TableCell] | None:
    years = sorted({p.year for p in frame.periods if p.year is not None})
    if len(years) < 2:
        return None
    old = next((c for c in row if years[0] in {p.year for p in find_periods(c.column)}), None)
    new = next((c for c in row if years[-1] in {p.year for p in find_periods(c.column)}), None)
    return (old, new) if old is not None and new is not None and old is not new else None


__all__ += ["heading_text"]


def heading_text(heading: str) -> str:
    """A heading without its numbering ("1.1.2 Patrol Division" -> "Patrol Division")."""
    return _NUMBERING.sub("", heading).strip() or heading


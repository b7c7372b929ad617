"""Typed quantities as the operands of KAG's ``Math``, ``Sort`` and numeric ``Deduce`` (KAG §2.3, Table 1):
the graph's facts carry their amounts as typed quantities (exact ``Decimal`` value already multiplied by its
scale, unit, currency, raw text, a label such as ``"Overtime | FY2025 Adopted"`` for a table cell, the section
it sits under) and the chunks that support them; this module decides, in code, which quantity a logical-form
``Retrieval`` step asks for, and cites it verbatim. A chat model never chooses or computes a number here.

The operand's terms (:func:`operand_terms`): the content words of its sub-question, stemmed (Porter), with
periods normalised ("fiscal year 2025", "FY 2025", "FY25" -> ``fy2025``; "second quarter" -> ``q2``).
Proper nouns of the question and periods are *key* terms (weight 2); the others weigh 1. Words that only
say an operation is wanted ("combined", "difference", "how much more") are not terms.

A candidate (:class:`Quantity`) is matched on fields of its own: for a table cell its row label, its column
header, and its context (the section path, the document title and metadata such as company and quarter),
never the other cells of its row; for an amount stated in prose, the sentence stating it, the fact's
description and the same context. Candidates are ranked by, in order (:func:`rank`):

1. every key term is covered, and a table cell's column names no period other than the ones asked;
2. the unit fits: a percentage when the operand asks for a percentage, share, rate or margin, and only then;
3. the role fits: an amount of change (a "Change" column; in prose an amount right after "up", "increase
   of", "from", "compared with"...) only when the operand asks for a change;
4. the weighted share of the operand's terms the candidate covers;
5. what the amount is said of (the row label; in prose, the words right before the amount): the operand's
   terms it holds (periods aside) less the words it holds that the operand does not ask for ("revenue of
   $151.9 million" before "Software and Services revenue was $48.8 million" when the operand asks for
   revenue; the row "Public Library" before the total row of a section under "Public Library");
6. a table cell before prose (a cell is exact as written; prose is often rounded);
7. when the operand names no line item of the row, the table's total row;
8. the fact's similarity to the sub-question, then the column order.

A candidate failing rule 1, or covering under :data:`WEAK_COVERAGE` of the terms, is *weak*: the executor
then widens its retrieval (KAG Alg. 2: hybrid retrieval when the graph result is empty or weak).

Precision (:func:`refine`): a rounded figure stated in prose ("requests $18.6 million") is replaced by the
table cell of the same section, unit and period that it rounds to ("Total | FY2025 Adopted: 18,585" in
thousands), the total row first, so arithmetic over it is exact; the cell is what gets cited.

Sets (:func:`members`): for ``Sort`` and ``count``, the rows of the table the best candidate sits in, in the
same column, with the rows of other tables in that column that fit the operand as well (the capital projects
of three sections), total rows left out. A table cell is matched with its table's first header too ("Line
item", "Project"), which names what the rows are.

Citations: a table cell is cited with its row line as the chunk stores it ("Overtime; FY2024 Actual: 1,320;
FY2025 Adopted: 1,170; Change: (150)"), a prose amount with the sentence of the chunk that states it; both
are verbatim slices of the chunk text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from stratagraph.agents.compute import Amount
from stratagraph.answers import Citation
from stratagraph.retrieval.base import Evidence
from stratagraph.retrieval.porter import stem

__all__ = [
    "WEAK_COVERAGE",
    "Quantity",
    "Terms",
    "candidates",
    "evidence_of",
    "members",
    "operand_terms",
    "rank",
    "refine",
    "render_amount",
    "weak",
]

#: the least weighted share of an operand's terms a candidate must cover not to be weak (ours)
WEAK_COVERAGE = 0.5

#: words that ask for an operation, or for a number in general, rather than name what is measured
OPERATION_WORDS = frozenset(
    ["how", "much", "many", "more", "less", "fewer", "higher", "lower", "larger", "smaller", "greater", "bigger", "combined", "combine", "total", "totals", "sum", "together", "altogether", "aggregate", "add", "added", "difference", "differ", "between", "than", "exceed", "exceeds", "exceeded", "gap", "compare", "compared", "ratio", "times", "percentage", "percent", "share", "fraction", "proportion", "change", "increase", "decrease", "grow", "grew", "growth", "rise", "rose", "fall", "fell", "decline", "what", "which", "who", "is", "are", "was", "were", "do", "does", "did", "the", "of", "in", "for", "and", "or", "by", "to", "from", "a", "an", "value", "amount", "figure", "number"]
)
_OPERATION_STEMS = frozenset(stem(w) for w in OPERATION_WORDS)
#: words around an amount that say nothing of what it measures ("was", "of", "total", digits)
_GENERIC = frozenset(stem(w) for w in ["total", "totals", "be", "was", "were", "is", "are", "reach", "reached", "stood", "came", "amount", "amounted"])
_CHANGE_ASK = frozenset(["change", "increase", "decrease", "grow", "grew", "growth", "rise", "rose", "fall", "fell", "decline", "reduction", "drop", "cut", "up", "down"])
_PERCENT_ASK = frozenset(["percent", "percentage", "share", "rate", "margin", "proportion", "fraction", "%"])
_CHANGE_BEFORE = re.compile(
    r"\b(?:up|down|increases?|increased|decreases?|decreased|rises?|rose|grows?|grew|falls?|fell|declines?|declined|"
    r"reduction|reduced|cut|changes?|changed|from|compared with|compared to|versus|vs|than|above|below)\b[^.;$\d]{0,24}$",
    re.IGNORECASE,
)
_CHANGE_COLUMN = frozenset(["change", "increase", "decrease", "difference", "variance", "delta"])
_PERIOD = re.compile(r"^(?:fy\d{4}|q[1-4]|h[12]|(?:1[5-9]|20)\d\d)$")
_ORDINALS = {"first": "1", "1st": "1", "second": "2", "2nd": "2", "third": "3", "3rd": "3", "fourth": "4", "4th": "4"}
_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*|%")
_STOP: frozenset[str] | None = None


def _stop_words() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from spacy.lang.en.stop_words import STOP_WORDS

        _STOP = frozenset(STOP_WORDS)
    return _STOP


def normalise_periods(text: str) -> str:
    """Periods written one way: "fiscal year 2025" / "FY 2025" / "FY25" -> "fy2025", "second quarter" -> "q2"."""
    t = text.lower()
    t = re.sub(r"\bfiscal\s+(?:year\s+)?((?:19|20)\d\d)\b", r"fy\1", t)
    t = re.sub(r"\bfy\s*'?(\d{2})\b", lambda m: f"fy20{m.group(1)}", t)
    t = re.sub(r"\bfy\s+((?:19|20)\d\d)\b", r"fy\1", t)
    t = re.sub(r"\b(first|1st|second|2nd|third|3rd|fourth|4th)\s+(?:fiscal\s+)?quarter\b", lambda m: f"q{_ORDINALS[m.group(1)]}", t)
    t = re.sub(r"\b(first|1st|second|2nd)\s+half\b", lambda m: f"h{_ORDINALS[m.group(1)]}", t)
    return t


@lru_cache(maxsize=8192)
def stems(text: str) -> frozenset[str]:
    """The content words of a text, periods normalised, stemmed; stop words left out."""
    stop = _stop_words()
    out = set()
    for w in _WORD.findall(normalise_periods(text)):
        if w in stop:
            continue
        out.add(w if _PERIOD.match(w) or w[0].isdigit() else stem(w))
    return frozenset(out)


def _periods(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in words if _PERIOD.match(w))


# ------------------------------------------------------------------------------------------ terms
@dataclass(frozen=True)
class Terms:
    """What an operand's sub-question asks for (module docstring)."""

    text: str
    weights: Mapping[str, float]  # stem -> weight
    keys: frozenset[str]  # stems that must be covered
    periods: frozenset[str]
    wants_change: bool
    wants_percent: bool

    @property
    def total(self) -> float:
        return sum(self.weights.values())


def operand_terms(text: str, proper: Iterable[str] = (), extra: Iterable[str] = ()) -> Terms:
    """The terms of an operand's sub-question ``text``; ``proper``: the question's proper nouns (any case),
    whose stems are key terms; ``extra``: a step's constraint values, terms too (a period among them a key)."""
    raw = normalise_periods(" ".join([text, *extra]))
    words = {w for w in _WORD.findall(raw)}
    proper_stems = {stem(w.lower()) for p in proper for w in re.findall(r"[A-Za-z0-9]+", p)}
    asked = stems(" ".join([text, *extra]))
    weights: dict[str, float] = {}
    for s in sorted(asked):
        if s in _OPERATION_STEMS and not _PERIOD.match(s):
            continue
        weights[s] = 2.0 if (s in proper_stems or _PERIOD.match(s)) else 1.0
    keys = frozenset(s for s, w in weights.items() if w >= 2.0)
    return Terms(
        text=text,
        weights=weights,
        keys=keys,
        periods=_periods(weights),
        wants_change=bool(words & _CHANGE_ASK),
        wants_percent=bool(words & _PERCENT_ASK),
    )


# ------------------------------------------------------------------------------------------ candidates
@dataclass(frozen=True)
class Quantity:
    """A typed quantity of a fact, with where it is stated and its verbatim citation."""

    value: Decimal
    unit: str | None
    currency: str | None
    scale: int
    raw: str
    row: str  # a table cell's row label, else ""
    column: str  # a table cell's column header, else ""
    is_total: bool
    table: bool  # a table cell (exact as written)
    fact_id: str
    section_id: str
    section_title: str
    chunk_id: str
    citation: Citation
    context: frozenset[str]  # stems of the section path, document title and metadata
    own: frozenset[str]  # stems of the row label + column (cell) or the sentence + description (prose)
    change: bool  # an amount of change (a Change column, or "up ..." in prose)
    near: frozenset[str] = frozenset()  # stems of the row label, or of the words just before a prose amount
    similarity: float = 0.0
    position: int = 0
    coverage: float = field(default=0.0, compare=False)

    @property
    def total_row(self) -> bool:
        """A table's total row ("Total", "Subtotal"), not a cell of a total column ("Five-year total")."""
        return self.is_total and (not self.table or bool(re.search(r"\b(?:sub)?totals?\b", self.row, re.IGNORECASE)))

    @property
    def label(self) -> str:
        what = f"{self.row} | {self.column}" if self.table and self.column else (self.row or _clip(self.citation.quote, 80))
        return f"{self.section_title}: {what}" if self.section_title and self.section_title not in what else what

    def amount(self) -> Amount:
        return Amount(value=self.value, label=self.label, raw=self.raw, citation=self.citation, unit=self.unit)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def evidence_of(doc: Any) -> Evidence | None:
    """A chunk document of a tool's artifact back as :class:`Evidence` (None for other graph objects)."""
    meta = dict(getattr(doc, "metadata", {}) or {})
    if "chunk_id" not in meta:
        return None
    known = {"chunk_id", "doc_id", "source", "title", "section", "section_id", "section_path", "rank", "score", "via"}
    extra = {(k.removeprefix("meta_")): v for k, v in meta.items() if k not in known}
    return Evidence(
        rank=int(meta.get("rank") or 0),
        score=float(meta.get("score") or 0.0),
        chunk_id=str(meta["chunk_id"]),
        doc_id=str(meta.get("doc_id") or ""),
        source=str(meta.get("source") or ""),
        title=str(meta.get("title") or ""),
        section=str(meta.get("section") or ""),
        section_id=str(meta.get("section_id") or ""),
        section_path=[str(p) for p in meta.get("section_path") or []],
        text=str(doc.page_content),
        metadata=extra,
        via=[str(v) for v in meta.get("via") or []],
    )


def _context_stems(ev: Evidence) -> frozenset[str]:
    values = [str(v) for v in ev.metadata.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    return stems(" ".join([*ev.section_path, ev.title, *values]))


def _first_header(text: str) -> str:
    """What a table's rows are ("Line item", "Project", "Department"): the first cell of its header line."""
    first = text.split("\n", 1)[0]
    return first.split(" | ", 1)[0].strip() if " | " in first else ""


def _words_before(text: str, start: int, n: int = 12) -> str:
    """The last ``n`` words before ``start`` in its sentence: what a prose amount is said of."""
    before = text[max(0, start - 160) : start]
    before = re.split(r"[.;:\n]\s", before)[-1]
    return " ".join(before.split()[-n:])


def _row_line(text: str, description: str, row: str, raw: str) -> str:
    """The chunk's line holding a table row: the fact's description when the chunk holds it verbatim, else the
    line opening with the row label that holds the cell, else any line holding the cell."""
    if description and description in text:
        return description
    lines = text.split("\n")
    for line in lines:
        if row and line.startswith(row) and raw in line:
            return line
    for line in lines:
        if raw and raw in line:
            return line
    return text


def _sentence_at(text: str, start: int, end: int) -> str:
    """The sentence (or line) of ``text`` around ``[start, end)``, a verbatim slice."""
    left = max(text.rfind(". ", 0, start) + 2 if text.rfind(". ", 0, start) >= 0 else 0, text.rfind("\n", 0, start) + 1)
    stops = [i for i in (text.find(". ", end), text.find("\n", end)) if i >= 0]
    right = min(stops) + (1 if stops and text[min(stops)] == "." else 0) if stops else len(text)
    return text[left:right].strip() or text[start:end]


def _locate(text: str, description: str, raw: str) -> tuple[int, int] | None:
    """Where ``raw`` is stated in ``text``: inside the fact's description when the text holds it, else first."""
    base = text.find(description) if description else -1
    if base >= 0:
        at = text.find(raw, base, base + len(description))
        if at >= 0:
            return at, at + len(raw)
    at = text.find(raw)
    return (at, at + len(raw)) if at >= 0 else None


def _decimal(value: Any) -> Decimal | None:
    try:
        d = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def candidates(docs: Sequence[Any], chunks: Mapping[str, Evidence]) -> list[Quantity]:
    """Every typed quantity of the facts in a tool's artifact (``search_facts`` / ``expand_entity``), with its
    citation in a chunk of ``chunks`` (the artifact's own chunk documents are added to it); a quantity whose
    chunk is unknown or whose raw text the chunk does not hold is left out."""
    known = dict(chunks)
    for d in docs:
        ev = evidence_of(d)
        if ev is not None:
            known.setdefault(ev.chunk_id, ev)
    out: list[Quantity] = []
    for d in docs:
        meta = getattr(d, "metadata", {}) or {}
        if meta.get("kind") != "fact" or not meta.get("quantities"):
            continue
        description = str(d.page_content)
        chunk = next((known[c] for c in meta.get("chunk_ids") or [] if c in known), None)
        if chunk is None:
            continue
        is_row = meta.get("type") == "table_row"
        context = _context_stems(chunk)
        section_title = chunk.section_path[-1] if chunk.section_path else ""
        for pos, q in enumerate(meta["quantities"]):
            value, raw = _decimal(q.get("value")), str(q.get("raw") or "")
            if value is None or not raw:
                continue
            label = str(q.get("label") or "")
            row, _, column = label.partition(" | ") if is_row and label else ("", "", "")
            if is_row:
                quote = _row_line(chunk.text, description, row, raw)
                if raw not in quote:
                    continue
                own = stems(f"{row} {column} {_first_header(chunk.text)}")
                near = stems(row)
                change = bool(stems(column) & {stem(w) for w in _CHANGE_COLUMN})
            else:
                where = _locate(chunk.text, description, raw)
                if where is None:
                    continue
                quote = _sentence_at(chunk.text, *where)
                own = stems(f"{quote} {description}")
                near = stems(_words_before(chunk.text, where[0]))
                change = bool(_CHANGE_BEFORE.search(chunk.text[max(0, where[0] - 40) : where[0]]))
            cite = Citation(doc_id=chunk.doc_id, source=chunk.source, section=chunk.section, chunk_id=chunk.chunk_id,
                            quote=quote)  # fmt: skip
            out.append(
                Quantity(
                    value=value,
                    unit=q.get("unit"),
                    currency=q.get("currency"),
                    scale=int(q.get("scale") or 1),
                    raw=raw,
                    row=row.strip(),
                    column=column.strip(),
                    is_total=bool(q.get("is_total")),
                    table=is_row,
                    fact_id=str(d.id or meta.get("node_id") or ""),
                    section_id=str(meta.get("section_id") or chunk.section_id),
                    section_title=section_title,
                    chunk_id=chunk.chunk_id,
                    citation=cite,
                    context=context,
                    own=own,
                    change=change,
                    near=near,
                    similarity=float(meta.get("score") or 0.0),
                    position=pos,
                )
            )
    return _unique(out)


def _unique(qs: Iterable[Quantity]) -> list[Quantity]:
    seen: dict[tuple[str, int], Quantity] = {}
    for q in qs:
        key = (q.fact_id, q.position)
        if key not in seen or q.similarity > seen[key].similarity:
            seen[key] = q
    return list(seen.values())


# ------------------------------------------------------------------------------------------ ranking
def _fit(q: Quantity, t: Terms) -> tuple[bool, bool, bool, float]:
    """(key terms covered and period consistent, unit fits, role fits, weighted coverage)."""
    fields = q.own | q.context
    key_ok = t.keys <= fields
    if key_ok and t.periods and q.table:
        col = _periods(stems(q.column))
        key_ok = not col or bool(col & t.periods)
    unit_ok = (q.unit == "%") == t.wants_percent
    role_ok = q.change == t.wants_change
    total = t.total
    coverage = sum(w for s, w in t.weights.items() if s in fields) / total if total else 0.0
    return key_ok, unit_ok, role_ok, round(coverage, 4)


def _sort_key(q: Quantity, t: Terms) -> tuple:
    key_ok, unit_ok, role_ok, coverage = _fit(q, t)
    names_row = bool(stems(q.row) & set(t.weights)) if q.table else True
    total_first = q.table and q.total_row and not names_row
    extra = sum(1 for w in q.near - set(t.weights) - _GENERIC if not w[0].isdigit())
    named = len((q.near & set(t.weights)) - t.periods)
    return (not key_ok, not unit_ok, not role_ok, -coverage, extra - named, not q.table, not total_first,
            -round(q.similarity, 6), q.position, q.fact_id)  # fmt: skip


def rank(qs: Iterable[Quantity], t: Terms) -> list[Quantity]:
    """The candidates best first (module docstring), each with its coverage of ``t`` set."""
    scored = [replace(q, coverage=_fit(q, t)[3]) for q in qs]
    return sorted(scored, key=lambda q: _sort_key(q, t))


def weak(q: Quantity | None, t: Terms) -> bool:
    """No candidate, or the best one misses a key term or covers under :data:`WEAK_COVERAGE`."""
    if q is None:
        return True
    key_ok, _, _, coverage = _fit(q, t)
    return not key_ok or coverage < WEAK_COVERAGE


# ------------------------------------------------------------------------------------------ precision and sets
def _precision(raw: str, scale: int) -> Decimal:
    """Half the step of the last digit written ("$18.6 million" -> 50,000), in the quantity's own unit."""
    number = re.search(r"\d[\d,]*(?:\.(\d+))?", raw)
    decimals = len(number.group(1) or "") if number else 0
    return Decimal(1).scaleb(-decimals) * Decimal(scale) / 2


def refine(q: Quantity, pool: Iterable[Quantity], t: Terms) -> Quantity:
    """The exact table cell a rounded prose figure stands for (module docstring, "Precision"), else ``q``."""
    if q.table:
        return q
    tol = _precision(q.raw, q.scale)
    if tol <= 0:
        return q
    fits = [
        c for c in pool
        if c.table and c.section_id == q.section_id and c.unit == q.unit and c.currency == q.currency
        and abs(c.value - q.value) <= tol and c.change == q.change and _fit(c, t)[0]
    ]  # fmt: skip
    if not fits:
        return q
    return min(fits, key=lambda c: (not c.total_row, abs(c.value - q.value), c.position, c.fact_id))


def members(best: Quantity, pool: Iterable[Quantity], t: Terms) -> list[Quantity]:
    """The set an operand names (module docstring, "Sets"): the rows of ``best``'s table in its column, and the
    rows in the same column of other tables that fit the operand as well as ``best`` does; total rows left
    out."""
    if not best.table:
        return []
    bar = _fit(best, t)[3]
    rows: dict[tuple[str, str], Quantity] = {}
    for c in pool:
        if not c.table or c.column != best.column or c.total_row or not c.row:
            continue
        key_ok, unit_ok, role_ok, coverage = _fit(c, t)
        if c.chunk_id == best.chunk_id or (key_ok and unit_ok and role_ok and coverage >= bar):
            rows.setdefault((c.chunk_id, c.row), c)
    return sorted(rows.values(), key=lambda c: (c.chunk_id, c.citation.quote, c.fact_id))


def peers(best: Quantity, ranked: Sequence[Quantity], t: Terms, limit: int = 4) -> list[str]:
    """The sections of the table cells that fit ``t`` as well as ``best`` in its column (where a set's other
    rows may be), ``best``'s first."""
    bar = _fit(best, t)
    out = [best.section_id]
    for c in ranked:
        if c.table and c.column == best.column and _fit(c, t) >= bar and c.section_id not in out:
            out.append(c.section_id)
    return out[:limit]


# ------------------------------------------------------------------------------------------ rendering
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def render_amount(value: Decimal, unit: str | None, currency: str | None = None) -> str:
    """An exact amount as text: "$2,820,000", "12.5%", "1,840 employees", "2,805"."""
    v = value.normalize() if value == value.to_integral_value() else value
    if v == v.to_integral_value():
        text = f"{v.quantize(Decimal(1)):,}"
    else:
        text = f"{v:,f}".rstrip("0").rstrip(".") if "." in f"{v:f}" else f"{v:,f}"
    code = currency or (unit if unit in _SYMBOLS else None)
    if code in _SYMBOLS:
        return f"-{_SYMBOLS[code]}{text[1:]}" if text.startswith("-") else f"{_SYMBOLS[code]}{text}"
    if unit == "%":
        return f"{text}%"
    if unit == "pp":
        return f"{text} percentage points"
    return f"{text} {unit}" if unit else text

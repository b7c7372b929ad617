"""A measure across periods: "in which quarter was the gross margin highest", "which year had the fewest
visitors". The question asks for a period (a date question whose noun is a period: quarter, year, month,
half) with a superlative; the answer is the period whose cited amount of the measure is the largest (or the
smallest).

1. The measure's frame is the question's, asking for a number and with no period of its own (the periods
   are what is compared; a period the question names, "of fiscal 2025", still has to agree).
2. Every sentence or table row that answers that number frame (:func:`~stratagraph.reading.spans.
   best_candidate`'s thresholds: about the names, holding the relation words) gives its candidate amounts
   with their period: the period phrase that belongs to the amount in a sentence, the column header or row
   label in a table row, else the chunk's own period (its heading or its document's metadata).
3. Per period, the best-fitting amount stands; with two or more periods whose amounts are of one kind, the
   largest (smallest) wins and the answer is that period as the evidence writes it, cited with its amount.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from stratagraph.answers import Computation
from stratagraph.reading.arithmetic import Figure
from stratagraph.reading.frame import Frame
from stratagraph.reading.result import Reading
from stratagraph.reading.sentences import Sentence
from stratagraph.reading.spans import MIN_ABOUT, MIN_RELATION, candidates, periods_of, score_sentence, specificity
from stratagraph.reading.tables import row_candidates
from stratagraph.text.lexicon import PERIOD_WORDS
from stratagraph.text.periods import Period, agreement, find_periods
from stratagraph.text.question import AnswerType

__all__ = ["period_superlative"]


def period_superlative(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """The period in which the measure is largest / smallest (module docstring), or None when the question
    does not ask that or fewer than two periods' amounts are cited."""
    if not frame.superlative or frame.type != AnswerType.DATE or frame.focus not in PERIOD_WORDS | {"year", "month"}:
        return None
    unit = {"quarter": "Q", "half": "H"}.get(frame.focus, "")
    measure = replace(frame, type=AnswerType.NUMBER, focus="", superlative="", periods=())
    weights = specificity(measure, sents)
    best: dict[str, tuple[float, Figure, str]] = {}
    for s in sents:
        score, a, r = score_sentence(s, measure, weights)
        if (measure.names and a < MIN_ABOUT) or r < MIN_RELATION:
            continue
        for cand in row_candidates(s, measure) if s.is_row else candidates(s, measure):
            if cand.quantity is None or cand.fit < (1.0 if s.is_row else 0.8):
                continue  # a row's best column; a sentence's amount of the kind asked
            period = _period(s, cand.start)
            if period is None or period.unit != unit or (frame.periods and agreement(frame.periods, (period,)) is False):
                continue  # "which quarter": quarters only, not the fiscal year's figure
            key = period.text
            fig = Figure(quantity=cand.quantity, citation=s.quote(), label=f"{key}: {s.text[:60]}")
            if key not in best or score > best[key][0]:
                best[key] = (score, fig, key)
    kinds = {(f.quantity.currency, f.quantity.unit) for _, f, _ in best.values()}
    if len(best) < 2 or len(kinds) != 1:
        return None
    pick = max if frame.superlative == "max" else min
    _, fig, key = pick(best.values(), key=lambda v: v[1].value)
    comp = Computation(operation=f"{frame.superlative} over periods", result=key,
                       expression=f"{frame.superlative}(" + ", ".join(f"{k}: {f.quantity.raw}" for _, f, k in best.values()) + ")",
                       operands=[f.operand() for _, f, _ in best.values()])  # fmt: skip
    return Reading(kind="choice", answer=key, citations=[fig.citation], computed=comp, type=AnswerType.DATE.value,
                   score=1.0, reason=f"the {frame.superlative} of {len(best)} periods' amounts: {key}")  # fmt: skip


def _period(s: Sentence, start: int) -> Period | None:
    """The one period an amount belongs to (module docstring, rule 2), or None when it is not one."""
    at = start - s.start
    if s.is_row:
        cell = next((c for c in s.cells if c.start <= start < c.end), None)
        named = find_periods(cell.column) if cell is not None else []
        named = named or find_periods(s.label)
    else:
        named = periods_of(s.text, at, s.own_periods)
    found = named or list(s.own_periods)
    return found[0] if len(found) == 1 else None

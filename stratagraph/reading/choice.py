"""Choices decided in code (KAG §2.3's ``Deduce`` and ``Sort`` over two operands): "which came first, A or
B?", "who is older, A or B?", "which is larger, A or B?", "was A founded before or after B?".

Each option is read as a lookup of its own (the question's frame with that option as its only name): a date
when the question compares in time ("first", "earlier", "older", "before", "younger", "later", "after";
with no relation word of its own, the date of a beginning: founded, established, born, opened, published...:
:data:`~stratagraph.text.lexicon.START_VERBS`), else a number (of the question's relation words and
measure). The comparative decides the direction; equal values, or an option with no value, decide nothing
("not found"). The answer is the option as the question writes it, or "before" / "after"; both values are
cited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

from stratagraph.answers import Computation
from stratagraph.reading.arithmetic import Figure
from stratagraph.reading.frame import Frame, Name
from stratagraph.reading.result import Reading, not_found
from stratagraph.reading.sentences import Sentence
from stratagraph.reading.spans import best_candidate, figure_of
from stratagraph.reading.words import forms
from stratagraph.text.amounts import Quantity
from stratagraph.text.lexicon import LIFE_VERBS, COMPARE_EARLIER, COMPARE_LATER, COMPARE_LESS, COMPARE_MORE, START_VERBS
from stratagraph.text.question import AnswerType

__all__ = ["choose", "date_key", "decide_choice", "option_figure", "options_of"]

_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}  # fmt: skip
_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")


def date_key(text: str) -> tuple[int, int, int] | None:
    """A stated date as (year, month, day) for ordering; None without a year."""
    years = _YEAR.findall(text)
    if not years:
        return None
    low = text.lower()
    month = next((n for name, n in _MONTHS.items() if re.search(rf"\b{name[:3]}\w*\b", low)), 0)
    day = re.search(r"\b([0-3]?\d)(?:st|nd|rd|th)?\b", _YEAR.sub("", text))
    return int(years[0]), month, int(day.group(1)) if month and day and 1 <= int(day.group(1)) <= 31 else 0


def _direction(frame: Frame) -> tuple[str, str] | None:
    """("date" | "number", "min" | "max") from the question's comparative word."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", frame.question)}
    if frame.options and set(frame.options) <= {"before", "after", "earlier", "later"}:
        return "date", "min"
    if words & COMPARE_EARLIER:
        return "date", "min"
    if words & COMPARE_LATER:
        return "date", "max"
    if words & COMPARE_MORE:
        return "number", "max"
    if words & COMPARE_LESS:
        return "number", "min"
    return None


def _option_frame(frame: Frame, name: str, kind: str) -> Frame:
    """The question's frame about one option: that option its only name; a date or a number."""
    option_words = {f for w in re.findall(r"[^\W_]+", name.lower()) for f in forms(w)}
    comparatives = COMPARE_EARLIER | COMPARE_LATER | COMPARE_MORE | COMPARE_LESS | {"old", "young", "new"}
    relation = tuple(w for w in frame.relation if not (forms(w) & option_words) and w not in comparatives
                     and w != frame.focus)  # fmt: skip
    if kind == "date":  # when a thing began: founded, established, opened... are one relation said many ways
        starts = {f for v in START_VERBS - LIFE_VERBS for f in forms(v)}
        relation = tuple(w for w in relation if not (forms(w) & starts))
    return replace(frame, type=AnswerType.DATE if kind == "date" else AnswerType.NUMBER, names=(Name(name, "OPTION"),),
                   options=(), relation=relation, plan=None, superlative="")  # fmt: skip


def option_figure(frame: Frame, option: str, sents: Sequence[Sentence]) -> Figure | None:
    """The cited value an option is compared by (module docstring): a date (as yyyymmdd) or a number."""
    direction = _direction(frame)
    kind = direction[0] if direction is not None else "date"
    sub = _option_frame(frame, option, kind)
    best, _ = best_candidate(sub, sents)
    if best is None:
        return None
    if kind == "number":
        fig = figure_of(best)
        return replace(fig, label=option) if fig is not None else None
    s = best.sentence
    text = s.passage.text[best.cand.start : best.cand.end]
    key = date_key(text)
    if key is None:
        return None
    y, m, d = key
    return Figure(quantity=Quantity(value=Decimal(y * 10000 + m * 100 + d), raw=text), citation=s.quote(), label=option)


def choose(frame: Frame, options: Sequence[str], values: Sequence[Figure | None]) -> Reading:
    """The option the two cited values decide for (module docstring)."""
    direction = _direction(frame)
    if direction is None:
        return not_found("the question compares its options by nothing the reader can measure")
    kind, pick = direction
    if any(v is None for v in values) or len(values) != 2:
        missing = [o for o, v in zip(options, values, strict=False) if v is None]
        return not_found(f"no {kind} stated for {', '.join(missing)}")
    a, b = values  # type: ignore[misc]
    if a.value == b.value:
        return not_found(f"both are stated as {a.quantity.raw}")
    first_wins = (a.value < b.value) == (pick == "min")
    if set(frame.options) <= {"before", "after", "earlier", "later"}:
        answer = frame.options[0] if a.value < b.value else frame.options[1]
    else:
        answer = options[0] if first_wins else options[1]
    comp = Computation(operation=f"compare ({pick} {kind})",
                       expression=f"{pick}({options[0]}: {a.quantity.raw}, {options[1]}: {b.quantity.raw})",
                       operands=[a.operand(), b.operand()], result=answer)  # fmt: skip
    cites = [a.citation] + ([b.citation] if b.citation != a.citation else [])
    return Reading(kind="choice", answer=answer, citations=cites, computed=comp, type="choice", score=1.0,
                   reason=f"{options[0]}: {a.quantity.raw}; {options[1]}: {b.quantity.raw}; the {pick} {kind} decides")  # fmt: skip


def options_of(frame: Frame) -> list[str]:
    """What a choice compares: its two options, or for "before or after" the two things it names."""
    if set(frame.options) <= {"before", "after", "earlier", "later"}:
        return [n.text for n in frame.names][:2]
    return list(frame.options)


def decide_choice(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    """The option the evidence decides for (module docstring)."""
    options = options_of(frame)
    if len(options) != 2:
        return not_found("the question does not name two things to compare")
    return choose(frame, options, [option_figure(frame, o, sents) for o in options])

"""Reporting periods as questions write them: quarters, halves, fiscal years, calendar years.

``find_period`` locates the first period phrase of a text ("the second quarter of 2024", "Q3 FY2025",
"fiscal year 2025", "FY25", "2023") and reads it as a :class:`Period`; ``Period.shift`` steps it ("the
previous quarter" of Q1 2024 is Q4 2023) and ``Period.text`` writes it back in one canonical form ("Q2 2024",
"FY2025", "H1 2024", "2023").

Two readings put a question's periods the way a report states its figures, so that what it asks can be
computed from them: ``quarter_run`` reads a run of quarters ("the first three quarters of 2024", "the first
half of fiscal 2025", "the first nine months", "Q1 through Q3 2024") as its quarters, and ``spelled_change``
writes a change against the same period a year before ("year over year", "compared with the same quarter a
year earlier") or against the period before ("sequentially", "quarter over quarter") as a change "from" that
period "to" the one asked. Reports state quarters; a half, nine months or a year-over-year change is a sum or a
difference of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

__all__ = ["Period", "agreement", "find_period", "find_periods", "in_date", "phrase_start", "quarter_run", "relative_periods", "spelled_change"]

_ORDINAL = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_YEAR = r"(?:FY\s?'?)?(?:19|20)\d{2}|FY\s?'?\d{2}|fiscal\s+(?:year\s+)?(?:19|20)\d{2}"
_PATTERN = re.compile(
    rf"""
    (?<!\w)(?:
    (?:the\s+)?(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th)[\s-]+(?:fiscal\s+)?(?P<unit>quarter|half)
        (?:\s+(?:of\s+)?(?P<ofiscal>fiscal\s+)?(?P<oyear>{_YEAR}))?
  | (?P<q>[QH][1-4])(?:\s*(?P<qyear>{_YEAR}))?
  | (?P<year>{_YEAR})
    )(?!\w)
    """,
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class Period:
    """A quarter (``unit`` "Q"), a half ("H"), the quarters of a year up to ``index`` ("R": "the first nine
    months", "the first three quarters", "Q1 through Q3") or a whole year (""); ``year`` with ``fiscal`` for a
    fiscal year; ``start``/``end`` where the phrase was found."""

    unit: str = ""
    index: int = 0
    year: int | None = None
    fiscal: bool = False
    start: int = 0
    end: int = 0

    @property
    def text(self) -> str:
        year = "" if self.year is None else (f"FY{self.year}" if self.fiscal else str(self.year))
        if not self.unit:
            return year
        if self.unit == "R":
            return f"Q1-Q{self.index}" + (f" {year}" if year else "")
        return f"{self.unit}{self.index}" + (f" {year}" if year else "")

    @property
    def closes(self) -> tuple[int, int] | None:
        """Where the period ends, as (year, month of its year); None without a year (fiscal years as numbered)."""
        if self.year is None:
            return None
        return self.year, 3 * self.index if self.unit in ("Q", "R") else 6 * self.index if self.unit == "H" else 12

    def shift(self, step: int) -> Period:
        """The period ``step`` units later (earlier when negative): a quarter by quarters, a half by halves, a
        year by years; the year rolls over when it is known."""
        if not self.unit or self.unit == "R":  # a run of quarters steps by years, as a year does
            return replace(self, year=None if self.year is None else self.year + step)
        per_year = 4 if self.unit == "Q" else 2
        flat = (self.index - 1) + step
        years, index = divmod(flat, per_year)
        return replace(self, index=index + 1, year=None if self.year is None else self.year + years)

    def year_before(self) -> Period:
        """The same period a year earlier (Q3 2026 -> Q3 2025, H1 2025 -> H1 2024, FY2026 -> FY2025)."""
        return self.shift(-4 if self.unit == "Q" else -2 if self.unit == "H" else -1)

    def agrees(self, other: Period) -> bool | None:
        """Whether two periods can be the same: False when their years differ or both name a quarter (half)
        and it differs; True when they name the same year and the same quarter (or both a whole year); None
        when nothing can be compared (a quarter against a whole year)."""
        if self.year is not None and other.year is not None and self.year != other.year:
            return False
        if self.unit and other.unit and (self.unit, self.index) != (other.unit, other.index):
            return False
        if bool(self.unit) != bool(other.unit):
            return None  # a quarter against a whole year: neither the same nor another
        if self.year is not None and other.year is not None:
            return True
        if self.unit and other.unit:
            return True
        return None

    def with_year_of(self, other: Period) -> Period:
        """This period, taking ``other``'s year when it names none ("Q3" after "Q2 2024" is Q3 2024)."""
        if self.year is not None or other.year is None or not self.unit:
            return self
        return replace(self, year=other.year, fiscal=other.fiscal)


def _year(text: str | None) -> tuple[int | None, bool]:
    if not text:
        return None, False
    digits = re.search(r"\d+", text).group(0)  # type: ignore[union-attr]
    fiscal = bool(re.match(r"\s*(?:FY|fiscal)", text, re.IGNORECASE))
    year = int(digits) if len(digits) == 4 else 2000 + int(digits)
    return year, fiscal


def find_period(text: str) -> Period | None:
    """The first period phrase of ``text`` (module docstring), or None."""
    return next(iter(find_periods(text)), None)


_DATE_BEFORE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(?:\d{1,2}(?:st|nd|rd|th)?,?\s+)?$", re.IGNORECASE
)


def in_date(text: str, at: int) -> bool:
    """Whether the year at ``at`` is the year of a calendar date ("June 11, 2024") or month ("from July
    2025"): a date names a day or a month, not the period a document covers."""
    return bool(_DATE_BEFORE.search(text[max(0, at - 20) : at]))


def find_periods(text: str) -> list[Period]:
    """Every period phrase of ``text``, in order (module docstring), but the year of a calendar date ("June
    11, 2024"); a quarter or half written without a year takes the year of the year named next to it ("the
    fourth quarter and full fiscal year 2025")."""
    runs = [Period("R", qs[-1].index, qs[-1].year, qs[-1].fiscal, m.start(), m.end())
            for m in _RUN.finditer(text) if not m.group("half") and not m.group("h2") and (qs := _run(m)) and qs[0].index == 1]
    found = [p for p in _periods(text) if (p.unit or not in_date(text, p.start))
             and not any(r.start <= p.start < r.end for r in runs)]
    found = sorted([*found, *runs], key=lambda p: p.start)
    years = [p for p in found if not p.unit and p.year is not None]
    if not years:
        return found
    return [p if p.year is not None or not p.unit else p.with_year_of(min(years, key=lambda y: abs(y.start - p.start)))
            for p in found]


def _periods(text: str) -> Iterator[Period]:
    for m in _PATTERN.finditer(text):
        if m.group("ord"):
            year, fiscal = _year(m.group("oyear"))
            fiscal = fiscal or bool(m.group("ofiscal"))
            unit = "Q" if m.group("unit").lower() == "quarter" else "H"
            index = _ORDINAL[m.group("ord").lower()]
            if unit == "H" and index > 2:
                continue
            yield Period(unit, index, year, fiscal, m.start(), m.end())
            continue
        if m.group("q"):
            year, fiscal = _year(m.group("qyear"))
            unit, index = m.group("q")[0].upper(), int(m.group("q")[1])
            if unit == "H" and index > 2:
                continue
            yield Period(unit, index, year, fiscal, m.start(), m.end())
            continue
        year, fiscal = _year(m.group("year"))
        yield Period("", 0, year, fiscal, m.start(), m.end())


def agreement(asked: Sequence[Period], found: Sequence[Period]) -> bool | None:
    """True when a found period is one asked, False when every found period conflicts with every asked one,
    None when they cannot be compared (or either is empty)."""
    if any(a.unit for a in asked) and any(f.unit for f in found):  # compare quarters with quarters
        found = [f for f in found if f.unit]
    verdicts = [a.agrees(f) for a in asked for f in found]
    if any(v is True for v in verdicts):
        return True
    if verdicts and all(v is False for v in verdicts):
        return False
    return None


# ------------------------------------------------------------------------------------------ runs and relative changes
_COUNT = {"two": 2, "2": 2, "three": 3, "3": 3, "four": 4, "4": 4}
_MONTHS = {"three": 1, "3": 1, "six": 2, "6": 2, "nine": 3, "9": 3, "twelve": 4, "12": 4}
#: a run of quarters from the first ("the first three quarters of 2024", "the first half of fiscal 2025", "the
#: first nine months of 2025", "the first two fiscal quarters"), or between two quarters ("Q1 through Q3 2024",
#: "Q1-Q3 2024"); the year, when written, after it
_RUN = re.compile(
    rf"""
    (?<!\w)(?:
      (?:the\s+)?first\s+(?:(?P<n>two|three|four|[234])\s+(?:fiscal\s+)?quarters
                         |(?P<half>half)
                         |(?P<m>three|six|nine|twelve|3|6|9|12)\s+months)
    | (?:the\s+)?(?P<h2>second)\s+half
    | Q(?P<a>[1-4])\s*(?:through|thru|to|-|–|—)\s*Q(?P<b>[1-4])(?=\s|$|[?,.])
    )
    (?:\s+(?:of\s+)?(?P<fiscal>fiscal\s+)?(?P<year>{_YEAR}))?(?!\w)
    """,
    re.IGNORECASE | re.VERBOSE,
)
#: a change against the same period a year before, written without naming it
_YEAR_BEFORE = re.compile(
    r"\b(?:year[\s-]over[\s-]year|year[\s-]on[\s-]year|from\s+a\s+year\s+(?:earlier|before|ago)|"
    r"(?:compared?\s+(?:with|to)|versus|vs\.?|against|over)\s+(?:the\s+)?(?:same\s+(?:quarter|period|half)|"
    r"prior[\s-]year\s+(?:quarter|period|half)|year[\s-]earlier\s+(?:quarter|period|half))"
    r"(?:\s+(?:a|one)\s+year\s+(?:earlier|before|ago)|\s+(?:of\s+)?(?:the\s+)?(?:previous|prior|preceding)\s+year|\s+last\s+year)?)",
    re.IGNORECASE,
)
#: a change against the period right before, written without naming it
_PERIOD_BEFORE = re.compile(
    r"\b(?:sequentially|quarter[\s-](?:over|on)[\s-]quarter|(?:from|compared?\s+(?:with|to)|versus|over)\s+the\s+"
    r"(?:previous|prior|preceding)\s+quarter)",
    re.IGNORECASE,
)
_BEFORE_PERIOD = re.compile(r"(?:\b(?:in|for|during|of)\s+)?$", re.IGNORECASE)
_BEFORE_RUN = re.compile(r"(?:\b(?:in|for|during|of|across|over|throughout|from)\s+)?$", re.IGNORECASE)


def _run(m: re.Match[str]) -> list[Period]:
    year, fiscal = _year(m.group("year"))
    fiscal = fiscal or bool(m.group("fiscal"))
    if m.group("a"):
        first, last = int(m.group("a")), int(m.group("b"))
    elif m.group("h2"):
        first, last = 3, 4
    else:
        first = 1
        last = 2 if m.group("half") else _COUNT[m.group("n").lower()] if m.group("n") else _MONTHS[m.group("m").lower()]
    return [Period("Q", i, year, fiscal) for i in range(first, last + 1)] if last > first else []


def quarter_run(question: str) -> tuple[int, int, list[Period]] | None:
    """The run of quarters a question names (module docstring): where its phrase starts (with the preposition
    before it: "across", "for", "in") and ends, and its quarters in order; None without one."""
    m = _RUN.search(question)
    quarters = _run(m) if m is not None else []
    if m is None or not quarters:
        return None
    before = _BEFORE_RUN.search(question[: m.start()])
    return (before.start() if before and before.group(0) else m.start()), m.end(), quarters


#: a period a report names relative to the one it is about: the same period a year before ("in the same quarter
#: last year", "the same period a year earlier", "the prior-year quarter", "the year-ago quarter", "a year
#: earlier"), or the quarter before ("the previous quarter", "the prior quarter", "last quarter")
_A_YEAR_BEFORE = re.compile(
    r"\b(?:the\s+)?(?:same\s+(?:quarter|period|half)(?:\s+(?:of\s+)?last\s+year|\s+(?:a|one)\s+year\s+(?:earlier|before|ago)|"
    r"\s+(?:of\s+)?the\s+(?:previous|prior|preceding)\s+year)|(?:prior|previous)[\s-]year\s+(?:quarter|period|half)|"
    r"year[\s-](?:ago|earlier)\s+(?:quarter|period|half))\b|\b(?:a|one)\s+year\s+(?:earlier|before|ago)\b",
    re.IGNORECASE,
)
_A_QUARTER_BEFORE = re.compile(r"\b(?:the\s+)?(?:previous|prior|preceding|last)\s+quarter\b", re.IGNORECASE)


def phrase_start(text: str, period: Period) -> int:
    """Where a period phrase of ``text`` starts with the preposition that introduces it ("revenue *in* Q3
    2026": the start of "in")."""
    before = _BEFORE_PERIOD.search(text[: period.start])
    return before.start() if before and before.group(0) else period.start


def relative_periods(text: str, anchor: Period) -> list[Period]:
    """The periods ``text`` names relative to ``anchor``, the period its report (or sentence) is about
    (:data:`_A_YEAR_BEFORE`, :data:`_A_QUARTER_BEFORE`), each at its phrase's place: "revenue was $382.5 million,
    against $348.6 million in the same quarter last year" in a report on Q3 2026 names Q3 2025. A quarter
    before needs an anchor that is a quarter."""
    out = [replace(anchor.year_before(), start=m.start(), end=m.end()) for m in _A_YEAR_BEFORE.finditer(text)]
    if anchor.unit == "Q":
        out += [replace(anchor.shift(-1), start=m.start(), end=m.end()) for m in _A_QUARTER_BEFORE.finditer(text)]
    return sorted(out, key=lambda p: p.start)


def spelled_change(question: str) -> str | None:
    """The question with a change against the same period a year before ("year over year", "compared with the
    same quarter a year earlier") or against the period before ("sequentially", "quarter over quarter")
    written as "from <that period> to <the one asked>" (module docstring); None when it holds neither or does
    not name exactly one period (a quarter or half for a change against the period before)."""
    for pattern, step in ((_YEAR_BEFORE, None), (_PERIOD_BEFORE, -1)):
        rel = pattern.search(question)
        if rel is None:
            continue
        rest = question[: rel.start()] + question[rel.end() :]
        rest = re.sub(r"\s+(?=[,?.!])|(?<=\s)\s+", "", rest).strip()
        rest = re.sub(r"^,\s*", "", rest)
        asked = find_periods(rest)
        if len(asked) != 1 or (step is not None and asked[0].unit not in ("Q", "H")):
            return None
        p = asked[0]
        head = rest[: phrase_start(rest, p)].rstrip()
        text = f"{head} from {(p.shift(step) if step is not None else p.year_before()).text} to {p.text}{rest[p.end :]}"
        return text[:1].upper() + text[1:]
    return None

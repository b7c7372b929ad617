"""Amounts in text, parsed deterministically (regular expressions and :class:`~decimal.Decimal`): the one
quantity type (:class:`Quantity`), parser (:func:`parse_quantities`, :func:`detect_scale`) and renderer
(:func:`render_amount`) of the package. Ingestion stores what it finds (both extractors' facts and the table
rows of :mod:`stratagraph.ingest.quantities`), and the reader (:mod:`stratagraph.reading`) reads sentences
with the same rules, so numbers never depend on the extractor.

What counts as an amount
------------------------
Every number written with digits, with what surrounds it:

* a currency before it (``$``, ``US$``, ``C$``, ``A$``, ``€``, ``£``, ``¥``, ``₹`` or a code ``USD``, ``EUR``,
  ``GBP``, ...) or after it (a code, or ``dollars``/``euros``/``yen``/``pounds sterling``);
* a scale after it: ``thousand``/``million``/``billion``/``trillion`` (with or without a space) or an
  abbreviation ``k``, ``m``, ``mn``, ``mln``, ``M``, ``bn``, ``bln``, ``B``, ``tn``. An abbreviation must be
  attached to the number ("5bn", "$3.4m"), or follow it after one space when a currency is present
  ("USD 5 mn"); a lowercase attached ``m`` counts only with a currency ("$5m", not "100m" of track), and
  without a currency a one-letter suffix does not rescue an identifier ("Apartment 5B", "Form 10K");
* a percentage: ``%``, ``percent``, ``per cent``, ``pct`` (unit ``"%"``), ``percentage point(s)`` (unit
  ``"pp"``); basis points ``bp``/``bps``/``basis point(s)`` (unit ``"bp"``). Percentages never take a
  currency or the default scale;
* a sign: accounting parentheses "(150)", "($150)", "$(150)", "(150) thousand" (negative only when the
  closing parenthesis follows the digits: "($140 thousand)" and "(14.8%)" are parentheticals, positive),
  a leading ``-`` or ``−`` (U+2212) not preceded by a letter, digit, ``%`` or ``)`` (so "33%-35%" is a
  range), or the word ``negative``/``minus`` right before;
* a counted noun: for a bare number, the following run of plain lowercase words (at most four, stopping at
  a stopword, a preposition, a word ending in ``-ing``/``-ed`` or punctuation) gives the unit as its last
  word: "1,200 employees" -> ``employees``, "38 replacement body-worn cameras" -> ``cameras``,
  "34 parks covering 612 acres" -> ``parks`` and ``acres``. "5-year" gives ``year``; a scaled number
  without currency takes one too ("1.2 million employees" -> 1200000 ``employees``).

A range whose first number is bare takes the scale, currency and percent sign of its second number
("$136-141 million", "$148 to $154 million", "33 to 35%").

What is not an amount
---------------------
Bare years (a 4-digit integer 1800-2100 without currency, scale, percent, comma or decimals, even when a
noun follows: "the 2024 budget"; an older 3- or 4-digit year when "in", "since", "until", "died", "born",
"died after", "circa"/"c." comes right before it or "BC"/"AD" right after it and no counted noun follows:
"in 931"; life spans in parentheses "(795–855)", "(835 –)"), the second part of a year range ("2020-21"),
numbers touching letters ("Q3", "FY2025", "P25", "3rd", "1990s"), hyphenated identifiers ("K-9",
"COVID-19"), numbers with more than one dot ("1.1.2"), numbers after a reference word ("Section 2.1",
"§ 4", "Chapter 3", "Table 2", "Figure 1", "page 12", "No. 5", ...), numbers right after another
capitalised word that is not a function word ("Station 3", "Engine 3", "Measure 7") unless a currency,
scale or percent makes them money, and dates and times ("June 11, 2024", "11 November 875", "2024-08-06",
"11/05/2024", "10:30").

List markers ("1. Replace ...", "2) Add ..." at the start of a line) are not amounts either.

Word numbers ("six", "four") are not parsed. "A vote of 6 to 1" gives two bare quantities, 6 and 1: bare
numbers are quantities unless one of the rules above excludes them.

Totals
------
``is_total`` is set when ``label`` names a total (``total``, ``subtotal``, ``grand total``), when the text
between the previous amount (or the start of the sentence) and this one says ``total``/``totals``/
``totaled``/``subtotal``/``combined``/``aggregate``/``altogether``, or when the amount is followed by
"in total"/"combined"/"in aggregate"/"altogether"/"in all".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, field_serializer


__all__ = ["Quantity", "detect_scale", "is_total_label", "parse_quantities", "render_amount"]


class Quantity(BaseModel):
    """An amount stated in text or in a table cell, typed so sums and comparisons are exact.

    ``value`` is the amount itself, the stated number times ``scale`` ("$1.2 million" -> 1200000 with scale
    1000000; "1,320" in a table "in thousands of dollars" -> 1320000 with scale 1000; "(150)" -> -150).
    ``unit`` is "%" for percentages, the currency code for money, else the counted noun ("employees") or
    None. ``raw`` is the text as written. ``label`` names what is measured when it is known (a table's row
    label and column header, e.g. "Personnel | FY2025 Adopted"); ``section_id`` the section it sits under.
    """

    model_config = ConfigDict(frozen=True)

    value: Decimal
    unit: str | None = None
    scale: int = 1
    currency: str | None = None
    raw: str
    label: str | None = None
    section_id: str | None = None
    is_total: bool = False  # the row or phrase states a total ("Total", "Subtotal", "in total")

    @field_serializer("value")
    def _value_str(self, v: Decimal) -> str:  # exact in JSON, never a float
        return format(v, "f")

# --------------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------------

_SYMBOL_CURRENCY: dict[str, str] = {
    "US$": "USD",
    "C$": "CAD",
    "A$": "AUD",
    "HK$": "HKD",
    "NZ$": "NZD",
    "S$": "SGD",
    "$": "USD",
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "₹": "INR",
}
_CODES: tuple[str, ...] = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR", "HKD", "NZD", "SGD", "SEK")
_WORD_CURRENCY: dict[str, str] = {
    "dollar": "USD",
    "dollars": "USD",
    "us dollars": "USD",
    "u.s. dollars": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pounds sterling": "GBP",
    "sterling": "GBP",
    "yen": "JPY",
}
_SCALE_WORDS: dict[str, int] = {
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}
_SCALE_ABBREV: dict[str, int] = {
    "k": 10**3,
    "K": 10**3,
    "m": 10**6,
    "M": 10**6,
    "mn": 10**6,
    "mln": 10**6,
    "bn": 10**9,
    "bln": 10**9,
    "B": 10**9,
    "tn": 10**12,
}

_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)

#: Words after which a number is a reference or an identifier, whatever its case ("see section 3").
_REFERENCE_WORDS = (
    "section|sections|sec|chapter|chapters|chap|table|tables|figure|figures|fig|article|art|appendix|"
    "exhibit|note|notes|item|items|part|page|pages|pp|p|rule|schedule|no|nos|number|vol|volume|step|phase|"
    "paragraph|para|clause|line|annex|attachment|footnote|version|v"
)

#: Capitalised words that may stand right before an amount without making it an identifier.
_NOT_IDENTIFIER_WORDS = frozenset(
    """a about above after against almost also an and another approximately around as at before below
    between but by circa combined down each either every few fewer for from further grand her his i in
    including its just least less many more most my nearly neither nor not of on only or our over per
    plus roughly since so some still subtotal than that the their these this those through to total under
    until up upto what which while with within without your we they he she it you all both yet"""
    .split()
)

#: Words that end a counted-noun run (or stop it before it starts).
_STOPWORDS = frozenset(
    """a about above across after against ago all along also am among an and any are around as at be been
    being below between both but by can could did do does during each either else for from had has have
    having he her here hers him his how i if in into is it its itself just least less may me might more
    most much must my near neither no nor not now of off on once only onto or other our ours out over own
    per percent plus same shall she should since so some such than that the their theirs them then there
    these they this those though through thus till to too toward towards under until up upon us very via
    was we were what when where whether which while who whom whose why will with within without would yet
    you your each every versus vs respectively apiece year-over-year sequentially annually overall
    compared higher lower last next prior previous earlier later following"""
    .split()
)

_TOTAL_LABEL_RE = re.compile(r"\b(?:grand\s+)?(?:sub-?)?totals?\b", re.IGNORECASE)
_TOTAL_BEFORE_RE = re.compile(
    r"\b(?:total(?:s|ed|led|ing|ling)?|sub-?totals?|combined|aggregate|altogether)\b", re.IGNORECASE
)
_TOTAL_AFTER_RE = re.compile(r"\s*,?\s*(?:in\s+total|combined|in\s+aggregate|altogether|in\s+all)\b", re.IGNORECASE)

# --------------------------------------------------------------------------------------------------
# Regular expressions of the scanner
# --------------------------------------------------------------------------------------------------

# a number: 1,320 | 1320 | 12.5 | 1,320.75 ; more dots are caught (and rejected) as identifiers
_NUMBER_RE = re.compile(r"(?<!\d)(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)*")
_CURRENCY_LEFT_RE = re.compile(
    r"(?:(?<![A-Za-z])(?:US|C|A|HK|NZ|S)?\$|€|£|¥|₹|(?<![A-Za-z])(?:" + "|".join(_CODES) + r"))[ \u00a0]?$"
)
_NEGATIVE_WORD_RE = re.compile(r"\b(?:negative|minus)\s+$", re.IGNORECASE)
_MONTH_BEFORE_RE = re.compile(r"\b(?:" + _MONTHS + r")\.?\s+(?:the\s+)?$")
_MONTH_AFTER_RE = re.compile(r"(?:st|nd|rd|th)?\s+(?:of\s+)?(?:" + _MONTHS + r")\b")
_REFERENCE_BEFORE_RE = re.compile(r"(?:\b(?:" + _REFERENCE_WORDS + r")\.?|§§?|#)\s*$", re.IGNORECASE)
_CAPITALISED_BEFORE_RE = re.compile(r"(?<![\w'’-])([A-Z][\w'’-]*)[ \u00a0]+$")
_IDENT_HYPHEN_BEFORE_RE = re.compile(r"[A-Za-z]-$")
_YEAR_RANGE_BEFORE_RE = re.compile(r"(?<!\d)(?:1[89]|20|21)\d\d[-–/]$")
_DATE_TIME_RE = re.compile(
    r"(?<!\d)(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4}|\d{1,2}:\d{2}(?::\d{2})?)(?!\d)"
    r"|\((?:c\.\s*|b\.\s*|d\.\s*)?\d{3,4}\s*[–—-]\s*(?:c\.\s*)?(?:\d{3,4})?\s*\)"  # life spans "(795–855)"
)
#: a bare 3- or 4-digit integer after one of these is a year ("in 931", "died after 938", "c. 1200")
_YEAR_CONTEXT_BEFORE_RE = re.compile(
    r"(?:\b(?:died|born|[bd]\.)\s+(?:after|before|about|around|circa|ca?\.)|"
    r"\b(?:in|since|until|till|circa|died|born|ca?\.|[bd]\.|AD|A\.D\.))\s*$",
    re.IGNORECASE,
)
_YEAR_ERA_AFTER_RE = re.compile(r"\s*(?:BC|BCE|AD|CE|B\.C\.|A\.D\.)(?![A-Za-z])")

_PERCENT_RE = re.compile(r"[ \u00a0]?%|[ \u00a0]+(?:percent|per\s+cent|pct)\b(?!age)", re.IGNORECASE)
_PERCENT_POINT_RE = re.compile(r"[ \u00a0]+percentage[ \u00a0]+points?\b", re.IGNORECASE)
_BASIS_POINT_RE = re.compile(r"[ \u00a0]*(?:bps?\b|[ \u00a0]basis[ \u00a0]+points?\b)", re.IGNORECASE)
_SCALE_WORD_RE = re.compile(r"[ \u00a0]*(thousand|million|billion|trillion)s?\b", re.IGNORECASE)
_SCALE_ATTACHED_RE = re.compile(r"(mln|bln|mn|bn|tn|k|K|m|M|B)(?![A-Za-z0-9])")
_SCALE_SPACED_RE = re.compile(r"[ \u00a0](mln|bln|mn|bn|tn|k|K|m|M|B)(?![A-Za-z0-9])")
_CURRENCY_RIGHT_RE = re.compile(
    r"[ \u00a0]*(?:(" + "|".join(_CODES) + r")(?![A-Za-z])|(u\.s\.\s+dollars|us\s+dollars|dollars?|euros?|"
    r"pounds\s+sterling|sterling|yen)\b)",
    re.IGNORECASE,
)
_WORD_AFTER_RE = re.compile(r"[ \u00a0]+([a-z]+(?:-[a-z]+)*)(?![\w'’])")
_HYPHEN_UNIT_RE = re.compile(r"-([a-z]+)\b")
_LIST_MARKER_RE = re.compile(r"[.)][ \t]")
_RANGE_GAP_RE = re.compile(r"^\s*(?:-|–|—|to|and)\s*$", re.IGNORECASE)
_CLAUSE_BOUNDARY_RE = re.compile(r"[.;:!?\n]")


@dataclass
class _Match:
    """One amount being assembled by the scanner (mutable until it becomes a :class:`Quantity`)."""

    start: int  # start of ``raw`` in the text
    end: int  # end of ``raw`` in the text
    number: Decimal  # the stated number, sign applied
    scale: int | None  # explicit scale, if written
    currency: str | None  # explicit currency, if written
    percent: str | None  # "%", "pp" or "bp" when it is a percentage / point change
    unit: str | None  # counted noun
    total_after: bool  # followed by "in total" and the like


def is_total_label(label: str | None) -> bool:
    """True when a row label or column header names a total ("Total", "Subtotal", "Grand total", "Five-year total")."""
    return bool(label) and _TOTAL_LABEL_RE.search(label or "") is not None


def _clean_decimal(value: Decimal) -> Decimal:
    """``value`` without trailing zeros or exponent noise: 1200000.0 -> 1200000, 12.50 -> 12.5."""
    if value == value.to_integral_value():
        return Decimal(int(value))
    return value.normalize()


def _currency_of_word(word: str) -> str | None:
    """The currency code a currency word or code stands for ("dollars" -> USD, "eur" -> EUR), else None."""
    w = " ".join(word.lower().split())
    if w.upper() in _CODES:
        return w.upper()
    return _WORD_CURRENCY.get(w)


def _masked_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of dates and times written with digits only (ISO dates, d/m/y, clock times)."""
    return [(m.start(), m.end()) for m in _DATE_TIME_RE.finditer(text)]


def _counted_noun(text: str, pos: int) -> str | None:
    """The counted noun after a bare number ending at ``pos``: the last word of the following run of plain
    lowercase words (at most four), or None when the next word is not such a word."""
    hyphen = _HYPHEN_UNIT_RE.match(text, pos)
    if hyphen:
        return hyphen.group(1)
    last: str | None = None
    for _ in range(4):
        m = _WORD_AFTER_RE.match(text, pos)
        if not m:
            break
        word = m.group(1)
        if word in _STOPWORDS or (len(word) > 4 and (word.endswith("ing") or word.endswith("ed"))):
            break
        last = word
        pos = m.end()
    return last


def _scan(text: str) -> list[_Match]:
    """All amounts of ``text`` in order, before defaults, ranges and totals are applied."""
    masked = _masked_ranges(text)
    out: list[_Match] = []
    for m in _NUMBER_RE.finditer(text):
        s, e = m.start(), m.end()
        digits = m.group(0)
        if digits.count(".") > 1:
            continue  # "1.1.2": a section or version number
        if any(a <= s < b for a, b in masked):
            continue
        before = text[max(0, s - 40) : s]
        if s > 0 and (text[s - 1].isalpha() or text[s - 1] in "_#"):
            continue  # Q3, FY2025, P25, #3
        if _IDENT_HYPHEN_BEFORE_RE.search(before):
            continue  # K-9, COVID-19
        if len(digits) == 2 and _YEAR_RANGE_BEFORE_RE.search(before):
            continue  # 2020-21
        if e < len(text) and text[e] in "_":
            continue

        # --- left side: sign, parenthesis, currency --------------------------------------------------
        j = s
        negative = False
        paren_open: int | None = None
        if j > 0 and text[j - 1] in "-−" and not (j > 1 and (text[j - 2].isalnum() or text[j - 2] in "%)")):
            negative, j = True, j - 1
        if j > 0 and text[j - 1] == "(":
            paren_open, j = j - 1, j - 1
        currency: str | None = None
        cm = _CURRENCY_LEFT_RE.search(text, max(0, j - 5), j)
        if cm:
            currency = _SYMBOL_CURRENCY.get(cm.group(0).strip(" \u00a0")) or cm.group(0).strip(" \u00a0")
            j = cm.start()
            if paren_open is None and j > 0 and text[j - 1] == "(":
                paren_open, j = j - 1, j - 1
            if not negative and j > 0 and text[j - 1] in "-−" and not (
                j > 1 and (text[j - 2].isalnum() or text[j - 2] in "%)")
            ):
                negative, j = True, j - 1
        nw = _NEGATIVE_WORD_RE.search(text, max(0, j - 12), j)
        if nw:
            negative, j = True, nw.start()

        # --- right side: closing parenthesis, percent, scale, currency, unit --------------------------
        k = e
        start = j
        if paren_open is not None:
            if k < len(text) and text[k] == ")":
                negative, k = True, k + 1  # accounting negative: (150), ($150), $(150)
            elif start == paren_open:
                start = paren_open + 1  # a parenthetical such as "($140 thousand)": not part of the amount
        percent: str | None = None
        scale: int | None = None
        single_letter = False  # "5M", "10K": a scale only if the number is not an identifier ("Apartment 5B")
        unit: str | None = None
        pm = _PERCENT_POINT_RE.match(text, k) or None
        if pm:
            percent, k = "pp", pm.end()
        else:
            pm = _PERCENT_RE.match(text, k)
            if pm:
                percent, k = "%", pm.end()
            else:
                bm = _BASIS_POINT_RE.match(text, k)
                if bm and currency is None:
                    percent, k = "bp", bm.end()
        if percent is None:
            sw = _SCALE_WORD_RE.match(text, k)
            if sw:
                scale, k = _SCALE_WORDS[sw.group(1).lower()], sw.end()
            else:
                sa = _SCALE_ATTACHED_RE.match(text, k)
                if sa and (sa.group(1) != "m" or currency is not None):
                    scale, k = _SCALE_ABBREV[sa.group(1)], sa.end()
                    single_letter = len(sa.group(1)) == 1
                elif currency is not None:
                    ss = _SCALE_SPACED_RE.match(text, k)
                    if ss:
                        scale, k = _SCALE_ABBREV[ss.group(1)], ss.end()
            if currency is None:
                cr = _CURRENCY_RIGHT_RE.match(text, k)
                if cr:
                    currency = _currency_of_word(cr.group(1) or cr.group(2))
                    k = cr.end()
        if percent is None and scale is None and e < len(text) and text[e].isalpha() and k == e:
            continue  # 3rd, 1990s, 4x, 100m (of track)

        if single_letter and currency is None:
            cap = _CAPITALISED_BEFORE_RE.search(text, max(0, start - 40), start)
            if _REFERENCE_BEFORE_RE.search(text, max(0, start - 16), start) or (
                cap and cap.group(1).lower() not in _NOT_IDENTIFIER_WORDS
            ):
                continue  # Apartment 5B, Form 10K, Table 3M
        money_or_scaled = currency is not None or scale is not None or percent is not None
        if not money_or_scaled:
            if _MONTH_BEFORE_RE.search(before) or _MONTH_AFTER_RE.match(text, e):
                continue  # June 11 | 11 November
            if _REFERENCE_BEFORE_RE.search(text, max(0, start - 16), start):
                continue  # Section 2.1, Table 3, page 4
            cap = _CAPITALISED_BEFORE_RE.search(text, max(0, start - 40), start)
            if cap and cap.group(1).lower() not in _NOT_IDENTIFIER_WORDS:
                continue  # Station 3, Engine 3
            if "," not in digits and "." not in digits and not negative:
                if len(digits) == 4 and 1800 <= int(digits) <= 2100:
                    continue  # a year
                if 3 <= len(digits) <= 4 and int(digits) <= 2100 and k == e and _counted_noun(text, k) is None:
                    if _YEAR_CONTEXT_BEFORE_RE.search(text, max(0, start - 12), start) or _YEAR_ERA_AFTER_RE.match(
                        text, e
                    ):
                        continue  # "in 931", "died 875", "c. 1200", "44 BC" is two digits and stays
            if _LIST_MARKER_RE.match(text, e) and not text[text.rfind("\n", 0, start) + 1 : start].strip():
                continue  # "1. Replace two patrol vehicles": a list marker
            if k == e:
                unit = _counted_noun(text, k)
        elif _REFERENCE_BEFORE_RE.search(text, max(0, start - 16), start) and percent is None and scale is None:
            continue
        elif scale is not None and currency is None and percent is None:
            unit = _counted_noun(text, k)  # "1.2 million employees"

        number = Decimal(digits.replace(",", ""))
        out.append(
            _Match(
                start=start,
                end=k,
                number=-number if negative else number,
                scale=scale,
                currency=currency,
                percent=percent,
                unit=unit,
                total_after=_TOTAL_AFTER_RE.match(text, k) is not None,
            )
        )
    return out


def _apply_ranges(text: str, matches: list[_Match]) -> None:
    """A bare first number of a range takes the scale, currency and percent of the second ("$136-141 million")."""
    for a, b in zip(matches, matches[1:], strict=False):
        if a.percent is not None or a.scale is not None or a.unit is not None:
            continue
        if not _RANGE_GAP_RE.match(text[a.end : b.start]):
            continue
        if b.percent is not None and a.currency is None:
            a.percent = b.percent
        elif b.percent is None and (b.scale is not None or b.currency is not None):
            a.scale = b.scale
            if a.currency is None:
                a.currency = b.currency
            elif b.currency is None:
                b.currency = a.currency


def parse_quantities(
    text: str,
    *,
    section_id: str | None = None,
    default_scale: int = 1,
    default_currency: str | None = None,
    label: str | None = None,
) -> list[Quantity]:
    """Every amount stated in ``text``, in order of appearance (see the module docstring for the rules).

    ``default_scale`` and ``default_currency`` apply to numbers that state neither a scale, a currency, a
    percent nor a counted noun (a table cell "1,320" under "in thousands of dollars" -> 1320000, scale 1000,
    USD); a number with an explicit currency but no scale takes ``default_scale`` too ("$1,320" in such a
    table). ``label`` is copied to each quantity and marks them all as totals when it names a total.
    """
    if not text:
        return []
    matches = _scan(text)
    _apply_ranges(text, matches)
    label_total = is_total_label(label)
    out: list[Quantity] = []
    prev_end = 0
    for m in matches:
        unit: str | None
        currency: str | None = None
        if m.percent is not None:
            scale, unit = 1, m.percent
        elif m.unit is not None:
            scale, unit = (m.scale or 1), m.unit
            currency = m.currency
        else:
            scale = m.scale if m.scale is not None else default_scale
            currency = m.currency if m.currency is not None else default_currency
            unit = currency
        window_start = max(prev_end, m.start - 80)
        window = text[window_start : m.start]
        boundary = None
        for boundary in _CLAUSE_BOUNDARY_RE.finditer(window):
            pass
        if boundary is not None:
            window = window[boundary.end() :]
        total = label_total or m.total_after or _TOTAL_BEFORE_RE.search(window) is not None
        out.append(
            Quantity(
                value=_clean_decimal(m.number * scale),
                unit=unit,
                scale=scale,
                currency=currency,
                raw=text[m.start : m.end],
                label=label,
                section_id=section_id,
                is_total=total,
            )
        )
        prev_end = m.end
    return out


# --------------------------------------------------------------------------------------------------
# Scale statements ("all tables are in thousands of dollars")
# --------------------------------------------------------------------------------------------------

_CUR_SYMBOLS_RE = r"(?:US\$|C\$|A\$|\$|€|£|¥|₹)"
_CUR_CODES_RE = r"(?:" + "|".join(_CODES) + r")"
_SCALE_PLURAL_RE = r"(?:thousands|millions|billions|trillions)"
_SCALE_ANY_RE = r"(?:thousands?|millions?|billions?|trillions?)"

_DETECT_IN_RE = re.compile(
    r"(?:\bin|\()\s*(?:(?P<cur>" + _CUR_SYMBOLS_RE + r"|\b" + _CUR_CODES_RE + r"\b)\s*)?(?P<scale>" + _SCALE_ANY_RE
    + r")\b(?:\s+of\s+(?P<of>(?:u\.s\.|us)\s+dollars|pounds\s+sterling|[A-Za-z]+))?(?:\s+(?P<after>"
    + _CUR_CODES_RE + r"|dollars|euros|yen)\b)?",
    re.IGNORECASE,
)
_DETECT_SYMBOL_RE = re.compile(
    r"(?<![\w.,])(?P<cur>" + _CUR_SYMBOLS_RE + r"|(?<![A-Za-z])" + _CUR_CODES_RE + r")\s*(?P<scale>"
    + _SCALE_PLURAL_RE + r"|'?000'?s?|mln|bln|mn|bn|m|k)(?![\w'])",
    re.IGNORECASE,
)
_DETECT_WORD_IN_RE = re.compile(
    r"\b(?P<cur>dollars|euros|pounds|" + _CUR_CODES_RE + r")\s+in\s+(?P<scale>" + _SCALE_PLURAL_RE + r")\b",
    re.IGNORECASE,
)
_DETECT_THOUSANDS_RE = re.compile(r"\(\s*'?000'?s?\s*\)")


def _scale_value(word: str) -> int:
    """10**3 for "thousands"/"000s"/"k", 10**6 for "millions"/"m"/"mn", and so on."""
    w = word.lower().strip("'")
    if w.startswith("000") or w.startswith("thousand") or w == "k":
        return 10**3
    if w.startswith("million") or w in {"m", "mn", "mln"}:
        return 10**6
    if w.startswith("billion") or w in {"bn", "bln", "b"}:
        return 10**9
    return 10**12


def _currency_of(token: str | None) -> str | None:
    """The currency code of a symbol, code or word found by :func:`detect_scale` (None for None)."""
    if not token:
        return None
    t = token.strip()
    return _SYMBOL_CURRENCY.get(t) or _currency_of_word(t)


def detect_scale(text: str) -> tuple[int, str | None] | None:
    """The scale (and currency) a statement declares for the figures around it, or None.

    Recognised forms include "all tables are in thousands of dollars" -> (1000, "USD"), "(in thousands)" ->
    (1000, None), "($000s)" -> (1000, "USD"), "in millions of USD" -> (1000000, "USD"), "$ thousands",
    "(USD millions)", "€m" -> (1000000, "EUR"), "Dollars in thousands", "in EUR million", "(000s)". An
    "in thousands of <something>" whose something is not a currency ("in thousands of homes") is not a
    scale statement. When several statements occur, the first one wins.
    """
    if not text:
        return None
    found: list[tuple[int, int, str | None]] = []
    for m in _DETECT_IN_RE.finditer(text):
        scale_word = m.group("scale")
        of = m.group("of")
        of_currency = _currency_of(of) if of else None
        if of and of_currency is None:
            continue  # "in thousands of homes"
        currency = _currency_of(m.group("cur")) or of_currency or _currency_of(m.group("after"))
        if not scale_word.lower().endswith("s") and currency is None:
            continue  # "in million" alone is not a statement
        found.append((m.start(), _scale_value(scale_word), currency))
        break
    for m in _DETECT_SYMBOL_RE.finditer(text):
        found.append((m.start(), _scale_value(m.group("scale")), _currency_of(m.group("cur"))))
        break
    for m in _DETECT_WORD_IN_RE.finditer(text):
        found.append((m.start(), _scale_value(m.group("scale")), _currency_of(m.group("cur"))))
        break
    for m in _DETECT_THOUSANDS_RE.finditer(text):
        found.append((m.start(), 10**3, None))
        break
    if not found:
        return None
    _, scale, currency = min(found, key=lambda f: f[0])
    return scale, currency


# --------------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------------

_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}


_SCALE_NAMES = {10**3: "thousand", 10**6: "million", 10**9: "billion", 10**12: "trillion"}


def render_amount(value: Decimal, unit: str | None = None, currency: str | None = None, scale: int = 1) -> str:
    """An exact amount as text: "$2,820,000", "12.5%", "1,840 employees", "-2.5 percentage points", "2,805";
    with a ``scale`` (the scale its operands were written in), in that scale when that is exact: "$2,820
    thousand", "$9.3 million"."""
    word = ""
    if scale in _SCALE_NAMES and (value / scale) == (value / scale).quantize(Decimal("0.001")):
        value, word = value / scale, f" {_SCALE_NAMES[scale]}"
    v = _clean_decimal(value)
    text = f"{v:,f}"
    code = currency or (unit if unit in _SYMBOLS else None)
    if code in _SYMBOLS:
        return (f"-{_SYMBOLS[code]}{text[1:]}" if text.startswith("-") else f"{_SYMBOLS[code]}{text}") + word
    if code:
        return f"{code} {text}{word}"
    if word:
        text += word
    if unit == "%":
        return f"{text}%"
    if unit == "pp":
        return f"{text} percentage points"
    if unit == "bp":
        return f"{text} basis points"
    return f"{text} {unit}" if unit else text

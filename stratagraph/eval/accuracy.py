"""Accuracy of an answer against accepted answers, the headline metric of ``eval qa`` (issue 20).

An answer is *correct* when

* it is short: a span, a number or one sentence of at most :data:`MAX_WORDS` words, and
* it contains an accepted answer: every number of the accepted answer is stated in it as the same number
  (thousands separators, currency signs, scale words and percent signs understood: "$2.98 million",
  "2,980 thousand" and "$2,980,000" are one amount; a bare "2,980" is the number 2,980), and its words
  appear in it in order after SQuAD's normalisation (lower case, punctuation and articles dropped).

A question without accepted answers (unanswerable) is answered correctly by ``found: false`` only; any
question marked not found is otherwise wrong.

The parser here is deliberately separate from the one the reader answers with (``stratagraph/reading/``):
a judge that shared the code it judges would share its mistakes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

__all__ = ["MAX_WORDS", "accurate", "amounts", "contains"]

#: the longest answer that still counts as "one sentence"
MAX_WORDS = 40

_SCALES = {"thousand": 10**3, "k": 10**3, "million": 10**6, "m": 10**6, "mn": 10**6, "billion": 10**9,
           "bn": 10**9, "b": 10**9, "trillion": 10**12}  # fmt: skip
_NUMBER = re.compile(
    r"(?<![\w.])(?P<neg>[-−(])?\s?[$€£¥]?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|mn|bn|k|m|b)\b)?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def amounts(text: str) -> list[tuple[Decimal, Decimal]]:
    """The numbers a text states, each as (value with its scale applied, value as written)."""
    out = []
    for m in _NUMBER.finditer(text):
        try:
            written = Decimal(m.group("num").replace(",", ""))
        except InvalidOperation:
            continue
        scale = _SCALES.get((m.group("scale") or "").lower(), 1)
        sign = -1 if m.group("neg") in ("-", "−") else 1
        out.append((sign * written * scale, sign * written))
    return out


def _words(text: str) -> list[str]:
    low = _NUMBER.sub(" ", text.lower())
    return [w for w in _WORD.findall(low) if w not in ("a", "an", "the")]


def _in_order(needle: Sequence[str], hay: Sequence[str]) -> bool:
    n = len(needle)
    return n == 0 or any(list(hay[i : i + n]) == list(needle) for i in range(len(hay) - n + 1))


_SCALE_WORDS = frozenset(_SCALES) | {"percent", "per", "cent", "dollars", "dollar", "usd", "eur", "euros", "euro"}


def contains(prediction: str, accepted: str) -> bool:
    """Whether ``prediction`` contains ``accepted`` (module docstring): its numbers, and its other words in
    order."""
    want_numbers = amounts(accepted)
    have = amounts(prediction)
    for scaled, written in want_numbers:
        has_scale = scaled != written
        if not any(h_scaled == scaled or (not has_scale and abs(h_written) == abs(written)) or h_written == scaled
                   for h_scaled, h_written in have):  # fmt: skip
            return False
    words = [w for w in _words(accepted) if not (want_numbers and w in _SCALE_WORDS)]
    if not words:
        return bool(want_numbers)
    return _in_order(words, [w for w in _words(prediction)])


def accurate(prediction: str, found: bool, answers: Sequence[str]) -> bool:
    """Whether an answer is correct (module docstring)."""
    if not answers:
        return not found
    if not found or len(prediction.split()) > MAX_WORDS:
        return False
    return any(contains(prediction, a) for a in answers if a.strip())

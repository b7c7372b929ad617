"""The Porter stemmer as SQLite's FTS5 ``porter`` tokenizer applies it, so the lexical index ranks as FTS5 did.

Martin Porter's algorithm (1980) in the form of his reference C implementation, which departs from the paper
in two rules of step 2 (``bli -> ble`` in place of ``abli -> able``, and the added ``logi -> log``); in each
step the first suffix that matches is the one tried, and when its measure condition fails the word is left
as it is; a suffix must leave at least one letter before it. Like FTS5, a token is stemmed only when its
UTF-8 form is 3 to 64 bytes long, and it is stemmed byte by byte: a non-ASCII character counts as consonants
(only ASCII suffixes are ever removed). Checked against SQLite's own tokenizer on the 53,480 distinct words
of the three benchmark corpora: two differ ("ies", and a Cherokee word that FTS5 does not case-fold).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

MIN_BYTES, MAX_BYTES = 3, 64
_VOWELS = frozenset("aeiou")


def _cons(w: str, i: int) -> bool:
    """Whether ``w[i]`` is a consonant: not a, e, i, o, u, and not a y that follows a consonant."""
    ch = w[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]."""
    m, i, n = 0, 0, len(stem)
    while i < n and _cons(stem, i):
        i += 1
    while i < n:
        while i < n and not _cons(stem, i):
            i += 1
        if i >= n:
            break
        while i < n and _cons(stem, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double_consonant(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """consonant-vowel-consonant at the end, the last consonant not w, x or y (*o)."""
    n = len(w)
    return n >= 3 and _cons(w, n - 3) and not _cons(w, n - 2) and _cons(w, n - 1) and w[-1] not in "wxy"


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
    ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti",
    "ous", "ive", "ize",
)  # fmt: skip


def _first_match(w: str, rules: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """Porter's C code tries a step's suffixes grouped by their penultimate letter, longest first within a
    group; matching by end of word in list order, preferring the longest, gives the same choice."""
    found = [r for r in rules if w.endswith(r[0])]
    return max(found, key=lambda r: len(r[0])) if found else None


def _step2_3(w: str, rules: tuple[tuple[str, str], ...]) -> str:
    rule = _first_match(w, rules)
    if rule is None:
        return w
    stem = w[: len(w) - len(rule[0])]
    return stem + rule[1] if _measure(stem) > 0 else w


def _step4(w: str) -> str:
    found = [s for s in _STEP4 if w.endswith(s)]
    if not found:
        return w
    suffix = max(found, key=len)
    stem = w[: len(w) - len(suffix)]
    if suffix == "ion" and not (stem and stem[-1] in "st"):
        return w
    return stem if _measure(stem) > 1 else w


def _stem_ascii(w: str) -> str:
    # step 1a (as everywhere in FTS5's rules, a suffix must leave something before it)
    if w.endswith("sses") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 3:
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    # step 1b
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    else:
        removed = False
        for suffix in ("ed", "ing"):
            if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
                w, removed = w[: -len(suffix)], True
                break
        if removed:
            if w.endswith(("at", "bl", "iz")):
                w += "e"
            elif _double_consonant(w) and w[-1] not in "lsz":
                w = w[:-1]
            elif _measure(w) == 1 and _cvc(w):
                w += "e"
    # step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _step2_3(w, _STEP2)
    w = _step2_3(w, _STEP3)
    w = _step4(w)
    # step 5
    if w.endswith("e"):
        m = _measure(w[:-1])
        if m > 1 or (m == 1 and not _cvc(w[:-1])):
            w = w[:-1]
    if _measure(w) > 1 and _double_consonant(w) and w.endswith("l"):
        w = w[:-1]
    return w


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """The stem of a lower-cased token (as FTS5's porter tokenizer: byte length 3-64, bytes over 127 are
    consonants)."""
    raw = token.encode("utf-8")
    if not MIN_BYTES <= len(raw) <= MAX_BYTES:
        return token
    if token.isascii():
        return _stem_ascii(token)
    return _stem_ascii(raw.decode("latin-1")).encode("latin-1").decode("utf-8")

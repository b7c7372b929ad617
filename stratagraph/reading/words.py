"""The one way the reader matches words: a word's *forms* are its Porter stem (the lexical index's stemmer),
the stem of the verb behind an agent noun ("director" -> direct, "founder" -> found) and of a nominalisation
the lemmatiser leaves alone ("birth" -> bear, "payment" -> pay, "storage" -> store); two words match when
their forms meet. A text's *content* is its words that are neither stop words, punctuation, question words nor
numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from stratagraph.text.lexicon import IRREGULAR_VERBS, QUESTION_WORDS, RATE_ADJECTIVES
from stratagraph.retrieval.porter import stem

__all__ = ["content_forms", "forms", "holds", "is_stop", "matches", "share", "word_forms"]

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s\b|(?<=s)['’](?=\s|$)")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    # ordinals are stop words to spaCy but tell quarters, years and items apart
    return frozenset(STOP_WORDS) - frozenset("first second third fourth fifth last".split())


def is_stop(word: str) -> bool:
    """A stop word or a question word (lower case)."""
    return word in _stop_words() or word in QUESTION_WORDS


@lru_cache(maxsize=65536)
def forms(word: str) -> frozenset[str]:
    """The stems a word (a lemma, lower case) is matched by (module docstring)."""
    w = word.lower()
    out = {stem(w)}
    singular = w[:-2] if w.endswith(("ses", "xes", "ches", "shes")) else w[:-1] if w.endswith("s") and len(w) > 3 and not w.endswith("ss") else w
    out.add(stem(singular))  # "buses" / "bus": Porter gives them different stems
    for v in (w, singular):
        if v in IRREGULAR_VERBS:
            out.add(stem(IRREGULAR_VERBS[v]))
    if w in RATE_ADJECTIVES:  # "monthly" is "per month"
        out.add(stem(RATE_ADJECTIVES[w]))
    if len(w) > 5 and w.endswith(("er", "or")):  # an agent noun: director -> direct, founder -> found
        out.add(stem(w[:-2]))
    if len(w) > 6 and w.endswith("tion"):  # a nominalisation: completion -> complet(e)
        out.add(stem(w[:-3] + "e"))
    if len(w) > 8 and w.endswith("tention"):  # of a -tain verb: retention -> retain, detention -> detain
        out.add(stem(w[:-7] + "tain"))
    if len(w) > 6 and w.endswith("ment"):  # payment -> pay, shipment -> ship
        out.add(stem(w[:-4]))
    if len(w) > 6 and w.endswith("age"):  # storage -> store, leakage -> leak
        out.update((stem(w[:-3]), stem(w[:-3] + "e")))
    return frozenset(out)


def matches(a: str, b: str) -> bool:
    """Whether two words match (their forms meet)."""
    return bool(forms(a) & forms(b))


@lru_cache(maxsize=16384)
def word_forms(text: str) -> frozenset[str]:
    """Every form of every word of a text (stop words included: a heading may be "Operations and People")."""
    words = _WORD.findall(_POSSESSIVE.sub("", text.lower()))
    parts = [p for w in words if "-" in w for p in w.split("-") if p]  # "five-year" holds "year" too
    return frozenset(f for w in [*words, *parts] for f in forms(w))


@lru_cache(maxsize=16384)
def content_forms(text: str) -> tuple[frozenset[str], ...]:
    """The content words of a text, each as its forms (stop words, question words and numbers left out)."""
    out = []
    for w in _WORD.findall(_POSSESSIVE.sub("", text.lower())):
        if is_stop(w) or not any(ch.isalpha() for ch in w):
            continue
        out.append(forms(w))
    return tuple(dict.fromkeys(out))


def holds(words: Iterable[frozenset[str]], available: frozenset[str]) -> list[frozenset[str]]:
    """The words (each as its forms) that ``available`` (a set of forms) holds."""
    return [w for w in words if w & available]


def share(words: Iterable[frozenset[str]], available: frozenset[str], weights: Iterable[float] | None = None) -> float:
    """The (weighted) share of ``words`` that ``available`` holds."""
    ws = list(words)
    wt = list(weights) if weights is not None else [1.0] * len(ws)
    total = sum(wt)
    return sum(x for w, x in zip(ws, wt, strict=True) if w & available) / total if total else 0.0

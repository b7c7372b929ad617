"""Text addressed to a model: the cues by which a passage of a document speaks to the model that reads it
(prompt injection) instead of to its human reader. General classes of wording, from the word lists in
:mod:`stratagraph.text.lexicon`, never phrases of some attack corpus:

* ``override``: a verb that drops instructions ("ignore all previous instructions", "disregard your rules");
* ``role``: a new role or a rule for every later answer ("you are now", "from now on", "answer every question
  with ...");
* ``secret``: asks for what a model keeps to itself ("reveal your system prompt");
* ``tool``: a command to call a tool or run a query ("call the read_cypher tool", "run this query");
* ``address``: hails the model ("Note to the AI:", "If you are an LLM", "Assistant,");
* ``store write``: a statement that writes to a graph or database ("MATCH (n) DETACH DELETE n").

:func:`model_cues` lists the cues a text carries; the workflows' trace flags each passage with any (the
``flags`` of a :class:`~stratagraph.answers.TraceEntry`). A flag is a warning, not a verdict: a security manual
quoting an attack is flagged too, and a paraphrased attack can pass.
"""

from __future__ import annotations

import re
from functools import lru_cache

from stratagraph.text.lexicon import (
    MODEL_ADDRESS,
    MODEL_COMMANDS,
    MODEL_NOUNS,
    MODEL_OVERRIDES,
    PRIOR_WORDS,
    RULE_NOUNS,
    SECRET_NOUNS,
    STORE_WRITES,
    TOOL_NOUNS,
    TOOL_VERBS,
)

__all__ = ["model_cues"]


def _alt(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)) + ")"


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    prior = rf"(?:{_alt(PRIOR_WORDS)}\s+){{0,4}}"
    model = _alt(MODEL_NOUNS)
    return (
        ("override", re.compile(rf"\b{_alt(MODEL_OVERRIDES)}\s+{prior}{_alt(RULE_NOUNS)}\b", re.I)),
        ("role", re.compile(rf"(?<!\w){_alt(MODEL_COMMANDS)}(?!\w)", re.I)),
        ("secret", re.compile(rf"\b(?:reveal|show|print|repeat|output|leak|share|tell\s+me|what\s+is)\s+(?:me\s+)?"
                              rf"(?:the\s+|your\s+)?{_alt(SECRET_NOUNS)}\b", re.I)),  # fmt: skip
        ("tool", re.compile(rf"\b{_alt(TOOL_VERBS)}\s+(?:the\s+|this\s+|a\s+|your\s+)?(?:\w+\s+)?{_alt(TOOL_NOUNS)}\b"
                            rf"(?=[^.\n]*(?:\bwith\b|:|`|\(|\bnow\b|\bimmediately\b))", re.I)),  # fmt: skip
        ("address", re.compile(rf"(?:\b{_alt(MODEL_ADDRESS)}\s+(?:the\s+|an?\s+|any\s+)?{model}\b"
                               rf"|^\s*{model}\s*[:,]|\b(?:you|as\s+an?)\s+{model}\s*[,:]?\s+(?:must|should|will|reading))",
                               re.I | re.M)),  # fmt: skip
        ("store write", re.compile(rf"{_alt(STORE_WRITES)}", re.I)),
    )


def model_cues(text: str) -> list[str]:
    """The cues by which ``text`` addresses a model, as ``"kind: 'matched words'"``, in order of kind; empty for
    ordinary prose."""
    out: list[str] = []
    for kind, pattern in _patterns():
        m = pattern.search(text)
        if m:
            out.append(f"{kind}: {' '.join(m.group(0).split())!r}")
    return out

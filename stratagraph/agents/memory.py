"""KAG's global memory (KAG §2.3, Alg. 1 lines 9 and 11: ``history.append([lf_subquery, retrievals_sub,
answer_sub])``, ``memory <- Memory(query, history)``): what every executed logical-form step bound, kept
across the reflection rounds.

* :class:`Binding`: a variable's value, typed: a span of an entity (``text``, with the answer type it was
  read as), one or more cited amounts (``number``, ``set``), a computation made in code (``computed``), or a
  whole reading of the question (``answer``: any kind); whether it was found;
* :class:`MemoryEntry`: one line of the memory as the judge, the reflector and the trace read it;
* :func:`merge_bindings`: the state reducer: a later round's binding replaces an earlier one only when it is
  found, or the earlier one was not (a supplementary question that finds nothing never erases an answer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from stratagraph.answers import AnswerKind, Citation, Computation
from stratagraph.reading.arithmetic import Figure

__all__ = ["Binding", "MemoryEntry", "bind", "memory_text", "merge_bindings"]

Kind = Literal["text", "number", "set", "computed", "answer", "none"]
_VAR = re.compile(r"\{(\w+)\}")


@dataclass
class Binding:
    """The value a logical-form step bound to its variable."""

    var: str
    kind: Kind = "none"
    found: bool = False
    text: str = ""  # the answer: a span of a cited chunk, or a computed result as text
    type: str = ""  # the answer type it was read as ("person", "number", ...)
    answer_kind: AnswerKind = "not_found"  # the reader's kind (span, sentence, computed, choice, section)
    citations: list[Citation] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    computation: Computation | None = None
    evidence: list[str] = field(default_factory=list)  # chunk ids the step read
    question: str = ""  # the sub-question, variables bound
    score: float = 0.0  # how well the cited evidence fits the sub-question (the reader's, 0..1)
    source: str = ""  # graph | hybrid | code | model
    note: str = ""


class MemoryEntry(BaseModel):
    """One executed step as the memory keeps it."""

    round: int
    var: str
    function: str  # the logical form
    question: str = ""
    answer: str = ""
    found: bool = False
    source: str = ""


def merge_bindings(old: Mapping[str, Binding] | None, new: Mapping[str, Binding] | None) -> dict[str, Binding]:
    """Reducer (module docstring)."""
    out = dict(old or {})
    for var, b in (new or {}).items():
        prev = out.get(var)
        if prev is None or b.found or not prev.found:
            out[var] = b
    return out


def bind(text: str, bindings: Mapping[str, Binding], phrases: Mapping[str, str] | None = None) -> str:
    """A sub-question with each ``{var}`` replaced by its bound answer, else (an unresolved hop) by the words of
    the reference it stands for (``phrases``: "the design team of the Skylark"), itself bound, else dropped."""

    def fill(t: str, depth: int) -> str:
        def value(m: re.Match[str]) -> str:
            b = bindings.get(m.group(1))
            if b is not None and b.found and b.kind in ("text", "answer"):
                return b.text
            phrase = (phrases or {}).get(m.group(1), "")
            return fill(phrase, depth + 1) if phrase and depth < 8 else ""

        return _VAR.sub(value, t)

    return re.sub(r"\s+([?,.!])", r"\1", re.sub(r"\s{2,}", " ", fill(text, 0))).strip()


def memory_text(memory: Sequence[MemoryEntry]) -> str:
    """The memory as the chat model reads it: one line per step, latest binding of each variable last."""
    lines = []
    for m in memory:
        what = m.answer if m.found else "not found"
        q = f" {m.question!r}" if m.question else ""
        lines.append(f"- round {m.round}, {m.function}{q}: {what}")
    return "\n".join(lines)

"""KAG's global memory (KAG §2.3, Alg. 1 lines 9 and 11: ``history.append([lf_subquery, retrievals_sub,
answer_sub])``, ``memory <- Memory(query, history)``): what every executed logical-form step bound, kept
across the reflection rounds.

* :class:`Binding`: a variable's value: a text span with its citations, one or more cited typed quantities, or
  a computation made in code, whether it was found, and whether it is *strong* (the retrieval covered what
  the step asked for: a quantity whose key terms are all covered, an extracted span whose sentence holds
  enough of the sub-question);
* :class:`MemoryEntry`: one line of the memory as the judge, the reflector and the trace read it;
* :func:`merge_bindings`: the state reducer: a later round's binding replaces an earlier one only when it
  is found, or the earlier one was not (a supplementary question that finds nothing never erases an
  answer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from stratagraph.agents.operands import Quantity
from stratagraph.answers import Citation, Computation

__all__ = ["Binding", "MemoryEntry", "bind", "memory_text", "merge_bindings"]

Kind = Literal["text", "amount", "amounts", "computed", "none"]
_VAR = re.compile(r"\{(\w+)\}")


@dataclass
class Binding:
    """The value a logical-form step bound to its variable."""

    var: str
    kind: Kind = "none"
    found: bool = False
    strong: bool = False
    text: str = ""  # the answer: a span of a cited chunk, or a computed result as text
    citations: list[Citation] = field(default_factory=list)
    quantities: list[Quantity] = field(default_factory=list)
    computation: Computation | None = None
    evidence: list[str] = field(default_factory=list)  # chunk ids the step read
    question: str = ""  # the sub-question, variables bound
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


def bind(text: str, bindings: Mapping[str, Binding]) -> str:
    """A sub-question with each ``{var}`` replaced by its bound answer (dropped when unbound)."""
    def value(m: re.Match[str]) -> str:
        b = bindings.get(m.group(1))
        return b.text if b is not None and b.found else ""

    return re.sub(r"\s{2,}", " ", _VAR.sub(value, text)).strip()


def memory_text(memory: Sequence[MemoryEntry]) -> str:
    """The memory as the chat model reads it: one line per step, latest binding of each variable last."""
    lines = []
    for m in memory:
        what = m.answer if m.found else "not found"
        q = f" {m.question!r}" if m.question else ""
        lines.append(f"- round {m.round}, {m.function}{q}: {what}")
    return "\n".join(lines)

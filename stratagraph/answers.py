"""The one answer every workflow returns (DESIGN.md "Answers"), and what it is made of.

* :class:`Citation`: where a statement comes from: document, source, section path, chunk, and ``quote``, a
  verbatim substring of the chunk's text (:meth:`Answer.check` proves it against the store).
* :class:`Computation`: arithmetic done in code (never by a model): the operation, every operand with its
  own citation, and the exact result.
* :class:`TraceEntry`: one node run: what it decided, the tools it called, how long it took, and whether it
  fell back from the chat model to its no-LLM policy (and why).
* :class:`Answer`: ``answer``, ``found`` (false when the evidence does not answer: the answer then says so and
  invents nothing), ``kind`` (what the answer is: a ``span`` of a cited sentence or row, the cited ``sentence``
  itself, a number ``computed`` in code, a ``choice`` between options (or yes / no) decided in code, a
  ``section`` heading, or ``not_found``), ``citations``, ``computed``, ``strategy``, ``trace``, ``usage``.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from typing import Literal

from pydantic import BaseModel, Field, field_serializer, model_validator

from stratagraph.llm import LLMUsage

__all__ = ["Answer", "AnswerKind", "Citation", "Computation", "NOT_FOUND", "Operand", "ToolCall", "TraceEntry"]

#: what an answer is (module docstring)
AnswerKind = Literal["span", "sentence", "computed", "choice", "section", "not_found"]

#: the answer text when the evidence does not answer the question
NOT_FOUND = "The documents do not answer this question."


class Citation(BaseModel):
    """A verbatim quote of one chunk, with where the chunk sits."""

    doc_id: str
    source: str
    section: str  # the heading path, "Title > 1 General Fund > 1.1 Public Safety"
    chunk_id: str
    quote: str

    def label(self) -> str:
        return f"{self.source} § {self.section}" if self.section else self.source


class Operand(BaseModel):
    """One number a computation used: what it is, its exact value, and where it is stated."""

    label: str
    value: Decimal
    unit: str | None = None
    raw: str = ""  # as written in the source ("1,170", "$18.6 million")
    citation: Citation

    @field_serializer("value")
    def _value(self, v: Decimal) -> str:
        return format(v, "f")


class Computation(BaseModel):
    """Arithmetic done exactly in code over cited operands."""

    operation: str  # sum, difference, ratio, percent_change, count, max, min, compare, ...
    expression: str  # "18,585 - 15,780"
    operands: list[Operand]
    result: Decimal | str  # a number, or the operand a comparison chose
    unit: str | None = None

    @field_serializer("result")
    def _result(self, v: Decimal | str) -> str:
        return format(v, "f") if isinstance(v, Decimal) else v


class ToolCall(BaseModel):
    """A tool or retrieval function a node called."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: str = ""  # a one-line summary of what came back


class TraceEntry(BaseModel):
    """One node run."""

    node: str
    decision: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    ms: float = 0.0
    llm: bool = False  # the node asked the chat model
    fallback: str | None = None  # why the node used its no-LLM policy although a chat model was configured
    flags: list[str] = Field(default_factory=list)  # passages that address the model (stratagraph/text/injection.py)


class Answer(BaseModel):
    """What every workflow returns (DESIGN.md "Answers")."""

    question: str = ""
    answer: str
    found: bool
    kind: AnswerKind | None = None  # filled from found / computed when not given
    citations: list[Citation] = Field(default_factory=list)
    computed: Computation | None = None
    strategy: str
    trace: list[TraceEntry] = Field(default_factory=list)
    usage: LLMUsage = Field(default_factory=LLMUsage)

    @model_validator(mode="after")
    def _kind(self) -> Answer:
        if not self.found:
            self.kind = "not_found"
        elif self.kind is None or self.kind == "not_found":
            self.kind = "computed" if self.computed is not None else "span"
        return self

    def check(self, chunk_text: Callable[[str], str | None]) -> list[str]:
        """Problems with the citations, given ``chunk_text(chunk_id)`` (None for an unknown chunk): every quote
        must be a verbatim substring of its chunk; a found answer must be cited; a computed answer must cite
        every operand; an answer that is not computed must be a span of a cited chunk, or of the heading of a
        cited chunk's section (a hierarchy question: "which section covers ...?")."""
        problems: list[str] = []
        cited = [*self.citations, *(o.citation for o in (self.computed.operands if self.computed else []))]
        for c in cited:
            text = chunk_text(c.chunk_id)
            if text is None:
                problems.append(f"citation of an unknown chunk {c.chunk_id}")
            elif c.quote not in text:
                problems.append(f"quote not in chunk {c.chunk_id}: {c.quote[:80]!r}")
        if self.found and not self.citations:
            problems.append("a found answer without citations")
        if self.found and self.computed is None:
            texts = [chunk_text(c.chunk_id) or "" for c in self.citations]
            headings = [h for c in self.citations for h in c.section.split(" > ")]
            if not any(self.answer in t for t in [*texts, *headings]):
                problems.append(f"the answer {self.answer!r} is not a span or section heading of a cited chunk")
        return problems

    def render(self) -> str:
        """The answer with numbered citations, as the CLI prints it."""
        lines = [self.answer if self.found else f"{self.answer} (not found)"]
        if self.computed is not None:
            shown = self.answer if self.found else self.computed._result(self.computed.result)  # the result as written
            lines.append(f"computed: {self.computed.expression} = {shown}")
        for i, c in enumerate(self.citations, start=1):
            lines.append(f"[{i}] {c.label()} ({c.chunk_id})\n    \"{c.quote}\"")
        return "\n".join(lines)

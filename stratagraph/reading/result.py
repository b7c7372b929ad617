"""What a reading step returns: an answer of one kind, with the citations that state it.

``kind`` is what the answer is (``Answer.kind`` carries it to the user):

* ``span``: a verbatim span of a cited sentence or table row, of the type the question asks for;
* ``sentence``: the cited sentence itself, when it answers the question but no single span of the type can
  be told apart in it (two numbers, no entity of the asked type);
* ``computed``: a number computed exactly in code from cited amounts (``computed`` holds the operands);
* ``choice``: one of the question's options, or yes / no, decided in code from cited values;
* ``section``: a heading of the documents ("which section ...");
* ``not_found``: the evidence does not say.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from stratagraph.answers import NOT_FOUND, Citation, Computation

__all__ = ["Kind", "Reading", "not_found"]

Kind = Literal["span", "sentence", "computed", "choice", "section", "not_found"]


class Reading(BaseModel):
    """An answer read from evidence (module docstring)."""

    kind: Kind
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    computed: Computation | None = None
    type: str = ""  # the answer type of the span ("person", "number"...)
    score: float = 0.0  # how well the cited evidence fits the question (0..1)
    reason: str = ""  # one line for the trace

    @property
    def found(self) -> bool:
        return self.kind != "not_found"


def not_found(reason: str) -> Reading:
    return Reading(kind="not_found", answer=NOT_FOUND, reason=reason)

"""The answering workflows as LangChain components: a ``StructuredTool`` an agent can call and a ``Runnable``
for LCEL chains (``StrataGraph.as_tool`` / ``StrataGraph.runnable``).

The tool takes ``{"question", "filters"?}`` and answers with the workflow's cited answer as text (the answer
and its numbered citations: what a model reads) and the full :class:`~stratagraph.answers.Answer` as the
``ToolMessage``'s artifact. The runnable takes a question (a string, or ``{"question", "filters"?, "k"?}``)
and returns the ``Answer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableLambda
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from stratagraph.answers import Answer  # noqa: TC001 - the tool function's annotations are read at run time
from stratagraph.workflows import ANSWERING, ask, workflow_name

if TYPE_CHECKING:
    from stratagraph.services import Services

__all__ = ["DESCRIPTIONS", "AskInput", "workflow_runnable", "workflow_tool"]

#: what each workflow is for, as a calling model reads it
DESCRIPTIONS: dict[str, str] = {
    "tqr": "Answer a multi-hop question about the documents (a chain of entities: 'the director of the film "
    "that ...') by thinking, querying and retrieving in turns (BiG-RAG).",
    "kag": "Answer a question that combines figures from the documents (a sum, a difference, a change, a "
    "ratio, a count, which is larger): the numbers are read from the documents and computed exactly, each "
    "operand cited (KAG's logical-form solver).",
    "bag": "Answer a question about a structured report: which section holds something, or figures summed "
    "and compared across its sections and tables (BAG-RAG's top-down screening and bottom-up aggregation).",
    "lesegr": "Answer a question about research papers and the work they cite or build on (CG-RAG's "
    "citation-graph retrieval).",
    "hybrid": "Answer a direct question from the documents, optionally restricted by metadata such as a "
    "company or a quarter (HybridRAG: vector and graph context).",
}


class AskInput(BaseModel):
    """The tool's arguments."""

    question: str = Field(description="the question, complete on its own")
    filters: dict[str, str] | None = Field(
        default=None, description="document metadata to restrict the search to, e.g. {\"quarter\": \"Q3\"}"
    )


def _answering(name: str) -> str:
    short = workflow_name(name)
    if short not in ANSWERING:
        raise ValueError(f"{name!r} does not answer questions; choose from {', '.join(ANSWERING)}")
    return short


def workflow_tool(svc: Services, name: str, description: str | None = None) -> StructuredTool:
    """The workflow ``name`` as a tool named ``ask_<name>`` (module docstring)."""
    short = _answering(name)

    def run(question: str, filters: dict[str, str] | None = None) -> tuple[str, Answer]:
        answer = ask(svc, short, question, dict(filters) if filters else None)
        return answer.render(), answer

    return StructuredTool.from_function(
        func=run,
        name=f"ask_{short}",
        description=description or DESCRIPTIONS[short],
        args_schema=AskInput,
        response_format="content_and_artifact",
    )


def workflow_runnable(svc: Services, name: str) -> RunnableLambda:
    """The workflow ``name`` as a Runnable: a question (or ``{"question", "filters"?, "k"?}``) in, the
    :class:`~stratagraph.answers.Answer` out."""
    short = _answering(name)

    def run(value: Any) -> Answer:
        if isinstance(value, str):
            return ask(svc, short, value)
        if isinstance(value, dict) and isinstance(value.get("question"), str):
            return ask(svc, short, value["question"], value.get("filters") or None, value.get("k"))
        raise TypeError(f"the {short} runnable takes a question string or a dict with 'question', not {type(value).__name__}")

    return RunnableLambda(run, name=f"stratagraph_{short}")

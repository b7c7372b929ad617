"""LangGraph workflows: StateGraphs that only wire node functions (DESIGN.md names table).

Answering workflows, by the name the CLI (``ask --strategy``), ``StrataGraph.ask`` / ``.workflow`` and
``eval qa`` use, and their module (= ``langgraph.json`` id):

=========  =========================  ==========================================================
``tqr``    ``think_query_retrieve``   BiG-RAG §4.3-4.4: think, query, retrieve until an answer
``kag``    ``kag_solver``             KAG §2.3: logical-form plan, reason, reflect
``bag``    ``bidirectional``          BAG-RAG §3.2: top-down screening, bottom-up aggregation
``lesegr`` ``lesegr``                 CG-RAG §4.4: LeSeGR retrieval, contextual subgraph summaries
``hybrid`` ``hybrid``                 HybridRAG §4.4: vector context then graph context
=========  =========================  ==========================================================

``ingest`` builds the graph. Every answering workflow takes ``{"question", "filters"?, "k"?}`` and returns
``{"answer": Answer}``, with :class:`~stratagraph.services.Services` as its context.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stratagraph.answers import Answer
    from stratagraph.services import Services

__all__ = ["ANSWERING", "DEFAULT_WORKFLOW", "WORKFLOWS", "ask", "get_workflow", "workflow_name"]

#: answering workflow name -> module under stratagraph.workflows (also its langgraph.json id)
ANSWERING: dict[str, str] = {
    "tqr": "think_query_retrieve",
    "kag": "kag_solver",
    "bag": "bidirectional",
    "lesegr": "lesegr",
    "hybrid": "hybrid",
}
WORKFLOWS: dict[str, str] = {**ANSWERING, "ingest": "ingest"}
#: the workflow ``ask`` uses when none is named
DEFAULT_WORKFLOW = "hybrid"


def workflow_name(name: str) -> str:
    """The canonical name of a workflow given by name or module (``think_query_retrieve`` -> ``tqr``);
    ValueError naming the known ones otherwise."""
    if name in WORKFLOWS:
        return name
    for short, module in WORKFLOWS.items():
        if name == module:
            return short
    raise ValueError(f"unknown workflow {name!r}; choose from {', '.join(WORKFLOWS)}")


def get_workflow(name: str) -> Any:
    """The compiled graph of a workflow (by name or module)."""
    return importlib.import_module(f"stratagraph.workflows.{WORKFLOWS[workflow_name(name)]}").graph


def ask(svc: Services, name: str, question: str, filters: dict[str, Any] | None = None, k: int | None = None) -> Answer:
    """Run one answering workflow on a question."""
    from stratagraph.limits import check_request
    from stratagraph.retrieval import check_filters

    check_request(svc.settings, question, k, filters)
    check_filters(filters)
    short = workflow_name(name)
    if short not in ANSWERING:
        raise ValueError(f"{name!r} does not answer questions; choose from {', '.join(ANSWERING)}")
    inputs: dict[str, Any] = {"question": question}
    if filters:
        inputs["filters"] = dict(filters)
    if k:
        inputs["k"] = k
    return get_workflow(short).invoke(inputs, context=svc)["answer"]

"""The ingest workflow (all papers' graph construction):
load -> plan -> build -> extract -> embed -> resolve -> write -> link -> summarize.

Run it through :meth:`stratagraph.StrataGraph.ingest`, ``stratagraph ingest``, or LangGraph Studio (the id
``ingest`` in ``langgraph.json``; input ``{"paths": [...]}``). The context is a
:class:`~stratagraph.services.Services`; without one, the environment's settings are used.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from stratagraph.ingest import steps
from stratagraph.services import Services


def build_graph() -> StateGraph:
    g = StateGraph(
        steps.IngestState,
        context_schema=Services,
        input_schema=steps.IngestInput,
        output_schema=steps.IngestOutput,
    )
    order = ["load", "plan", "build", "extract", "embed", "resolve", "write", "link", "summarize"]
    for name in order:
        g.add_node(name, getattr(steps, name))
    g.add_edge(START, order[0])
    for a, b in zip(order, order[1:], strict=False):
        g.add_edge(a, b)
    g.add_edge(order[-1], END)
    return g


graph = build_graph().compile(name="ingest")

"""The ingest workflow: load -> plan -> build -> embed -> write -> summarize (all papers' graph construction).

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
    g.add_node("load", steps.load)
    g.add_node("plan", steps.plan)
    g.add_node("build", steps.build)
    g.add_node("embed", steps.embed)
    g.add_node("write", steps.write)
    g.add_node("summarize", steps.summarize)
    g.add_edge(START, "load")
    g.add_edge("load", "plan")
    g.add_edge("plan", "build")
    g.add_edge("build", "embed")
    g.add_edge("embed", "write")
    g.add_edge("write", "summarize")
    g.add_edge("summarize", END)
    return g


graph = build_graph().compile(name="ingest")

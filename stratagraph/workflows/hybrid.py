"""``hybrid``: HybridRAG's answering (§4.4): the vector context, then the graph context, concatenated in that
order, then the answer. Metadata filters (company, quarter, year; ``--filter``) restrict both contexts.

    vector_context -> graph_context -> answer
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from stratagraph.agents.answer import answer_node
from stratagraph.agents.common import AnswerOutput, BaseState, QuestionInput
from stratagraph.agents.retrieve import graph_context, vector_context
from stratagraph.services import Services


class HybridState(BaseState, total=False):
    graph_text: str  # the graph context as the model reads it


def build_graph() -> StateGraph:
    g = StateGraph(HybridState, context_schema=Services, input_schema=QuestionInput, output_schema=AnswerOutput)
    g.add_node("vector_context", vector_context)
    g.add_node("graph_context", graph_context)
    g.add_node("answer", answer_node("hybrid", context_key="graph_text"))
    g.add_edge(START, "vector_context")
    g.add_edge("vector_context", "graph_context")
    g.add_edge("graph_context", "answer")
    g.add_edge("answer", END)
    return g


graph = build_graph().compile(name="hybrid")

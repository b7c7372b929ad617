"""``bidirectional`` (``bag``): BAG-RAG's bidirectional retrieval and answer (§3.2, eqs. 3-5).

    screen -> aggregate -> calculate -> answer

``screen`` keeps the sections of the heading tree relevant to the question, level by level, with the
secondary screening Miss (eq. 3; a chat model's yes/no per section, else the embedding threshold);
``aggregate`` detects communities of the instance nodes under the kept sections and gathers the relevant
ones layer by layer up the tree (eq. 4), with the chunks supporting them as evidence; ``calculate`` computes
sums, differences, changes, ratios and superlatives over the kept sections' quantities exactly in code,
every operand cited (the chat model picks the operands when there is one), and without a model answers a
"which section ..." question with its heading (then the run ends); ``answer`` is eq. 5: the computation
when one was made, else the chat model's grounded answer over the evidence and ``Context(Q)``, else the
reader's.
"""

# no ``from __future__ import annotations``: the state's annotations must be real types, since LangGraph
# Studio loads this file under another module name and could not resolve them by name
from typing import Any

from langgraph.graph import END, START, StateGraph

from stratagraph.agents.aggregate import aggregate
from stratagraph.agents.answer import answer_node
from stratagraph.agents.calculate import calculate
from stratagraph.agents.common import AnswerOutput, BaseState, QuestionInput
from stratagraph.agents.screen import screen
from stratagraph.answers import Computation
from stratagraph.services import Services


class BidirectionalState(BaseState, total=False):
    kept_sections: list[str]  # S of eq. 3
    screening: list[dict[str, Any]]  # its levels (P^l, Miss)
    communities: list[dict[str, Any]]  # the relevant communities of eq. 4
    layers: list[dict[str, Any]]  # eq. 4 layer by layer
    instance_chunks: list[str]  # the kept sections' chunks (F^i's provenance)
    aggregated: str  # Context(Q) as the model reads it
    computed: Computation
    computed_answer: str


def _after_calculate(state: dict[str, Any]) -> str:
    return END if state.get("answer") is not None else "answer"


def build_graph() -> StateGraph:
    g = StateGraph(BidirectionalState, context_schema=Services, input_schema=QuestionInput, output_schema=AnswerOutput)
    g.add_node("screen", screen)
    g.add_node("aggregate", aggregate)
    g.add_node("calculate", calculate)
    g.add_node("answer", answer_node("bag", context_key="aggregated"))
    g.add_edge(START, "screen")
    g.add_edge("screen", "aggregate")
    g.add_edge("aggregate", "calculate")
    g.add_conditional_edges("calculate", _after_calculate, ["answer", END])
    g.add_edge("answer", END)
    return g


graph = build_graph().compile(name="bidirectional")

"""``tqr``: BiG-RAG's think-query-retrieve loop (§4.3-4.4): classify and decompose the question, then turns of
think -> decide (query or answer) -> retrieve (dual-path retrieval and Algorithm 4 traversal) -> think,
until an answer or the turn limit (``settings.tqr_max_turns``, default 4), then the answer (§4.3.4).

    decompose -> think -> retrieve -> think -> ... -> answer

With a chat model the turns are the §4.4.2 protocol (``<think>``, ``<query>``, ``<knowledge>``, ``<answer>``
over plain chat); without one they are §4.3's sequential sub-questions, each sub-answer extracted from the
passages and bound into the next sub-question. See :mod:`stratagraph.agents.decompose`,
:mod:`stratagraph.agents.think`, :mod:`stratagraph.agents.traverse`, :mod:`stratagraph.agents.generate`.
"""

# no ``from __future__ import annotations``: the state's annotations must resolve when Studio loads this file
# by path (as a module of another name, whose globals typing cannot find)
from typing import Any

from langgraph.graph import END, START, StateGraph

from stratagraph.agents.common import AnswerOutput, BaseState, QuestionInput
from stratagraph.agents.decompose import decompose_question
from stratagraph.agents.generate import generate
from stratagraph.agents.think import Turn, think
from stratagraph.agents.traverse import retrieve
from stratagraph.retrieval.decompose import SubQuery
from stratagraph.services import Services


class TQRState(BaseState, total=False):
    classification: dict[str, Any]  # Alg. 3: label, reason, max_hops, target_relations
    sub_queries: list[SubQuery]  # Alg. 5
    max_turns: int
    turns: list[Turn]  # every turn so far: queries, passages, knowledge, bound sub-answer
    bound: dict[str, str]  # variable -> the answer bound to it
    pending: list[str]  # the queries the last think decided on
    done: bool  # think decided to answer (after retrieving pending, if any)
    draft: str  # the model's <answer> in the conversation
    focus: str | None  # the bound final sub-question the extractive answer reads
    model_failed: bool  # the model gave no usable turn: algorithmic turns from then on


def after_think(state: TQRState) -> str:
    return "retrieve" if state.get("pending") else "answer"


def after_retrieve(state: TQRState) -> str:
    if state.get("done") or len(state.get("turns") or []) >= int(state.get("max_turns") or 4):
        return "answer"
    return "think"


def build_graph() -> StateGraph:
    g = StateGraph(TQRState, context_schema=Services, input_schema=QuestionInput, output_schema=AnswerOutput)
    g.add_node("decompose", decompose_question)
    g.add_node("think", think)
    g.add_node("retrieve", retrieve)
    g.add_node("answer", generate)
    g.add_edge(START, "decompose")
    g.add_edge("decompose", "think")
    g.add_conditional_edges("think", after_think, ["retrieve", "answer"])
    g.add_conditional_edges("retrieve", after_retrieve, ["think", "answer"])
    g.add_edge("answer", END)
    return g


graph = build_graph().compile(name="think_query_retrieve")

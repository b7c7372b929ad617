"""``chat`` (CLI strategy ``auto``): a conversation over the documents. Each message is rewritten into a
standalone question, routed to the answering workflow that suits it, answered by that workflow as a
subgraph, and replied to with citations; the reply's ``response_metadata["answer"]`` is the full Answer.

    rewrite -> route -> run_workflow -> respond -> attach

State: the messages (``add_messages``) and the last turns (rewritten question, answer, subject, cited chunks).
The CLI and ``StrataGraph.chat`` compile it with the store's SQLite checkpointer; the graph here (and in
``langgraph.json``) has none: the LangGraph server brings its own.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from stratagraph.agents.common import BaseState
from stratagraph.agents.converse import attach, keep_turns, respond, run_workflow
from stratagraph.agents.rewrite import Turn, rewrite
from stratagraph.agents.route import route
from stratagraph.answers import Answer
from stratagraph.services import Services


class ChatInput(TypedDict):
    messages: list[AnyMessage]


class ChatOutput(TypedDict):
    messages: list[AnyMessage]
    answer: Answer


class ChatState(BaseState, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[list[Turn], keep_turns]
    route: str
    evidence_from: list[str]
    compare: list[str]
    answer_draft: Answer
    reply_text: str


def build_graph() -> StateGraph:
    g = StateGraph(ChatState, context_schema=Services, input_schema=ChatInput, output_schema=ChatOutput)
    order = [("rewrite", rewrite), ("route", route), ("run_workflow", run_workflow), ("respond", respond),
             ("attach", attach)]  # fmt: skip
    for name, fn in order:
        g.add_node(name, fn)
    g.add_edge(START, order[0][0])
    for (a, _), (b, _) in zip(order, order[1:], strict=False):
        g.add_edge(a, b)
    g.add_edge(order[-1][0], END)
    return g


def compile_graph(checkpointer: Any = None) -> Any:
    """The chat graph compiled with a checkpointer (the CLI's and ``StrataGraph.chat``'s memory)."""
    return build_graph().compile(name="chat", checkpointer=checkpointer)


graph = compile_graph()

"""``chat`` (CLI strategy ``auto``): a conversation over the documents. Each message is rewritten into a
standalone question, routed to the answering workflow that suits it, answered by that workflow run as a
subgraph, and replied to with citations; the reply's ``response_metadata["answer"]`` is the full Answer.

    rewrite -> route -> why                                   -> respond -> attach
                     \\-> hybrid | tqr | kag | bag | lesegr -> combine -/

``route`` decides the edge; each answering workflow is a node here that runs its compiled graph on the
rewritten question (twice for "compare that with ...", once per question) with the route's metadata
filters; ``combine`` makes one answer of their answers. State: the messages (``add_messages``) and the last
turns (rewritten question, answer, subject, cited chunks). The CLI and ``StrataGraph.chat`` compile it with
the store's SQLite checkpointer; the graph here (and in ``langgraph.json``) has none: the LangGraph server
brings its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime

from stratagraph.agents.common import BaseState, services_of
from stratagraph.agents.converse import attach, combine, keep_turns, respond, why
from stratagraph.agents.rewrite import Turn, rewrite
from stratagraph.agents.route import route
from stratagraph.answers import Answer
from stratagraph.services import Services
from stratagraph.workflows import ANSWERING, get_workflow


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
    compare_filters: list[dict[str, str]]
    answers_draft: list[Answer]
    answer_draft: Answer
    reply_text: str


def subgraph(name: str) -> Callable[[dict[str, Any], Runtime[Services]], dict[str, Any]]:
    """The answering workflow ``name`` as a node: its compiled graph run on the rewritten question (each
    question of a comparison) with the route's filters (a comparison's questions each with their own); its answers, traces and usage join the turn's."""
    graph = get_workflow(name)

    def run(state: dict[str, Any], runtime: Runtime[Services]) -> dict[str, Any]:
        svc = services_of(runtime)
        questions = list(state.get("compare") or []) or [str(state.get("question") or "")]
        each = list(state.get("compare_filters") or [])
        answers: list[Answer] = []
        for i, q in enumerate(questions):
            filters = each[i] if i < len(each) else state.get("filters")
            inputs: dict[str, Any] = {"question": q, **({"filters": dict(filters)} if filters else {})}
            answers.append(graph.invoke(inputs, context=svc)["answer"])
        usage = answers[0].usage
        for a in answers[1:]:
            usage = usage.add(a.usage)
        return {"answers_draft": answers, "trace": [e for a in answers for e in a.trace], "usage": usage}

    run.__name__ = name
    return run


def _after_route(state: dict[str, Any]) -> str:
    return "why" if state.get("evidence_from") else str(state.get("route") or "hybrid")


def build_graph() -> StateGraph:
    g = StateGraph(ChatState, context_schema=Services, input_schema=ChatInput, output_schema=ChatOutput)
    g.add_node("rewrite", rewrite)
    g.add_node("route", route)
    g.add_node("why", why)
    for name in ANSWERING:
        g.add_node(name, subgraph(name))
        g.add_edge(name, "combine")
    g.add_node("combine", combine)
    g.add_node("respond", respond)
    g.add_node("attach", attach)
    g.add_edge(START, "rewrite")
    g.add_edge("rewrite", "route")
    g.add_conditional_edges("route", _after_route, ["why", *ANSWERING])
    g.add_edge("why", "respond")
    g.add_edge("combine", "respond")
    g.add_edge("respond", "attach")
    g.add_edge("attach", END)
    return g


def compile_graph(checkpointer: Any = None) -> Any:
    """The chat graph compiled with a checkpointer (the CLI's and ``StrataGraph.chat``'s memory)."""
    return build_graph().compile(name="chat", checkpointer=checkpointer)


graph = compile_graph()

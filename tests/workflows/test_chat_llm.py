"""The ``chat`` workflow and the LangChain embedding with a chat model: the real scripted HTTP server of
``tests/scripted_llm.py`` speaking OpenAI's protocol (structured replies, streamed replies, tool calls)."""

from __future__ import annotations

import importlib.util
import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from stratagraph import Settings, StrataGraph
from stratagraph.answers import Answer
from stratagraph.llm import get_chat_model
from tests.conftest import REPO
from tests.scripted_llm import Reply, ScriptedChatServer, user_text
from tests.workflows.conftest import assert_cited

Q3_QUESTION = "What was Northwind Robotics' revenue in the third quarter of 2024?"


def _system(body: dict[str, Any]) -> str:
    return next((str(m["content"]) for m in body["messages"] if m["role"] == "system"), "")


def _passage_with(body: dict[str, Any], needle: str) -> int:
    """The number of the prompt's passage that contains ``needle``."""
    for m in re.finditer(r"^\[(\d+)\] [^\n]*\n(.*?)(?=\n\n\[\d+\] |\Z)", user_text(body), re.MULTILINE | re.DOTALL):
        if needle in m.group(2):
            return int(m.group(1))
    raise AssertionError(f"no passage holds {needle!r}")


def _llm_sg(server: ScriptedChatServer, home: Path) -> StrataGraph:
    return StrataGraph(server.settings(home, llm_cache=False))


def _chat_responder(rewrite: Reply | None = None, route: Reply | None = None, reply_text: str = "") -> Any:
    """Answers by prompt: the rewrite and route decisions given, the answer prompt from the passage that
    states the Q3 revenue, the reply in words."""

    def respond(body: dict[str, Any]) -> Reply:
        system = _system(body)
        if system.startswith("You rewrite"):
            return rewrite or Reply.json({"question": Q3_QUESTION, "why": "'Q3' continues the last question"})
        if system.startswith("You choose which answering workflow"):
            return route or Reply.json({"workflow": "hybrid", "why": "a direct lookup"})
        if system.startswith("You answer a question from numbered passages"):
            question = re.search(r"^Question: (.*)$", user_text(body), re.MULTILINE).group(1)
            value = "$151.9 million" if "third quarter" in question or "Q3" in question else "$142.6 million"
            return Reply.json({"answer": value, "found": True, "evidence": [_passage_with(body, value)]})
        if system.startswith("You plan how to answer"):  # kag, where the rules route a lookup
            question = re.search(r"Question: (.*)", user_text(body)).group(1).strip()
            step = {"action": "Retrieval", "var": "o1", "question": question, "subject": "", "predicate": "", "object": "",
                    "constraints": [], "numeric": True, "inputs": [], "operation": "", "limit": 1}  # fmt: skip
            return Reply.json({"steps": [step, {**step, "action": "Output", "var": "out", "question": "", "inputs": ["o1"]}]})
        if system.startswith("You check whether a question has been answered"):
            return Reply.json({"answered": True, "missing": ""})
        if system.startswith("You reply in a conversation"):
            return Reply(content=reply_text or "Northwind Robotics' revenue was $151.9 million in the third quarter of 2024 [1].")
        raise AssertionError(f"unexpected prompt: {system[:80]!r}")

    return respond


def test_rewrite_and_route_use_the_model_against_scripted_http_server(chat_server: ScriptedChatServer, examples_home: Path) -> None:
    chat_server.responder = _chat_responder()
    with _llm_sg(chat_server, examples_home) as sg:
        chat = sg.chat(f"llm-{uuid.uuid4().hex[:6]}")
        first = chat.ask("What was Northwind Robotics' revenue in the second quarter of 2024?")
        assert first.usage.llm_calls == len(chat_server.requests)  # route, answer, reply: no rewrite of a first message
        sent = len(chat_server.requests)
        answer = chat.ask("And in Q3?")
        assert_cited(sg, answer)
    decisions = {e.node: e.decision for e in answer.trace}
    assert decisions["rewrite"].startswith(repr(Q3_QUESTION)) and "model:" in decisions["rewrite"]
    assert "hybrid (model: a direct lookup)" in decisions["route"]
    assert answer.answer == "$151.9 million" and "third quarter" in answer.citations[0].quote
    assert answer.usage.llm_calls == len(chat_server.requests) - sent == 4  # rewrite, route, answer, reply
    history = user_text(next(b for b in chat_server.requests[sent:] if _system(b).startswith("You rewrite")))
    assert "second quarter of 2024" in history and "Latest message: And in Q3?" in history


def test_malformed_rewrite_and_route_replies_fall_back_to_the_rules_against_scripted_http_server(
    chat_server: ScriptedChatServer, examples_home: Path
) -> None:
    bad = Reply(content="I think the user means the third quarter, probably.")
    chat_server.responder = _chat_responder(rewrite=bad, route=Reply.json({"workflow": "astrology"}))
    with _llm_sg(chat_server, examples_home) as sg:
        chat = sg.chat(f"llm-bad-{uuid.uuid4().hex[:6]}")
        chat.ask("What was Northwind Robotics' revenue in the second quarter of 2024?")
        sent = len(chat_server.requests)
        answer = chat.ask("And in Q3?")
    rewrite = next(e for e in answer.trace if e.node == "rewrite")
    route = next(e for e in answer.trace if e.node == "route")
    # asked again once with the validation error, then the rules: the trace says so
    assert rewrite.fallback and "ellipsis: another period" in rewrite.decision and "Q3 2024" in rewrite.decision
    assert route.fallback and "model" not in route.decision
    assert answer.answer == "$151.9 million"
    turn = [_system(b).split(" ")[1] for b in chat_server.requests[sent:]]
    assert turn == ["rewrite", "rewrite", "choose", "choose", "plan", "check", "reply"]  # the rules route to kag: a number read in code
    assert answer.usage.llm_calls == len(turn)


def test_the_reply_streams_tokens_before_the_run_ends_against_scripted_http_server(
    chat_server: ScriptedChatServer, examples_home: Path
) -> None:
    words = "Revenue in the third quarter of 2024 was $151.9 million, up from $142.6 million in the second quarter [1]."
    chat_server.responder = _chat_responder(reply_text=words)
    chat_server.stream_delay = 0.05
    with _llm_sg(chat_server, examples_home) as sg:
        chat = sg.chat(f"llm-stream-{uuid.uuid4().hex[:6]}")
        events = [(time.monotonic(), e) for e in chat.stream(Q3_QUESTION)]
    tokens = [(t, e.token) for t, e in events if e.kind == "token"]
    nodes = [e.node.node for _, e in events if e.kind == "node" and e.node is not None]
    final_at, final = events[-1]
    assert final.kind == "answer" and final.answer is not None and final.answer.answer == "$151.9 million"
    assert len(tokens) >= 10 and "".join(t for _, t in tokens).strip() == words
    assert tokens[0][0] < final_at - 0.3  # the first token arrived while the reply was still being written
    assert nodes[:2] == ["rewrite", "route"] and "respond" in nodes  # node updates streamed too
    assert any(b.get("stream") and _system(b).startswith("You reply") for b in chat_server.requests)
    assert final.reply.startswith(words) and "[1]" in final.reply


def _load_agent_example() -> Any:
    spec = importlib.util.spec_from_file_location("agent_example", REPO / "examples" / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_agent_example_runs_a_tool_calling_turn_against_scripted_http_server(
    chat_server: ScriptedChatServer, examples_home: Path
) -> None:
    chat_server.script.extend([
        Reply.calls(("search_facts", {"query": "Police Department overtime FY2025"}),
                    ("calculate", {"expression": "1170 - 1650"})),
        Reply.calls(("ask_kag", {"question": "What is the combined FY2025 overtime budget of the Police and Fire departments?"})),
        Reply(content="Police overtime is $480 thousand below Fire's; together they budget $2,820 thousand [ask_kag]."),
    ])  # fmt: skip
    model = get_chat_model(chat_server.settings(examples_home))
    with StrataGraph(Settings(home=examples_home, llm_model=None, openai_base_url=None, openai_api_key=None)) as sg:
        # the agent's model calls the tools; ask_kag's workflow runs without one here (its rule-based planner)
        agent = _load_agent_example().build_agent(sg, model)
        result = agent.invoke({"messages": [{"role": "user", "content": "Compare police and fire overtime in FY2025."}]})
    messages = result["messages"]
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_messages] == ["search_facts", "calculate", "ask_kag"]
    assert all(m.status != "error" for m in tool_messages), [m.content for m in tool_messages]
    assert "Overtime" in str(tool_messages[0].content)
    assert tool_messages[1].artifact["result"] == "-480"
    kag: Answer = tool_messages[2].artifact
    assert isinstance(kag, Answer) and kag.computed is not None and kag.answer == "$2,820 thousand"
    assert isinstance(messages[-1], AIMessage) and "$2,820 thousand" in messages[-1].content
    # the tools' results reached the model: each later request carries the earlier tool outputs
    second, third = chat_server.requests[1], chat_server.requests[2]
    tool_turns = [m for m in third["messages"] if m["role"] == "tool"]
    assert len([m for m in second["messages"] if m["role"] == "tool"]) == 2 and len(tool_turns) == 3
    assert "-480" in tool_turns[1]["content"] and "2,820 thousand" in tool_turns[2]["content"]
    assert {t["function"]["name"] for t in chat_server.requests[0]["tools"]} >= {"search_chunks", "search_facts", "calculate", "ask_kag"}


def test_as_tool_and_runnable_without_a_chat_model(examples_sg: StrataGraph) -> None:
    tool = examples_sg.as_tool("kag")
    assert tool.name == "ask_kag" and "exactly" in tool.description
    message = tool.invoke({"type": "tool_call", "id": "c1", "name": "ask_kag",
                           "args": {"question": "What is the combined FY2025 overtime budget of the Police and Fire departments?"}})  # fmt: skip
    assert isinstance(message, ToolMessage) and message.artifact.answer == "$2,820 thousand"
    assert message.content.startswith("$2,820 thousand") and "[1]" in message.content
    runnable = examples_sg.runnable("hybrid")
    answers = runnable.batch([Q3_QUESTION, {"question": "Who is the Chief Executive Officer of Northwind Robotics?"}])
    assert all(isinstance(a, Answer) and a.found for a in answers)
    chain = runnable | (lambda a: json.dumps({"answer": a.answer, "sources": sorted({c.source for c in a.citations})}))
    out = json.loads(chain.invoke({"question": Q3_QUESTION, "filters": {"quarter": "Q3"}}))
    assert out["sources"] == ["examples/earnings/northwind_robotics_q3_2024_earnings_call.md"]

"""Limits that protect a shared server (stratagraph/limits.py): each refused with a message naming it, at every
entry point where the input arrives: the Python API, a conversation turn, the store tools (so MCP), the CLI;
and the tool-call limit of an agent turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagraph.config import Settings
from stratagraph.limits import LimitExceeded, check_request
from tests.conftest import run_cli

LIMITS = Settings(home=Path("/nonexistent"), max_question_chars=50, max_k=7, max_filters=2, max_filter_chars=10)


@pytest.mark.parametrize(
    ("kwargs", "limit"),
    [
        ({"question": "x" * 51}, "max_question_chars"),
        ({"k": 8}, "max_k"),
        ({"filters": {"a": "1", "b": "2", "c": "3"}}, "max_filters"),
        ({"filters": {"a": "y" * 11}}, "max_filter_chars"),
        ({"filters": {"k" * 11: "1"}}, "max_filter_chars"),
    ],
)
def test_over_a_limit_is_refused_naming_it(kwargs, limit):
    with pytest.raises(LimitExceeded) as info:
        check_request(LIMITS, **kwargs)
    assert info.value.limit == limit
    assert limit in str(info.value) and f"STRATAGRAPH_{limit.upper()}" in str(info.value)


def test_at_the_limits_passes():
    check_request(LIMITS, "x" * 50, 7, {"a": "y" * 10, "b": 2})


def test_defaults_are_set_and_read_from_the_environment(monkeypatch):
    defaults = Settings()
    assert (defaults.max_question_chars, defaults.max_k, defaults.max_filters, defaults.max_tool_calls) == (4000, 50, 16, 24)
    monkeypatch.setenv("STRATAGRAPH_MAX_K", "3")
    assert Settings().max_k == 3


@pytest.fixture
def small(store_dir):
    from stratagraph import StrataGraph

    graph = StrataGraph(Settings(home=store_dir, max_question_chars=50, max_k=7, max_filters=2))
    yield graph
    graph.close()


def test_api_refuses_before_running_anything(small):
    with pytest.raises(LimitExceeded, match="max_question_chars"):
        small.ask("why " * 20)
    with pytest.raises(LimitExceeded, match="max_k"):
        small.retrieve("who", k=8)
    with pytest.raises(LimitExceeded, match="max_filters"):
        small.retriever("vector", filters={"a": 1, "b": 2, "c": 3})
    with pytest.raises(LimitExceeded, match="max_question_chars"):
        small.chat("t1").ask("why " * 20)
    assert small.threads() == []  # a refused turn is not remembered
    assert sum(small.stats().nodes.values()) == 0


def test_tools_return_the_refusal_to_the_model(small):
    from stratagraph.tools import get_tool

    tool = get_tool(small.context, "search_chunks")
    message = tool.invoke({"name": "search_chunks", "args": {"query": "q" * 60}, "id": "1", "type": "tool_call"})
    assert message.status == "error" and "max_question_chars" in str(message.content)
    message = tool.invoke(
        {"name": "search_chunks", "args": {"query": "q", "filters": {"a": 1, "b": 2, "c": 3}}, "id": "2", "type": "tool_call"}
    )
    assert message.status == "error" and "max_filters" in str(message.content)


def test_cli_refuses_with_exit_2(store_dir):
    proc = run_cli("ask", "q" * 30, "--store", str(store_dir), env={"STRATAGRAPH_MAX_QUESTION_CHARS": "20"})
    assert proc.returncode == 2
    assert "max_question_chars" in proc.stderr
    proc = run_cli("ask", "who", "--k", "9", "--retrieve-only", "--store", str(store_dir), env={"STRATAGRAPH_MAX_K": "8"})
    assert proc.returncode == 2 and "max_k" in proc.stderr
    assert not (store_dir / "graph.sqlite").exists()  # refused before the store was opened


def test_agent_turn_stops_calling_tools_at_the_limit_scripted_model(small, chat_server):
    """The agent example's middleware: a model (scripted, over HTTP) that calls a tool again and again gets
    refusals naming the limit past ``max_tool_calls``; only that many calls run."""
    from langchain.agents import create_agent
    from langchain_core.messages import ToolMessage

    from stratagraph.limits import tool_call_limit
    from stratagraph.llm import get_chat_model
    from tests.scripted_llm import Reply

    settings = chat_server.settings(small.settings.home, max_tool_calls=3)
    chat_server.script.extend([Reply.calls(("search_chunks", {"query": f"budget {i}"})) for i in range(6)])
    chat_server.script.append(Reply(content="done"))
    agent = create_agent(get_chat_model(settings), tools=small.tools(), middleware=[tool_call_limit(settings)])
    out = agent.invoke({"messages": [{"role": "user", "content": "search"}]})
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == 6
    assert [m.status for m in results] == ["success"] * 3 + ["error"] * 3
    assert all("limit" in str(m.content).lower() for m in results[3:])
    assert out["messages"][-1].content == "done"


def test_mcp_tools_refuse_over_the_limits(store_dir):
    """The MCP server (real SDK client over stdio): an ask tool and a store tool each return an error result
    naming the limit."""
    import anyio

    from tests.mcp_server.servers import stdio_session

    async def main() -> None:
        env = {"STRATAGRAPH_MAX_QUESTION_CHARS": "20", "STRATAGRAPH_MAX_K": "4"}
        async with stdio_session(store_dir, env=env) as session:
            asked = await session.call_tool("ask_hybrid", {"question": "q" * 30})
            assert asked.isError and "max_question_chars" in asked.content[0].text
            auto = await session.call_tool("ask_auto", {"question": "q" * 30})
            assert auto.isError and "max_question_chars" in auto.content[0].text
            found = await session.call_tool("search_chunks", {"query": "q", "k": 5})
            assert found.isError and "max_k" in found.content[0].text

    anyio.run(main)


def test_the_web_page_refuses_a_message_over_the_limit(store_dir):
    """``stratagraph serve`` (a real server process): a 400 naming the limit, no thread remembered."""
    import httpx

    from tests.processes import running

    with running(store_dir, "serve", env={"STRATAGRAPH_MAX_QUESTION_CHARS": "20"}) as base, httpx.Client(timeout=60) as client:
        r = client.post(f"{base}/api/threads/t1/messages", json={"message": "q" * 30})
        assert r.status_code == 400 and "max_question_chars" in r.json()["error"]
        assert client.get(f"{base}/api/threads").json() in ([], {"threads": []})

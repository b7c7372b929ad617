"""``examples/mcp_agent.py`` run as a user runs it: a LangChain agent whose model is the scripted chat server
(a real HTTP server speaking OpenAI's protocol from a script) and whose tools come from ``stratagraph mcp``
through ``langchain-mcp-adapters``, over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.mcp_server.servers import http_server, server_env
from tests.scripted_llm import Reply, ScriptedChatServer

QUESTION = "How much more does the Police Department request than the Fire Department?"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_mcp_agent_example_against_scripted_http_server(examples_home: Path, chat_server: ScriptedChatServer, transport: str) -> None:
    chat_server.script.extend([
        Reply.calls(("ask_kag", {"question": QUESTION})),
        Reply(content="The Police Department requests $2,805 thousand more than the Fire Department."),
    ])  # fmt: skip
    env = server_env(OPENAI_BASE_URL=chat_server.base_url, OPENAI_API_KEY="test", STRATAGRAPH_LLM_MODEL="scripted")
    command = [sys.executable, str(REPO / "examples" / "mcp_agent.py"), QUESTION, "--store", str(examples_home)]

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([*command, *extra], env=env, capture_output=True, text=True, timeout=600)

    if transport == "stdio":
        proc = run()
    else:
        with http_server(examples_home) as url:
            proc = run("--url", url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("$2,805 thousand more than the Fire Department.")
    assert "-> ask_kag" in proc.stderr and "<- ask_kag: $2,805 thousand" in proc.stderr

    first, second = chat_server.requests
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"ask_kag", "ask_auto", "search_chunks", "browse_sections"} <= offered
    kag = next(t["function"] for t in first["tools"] if t["function"]["name"] == "ask_kag")
    assert kag["parameters"]["properties"]["question"]["type"] == "string"
    tool_reply = next(m for m in second["messages"] if m["role"] == "tool")
    text = tool_reply["content"] if isinstance(tool_reply["content"], str) else json.dumps(tool_reply["content"])
    assert "$2,805 thousand" in text and "18,585 - 15,780" in text  # the MCP server's cited, computed answer

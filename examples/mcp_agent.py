"""A LangChain agent that reaches a stratagraph store through its MCP server, as any MCP client would.

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=sk-... STRATAGRAPH_LLM_MODEL=<model> \
        python examples/mcp_agent.py "How much more does Riverton budget for police than for fire in FY2025?"

It starts ``stratagraph mcp`` over stdio (``--url http://host:port/mcp`` connects to a running streamable HTTP
server instead; ``STRATAGRAPH_HTTP_TOKEN`` is sent as its bearer token), loads the server's tools with
``langchain-mcp-adapters`` and hands them to ``create_agent``. The agent's model is the one the settings
configure (any OpenAI-compatible endpoint whose model calls tools); the server it starts answers without a
chat model (its ``ask_*`` tools compute and quote in code). The store is ``--store`` (``make demo`` fills
``.stratagraph/demo``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient

from stratagraph.config import Settings
from stratagraph.limits import tool_call_limit
from stratagraph.llm import get_chat_model

SYSTEM = (
    "You answer questions about the user's documents with the stratagraph tools. For a question that combines "
    "figures call ask_kag, which computes the result exactly from cited operands; otherwise ask_auto or the "
    "search tools. Answer briefly and name the sources the tools returned."
)
#: what the spawned server does not inherit: the agent's chat model settings
_AGENT_ONLY = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "STRATAGRAPH_LLM_MODEL", "STRATAGRAPH_OPENAI_BASE_URL", "STRATAGRAPH_OPENAI_API_KEY")


def connection(store: str, url: str | None) -> dict[str, Any]:
    """How to reach the server: a running one at ``url``, else ``stratagraph mcp`` started over stdio."""
    if url:
        token = os.environ.get("STRATAGRAPH_HTTP_TOKEN")
        return {"transport": "streamable_http", "url": url, **({"headers": {"Authorization": f"Bearer {token}"}} if token else {})}
    env = {k: v for k, v in os.environ.items() if k not in _AGENT_ONLY}
    return {"transport": "stdio", "command": sys.executable, "args": ["-m", "stratagraph.cli", "--store", store, "mcp"], "env": env}


async def ask(question: str, store: str, url: str | None = None, model: Any = None) -> dict[str, Any]:
    """Run the agent on one question; the final state (its messages)."""
    model = model if model is not None else get_chat_model(Settings())
    if model is None:
        raise SystemExit("no chat model: set OPENAI_BASE_URL / OPENAI_API_KEY and STRATAGRAPH_LLM_MODEL")
    client = MultiServerMCPClient({"stratagraph": connection(store, url)})
    tools = await client.get_tools()
    agent = create_agent(model, tools=tools, system_prompt=SYSTEM, middleware=[tool_call_limit(Settings())])
    return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--store", default=os.environ.get("STRATAGRAPH_HOME", ".stratagraph/demo"))
    parser.add_argument("--url", help="a running server's streamable HTTP endpoint (default: start one over stdio)")
    args = parser.parse_args(argv)
    result = asyncio.run(ask(args.question, args.store, args.url))
    for message in result["messages"]:
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                print(f"-> {call['name']}({call['args']})", file=sys.stderr)
        elif isinstance(message, ToolMessage):
            print(f"<- {message.name}: {message.text[:200]}", file=sys.stderr)
    print(result["messages"][-1].text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

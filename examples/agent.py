"""A LangChain agent over a stratagraph store: the graph's tools plus the KAG workflow as one more tool.

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=sk-... STRATAGRAPH_LLM_MODEL=<model> \
        python examples/agent.py "How much more does Riverton budget for police than for fire in FY2025?"

Any OpenAI-compatible endpoint whose model calls tools works (OpenAI, vLLM, Ollama, llama.cpp with a
tool-calling model). The store is ``STRATAGRAPH_HOME`` (``make demo`` fills ``.stratagraph/demo``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage

from stratagraph import StrataGraph
from stratagraph.config import Settings
from stratagraph.limits import tool_call_limit

SYSTEM = (
    "You answer questions about the user's documents. Search them with the tools; for a question that "
    "combines figures, call ask_kag, which computes the result exactly from cited operands. Answer briefly "
    "and name the sources the tools returned."
)


def build_agent(sg: StrataGraph, model: Any = None) -> Any:
    """``create_agent`` with the store's tools and ``ask_kag``; ``model`` defaults to the chat model the
    settings configure."""
    model = model if model is not None else sg.services.llm
    if model is None:
        raise SystemExit("no chat model: set OPENAI_BASE_URL / OPENAI_API_KEY and STRATAGRAPH_LLM_MODEL")
    return create_agent(
        model,
        tools=[*sg.tools(), sg.as_tool("kag")],
        system_prompt=SYSTEM,
        middleware=[tool_call_limit(sg.settings)],  # at most STRATAGRAPH_MAX_TOOL_CALLS tool calls per turn
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--store", default=os.environ.get("STRATAGRAPH_HOME", ".stratagraph/demo"))
    args = parser.parse_args(argv)
    with StrataGraph(Settings(home=args.store)) as sg:
        agent = build_agent(sg)
        result = agent.invoke({"messages": [{"role": "user", "content": args.question}]})
    for message in result["messages"]:
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                print(f"-> {call['name']}({call['args']})", file=sys.stderr)
        elif isinstance(message, ToolMessage):
            print(f"<- {message.name}: {str(message.content)[:200]}", file=sys.stderr)
    print(result["messages"][-1].content)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

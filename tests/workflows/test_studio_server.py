"""LangGraph Studio's server: ``langgraph dev`` serves every graph of ``langgraph.json``, and each one runs
through the HTTP API (langgraph-sdk) to its output, building its services from the environment's settings
(the server passes no context)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO
from tests.scripted_llm import closed_port

langgraph_sdk = pytest.importorskip("langgraph_sdk", reason="langgraph-sdk is not installed (the test extra has it)")
CLI = Path(sys.executable).parent / "langgraph"
if not CLI.exists() or shutil.which("langgraph", path=str(CLI.parent)) is None:  # pragma: no cover - install issue
    pytest.skip("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]', in the test extra)", allow_module_level=True)

BUDGET_QUESTION = "How much does the Police Department request for FY2025?"
#: one input per graph of langgraph.json, and what its output must hold
RUNS: dict[str, dict] = {
    "hybrid": {"question": BUDGET_QUESTION},
    "think_query_retrieve": {"question": "How much is budgeted for the dispatch agreement with the county that operates the regional P25 network?"},
    "kag_solver": {"question": "What is the combined FY2025 overtime budget of the Police and Fire departments?"},
    "bidirectional": {"question": "How much more does the Police Department spend on equipment than the Fire Department in FY2025?"},
    "lesegr": {"question": "Which study measured the indoor temperature of homes before and after their roofs were retrofitted?"},
    "chat": {"messages": [{"role": "human", "content": BUDGET_QUESTION}]},
    "ingest": {"paths": [str(EXAMPLES / "budget" / "riverton_city_budget_fy2025.md")], "base": str(REPO)},
}


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - a local test server
        return json.loads(response.read())


@pytest.fixture(scope="module")
def studio(examples_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` on a free port over a copy of the examples store, no chat model configured."""
    store = tmp_path_factory.mktemp("studio-store")
    for name in ("graph.sqlite", "chroma"):
        src = examples_home / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, store / name)
    port = closed_port()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "STRATAGRAPH_LLM_MODEL")}
    env.update(STRATAGRAPH_HOME=str(store), PYTHONPATH=str(REPO))
    log = (store / "langgraph-dev.log").open("w")
    proc = subprocess.Popen(
        [str(CLI), "dev", "--port", str(port), "--host", "127.0.0.1", "--no-browser", "--no-reload",
         "--config", str(REPO / "langgraph.json")],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if _get(f"{url}/ok").get("ok"):
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"langgraph dev did not start:\n{(store / 'langgraph-dev.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_every_graph_runs_through_the_langgraph_server(studio: str) -> None:
    client = langgraph_sdk.get_sync_client(url=studio)
    graphs = set(json.loads((REPO / "langgraph.json").read_text("utf-8"))["graphs"])
    assert {a["graph_id"] for a in client.assistants.search(limit=100)} == graphs == set(RUNS)
    for graph_id in sorted(graphs):
        out = client.runs.wait(None, graph_id, input=RUNS[graph_id], raise_error=True)
        if graph_id == "ingest":
            assert [r["status"] for r in out["reports"]] == ["unchanged"], out
            continue
        answer = out["answer"]
        assert answer["found"] and answer["citations"], (graph_id, answer)
        assert answer["trace"] and answer["usage"]["llm_calls"] == 0, graph_id
        if graph_id == "chat":
            assert out["messages"][-1]["type"] == "ai" and answer["answer"] in out["messages"][-1]["content"]


def test_a_studio_thread_remembers_the_conversation(studio: str) -> None:
    client = langgraph_sdk.get_sync_client(url=studio)
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "chat", input=RUNS["chat"], raise_error=True)
    out = client.runs.wait(thread["thread_id"], "chat", raise_error=True,
                           input={"messages": [{"role": "human", "content": "Why does its overtime fall?"}]})  # fmt: skip
    assert len(out["messages"]) == 4
    rewrite = next(e for e in out["answer"]["trace"] if e["node"] == "rewrite")
    assert "Police Department's overtime" in rewrite["decision"]
    assert out["answer"]["found"] and "overtime" in out["answer"]["citations"][0]["quote"]

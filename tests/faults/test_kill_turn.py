"""A conversation turn killed mid-write (SIGKILL while the chat model is answering the route request, after the
turn's first checkpoints were written): the thread resumes at its last complete turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from stratagraph import StrataGraph
from stratagraph.config import Settings
from tests.conftest import REPO
from tests.scripted_llm import Reply, ScriptedChatServer

DOC = Path(__file__).parent / "injection" / "acme.md"
FIRST = "What was Acme Corp's revenue in the second quarter of 2024?"
KILLED = "And how much did it grow?"
THIRD = "What did Acme Corp report?"

TURN = """
import sys
from stratagraph import StrataGraph
from stratagraph.config import Settings
home, url, message = sys.argv[1:4]
sg = StrataGraph(Settings(home=home, llm_model="scripted", openai_base_url=url, request_retries=0, extractor="spacy",
                          llm_cache=False))
sg.chat("t1").ask(message)
"""


def _schema(body: dict) -> str:
    return str(((body.get("response_format") or {}).get("json_schema") or {}).get("name") or "")


@pytest.mark.parametrize("turns_before", [1, 0])
def test_a_turn_killed_mid_write_resumes_at_the_last_complete_turn(
    tmp_path: Path, chat_server: ScriptedChatServer, turns_before: int
) -> None:
    home = tmp_path / "store"
    with StrataGraph(Settings(home=home)) as sg:
        assert sg.ingest([DOC], base=DOC.parent).failed == 0
        if turns_before:
            sg.chat("t1").ask(FIRST)  # a complete turn, no chat model
        complete = [m.content for m in sg.chat("t1").history()]
    assert len(complete) == 2 * turns_before

    routing = threading.Event()

    def respond(body: dict) -> Reply:
        if _schema(body) == "Rewritten":
            return Reply.json({"question": "How much did Acme Corp's revenue grow?", "why": "it"})
        routing.set()  # the turn's rewrite checkpoint is written; the process is killed while it waits here
        threading.Event().wait(30)
        return Reply.error(500)

    chat_server.responder = respond
    env = {**os.environ, "PYTHONPATH": str(REPO), "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([sys.executable, "-c", TURN, str(home), chat_server.base_url, KILLED], env=env,
                            start_new_session=True)  # fmt: skip
    try:
        assert routing.wait(120), "the turn never reached the route request"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL

    with StrataGraph(Settings(home=home)) as sg:
        convo = sg.chat("t1")
        assert [m.content for m in convo.history()] == complete  # the killed turn left nothing visible
        answer = convo.ask(THIRD)
        history = convo.history()
        assert [type(m) for m in history] == [HumanMessage, AIMessage] * (turns_before + 1)
        assert [m.content for m in history[: len(complete)]] == complete and history[-2].content == THIRD
        assert KILLED not in [m.content for m in history]
        assert answer.found

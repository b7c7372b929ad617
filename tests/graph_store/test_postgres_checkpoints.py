"""Conversations remembered in a real PostgreSQL server (``STRATAGRAPH_CHECKPOINTER=postgresql://...``, started
by tests/graph_store/postgres.py): a thread written by one process is continued by another, survives a
restart of the server (in a process that stays up and in a new one), is listed and deleted; a server that
cannot be reached and a URL that is not PostgreSQL's are one clear error each."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.graph_store.base import StoreUnavailable
from stratagraph.graph_store.postgres_checkpoints import PostgresCheckpoints, redact
from tests.conftest import run_cli
from tests.graph_store.postgres import postgres_server
from tests.scripted_llm import closed_port

Q2 = "What was Northwind Robotics' revenue in the second quarter of 2024?"


@pytest.fixture
def pg_url() -> str:
    return postgres_server().create_database("t" + uuid.uuid4().hex[:12])


def _ask(store: Path, url: str, thread: str, question: str) -> dict:
    proc = run_cli("--store", str(store), "ask", question, "--thread", thread, "--json",
                   env={"STRATAGRAPH_CHECKPOINTER": url})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _threads(store: Path, url: str) -> list[dict]:
    proc = run_cli("--store", str(store), "threads", "--json", env={"STRATAGRAPH_CHECKPOINTER": url})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["threads"]


def test_two_processes_continue_one_thread_across_a_server_restart(examples_home: Path, pg_url: str) -> None:
    first = _ask(examples_home, pg_url, "review", Q2)
    assert first["answer"] == "$142.6 million"
    second = _ask(examples_home, pg_url, "review", "And in Q3?")  # another process: only the thread knows "Q3" of what
    assert second["answer"] == "$151.9 million"
    postgres_server().restart()
    third = _ask(examples_home, pg_url, "review", "How does that compare with the previous quarter?")
    assert third["answer"] == "$9.3 million" and third["computed"]["operation"] == "difference"
    [thread] = _threads(examples_home, pg_url)
    assert (thread["thread_id"], thread["turns"], thread["first_message"]) == ("review", 3, Q2)
    sqlite = run_cli("--store", str(examples_home), "threads", "--json", env={"STRATAGRAPH_CHECKPOINTER": ""})
    assert "review" not in {t["thread_id"] for t in json.loads(sqlite.stdout)["threads"]}  # the SQLite file was not used


def test_a_running_process_outlives_a_server_restart(examples_home: Path, pg_url: str) -> None:
    with StrataGraph(Settings(home=examples_home, checkpointer=pg_url)) as sg:
        chat = sg.chat("live")
        assert chat.ask(Q2).answer == "$142.6 million"
        postgres_server().restart()  # every pooled connection is closed under the process
        assert chat.ask("And in Q3?").answer == "$151.9 million"
        assert [m.type for m in chat.history()] == ["human", "ai", "human", "ai"]
        assert [t["turns"] for t in sg.threads()] == [2]
        assert sg.delete_thread("live") and sg.threads() == []
        assert not sg.delete_thread("live")


def test_workers_starting_together_create_the_tables_once(pg_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: PostgresCheckpoints(pg_url, max_size=2), range(4)))
    try:
        assert all(s.threads() == [] for s in stores)
    finally:
        for s in stores:
            s.close()


def test_an_unreachable_server_is_one_error_naming_it_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://app:s3cret@127.0.0.1:{closed_port()}/chat"
    with pytest.raises(StoreUnavailable) as err:
        PostgresCheckpoints(url)
    assert f"postgresql://app:***@127.0.0.1:{url.split(':')[3]}" in str(err.value) and "s3cret" not in str(err.value)
    proc = run_cli("--store", str(tmp_path), "threads", env={"STRATAGRAPH_CHECKPOINTER": url})
    assert proc.returncode == 1 and "cannot use the PostgreSQL checkpointer" in proc.stderr and "s3cret" not in proc.stderr
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


def test_a_checkpointer_that_is_not_postgres_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("--store", str(tmp_path), "threads", env={"STRATAGRAPH_CHECKPOINTER": "mysql://u:pw@host/db"})
    assert proc.returncode == 2 and "checkpointer must be a postgresql:// URL" in proc.stderr and "pw" not in proc.stderr

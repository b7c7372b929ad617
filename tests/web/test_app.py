"""``stratagraph serve``'s HTTP API over a real server process: bad input is a 400 naming the problem, an unknown
id a 404; off loopback it needs a token (header, or the cookie a ``?token=`` visit sets); a turn streams its
node events before the answer; with ``STRATAGRAPH_CHECKPOINTER`` the threads live in PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import httpx

from tests.processes import cli_args, running, server_env

QUESTION = "What was Northwind Robotics' revenue in the second quarter of 2024?"


def _turn(client: httpx.Client, base: str, thread: str, message: str) -> list[dict]:
    with client.stream("POST", f"{base}/api/threads/{thread}/messages", json={"message": message}, timeout=300) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(line) for line in r.iter_lines() if line]


def test_bad_input_and_unknown_ids(page_store: Path) -> None:
    with running(page_store, "serve") as base, httpx.Client(timeout=60) as client:
        for method, path, body, status, problem in [
            ("GET", "/api/tree?doc=../../etc/passwd", None, 404, "no document '../../etc/passwd' in the store"),
            ("GET", "/api/tree", None, 400, "missing query parameter 'doc'"),
            ("GET", "/api/chunk?id=nope", None, 404, "no chunk 'nope' in the store"),
            ("GET", "/api/threads/bad%20id", None, 400, "thread id 'bad id'"),
            ("POST", "/api/threads/t1/messages", {"message": "  "}, 400, "the message is empty"),
            ("POST", "/api/threads/t1/messages", {"text": "hi"}, 400, "the message is empty"),
            ("POST", "/api/threads/t1/messages", {"message": "x" * 5000}, 400, "longer than 4000 characters"),
            ("DELETE", "/api/threads/never-was", None, 404, "unknown thread 'never-was'"),
        ]:
            r = client.request(method, base + path, json=body)
            assert (r.status_code, problem in r.json()["error"]) == (status, True), (path, r.text)
        bad_json = client.post(f"{base}/api/threads/t1/messages", content=b"{not json", headers={"content-type": "application/json"})
        assert bad_json.status_code == 400 and "must be JSON" in bad_json.json()["error"]
        events = _turn(client, base, "t1", QUESTION)
        kinds = [e["type"] for e in events]
        assert kinds[-1] == "answer" and kinds.count("node") >= 3 and kinds.index("node") < kinds.index("answer")
        final = events[-1]
        assert final["answer"]["answer"] == "$142.6 million"
        assert {n["kind"] for n in final["graph"]["nodes"]} >= {"Chunk", "Entity", "Step", "Answer"}
        assert client.get(f"{base}/api/threads").json()[0]["thread_id"] == "t1"
        turns = client.get(f"{base}/api/threads/t1").json()["turns"]
        assert turns[0]["message"] == QUESTION and turns[0]["answer"]["answer"] == "$142.6 million"
        assert client.delete(f"{base}/api/threads/t1").json() == {"deleted": "t1"}


def test_off_loopback_the_page_needs_the_token(page_store: Path) -> None:
    proc = subprocess.run(cli_args(page_store, "serve", "--host", "0.0.0.0"), env=server_env(), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 2 and "set STRATAGRAPH_HTTP_TOKEN" in proc.stderr
    token = uuid.uuid4().hex
    with running(page_store, "serve", host="0.0.0.0", env={"STRATAGRAPH_HTTP_TOKEN": token}) as base:
        assert httpx.get(base + "/").status_code == 401
        assert httpx.get(base + "/api/stats", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert httpx.get(base + "/?token=nope").status_code == 401
        assert httpx.get(base + "/api/stats", headers={"Authorization": f"Bearer {token}"}).json()["nodes"]["Document"] == 8
        with httpx.Client(follow_redirects=True) as browser:  # a browser opens the link once, then the cookie carries the token
            visit = browser.get(base + f"/?token={token}")
            assert visit.status_code == 200 and "<title>stratagraph</title>" in visit.text
            assert browser.get(base + "/api/documents").status_code == 200


def test_threads_in_postgres(page_store: Path) -> None:
    from tests.graph_store.postgres import postgres_server

    url = postgres_server().create_database("w" + uuid.uuid4().hex[:12])
    with running(page_store, "serve", env={"STRATAGRAPH_CHECKPOINTER": url}) as base, httpx.Client(timeout=60) as client:
        assert _turn(client, base, "pg-thread", QUESTION)[-1]["answer"]["answer"] == "$142.6 million"
        assert _turn(client, base, "pg-thread", "And in Q3?")[-1]["answer"]["answer"] == "$151.9 million"
    proc = subprocess.run(cli_args(page_store, "threads", "--json"), env=server_env(STRATAGRAPH_CHECKPOINTER=url),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert [(t["thread_id"], t["turns"]) for t in json.loads(proc.stdout)["threads"]] == [("pg-thread", 2)]
    assert not (page_store / "checkpoints.sqlite").exists()

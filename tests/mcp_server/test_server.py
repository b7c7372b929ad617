"""``stratagraph mcp`` driven by the official SDK's own client, over stdio and over streamable HTTP: the same
tools (read tools, every answering workflow with the Answer as structured content) and resources (documents,
sections) on both; bearer tokens off loopback; ingest and delete only inside the allowed folders;
``read_cypher`` on the Neo4j backend."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from stratagraph import Settings, StrataGraph
from stratagraph.answers import Answer
from stratagraph.mcp_server import ASK_TOOLS
from stratagraph.tools import TOOL_NAMES
from tests.mcp_server.servers import http_server, http_session, mcp_args, server_env, stdio_session

QUESTION = "How much more does the Police Department request than the Fire Department?"
BUDGET = "examples/budget/riverton_city_budget_fy2025.md"


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


async def _exercise(session: ClientSession, examples_home: Path) -> None:
    """What every transport must serve, checked against the store itself."""
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {*TOOL_NAMES, *ASK_TOOLS}  # no ingest or delete without allowed folders; no read_cypher on SQLite
    assert tools["ask_kag"].outputSchema and "citations" in tools["ask_kag"].outputSchema["properties"]
    assert tools["search_chunks"].inputSchema["properties"]["query"]["type"] == "string"
    assert tools["search_chunks"].annotations.readOnlyHint

    result = await session.call_tool("ask_kag", {"question": QUESTION})
    assert not result.isError
    answer = Answer.model_validate(result.structuredContent)
    assert answer.found and answer.strategy == "kag" and answer.computed is not None
    assert answer.answer in _text(result) and "[1]" in _text(result)  # the text a model reads: answer + citations
    with StrataGraph(Settings(home=examples_home)) as sg:
        assert answer.check(lambda cid: (n := sg.graph.get_node(cid)) and str(n.props.get("text"))) == []
        expected = sg.ask(QUESTION, "kag")
    assert answer.answer == expected.answer and [c.quote for c in answer.citations] == [c.quote for c in expected.citations]

    routed = await session.call_tool("ask_auto", {"question": "What was Northwind Robotics' revenue in the second quarter of 2024?"})
    assert Answer.model_validate(routed.structuredContent).answer == "$142.6 million"

    found = await session.call_tool("search_chunks", {"query": "police overtime", "k": 2})
    assert not found.isError and "1.1.1 Police Department" in _text(found)
    bad = await session.call_tool("expand_entity", {"entity": "no such entity anywhere 12345"})
    assert bad.isError or "no entity" in _text(bad).lower()
    empty = await session.call_tool("ask_hybrid", {"question": "   "})
    assert empty.isError and "the question is empty" in _text(empty)

    listed = {str(r.uri): r for r in (await session.list_resources()).resources}
    doc_uri = f"stratagraph://documents/{quote(BUDGET, safe='')}"
    assert {"stratagraph://stats", "stratagraph://documents", doc_uri} <= set(listed)
    docs = json.loads((await session.read_resource("stratagraph://documents")).contents[0].text)
    assert {d["id"] for d in docs} >= {BUDGET} and all(d["uri"] in listed for d in docs)
    stats = json.loads((await session.read_resource("stratagraph://stats")).contents[0].text)
    assert stats["nodes"]["Document"] == len(docs)
    text = (await session.read_resource(doc_uri)).contents[0].text
    assert "# City of Riverton Adopted Budget, Fiscal Year 2025" in text and "### 1.1.1 Police Department" in text
    section = (await session.read_resource(f"stratagraph://sections/{quote(BUDGET + '::s1.1.1', safe='')}")).contents[0].text
    assert section.startswith("# 1. General Fund > 1.1 Public Safety > 1.1.1 Police Department\n") and "$18.6 million" in section
    with pytest.raises(McpError, match="no document 'nope.md'"):
        await session.read_resource("stratagraph://documents/nope.md")


def test_the_sdk_client_over_stdio(examples_home: Path) -> None:
    async def main() -> None:
        async with stdio_session(examples_home) as session:
            await _exercise(session, examples_home)

    anyio.run(main)


def test_the_sdk_client_over_streamable_http(examples_home: Path) -> None:
    async def main(url: str) -> None:
        async with http_session(url) as session:
            await _exercise(session, examples_home)

    with http_server(examples_home) as url:
        anyio.run(main, url)


def test_off_loopback_the_server_needs_a_token(examples_home: Path) -> None:
    proc = subprocess.run(mcp_args(examples_home, "--transport", "http", "--host", "0.0.0.0"), env=server_env(),
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 2 and "set STRATAGRAPH_HTTP_TOKEN" in proc.stderr and "0.0.0.0" in proc.stderr

    token = "s3cret-token-for-the-test"
    with http_server(examples_home, host="0.0.0.0", env={"STRATAGRAPH_HTTP_TOKEN": token}) as url:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        accept = {"Accept": "application/json, text/event-stream"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            refused = httpx.post(url, json=init, headers={**accept, **headers}, timeout=30)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        assert httpx.post(url, json=init, headers={**accept, "Authorization": f"Bearer {token}"}, timeout=30).status_code == 200

        async def main() -> None:
            async with http_session(url, token) as session:
                assert "ask_kag" in {t.name for t in (await session.list_tools()).tools}
            with pytest.raises(Exception) as failed:  # the SDK's client without the token gets nowhere
                async with http_session(url):
                    pass
            assert "401" in repr(failed.value) or "401" in str(getattr(failed.value, "exceptions", ""))

        anyio.run(main)


def test_ingest_and_delete_only_inside_the_allowed_folders(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "notes" / "a.md").write_text("# Harbor Report\n\nThe Harbor Authority dredged Pier 7 in 2023.\n", encoding="utf-8")
    outside = tmp_path / "private.md"
    outside.write_text("# Private\n\nNot for the agent.\n", encoding="utf-8")
    (docs / "link.md").symlink_to(outside)
    store = tmp_path / "store"

    async def off() -> None:
        async with stdio_session(store) as session:
            names = {t.name for t in (await session.list_tools()).tools}
            assert "ingest" not in names and "delete_document" not in names
            result = await session.call_tool("ingest", {"paths": [str(docs)]})
            assert result.isError and "Unknown tool" in _text(result)

    async def on() -> None:
        async with stdio_session(store, "--allow-folder", str(docs)) as session:
            for path, problem in [
                ("../../etc/passwd", "outside the allowed folders"),
                ("/etc/passwd", "resolves to /etc/passwd, outside the allowed folders"),
                (str(outside), "outside the allowed folders"),
                ("link.md", "outside the allowed folders"),  # a symbolic link out of the folder
                ("notes/missing.md", "does not exist"),
            ]:
                refused = await session.call_tool("ingest", {"paths": [path]})
                assert refused.isError and problem in _text(refused), (path, _text(refused))
                assert str(docs) in _text(refused) or problem == "does not exist"
            done = await session.call_tool("ingest", {"paths": ["notes"]})
            assert not done.isError, _text(done)
            assert done.structuredContent["documents"] == [
                {"source": "notes/a.md", "doc_id": "notes/a.md", "status": "added", "error": None}
            ] and done.structuredContent["failed"] == 0
            answer = await session.call_tool("ask_hybrid", {"question": "What did the Harbor Authority dredge?"})
            assert "dredged Pier 7" in Answer.model_validate(answer.structuredContent).citations[0].quote
            refused = await session.call_tool("delete_document", {"doc_id": "../private.md"})
            assert refused.isError and "does not lie in the allowed folders" in _text(refused)
            missing = await session.call_tool("delete_document", {"doc_id": "notes/b.md"})
            assert missing.isError and "unknown document id" in _text(missing)
            deleted = await session.call_tool("delete_document", {"doc_id": "notes/a.md"})
            assert not deleted.isError and deleted.structuredContent["deleted"] is True
            stats = json.loads((await session.read_resource("stratagraph://stats")).contents[0].text)
            assert stats["nodes"]["Document"] == 0

    anyio.run(off)
    anyio.run(on)
    proc = subprocess.run(mcp_args(store, "--allow-folder", str(tmp_path / "nope")), env=server_env(),
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 2 and "nope: not a folder" in proc.stderr


def test_read_cypher_on_the_neo4j_backend(tmp_path: Path) -> None:
    from tests.graph_store.bolt import bolt_target
    from tests.graph_store.test_contract import load

    target = bolt_target()
    key = str(tmp_path)
    store = target.store(key)
    try:
        load(store)  # the contract suite's documents
    finally:
        store.close()
    env = {"STRATAGRAPH_GRAPH": "neo4j", "NEO4J_URI": target.uri, "NEO4J_USER": target.user,
           "NEO4J_PASSWORD": target.password, "NEO4J_DATABASE": target.database_for(key) or ""}  # fmt: skip

    async def main() -> None:
        async with stdio_session(tmp_path / "store", env=env) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert "read_cypher" in tools
            rows = await session.call_tool("read_cypher", {"query": "MATCH (d:Document) RETURN d.id AS id ORDER BY id"})
            assert not rows.isError and "d1" in _text(rows) and "d2" in _text(rows)
            write = await session.call_tool("read_cypher", {"query": "MATCH (n) DETACH DELETE n"})
            assert write.isError and "DELETE" in _text(write)

    try:
        anyio.run(main)
    finally:
        target.drop(key)
    assert os.environ.get("STRATAGRAPH_GRAPH") != "neo4j"  # the server's settings came from its own environment

"""``read_cypher`` over a real Bolt server (tests/graph_store/bolt.py): parameterised reads return the right
rows, every write form is refused before it is sent, and the graph is unchanged afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException

from stratagraph.graph_store import SQLiteGraphStore
from stratagraph.graph_store.neo4j import Neo4jGraphStore
from stratagraph.retrieval import RetrievalContext
from stratagraph.tools import TOOL_NAMES, get_tool, make_tools
from stratagraph.tools.cypher import vet_cypher
from tests.graph_store.bolt import bolt_target
from tests.graph_store.test_contract import canonical, load


@pytest.fixture(scope="module")
def cypher_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jGraphStore]:
    key = str(tmp_path_factory.mktemp("cypher"))
    store = bolt_target().store(key)
    load(store)  # the contract suite's two documents: Acme report (d1) and Alice profile (d2)
    yield store
    store.close()
    bolt_target().drop(key)


@pytest.fixture(scope="module")
def ctx(cypher_store: Neo4jGraphStore) -> RetrievalContext:
    return RetrievalContext(graph=cypher_store, vectors=None)  # type: ignore[arg-type] - the tool reads no vectors


def call(ctx: RetrievalContext, query: str, parameters: dict[str, Any] | None = None, **extra: Any) -> ToolMessage:
    args = {"query": query, "parameters": parameters or {}, **extra}
    msg = get_tool(ctx, "read_cypher").invoke({"name": "read_cypher", "args": args, "id": "c1", "type": "tool_call"})
    assert isinstance(msg, ToolMessage)
    return msg


READS = [
    pytest.param(
        "MATCH (e:Entity {name: $name})<-[:MENTIONS]-(c:Chunk) RETURN c.id AS chunk ORDER BY chunk",
        {"name": "Alice"},
        [["d1#1#0"], ["d2#1#0"]],
        id="mentions-of-an-entity",
    ),
    pytest.param(
        "MATCH (c:Chunk) WHERE c.text CONTAINS $word OR c.text = 'please DELETE nothing; SET x' "
        "RETURN c.id ORDER BY c.id",
        {"word": "Bob"},
        [["d1#2#0"], ["d2#1#0"]],
        id="delete-inside-a-string-literal",
    ),
    pytest.param(
        "MATCH (d:Document) WHERE d.id IN $docs "
        "CALL { WITH d MATCH (d)-[:HAS_SECTION]->(s:Section) RETURN count(s) AS sections } "
        "RETURN d.id AS doc, sections ORDER BY doc",
        {"docs": ["d1", "d2"]},
        [["d1", 2], ["d2", 1]],
        id="read-only-call-subquery",
    ),
    pytest.param(
        "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.predicate = $p RETURN a.name, b.name, r.weight",
        {"p": "knows"},
        [["Alice", "Bob", 1.0]],
        id="relationship-property",
    ),
    pytest.param(
        "// sections below the top level\nMATCH (s:Section) WHERE s.level >= $level RETURN s.id, s.title ORDER BY s.id",
        {"level": 2},
        [["d1::sA.1", "Engineers"]],
        id="comment-and-numeric-parameter",
    ),
    pytest.param(
        "match (e:Entity {id: $id})-[:IN_FACT]->(f:Fact)-[:SUPPORTED_BY]->(c:Chunk) return f.description, c.doc_ids",
        {"id": "ent:alice"},
        [["Alice founded Acme", ["d1"]]],
        id="two-hops-lower-case",
    ),
]


@pytest.mark.parametrize(("query", "parameters", "rows"), READS)
def test_read_cypher_returns_the_rows(ctx: RetrievalContext, query: str, parameters: dict, rows: list) -> None:
    msg = call(ctx, query, parameters)
    assert msg.status == "success", msg.content
    assert msg.artifact["rows"] == rows and msg.artifact["truncated"] is False
    assert f"({len(rows)} row" in msg.content


def test_read_cypher_limits_rows_and_reports_query_errors(ctx: RetrievalContext) -> None:
    msg = call(ctx, "MATCH (c:Chunk) RETURN c.id ORDER BY c.id", limit=2)
    assert msg.status == "success" and msg.artifact["rows"] == [["d1#1#0"], ["d1#1#1"]] and msg.artifact["truncated"]
    assert "more rows were cut" in msg.content
    node = call(ctx, "MATCH (n:Entity {id: $id}) RETURN n", {"id": "ent:bob"}).artifact["rows"][0][0]
    assert node["props"] == {"name": "Bob"} and "Entity" in node["labels"]  # props JSON parsed back
    broken = call(ctx, "MATCH (n RETURN n")
    assert broken.status == "error" and "The query failed" in broken.content


WRITES = [
    ("CREATE (n:Node {id: $id})", "CREATE"),
    ("MERGE (n:Node {id: $id}) RETURN n", "MERGE"),
    ("MATCH (n:Node {id: $id}) SET n.x = 1", "SET"),
    ("MATCH (n:Node {id: $id}) DELETE n", "DELETE"),
    ("MATCH (n:Node {id: $id}) DETACH DELETE n", "DETACH"),
    ("MATCH (n:Node {id: $id}) REMOVE n.label", "REMOVE"),
    ("DROP CONSTRAINT stratagraph_node_id", "DROP"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD"),
    ("MATCH (n:Entity) FOREACH (x IN [1] | SET n.y = x)", "FOREACH"),
    ("MATCH (n:Entity) CALL { WITH n DETACH DELETE n } RETURN count(*)", "DETACH"),
    ("MATCH (n:Entity) CALL { WITH n SET n.hacked = true } IN TRANSACTIONS", "SET"),
    ("CALL apoc.cypher.doIt('MATCH (n) DETACH DELETE n', {})", "apoc.cypher.doIt"),
    ("CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})", "apoc.periodic.iterate"),
    ("CALL dbms.components()", "dbms.components"),
    ("CALL `dbms`.`security`.`createUser`('x', 'y', false)", "dbms.security.createUser"),
    ("RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) DETACH DELETE n RETURN 1', {})", "apoc.cypher"),
    ("MATCH (n) // only reading, promise\nDETACH DELETE n", "DETACH"),
    ("MATCH (n) /* harmless */ detach delete n", "detach"),
    ("match (n) set n.x = 1", "set"),
    ("MATCH (n) RETURN n; MATCH (m) DETACH DELETE m", "one statement"),
    ("MATCH (n) WHERE n.text = 'unterminated RETURN n", "cannot be read safely"),
]


@pytest.mark.parametrize(("query", "why"), WRITES, ids=[w[1] + str(i) for i, w in enumerate(WRITES)])
def test_read_cypher_refuses_writes_before_sending(
    ctx: RetrievalContext, cypher_store: Neo4jGraphStore, query: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ToolException, match="Refused") as err:
        vet_cypher(query)
    assert why in str(err.value)
    before = canonical(cypher_store.export())
    sent: list[str] = []
    monkeypatch.setattr(Neo4jGraphStore, "run_read", lambda self, q, *a, **k: sent.append(q))
    monkeypatch.setattr(Neo4jGraphStore, "explain_is_read_only", lambda self, q, *a, **k: sent.append(q))
    msg = call(ctx, query, {"id": "ent:alice"})
    assert msg.status == "error" and "Refused" in msg.content and sent == []  # nothing reached the server
    monkeypatch.undo()
    assert canonical(cypher_store.export()) == before


def test_read_cypher_export_unchanged_after_every_refusal(ctx: RetrievalContext, cypher_store: Neo4jGraphStore) -> None:
    before = canonical(cypher_store.export())
    generation = cypher_store.generation()
    for query, _ in WRITES:
        assert call(ctx, query, {"id": "ent:alice"}).status == "error"
    for query, parameters, _ in (p.values for p in READS):
        assert call(ctx, query, parameters).status == "success"
    assert canonical(cypher_store.export()) == before and cypher_store.generation() == generation


def test_read_cypher_uses_explain_where_the_server_reports_it(
    ctx: RetrievalContext, cypher_store: Neo4jGraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Neo4jGraphStore, "explain_is_read_only", lambda self, q, p=None: False)
    msg = call(ctx, "MATCH (n:Entity) RETURN n.id")
    assert msg.status == "error" and "EXPLAIN says this query writes" in msg.content


def test_read_cypher_is_offered_only_on_a_cypher_backend(ctx: RetrievalContext, tmp_path: Path) -> None:
    assert [t.name for t in make_tools(ctx)] == [*TOOL_NAMES, "read_cypher"]
    sqlite = SQLiteGraphStore(tmp_path / "g.sqlite")
    try:
        plain = RetrievalContext(graph=sqlite, vectors=None)  # type: ignore[arg-type]
        assert "read_cypher" not in [t.name for t in make_tools(plain)]
        msg = get_tool(plain, "read_cypher").invoke(
            {"name": "read_cypher", "args": {"query": "MATCH (n) RETURN n"}, "id": "c2", "type": "tool_call"}
        )
        assert msg.status == "error" and "Cypher graph backend" in msg.content
    finally:
        sqlite.close()

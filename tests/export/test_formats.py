"""``stratagraph export --format graphml|gexf|cypher``: each format is read back by a real consumer (networkx
for GraphML and GEXF, igraph for GraphML, a Bolt server for the Cypher) into the graph it was written from,
and each is byte-identical for the same graph whatever the order documents were ingested in."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from stratagraph.export import FORMATS, render
from stratagraph.export.cypher import cypher_literal
from tests.conftest import canonical, run_cli

#: a dump with the awkward cases: a control character, quotes, a backslash, a newline, mixed-type props,
#: a nested prop, a prop named like a fixed column, parallel edges
CRAFTED = {
    "nodes": [
        {"id": "d1", "label": "Document", "doc_ids": ["d1"], "props": {"title": "It's a \"test\"\\ \x0c page", "year": 2024}},
        {"id": "d1#0#0", "label": "Chunk", "doc_ids": ["d1"],
         "props": {"text": "line one\nline 'two'", "year": 2024.5, "flag": True, "label": "own", "meta": {"a": [1, 2]}}},
    ],
    "edges": [
        {"id": "e1", "type": "HAS_CHUNK", "src": "d1", "dst": "d1#0#0", "key": "", "weight": 1.0, "doc_ids": ["d1"], "props": {}},
        {"id": "e2", "type": "RELATED", "src": "d1", "dst": "d1#0#0", "key": "cites", "weight": 0.5, "doc_ids": ["d1"],
         "props": {"predicate": "cites"}},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def examples_export(examples_home: Path) -> dict:
    proc = run_cli("--store", str(examples_home), "export", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
def test_xml_formats_read_back_into_the_same_graph(examples_home: Path, examples_export: dict, fmt: str, tmp_path: Path) -> None:
    proc = run_cli("--store", str(examples_home), "export", "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / f"graph.{fmt}"
    path.write_text(proc.stdout, encoding="utf-8")
    g = nx.read_graphml(path) if fmt == "graphml" else nx.read_gexf(path)
    assert sorted(g.nodes) == [n["id"] for n in examples_export["nodes"]]
    assert g.number_of_edges() == len(examples_export["edges"])
    chunk = next(n for n in examples_export["nodes"] if n["label"] == "Chunk")
    data = g.nodes[chunk["id"]]
    assert data["node_label"] == "Chunk" and data["text"] == chunk["props"]["text"]
    assert json.loads(data["doc_ids"]) == chunk["doc_ids"]
    assert json.loads(data["heading_path"]) == chunk["props"]["heading_path"]
    weighted = next(e for e in examples_export["edges"] if e["type"] == "SIMILAR")
    found = [d for _, _, d in g.edges(weighted["src"], data=True) if d["type"] == "SIMILAR" and d.get("id", weighted["id"]) == weighted["id"]]
    assert found and isinstance(found[0]["weight"], float) and found[0]["weight"] == weighted["weight"]


def test_graphml_reads_in_igraph(examples_export: dict, tmp_path: Path) -> None:
    import igraph

    path = tmp_path / "graph.graphml"
    path.write_text(render(examples_export, "graphml"), encoding="utf-8")
    g = igraph.Graph.Read_GraphML(str(path))
    assert (g.vcount(), g.ecount()) == (len(examples_export["nodes"]), len(examples_export["edges"]))
    assert g.is_directed()


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
def test_awkward_values_stay_valid_and_typed(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"crafted.{fmt}"
    path.write_text(render(CRAFTED, fmt), encoding="utf-8")
    g = nx.read_graphml(path) if fmt == "graphml" else nx.read_gexf(path)
    doc, chunk = g.nodes["d1"], g.nodes["d1#0#0"]
    assert doc["title"] == "It's a \"test\"\\ \ufffd page"  # the form feed XML cannot hold is replaced
    assert chunk["text"] == "line one\nline 'two'"
    assert chunk["year"] == 2024.5 and isinstance(doc["year"], float)  # one column: int and float -> double
    assert chunk["flag"] is True
    assert chunk["prop_label"] == "own" and chunk["node_label"] == "Chunk"
    assert json.loads(chunk["meta"]) == {"a": [1, 2]}
    assert g.number_of_edges() == 2  # parallel edges kept


def test_cypher_literals_escape_what_cypher_needs() -> None:
    assert cypher_literal("it's a \\ \"x\"\n\x01") == "'it\\'s a \\\\ \"x\"\\n\\u0001'"
    assert cypher_literal({"ok": 1, "not ok": [True, None, 1.5]}) == "{ok: 1, `not ok`: [true, null, 1.5]}"


def test_cypher_loads_into_a_bolt_server_as_the_same_store(examples_export: dict, tmp_path: Path) -> None:
    """Every statement runs on a real Bolt server; the Neo4j backend then reads the database as a store whose
    export is the one the statements were written from."""
    import neo4j

    from tests.graph_store.bolt import bolt_target

    target = bolt_target()
    key = str(tmp_path)
    database = target.database_for(key)
    script = "".join(line for line in render(examples_export, "cypher").splitlines(True) if not line.startswith("//"))
    statements = [s for s in script.split(";\n") if s.strip()]  # a literal's newlines are escaped: ";\n" ends one
    assert len(statements) > 10 and statements[0].startswith("CREATE CONSTRAINT")
    try:
        with neo4j.GraphDatabase.driver(target.uri, auth=(target.user, target.password)) as driver:
            with driver.session(database=database) as session:
                for statement in statements:
                    try:
                        session.run(statement).consume()
                    except neo4j.exceptions.Neo4jError as exc:
                        if "CONSTRAINT" not in statement:  # a server without constraints still loads the data
                            raise AssertionError(f"{exc}\n{statement[:300]}") from exc
        store = target.store(key)
        try:
            assert canonical(store.export()) == canonical(examples_export)
        finally:
            store.close()
    finally:
        target.drop(key)


def _ingest(home: Path, files: list[Path], base: Path) -> None:
    proc = run_cli("--store", str(home), "ingest", *map(str, files), "--base", str(base))
    assert proc.returncode == 0, proc.stderr


def test_every_format_is_byte_identical_for_the_same_graph(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    a = docs / "alpha.md"
    a.write_text("# Alpha Report\n\nAcme Corp hired Jane Doe in 2021. Revenue was $4.2 million.\n", encoding="utf-8")
    b = docs / "beta.md"
    b.write_text("# Beta Notes\n\nJane Doe leads Acme Corp's research in Berlin.\n", encoding="utf-8")
    _ingest(tmp_path / "s1", [a, b], docs)
    _ingest(tmp_path / "s2", [b], docs)
    _ingest(tmp_path / "s2", [a], docs)
    for fmt in FORMATS:
        one = run_cli("--store", str(tmp_path / "s1"), "export", "--format", fmt)
        two = run_cli("--store", str(tmp_path / "s2"), "export", "--format", fmt)
        assert one.returncode == two.returncode == 0
        assert one.stdout and one.stdout == two.stdout, fmt


def test_bad_format_arguments_are_usage_errors(examples_home: Path) -> None:
    proc = run_cli("--store", str(examples_home), "export", "--format", "xml")
    assert proc.returncode == 2 and "--format 'xml': choose from json, graphml, gexf, cypher" in proc.stderr
    proc = run_cli("--store", str(examples_home), "export", "--format", "gexf", "--json")
    assert proc.returncode == 2 and "give one" in proc.stderr
    assert run_cli("--store", str(examples_home), "export", "--format", "json").stdout.startswith("{")

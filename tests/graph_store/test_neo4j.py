"""The Neo4j backend beyond the shared contract: settings, clear errors, and a server that dies mid-ingest.

Runs on the session's Bolt server (tests/graph_store/bolt.py: a local ArcadeDB, or the empty Neo4j that
NEO4J_URI names; the server-restart test needs the local one)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.graph_store import StoreUnavailable, open_graph_store
from stratagraph.graph_store.arcadedb import free_port
from stratagraph.graph_store.neo4j import Neo4jGraphStore
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel
from tests.conftest import EXAMPLES, canonical
from tests.graph_store.bolt import TEST_RETRY_SECONDS, BoltTarget, bolt_target


@pytest.fixture
def target(tmp_path: Path) -> Iterator[BoltTarget]:
    t = bolt_target()
    yield t
    for key in list(t._created):
        if key.startswith(str(tmp_path)):
            t.drop(key)


def _settings(target: BoltTarget, home: Path, key: str) -> Settings:
    return Settings(
        home=home,
        graph="neo4j",
        neo4j_uri=target.uri,
        neo4j_user=target.user,
        neo4j_password=target.password,
        neo4j_database=target.database_for(key),
        neo4j_max_retry_time=TEST_RETRY_SECONDS,
        extract_processes=1,
    )


def test_settings_open_the_neo4j_store(target: BoltTarget, tmp_path: Path) -> None:
    settings = _settings(target, tmp_path / "home", str(tmp_path))
    if target.arcadedb is not None:  # the local server knows the databases it holds
        assert target.arcadedb.has_database(settings.neo4j_database) and not target.arcadedb.has_database("absent")
    store = open_graph_store(settings)
    try:
        assert isinstance(store, Neo4jGraphStore)
        info = store.info()
        assert info.backend == "neo4j" and target.uri in info.location and info.server
        assert info.capabilities["node_id_unique"] or info.capabilities.get("node_id_index")
        for name, present in info.capabilities.items():  # what is missing is listed
            if not present and name != "node_id_unique":
                assert info.skipped, name
    finally:
        store.close()
    with pytest.raises(StoreUnavailable, match="NEO4J_URI"):
        open_graph_store(Settings(home=tmp_path, graph="neo4j", neo4j_uri=None))


def test_whole_reads_streamed_and_in_keyset_pages_are_the_same(target: BoltTarget, tmp_path: Path) -> None:
    """A label or edge type read whole in one streamed read (the default) or in pages of a few rows each."""
    settings = _settings(target, tmp_path / "home", str(tmp_path))
    streamed = open_graph_store(settings)
    paged = open_graph_store(settings.model_copy(update={"neo4j_page_size": 3}))
    try:
        assert streamed.page_size is None and paged.page_size == 3
        docs = [Node(id=f"d{i:02d}", label=NodeLabel.DOCUMENT, doc_ids=[f"d{i:02d}"], props={"title": f"T{i}"}) for i in range(11)]
        cites = [Edge(type=EdgeType.CITES, src=f"d{i:02d}", dst=f"d{j:02d}", doc_ids=[f"d{i:02d}"], weight=1.0 + j)
                 for i in range(11) for j in (i + 1, i + 3) if j < 11]  # fmt: skip
        streamed.write_batch(nodes=docs, edges=cites)
        nodes = streamed.node_tuples(NodeLabel.DOCUMENT, ["title", "doc_ids"])
        assert nodes == paged.node_tuples(NodeLabel.DOCUMENT, ["title", "doc_ids"])
        assert [n[0] for n in nodes] == [d.id for d in docs] and nodes[4][1] == "T4"
        edges = streamed.keyed_edge_tuples([EdgeType.CITES])
        assert edges == paged.keyed_edge_tuples([EdgeType.CITES]) and len(edges) == len(cites) == 18
        assert streamed.edge_tuples([EdgeType.CITES]) == paged.edge_tuples([EdgeType.CITES])
    finally:
        streamed.close()
        paged.close()


def test_unreachable_server_wrong_credentials_and_missing_database_are_one_clear_line(
    target: BoltTarget, tmp_path: Path
) -> None:
    dead = f"bolt://127.0.0.1:{free_port()}"
    with pytest.raises(StoreUnavailable) as err:
        Neo4jGraphStore(dead, "neo4j", "pw", "db", max_retry_time=0.5, connection_timeout=2)
    assert dead in str(err.value) and "unreachable" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(StoreUnavailable) as err:
        Neo4jGraphStore(target.uri, target.user, target.password + "-wrong", target.database_for(str(tmp_path)))
    assert target.uri in str(err.value) and "credentials" in str(err.value)
    with pytest.raises(StoreUnavailable) as err:
        Neo4jGraphStore(target.uri, target.user, target.password, "no_such_database_here")
    assert target.uri in str(err.value) and "does not exist" in str(err.value)
    with pytest.raises(StoreUnavailable, match="invalid Neo4j URI"):
        Neo4jGraphStore("http://127.0.0.1:1", "neo4j", "pw")


def test_server_stopping_mid_ingest_fails_the_run_and_a_rerun_completes(
    target: BoltTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if target.arcadedb is None:
        pytest.skip("stopping the server needs the local ArcadeDB (NEO4J_URI is set)")
    docs = EXAMPLES / "research"
    clean_settings = _settings(target, tmp_path / "clean", str(tmp_path / "clean"))
    with StrataGraph(clean_settings) as sg:
        assert sg.ingest([docs], base=EXAMPLES.parent).failed == 0
        clean = canonical(sg.export())

    settings = _settings(target, tmp_path / "home", str(tmp_path / "crash"))
    original = Neo4jGraphStore._upsert_edges
    calls = {"n": 0}

    def dying(self: Neo4jGraphStore, tx, edges):  # noqa: ANN001 - the store's own signature
        calls["n"] += 1
        if calls["n"] == 1 and len(edges) > 10:  # inside the first document batch, nodes already sent
            target.arcadedb.stop(kill=True)
        return original(self, tx, edges)

    monkeypatch.setattr(Neo4jGraphStore, "_upsert_edges", dying)
    with StrataGraph(settings) as sg, pytest.raises(StoreUnavailable) as err:
        sg.ingest([docs], base=EXAMPLES.parent)
    assert target.uri in str(err.value) and "unreachable" in str(err.value)
    monkeypatch.setattr(Neo4jGraphStore, "_upsert_edges", original)

    target.arcadedb.start()  # same ports, same databases
    with Neo4jGraphStore(target.uri, target.user, target.password, settings.neo4j_database) as store:
        assert store.export() == {"nodes": [], "edges": []}  # the batch was one transaction: nothing of it
    with StrataGraph(settings) as sg:
        assert sg.ingest([docs], base=EXAMPLES.parent).failed == 0
        assert canonical(sg.export()) == clean


def test_migrate_copies_the_embedded_graph_and_retrieval_ranks_the_same(target: BoltTarget, tmp_path: Path) -> None:
    from tests.conftest import run_cli

    home = tmp_path / "store"
    with StrataGraph(Settings(home=home, extract_processes=1)) as sg:
        assert sg.ingest([EXAMPLES / "research"], base=EXAMPLES.parent).failed == 0
        embedded = canonical(sg.export())
        question = "Which paper measured nighttime cooling under tree canopy?"
        ranked = {s: [e.chunk_id for e in sg.retrieve(question, s, k=5).evidence] for s in ("ppr", "lesegr", "hybrid")}
    env = {
        "NEO4J_URI": target.uri,
        "NEO4J_USER": target.user,
        "NEO4J_PASSWORD": target.password,
        "NEO4J_DATABASE": target.database_for(str(tmp_path)) or "",
    }
    proc = run_cli("migrate", "--to", "neo4j", "--store", str(home), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verified"] is True and report["nodes"] == len(json.loads(embedded)["nodes"])
    again = run_cli("migrate", "--to", "neo4j", "--store", str(home), "--json", env=env)
    assert again.returncode == 1 and "already holds" in json.loads(again.stdout)["error"]
    assert run_cli("migrate", "--to", "neo4j", "--store", str(home), "--resume", env=env).returncode == 0
    assert run_cli("migrate", "--to", "mysql", "--store", str(home), env=env).returncode == 2

    stats = run_cli("stats", "--store", str(home), "--json", env={**env, "STRATAGRAPH_GRAPH": "neo4j"})
    assert stats.returncode == 0, stats.stderr
    backend = json.loads(stats.stdout)["backend"]
    assert backend["backend"] == "neo4j" and target.uri in backend["location"] and "capabilities" in backend
    settings = _settings(target, home, str(tmp_path))
    with StrataGraph(settings) as sg:
        assert canonical(sg.export()) == embedded
        for strategy, ids in ranked.items():
            assert [e.chunk_id for e in sg.retrieve(question, strategy, k=5).evidence] == ids, strategy

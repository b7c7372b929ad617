"""The change feed (``GraphStore.changes_since``) on every backend, and the whole-graph index updated from it.

After random sequences of writes (documents replaced, deleted, written again; entities merged; edges deleted
and re-weighted), the index updated from the previous generation's plus the feed equals one read whole: every
table, column, edge list and key list."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stratagraph.graph_store import GraphStore, SQLiteGraphStore
from stratagraph.graph_store import sqlite as sqlite_module
from stratagraph.retrieval.index import FIELDS, GraphIndex
from stratagraph.schema import EdgeType, NodeLabel
from tests.graph_store.test_contract import BACKENDS, backend, e, kg, load, n, replace, store  # noqa: F401 - fixtures

L, T = NodeLabel, EdgeType


def index_state(ix: GraphIndex) -> dict:
    """Everything an index holds, comparable with ==."""
    out: dict = {}
    for name, value in vars(ix).items():
        if name in ("generation", "updated_from", "renumbered") or name.startswith("_") or name not in GraphIndex.__dataclass_fields__:
            continue
        if isinstance(value, np.ndarray):
            out[name] = value.tolist()
        elif hasattr(value, "ids") and hasattr(value, "pos"):
            out[name] = (list(value.ids), dict(value.pos))
        elif isinstance(value, dict):
            out[name] = {str(k): list(v) for k, v in sorted(value.items()) if len(v)}
        else:
            out[name] = list(value)
    return out


def assert_same_index(updated: GraphIndex, graph: GraphStore) -> None:
    fresh = GraphIndex.from_store(graph)
    assert updated.generation == fresh.generation
    assert index_state(updated) == index_state(fresh)
    for (type_, rows, cols), carried in updated._positions.items():  # edge positions carried through apply
        assert [a.tolist() for a in fresh.edge_positions(type_, getattr(fresh, rows), getattr(fresh, cols))] == [
            a.tolist() for a in updated.edge_positions(type_, getattr(updated, rows), getattr(updated, cols))
        ], (type_, rows, cols)
        assert [a.tolist() for a in fresh._positions[(type_, rows, cols)]] == [a.tolist() for a in carried]


TABLES = ("documents", "sections", "chunks", "entities", "facts")


def read_positions(ix: GraphIndex) -> None:
    """Every edge type's positions between every two tables, so that apply carries them all."""
    for type_ in EdgeType:
        for rows in TABLES:
            for cols in TABLES:
                ix.edge_positions(type_, getattr(ix, rows), getattr(ix, cols))


def step(graph: GraphStore, rng: random.Random, present: set[str]) -> str:
    """One random write; returns what it did."""
    docs = kg()
    choice = rng.choice(["replace", "replace", "delete", "variant", "merge", "edges"])
    if choice == "delete" and present:
        doc = rng.choice(sorted(present))
        graph.delete_document(doc)
        present.discard(doc)
        return f"delete {doc}"
    if choice == "variant":  # a new version of d1: a chunk dropped, one added, an entity retyped, a fact reweighed
        nodes, edges = docs["d1"]
        nodes = [x for x in nodes if x.id != "d1#1#1"] + [
            n("d1#3#0", L.CHUNK, ["d1"], text="Carol joined Acme.", section="Staff", section_id="d1::sA"),
            n("ent:carol", L.ENTITY, ["d1"], name="Carol", type="PERSON"),
            n("fact:joined", L.FACT, ["d1"], description="Carol joined Acme", confidence=rng.choice([0.5, 0.9])),
        ]
        edges = [x for x in edges if "d1#1#1" not in (x.src, x.dst)] + [
            e(T.HAS_CHUNK, "d1::sA", "d1#3#0", ["d1"]),
            e(T.MENTIONS, "d1#3#0", "ent:carol", ["d1"], weight=rng.choice([1.0, 2.0])),
            e(T.MENTIONS, "d1#3#0", "ent:carol", ["d1"], key="openie"),
            e(T.IN_FACT, "ent:carol", "fact:joined", ["d1"]),
            e(T.SUPPORTED_BY, "fact:joined", "d1#3#0", ["d1"]),
        ]
        replace(graph, "d1", nodes, edges)
        present.add("d1")
        return "variant d1"
    if choice == "merge" and "d1" in present:
        graph.merge_nodes("ent:alice", ["ent:bob"])
        return "merge bob into alice"
    if choice == "edges" and present:
        graph.write_batch(
            nodes=[n("ent:zed", L.ENTITY, ["d9"], name="Zed", type=rng.choice(["ORG", "GPE"]))],
            edges=[e(T.RELATED, "ent:zed", "ent:alice", ["d9"], key="k", weight=rng.random())]
            if "ent:alice" in {x[0] for x in graph.node_tuples(L.ENTITY, [])}
            else [],
            delete_edges=[x.id for x in graph.get_edges(types=[T.NEXT])][:1],
        )
        return "edges"
    doc = rng.choice(["d1", "d2"])
    if doc == "d2" and "d1" not in present:
        doc = "d1"  # d2 cites d1: its edges need d1's nodes
    replace(graph, doc, *docs[doc])
    present.add(doc)
    return f"replace {doc}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_index_updated_from_the_feed_equals_a_fresh_one(store: GraphStore, seed: int) -> None:  # noqa: F811
    rng = random.Random(seed)
    present: set[str] = set()
    ix = GraphIndex.from_store(store)
    incremental = 0
    for _ in range(10):
        read_positions(ix)
        what = step(store, rng, present)
        changes = store.changes_since(ix.generation, FIELDS)
        assert changes is not None, what
        assert changes.generation == store.generation()
        ix = ix.apply(changes)
        incremental += 1
        assert_same_index(ix, store)
    assert incremental == 10


def test_feed_lists_writes_and_deletions(store: GraphStore) -> None:  # noqa: F811
    load(store, "d1")
    g1 = store.generation()
    assert store.changes_since(g1, FIELDS) == (g1, {}, [], [], [])
    assert store.changes_since(g1 + 1) is None  # not a generation the store has had
    replace(store, "d2", *kg()["d2"])
    changes = store.changes_since(g1, {"Chunk": ["text", "doc_ids"]})
    assert changes is not None and changes.generation == store.generation()
    assert changes.nodes["Chunk"] == [("d2#1#0", "Alice knows Bob from university.", ["d2"])]
    assert changes.nodes["Entity"] == [("ent:alice",)]  # its provenance grew; fields not asked for this label
    assert sorted(changes.nodes) == ["Chunk", "Document", "Entity", "Section"]
    assert {(x.type, x.src, x.dst, x.key) for x in changes.edges} == {
        (T.HAS_SECTION, "d2", "d2::s1", ""),
        (T.HAS_CHUNK, "d2::s1", "d2#1#0", ""),
        (T.MENTIONS, "d2#1#0", "ent:alice", ""),
        (T.RELATED, "ent:alice", "ent:bob", "knows"),
        (T.CITES, "d2", "d1", ""),
    }
    assert changes.deleted_nodes == [] and changes.deleted_edges == []
    g2 = store.generation()
    store.delete_document("d1")
    gone = store.changes_since(g2)
    assert gone is not None
    assert "d1" in gone.deleted_nodes and "ent:bob" in gone.deleted_nodes and "ent:alice" not in gone.deleted_nodes
    deleted = {(x.type, x.src, x.dst, x.key) for x in gone.deleted_edges}
    assert (T.RELATED, "ent:alice", "ent:bob", "knows") in deleted  # d2's edge, gone with its end
    assert (T.CITES, "d2", "d1", "") in deleted
    assert all(x.weight is None for x in gone.deleted_edges)
    # a deleted document written again is a write, not a deletion
    replace(store, "d1", *kg()["d1"])
    again = store.changes_since(g2)
    assert again is not None and "d1" not in again.deleted_nodes and ("d1",) in again.nodes["Document"]
    assert store.changes_since(g2, limit=3) is None  # more rows changed than the caller wants to read


def test_lease_does_not_enter_the_feed(store: GraphStore) -> None:  # noqa: F811
    from stratagraph.graph_store.base import LeaseRecord

    load(store)
    g = store.generation()
    assert store.swap_lease("writer", None, LeaseRecord("me", 0, 60.0, 0.0))
    assert store.generation() == g
    assert store.changes_since(g) == (g, {}, [], [], [])


def test_another_handle_sees_the_write_through_the_feed(backend: str, tmp_path: Path) -> None:  # noqa: F811
    """Two handles on one store (two processes' view): the reader's index follows the writer's write."""
    reader, writer = BACKENDS[backend](tmp_path), BACKENDS[backend](tmp_path)
    try:
        load(writer, "d1")
        ix = GraphIndex.from_store(reader)
        replace(writer, "d2", *kg()["d2"])
        writer.delete_document("d1")
        changes = reader.changes_since(ix.generation, FIELDS)
        assert changes is not None and "d1" in changes.deleted_nodes
        assert_same_index(ix.apply(changes), reader)
    finally:
        reader.close()
        writer.close()
        if backend == "bolt":
            from tests.graph_store.bolt import bolt_target

            bolt_target().drop(str(tmp_path))


WRITER = r"""
import sys
from stratagraph.graph_store.sqlite import SQLiteGraphStore
from tests.graph_store.test_contract import kg, replace
with SQLiteGraphStore(sys.argv[1]) as store:
    replace(store, "d2", *kg()["d2"])
    store.delete_document("d1")
"""


def test_sqlite_feed_sees_another_process(tmp_path: Path) -> None:
    path = tmp_path / "graph.sqlite"
    with SQLiteGraphStore(path) as graph:
        load(graph, "d1")
        ix = GraphIndex.from_store(graph)
        root = Path(__file__).resolve().parents[2]
        subprocess.run([sys.executable, "-c", WRITER, str(path)], check=True, cwd=root, env={"PYTHONPATH": str(root)})
        changes = graph.changes_since(ix.generation, FIELDS)
        assert changes is not None and changes.generation == graph.generation() == ix.generation + 2
        assert_same_index(ix.apply(changes), graph)


def test_pruned_feed_falls_back_to_a_full_read(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from stratagraph.graph_store import neo4j as neo4j_module

    monkeypatch.setattr(sqlite_module, "TOMBSTONE_ROWS", 8)
    monkeypatch.setattr(neo4j_module, "TOMBSTONE_ROWS", 8)
    graph = store
    load(graph)
    old = GraphIndex.from_store(graph)
    graph.delete_document("d2")  # 5 edges and 3 nodes: within the bound
    assert graph.changes_since(old.generation) is not None
    graph.write_batch(delete_edges=[x.id for x in graph.get_edges(types=[T.NEXT])][:1])  # past it: pruned
    assert graph.changes_since(old.generation) is None
    if isinstance(graph, SQLiteGraphStore):
        assert graph._conn().execute("SELECT COUNT(*) FROM tombstones").fetchone()[0] <= 8
    else:
        assert graph._read(lambda tx: tx.run(f"MATCH (t:{neo4j_module.TOMB}) RETURN count(t)").single()[0]) <= 8
    reads: list[int] = []
    real = GraphIndex.from_store.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(GraphIndex, "from_store", classmethod(lambda cls, g: reads.append(1) or real(cls, g)))
    fresh = GraphIndex.updated(old, graph)
    assert reads == [1]
    assert fresh.generation == graph.generation() and fresh.documents.ids == ["d1"]
    # from the generation the pruning kept, the feed answers again
    graph.write_batch(nodes=[n("ent:zed", L.ENTITY, ["d1"], name="Zed")])
    assert graph.changes_since(fresh.generation) is not None
    assert_same_index(GraphIndex.updated(fresh, graph), graph)
    assert reads == [1, 1]  # the check above read whole once; updated() did not


def test_sqlite_large_change_reads_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SQLiteGraphStore(tmp_path / "graph.sqlite") as graph:
        load(graph, "d1")
        old = GraphIndex.from_store(graph)
        replace(graph, "d2", *kg()["d2"])  # 9 rows written against 25 in the index: over a quarter
        calls: list[int | None] = []
        real = graph.changes_since
        monkeypatch.setattr(graph, "changes_since", lambda g, f=None, limit=None: calls.append(limit) or real(g, f, limit))
        assert_same_index(GraphIndex.updated(old, graph), graph)
        assert calls == [6] and real(old.generation, limit=6) is None


def test_sqlite_store_of_schema_1_is_migrated(tmp_path: Path) -> None:
    """A store written before the feed existed: rows get generation 0, the feed starts where it was opened."""
    path = tmp_path / "graph.sqlite"
    with SQLiteGraphStore(path) as graph:
        load(graph)
        before = graph.export()
        generation = graph.generation()
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP INDEX nodes_gen; DROP INDEX edges_gen; ALTER TABLE nodes DROP COLUMN gen; ALTER TABLE edges DROP COLUMN gen;"
        "DROP TABLE tombstones; DELETE FROM meta WHERE key = 'feed_floor'; UPDATE meta SET value = 1 WHERE key = 'schema_version';"
    )
    conn.close()
    with SQLiteGraphStore(path) as graph:
        assert graph.export() == before and graph.generation() == generation
        assert graph.changes_since(generation - 1) is None  # before the migration: unknown
        ix = GraphIndex.from_store(graph)
        graph.delete_document("d2")
        changes = graph.changes_since(generation, FIELDS)
        assert changes is not None and "d2" in changes.deleted_nodes
        assert_same_index(ix.apply(changes), graph)
        cols = {r[1] for r in graph._conn().execute("PRAGMA table_info(nodes)")}
        assert "gen" in cols

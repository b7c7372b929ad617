"""The GraphStore contract: every backend passes this one suite (add a backend to ``BACKENDS``).

The protocol is narrow (``graph_store/base.py``): batched writes, reads by id and by label, the light
``node_tuples`` / ``edge_tuples``, counts, export and ``generation``. Graph algorithms and BM25 run over the
shared retrieval index and are tested in ``tests/retrieval/``."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stratagraph.graph_store import DeleteSummary, DocumentNotFound, DocumentVersion, GraphStore, SQLiteGraphStore
from stratagraph.schema import ALL_EDGE_TYPES, ALL_LABELS, Edge, EdgeType, Node, NodeLabel, edge_id
from tests.graph_store.bolt import bolt_store, bolt_target

L, T = NodeLabel, EdgeType


def _sqlite(tmp_path: Path) -> GraphStore:
    return SQLiteGraphStore(tmp_path / "graph.sqlite")


#: every backend, by name: a factory giving a store on the database of ``tmp_path`` (the same path, the same
#: database). "bolt" is the Neo4j backend on a real Bolt server (tests/graph_store/bolt.py: a local ArcadeDB
#: started once per session, or the Neo4j that NEO4J_URI names).
BACKENDS: dict[str, Callable[[Path], GraphStore]] = {"sqlite": _sqlite, "bolt": bolt_store}


def _release(name: str, *paths: Path) -> None:
    """After a test: drop the Bolt databases it created (a local ArcadeDB keeps one per test)."""
    if name == "bolt":
        for path in paths:
            bolt_target().drop(str(path))


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, tmp_path: Path) -> Iterator[GraphStore]:
    s = BACKENDS[backend](tmp_path)
    yield s
    s.close()
    _release(backend, tmp_path)


def canonical(export: dict) -> str:
    return json.dumps(export, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def n(id_: str, label: NodeLabel, docs: list[str], **props: object) -> Node:
    return Node(id=id_, label=label, doc_ids=docs, props=props)


def e(
    type_: EdgeType, src: str, dst: str, docs: list[str], key: str = "", weight: float = 1.0, **props: object
) -> Edge:
    return Edge(type=type_, src=src, dst=dst, key=key, weight=weight, doc_ids=docs, props=props)


def kg() -> dict[str, tuple[list[Node], list[Edge]]]:
    """A small two-document graph: structure, chunks and a knowledge layer sharing the entity Alice."""
    d1, d2 = ["d1"], ["d2"]
    doc1 = [
        n("d1", L.DOCUMENT, d1, title="Acme report", content_hash="h1"),
        n("d1::sB", L.SECTION, d1, title="Overview", level=1, order=0),
        n("d1::sA", L.SECTION, d1, title="Staff", level=1, order=1),
        n("d1::sA.1", L.SECTION, d1, title="Engineers", level=2, order=2),
        n("d1#1#0", L.CHUNK, d1, text="Alice founded Acme, a graph database company.", section="Overview"),
        n("d1#1#1", L.CHUNK, d1, text="Acme sells storage engines.", section="Overview"),
        n("d1#2#0", L.CHUNK, d1, text="Bob builds the query planner.", section="Staff"),
        n("ent:alice", L.ENTITY, d1, name="Alice"),
        n("ent:acme", L.ENTITY, d1, name="Acme"),
        n("ent:bob", L.ENTITY, d1, name="Bob"),
        n("fact:founded", L.FACT, d1, description="Alice founded Acme"),
    ]
    edges1 = [
        e(T.HAS_SECTION, "d1", "d1::sB", d1),
        e(T.HAS_SECTION, "d1", "d1::sA", d1),
        e(T.HAS_SECTION, "d1::sA", "d1::sA.1", d1),
        e(T.HAS_CHUNK, "d1::sB", "d1#1#0", d1),
        e(T.HAS_CHUNK, "d1::sB", "d1#1#1", d1),
        e(T.HAS_CHUNK, "d1::sA", "d1#2#0", d1),
        e(T.NEXT, "d1#1#0", "d1#1#1", d1),
        e(T.NEXT, "d1#1#1", "d1#2#0", d1),
        e(T.MENTIONS, "d1#1#0", "ent:alice", d1),
        e(T.MENTIONS, "d1#1#0", "ent:acme", d1),
        e(T.MENTIONS, "d1#2#0", "ent:bob", d1),
        e(T.IN_FACT, "ent:alice", "fact:founded", d1),
        e(T.IN_FACT, "ent:acme", "fact:founded", d1),
        e(T.SUPPORTED_BY, "fact:founded", "d1#1#0", d1),
    ]
    doc2 = [
        n("d2", L.DOCUMENT, d2, title="Alice profile", content_hash="h2"),
        n("d2::s1", L.SECTION, d2, title="Alice", level=1, order=0),
        n("d2#1#0", L.CHUNK, d2, text="Alice knows Bob from university.", section="Alice"),
        n("ent:alice", L.ENTITY, d2, name="Alice"),
    ]
    edges2 = [
        e(T.HAS_SECTION, "d2", "d2::s1", d2),
        e(T.HAS_CHUNK, "d2::s1", "d2#1#0", d2),
        e(T.MENTIONS, "d2#1#0", "ent:alice", d2),
        e(T.RELATED, "ent:alice", "ent:bob", d2, key="knows", predicate="knows"),
        e(T.CITES, "d2", "d1", d2),
    ]
    return {"d1": (doc1, edges1), "d2": (doc2, edges2)}


def replace(store: GraphStore, doc_id: str, nodes: list[Node], edges: list[Edge]) -> DeleteSummary:
    """One document's new version (``replace_documents`` with one version)."""
    (summary,) = store.replace_documents([DocumentVersion(doc_id=doc_id, nodes=nodes, edges=edges)])
    return summary


def load(store: GraphStore, *docs: str) -> None:
    graph = kg()
    for d in docs or ("d1", "d2"):
        replace(store, d, *graph[d])


def ids(nodes: list[Node]) -> list[str]:
    return [x.id for x in nodes]


# ------------------------------------------------------------------------------------------ nodes


def test_upsert_merges_doc_ids_and_replaces_props(store: GraphStore) -> None:
    store.write_batch(nodes=[n("x", L.ENTITY, ["b"], name="X", old=1)])
    store.write_batch(nodes=[n("x", L.ENTITY, ["a"], name="X2")])
    got = store.get_node("x")
    assert got is not None
    assert got.doc_ids == ["a", "b"]
    assert got.props == {"name": "X2"}
    assert got.label == L.ENTITY
    assert store.get_node("missing") is None


def test_upsert_same_id_twice_in_one_batch(store: GraphStore) -> None:
    store.write_batch(nodes=[n("x", L.ENTITY, ["a"], v=1), n("x", L.ENTITY, ["b"], v=2)])
    got = store.get_node("x")
    assert got is not None and got.doc_ids == ["a", "b"] and got.props == {"v": 2}


def test_props_round_trip(store: GraphStore) -> None:
    props = {"text": "naïve — ünïcode ✓", "n": 3, "f": 0.25, "none": None, "list": [1, "a"], "nested": {"k": [True]}}
    store.write_batch(nodes=[Node(id="c#1#0", label=L.CHUNK, doc_ids=["c"], props=props)])
    got = store.get_node("c#1#0")
    assert got is not None and got.props == props


def test_get_nodes_keeps_order_and_skips_missing(store: GraphStore) -> None:
    load(store)
    assert ids(store.get_nodes(["ent:bob", "nope", "d1", "ent:alice"])) == ["ent:bob", "d1", "ent:alice"]
    assert store.get_nodes([]) == []


def test_nodes_by_label(store: GraphStore) -> None:
    load(store)
    assert ids(store.nodes_by_label(L.ENTITY)) == ["ent:acme", "ent:alice", "ent:bob"]
    assert ids(store.nodes_by_label("Entity", doc_id="d2")) == ["ent:alice"]
    assert ids(store.nodes_by_label(L.CHUNK, doc_id="d1")) == ["d1#1#0", "d1#1#1", "d1#2#0"]
    assert store.nodes_by_label(L.CONCEPT) == []
    assert store.nodes_by_label(L.CHUNK, doc_id="nope") == []
    assert ids(store.nodes_by_label(L.DOCUMENT)) == ["d1", "d2"]
    assert store.document_hash("d1") == "h1"
    assert store.document_hash("ent:alice") is None and store.document_hash("nope") is None


def test_node_tuples_read_named_props_and_provenance(store: GraphStore) -> None:
    load(store)
    rows = store.node_tuples(L.SECTION, ["title", "level", "missing", "doc_ids"])
    assert rows == [
        ("d1::sA", "Staff", 1, None, ["d1"]),
        ("d1::sA.1", "Engineers", 2, None, ["d1"]),
        ("d1::sB", "Overview", 1, None, ["d1"]),
        ("d2::s1", "Alice", 1, None, ["d2"]),
    ]
    assert store.node_tuples(L.ENTITY, ["doc_ids"]) == [("ent:acme", ["d1"]), ("ent:alice", ["d1", "d2"]), ("ent:bob", ["d1"])]
    assert store.node_tuples(L.FACT, []) == [("fact:founded",)]
    assert store.node_tuples(L.CONCEPT, ["title"]) == []
    props = {"s": "it's \"quoted\"", "n": 2.5, "b": True, "l": [1, "a"], "o": {"k": None}}
    store.write_batch(nodes=[Node(id="c#9#0", label=L.CHUNK, doc_ids=["c"], props=props)])
    odd = ["s", "n", "b", "l", "o", "weird key's"]
    (row,) = [r for r in store.node_tuples(L.CHUNK, odd) if r[0] == "c#9#0"]
    assert row == ("c#9#0", "it's \"quoted\"", 2.5, True, [1, "a"], {"k": None}, None)


# ------------------------------------------------------------------------------------------ edges


def test_edge_upsert_merges_doc_ids_and_replaces_weight(store: GraphStore) -> None:
    store.write_batch(nodes=[n("a", L.ENTITY, ["d"]), n("b", L.ENTITY, ["d"])])
    store.write_batch(edges=[e(T.RELATED, "a", "b", ["d"], key="k", weight=0.5, p=1)])
    store.write_batch(edges=[e(T.RELATED, "a", "b", ["c"], key="k", weight=2.0, q=2)])
    (edge,) = store.get_edges()
    assert edge.doc_ids == ["c", "d"] and edge.weight == 2.0 and edge.props == {"q": 2}
    assert edge.id == edge_id(T.RELATED, "a", "b", "k")


def test_parallel_edges_by_key(store: GraphStore) -> None:
    store.write_batch(nodes=[n("a", L.ENTITY, ["d"]), n("b", L.ENTITY, ["d"])])
    store.write_batch(edges=[e(T.RELATED, "a", "b", ["d"], key="works_with"), e(T.RELATED, "a", "b", ["d"], key="knows")])
    assert [x.key for x in store.get_edges("a", "b")] == ["knows", "works_with"]
    assert [x.key for x in store.get_edges(src=["a", "zz"], dst=("b",))] == ["knows", "works_with"]
    assert store.get_edges(src=[]) == []


def test_get_edges_filters_and_order(store: GraphStore) -> None:
    load(store)
    out = store.get_edges(src="d1")
    assert [(x.type, x.dst) for x in out] == [(T.HAS_SECTION, "d1::sA"), (T.HAS_SECTION, "d1::sB")]
    assert [x.src for x in store.get_edges(dst="ent:alice")] == ["d1#1#0", "d2#1#0"]
    assert [x.src for x in store.get_edges(dst="fact:founded", types=[T.IN_FACT])] == ["ent:acme", "ent:alice"]
    assert store.get_edges(src="d1", types=["NEXT"]) == []
    assert len(store.get_edges(types=[T.NEXT, T.CITES])) == 3
    everything = store.get_edges()
    assert len(everything) == 19
    identities = [(x.type, x.src, x.dst, x.key) for x in everything]
    assert identities == sorted(identities)


def test_edge_tuples_match_get_edges_and_track_generation(store: GraphStore) -> None:
    load(store)
    types = [T.NEXT, T.MENTIONS, T.CITES]
    rows = store.edge_tuples(types)
    assert rows == [(x.type, x.src, x.dst, x.weight) for x in store.get_edges(types=types)]
    assert all(isinstance(r.type, T) for r in rows)
    assert store.edge_tuples([]) == []
    before = store.generation()
    store.write_batch(nodes=[n("zz", L.ENTITY, ["d9"])])
    assert store.generation() != before
    unchanged = store.generation()
    store.get_nodes(["zz"])
    store.edge_tuples([T.NEXT])
    assert store.generation() == unchanged  # reads do not count


def test_edges_need_their_endpoints(store: GraphStore) -> None:
    store.write_batch(nodes=[n("a", L.ENTITY, ["d"])])
    with pytest.raises(ValueError, match="ghost"):
        store.write_batch(edges=[e(T.RELATED, "a", "a", ["d"]), e(T.RELATED, "a", "ghost", ["d"])])
    assert store.get_edges() == []  # nothing of the failed batch was written
    with pytest.raises(ValueError, match="phantom"):
        store.write_batch(edges=[e(T.RELATED, "phantom", "a", ["d"])])


# ------------------------------------------------------------------------------------------ summaries


def test_counts(store: GraphStore) -> None:
    empty = store.counts()
    assert set(empty.nodes) == set(ALL_LABELS) and set(empty.edges) == set(ALL_EDGE_TYPES)
    assert sum(empty.nodes.values()) == sum(empty.edges.values()) == empty.max_section_level == 0
    load(store)
    c = store.counts()
    assert c.nodes == {"Document": 2, "Section": 4, "Chunk": 4, "Entity": 3, "Fact": 1, "Concept": 0}
    assert c.edges["HAS_SECTION"] == 4 and c.edges["MENTIONS"] == 4 and c.edges["IN_FACT"] == 2
    assert c.edges["SIMILAR"] == 0 and sum(c.edges.values()) == 19
    assert c.max_section_level == 2


def test_export_canonical_across_insertion_orders(store: GraphStore) -> None:
    graph = kg()
    for d in ("d1", "d2"):
        replace(store, d, *graph[d])
    first = store.export()
    assert [x["id"] for x in first["nodes"]] == sorted(x["id"] for x in first["nodes"])
    assert [x["id"] for x in first["edges"]] == sorted(x["id"] for x in first["edges"])
    alice = next(x for x in first["nodes"] if x["id"] == "ent:alice")
    assert alice == {"id": "ent:alice", "label": "Entity", "doc_ids": ["d1", "d2"], "props": {"name": "Alice"}}
    edge = next(x for x in first["edges"] if x["type"] == "RELATED")
    assert set(edge) == {"id", "type", "src", "dst", "key", "weight", "doc_ids", "props"}
    assert edge["key"] == "knows" and edge["weight"] == 1.0 and edge["doc_ids"] == ["d2"]

    store.delete_document("d1")
    store.delete_document("d2")
    assert store.export() == {"nodes": [], "edges": []}

    rng = random.Random(7)
    nodes = graph["d2"][0] + graph["d1"][0]
    edges = graph["d2"][1] + graph["d1"][1]
    nodes, edges = rng.sample(nodes, len(nodes)), rng.sample(edges, len(edges))
    half = len(nodes) // 2
    store.write_batch(nodes=nodes[half:])
    store.write_batch(nodes=nodes[:half])
    store.write_batch(edges=edges[::2])
    store.write_batch(edges=edges[1::2])
    assert canonical(store.export()) == canonical(first)
    for d in ("d1", "d2"):
        store.delete_document(d)
    store.write_batch(nodes=nodes, edges=edges)  # nodes and edges in one batch
    assert canonical(store.export()) == canonical(first)


# ------------------------------------------------------------------------------------------ deletion


def test_delete_document(store: GraphStore) -> None:
    load(store)
    summary = store.delete_document("d1")
    assert summary.doc_id == "d1"
    assert summary.nodes_deleted == 10  # all of d1 but Alice
    assert summary.nodes_kept == 1
    # 14 edges of d1, plus d2's RELATED (to Bob) and CITES (to d1) that touched deleted nodes
    assert summary.edges_deleted == 16
    alice = store.get_node("ent:alice")
    assert alice is not None and alice.doc_ids == ["d2"]
    assert store.get_node("ent:bob") is None and store.get_node("d1") is None
    assert store.get_edges(types=[T.RELATED, T.CITES]) == []
    assert [x.src for x in store.get_edges(dst="ent:alice")] == ["d2#1#0"]
    assert ids(store.nodes_by_label(L.DOCUMENT)) == ["d2"]
    assert store.nodes_by_label(L.CHUNK, doc_id="d1") == []
    assert [r[0] for r in store.node_tuples(L.CHUNK, [])] == ["d2#1#0"]
    assert store.counts().nodes == {"Document": 1, "Section": 1, "Chunk": 1, "Entity": 1, "Fact": 0, "Concept": 0}
    with pytest.raises(DocumentNotFound) as err:
        store.delete_document("d1")
    assert isinstance(err.value, KeyError) and err.value.doc_id == "d1"
    with pytest.raises(DocumentNotFound):
        store.delete_document("never")


def test_delete_document_without_document_node(store: GraphStore) -> None:
    store.write_batch(nodes=[n("x", L.ENTITY, ["orphan-doc"]), n("y", L.ENTITY, ["orphan-doc", "other"])])
    store.write_batch(edges=[e(T.RELATED, "x", "y", ["other"])])
    summary = store.delete_document("orphan-doc")
    assert (summary.nodes_deleted, summary.nodes_kept, summary.edges_deleted) == (1, 1, 1)
    assert ids(store.get_nodes(["x", "y"])) == ["y"]


def test_replace_document_swaps_versions(store: GraphStore) -> None:
    load(store)
    nodes = [
        n("d2", L.DOCUMENT, ["d2"], title="v2"),
        n("d2#1#0", L.CHUNK, ["d2"], text="Carol met Alice."),
        n("ent:alice", L.ENTITY, ["d2"], name="Alice"),
    ]
    summary = replace(store, "d2", nodes, [e(T.MENTIONS, "d2#1#0", "ent:alice", ["d2"])])
    assert summary.doc_id == "d2" and summary.nodes_deleted == 3 and summary.nodes_kept == 1
    assert store.get_node("d2::s1") is None
    assert store.node_tuples(L.CHUNK, ["text", "doc_ids"])[-1] == ("d2#1#0", "Carol met Alice.", ["d2"])
    alice = store.get_node("ent:alice")
    assert alice is not None and alice.doc_ids == ["d1", "d2"]
    fresh = replace(store, "new", [n("new", L.DOCUMENT, ["new"])], [])
    assert (fresh.nodes_deleted, fresh.edges_deleted, fresh.nodes_kept) == (0, 0, 0)


def test_replace_document_failure_leaves_old_version(store: GraphStore) -> None:
    load(store)
    before = canonical(store.export())
    nodes = [n("d2", L.DOCUMENT, ["d2"], title="broken"), n("d2#1#0", L.CHUNK, ["d2"], text="new text")]
    with pytest.raises(ValueError, match="missing-node"):
        replace(store, "d2", nodes, [e(T.MENTIONS, "d2#1#0", "missing-node", ["d2"])])
    assert canonical(store.export()) == before


# ------------------------------------------------------------------ shared nodes: by_doc and merges


def _ent(id_: str, doc: str, name: str, type_: str = "PERSON", n_: int = 1, description: str = "") -> Node:
    part = {"names": {name: n_}, "types": {type_: n_}, "keys": [name.casefold()], "description": description}
    return Node(id=id_, label=L.ENTITY, doc_ids=[doc], props={"by_doc": {doc: part}})


def test_shared_entity_props_are_derived_from_every_document_whatever_the_order(backend: str, tmp_path: Path) -> None:
    exports = []
    for order in (("d1", "d2", "d3"), ("d3", "d1", "d2")):
        store = BACKENDS[backend](tmp_path / "-".join(order))
        parts = {
            "d1": _ent("ent:fed", "d1", "Federal Reserve", "ORG", 2, "the US central bank"),
            "d2": _ent("ent:fed", "d2", "the Fed", "ORG", 1),
            "d3": _ent("ent:fed", "d3", "Federal Reserve", "PROPN", 1, "a bank"),
        }
        for d in order:
            replace(store, d, [n(d, L.DOCUMENT, [d], title=d), parts[d]], [])
        exports.append(canonical(store.export()))
        node = store.get_node("ent:fed")
        assert node is not None
        assert node.props["name"] == "Federal Reserve" and node.props["type"] == "ORG"
        assert node.props["aliases"] == ["the Fed"] and node.props["mentions"] == 4
        assert node.props["description"] == "the US central bank"  # the first document's (by id)
        store.delete_document("d1")
        node = store.get_node("ent:fed")
        assert node is not None and node.props["description"] == "a bank" and node.props["mentions"] == 2
        assert sorted(node.props["by_doc"]) == ["d2", "d3"]
        store.close()
        _release(backend, tmp_path / "-".join(order))
    assert exports[0] == exports[1]


def test_merge_nodes_moves_edges_and_provenance(store: GraphStore) -> None:
    replace(store, 
        "d1",
        [
            n("d1", L.DOCUMENT, ["d1"], title="d1"),
            n("d1#0#0", L.CHUNK, ["d1"], text="The Fed raised rates."),
            _ent("ent:the fed", "d1", "the Fed", "ORG"),
            _ent("ent:federal reserve", "d1", "Federal Reserve", "ORG"),
            n("fact:x", L.FACT, ["d1"], description="The Fed raised rates"),
        ],
        [
            e(T.MENTIONS, "d1#0#0", "ent:the fed", ["d1"]),
            e(T.IN_FACT, "ent:the fed", "fact:x", ["d1"]),
            e(T.RELATED, "ent:the fed", "ent:federal reserve", ["d1"], key="same"),
            e(T.MENTIONS, "d1#0#0", "ent:federal reserve", ["d1"], key="own"),
        ],
    )
    assert store.merge_nodes("ent:federal reserve", ["ent:the fed", "ent:missing"]) == 1
    assert store.get_node("ent:the fed") is None
    merged = store.get_node("ent:federal reserve")
    assert merged is not None and merged.props["aliases"] == ["the Fed"] and merged.doc_ids == ["d1"]
    assert [x.dst for x in store.get_edges(src="ent:federal reserve", types=[T.IN_FACT])] == ["fact:x"]
    mentions = store.get_edges(dst="ent:federal reserve", types=[T.MENTIONS])
    assert sorted(m.key for m in mentions) == ["", "own"]  # the target keeps its own edges
    assert store.get_edges(types=[T.RELATED]) == []  # would have become a self-loop
    store.delete_document("d1")
    assert store.get_node("ent:federal reserve") is None and store.counts().edges["MENTIONS"] == 0


def test_write_batch_is_one_transaction(store: GraphStore) -> None:
    replace(store, "d1", [n("d1", L.DOCUMENT, ["d1"]), n("c1", L.CHUNK, ["d1"]), n("c2", L.CHUNK, ["d1"])], [])
    old = e(T.SIMILAR, "c1", "c2", ["d1"], weight=0.5)
    store.write_batch(edges=[old])
    with pytest.raises(ValueError, match="does not exist"):
        store.write_batch(edges=[e(T.SIMILAR, "c1", "missing", ["d1"])], delete_edges=[old.id])
    assert [x.id for x in store.get_edges(types=[T.SIMILAR])] == [old.id]  # the delete rolled back too
    store.write_batch(edges=[e(T.SIMILAR, "c2", "c1", ["d1"], weight=0.7)], delete_edges=[old.id, "e-unknown"])
    assert [(x.src, x.weight) for x in store.get_edges(types=[T.SIMILAR])] == [("c2", 0.7)]


def test_replace_documents_is_all_or_nothing_across_documents(store: GraphStore) -> None:
    graph = kg()
    good = DocumentVersion(doc_id="d1", nodes=graph["d1"][0], edges=graph["d1"][1])
    bad = DocumentVersion(
        doc_id="d2", nodes=graph["d2"][0], edges=[*graph["d2"][1], e(T.MENTIONS, "d2#1#0", "ent:nowhere", ["d2"])]
    )
    with pytest.raises(ValueError, match="nowhere"):
        store.replace_documents([good, bad])
    assert store.export() == {"nodes": [], "edges": []}
    summaries = store.replace_documents([good, DocumentVersion(doc_id="d2", nodes=graph["d2"][0], edges=graph["d2"][1])])
    assert [s.doc_id for s in summaries] == ["d1", "d2"]
    assert store.counts().nodes["Chunk"] == 4


def test_replace_documents_applies_merges_first(store: GraphStore) -> None:
    load(store, "d1")
    extra = [n("d3", L.DOCUMENT, ["d3"]), n("ent:al", L.ENTITY, ["d3"], name="Al")]
    store.replace_documents([DocumentVersion(doc_id="d3", nodes=extra, edges=[])])
    store.replace_documents([], merges={"ent:alice": ["ent:al"]})
    assert store.get_node("ent:al") is None
    alice = store.get_node("ent:alice")
    assert alice is not None and alice.doc_ids == ["d1", "d3"]


def test_generation_sees_writes_of_another_handle(store: GraphStore, backend: str, tmp_path: Path) -> None:
    other = BACKENDS[backend](tmp_path)  # the same database, another connection
    try:
        before = store.generation()
        other.write_batch(nodes=[n("x", L.ENTITY, ["d"])])
        assert store.generation() != before
        assert store.get_node("x") is not None
    finally:
        other.close()


def test_replace_documents_drops_versions_in_turn(store: GraphStore) -> None:
    load(store)
    d1 = DocumentVersion(doc_id="d1", nodes=[n("d1", L.DOCUMENT, ["d1"]), n("ent:alice", L.ENTITY, ["d1"], name="Al")], edges=[])
    d2 = DocumentVersion(
        doc_id="d2",
        nodes=[n("d2", L.DOCUMENT, ["d2"]), n("d2#1#0", L.CHUNK, ["d2"], text="new"), n("ent:alice", L.ENTITY, ["d2"], name="Alice")],
        edges=[e(T.MENTIONS, "d2#1#0", "ent:alice", ["d2"])],
    )
    first, second = store.replace_documents([d1, d2])
    # d1 goes first: Alice stays (d2 still has her), d2's RELATED to Bob and CITES of d1 die with their ends
    assert (first.doc_id, first.nodes_deleted, first.edges_deleted, first.nodes_kept) == ("d1", 10, 16, 1)
    # then d2: Alice has no document left and goes too, before both new versions are written
    assert (second.doc_id, second.nodes_deleted, second.edges_deleted, second.nodes_kept) == ("d2", 4, 3, 0)
    assert ids(store.get_nodes(["d1", "d2", "d2#1#0", "ent:alice", "ent:bob", "d2::s1"])) == ["d1", "d2", "d2#1#0", "ent:alice"]
    alice = store.get_node("ent:alice")
    assert alice is not None and alice.doc_ids == ["d1", "d2"] and alice.props == {"name": "Alice"}
    assert [(x.type, x.src, x.dst) for x in store.get_edges()] == [(T.MENTIONS, "d2#1#0", "ent:alice")]

"""The GraphStore contract: every backend passes this one suite (add a backend to ``BACKENDS``)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from stratagraph.graph_store import DocumentNotFound, GraphStore, SQLiteGraphStore
from stratagraph.schema import ALL_EDGE_TYPES, ALL_LABELS, Edge, EdgeType, Node, NodeLabel, edge_id

L, T = NodeLabel, EdgeType


def _sqlite(tmp_path: Path) -> GraphStore:
    return SQLiteGraphStore(tmp_path / "graph.sqlite")


BACKENDS: dict[str, Callable[[Path], GraphStore]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    s = BACKENDS[request.param](tmp_path)
    yield s
    s.close()


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


def load(store: GraphStore, *docs: str) -> None:
    graph = kg()
    for d in docs or ("d1", "d2"):
        store.replace_document(d, *graph[d])


def ids(nodes: list[Node]) -> list[str]:
    return [x.id for x in nodes]


# ------------------------------------------------------------------------------------------ nodes


def test_upsert_merges_doc_ids_and_replaces_props(store: GraphStore) -> None:
    store.upsert_nodes([n("x", L.ENTITY, ["b"], name="X", old=1)])
    store.upsert_nodes([n("x", L.ENTITY, ["a"], name="X2")])
    got = store.get_node("x")
    assert got is not None
    assert got.doc_ids == ["a", "b"]
    assert got.props == {"name": "X2"}
    assert got.label == L.ENTITY
    assert store.get_node("missing") is None


def test_upsert_same_id_twice_in_one_batch(store: GraphStore) -> None:
    store.upsert_nodes([n("x", L.ENTITY, ["a"], v=1), n("x", L.ENTITY, ["b"], v=2)])
    got = store.get_node("x")
    assert got is not None and got.doc_ids == ["a", "b"] and got.props == {"v": 2}


def test_props_round_trip(store: GraphStore) -> None:
    props = {"text": "naïve — ünïcode ✓", "n": 3, "f": 0.25, "none": None, "list": [1, "a"], "nested": {"k": [True]}}
    store.upsert_nodes([Node(id="c#1#0", label=L.CHUNK, doc_ids=["c"], props=props)])
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
    assert store.document_ids() == ["d1", "d2"]
    assert store.document_hash("d1") == "h1"
    assert store.document_hash("ent:alice") is None and store.document_hash("nope") is None


def test_sections_at_level(store: GraphStore) -> None:
    load(store)
    assert ids(store.sections_at_level(1)) == ["d1::sA", "d1::sB", "d2::s1"]
    assert ids(store.sections_at_level(2, doc_id="d1")) == ["d1::sA.1"]
    assert store.sections_at_level(2, doc_id="d2") == []


# ------------------------------------------------------------------------------------------ edges


def test_edge_upsert_merges_doc_ids_and_replaces_weight(store: GraphStore) -> None:
    store.upsert_nodes([n("a", L.ENTITY, ["d"]), n("b", L.ENTITY, ["d"])])
    store.upsert_edges([e(T.RELATED, "a", "b", ["d"], key="k", weight=0.5, p=1)])
    store.upsert_edges([e(T.RELATED, "a", "b", ["c"], key="k", weight=2.0, q=2)])
    (edge,) = store.get_edges()
    assert edge.doc_ids == ["c", "d"] and edge.weight == 2.0 and edge.props == {"q": 2}
    assert edge.id == edge_id(T.RELATED, "a", "b", "k")


def test_parallel_edges_by_key(store: GraphStore) -> None:
    store.upsert_nodes([n("a", L.ENTITY, ["d"]), n("b", L.ENTITY, ["d"])])
    store.upsert_edges([e(T.RELATED, "a", "b", ["d"], key="works_with"), e(T.RELATED, "a", "b", ["d"], key="knows")])
    assert [x.key for x in store.get_edges("a", "b")] == ["knows", "works_with"]


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
    store.upsert_nodes([n("zz", L.ENTITY, ["d9"])])
    if before is not None:
        assert store.generation() != before


def test_upsert_edges_missing_endpoint_raises(store: GraphStore) -> None:
    store.upsert_nodes([n("a", L.ENTITY, ["d"])])
    with pytest.raises(ValueError, match="ghost"):
        store.upsert_edges([e(T.RELATED, "a", "a", ["d"]), e(T.RELATED, "a", "ghost", ["d"])])
    assert store.get_edges() == []  # nothing of the failed batch was written
    with pytest.raises(ValueError, match="phantom"):
        store.upsert_edges([e(T.RELATED, "phantom", "a", ["d"])])


def test_neighbors_directions(store: GraphStore) -> None:
    load(store)
    out = store.neighbors("ent:alice", direction="out")
    assert [(x.edge.type, x.node.id, x.direction) for x in out] == [
        (T.IN_FACT, "fact:founded", "out"),
        (T.RELATED, "ent:bob", "out"),
    ]
    inn = store.neighbors("ent:alice", [T.MENTIONS], direction="in")
    assert [(x.node.id, x.direction) for x in inn] == [("d1#1#0", "in"), ("d2#1#0", "in")]
    assert all(x.edge.dst == "ent:alice" for x in inn)
    both = store.neighbors("d1#1#1", [T.NEXT, T.HAS_CHUNK], direction="both")
    assert [(x.edge.type, x.node.id, x.direction) for x in both] == [
        (T.HAS_CHUNK, "d1::sB", "in"),
        (T.NEXT, "d1#1#0", "in"),
        (T.NEXT, "d1#2#0", "out"),
    ]
    assert store.neighbors("nope") == []
    assert store.neighbors("ent:alice", types=[], direction="both") == []


def test_section_children_and_parent(store: GraphStore) -> None:
    load(store)
    assert ids(store.section_children("d1")) == ["d1::sB", "d1::sA"]  # reading order, not id order
    assert ids(store.section_children("d1::sA")) == ["d1::sA.1"]
    assert store.section_children("d1::sB") == []
    parent = store.section_parent("d1::sA.1")
    assert parent is not None and parent.id == "d1::sA"
    top = store.section_parent("d1::sB")
    assert top is not None and top.id == "d1" and top.label == L.DOCUMENT


def test_knowledge_layer(store: GraphStore) -> None:
    load(store)
    assert ids(store.facts_of_entity("ent:alice")) == ["fact:founded"]
    assert ids(store.facts_of_entity("ent:bob")) == []
    assert ids(store.entities_of_fact("fact:founded")) == ["ent:acme", "ent:alice"]
    assert ids(store.chunks_of("fact:founded")) == ["d1#1#0"]
    assert ids(store.chunks_of("ent:alice")) == ["d1#1#0", "d2#1#0"]
    assert ids(store.chunks_of("d1::sB")) == ["d1#1#0", "d1#1#1"]
    assert ids(store.chunks_of("d1")) == ["d1#1#0", "d1#1#1", "d1#2#0"]
    assert ids(store.chunks_of("d2#1#0")) == ["d2#1#0"]
    assert store.chunks_of("nope") == []


# ------------------------------------------------------------------------------------------ algorithms


def chain(store: GraphStore, names: str, type_: EdgeType = T.RELATED) -> None:
    store.upsert_nodes([n(c, L.ENTITY, ["g"]) for c in names])
    store.upsert_edges([e(type_, a, b, ["g"]) for a, b in pairwise(names)])


def test_subgraph_hops_and_direction(store: GraphStore) -> None:
    chain(store, "abcde")
    assert ids(store.subgraph(["c"], hops=0).nodes) == ["c"]
    one = store.subgraph(["c"], hops=1)
    assert ids(one.nodes) == ["b", "c", "d"]
    assert {(x.src, x.dst) for x in one.edges} == {("b", "c"), ("c", "d")}
    assert [x.id for x in one.edges] == sorted(x.id for x in one.edges)
    assert ids(store.subgraph(["c"], hops=2).nodes) == ["a", "b", "c", "d", "e"]
    assert ids(store.subgraph(["c"], hops=2, direction="out").nodes) == ["c", "d", "e"]
    assert ids(store.subgraph(["c"], hops=5, direction="in").nodes) == ["a", "b", "c"]
    assert ids(store.subgraph(["c"], hops=2, types=[T.NEXT]).nodes) == ["c"]
    assert store.subgraph(["nope"], hops=2).nodes == []


def test_subgraph_max_nodes_keeps_nearer_then_id(store: GraphStore) -> None:
    store.upsert_nodes([n(x, L.ENTITY, ["g"]) for x in ["hub", "z1", "y1", "x1", "far"]])
    store.upsert_edges([e(T.RELATED, "hub", leaf, ["g"]) for leaf in ["z1", "y1", "x1"]])
    store.upsert_edges([e(T.RELATED, "x1", "far", ["g"])])
    assert ids(store.subgraph(["hub"], hops=2).nodes) == ["far", "hub", "x1", "y1", "z1"]
    cut = store.subgraph(["hub"], hops=2, max_nodes=3)
    assert ids(cut.nodes) == ["hub", "x1", "y1"]
    assert {(x.src, x.dst) for x in cut.edges} == {("hub", "x1"), ("hub", "y1")}
    assert ids(store.subgraph(["hub"], hops=2, max_nodes=4).nodes) == ["hub", "x1", "y1", "z1"]
    assert ids(store.subgraph(["z1", "hub"], hops=1, max_nodes=1).nodes) == ["hub"]


def test_subgraph_edges_among_nodes_of_given_types(store: GraphStore) -> None:
    load(store)
    sub = store.subgraph(["fact:founded"], hops=1, types=[T.IN_FACT, T.SUPPORTED_BY])
    assert ids(sub.nodes) == ["d1#1#0", "ent:acme", "ent:alice", "fact:founded"]
    assert {x.type for x in sub.edges} == {T.IN_FACT, T.SUPPORTED_BY}
    assert len(sub.edges) == 3  # the MENTIONS edges among these nodes are of another type


def test_ppr_star(store: GraphStore) -> None:
    store.upsert_nodes([n(x, L.ENTITY, ["g"]) for x in ["hub", "l1", "l2", "l3", "l4"]])
    store.upsert_edges([e(T.RELATED, "hub", leaf, ["g"]) for leaf in ["l1", "l2", "l3", "l4"]])
    ranked = store.personalized_pagerank({"l1": 1.0, "unknown": 5.0})
    # x_hub = 0.85 * (1 - x_hub); every leaf gets 0.85 * x_hub / 4, the seed l1 also the 0.15 reset
    hub = 0.85 / 1.85
    assert [r.id for r in ranked] == ["hub", "l1", "l2", "l3", "l4"]
    assert [r.score for r in ranked] == pytest.approx([hub, 0.15 + 0.85 * hub / 4] + [0.85 * hub / 4] * 3, abs=1e-6)
    assert ranked[2].score == ranked[3].score == ranked[4].score
    assert sum(r.score for r in ranked) == pytest.approx(1.0, abs=1e-6)
    assert store.personalized_pagerank({"l1": 1.0}, top_k=2) == ranked[:2]
    assert store.personalized_pagerank({"unknown": 1.0}) == []
    isolated = store.personalized_pagerank({"hub": 1.0}, types=[T.NEXT])  # no edges of that type
    assert [(x.id, x.score) for x in isolated] == [("hub", 1.0)]


def test_ppr_matches_closed_form(store: GraphStore) -> None:
    names = ["a", "b", "c", "d", "e"]
    weighted = [("a", "b", 2.0), ("b", "c", 1.0), ("c", "a", 1.0), ("c", "d", 3.0), ("d", "e", 0.5)]
    store.upsert_nodes([n(x, L.ENTITY, ["g"]) for x in names])
    store.upsert_edges([e(T.RELATED, s, t, ["g"], weight=w) for s, t, w in weighted])
    seeds = {"a": 1.0, "e": 3.0}
    a = np.zeros((5, 5))
    for s, t, w in weighted:
        a[names.index(s), names.index(t)] += w
        a[names.index(t), names.index(s)] += w
    p = a / a.sum(axis=1, keepdims=True)
    r = np.array([1.0, 0, 0, 0, 3.0]) / 4
    want = np.linalg.solve(np.eye(5) - 0.85 * p.T, 0.15 * r)
    got = {x.id: x.score for x in store.personalized_pagerank(seeds)}
    assert got == pytest.approx(dict(zip(names, want, strict=True)), abs=1e-6)
    ranked = store.personalized_pagerank(seeds)
    assert [x.id for x in ranked] == [names[i] for i in np.argsort(-want, kind="stable")]
    assert store.personalized_pagerank(seeds) == ranked  # deterministic


def test_ppr_directed_dangling_mass_returns_to_seeds(store: GraphStore) -> None:
    chain(store, "abc")
    ranked = store.personalized_pagerank({"a": 1.0}, undirected=False)
    got = {x.id: x.score for x in ranked}
    # a -> b -> c, c dangling: x_a = 0.15 + 0.85 x_c, x_b = 0.85 x_a, x_c = 0.85 x_b
    xa = 0.15 / (1 - 0.85**3)
    assert got == pytest.approx({"a": xa, "b": 0.85 * xa, "c": 0.85**2 * xa}, abs=1e-7)
    assert [(x.id, x.score) for x in store.personalized_pagerank({"c": 1.0}, undirected=False)] == [("c", 1.0)]


def test_ppr_labels_and_types(store: GraphStore) -> None:
    load(store)
    ranked = store.personalized_pagerank({"ent:alice": 1.0}, labels=[L.CHUNK])
    assert {x.id for x in ranked} == {"d1#1#0", "d1#1#1", "d1#2#0", "d2#1#0"}
    assert [x.score for x in ranked] == sorted((x.score for x in ranked), reverse=True)
    bipartite = store.personalized_pagerank({"ent:alice": 1.0}, types=[T.IN_FACT])
    assert [x.id for x in bipartite] == ["fact:founded", "ent:alice", "ent:acme"]
    assert store.personalized_pagerank({"ent:alice": 1.0}, labels=[L.CONCEPT]) == []


def test_bm25_ranking_filters_and_weird_queries(store: GraphStore) -> None:
    docs = {
        "p": ["graph database engines store graphs", "a cooking recipe for bread", "graph theory basics"],
        "q": ["database tuning for graph workloads and database indexes", "bread and butter"],
    }
    for d, texts in docs.items():
        chunks = [n(f"{d}#1#{i}", L.CHUNK, [d], text=t, section="Notes") for i, t in enumerate(texts)]
        store.replace_document(d, [n(d, L.DOCUMENT, [d]), *chunks], [])
    hits = store.bm25_search("graph database", k=10)
    assert {h.id for h in hits} == {"p#1#0", "p#1#2", "q#1#0"}
    assert hits[-1].id == "p#1#2"  # only one of the two terms
    assert all(a.score >= b.score for a, b in pairwise(hits))
    assert [h.id for h in store.bm25_search("graph database", k=1)] == [hits[0].id]
    assert [h.id for h in store.bm25_search("database", doc_ids=["p"])] == ["p#1#0"]
    assert store.bm25_search("database", doc_ids=[]) == []
    assert {h.id for h in store.bm25_search("Graphs!")} == {"p#1#0", "p#1#2", "q#1#0"}  # stemmed
    for weird in ['"a" OR b* -c: (x)', "AND", 'NEAR(graph "', "^bread", "col:graph", "'; DROP TABLE nodes; --", "\x00"]:
        store.bm25_search(weird)
    assert store.bm25_search('"bread" -c: (x)*')[0].id in {"p#1#1", "q#1#1"}
    assert store.bm25_search("") == [] and store.bm25_search("the of and") == [] and store.bm25_search("?!") == []
    assert store.bm25_search("bread", k=0) == []


def test_bm25_tie_break_by_id_and_section_title(store: GraphStore) -> None:
    chunks = [
        n(f"t#1#{i}", L.CHUNK, ["t"], text="identical words here", section="Zebra" if i == 1 else "Misc")
        for i in (2, 1, 0)
    ]
    store.replace_document("t", chunks, [])
    assert [h.id for h in store.bm25_search("identical")] == ["t#1#0", "t#1#1", "t#1#2"]
    assert [h.id for h in store.bm25_search("zebra")] == ["t#1#1"]  # the section title is indexed too


def test_bm25_follows_updates_and_deletes(store: GraphStore) -> None:
    store.upsert_nodes([n("u#1#0", L.CHUNK, ["u"], text="original words"), n("x", L.ENTITY, ["u"], text="original")])
    assert [h.id for h in store.bm25_search("original")] == ["u#1#0"]  # only chunks are indexed
    store.upsert_nodes([n("u#1#0", L.CHUNK, ["u"], text="replacement words")])
    assert store.bm25_search("original") == []
    assert [h.id for h in store.bm25_search("replacement")] == ["u#1#0"]
    store.upsert_nodes([n("u#1#0", L.CHUNK, ["v"], text="replacement words")])  # provenance only
    assert [h.id for h in store.bm25_search("replacement", doc_ids=["v"])] == ["u#1#0"]
    store.delete_document("u")
    store.delete_document("v")
    assert store.bm25_search("replacement") == []


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
        store.replace_document(d, *graph[d])
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
    store.upsert_nodes(nodes[half:])
    store.upsert_nodes(nodes[:half])
    store.upsert_edges(edges[::2])
    store.upsert_edges(edges[1::2])
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
    assert store.document_ids() == ["d2"]
    assert store.nodes_by_label(L.CHUNK, doc_id="d1") == []
    assert store.bm25_search("Acme") == []
    assert store.counts().nodes == {"Document": 1, "Section": 1, "Chunk": 1, "Entity": 1, "Fact": 0, "Concept": 0}
    with pytest.raises(DocumentNotFound) as err:
        store.delete_document("d1")
    assert isinstance(err.value, KeyError) and err.value.doc_id == "d1"
    with pytest.raises(DocumentNotFound):
        store.delete_document("never")


def test_delete_document_without_document_node(store: GraphStore) -> None:
    store.upsert_nodes([n("x", L.ENTITY, ["orphan-doc"]), n("y", L.ENTITY, ["orphan-doc", "other"])])
    store.upsert_edges([e(T.RELATED, "x", "y", ["other"])])
    summary = store.delete_document("orphan-doc")
    assert (summary.nodes_deleted, summary.nodes_kept, summary.edges_deleted) == (1, 1, 1)
    assert ids(store.get_nodes(["x", "y"])) == ["y"]


def test_delete_nodes_and_edges(store: GraphStore) -> None:
    load(store)
    assert store.delete_nodes(["ent:bob", "nope"]) == 1
    assert store.get_edges(dst="ent:bob") == [] and store.get_edges(types=[T.RELATED]) == []
    nxt = store.get_edges(types=[T.NEXT])
    assert store.delete_edges([nxt[0].id, "e-unknown"]) == 1
    assert len(store.get_edges(types=[T.NEXT])) == 1
    assert store.delete_nodes([]) == 0 and store.delete_edges([]) == 0


def test_replace_document_swaps_versions(store: GraphStore) -> None:
    load(store)
    nodes = [
        n("d2", L.DOCUMENT, ["d2"], title="v2"),
        n("d2#1#0", L.CHUNK, ["d2"], text="Carol met Alice."),
        n("ent:alice", L.ENTITY, ["d2"], name="Alice"),
    ]
    summary = store.replace_document("d2", nodes, [e(T.MENTIONS, "d2#1#0", "ent:alice", ["d2"])])
    assert summary.doc_id == "d2" and summary.nodes_deleted == 3 and summary.nodes_kept == 1
    assert store.get_node("d2::s1") is None
    assert [h.id for h in store.bm25_search("Carol")] == ["d2#1#0"]
    assert store.bm25_search("university") == []
    alice = store.get_node("ent:alice")
    assert alice is not None and alice.doc_ids == ["d1", "d2"]
    fresh = store.replace_document("new", [n("new", L.DOCUMENT, ["new"])], [])
    assert (fresh.nodes_deleted, fresh.edges_deleted, fresh.nodes_kept) == (0, 0, 0)


def test_replace_document_failure_leaves_old_version(store: GraphStore) -> None:
    load(store)
    before = canonical(store.export())
    nodes = [n("d2", L.DOCUMENT, ["d2"], title="broken"), n("d2#1#0", L.CHUNK, ["d2"], text="new text")]
    with pytest.raises(ValueError, match="missing-node"):
        store.replace_document("d2", nodes, [e(T.MENTIONS, "d2#1#0", "missing-node", ["d2"])])
    assert canonical(store.export()) == before
    assert [h.id for h in store.bm25_search("university")] == ["d2#1#0"]
    assert ids(store.subgraph(["d2"], hops=1).nodes) == ["d1", "d2", "d2::s1"]


def test_adjacency_follows_writes(store: GraphStore) -> None:
    chain(store, "abc")
    assert ids(store.subgraph(["a"], hops=3).nodes) == ["a", "b", "c"]
    store.upsert_nodes([n("d", L.ENTITY, ["h"])])
    store.upsert_edges([e(T.RELATED, "c", "d", ["h"])])
    assert ids(store.subgraph(["a"], hops=3).nodes) == ["a", "b", "c", "d"]
    assert "d" in {x.id for x in store.personalized_pagerank({"a": 1.0})}
    store.delete_document("h")
    assert ids(store.subgraph(["a"], hops=3).nodes) == ["a", "b", "c"]
    store.delete_nodes(["b"])
    assert ids(store.subgraph(["a"], hops=3).nodes) == ["a"]
    assert [x.id for x in store.personalized_pagerank({"a": 1.0, "b": 1.0})] == ["a"]
    store.upsert_nodes([n("b", L.ENTITY, ["g"])])
    store.upsert_edges([e(T.RELATED, "a", "b", ["g"], weight=3.0)])
    assert ids(store.subgraph(["a"], hops=3).nodes) == ["a", "b"]


def test_zero_weight_edges_are_traversed_but_carry_no_rank(store: GraphStore) -> None:
    store.upsert_nodes([n(x, L.ENTITY, ["g"]) for x in "abc"])
    store.upsert_edges([e(T.RELATED, "a", "b", ["g"], weight=0.0), e(T.RELATED, "b", "c", ["g"])])
    assert ids(store.subgraph(["a"], hops=2).nodes) == ["a", "b", "c"]
    assert [(x.id, x.score) for x in store.personalized_pagerank({"a": 1.0})] == [("a", 1.0)]


# ------------------------------------------------------------------ shared nodes: by_doc and merges


def _ent(id_: str, doc: str, name: str, type_: str = "PERSON", n_: int = 1, description: str = "") -> Node:
    part = {"names": {name: n_}, "types": {type_: n_}, "keys": [name.casefold()], "description": description}
    return Node(id=id_, label=L.ENTITY, doc_ids=[doc], props={"by_doc": {doc: part}})


def test_shared_entity_props_are_derived_from_every_document_whatever_the_order(tmp_path: Path) -> None:
    exports = []
    for order in (("d1", "d2", "d3"), ("d3", "d1", "d2")):
        store = BACKENDS["sqlite"](tmp_path / "-".join(order))
        parts = {
            "d1": _ent("ent:fed", "d1", "Federal Reserve", "ORG", 2, "the US central bank"),
            "d2": _ent("ent:fed", "d2", "the Fed", "ORG", 1),
            "d3": _ent("ent:fed", "d3", "Federal Reserve", "PROPN", 1, "a bank"),
        }
        for d in order:
            store.replace_document(d, [n(d, L.DOCUMENT, [d], title=d), parts[d]], [])
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
    assert exports[0] == exports[1]


def test_merge_nodes_moves_edges_and_provenance(store: GraphStore) -> None:
    store.replace_document(
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
    assert [x.node.id for x in store.neighbors("ent:federal reserve", [T.IN_FACT], "out")] == ["fact:x"]
    mentions = store.get_edges(dst="ent:federal reserve", types=[T.MENTIONS])
    assert sorted(m.key for m in mentions) == ["", "own"]  # the target keeps its own edges
    assert store.get_edges(types=[T.RELATED]) == []  # would have become a self-loop
    store.delete_document("d1")
    assert store.get_node("ent:federal reserve") is None and store.counts().edges["MENTIONS"] == 0


def test_write_batch_is_one_transaction(store: GraphStore) -> None:
    store.replace_document("d1", [n("d1", L.DOCUMENT, ["d1"]), n("c1", L.CHUNK, ["d1"]), n("c2", L.CHUNK, ["d1"])], [])
    old = e(T.SIMILAR, "c1", "c2", ["d1"], weight=0.5)
    store.write_batch(edges=[old])
    with pytest.raises(ValueError, match="does not exist"):
        store.write_batch(edges=[e(T.SIMILAR, "c1", "missing", ["d1"])], delete_edges=[old.id])
    assert [x.id for x in store.get_edges(types=[T.SIMILAR])] == [old.id]  # the delete rolled back too
    store.write_batch(edges=[e(T.SIMILAR, "c2", "c1", ["d1"], weight=0.7)], delete_edges=[old.id, "e-unknown"])
    assert [(x.src, x.weight) for x in store.get_edges(types=[T.SIMILAR])] == [("c2", 0.7)]

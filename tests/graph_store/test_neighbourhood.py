"""``GraphStore.neighbourhood`` on every backend against the whole-graph index's adjacency (small stores)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph.graph_store import GraphStore
from stratagraph.graph_store.base import Neighbour, neighbour_order
from stratagraph.retrieval.index import GraphIndex
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel
from tests.graph_store.test_contract import BACKENDS, _release

T = EdgeType
TYPES = (T.MENTIONS, T.IN_FACT, T.SUPPORTED_BY, T.RELATED)


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    s = BACKENDS[request.param](tmp_path)
    yield s
    s.close()
    _release(request.param, tmp_path)


def random_graph(seed: int) -> tuple[list[Node], list[Edge]]:
    """Chunks, entities and facts with MENTIONS / IN_FACT / SUPPORTED_BY / RELATED edges; weights drawn from a
    few values (ties across types and directions), some node pairs joined twice (RELATED under two keys), a
    hub entity, a self-loop."""
    rng = random.Random(seed)
    chunks = [f"d{i % 3}#0#{i}" for i in range(12)]
    ents = [f"ent:e{i}" for i in range(15)]
    facts = [f"fact:f{i}" for i in range(10)]
    nodes = [Node(id=c, label=NodeLabel.CHUNK, doc_ids=[c.split("#")[0]], props={"text": c}) for c in chunks]
    nodes += [Node(id=e, label=NodeLabel.ENTITY, doc_ids=["d0"], props={"name": e}) for e in ents]
    nodes += [Node(id=f, label=NodeLabel.FACT, doc_ids=["d0"], props={"description": f}) for f in facts]
    edges: dict[tuple[str, str, str, str], Edge] = {}

    def add(t: EdgeType, a: str, b: str, key: str = "") -> None:
        w = float(rng.choice([1, 1, 2, 3, 0.5]))
        edges[(t, a, b, key)] = Edge(type=t, src=a, dst=b, key=key, weight=w, doc_ids=["d0"], props={})

    for c in chunks:
        for e in rng.sample(ents, 4):
            add(T.MENTIONS, c, e)
        add(T.MENTIONS, c, ents[0])  # the hub
    for f in facts:
        for e in rng.sample(ents, 3):
            add(T.IN_FACT, e, f)
        add(T.SUPPORTED_BY, f, rng.choice(chunks))
    for _ in range(25):
        a, b = rng.sample(ents, 2)
        add(T.RELATED, a, b, rng.choice(["founded", "leads"]))
    add(T.RELATED, ents[1], ents[1], "self")
    return nodes, list(edges.values())


def reference(index: GraphIndex, ids: list[str], direction: str, limit: int | None) -> list[tuple]:
    """The neighbourhood read off the whole-graph index (without keys, which EdgeRow does not hold)."""
    rows = []
    for e in index.edges_of(*TYPES):
        if e.src == e.dst:
            continue
        if e.src in ids and direction in ("out", "both"):
            rows.append(Neighbour(e.src, e.type, e.dst, True, e.weight, ""))
        if e.dst in ids and direction in ("in", "both"):
            rows.append(Neighbour(e.dst, e.type, e.src, False, e.weight, ""))
    return _keyless(rows, limit)


def _keyless(rows: list[Neighbour], limit: int | None) -> list[tuple]:
    per: dict[str, list[tuple]] = {}
    for r in sorted(rows, key=lambda r: (r.node, *neighbour_order(r._replace(key="")))):
        per.setdefault(r.node, []).append((r.node, str(r.type), r.other, r.outgoing, r.weight))
    return [row for node in sorted(per) for row in (per[node] if limit is None else per[node][:limit])]


@pytest.mark.parametrize("direction", ["out", "in", "both"])
@pytest.mark.parametrize("limit", [None, 1, 3])
def test_neighbourhood_matches_the_whole_graph_index(store: GraphStore, direction: str, limit: int | None) -> None:
    nodes, edges = random_graph(7)
    store.write_batch(nodes, edges)
    index = GraphIndex.from_store(store)
    ids = ["ent:e0", "ent:e1", "ent:e5", "d1#0#4", "fact:f3", "no:such"]
    got = store.neighbourhood(ids, TYPES, direction, limit)
    assert _keyless(got, limit) == reference(index, ids, direction, limit)
    assert [r.node for r in got] == sorted(r.node for r in got)
    if limit is not None:
        assert max(sum(1 for r in got if r.node == n) for n in ids if any(r.node == n for r in got)) <= limit


def test_neighbourhood_per_node_limit_keeps_the_heaviest(store: GraphStore) -> None:
    """The hub keeps its heaviest edges; within a weight, by type, other end, direction and key."""
    nodes, edges = random_graph(11)
    store.write_batch(nodes, edges)
    every = store.neighbourhood(["ent:e0"], TYPES, "both")
    top = store.neighbourhood(["ent:e0"], TYPES, "both", limit=4)
    assert top == every[:4]
    assert [r.weight for r in every] == sorted((r.weight for r in every), reverse=True)
    assert len(every) > 4


def test_neighbourhood_of_one_type_and_nothing(store: GraphStore) -> None:
    nodes, edges = random_graph(3)
    store.write_batch(nodes, edges)
    related = store.neighbourhood(["ent:e2"], [T.RELATED], "both")
    assert related and {r.type for r in related} == {T.RELATED}
    keys = {(r.other, r.outgoing, r.key) for r in related}
    want = {(e.dst, True, e.key) for e in edges if e.type == T.RELATED and e.src == "ent:e2" and e.dst != e.src}
    want |= {(e.src, False, e.key) for e in edges if e.type == T.RELATED and e.dst == "ent:e2" and e.dst != e.src}
    assert keys == want
    assert store.neighbourhood([], TYPES) == []
    assert store.neighbourhood(["ent:e1"], []) == []
    with pytest.raises(ValueError):
        store.neighbourhood(["ent:e1"], TYPES, "sideways")

"""The local push's error bound (``retrieval/push.py``): every score within ``eps * degree`` below the exact
personalised PageRank, on the ingested examples read from the store and on random graphs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagraph.graph_store import SQLiteGraphStore
from stratagraph.retrieval.index import GraphIndex
from stratagraph.retrieval.neighbourhood import StoreWalk
from stratagraph.retrieval.ppr import walk_pairs
from stratagraph.retrieval.push import MemoryWalk, local_pagerank
from tests.retrieval.walks import exact_ppr, undirected


def assert_within_bound(got: dict[str, float], exact: dict[str, float], degree: dict[str, float], eps: float) -> None:
    for u, x in exact.items():
        p = got.get(u, 0.0)
        assert p <= x + 1e-12, u  # never above
        assert x - p <= eps * degree.get(u, 0.0) + 1e-12, (u, x, p, degree.get(u))


@pytest.fixture(scope="module")
def examples_walk(examples_home: Path):
    graph = SQLiteGraphStore(examples_home / "graph.sqlite")
    index = GraphIndex.from_store(graph)
    adj = undirected(walk_pairs(index, 2.0)[0])
    for cid in index.chunks.ids:
        adj.setdefault(cid, {})
    yield graph, index, adj
    graph.close()


@pytest.mark.parametrize("eps", [1e-3, 1e-5, 1e-7])
def test_the_push_over_the_store_is_within_eps_degree(examples_walk, eps: float) -> None:
    graph, index, adj = examples_walk
    rng = random.Random(5)
    ents = sorted(u for u in adj if u.startswith("ent:"))
    for trial in range(4):
        seeds = {u: rng.random() + 0.1 for u in rng.sample(ents, 3)}
        seeds.update({c: 0.05 * rng.random() for c in rng.sample(index.chunks.ids, 5)})
        exact = exact_ppr(adj, seeds, 0.5)
        walk = StoreWalk(graph)
        res = local_pagerank(walk, seeds, damping=0.5, epsilon=eps)
        degree = {u: sum(vs.values()) for u, vs in adj.items()}
        assert_within_bound(res.scores, exact, degree, eps)
        if eps == 1e-3:  # coarse: the push stays local
            assert res.nodes_read < len(adj) / 2, trial


def test_a_smaller_eps_reads_more_and_errs_less(examples_walk) -> None:
    graph, _, adj = examples_walk
    seeds = {sorted(u for u in adj if u.startswith("ent:"))[7]: 1.0}
    exact = exact_ppr(adj, seeds, 0.5)
    errs, reads = [], []
    for eps in (1e-2, 1e-4, 1e-6):
        res = local_pagerank(StoreWalk(graph), seeds, epsilon=eps)
        errs.append(sum(exact[u] - res.scores.get(u, 0.0) for u in exact))
        reads.append(res.nodes_read)
    assert errs[0] > errs[1] > errs[2] >= 0
    assert reads[0] <= reads[1] <= reads[2]


def test_an_isolated_seed_keeps_the_restarted_mass() -> None:
    """A seed without edges: the power iteration restarts its walkers at the seeds; the push's scaling matches."""
    adj = {"a": {"b": 1.0}, "b": {"a": 1.0, "c": 2.0}, "c": {"b": 2.0}, "lone": {}}
    seeds = {"a": 1.0, "lone": 1.0}
    exact = exact_ppr(adj, seeds, 0.5)
    res = local_pagerank(MemoryWalk({u: list(vs.items()) for u, vs in adj.items()}), seeds, epsilon=1e-9)
    assert_within_bound(res.scores, exact, {u: sum(v.values()) for u, v in adj.items()}, 1e-9)
    assert res.scores["lone"] == pytest.approx(exact["lone"], abs=1e-12)


def test_a_hub_is_not_read_whole_for_a_small_residual() -> None:
    """A hub of 5000 edges next to the seed: its residual (at most 0.5) could only be pushed if its degree
    were below 0.5 / eps = 500, so it is read a few hundred edges at a time (each read at least doubling) and
    the rest is never read."""
    adj: dict[str, list[tuple[str, float]]] = {"seed": [("hub", 1.0), ("x", 1.0)], "x": [("seed", 1.0)]}
    adj["hub"] = [("seed", 1.0)] + [(f"leaf{i}", 1.0) for i in range(5000)]
    for i in range(5000):
        adj[f"leaf{i}"] = [("hub", 1.0)]
    walk = MemoryWalk(adj)
    res = local_pagerank(walk, {"seed": 1.0}, epsilon=1e-3, first_limit=64)
    assert res.edges_read < 1200
    assert "hub" not in res.degrees


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 25))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from([0.5, 1.0, 2.0, 3.0])), max_size=60))
    seeds = draw(st.dictionaries(st.integers(0, n - 1), st.floats(0.01, 1.0), min_size=1, max_size=4))
    eps = draw(st.sampled_from([1e-2, 1e-3, 1e-5]))
    limit = draw(st.sampled_from([1, 2, 64]))
    damping = draw(st.sampled_from([0.5, 0.85]))
    return n, edges, seeds, eps, limit, damping


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_the_bound_holds_on_random_graphs(case) -> None:
    n, edges, seeds, eps, limit, damping = case
    adj: dict[str, dict[str, float]] = {f"n{i}": {} for i in range(n)}
    for a, b, w in edges:
        if a != b:
            adj[f"n{a}"][f"n{b}"] = adj[f"n{a}"].get(f"n{b}", 0.0) + w
            adj[f"n{b}"][f"n{a}"] = adj[f"n{b}"].get(f"n{a}", 0.0) + w
    named = {f"n{i}": w for i, w in seeds.items()}
    exact = exact_ppr(adj, named, damping)
    res = local_pagerank(MemoryWalk({u: list(vs.items()) for u, vs in adj.items()}), named, damping, eps, first_limit=limit)
    assert_within_bound(res.scores, exact, {u: sum(v.values()) for u, v in adj.items()}, eps)

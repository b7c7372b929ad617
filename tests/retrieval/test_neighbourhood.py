"""The walk graph read around nodes from the store (``retrieval/neighbourhood.py``) is the whole-graph walk's,
node by node, on the ingested examples, on SQLite and on the Bolt server."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph.graph_store import GraphStore, SQLiteGraphStore
from stratagraph.retrieval.index import GraphIndex
from stratagraph.retrieval.neighbourhood import StoreWalk
from stratagraph.retrieval.ppr import walk_pairs
from tests.graph_store.bolt import bolt_store, bolt_target
from tests.retrieval.walks import undirected


@pytest.fixture(params=["sqlite", "bolt"])
def examples_graph(request: pytest.FixtureRequest, examples_home: Path, tmp_path: Path) -> Iterator[GraphStore]:
    """The examples' graph: the ingested SQLite store, or a copy of it on the Bolt server."""
    sqlite = SQLiteGraphStore(examples_home / "graph.sqlite")
    if request.param == "sqlite":
        yield sqlite
        sqlite.close()
        return
    bolt = bolt_store(tmp_path)
    bolt.copy_from(sqlite.export())
    sqlite.close()
    yield bolt
    bolt.close()
    bolt_target().drop(str(tmp_path))


def summed(adjacent) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for v, w in adjacent.neighbours:
        out[v] += w
    return dict(out)


def test_store_walk_is_the_whole_graph_walk(examples_graph: GraphStore) -> None:
    index = GraphIndex.from_store(examples_graph)
    pairs, _, _ = walk_pairs(index, 2.0)
    want = undirected(pairs)
    nodes = sorted(set(index.chunks.ids) | set(want))
    assert len(nodes) > 300 and any(p[0].startswith("ent:") and "#" in p[1] for p in pairs if pairs[p] == 2.0)
    got = StoreWalk(examples_graph).fetch(nodes, limit=10**6)
    assert set(got) == set(nodes)
    for u in nodes:
        assert got[u].complete
        assert summed(got[u]) == pytest.approx(want.get(u, {}), rel=1e-12), u


def test_a_limited_read_is_the_heaviest_edges_and_says_it_is_partial(examples_graph: GraphStore) -> None:
    index = GraphIndex.from_store(examples_graph)
    want = undirected(walk_pairs(index, 2.0)[0])
    hub = max(want, key=lambda u: len(want[u]))
    full = StoreWalk(examples_graph).fetch([hub], limit=10**6)[hub]
    part = StoreWalk(examples_graph).fetch([hub], limit=3)[hub]
    assert full.complete and not part.complete
    assert part.degree <= full.degree
    walked = [w for v, w in part.neighbours][:3]
    assert walked == sorted(walked, reverse=True)

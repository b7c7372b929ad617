"""SQLite-specific: many threads on one store object, other processes writing the same file, bad files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from itertools import pairwise
from pathlib import Path

import pytest

from stratagraph.config import Settings
from stratagraph.graph_store import SQLiteGraphStore, StoreUnavailable, open_graph_store
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel

L, T = NodeLabel, EdgeType
SHARED = "ent:shared"

WRITER = r"""
import json, sys
from stratagraph.graph_store.sqlite import SQLiteGraphStore
from stratagraph.schema import Edge, Node

path, payload = sys.argv[1], sys.argv[2]
with SQLiteGraphStore(path) as store:
    for op in json.loads(open(payload, encoding="utf-8").read()):
        if op["op"] == "delete":
            store.delete_document(op["doc_id"])
        else:
            store.replace_document(op["doc_id"], [Node(**n) for n in op["nodes"]], [Edge(**e) for e in op["edges"]])
"""


def canonical(export: dict) -> str:
    return json.dumps(export, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def tag(doc_id: str) -> str:
    """A word only this document's chunks contain."""
    return "token" + doc_id.replace("-", "")


def make_doc(doc_id: str, chunks: int = 4) -> tuple[list[Node], list[Edge]]:
    """A document with one section, a NEXT chain of chunks, and a mention of the shared entity."""
    d = [doc_id]
    sec = f"{doc_id}::s1"
    cids = [f"{doc_id}#1#{i}" for i in range(chunks)]
    nodes = [
        Node(id=doc_id, label=L.DOCUMENT, doc_ids=d, props={"title": doc_id}),
        Node(id=sec, label=L.SECTION, doc_ids=d, props={"title": "Body", "level": 1, "order": 0}),
        Node(id=SHARED, label=L.ENTITY, doc_ids=d, props={"name": "Shared"}),
        *[
            Node(id=c, label=L.CHUNK, doc_ids=d, props={"text": f"{doc_id.replace('-', ' ')} chunk {i} {tag(doc_id)}"})
            for i, c in enumerate(cids)
        ],
    ]
    edges = [
        Edge(type=T.HAS_SECTION, src=doc_id, dst=sec, doc_ids=d),
        *[Edge(type=T.HAS_CHUNK, src=sec, dst=c, doc_ids=d) for c in cids],
        *[Edge(type=T.NEXT, src=a, dst=b, doc_ids=d) for a, b in pairwise(cids)],
        Edge(type=T.MENTIONS, src=cids[0], dst=SHARED, doc_ids=d),
    ]
    return nodes, edges


def payload(tmp_path: Path, name: str, ops: list[tuple[str, str]]) -> Path:
    out = []
    for op, doc_id in ops:
        entry: dict = {"op": op, "doc_id": doc_id}
        if op == "replace":
            nodes, edges = make_doc(doc_id)
            entry["nodes"] = [n.model_dump(mode="json") for n in nodes]
            entry["edges"] = [e.model_dump(mode="json") for e in edges]
        out.append(entry)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(out), encoding="utf-8")
    return path


def spawn(db: Path, ops: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(ops)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(proc: subprocess.Popen[str]) -> None:
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


def sequential_export(tmp_path: Path, doc_ids: list[str]) -> str:
    with SQLiteGraphStore(tmp_path / "sequential" / "graph.sqlite") as ref:
        for d in doc_ids:
            ref.replace_document(d, *make_doc(d))
        return canonical(ref.export())


# ------------------------------------------------------------------------------------------ threads


def test_many_threads_one_store(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(t: int) -> None:
        try:
            start.wait()
            for i in range(6):
                d = f"t{t}-d{i}"
                store.replace_document(d, *make_doc(d))
                assert [x.node.id for x in store.neighbors(f"{d}#1#0", [T.NEXT])] == [f"{d}#1#1"]
                assert f"{d}#1#0" in {x.id for x in store.personalized_pagerank({d: 1.0}, top_k=50)}
                assert store.bm25_search(tag(d))[0].id.startswith(d)
                assert len(store.subgraph([SHARED], hops=1).nodes) >= 2
                store.counts()
                if i % 2:
                    store.delete_document(d)
        except BaseException as exc:  # re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]

    kept = sorted(f"t{t}-d{i}" for t in range(8) for i in range(0, 6, 2))
    assert store.document_ids() == kept
    assert canonical(store.export()) == sequential_export(tmp_path, kept)
    mentions = {x.node.id for x in store.neighbors(SHARED, [T.MENTIONS], "in")}
    assert mentions == {f"{d}#1#0" for d in kept}
    # the incrementally patched adjacency agrees with a full reload by a fresh object
    with SQLiteGraphStore(tmp_path / "g.sqlite") as other:
        seeds = {SHARED: 1.0, kept[0]: 2.0}
        assert store.personalized_pagerank(seeds) == other.personalized_pagerank(seeds)
        assert store.subgraph([SHARED], hops=2) == other.subgraph([SHARED], hops=2)
    store.close()


# ------------------------------------------------------------------------------------------ processes


def test_other_process_writes_are_seen(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite"
    store = SQLiteGraphStore(db)
    store.replace_document("a", *make_doc("a"))
    assert {x.id for x in store.personalized_pagerank({SHARED: 1.0})} == {n.id for n in make_doc("a")[0]}

    proc = spawn(db, payload(tmp_path, "w1", [("replace", f"p{i}") for i in range(20)]))
    reads = 0
    while proc.poll() is None:  # read while the other process writes
        store.personalized_pagerank({SHARED: 1.0}, top_k=5)
        store.neighbors(SHARED, direction="in")
        store.bm25_search("chunk")
        reads += 1
        time.sleep(0.005)
    finish(proc)
    assert reads > 0

    expected = sorted(["a", *(f"p{i}" for i in range(20))])
    assert store.document_ids() == expected
    assert {x.node.id for x in store.neighbors(SHARED, [T.MENTIONS], "in")} == {f"{d}#1#0" for d in expected}
    ranked = {x.id for x in store.personalized_pagerank({"p4": 1.0})}
    assert {"p4#1#3", SHARED, "a#1#0"} <= ranked
    assert "p3#1#0" in {n.id for n in store.subgraph(["p4#1#0"], hops=2).nodes}
    assert [h.id for h in store.bm25_search(tag("p2"), k=1)] == ["p2#1#0"]

    finish(spawn(db, payload(tmp_path, "w2", [("delete", "p4"), ("delete", "a")])))
    assert "p4" not in {x.id for x in store.personalized_pagerank({"p4": 1.0, SHARED: 1.0})}
    assert store.subgraph(["a#1#0"], hops=1).nodes == []
    assert store.neighbors("p4#1#0") == []
    assert store.bm25_search(tag("p4")) == []
    shared = store.get_node(SHARED)
    assert shared is not None and shared.doc_ids == sorted(f"p{i}" for i in range(20) if i != 4)

    store.replace_document("b", *make_doc("b"))  # own write after a foreign one: adjacency stays right
    assert "b#1#0" in {x.id for x in store.personalized_pagerank({SHARED: 1.0})}
    store.close()


def test_two_processes_write_disjoint_documents(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite"
    left = [f"left-{i}" for i in range(40)]
    right = [f"right-{i}" for i in range(40)]
    procs = [
        spawn(db, payload(tmp_path, "left", [("replace", d) for d in left])),
        spawn(db, payload(tmp_path, "right", [("replace", d) for d in right])),
    ]
    for proc in procs:
        finish(proc)
    with SQLiteGraphStore(db) as store:
        assert store.document_ids() == sorted(left + right)
        shared = store.get_node(SHARED)
        assert shared is not None and shared.doc_ids == sorted(left + right)  # unions never lost an update
        assert canonical(store.export()) == sequential_export(tmp_path, right + left)


# ------------------------------------------------------------------------------------------ opening


def test_non_sqlite_file_raises_store_unavailable(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-db.sqlite"
    bogus.write_bytes(b"this is definitely not an SQLite database file" * 100)
    with pytest.raises(StoreUnavailable, match=r"not-a-db\.sqlite"):
        SQLiteGraphStore(bogus)


def test_directory_path_raises_store_unavailable(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match=re.escape(str(tmp_path))):
        SQLiteGraphStore(tmp_path)


def test_creates_parent_dirs_and_reopens(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "er" / "graph.sqlite"
    with SQLiteGraphStore(db) as store:
        store.replace_document("a", *make_doc("a"))
    with SQLiteGraphStore(db) as again:
        assert again.document_ids() == ["a"]
        assert again.bm25_search(tag("a"))[0].id == "a#1#0"


def test_open_graph_store_factory(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    with open_graph_store(settings) as store:
        assert isinstance(store, SQLiteGraphStore)
        assert settings.sqlite_path.exists()
    with pytest.raises(StoreUnavailable, match="neo4j"):
        open_graph_store(settings.model_copy(update={"graph": "neo4j"}))


def test_closed_store_refuses_use_from_any_thread(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    store.counts()  # this thread now has a connection
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreUnavailable):
        store.counts()
    with pytest.raises(StoreUnavailable):
        store.personalized_pagerank({"x": 1.0})
    raised: list[BaseException] = []

    def other_thread() -> None:
        try:
            store.counts()
        except BaseException as exc:
            raised.append(exc)

    th = threading.Thread(target=other_thread)
    th.start()
    th.join()
    assert len(raised) == 1 and isinstance(raised[0], StoreUnavailable)

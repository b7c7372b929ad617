"""SQLite-specific: many threads on one store object, other processes writing the same file, bad files; the
retrieval index built over the store (``RetrievalContext.index`` / ``bm25``) follows every write."""

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
from stratagraph.graph_store import DocumentVersion, GraphStore, SQLiteGraphStore, StoreUnavailable, open_graph_store
from stratagraph.retrieval import RetrievalContext
from stratagraph.schema import Edge, EdgeType, Node, NodeLabel

L, T = NodeLabel, EdgeType
SHARED = "ent:shared"

WRITER = r"""
import json, sys
from stratagraph.graph_store.base import DocumentVersion
from stratagraph.graph_store.sqlite import SQLiteGraphStore
from stratagraph.schema import Edge, Node

path, payload = sys.argv[1], sys.argv[2]
with SQLiteGraphStore(path) as store:
    for op in json.loads(open(payload, encoding="utf-8").read()):
        if op["op"] == "delete":
            store.delete_document(op["doc_id"])
        else:
            store.replace_documents([DocumentVersion(doc_id=op["doc_id"], nodes=[Node(**n) for n in op["nodes"]],
                                                     edges=[Edge(**e) for e in op["edges"]])])
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


def replace(store: GraphStore, doc_id: str) -> None:
    nodes, edges = make_doc(doc_id)
    store.replace_documents([DocumentVersion(doc_id=doc_id, nodes=nodes, edges=edges)])


def doc_ids(store: GraphStore) -> list[str]:
    return [n.id for n in store.nodes_by_label(L.DOCUMENT)]


def context(store: GraphStore) -> RetrievalContext:
    """A retrieval context over the graph alone (the index and BM25 need no vectors)."""
    return RetrievalContext(graph=store, vectors=None)  # type: ignore[arg-type]


def mentioning(store: GraphStore, entity: str) -> set[str]:
    return {e.src for e in store.get_edges(dst=entity, types=[T.MENTIONS])}


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
            replace(ref, d)
        return canonical(ref.export())


# ------------------------------------------------------------------------------------------ threads


def test_many_threads_one_store(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    ctx = context(store)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(t: int) -> None:
        try:
            start.wait()
            for i in range(6):
                d = f"t{t}-d{i}"
                replace(store, d)
                assert [x.dst for x in store.get_edges(src=f"{d}#1#0", types=[T.NEXT])] == [f"{d}#1#1"]
                assert f"{d}#1#0" in ctx.index().chunks  # the index of a later generation
                assert ctx.bm25().search(tag(d), 5)[0].id.startswith(d)
                assert f"{d}#1#0" in mentioning(store, SHARED)
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
    assert doc_ids(store) == kept
    assert canonical(store.export()) == sequential_export(tmp_path, kept)
    assert mentioning(store, SHARED) == {f"{d}#1#0" for d in kept}
    # the shared context's index agrees with one built fresh by another object
    with SQLiteGraphStore(tmp_path / "g.sqlite") as other:
        mine, theirs = ctx.index(), context(other).index()
        assert mine.chunks.ids == theirs.chunks.ids and mine.edges == theirs.edges
        assert [h.id for h in ctx.bm25().search("chunk", 50)] == [h.id for h in context(other).bm25().search("chunk", 50)]
    store.close()


# ------------------------------------------------------------------------------------------ processes


def test_other_process_writes_are_seen(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite"
    store = SQLiteGraphStore(db)
    ctx = context(store)
    replace(store, "a")
    assert set(ctx.index().chunks.ids) == {n.id for n in make_doc("a")[0] if "#" in n.id}

    proc = spawn(db, payload(tmp_path, "w1", [("replace", f"p{i}") for i in range(20)]))
    reads = 0
    while proc.poll() is None:  # read while the other process writes
        ctx.index()
        ctx.bm25().search("chunk", 5)
        mentioning(store, SHARED)
        reads += 1
        time.sleep(0.005)
    finish(proc)
    assert reads > 0

    expected = sorted(["a", *(f"p{i}" for i in range(20))])
    assert doc_ids(store) == expected
    assert mentioning(store, SHARED) == {f"{d}#1#0" for d in expected}
    assert {f"{d}#1#3" for d in expected} <= set(ctx.index().chunks.ids)
    assert ctx.index().entities_of_fact("none") == [] and SHARED in ctx.index().entities
    assert [h.id for h in ctx.bm25().search(tag("p2"), 1)] == ["p2#1#0"]

    finish(spawn(db, payload(tmp_path, "w2", [("delete", "p4"), ("delete", "a")])))
    assert "p4#1#0" not in ctx.index().chunks and "a#1#0" not in ctx.index().chunks
    assert store.get_edges(src="p4#1#0") == []
    assert ctx.bm25().search(tag("p4"), 5) == []
    shared = store.get_node(SHARED)
    assert shared is not None and shared.doc_ids == sorted(f"p{i}" for i in range(20) if i != 4)

    replace(store, "b")  # own write after a foreign one
    assert "b#1#0" in ctx.index().chunks
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
        assert doc_ids(store) == sorted(left + right)
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
        replace(store, "a")
    with SQLiteGraphStore(db) as again:
        assert doc_ids(again) == ["a"]
        assert context(again).bm25().search(tag("a"), 5)[0].id == "a#1#0"


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
        store.generation()
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

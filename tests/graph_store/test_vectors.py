"""VectorStore over real Chroma (persistent and a real `chroma run` server) with the real offline MiniLM model."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from stratagraph.config import Settings
from stratagraph.embeddings import get_minilm_embeddings
from stratagraph.graph_store.base import ScoredId, StoreUnavailable
from stratagraph.graph_store.vectors import COLLECTIONS, VectorStore, parse_chroma_url

DOCS = {
    "doc.md#1#0": "Paris is the capital and largest city of France.",
    "doc.md#1#1": "The Amazon rainforest covers much of the Amazon basin of South America.",
    "entity:org/acme#x": "Acme Corporation reported quarterly revenue of 4.2 billion dollars.",
    "a/b:c": "Ludwig van Beethoven composed nine symphonies in Vienna.",
}

# A child process that must not download anything: Chroma's default embedding function and any
# non-loopback connection fail loudly.
NO_DOWNLOAD = r"""
import socket
_connect = socket.socket.connect
def _guard(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and "/" not in host:
        raise RuntimeError(f"network access attempted: {address!r}")
    return _connect(self, address)
socket.socket.connect = _guard
from chromadb.api.types import DefaultEmbeddingFunction
def _boom(self, input):
    raise RuntimeError("Chroma's default embedding function was used")
DefaultEmbeddingFunction.__call__ = _boom
"""

REOPEN = NO_DOWNLOAD + r"""
import json, sys
from stratagraph.config import Settings
from stratagraph.graph_store.vectors import VectorStore
vs = VectorStore(Settings(home=sys.argv[1]))
hits = vs.query("chunks", "Which city is the capital of France?", k=2)
print(json.dumps({"count": vs.count("chunks"), "hits": [h.id for h in hits]}))
"""

WRITER = NO_DOWNLOAD + r"""
import json, os, sys, time
import numpy as np
from stratagraph.config import Settings
from stratagraph.graph_store.vectors import VectorStore
home, tag, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
vs = VectorStore(Settings(home=home))
while not os.path.exists(go):
    time.sleep(0.005)
rng = np.random.default_rng(ord(tag))
for start in range(0, n, 25):
    ids = [f"{tag}#{i}" for i in range(start, start + 25)]
    vs.upsert("chunks", ids, None, [{"doc_id": tag}] * 25, embeddings=rng.normal(size=(25, 384)))
    vs.query("chunks", embedding=rng.normal(size=384), k=5)
print(json.dumps({"count": vs.count("chunks"), "visible": len(vs.query("chunks", embedding=np.ones(384), k=10000))}))
"""


def _settings(home: Path, **kw: object) -> Settings:
    return Settings(home=home, embeddings="minilm", embedding_threads=2, **kw)


def _child_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "STRATAGRAPH_CHROMA_URL": "", "OPENBLAS_NUM_THREADS": "1"}


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[VectorStore]:
    store = VectorStore(_settings(tmp_path / "store"), get_minilm_embeddings())
    yield store
    store.close()


def _unit(i: int, dim: int = 384) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


@pytest.mark.parametrize("collection", COLLECTIONS)
def test_upsert_query_get_delete_on_every_collection(vs: VectorStore, collection: str) -> None:
    ids, texts = list(DOCS), list(DOCS.values())
    vs.upsert(collection, ids, texts, [{"doc_id": "doc.md"}, {"doc_id": "doc.md"}, {"doc_id": "acme"}, None])
    assert vs.count(collection) == 4
    assert vs.ids(collection) == sorted(ids)
    hits = vs.query(collection, "What is the capital of France?", k=3)
    assert [h.id for h in hits][0] == "doc.md#1#0" and len(hits) == 3
    assert all(isinstance(h, ScoredId) and -1.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    vectors = vs.get_embeddings(collection, ["a/b:c", "entity:org/acme#x", "missing"])
    assert set(vectors) == {"a/b:c", "entity:org/acme#x"}
    expected = vs.embed_query(DOCS["a/b:c"])
    np.testing.assert_allclose(vectors["a/b:c"], expected, atol=1e-5)
    assert abs(float(np.linalg.norm(vectors["entity:org/acme#x"])) - 1.0) < 1e-5
    vs.delete(collection, ["doc.md#1#0", "never-there"])
    assert vs.count(collection) == 3
    assert "doc.md#1#0" not in {h.id for h in vs.query(collection, "capital of France", k=10)}
    vs.delete_where(collection, {"doc_id": "doc.md"})
    assert vs.ids(collection) == ["a/b:c", "entity:org/acme#x"]
    others = [c for c in COLLECTIONS if c != collection]
    assert all(vs.count(c) == 0 for c in others)


def test_hnsw_search_list_is_set_and_old_stores_are_upgraded(tmp_path: Path) -> None:
    from stratagraph.graph_store.vectors import HNSW_EF_SEARCH

    home = tmp_path / "store"
    store = VectorStore(_settings(home), get_minilm_embeddings())
    try:
        for name in COLLECTIONS:
            assert store._col(name).configuration_json["hnsw"]["ef_search"] == HNSW_EF_SEARCH
        store._col("chunks").modify(configuration={"hnsw": {"ef_search": 100}})  # as a store made earlier
    finally:
        store.close()
    reopened = VectorStore(_settings(home), get_minilm_embeddings())
    try:
        assert reopened._col("chunks").configuration_json["hnsw"]["ef_search"] == HNSW_EF_SEARCH
    finally:
        reopened.close()


def test_many_queries_in_one_call_equal_one_by_one(vs: VectorStore) -> None:
    vs.upsert("facts", [f"f{i}" for i in range(6)], None, embeddings=np.vstack([_unit(i) for i in range(6)]))
    queries = np.vstack([_unit(1) + 0.5 * _unit(2), _unit(4)])
    assert vs.query_many("facts", queries, k=3) == [vs.query("facts", embedding=q, k=3) for q in queries]
    assert vs.get_metadata("facts", ["f1", "nope"]).keys() == {"f1"}


def test_cosine_scores_and_tie_order(vs: VectorStore) -> None:
    diag = (_unit(0) + _unit(1)) / np.sqrt(2)
    vs.upsert("facts", ["x", "diag", "y", "neg"], None, embeddings=np.stack([_unit(0), diag, _unit(1), -_unit(0)]))
    hits = vs.query("facts", embedding=_unit(0), k=10)
    assert [h.id for h in hits] == ["x", "diag", "y", "neg"]
    np.testing.assert_allclose([h.score for h in hits], [1.0, np.sqrt(0.5), 0.0, -1.0], atol=1e-5)
    tied = ["t5", "t1", "t4", "t2", "t3"]
    vs.upsert("entities", tied + ["far"], None, embeddings=np.stack([_unit(2)] * 5 + [_unit(3)]))
    top = vs.query("entities", embedding=_unit(2), k=3)
    assert [h.id for h in top] == ["t1", "t2", "t3"]  # equal scores: id ascending, also at the cut
    assert len({h.score for h in top}) == 1


def test_k_larger_than_collection_empty_collection_and_k_zero(vs: VectorStore) -> None:
    assert vs.query("chunks", "anything", k=5) == []
    vs.upsert("chunks", ["a", "b", "c"], ["one", "two", "three"])
    assert len(vs.query("chunks", "one", k=1000)) == 3
    assert vs.query("chunks", "one", k=0) == []
    with pytest.raises(ValueError):
        vs.query("chunks", "one", embedding=_unit(0))
    with pytest.raises(ValueError):
        vs.query("nope", "one")


def test_metadata_cleaning_and_filters(vs: VectorStore) -> None:
    metas = [
        {"doc_id": "d1", "level": 1, "score": 0.5, "ok": True, "tags": ["b", "a"], "gone": None, "amount": Decimal("4.20")},
        {"doc_id": "d1", "level": 2, "extra": {"k": 1}},
        {"doc_id": "d2", "level": 1},
        {},
    ]
    vs.upsert("sections", ["s#1", "s#2", "s#3", "s#4"], ["alpha", "beta", "gamma", "delta"], metas)
    assert vs.ids("sections", filters={"doc_id": "d1"}) == ["s#1", "s#2"]
    assert vs.ids("sections", filters={"doc_id": "d1", "level": 1}) == ["s#1"]
    assert vs.ids("sections", filters={"tags": '["b", "a"]'}) == ["s#1"]  # lists and dicts are stored as JSON
    assert vs.ids("sections", filters={"amount": "4.20"}) == ["s#1"]
    assert vs.ids("sections", filters={"ok": True}) == ["s#1"]
    hits = vs.query("sections", "alpha", k=10, filters={"level": 1})
    assert {h.id for h in hits} == {"s#1", "s#3"} and hits[0].id == "s#1"
    assert vs.ids("sections", filters={"doc_id": "none"}) == []
    with pytest.raises(ValueError):
        vs.delete_where("sections", {})


def test_filter_translation() -> None:
    where = VectorStore.where_clause
    assert where(None) is None and where({}) is None
    assert where({"doc_id": "a"}) == {"doc_id": "a"}
    assert where({"doc_id": ["a"]}) == {"doc_id": "a"}  # one value: an equality
    assert where({"year": ["2024", 2024]}) == {"$or": [{"year": "2024"}, {"year": 2024}]}  # not $in: mixed types
    assert where({"year": ("2024", 2024)}) == where({"year": ["2024", 2024]})
    assert where({"year": {2024, "2024"}}) == {"$or": [{"year": 2024}, {"year": "2024"}]}  # a set in a fixed order
    assert where({"level": np.int64(2)}) == {"level": 2}
    assert where({"level": 1, "doc_id": ["a", "b"]}) == {  # several keys: all of them, in key order
        "$and": [{"doc_id": {"$in": ["a", "b"]}}, {"level": 1}]
    }
    assert where({"doc_id": ("b", "a")}) == {"doc_id": {"$in": ["b", "a"]}}  # values of one type: $in
    assert where({"level": [1, True]}) == {"$or": [{"level": 1}, {"level": True}]}  # a bool is not an int here
    assert where({"level": [np.int64(1), 2]}) == {"level": {"$in": [1, 2]}}
    with pytest.raises(TypeError, match="not Chroma syntax"):  # Chroma's own syntax stays inside vectors.py
        where({"$and": [{"doc_id": "a"}, {"year": "2024"}]})
    with pytest.raises(ValueError, match="matches nothing"):
        where({"doc_id": []})
    with pytest.raises(TypeError, match="not a string, number or bool"):
        where({"doc_id": {"$in": ["a", "b"]}})  # an operator below the top level is not a plain filter
    with pytest.raises(TypeError):
        where({"doc_id": None})


def test_plain_filters_on_every_method(vs: VectorStore) -> None:
    metas = [{"doc_id": "a", "year": 2024}, {"doc_id": "a", "year": "2024"}, {"doc_id": "b", "year": 2023}, {"doc_id": "c"}]
    vs.upsert("facts", ["f1", "f2", "f3", "f4"], None, metas, embeddings=np.vstack([_unit(i) for i in range(4)]))
    assert vs.ids("facts", {"year": ["2024", 2024]}) == ["f1", "f2"]  # a list mixing types: any of them
    assert vs.ids("facts", {"doc_id": ("a", "b"), "year": 2024}) == ["f1"]  # several keys: all of them
    assert vs.ids("facts", {"doc_id": {"b", "c"}}) == ["f3", "f4"]
    assert vs.ids("facts", {"doc_id": ["c"]}) == ["f4"]
    assert sorted(vs.metadata("facts", {"doc_id": ["b", "c"]})) == ["f3", "f4"]
    assert vs.metadata("facts", {"year": 2023}) == {"f3": {"doc_id": "b", "year": 2023}}
    assert sorted(vs.metadata("facts", None)) == ["f1", "f2", "f3", "f4"]
    hits = vs.query("facts", embedding=_unit(3), k=4, filters={"doc_id": ["a", "c"]})
    assert [h.id for h in hits] == ["f4", "f1", "f2"]
    many = vs.query_many("facts", np.vstack([_unit(0), _unit(2)]), k=2, filters={"year": [2023, "2024"]})
    assert [[h.id for h in hits] for hits in many] == [["f2", "f3"], ["f3", "f2"]]
    vs.delete_where("facts", {"doc_id": ["a", "c"]})
    assert vs.ids("facts") == ["f3"]


def test_upsert_replaces_last_duplicate_wins_and_lengths_checked(vs: VectorStore) -> None:
    vs.upsert("chunks", ["x"], ["The weather is sunny today."])
    vs.upsert("chunks", ["x", "y", "x"], ["first", "other", "A symphony by Beethoven."])
    assert vs.count("chunks") == 2
    np.testing.assert_allclose(vs.get_embeddings("chunks", ["x"])["x"], vs.embed_query("A symphony by Beethoven."), atol=1e-5)
    with pytest.raises(ValueError, match="items for"):
        vs.upsert("chunks", ["a", "b"], ["only one"])
    with pytest.raises(ValueError):
        vs.upsert("chunks", ["a"], None)
    vs.upsert("chunks", [], [])
    assert vs.count("chunks") == 2


def test_large_batches_are_chunked(vs: VectorStore) -> None:
    vs._max_batch = 7  # Chroma's real limit here is 5,461 rows; make the loop visible
    rng = np.random.default_rng(0)
    ids = [f"c#{i:02d}" for i in range(20)]
    vs.upsert("chunks", ids, None, [{"i": i} for i in range(20)], embeddings=rng.normal(size=(20, 384)))
    assert vs.count("chunks") == 20 and vs.ids("chunks") == ids
    assert len(vs.get_embeddings("chunks", ids)) == 20
    vs.delete("chunks", ids[:15])
    assert vs.ids("chunks") == ids[15:]


def test_reopen_in_fresh_client_and_fresh_process_without_download(tmp_path: Path) -> None:
    home = tmp_path / "store"
    with VectorStore(_settings(home)) as first:
        first.upsert("chunks", list(DOCS), list(DOCS.values()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback / legacy embedding-function warnings from Chroma
        second = VectorStore(_settings(home))
    try:
        assert second.count("chunks") == 4
        assert second.query("chunks", "Which city is the capital of France?", k=1)[0].id == "doc.md#1#0"
        config = second._col("chunks").configuration_json
        assert config["embedding_function"]["name"] == "stratagraph"
        assert config["hnsw"]["space"] == "cosine"
    finally:
        second.close()
    proc = subprocess.run(
        [sys.executable, "-c", REOPEN, str(home)], capture_output=True, text=True, timeout=120, env=_child_env(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"count": 4, "hits": ["doc.md#1#0", out["hits"][1]]}
    assert not (tmp_path / ".cache" / "chroma").exists()


def test_other_embedder_on_existing_store_is_refused(tmp_path: Path) -> None:
    from langchain_core.embeddings import FakeEmbeddings

    home = tmp_path / "store"
    VectorStore(_settings(home)).close()
    with pytest.raises(ValueError, match="built with embeddings"):
        VectorStore(_settings(home), FakeEmbeddings(size=384))


def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    home, go, n = tmp_path / "store", tmp_path / "go", 250
    reader = VectorStore(_settings(home))  # loads its index before the writers start: must see their rows after
    reader.upsert("chunks", ["seed"], None, embeddings=[_unit(0)])
    assert [h.id for h in reader.query("chunks", embedding=_unit(0), k=5)] == ["seed"]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), tag, str(n), str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env(tmp_path),
        )
        for tag in "AB"
    ]
    time.sleep(0.5)
    go.touch()
    results = []
    for proc in writers:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-3000:]
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    assert max(r["visible"] for r in results) == 2 * n + 1  # the last writer sees the other's rows by query
    try:
        assert reader.count("chunks") == 2 * n + 1
        assert len(reader.query("chunks", embedding=np.ones(384), k=10_000)) == 2 * n + 1
        assert len(reader.ids("chunks", filters={"doc_id": "A"})) == n
    finally:
        reader.close()
    with VectorStore(_settings(home)) as fresh:
        assert len(fresh.query("chunks", embedding=np.ones(384), k=10_000)) == 2 * n + 1


def test_threads_share_one_store(vs: VectorStore) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(8, 40, 384)).astype(np.float32)

    def work(i: int) -> int:
        vs.upsert("chunks", [f"t{i}#{j}" for j in range(40)], None, embeddings=vectors[i])
        return len(vs.query("chunks", embedding=vectors[i][0], k=5))

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(n == 5 for n in pool.map(work, range(8)))
    assert vs.count("chunks") == 320


# ------------------------------------------------------------------------------------------ Chroma server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_parse_chroma_url() -> None:
    assert parse_chroma_url("http://127.0.0.1:8123") == ("127.0.0.1", 8123, False)
    assert parse_chroma_url("https://chroma.example.org") == ("chroma.example.org", 443, True)
    assert parse_chroma_url("localhost") == ("localhost", 8000, False)
    with pytest.raises(ValueError):
        parse_chroma_url("ftp://host")
    with pytest.raises(ValueError):
        parse_chroma_url("http://host:8000/some/path")


def test_unreachable_server_raises_store_unavailable_quickly(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    start = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"127\.0\.0\.1.*3 attempt") as info:
        VectorStore(_settings(tmp_path / "store", chroma_url=url), connect_attempts=3, retry_max_wait=0.05)
    assert url in str(info.value)
    assert time.monotonic() - start < 10
    assert not (tmp_path / "store" / "chroma").exists()


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the chroma command is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
                response.read()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("chroma run did not start")
            time.sleep(0.05)
    yield url, proc
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_client_against_real_chroma_server(tmp_path: Path, chroma_server: tuple[str, subprocess.Popen]) -> None:
    url, proc = chroma_server
    vs = VectorStore(_settings(tmp_path / "store", chroma_url=url), connect_attempts=2, retry_max_wait=0.05)
    vs.upsert("chunks", list(DOCS), list(DOCS.values()), [{"doc_id": "d"}] * 4)
    assert vs.count("chunks") == 4
    assert vs.query("chunks", "capital of France", k=2)[0].id == "doc.md#1#0"
    assert vs.ids("chunks", filters={"doc_id": "d"}) == sorted(DOCS)
    vs.delete("chunks", ["a/b:c"])
    assert vs.count("chunks") == 3
    with VectorStore(_settings(tmp_path / "other", chroma_url=url)) as again:
        assert again.count("chunks") == 3
    assert not (tmp_path / "store" / "chroma").exists()
    proc.terminate()
    proc.wait(timeout=10)
    start = time.monotonic()
    with pytest.raises(StoreUnavailable, match="unreachable"):
        vs.count("chunks")
    assert time.monotonic() - start < 10
    vs.close()


def test_the_metadata_of_more_rows_than_sqlite_takes_variables_for(tmp_path: Path) -> None:
    """Chroma's SQLite fails one read of more than 32,766 rows' metadata ("too many SQL variables"); a store
    of 2wiki-101's size has 34k entity-name rows, and recovery reads them all: the read is batched."""
    store = VectorStore(Settings(home=tmp_path / "big"))
    n = 32_800
    ids = [f"e{i}" for i in range(n)]
    store.upsert("entities", ids, None, [{"entity_id": f"x{i % 7}"} for i in range(n)], np.ones((n, 4), dtype=np.float32))
    everything = store.metadata("entities", None)
    assert len(everything) == n and everything["e32799"] == {"entity_id": "x4"}
    assert len(store.metadata("entities", {"entity_id": "x3"})) == len(range(3, n, 7))

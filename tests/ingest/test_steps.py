"""Ingest workflow helpers that are not covered end to end."""

from __future__ import annotations

import numpy as np

from stratagraph.ingest.steps import _embed_all
from stratagraph.services import Services


def test_embed_all_returns_rows_in_input_order(settings) -> None:
    svc = Services(settings)
    texts = [
        "short",
        "a much longer text about rivers, bridges and the budget of a small city council",
        "",
        "medium length text about parks",
    ] * 70  # more than one window of 256
    spans = [[(0, 5)] if t else [] for t in texts]
    got, span_rows = _embed_all(svc, texts, spans)
    want = np.asarray(svc.embeddings.embed(texts), dtype=np.float32)
    assert got.shape == (len(texts), 384)
    np.testing.assert_allclose(got, want, atol=1e-5)
    _, pooled = svc.embeddings.embed_with_spans(texts[:4], spans[:4])
    for i in range(4):  # each text's span vectors come back with it, whatever window it was embedded in
        np.testing.assert_allclose(span_rows[i], pooled[i], atol=1e-5)
    assert _embed_all(svc, texts[:3], None)[1][0].shape == (0, 0)


def test_embed_all_embeds_a_repeated_text_once(settings) -> None:
    svc = Services(settings)
    texts = ["personnel", "parks", "personnel", "police", "parks"]
    calls: list[list[str]] = []
    embeddings = svc.embeddings
    original = embeddings.embed

    def counting(batch):  # counts what reaches the model; the real model embeds it
        calls.append(list(batch))
        return original(batch)

    embeddings.embed = counting
    try:
        got, _ = _embed_all(svc, texts, None)
    finally:
        del embeddings.embed
    assert sorted(t for batch in calls for t in batch) == ["parks", "personnel", "police"]
    assert np.array_equal(got, np.asarray(original(texts), dtype=np.float32))  # rows in input order, same bits

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


def test_windows_grow_for_short_texts() -> None:
    from stratagraph.ingest.steps import WINDOW_CHARS, _windows

    long_, short = [WINDOW_CHARS * 2] * 5, [10] * 300  # sorted longest first, as _embed_all sorts them
    bounds = _windows(long_ + short, 2)
    assert bounds[:2] == [(0, 2), (2, 4)]  # long texts: the given window
    assert bounds[2] == (4, 6)  # a long text fills the budget of 2 * WINDOW_CHARS characters already
    assert bounds[3] == (6, 70)  # short ones: up to 32 windows' worth (64 texts; 102 would fit the budget)
    assert [i for start, stop in bounds for i in range(start, stop)] == list(range(305))

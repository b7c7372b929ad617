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
    got = _embed_all(svc, texts)
    want = np.asarray(svc.embeddings.embed(texts), dtype=np.float32)
    assert got.shape == (len(texts), 384)
    np.testing.assert_allclose(got, want, atol=1e-5)

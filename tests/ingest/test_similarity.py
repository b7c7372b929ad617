"""SIMILAR edges: symmetric sparse + dense scores, exact incremental top-k on insert and delete."""

from __future__ import annotations

import numpy as np

from stratagraph.ingest.similarity import ChunkTable, content_terms, update_top_k

TEXTS = {
    "a#1#0": ("a", "Green roofs cool the city in summer heat waves."),
    "a#1#1": ("a", "The council approved the library budget."),
    "b#1#0": ("b", "Cool green roofs lower summer heat in the city."),
    "b#1#1": ("b", "Bus fares rise next year."),
    "c#1#0": ("c", "Heat waves and green roofs: summer cooling of city blocks."),
    "c#1#1": ("c", "The library budget was approved by the council."),
}


def _table(ids: list[str]) -> ChunkTable:
    rng = np.random.default_rng(7)
    base = {cid: rng.normal(size=16) for cid in TEXTS}
    base["b#1#0"] = base["a#1#0"] + 0.3 * rng.normal(size=16)
    base["c#1#0"] = base["a#1#0"] + 0.5 * rng.normal(size=16)
    base["c#1#1"] = base["a#1#1"] + 0.2 * rng.normal(size=16)
    dense = np.stack([base[c] / np.linalg.norm(base[c]) for c in ids])
    return ChunkTable.build(ids, [TEXTS[c][0] for c in ids], [TEXTS[c][1] for c in ids], dense)


def _full(ids: list[str], k: int = 2, floor: float = 0.2) -> dict[str, list[tuple[str, float]]]:
    return update_top_k(_table(ids), {}, set(), set(ids), k, floor)


def test_content_terms_drop_function_words() -> None:
    assert set(content_terms("The roofs of the city, the ROOFS!")) == {"roofs", "city"}


def test_scores_are_symmetric_and_never_within_a_document() -> None:
    table = _table(sorted(TEXTS))
    scores = table.scores(list(range(len(TEXTS))))
    finite = np.isfinite(scores)
    assert np.allclose(scores[finite], scores.T[finite], atol=1e-6)
    assert not finite[0, 1] and not finite[0, 0]  # a#1#0 vs a#1#1 and itself


def test_lexical_and_semantic_neighbours_rank_first() -> None:
    lists = _full(sorted(TEXTS))
    assert lists["a#1#0"][0][0] == "b#1#0"
    assert lists["a#1#1"][0][0] == "c#1#1"
    assert all(t.split("#")[0] != "a" for t, _ in lists["a#1#0"])


def test_incremental_insert_equals_full_build() -> None:
    ids = sorted(TEXTS)
    old = [c for c in ids if not c.startswith("c")]
    current = _full(old)
    changed = update_top_k(_table(ids), current, set(), {"c#1#0", "c#1#1"}, 2, 0.2)
    after = {**current, **changed}
    assert {c: v for c, v in after.items() if v} == {c: v for c, v in _full(ids).items() if v}


def test_delete_recomputes_only_chunks_that_lost_a_target() -> None:
    ids = sorted(TEXTS)
    current = _full(ids)
    remaining = [c for c in ids if not c.startswith("b")]
    kept = {c: v for c, v in current.items() if c in remaining}
    lost = {c for c, v in kept.items() if any(t.startswith("b") for t, _ in v)}
    changed = update_top_k(_table(remaining), kept, lost, set(), 2, 0.2)
    after = {**kept, **changed}
    assert {c: v for c, v in after.items() if v} == {c: v for c, v in _full(remaining).items() if v}

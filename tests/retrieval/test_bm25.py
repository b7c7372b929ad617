"""The backend-neutral lexical index: BM25 as SQLite FTS5 computes it, checked against a real FTS5 table."""

from __future__ import annotations

import re
import sqlite3
from itertools import pairwise

import numpy as np
import pytest

from stratagraph.retrieval.bm25 import STOPWORDS, BM25Index, query_terms, tokenize
from tests.conftest import EXAMPLES


def index_of(docs: dict[str, list[str]], section: str = "Notes") -> BM25Index:
    return BM25Index.build([(f"{d}#1#{i}", t, section) for d, texts in docs.items() for i, t in enumerate(texts)])


DOCS = {
    "p": ["graph database engines store graphs", "a cooking recipe for bread", "graph theory basics"],
    "q": ["database tuning for graph workloads and database indexes", "bread and butter"],
}


def test_ranking_filters_and_weird_queries() -> None:
    ix = index_of(DOCS)
    hits = ix.search("graph database", k=10)
    assert {h.id for h in hits} == {"p#1#0", "p#1#2", "q#1#0"}
    assert hits[-1].id == "p#1#2"  # only one of the two terms
    assert all(a.score >= b.score for a, b in pairwise(hits))
    assert [h.id for h in ix.search("graph database", k=1)] == [hits[0].id]
    only_p = np.array([c.startswith("p#") for c in ix.chunk_ids])
    assert [h.id for h in ix.search("database", 10, only_p)] == ["p#1#0"]
    assert ix.search("database", 10, np.zeros(len(ix.chunk_ids), dtype=bool)) == []
    assert {h.id for h in ix.search("Graphs!", 10)} == {"p#1#0", "p#1#2", "q#1#0"}  # stemmed
    for weird in ['"a" OR b* -c: (x)', "AND", 'NEAR(graph "', "^bread", "col:graph", "'; DROP TABLE nodes; --", "\x00"]:
        ix.search(weird, 10)
    assert ix.search('"bread" -c: (x)*', 10)[0].id in {"p#1#1", "q#1#1"}
    assert ix.search("", 10) == [] and ix.search("the of and", 10) == [] and ix.search("?!", 10) == []
    assert ix.search("bread", 0) == []
    assert BM25Index.build([]).search("bread", 5) == []


def test_tie_break_by_id_and_section_title() -> None:
    ix = BM25Index.build([(f"t#1#{i}", "identical words here", "Zebra" if i == 1 else "Misc") for i in (2, 1, 0)])
    assert [h.id for h in ix.search("identical", 10)] == ["t#1#0", "t#1#1", "t#1#2"]
    assert [h.id for h in ix.search("zebra", 10)] == ["t#1#1"]  # the section title is indexed too


def test_tokens_fold_accents_and_stem_like_fts5_porter() -> None:
    assert tokenize("Crème BRÛLÉE, running-dogs 2024") == ["creme", "brule", "run", "dog", "2024"]
    assert tokenize("Naïve cafés running") == ["naiv", "cafe", "run"]
    assert tokenize("is as us") == ["is", "as", "us"]  # shorter than 3 bytes: not stemmed
    assert query_terms("What is the running of the Dogs? running today") == ["run", "dog", "todai"]


def _fts5_ranking(rows: list[tuple[str, str, str]], query: str) -> list[tuple[str, float]]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, section, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.executemany("INSERT INTO t(rowid, text, section) VALUES (?, ?, ?)", [(i, r[1], r[2]) for i, r in enumerate(rows)])
    words: list[str] = []
    for w in re.findall(r"[^\W_]+", query.lower()):
        if w not in words and w not in STOPWORDS:
            words.append(w)
    match = " OR ".join(f'"{w}"' for w in words)
    out = conn.execute(
        "SELECT rowid, -bm25(t, 1.0, 0.3) AS s FROM t WHERE t MATCH ? ORDER BY s DESC", (match,)
    ).fetchall()
    return sorted(((rows[i][0], s) for i, s in out), key=lambda p: (-round(p[1], 9), p[0]))


@pytest.mark.parametrize(
    "query",
    ["How much did Riverton budget for police overtime?", "cool roof retrofits surface temperature",
     "Northwind Robotics revenue guidance quarter", "sensor networks heat vulnerability index"],
)  # fmt: skip
def test_scores_equal_sqlite_fts5_on_the_bundled_examples(query: str) -> None:
    rows = []
    for path in sorted(EXAMPLES.rglob("*.md")):
        for i, para in enumerate(p for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()):
            heading = next((line for line in para.splitlines() if line.startswith("#")), "")
            rows.append((f"{path.stem}#{i}#0", para, heading.lstrip("# ")))
    expected = _fts5_ranking(rows, query)
    got = BM25Index.build(rows).search(query, len(rows))
    assert [h.id for h in got] == [cid for cid, _ in expected]
    assert [h.score for h in got] == pytest.approx([s for _, s in expected], rel=1e-9)

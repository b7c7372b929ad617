"""Extraction worker processes: plain subprocesses that never import the caller's ``__main__``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

from stratagraph.ingest.extractors.workers import WorkerPool


def test_map_keeps_input_order_and_reports_errors() -> None:
    pool = WorkerPool(2)
    try:
        assert pool.map("math:pow", [(2, i) for i in range(7)]) == [2.0**i for i in range(7)]
        with pytest.raises(RuntimeError, match="ValueError: math domain error"):
            pool.map("math:sqrt", [(4,), (-1,)])
        assert pool.map("math:sqrt", [(9,)]) == [3.0]  # a failed job does not take the worker down
    finally:
        pool.close()


def test_a_script_without_a_main_guard_can_use_worker_processes(tmp_path: Path) -> None:
    """multiprocessing's spawn would re-run this script in every child; the workers must not."""
    marker = tmp_path / "runs.txt"
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from stratagraph.ingest.extractors.base import ChunkInput, DocumentInput
            from stratagraph.ingest.extractors.spacy_nlp import MIN_TEXTS_PER_PROCESS, SpacyExtractor

            with open({str(marker)!r}, "a") as f:
                f.write("run\\n")
            texts = ["Marie Curie was born in Warsaw."] * (2 * MIN_TEXTS_PER_PROCESS)
            doc = DocumentInput(
                doc_id="d", title="D",
                chunks=[ChunkInput(chunk_id=f"d#{{i}}", text=t, section_id="d") for i, t in enumerate(texts)],
            )
            ex = SpacyExtractor(n_process=2)
            out = ex.extract([doc])
            ex.close()
            print(len(out[0]), len(out[0][0].facts))
            """
        ),
        encoding="utf-8",
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    count, facts = proc.stdout.split()
    assert int(count) > 0 and int(facts) == 1
    assert marker.read_text().count("run") == 1


def test_warm_runs_once_per_worker_before_the_next_map() -> None:
    pool = WorkerPool(2)
    try:
        pool.warm("os:getpid")  # returns at once; the workers answer while the caller goes on
        pids = pool.map("os:getpid", [()] * 6)
        assert len(pids) == 6 and set(pids) <= {p.pid for p in pool._procs}
        pool.warm("math:sqrt")  # a warm-up that fails (no argument) is reported by the next map
        with pytest.raises(RuntimeError, match="TypeError"):
            pool.map("math:sqrt", [(4,)])
        assert pool.map("math:sqrt", [(9,)]) == [3.0]  # and the pool still works
        pool.warm("os:getpid")
    finally:
        pool.close()  # closing while a warm-up may still run


def test_prepare_starts_the_workers_and_extraction_is_unchanged() -> None:
    from stratagraph.ingest.extractors.base import ChunkInput, DocumentInput
    from stratagraph.ingest.extractors.spacy_nlp import MIN_TEXTS_PER_PROCESS, SpacyExtractor

    texts = [f"Marie Curie was born in Warsaw in {1800 + i}." for i in range(2 * MIN_TEXTS_PER_PROCESS)]
    doc = DocumentInput(
        doc_id="d",
        title="D",
        chunks=[ChunkInput(chunk_id=f"d#{i}", text=t, section_id="d") for i, t in enumerate(texts)],
    )
    cold, warm = SpacyExtractor(n_process=2), SpacyExtractor(n_process=2)
    try:
        warm.prepare(len(texts))
        assert warm._pool is not None and warm._pool.size == 2
        pool = warm._pool
        assert warm.extract([doc]) == cold.extract([doc])
        assert warm._pool is pool  # the prepared workers did the work
        SpacyExtractor(n_process=2).prepare(MIN_TEXTS_PER_PROCESS)  # too few texts for two: nothing starts
    finally:
        cold.close()
        warm.close()

"""Ingest throughput against the cost of plain vector indexing, side by side in one run.

    .venv/bin/python benchmarks/ingest.py [--corpus ../shared/data/2wiki-101/corpus.jsonl] [--limit N]

Runs two phases, each in a fresh subprocess so their peak memory is their own:

* ``ingest``: ``StrataGraph.ingest`` of the JSONL corpus into a fresh store (everything the workflow does);
* ``embed-only``: the same passages (title + text) embedded by the same embedder (same batch size, threads
  and length-sorted windows) and added to a fresh Chroma collection, nothing else.

Prints one JSON document: times, passages/s, peak RSS per phase and the ratio ingest / embed-only (the
LazyGraphRAG yardstick: graph indexing at the cost of vector indexing). Skips cleanly when the corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "2wiki-101" / "corpus.jsonl"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_seconds() -> float:
    """CPU time (user + system) of this process, every thread, and of its finished children (the spaCy
    workers): the work done, which another job sharing the cores inflates far less than the wall time."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _limited_corpus(corpus: Path, limit: int | None, workdir: Path) -> Path:
    if not limit:
        return corpus
    out = workdir / "corpus.jsonl"
    with corpus.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= limit:
                break
            dst.write(line)
    return out


def phase_ingest(corpus: Path, workdir: Path) -> dict:
    from stratagraph import Settings, StrataGraph

    settings = Settings(home=workdir / "store")
    steps: dict[str, float] = {}
    t0, c0 = time.perf_counter(), _cpu_seconds()
    with StrataGraph(settings) as sg:
        last = t0
        reports = []
        inputs = {"paths": [str(corpus)], "base": str(corpus.parent)}
        for update in sg.workflow("ingest").stream(inputs, context=sg.services, stream_mode="updates"):
            now = time.perf_counter()
            (node, value), = update.items()
            steps[node] = round(now - last, 2)
            last = now
            if node == "summarize":
                reports = value["reports"]
        elapsed = time.perf_counter() - t0
        counts = sg.stats()
    cpu = _cpu_seconds() - c0  # after the context closed the extractor's workers (their time counts once reaped)
    return {
        "seconds": round(elapsed, 2),
        "cpu_seconds": round(cpu, 1),
        "steps_seconds": steps,
        "documents": len(reports),
        "failed": sum(1 for r in reports if r.status == "failed"),
        "chunks": counts.nodes["Chunk"],
        "sections": counts.nodes["Section"],
        "entities": counts.nodes["Entity"],
        "facts": counts.nodes["Fact"],
        "edges": {t: n for t, n in counts.edges.items() if n},
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        # spaCy's spawned worker processes (the largest one; they run while the main process waits)
        "peak_rss_worker_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0, 1),
    }


def phase_embed_only(corpus: Path, workdir: Path) -> dict:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    from stratagraph import Settings
    from stratagraph.embeddings import get_embeddings
    from stratagraph.graph_store.chroma_embeddings import ChromaEmbeddingFunction

    settings = Settings(home=workdir / "store")
    records = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    texts = [f"{r.get('title', '')}\n{r.get('text', '')}" for r in records]
    t0, c0 = time.perf_counter(), _cpu_seconds()
    emb = get_embeddings(settings)
    client = chromadb.PersistentClient(
        path=str(workdir / "chroma-only"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    col = client.get_or_create_collection(
        "chunks", embedding_function=ChromaEmbeddingFunction(emb), configuration={"hnsw": {"space": "cosine"}}
    )
    # the same length-sorted windows the ingest workflow embeds in, so the ratio measures the graph's cost
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
    batch = max(settings.embedding_batch_size * 8, 256)
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        vecs = emb.embed([texts[i] for i in idx])
        col.add(ids=[str(i) for i in idx], embeddings=vecs)
    elapsed = time.perf_counter() - t0
    return {
        "seconds": round(elapsed, 2),
        "cpu_seconds": round(_cpu_seconds() - c0, 1),
        "passages": len(texts),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
    }


def _run_phase(name: str, corpus: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, __file__, "--phase", name, "--corpus", str(corpus), "--workdir", tmp],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "ANONYMIZED_TELEMETRY": "False"},
        )
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=None, help="only the first N passages")
    ap.add_argument("--phase", choices=["ingest", "embed-only"], help=argparse.SUPPRESS)
    ap.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.phase:
        fn = phase_ingest if args.phase == "ingest" else phase_embed_only
        print(json.dumps(fn(args.corpus, args.workdir)))
        return 0

    if not args.corpus.exists():
        print(json.dumps({"skipped": f"corpus not found: {args.corpus}"}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        corpus = _limited_corpus(args.corpus, args.limit, Path(tmp))
        passages = sum(1 for line in corpus.open(encoding="utf-8") if line.strip())
        load_before = os.getloadavg()  # another job on the cores slows both phases, not always equally
        embed_only = _run_phase("embed-only", corpus)
        ingest = _run_phase("ingest", corpus)
    report = {
        "corpus": str(args.corpus),
        "passages": passages,
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "ingest": {**ingest, "passages_per_s": round(passages / ingest["seconds"], 1)},
        "embed_only": {**embed_only, "passages_per_s": round(passages / embed_only["seconds"], 1)},
        "ratio_ingest_over_embed_only": round(ingest["seconds"] / embed_only["seconds"], 2),
        "cpu_ratio_ingest_over_embed_only": round(ingest["cpu_seconds"] / embed_only["cpu_seconds"], 2),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

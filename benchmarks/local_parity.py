"""``default`` walked over the whole-graph matrix against ``default`` walked by local push, in one run per dataset.

    .venv/bin/python benchmarks/local_parity.py [--datasets encyclopedia,...] [--epsilon 1e-6,1e-5]
        [--limit N] [--store DIR] [--json]

For every question of each dataset, the same store and the same process answer twice: with the walk by power
iteration over the whole-graph index (``local_walk_facts`` above the store's size) and by local push from the
seeds over neighbourhood reads (``local_walk_facts=0``, ``retrieval/push.py``), at each ``--epsilon``. Prints
recall@5 of both (as ``stratagraph eval`` counts it: gold titles on the passage sets, gold documents on the
document sets), the share of questions whose top-5 distinct documents are identical, the share whose top-5
chunks are identical, and the p50 latency of both paths. Stores are ingested once under ``<store>/eval/``
(``stratagraph eval``'s cache); datasets resolve as in ``benchmarks/retrieval.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DOCUMENT_SETS = ",".join(str(p) for p in sorted((REPO / "benchmarks" / "data").glob("*")) if (p / "questions.jsonl").is_file())
K = 5
WHOLE = None  # local_walk_facts unset: the whole-graph walk


def run_path(ctx, questions, epsilon: float | None, by_doc_id: bool) -> tuple[dict, list[list[str]], list[list[str]]]:  # noqa: ANN001
    """``default`` (ppr's fusion) on every question: the eval summary, each question's top-5 distinct documents
    (what recall@5 counts) and its top-5 chunk ids."""
    from stratagraph.eval.retrieval import run_strategy, summarize
    from stratagraph.retrieval import ppr as P

    params = P.PPRParams() if epsilon is None else P.PPRParams(push_epsilon=epsilon)
    chunks: list[list[str]] = []

    def search(question: str, k: int):  # noqa: ANN202
        result = P.retrieve(ctx, question, k=k, params=params)
        chunks.append([e.chunk_id for e in result.evidence[:K]])
        return result

    run = run_strategy(ctx, "default", questions, K, search=search, by_doc_id=by_doc_id)
    summary = summarize(questions, run, [K])
    summary["p50_ms"] = round(statistics.median(r.ms for r in run.runs), 1)
    return summary, [r.titles[:K] for r in run.runs], chunks[1:]  # the first search is run_strategy's warm-up


def compare(name: str, epsilons: list[float], store: Path, limit: int | None) -> dict:
    from stratagraph.config import Settings
    from stratagraph.eval.datasets import load_dataset
    from stratagraph.eval.retrieval import ensure_store
    from stratagraph.retrieval.base import RetrievalContext
    from stratagraph.services import Services

    dataset = load_dataset(name, limit=limit)
    svc = Services(ensure_store(dataset, Settings(home=store)))
    try:
        def ctx(facts: int) -> RetrievalContext:
            return RetrievalContext(graph=svc.graph, vectors=svc.vectors, settings=svc.settings.model_copy(update={"local_walk_facts": facts}))

        whole, whole_docs, whole_chunks = run_path(ctx(WHOLE), dataset.questions, None, dataset.documents)
        out = {"dataset": dataset.name, "questions": len(dataset.questions), "facts": svc.graph.counts().nodes["Fact"],
               "whole": {"recall@5": whole[f"recall@{K}"], "p50_ms": whole["p50_ms"]}, "local": {}}
        for eps in epsilons:
            local, local_docs, local_chunks = run_path(ctx(0), dataset.questions, eps, dataset.documents)
            same_chunks = sum(a == b for a, b in zip(whole_chunks, local_chunks, strict=True))
            same_docs = sum(a == b for a, b in zip(whole_docs, local_docs, strict=True))
            out["local"][str(eps)] = {
                "recall@5": local[f"recall@{K}"], "p50_ms": local["p50_ms"],
                "identical_top5_docs": round(100 * same_docs / len(dataset.questions), 1),
                "identical_top5_chunks": round(100 * same_chunks / len(dataset.questions), 1),
            }
        return out
    finally:
        svc.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=DOCUMENT_SETS)
    parser.add_argument("--epsilon", default="1e-6")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--store", type=Path, default=REPO / ".stratagraph")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if os.environ.get("STRATAGRAPH_DATA_DIR") is None:
        os.environ["STRATAGRAPH_DATA_DIR"] = str(REPO.parent / "shared" / "data")
    reports = []
    for name in args.datasets.split(","):
        report = compare(name, [float(e) for e in args.epsilon.split(",")], args.store, args.limit)
        reports.append(report)
        if not args.json:
            print(json.dumps(report), flush=True)
    if args.json:
        print(json.dumps({"datasets": reports}))
    else:
        print(table(reports))
    return 0


def table(reports: list[dict]) -> str:
    lines = ["| dataset | facts | eps | recall@5 whole | recall@5 local | identical top-5 docs | identical top-5 chunks | p50 ms whole | p50 ms local |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in reports:
        for eps, row in r["local"].items():
            lines.append(f"| {r['dataset']} | {r['facts']} | {eps} | {r['whole']['recall@5']} | {row['recall@5']} | "
                         f"{row['identical_top5_docs']} | {row['identical_top5_chunks']} | {r['whole']['p50_ms']} | {row['p50_ms']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

"""The LLM extractor against the spaCy extractor on the same documents, through a real OpenAI-compatible server.

    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 STRATAGRAPH_LLM_MODEL=qwen \\
        .venv/bin/python benchmarks/llm_extract.py [--docs examples] [--json]

Two fresh stores, one per extractor, each ingesting ``--docs`` (default ``examples/``). For the LLM run it
reports seconds, requests (every attempt counted, probes included), the structured-output rung the endpoint
settled on, the chunks answered on the first try / after the correction round / left empty, tokens, and
the slowest single request as the client saw it (what ``STRATAGRAPH_REQUEST_TIMEOUT`` must cover); for both
runs entities, facts, facts with typed quantities, and RELATED triples. Exits 0 with a message when no chat
model is configured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from uuid import UUID

REPO = Path(__file__).resolve().parents[1]


def _counts(sg: Any) -> dict[str, int]:
    from stratagraph.schema import NodeLabel

    counts = sg.stats()
    facts = sg.graph.nodes_by_label(NodeLabel.FACT)
    return {
        "documents": counts.nodes["Document"],
        "chunks": counts.nodes["Chunk"],
        "entities": counts.nodes["Entity"],
        "facts": counts.nodes["Fact"],
        "facts_with_quantities": sum(1 for f in facts if f.props.get("quantities")),
        "related": counts.edges["RELATED"],
    }


def run(docs: Path, extractor: str, chat_model: Any = None) -> dict[str, Any]:
    from stratagraph import Settings, StrataGraph

    with tempfile.TemporaryDirectory(prefix=f"sg-bench-{extractor}-") as tmp:
        settings = Settings(home=Path(tmp) / "store", extractor=extractor)
        t0 = time.perf_counter()
        with StrataGraph(settings, chat_model=chat_model) as sg:
            result = sg.ingest([docs])
            out: dict[str, Any] = {"seconds": round(time.perf_counter() - t0, 1), "failed": result.failed}
            out.update(_counts(sg))
            if extractor == "llm":
                from stratagraph.llm import chat_endpoint, model_name

                ex = sg.services.extractor
                out["requests"] = ex.usage.llm_calls
                out["input_tokens"], out["output_tokens"] = ex.usage.input_tokens, ex.usage.output_tokens
                out["chunk_outcomes"] = dict(ex.outcomes)
                out["output_mode"] = ex.cache.output_mode(chat_endpoint(ex.chat_model), model_name(ex.chat_model)) if ex.cache else None
                out["errors"] = [r.error for r in result.documents if r.error]
    return out


def _timed(model: Any) -> tuple[Any, dict[str, float]]:
    """The chat model with a callback that records the wall time of every request (as the client sees it)."""
    from langchain_core.callbacks import BaseCallbackHandler

    starts: dict[UUID, float] = {}
    stats = {"slowest_request_s": 0.0, "total_request_s": 0.0}
    lock = threading.Lock()

    class Timer(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kw: Any) -> None:
            with lock:
                starts[run_id] = time.perf_counter()

        def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
            self._done(run_id)

        def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
            self._done(run_id)

        def _done(self, run_id: UUID) -> None:
            with lock:
                took = time.perf_counter() - starts.pop(run_id, time.perf_counter())
                stats["slowest_request_s"] = max(stats["slowest_request_s"], round(took, 1))
                stats["total_request_s"] += took

    model.callbacks = [Timer()]
    return model, stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=REPO / "examples")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    from stratagraph import Settings
    from stratagraph.llm import get_chat_model

    settings = Settings()
    model = get_chat_model(settings)
    if model is None:
        print("no chat model configured (STRATAGRAPH_LLM_MODEL and OPENAI_BASE_URL): nothing to measure")
        return 0
    model, timing = _timed(model)
    report = {
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
        "endpoint": settings.openai_base_url,
        "model": settings.llm_model,
        "request_timeout_s": settings.request_timeout,
        "llm_concurrency": settings.llm_concurrency,
        "docs": str(args.docs),
        "spacy": run(args.docs, "spacy"),
        "llm": run(args.docs, "llm", model),
    }
    report["llm"].update({k: round(v, 1) for k, v in timing.items()})
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    llm, sp = report["llm"], report["spacy"]
    outcomes = llm.get("chunk_outcomes", {})
    chunks = max(sum(outcomes.values()), 1)
    print(f"{report['machine']}; {report['model']} at {report['endpoint']}; docs {report['docs']}")
    print("| extractor | seconds | requests | first try | after correction | empty | entities | facts | facts with quantities | RELATED |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    share = {k: f"{100 * outcomes.get(k, 0) / chunks:.0f}%" for k in ("first_try", "corrected", "empty")}
    print(f"| llm | {llm['seconds']} | {llm.get('requests')} | {share['first_try']} | {share['corrected']} | {share['empty']} "
          f"| {llm['entities']} | {llm['facts']} | {llm['facts_with_quantities']} | {llm['related']} |")  # fmt: skip
    print(f"| spacy | {sp['seconds']} | 0 | | | | {sp['entities']} | {sp['facts']} | {sp['facts_with_quantities']} | {sp['related']} |")
    print(f"output mode {llm.get('output_mode')}, slowest request {llm['slowest_request_s']} s, tokens in/out "
          f"{llm.get('input_tokens')}/{llm.get('output_tokens')}, failed documents {llm['failed']}")  # fmt: skip
    print(json.dumps(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

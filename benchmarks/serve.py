"""Page load and turn latency of ``stratagraph serve`` on the examples store, without a chat model.

    .venv/bin/python benchmarks/serve.py [--store DIR] [--loads 10] [--repeats 3] [--json out.json]

Starts ``stratagraph serve`` as a child process on a free 127.0.0.1 port (the store: ``--store``, else the
examples ingested into a temporary store first), then

* page load: headless Chromium (Debian's ``chromium``, through Playwright) opens the page ``--loads`` times in
  fresh contexts; the time from navigation to the page being ready (counts, threads and the open thread
  fetched and drawn: ``body[data-ready]``), and the browser's own ``loadEventEnd``;
* a turn: ``POST /api/threads/{id}/messages`` for each question (a new thread each time), ``--repeats`` times,
  timed from the request to the ``answer`` event (its evidence graph included), after one warm-up turn.

Prints p50 / p95 / max in milliseconds (and writes them as JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "How much more does the Police Department request than the Fire Department?",
    "What is the combined FY2025 adopted overtime budget of the Police Department and the Fire Department?",
    "What was Northwind Robotics' revenue in the second quarter of 2024?",
    "Which section of the budget covers the Fire Department?",
    "Which papers cite the street-level sensor network study?",
    "Who is the chief executive of Northwind Robotics?",
]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(statistics.median(values), 1), "p95": round(_pct(values, 0.95), 1),
            "max": round(max(values), 1)}  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "stratagraph.cli", *args]


def turn(client: httpx.Client, base: str, thread: str, question: str) -> tuple[float, str]:
    started = time.perf_counter()
    answer = ""
    with client.stream("POST", f"{base}/api/threads/{thread}/messages", json={"message": question}, timeout=300) as r:
        for line in r.iter_lines():
            event = json.loads(line) if line else {}
            if event.get("type") == "answer":
                answer = event["answer"]["answer"]
            elif event.get("type") == "error":
                raise RuntimeError(event["error"])
    return (time.perf_counter() - started) * 1000, answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path)
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "STRATAGRAPH_LLM_MODEL")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    tmp = Path(tempfile.mkdtemp(prefix="stratagraph-serve-bench-"))
    store = args.store
    if store is None:
        store = tmp / "store"
        subprocess.run(_cli("--store", str(store), "ingest", "examples", "--base", "."), cwd=REPO, env=env, check=True,
                       capture_output=True)  # fmt: skip
    port = _free_port()
    server = subprocess.Popen(_cli("--store", str(store), "serve", "--port", str(port)), cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(base + "/api/stats", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        with httpx.Client() as client:
            turn(client, base, "warm-up", QUESTIONS[0])
            turns, answers = [], {}
            for r in range(args.repeats):
                for i, q in enumerate(QUESTIONS):
                    ms, answers[q] = turn(client, base, f"bench-{r}-{i}", q)
                    turns.append(ms)
        from playwright.sync_api import sync_playwright

        ready, load_event = [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            for _ in range(args.loads):
                context = browser.new_context()
                page = context.new_page()
                started = time.perf_counter()
                page.goto(base + "/")
                page.wait_for_selector("body[data-ready=true]")
                ready.append((time.perf_counter() - started) * 1000)
                load_event.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
                context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    report = {
        "page_ready_ms": summary(ready),
        "page_load_event_ms": summary(load_event),
        "turn_ms": summary(turns),
        "threads_in_store": args.repeats * len(QUESTIONS) + 1,
        "answers": answers,
        "cores": os.cpu_count(),
    }
    print(f"page ready   p50 {report['page_ready_ms']['p50']} ms  p95 {report['page_ready_ms']['p95']} ms  (n={len(ready)})")
    print(f"load event   p50 {report['page_load_event_ms']['p50']} ms")
    print(f"turn         p50 {report['turn_ms']['p50']} ms  p95 {report['turn_ms']['p95']} ms  max {report['turn_ms']['max']} ms  (n={len(turns)})")
    for q, a in answers.items():
        print(f"  {q[:70]:<70} -> {a[:50]}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

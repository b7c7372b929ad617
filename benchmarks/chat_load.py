"""Many conversations on one store at once: a thread pool of conversations in one process, then two processes
at once, checked against the same conversations held one after another.

    .venv/bin/python benchmarks/chat_load.py [--threads 8] [--turns 5] [--processes 2] [--store DIR] [--out FILE.json]

The store is examples/ ingested into a fresh directory (or ``--store``, which must hold examples/). No chat
model (the rule-based rewrite, route and workflows), so the figures are the library's own cost. Every
conversation is one of four five-turn scripts (follow-ups of every kind: an ellipsis, the previous quarter,
"compare that with", pronouns, "why?"). Checks, each a hard failure:

* every thread's history is its own script, message for message, and each reply's answer equals the answer
  the same script gets when held alone (no leak between threads, no lost or doubled turn);
* the graph export is byte-identical before and after (conversations never write to the graph).

Prints a Markdown table (mode, conversations, turns, wall seconds, turns/s, p50 and p95 ms per turn, peak RSS).
The scripts are held once before anything is timed (parse and retrieval caches warm, as on a server that has
been answering for a while); the processes' wall time includes their start-up.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS threads fight onnxruntime's on 2 cores
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
for _name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "STRATAGRAPH_LLM_MODEL"):  # the library's own cost: no model
    os.environ.pop(_name, None)

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCRIPTS: list[list[str]] = [
    [
        "What was Northwind Robotics' revenue in the second quarter of 2024?",
        "And in Q3?",
        "How does that compare with the previous quarter?",
        "How many robots did it ship in the third quarter of 2024?",
        "What about the second quarter?",
    ],
    [
        "How much does the Police Department request for FY2025?",
        "Why?",
        "Why does the Fire Department's overtime fall?",
        "By how much does its equipment rise?",
        "What is the combined FY2025 adopted overtime budget of the Police Department and the Fire Department?",
    ],
    [
        "Which section describes the regional dispatch agreement with Harlow County?",
        "How much is budgeted for the dispatch agreement with the county that operates the regional P25 network?",
        "Who is the mayor of the city whose council adopted the budget on June 11, 2024?",
        "What is the percent change in the Fire Department's overtime from FY2024 to FY2025?",
        "What about the Police Department?",
    ],
    [
        "What share of the variance in mean nighttime temperature did impervious surface explain in the sensor "
        "network study that the cool roof paper cites?",
        "How many sensors did the street-level network use?",
        "Who wrote the cool roof retrofit study?",
        "How many homes did it monitor?",
        "Who painted the ceiling of the Sistine Chapel?",
    ],
]


def _settings(store: Path):  # noqa: ANN202
    from stratagraph.config import Settings

    return Settings(home=store, llm_model=None, openai_base_url=None, openai_api_key=None)


def _export_hash(store: Path) -> str:
    from stratagraph import StrataGraph

    with StrataGraph(_settings(store)) as sg:
        data = json.dumps(sg.export(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def hold(store: Path, conversations: list[tuple[str, list[str]]], workers: int) -> dict:
    """Hold the conversations on one StrataGraph, ``workers`` at once; per turn: (thread, i, ms, answer)."""
    from stratagraph import StrataGraph

    def converse(sg, thread: str, script: list[str]) -> list[tuple[str, int, float, str]]:  # noqa: ANN001
        chat = sg.chat(thread)
        out = []
        for i, message in enumerate(script):
            started = time.perf_counter()
            answer = chat.ask(message)
            out.append((thread, i, (time.perf_counter() - started) * 1000, answer.answer))
        return out

    with StrataGraph(_settings(store)) as sg:
        sg.chat(f"warm-{uuid.uuid4().hex[:6]}").ask(SCRIPTS[0][0])  # models and caches, as a server would have
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            turns = [t for result in pool.map(lambda c: converse(sg, *c), conversations) for t in result]
        wall = time.perf_counter() - started
    return {"turns": turns, "wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def check(store: Path, conversations: list[tuple[str, list[str]]], expected: dict[int, list[str]], turns: list) -> list[str]:
    """What went wrong: a history that is not its script, an answer that differs from the script held alone."""
    from langchain_core.messages import AIMessage, HumanMessage

    from stratagraph import StrataGraph

    problems = []
    got = {(t, i): a for t, i, _, a in turns}
    with StrataGraph(_settings(store)) as sg:
        for thread, script in conversations:
            history = sg.chat(thread).history()
            humans = [m.content for m in history if isinstance(m, HumanMessage)]
            replies = [m.response_metadata["answer"]["answer"] for m in history if isinstance(m, AIMessage)]
            if humans != script:
                problems.append(f"{thread}: history {humans} is not its script")
            want = expected[SCRIPTS.index(script)]
            if replies != want or [got[(thread, i)] for i in range(len(script))] != want:
                problems.append(f"{thread}: answers {replies} differ from the script held alone {want}")
    return problems


def _summary(mode: str, conversations: int, turns: list, wall: float, rss: float) -> dict:
    ms = sorted(t[2] for t in turns)
    return {
        "mode": mode, "conversations": conversations, "turns": len(turns), "wall_s": round(wall, 2),
        "turns_per_s": round(len(turns) / wall, 2), "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1), "peak_rss_mb": round(rss),
    }  # fmt: skip


def worker(store: Path, prefix: str, count: int, turns: int, threads: int, out: Path) -> None:
    conversations = [(f"{prefix}-{i}", SCRIPTS[i % len(SCRIPTS)][:turns]) for i in range(count)]
    result = hold(store, conversations, threads)
    out.write_text(json.dumps({"conversations": conversations, **result}), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=8, help="conversations at once in one process")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--processes", type=int, default=2, help="processes at once, each with --threads/2 conversations")
    parser.add_argument("--store", type=Path, default=None, help="a store holding examples/ (default: ingest into a temp dir)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--worker", nargs=4, metavar=("PREFIX", "COUNT", "THREADS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        prefix, count, threads, out = args.worker
        worker(args.store, prefix, int(count), args.turns, int(threads), Path(out))
        return 0

    from stratagraph import StrataGraph

    tmp = tempfile.TemporaryDirectory(prefix="chat-load-")
    store = args.store or Path(tmp.name) / "store"
    if args.store is None:
        with StrataGraph(_settings(store)) as sg:
            assert sg.ingest([REPO / "examples"], base=REPO).failed == 0
    before = _export_hash(store)
    run = uuid.uuid4().hex[:6]

    # the scripts held alone, one after another: the expected answers and the one-at-a-time figure
    hold(store, [(f"cold-{run}-{i}", s[: args.turns]) for i, s in enumerate(SCRIPTS)], 1)  # warm per-text caches
    alone = [(f"alone-{run}-{i}", script[: args.turns]) for i, script in enumerate(SCRIPTS)]
    single = hold(store, alone, 1)
    expected = {i: [a for t, _, _, a in single["turns"] if t == thread] for i, (thread, _) in enumerate(alone)}
    rows = [_summary("one conversation at a time", len(alone), single["turns"], single["wall"], single["rss_mb"])]

    pooled = [(f"pool-{run}-{i}", SCRIPTS[i % len(SCRIPTS)][: args.turns]) for i in range(args.threads)]
    result = hold(store, pooled, args.threads)
    problems = check(store, pooled, expected, result["turns"])
    rows.append(_summary(f"{args.threads} threads, one process", args.threads, result["turns"], result["wall"], result["rss_mb"]))

    per = max(1, args.threads // args.processes)
    outs = [Path(tempfile.mkstemp(suffix=".json")[1]) for _ in range(args.processes)]
    started = time.perf_counter()
    procs = [
        subprocess.Popen([sys.executable, __file__, "--store", str(store), "--turns", str(args.turns),
                          "--worker", f"proc{p}-{run}", str(per), str(per), str(outs[p])])  # fmt: skip
        for p in range(args.processes)
    ]
    if any(p.wait() != 0 for p in procs):
        problems.append("a worker process failed")
    wall = time.perf_counter() - started  # includes each process's start-up (imports, models)
    turns, rss = [], 0.0
    for out in outs:
        if out.stat().st_size:
            data = json.loads(out.read_text(encoding="utf-8"))
            conversations = [(t, s) for t, s in data["conversations"]]
            turns += [tuple(t) for t in data["turns"]]
            rss = max(rss, data["rss_mb"])
            problems += check(store, conversations, expected, [tuple(t) for t in data["turns"]])
        out.unlink()
    rows.append(_summary(f"{args.processes} processes x {per} threads (wall incl. start-up)", per * args.processes, turns, wall, rss))
    if _export_hash(store) != before:
        problems.append("the graph export changed")

    head = ["mode", "conversations", "turns", "wall_s", "turns_per_s", "p50_ms", "p95_ms", "peak_rss_mb"]
    print(f"chat load on {platform.machine()} x {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"examples/ store, no chat model, {args.turns} turns per conversation\n")  # fmt: skip
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(r[h]) for h in head) + " |")
    print("\nchecks: " + ("histories are their own scripts, answers equal the scripts held alone, export unchanged"
                          if not problems else "FAILED\n  " + "\n  ".join(problems)))  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "problems": problems}, indent=2), encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

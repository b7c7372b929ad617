"""Issue 24: the questions that ask for a kind of thing ("which vessel", "what river"), answered with and without
the concept layer: reads two ``benchmarks/qa.py --keep-answers`` results (one run each, same code, the second
with ``STRATAGRAPH_CONCEPT_LAYER=false``) and reports accuracy per workflow on those questions, side by side.

    .venv/bin/python benchmarks/qa.py --datasets SETS --workflows W --out with.json --keep-answers
    STRATAGRAPH_CONCEPT_LAYER=false .venv/bin/python benchmarks/qa.py --datasets SETS --workflows W \\
        --out without.json --keep-answers
    .venv/bin/python benchmarks/kinds.py with.json without.json

A question asks for a kind when its frame's answer type is a thing, a person, a place or an organisation named
by a noun (``Frame.focus``), not a question word or a noun naming the answer's form ("what amount").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stratagraph.reading.frame import frame_of
from stratagraph.text.lexicon import QUESTION_WORDS, SHAPE_NOUNS
from stratagraph.text.question import AnswerType

REPO = Path(__file__).resolve().parents[1]
TYPED = (AnswerType.THING, AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG)


def asks_kind(question: str) -> bool:
    frame = frame_of(question)
    noun = frame.focus
    return frame.type in TYPED and noun.isalpha() and noun not in SHAPE_NOUNS and noun not in QUESTION_WORDS


def _questions(dataset: str) -> dict[str, str]:
    path = Path(dataset) if Path(dataset).is_dir() else REPO / "benchmarks" / "data" / dataset
    rows = [json.loads(line) for line in (path / "questions.jsonl").read_text().splitlines() if line.strip()]
    return {r["id"]: r["question"] for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("with_concepts")
    parser.add_argument("without_concepts")
    args = parser.parse_args()
    runs = [json.loads(Path(p).read_text()) for p in (args.with_concepts, args.without_concepts)]
    tally: dict[str, list[int]] = {}
    asked = 0
    for with_set, without_set in zip(*runs, strict=True):
        questions = _questions(with_set["dataset"])
        kind_ids = {q for q, text in questions.items() if asks_kind(text)}
        asked += len(kind_ids)
        for workflow, result in with_set["results"].items():
            other = without_set["results"].get(workflow, {}).get("answers", {})
            row = tally.setdefault(workflow, [0, 0, 0])
            for qid in kind_ids:
                row[0] += 1
                row[1] += bool(result["answers"].get(qid, {}).get("correct"))
                row[2] += bool(other.get(qid, {}).get("correct"))
    print(f"{asked} questions ask for a kind of thing\n")
    print("| workflow | questions | accuracy with concepts | without |")
    print("|---|---:|---:|---:|")
    for workflow, (n, with_ok, without_ok) in sorted(tally.items()):
        print(f"| {workflow} | {n} | {100 * with_ok / n:.1f} | {100 * without_ok / n:.1f} |")


if __name__ == "__main__":
    main()

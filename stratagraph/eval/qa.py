"""``stratagraph eval qa``: answering workflows over one dataset, side by side in one run.

Metrics (percent), over the questions that have accepted answers:

* ``accuracy`` (the headline): the share of questions answered correctly (:mod:`stratagraph.eval.accuracy`:
  the answer is short and contains an accepted answer, numbers compared as numbers; an unanswerable question
  is answered correctly by "not found");
* ``precision``: the share of the answers given as found that are correct;
* ``answer_kinds``: how many answers were of each ``Answer.kind`` (span, sentence, computed, choice, section,
  not_found);
* ``em`` / ``f1``: SQuAD's exact match and token F1 after its normalisation (lower case, punctuation and
  articles removed, white space folded), the best over a question's accepted answers; an answer the workflow
  marks not found scores 0;
* ``found_rate``: the share of questions answered (``found`` true);
* ``llm_calls``, ``input_tokens``, ``output_tokens``: requests sent to the chat model and the tokens its
  usage reported, in all (0 without one); ``seconds``: the questions' wall time in all;
* ``p50_ms`` / ``p95_ms``: wall time of one question, after one warm-up question per workflow (none with a
  chat model: the warm-up would fill the reply cache the questions then read);
* ``first_half`` / ``second_half``: the same over each half of the questions, in file order; ``kinds`` per kind
  of question when the dataset has kinds.

``auto`` (the conversation's router, one turn without memory) is accepted as a name, and
``first_sentence`` is a baseline: the first sentence of the top-1 ``vector`` chunk.
Only ``eval/`` reads gold answers.
"""

from __future__ import annotations

import re
import statistics
import string
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from stratagraph.config import Settings
from stratagraph.eval.accuracy import accurate
from stratagraph.eval.datasets import DatasetError, Question, load_dataset
from stratagraph.eval.retrieval import ensure_store, percentile
from stratagraph.eval.metrics import LLM_METRICS

__all__ = ["BASELINE", "evaluate_qa", "exact_match", "f1_score", "normalize_answer"]

BASELINE = "first_sentence"
#: the conversation's router (``ask --strategy auto``): one turn of a thread without memory
AUTO = "auto"


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str) -> float:
    pred, truth = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = Counter(pred) & Counter(truth)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def best(metric: Callable[[str, str], float], prediction: str, answers: Sequence[str]) -> float:
    return max((metric(prediction, a) for a in answers), default=0.0)


class QARun(BaseModel):
    id: str
    answer: str
    found: bool
    ms: float
    kind: str = ""
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def _metrics(questions: Sequence[Question], runs: Sequence[QARun]) -> dict[str, float]:
    every = list(zip(questions, runs, strict=True))
    right = [accurate(r.answer, r.found, q.answers) for q, r in every]
    given = [ok for ok, (_, r) in zip(right, every, strict=True) if r.found]
    pairs = [(q, r) for q, r in every if q.answers]
    n = max(len(pairs), 1)
    em = sum(best(exact_match, r.answer, q.answers) if r.found else 0.0 for q, r in pairs)
    f1 = sum(best(f1_score, r.answer, q.answers) if r.found else 0.0 for q, r in pairs)
    times = [r.ms for r in runs]
    return {
        "accuracy": round(100 * sum(right) / max(len(every), 1), 1),
        "precision": round(100 * sum(given) / len(given), 1) if given else 0.0,
        "answer_kinds": dict(sorted(Counter(r.kind or "?" for r in runs).items())),
        "em": round(100 * em / n, 1),
        "f1": round(100 * f1 / n, 1),
        "found_rate": round(100 * sum(r.found for _, r in pairs) / n, 1),
        "llm_calls": sum(r.llm_calls for r in runs),
        "input_tokens": sum(r.input_tokens for r in runs),
        "output_tokens": sum(r.output_tokens for r in runs),
        "seconds": round(sum(times) / 1000, 1),
        "p50_ms": round(statistics.median(times), 1) if times else 0.0,
        "p95_ms": round(percentile(times, 95), 1),
    }


def summarize_qa(questions: Sequence[Question], runs: Sequence[QARun]) -> dict[str, Any]:
    out: dict[str, Any] = _metrics(questions, runs)
    half = len(questions) // 2
    if half:
        out["first_half"] = _metrics(questions[:half], runs[:half])
        out["second_half"] = _metrics(questions[half:], runs[half:])
    kinds = sorted({q.kind for q in questions if q.kind})
    if kinds:
        out["kinds"] = {
            kind: {"questions": sum(1 for q in questions if q.kind == kind)}
            | _metrics(*zip(*[(q, r) for q, r in zip(questions, runs, strict=True) if q.kind == kind], strict=True))  # type: ignore[arg-type]
            for kind in kinds
        }
    return out


def _first_sentence(svc: Any, question: str) -> tuple[str, bool, str, tuple[int, int, int]]:
    from stratagraph.reading.sentences import sentences
    from stratagraph.retrieval import retrieve

    top = retrieve(svc.retrieval, "vector", question, k=1).evidence
    sents = sentences(top)
    return (sents[0].text, True, "sentence", (0, 0, 0)) if sents else ("", False, "not_found", (0, 0, 0))


def answer_kind(answer: Any) -> str:
    """An answer's kind (``Answer.kind``; derived for an answer that has none)."""
    kind = getattr(answer, "kind", None)
    if kind:
        return str(kind)
    if not answer.found:
        return "not_found"
    return "computed" if answer.computed is not None else "span"


def _workflow_names(workflows: Sequence[str]) -> list[str]:
    from stratagraph.workflows import ANSWERING, workflow_name

    names = []
    for w in workflows:
        if w in (BASELINE, AUTO):
            names.append(w)
            continue
        try:
            short = workflow_name(w)
        except ValueError as exc:
            raise DatasetError(f"{exc} or {BASELINE}") from exc
        if short not in ANSWERING:
            raise DatasetError(f"{w!r} does not answer questions; choose from {', '.join([*ANSWERING, BASELINE])}")
        names.append(short)
    return names


def _check_metrics(metrics: Sequence[str], svc: Any) -> None:
    from stratagraph.eval.metrics import LLM_METRICS, MODEL_FREE

    unknown = [m for m in metrics if m not in (*MODEL_FREE, *LLM_METRICS)]
    if unknown:
        raise DatasetError(f"unknown metric {', '.join(unknown)}; choose from {', '.join((*MODEL_FREE, *LLM_METRICS))}")
    if any(m in LLM_METRICS for m in metrics) and svc.llm is None:
        raise DatasetError(f"{', '.join(m for m in metrics if m in LLM_METRICS)} need a chat model "
                           "(STRATAGRAPH_LLM_MODEL and OPENAI_BASE_URL, or chat_model=)")  # fmt: skip


class _Scorer:
    """The ``--metrics`` of one run: per question, then means per workflow (:mod:`stratagraph.eval.metrics`)."""

    def __init__(self, svc: Any, metrics: Sequence[str]) -> None:
        from stratagraph.eval.metrics import LLM_METRICS, Judge

        self.svc = svc
        self.metrics = list(metrics)
        self.llm_metrics = [m for m in metrics if m in LLM_METRICS]
        self.judge = Judge(svc.llm, svc.embeddings) if self.llm_metrics else None
        self.judge_ms = 0.0

    def chunk(self, chunk_id: str) -> tuple[str, str] | None:
        node = self.svc.graph.get_node(chunk_id)
        return (str(node.props.get("doc_id", "")), str(node.props.get("text", ""))) if node is not None else None

    def context(self, answer: Any) -> list[str]:
        from stratagraph.eval.metrics import _citations

        ids = list(dict.fromkeys(c.chunk_id for c in _citations(answer)))
        return [c[1] for c in map(self.chunk, ids) if c is not None]

    def score(self, q: Question, answer: Any) -> dict[str, Any]:
        from stratagraph.eval.metrics import citation_validity, gold_recall

        out: dict[str, Any] = {}
        if answer is None:
            return out
        if "gold_recall" in self.metrics:
            out["gold_recall"] = gold_recall(q, answer)
        if "citation_validity" in self.metrics:
            out["citation_validity"] = float(citation_validity(answer, self.chunk)) if answer.found else None
        if self.judge is not None:
            started = time.perf_counter()
            out |= self.judge.score(self.llm_metrics, q.question, answer.answer, q.answers[0] if q.answers else "",
                                    self.context(answer))  # fmt: skip
            self.judge_ms += (time.perf_counter() - started) * 1000
        return out

    def summary(self, scores: Sequence[dict[str, Any]], answers: Sequence[Any]) -> dict[str, Any]:
        from stratagraph.eval.metrics import computed_share, mean

        out: dict[str, Any] = {m: mean([s.get(m) for s in scores]) for m in self.metrics if m != "computed_share"}
        if "computed_share" in self.metrics:
            out["computed_share"] = computed_share([a for a in answers if a is not None])
        if self.judge is not None:
            out["judge_llm_calls"] = self.judge.usage.llm_calls
            out["judge_seconds"] = round(self.judge_ms / 1000, 1)
        return out


def evaluate_qa(
    dataset_name: str,
    workflows: Sequence[str],
    settings: Settings,
    limit: int | None = None,
    chat_model: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
    metrics: Sequence[str] = (),
    graph: str = "extractor",
    openie: Path | None = None,
    judge_only: bool = False,
) -> dict[str, Any]:
    """The ``eval qa`` report: ``{"dataset", "questions", "results": {workflow: metrics}}``; with ``metrics``
    (:mod:`stratagraph.eval.metrics`) each workflow's row also holds ``metrics`` (their means); ``graph`` and
    ``openie`` choose the graph (:func:`~stratagraph.eval.retrieval.ensure_store`); ``judge_only``: the
    workflows answer without the chat model (their no-model path) and the model only judges."""
    from stratagraph.services import Services
    from stratagraph.workflows import ask

    names = _workflow_names(workflows)
    dataset = load_dataset(dataset_name, limit=limit)
    if not any(q.answers for q in dataset.questions):
        raise DatasetError(f"dataset {dataset.name} has no answers: eval qa needs accepted answers (eval retrieval does not)")
    eval_settings = ensure_store(dataset, settings, progress, graph=graph, openie=openie)
    svc = Services(eval_settings, chat_model=chat_model)
    answering = Services(eval_settings.model_copy(update={"llm_model": None})) if judge_only else svc
    if judge_only and not any(m in LLM_METRICS for m in metrics):
        raise DatasetError("judge only: name a metric a chat model judges (faithfulness, answer_relevance, "
                           "context_precision, context_recall)")  # fmt: skip
    results: dict[str, Any] = {}
    try:
        _check_metrics(metrics, svc)
        for i, name in enumerate(names):
            if progress is not None:
                progress(f"eval qa {name}", i, len(names))
            scorer = _Scorer(svc, metrics) if metrics else None

            def run(question: str, name: str = name) -> tuple[str, bool, str, tuple[int, int, int], Any]:
                if name == BASELINE:
                    return (*_first_sentence(answering, question), None)
                if name == AUTO:
                    from stratagraph.conversation import Conversation

                    answer = Conversation.ephemeral(answering).ask(question)
                else:
                    answer = ask(answering, name, question)
                u = answer.usage
                return answer.answer, answer.found, answer_kind(answer), (u.llm_calls, u.input_tokens, u.output_tokens), answer

            if answering.llm is None:  # warm-up (models, caches); not with a chat model, whose replies it would cache
                run(dataset.questions[0].question)
            runs, objects, scores = [], [], []
            for q in dataset.questions:
                started = time.perf_counter()
                text, found, kind, (calls, tokens_in, tokens_out), answer = run(q.question)
                runs.append(QARun(id=q.id, answer=text, found=found, kind=kind, ms=(time.perf_counter() - started) * 1000,
                                  llm_calls=calls, input_tokens=tokens_in, output_tokens=tokens_out))  # fmt: skip
                objects.append(answer)
                scores.append(scorer.score(q, answer) if scorer is not None else {})
            results[name] = summarize_qa(dataset.questions, runs)
            if scorer is not None:
                results[name]["metrics"] = scorer.summary(scores, objects)
            results[name]["answers"] = {r.id: {"answer": r.answer, "found": r.found, "kind": r.kind, "ms": round(r.ms, 1),
                                               "correct": accurate(r.answer, r.found, q.answers), **s}
                                        for q, r, s in zip(dataset.questions, runs, scores, strict=True)}  # fmt: skip
    finally:
        if answering is not svc:
            answering.close()
        svc.close()
    out = {"dataset": dataset.name, "questions": len(dataset.questions), "results": results}
    return {**out, "answered_by": "rules (judge only)"} if judge_only else out


def format_qa(report: dict[str, Any]) -> str:
    """The report as an aligned text table (one row per workflow)."""
    head = ["workflow", "accuracy", "precision", "em", "f1", "found_rate", "llm_calls", "p50_ms", "p95_ms",
            "1st half f1", "2nd half f1"]  # fmt: skip
    rows = [
        [name, r["accuracy"], r["precision"], r["em"], r["f1"], r["found_rate"], r["llm_calls"], r["p50_ms"], r["p95_ms"],
         r.get("first_half", {}).get("f1", ""), r.get("second_half", {}).get("f1", "")]
        for name, r in report["results"].items()
    ]  # fmt: skip
    extra = list(next((r.get("metrics", {}) for r in report["results"].values() if r.get("metrics")), {}))
    head += extra
    for row, r in zip(rows, report["results"].values(), strict=True):
        row += ["" if r.get("metrics", {}).get(m) is None else r["metrics"][m] for m in extra]
    widths = [max(len(str(v)) for v in col) for col in zip(head, *rows, strict=True)]
    lines = [f"{report['dataset']} ({report['questions']} questions)"]
    for cells in (head, *rows):
        lines.append(str(cells[0]).ljust(widths[0]) + "".join(str(v).rjust(w + 2) for v, w in zip(cells[1:], widths[1:], strict=True)))
    return "\n".join(lines)

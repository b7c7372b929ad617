"""Answer metrics of ``eval qa --metrics``: the ones that need no model, and HybridRAG's four (§2.4) judged
by a chat model.

Without a model:

* ``gold_recall``: the share of a question's gold chunks (else gold documents) among the chunks (documents)
  the answer cites: context recall against gold passages, for sets that have them (``eval generate``'s);
* ``citation_validity``: the answer passes :meth:`stratagraph.answers.Answer.check` (every quote verbatim in
  its chunk, a found answer cited, a span answer inside a cited chunk) and every cited chunk belongs to the
  document the citation names;
* ``computed_share``: among found answers that state a number, the share computed in code
  (``Answer.kind == "computed"``).

With a chat model (the paper's definitions, implemented here: prompts ``rag_*`` in ``stratagraph/prompts/``;
``ragas`` is not used, see README "Evaluation on your own documents"):

* ``faithfulness``: the model splits the answer into statements, then says of each whether the context
  supports it; F = supported / statements;
* ``answer_relevance``: the model writes ``n`` questions the answer would answer; AR = the mean cosine
  similarity of their embeddings (the store's embedder) to the question's;
* ``context_precision``: the model says of each context chunk, in rank order, whether it is relevant to the
  ground truth; CP@K = sum over k of precision@k * v_k, divided by the relevant chunks in the top K;
* ``context_recall``: the model says of each ground-truth sentence whether the context supports it;
  CR = attributed / sentences.

The context of an answer is the text of the chunks it cites, in citation order (what the answer stands on).
A score is None when it is undefined (no statements, no context, no ground truth), and left out of means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from stratagraph.eval.accuracy import amounts
from stratagraph.eval.datasets import Question
from stratagraph.prompts import load_prompt

__all__ = ["LLM_METRICS", "MODEL_FREE", "Judge", "citation_validity", "computed_share", "context_precision_at",
           "gold_recall", "mean"]  # fmt: skip

MODEL_FREE = ("gold_recall", "citation_validity", "computed_share")
LLM_METRICS = ("faithfulness", "answer_relevance", "context_precision", "context_recall")


# ---------------------------------------------------------------- no model


def gold_recall(q: Question, answer: Any) -> float | None:
    """The share of gold chunks (else gold documents) the answer cites; None without gold."""
    if q.gold_chunks:
        cited = {c.chunk_id for c in _citations(answer)}
        return len(set(q.gold_chunks) & cited) / len(set(q.gold_chunks))
    if q.gold_docs:
        cited = {c.doc_id for c in _citations(answer)} | {c.source for c in _citations(answer)}
        return len({g for g in q.gold_docs if g in cited or any(c.endswith("/" + g) for c in cited)}) / len(set(q.gold_docs))
    return None


def _citations(answer: Any) -> list[Any]:
    ops = answer.computed.operands if answer.computed is not None else []
    return [*answer.citations, *(o.citation for o in ops)]


def citation_validity(answer: Any, chunk: Callable[[str], tuple[str, str] | None]) -> bool:
    """Whether the answer's citations hold (module docstring); ``chunk(id)`` -> (document id, text) or None."""
    if answer.check(lambda cid: (chunk(cid) or (None, None))[1]):
        return False
    return all((chunk(c.chunk_id) or ("", ""))[0] == c.doc_id for c in _citations(answer))


def is_numeric(answer: Any) -> bool:
    return bool(answer.found and amounts(answer.answer))


def computed_share(answers: Sequence[Any]) -> float | None:
    """Among found answers stating a number, the share of ``kind == "computed"``; None when there are none."""
    numeric = [a for a in answers if is_numeric(a)]
    return round(sum(a.kind == "computed" for a in numeric) / len(numeric), 3) if numeric else None


def mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 3) if kept else None


# ---------------------------------------------------------------- with a chat model


class Statements(BaseModel):
    statements: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    statement: int = 0
    reason: str = ""
    verdict: str


class Verdicts(BaseModel):
    verdicts: list[Verdict]


class Questions(BaseModel):
    questions: list[str]


class Relevance(BaseModel):
    chunk: int = 0
    relevant: bool


class RelevanceVerdicts(BaseModel):
    verdicts: list[Relevance]


class Attribution(BaseModel):
    sentence: int = 0
    attributed: bool


class AttributionVerdicts(BaseModel):
    verdicts: list[Attribution]


def context_precision_at(relevant: Sequence[bool]) -> float:
    """CP@K (HybridRAG §2.4.3) of rank-ordered relevance verdicts: sum_k precision@k * v_k / relevant in top K."""
    hits, total = 0, 0.0
    for k, v in enumerate(relevant, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    denom = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / denom if denom else 0.0


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _yes(verdict: str) -> bool:
    return verdict.strip().casefold().startswith("yes")


class Judge:
    """HybridRAG's four metrics over one chat model and one embedder; ``usage`` counts the requests."""

    def __init__(self, chat_model: Any, embeddings: Any, n_questions: int = 3) -> None:
        from stratagraph.llm import LLMUsage

        self.chat_model = chat_model
        self.embeddings = embeddings
        self.n_questions = n_questions
        self.usage = LLMUsage()

    def _ask(self, schema: type[BaseModel], prompt: str, system_values: dict[str, Any] | None = None, **values: Any) -> Any:
        from langchain_core.messages import HumanMessage, SystemMessage

        from stratagraph.llm import ask_structured

        system = load_prompt(f"{prompt}.system")
        if system_values:
            system = system.format(**system_values)
        messages = [SystemMessage(content=system), HumanMessage(content=load_prompt(f"{prompt}.user").format(**values))]
        return ask_structured(self.chat_model, schema, messages, usage=self.usage, what=f"eval {prompt}").value

    def faithfulness(self, question: str, answer: str, context: Sequence[str]) -> float | None:
        if not context:
            return None
        got = self._ask(Statements, "rag_statements", question=question, answer=answer)
        statements = [s for s in (got.statements if got else []) if s.strip()]
        if not statements:
            return None
        listed = "\n".join(f"statement {i}: {s}" for i, s in enumerate(statements, start=1))
        verdicts = self._ask(Verdicts, "rag_verify", context=_joined(context), statements=listed)
        if verdicts is None:
            return None
        supported = sum(_yes(v.verdict) for v in verdicts.verdicts[: len(statements)])
        return supported / len(statements)

    def answer_relevance(self, question: str, answer: str) -> float | None:
        from stratagraph.embeddings import embed_texts

        got = self._ask(Questions, "rag_questions", {"n": self.n_questions}, answer=answer)
        generated = [q for q in (got.questions if got else []) if q.strip()][: self.n_questions]
        if not generated:
            return None
        vectors = embed_texts(self.embeddings, [question, *generated])
        return sum(cosine(vectors[0], v) for v in vectors[1:]) / len(generated)

    def context_precision(self, question: str, ground_truth: str, context: Sequence[str]) -> float | None:
        if not context or not ground_truth:
            return None
        listed = "\n\n".join(f"chunk {i}:\n{c}" for i, c in enumerate(context, start=1))
        got = self._ask(RelevanceVerdicts, "rag_precision", question=question, ground_truth=ground_truth, chunks=listed)
        if got is None:
            return None
        flags = [v.relevant for v in got.verdicts[: len(context)]]
        return context_precision_at(flags + [False] * (len(context) - len(flags)))

    def context_recall(self, ground_truth: str, context: Sequence[str]) -> float | None:
        truth = sentences(ground_truth)
        if not truth or not context:
            return None if not truth else 0.0
        listed = "\n".join(f"{i}. {s}" for i, s in enumerate(truth, start=1))
        got = self._ask(AttributionVerdicts, "rag_recall", context=_joined(context), sentences=listed)
        if got is None:
            return None
        return sum(v.attributed for v in got.verdicts[: len(truth)]) / len(truth)

    def score(self, names: Sequence[str], question: str, answer: str, ground_truth: str, context: Sequence[str]) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name in names:
            if name == "faithfulness":
                out[name] = self.faithfulness(question, answer, context)
            elif name == "answer_relevance":
                out[name] = self.answer_relevance(question, answer)
            elif name == "context_precision":
                out[name] = self.context_precision(question, ground_truth, context)
            elif name == "context_recall":
                out[name] = self.context_recall(ground_truth, context)
        return out


def _joined(context: Sequence[str]) -> str:
    return "\n\n".join(context)

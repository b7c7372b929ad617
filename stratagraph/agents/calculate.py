"""BAG-RAG's calculation over what the bottom-up aggregation gathered (§3.2, before eq. 5): sums, differences,
changes, ratios, superlatives and section totals computed exactly in code over typed quantities, every
operand cited; a "which section" question answered with its heading.

* With a chat model, only for a question whose frame asks a computation: the model chooses the operation and
  its operands among the numbered amounts of the kept sections (prompt ``calculate``); the code computes.
  "none", or operands that do not fit the operation, leave the answer to the answer step.
* Without one: the reader (:func:`stratagraph.reading.read`) over the evidence and the kept sections' chunks
  (their tables whole); a computation it makes goes to the answer step (eq. 5 answers with it), a choice or
  a heading it finds is the answer (the run ends); anything else is left to the answer step, which reads the
  evidence.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from stratagraph.agents.answer import answer_of
from stratagraph.agents.common import Step, agent_node
from stratagraph.reading import frame_of
from stratagraph.reading.arithmetic import compute, render
from stratagraph.reading.reader import figures
from stratagraph.retrieval.base import Evidence, Scored

__all__ = ["ArithmeticReply", "calculate"]

#: amounts the chat model is shown (ours: bounds the prompt)
LLM_AMOUNTS = 40
#: chunks of the kept sections the reader reads beside the evidence (ours: bounds the work)
POOL_CHUNKS = 60


class ArithmeticReply(BaseModel):
    """What the chat model chooses: an operation and the numbers of its operands, in order."""

    operation: Literal["none", "sum", "difference", "ratio", "percent_change", "max", "min"] = Field(
        description="the arithmetic the question needs, or none")
    operands: list[int] = Field(default_factory=list, description="bracketed indexes of the listed amounts (never their values), in order")


def _asks_computation(question: str) -> bool:
    frame = frame_of(question)
    return frame.plan is not None or bool(frame.superlative) or frame.quantifier is not None


@agent_node("calculate")
def calculate(state: dict, step: Step) -> dict:
    """Exact arithmetic over the aggregated quantities (module docstring)."""
    evidence: list[Evidence] = list(state.get("evidence") or [])
    extra = [c for c in state.get("instance_chunks") or [] if c not in {e.chunk_id for e in evidence}][:POOL_CHUNKS]
    pool = [*evidence, *step.ctx.evidence([Scored(id=c, score=0.0) for c in extra], None, step.filters)]
    if step.llm is not None:
        return _by_model(step, pool) if _asks_computation(step.question) else {}
    reading = step.read(pool)
    if reading.found and reading.kind == "computed" and reading.computed is not None:
        step.decide(f"read over {len(pool)} chunks: {reading.reason}")
        return {"computed": reading.computed, "computed_answer": reading.answer}
    if reading.found and reading.kind in ("choice", "section"):
        step.decide(f"read over {len(pool)} chunks: {reading.kind} {reading.answer!r} ({reading.reason})")
        return {"answer": answer_of(reading, step.question, "bag")}
    step.decide(f"nothing computed over {len(pool)} chunks ({reading.reason}): the answer step reads the evidence")
    return {}


def _by_model(step: Step, pool: list[Evidence]) -> dict:
    """The model's operation and operands over the numbered amounts; the code computes."""
    amounts = figures(pool, step.facts(pool))[:LLM_AMOUNTS]
    listed = "\n".join(f"[{i}] {f.label} = {f.quantity.raw}" for i, f in enumerate(amounts, start=1))
    reply = step.ask_prompt("calculate", ArithmeticReply, question=step.question, quantities=listed)
    if reply is None or reply.operation == "none":
        step.decide("no arithmetic chosen by the model")
        return {}
    picked = [amounts[i - 1] for i in reply.operands if 1 <= i <= len(amounts)]
    try:
        if reply.operation in ("max", "min"):
            comp = compute(reply.operation, picked)
            chosen = next(f for f in picked if f.value == comp.result)
            comp = comp.model_copy(update={"operation": f"compare ({reply.operation})", "result": chosen.row or chosen.label})
            text = chosen.row or chosen.text()
        else:
            comp = compute(reply.operation, picked)
            text = render(comp, picked)
    except (ValueError, StopIteration) as exc:
        step.fallbacks.append(f"calculate: the model's {reply.operation} over {reply.operands} cannot be computed ({exc})")
        return {}
    step.decide(f"the model's {reply.operation}: {comp.expression} = {text}")
    return {"computed": comp, "computed_answer": text}

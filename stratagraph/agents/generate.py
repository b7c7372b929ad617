"""The answer step of ``think_query_retrieve``: BiG-RAG §4.3.4 answer generation over the knowledge the turns
gathered, with the reasoning chain ("for decomposed queries, include reasoning chain showing intermediate
answers"), through :func:`stratagraph.agents.answer.answer_from_evidence`.

**With a chat model**: the generation prompt ``generate.system`` / ``generate.user`` (§4.3.4 and Appendix
D.3, asking for a structured ``{answer, found, evidence}`` instead of ``<answer>`` tags, so that the quotes can
be taken verbatim from the passages it names) over the passages of every turn, at most
:data:`MAX_PASSAGES`, chosen round-robin over the turns (each hop keeps its best passages) and shown in turn
order; the context is the chain: each turn's thought, queries and bound answers, and the model's own
``<answer>`` from the conversation as a draft. The model's answer must be a span of a cited passage: when
the passages it names do not state it (a small model names the passage of the hop instead, or answers
"820" for "$820 thousand") it is cited from the passage that does, with that passage's own characters,
and the named ones stay cited after it; an answer no passage states (a paraphrase, a "yes") goes to the
no-LLM rule below (a yes/no is decided in code), and the trace says so. When the generation has no usable
reply, the draft is the answer if a passage states it verbatim (cited with that passage's sentence); else
the no-LLM rule below. Passages that do not fit the model's context are halved until they do (down to one,
then the rule).

**Without one** (§4.3 with an extractive answer in place of §4.3.4's generation): the no-LLM answer of
:func:`answer_from_evidence` (a choice, a yes/no or a shared property decided in code over the whole question; else the span of
the expected answer type) read from the *last bound sub-question* (``focus``, set by the think step when the
final sub-question is still a question), over the last turn's passages first and then the earlier turns',
newest first. When that finds nothing, the original question is read over the same passages. A found answer
also cites the sentences its bound sub-answers came from, so the chain is checkable hop by hop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.agents.answer import answer_from_evidence
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.think import Turn
from stratagraph.agents.traverse import interleave
from stratagraph.answers import Answer, Citation
from stratagraph.retrieval.base import Evidence

__all__ = ["MAX_PASSAGES", "STRATEGY", "chain_evidence", "generate", "reasoning_chain"]

STRATEGY = "tqr"
MAX_PASSAGES = 8  # passages the generation prompt shows (a small model's context holds them with the chain)


def chain_evidence(turns: Sequence[Turn], for_model: bool) -> list[Evidence]:
    """The passages the answer reads: for the model, each turn's best (round-robin, :data:`MAX_PASSAGES`) in
    turn order; for extraction, the last turn's passages first, then the earlier turns', newest first."""
    if for_model:
        chosen = {e.chunk_id for e in interleave([t.evidence for t in turns], MAX_PASSAGES)}
        out: list[Evidence] = []
        for t in turns:
            out.extend(e for e in t.evidence if e.chunk_id in chosen)
        return _unique(out)
    return _unique([e for t in reversed(turns) for e in t.evidence])


def _unique(evidence: Sequence[Evidence]) -> list[Evidence]:
    seen: set[str] = set()
    out = []
    for e in evidence:
        if e.chunk_id not in seen:
            seen.add(e.chunk_id)
            out.append(e)
    return out


def reasoning_chain(turns: Sequence[Turn], draft: str | None) -> str:
    """The turns as the generation prompt's context: thoughts, queries, bound intermediate answers."""
    lines = []
    for t in turns:
        line = f"{t.n}. query: " + "; ".join(t.queries)
        if t.thought:
            line = f"{t.n}. thought: {t.thought}\n   query: " + "; ".join(t.queries)
        lines.append(line)
        if t.binding is not None:
            got = t.binding.answer if t.binding.found else "(no answer found)"
            lines.append(f"   intermediate answer: {got}")
    if draft:
        lines.append(f"Draft answer from the conversation (check it against the passages): {draft}")
    return ("Reasoning chain so far:\n" + "\n".join(lines)) if lines else ""


def _with_chain(answer: Answer, turns: Sequence[Turn]) -> Answer:
    """A found answer plus the citations of the sub-answers it was reached through."""
    if not answer.found:
        return answer
    cites: list[Citation] = list(answer.citations)
    keys = {(c.chunk_id, c.quote) for c in cites}
    for t in turns:
        b = t.binding
        if b is not None and b.found and b.citation is not None and (b.citation.chunk_id, b.citation.quote) not in keys:
            keys.add((b.citation.chunk_id, b.citation.quote))
            cites.append(b.citation)
    return answer.model_copy(update={"citations": cites})


@agent_node("answer")
def generate(state: Mapping[str, Any], step: Step) -> dict[str, Any]:
    """BiG-RAG §4.3.4 over the chain's passages: the model's grounded generation, else the reader's answer
    to the last bound sub-question (or the question)."""
    turns: list[Turn] = list(state.get("turns") or [])
    model = step.llm is not None
    evidence = chain_evidence(turns, for_model=model)
    focus = state.get("focus") or None
    answer = answer_from_evidence(step, evidence, STRATEGY, prompt="generate", question=focus,
                                  context=reasoning_chain(turns, state.get("draft") or None))  # fmt: skip
    return {"answer": _with_chain(answer, turns)}

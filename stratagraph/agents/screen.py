"""BAG-RAG's top-down screening of the heading tree (§3.2, eq. 3), with the secondary screening ``Miss``.

Eq. 3, level by level from the top-level sections down: at level 1 every section relevant to the question is
kept (``P^1``); at each deeper level only the children of the kept sections are screened (``V_s-linked``),
and a *secondary screening* looks again at the sections of the level that were left out (``L^l``; the
paper's ``Miss(L^l, Q)``) and adds back those that are relevant after all, so that their children are
explored too. ``S = P^1 ∪ ... ∪ P^(L-1)`` is what the bottom-up phase (:mod:`stratagraph.agents.aggregate`)
works inside.

With a chat model, ``Rel(s, Q)`` is the paper's ``LLM(Q, s) = True``: a relevance judge answering a
structured yes/no per section, one batch per level (prompts ``screen.system`` / ``screen.user``):

* the first screening shows the model the linked sections of the level as "document > heading path", at
  most :data:`LLM_SHORTLIST` of them (the best heading cosines first, so a store of thousands of documents
  costs one bounded request per level);
* ``Miss(L^l, Q)`` shows it the left-out sections of the level whose text is relevant enough to be worth a
  second look (the best chunk under them reaches the embedding model's content floor; at most
  :data:`MISS_SHORTLIST`, best first), each with an excerpt of that chunk, since a heading can be vague
  while the text under it answers the question. Sections the model leaves out of its reply are not kept.
* a reply that cannot be read twice (``step.ask`` asks once more with the validation error): that level is
  screened by the embedding rule below, and the trace says so.

Without one, the embedding threshold of :mod:`stratagraph.retrieval.top_down` (eq. 3 with ``Rel`` the
cosine of question and "document > heading path" vectors, tau relative to the level's best and floored,
``Miss`` by the section's content or, for a section whose parent was not kept, by its own heading).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.prompts import load_prompt
from stratagraph.retrieval import top_down
from stratagraph.retrieval.base import Scored
from stratagraph.retrieval.top_down import (
    Level,
    QueryScores,
    ScreenedSection,
    Screening,
    SectionIndex,
    TopDownParams,
)

__all__ = ["LLM_SHORTLIST", "MISS_SHORTLIST", "ScreenReply", "SectionVerdict", "screen", "screen_sections"]

#: linked sections the chat model judges per level, best heading cosine first (ours: bounds one request)
LLM_SHORTLIST = 12
#: left-out sections the chat model re-screens per level (``Miss``), best content cosine first (ours)
MISS_SHORTLIST = 6
#: characters of a section's best chunk shown to the model in the secondary screening (ours)
EXCERPT_CHARS = 300


class SectionVerdict(BaseModel):
    """The judge's verdict on one listed section."""

    section: int = Field(description="the number of the section in the list")
    relevant: bool = Field(description="true when the section (or what lies under it) can help answer the question")


class ScreenReply(BaseModel):
    """The judge's verdicts on a batch of sections."""

    verdicts: list[SectionVerdict] = Field(default_factory=list, description="one verdict per listed section")


# ------------------------------------------------------------------------------------------ the node
@agent_node("screen")
def screen(state: dict, step: Step) -> dict:
    """BAG-RAG eq. 3: keep the sections of the heading tree relevant to the question, level by level, with
    the secondary screening Miss (a chat model's yes/no per section, else the embedding threshold)."""
    screening = step.call(
        "top_down.screen",
        lambda **a: screen_sections(step, a["query"]),
        summary=lambda s: f"{len(s.kept_ids())} sections kept, {len(s.recovered_ids())} by Miss",
        query=step.question,
    )
    for lv in screening.levels:
        kept = ", ".join(s.title for s in lv.kept) or "none"
        line = f"level {lv.depth}: kept {len(lv.kept)} of {lv.linked} linked ({kept})"
        if lv.recovered:
            line += "; Miss recovered " + ", ".join(f"{s.title} ({s.why})" for s in lv.recovered)
        step.decide(line)
    if not screening.levels:
        step.decide("no section matches the filters: nothing to screen")
    return {"kept_sections": screening.kept_ids(), "screening": [lv.model_dump() for lv in screening.levels]}


def screen_sections(step: Step, question: str) -> Screening:
    """Eq. 3 over the store's heading tree: by the chat model when there is one, else by embeddings."""
    ctx = step.ctx
    params = top_down.with_floors(TopDownParams(), ctx)
    if step.llm is None:
        return top_down.run(ctx, question, step.filters, params).screening
    index = top_down.section_index(ctx)
    qs = top_down.query_scores(index, ctx.query_vector(question), ctx.allowed_docs(step.filters))
    return _llm_screening(step, question, index, qs, params)


# ------------------------------------------------------------------------------------------ with a chat model
def _llm_screening(step: Step, question: str, index: SectionIndex, qs: QueryScores, params: TopDownParams) -> Screening:
    levels: list[Level] = []
    paths = _Paths(step, index)
    linked = index.at_depth(1)
    linked = linked[qs.allowed[linked]]
    content_floor = float(params.content_floor or 0.0)
    for depth in range(1, index.max_depth + 1):
        everyone = index.at_depth(depth)
        everyone = everyone[qs.allowed[everyone]]
        if not len(everyone):
            break
        kept, tau = _first_screening(step, question, index, qs, linked, params, paths, depth)
        kept_mask = np.zeros(len(index.ids), dtype=bool)
        kept_mask[kept] = True
        left_out = everyone[~kept_mask[everyone]]
        recovered = _miss(step, question, index, qs, left_out, linked, tau, params, paths, depth, content_floor)
        levels.append(
            Level(
                depth=depth,
                tau=None if tau is None else round(tau, 6),
                content_tau=round(content_floor, 6),
                linked=len(linked),
                kept=[_entry(index, qs, i, "llm") for i in kept],
                recovered=[_entry(index, qs, i, why) for i, why in recovered],
            )
        )
        chosen = [*kept, *(i for i, _ in recovered)]
        linked = np.array(sorted({c for i in chosen for c in index.children[i] if qs.allowed[c]}), dtype=np.int64)
    return Screening(levels=levels)


def _first_screening(
    step: Step,
    question: str,
    index: SectionIndex,
    qs: QueryScores,
    linked: np.ndarray,
    params: TopDownParams,
    paths: _Paths,
    depth: int,
) -> tuple[list[int], float | None]:
    """``P^l``: the linked sections the judge calls relevant (the embedding rule when its reply is unusable)."""
    if not len(linked):
        return [], None
    shortlist = _best_first(linked, qs.title, index.ids)[:LLM_SHORTLIST]
    verdicts = _judge(step, question, [(i, paths[i], "") for i in shortlist], f"level {depth}")
    if verdicts is None:
        return top_down.first_screening(index, qs, linked, params)
    return [i for i in shortlist if verdicts.get(i)], None


def _miss(
    step: Step,
    question: str,
    index: SectionIndex,
    qs: QueryScores,
    left_out: np.ndarray,
    linked: np.ndarray,
    tau: float | None,
    params: TopDownParams,
    paths: _Paths,
    depth: int,
    content_floor: float,
) -> list[tuple[int, str]]:
    """``Miss(L^l, Q)``: left-out sections whose text reaches the content floor, judged again with an excerpt
    of their best chunk (the embedding rule when the reply is unusable)."""
    worth = left_out[qs.content[left_out] >= content_floor]
    if not len(worth):
        return []
    shortlist = _best_first(worth, qs.content, index.ids)[:MISS_SHORTLIST]
    excerpts = _excerpts(step, index, qs, shortlist)
    verdicts = _judge(step, question, [(i, paths[i], excerpts.get(i, "")) for i in shortlist], f"level {depth} Miss")
    if verdicts is None:
        linked_mask = np.zeros(len(index.ids), dtype=bool)
        linked_mask[linked] = True
        best = float(qs.content[left_out].max()) if len(left_out) else content_floor
        content_tau = max(content_floor, best - params.content_margin)
        return top_down.secondary_screening(index, qs, left_out, linked_mask, tau, content_tau, params)
    return [(i, "llm-miss") for i in shortlist if verdicts.get(i)]


def _judge(step: Step, question: str, items: list[tuple[int, str, str]], what: str) -> dict[int, bool] | None:
    """One batch of yes/no verdicts by the chat model, by section index; None when its reply is unusable."""
    lines = []
    for n, (_, path, excerpt) in enumerate(items, start=1):
        lines.append(f"[{n}] {path}" + (f"\n    text: {excerpt}" if excerpt else ""))
    messages = [
        SystemMessage(content=load_prompt("screen.system")),
        HumanMessage(content=load_prompt("screen.user").format(question=question, sections="\n".join(lines))),
    ]
    reply = step.ask(ScreenReply, messages, f"screen {what}")
    if reply is None:
        return None
    said = {v.section: v.relevant for v in reply.verdicts if 1 <= v.section <= len(items)}
    return {i: said.get(n, False) for n, (i, _, _) in enumerate(items, start=1)}


def _excerpts(step: Step, index: SectionIndex, qs: QueryScores, sections: list[int]) -> dict[int, str]:
    """The opening of the chunk most similar to the question in each section's subtree."""
    best: dict[int, str] = {}
    for s in sections:
        rows = [j for t in _subtree(index, s) for j in index.own_chunks[t]]
        if rows:
            j = max(rows, key=lambda r: (float(qs.chunk[r]), -r))
            best[s] = index.chunk_ids[j]
    if not best:
        return {}
    found = step.ctx.evidence([Scored(id=c, score=1.0) for c in dict.fromkeys(best.values())])
    step.flag(found)  # the model reads these excerpts: one that addresses it is flagged in the trace
    text = {e.chunk_id: " ".join(e.text.split()) for e in found}
    out = {}
    for s, c in best.items():
        t = text.get(c, "")
        out[s] = t if len(t) <= EXCERPT_CHARS else t[: EXCERPT_CHARS - 1] + "…"
    return out


def _subtree(index: SectionIndex, root: int) -> list[int]:
    out, stack, seen = [], [root], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        out.append(node)
        stack.extend(index.children[node])
    return out


class _Paths:
    """ "Document title > heading > ... > heading" of a section (what the judge reads), made when asked."""

    def __init__(self, step: Step, index: SectionIndex) -> None:
        ix = step.ctx.index()
        self.index = index
        self.doc_title = dict(zip(ix.documents.ids, ix.doc_title, strict=True))

    def __getitem__(self, i: int) -> str:
        index = self.index
        chain, node, seen = [], i, set()
        while node >= 0 and node not in seen:
            seen.add(node)
            chain.append(index.titles[node])
            node = int(index.parent[node])
        heads = [t for t in reversed(chain) if t]
        title = self.doc_title.get(index.doc_ids[i], "")
        if title and (not heads or heads[0] != title):
            heads.insert(0, title)
        return " > ".join(heads) or index.ids[i]


def _best_first(rows: np.ndarray, scores: np.ndarray, ids: list[str]) -> list[int]:
    return sorted(rows.tolist(), key=lambda i: (-round(float(scores[i]), 12), ids[i]))


def _entry(index: SectionIndex, qs: QueryScores, i: int, why: str) -> ScreenedSection:
    return ScreenedSection(
        id=index.ids[i],
        title=index.titles[i],
        doc_id=index.doc_ids[i],
        score=round(float(qs.title[i]), 6),
        content=round(float(qs.content[i]), 6),
        why=why,
    )


def screening_of(state: dict[str, Any]) -> Screening:
    """The screening a ``screen`` node left in the state."""
    return Screening(levels=[Level.model_validate(lv) for lv in state.get("screening") or []])

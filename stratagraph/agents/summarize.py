"""CG-RAG's context-aware generation (§4.4, eqs. 18-20): the top chunks by LeSeGR, each with its contextual
subgraph, each subgraph summarised, the answer generated from the summaries.

``subgraphs`` (eq. 18). The ``lesegr`` retrieval strategy ranks the chunks (§4.3) and returns, for each
of the top ``k``, its contextual subgraph ``G_i``: the chunk and its direct neighbours in the chunk graph
(the passages it cites or that cite it, the next and previous passages, cross-referenced sections, similar
passages of other documents), best gate first. Each subgraph keeps its centre and at most
:data:`NEIGHBOURS` neighbours: those the message passing gated (``gate > 0``, most relevant first), then
the others by how many of the question's words their text holds.

``summarize`` (eqs. 19-20): a summary of each subgraph, what it says that bears on the question.

* With a chat model: one request per subgraph (the first :data:`LLM_SUBGRAPHS` of them; prompts
  ``summarize.system`` / ``summarize.user``), showing the centre passage and its numbered neighbours with
  how each is linked to it; the reply ``{summary, passages}`` names the passages the summary draws from.
  An unusable reply (twice): that subgraph gets the extractive summary below, and the trace says so.
* Without one, a documented rule (the extract): the sentences of the subgraph's passages ranked by the
  reader's sentence score (about the question's names, holding its relation words:
  :func:`stratagraph.reading.spans.score_sentence`; a neighbour's sentences count :data:`NEIGHBOUR_WEIGHT`
  of a centre's, which the question is closest to), the best :data:`SUMMARY_SENTENCES` of them that score at
  least :data:`MIN_SHARE`, verbatim.

The summaries are concatenated in rank order (eq. 20) as the context the answer step reads (eq. 19); its
passages are the chunks the summaries draw from, in summary order, then the other centres and their
neighbours (a cited paper's passages, for a question about the work a paper builds on), so every citation
of the answer quotes a chunk of some subgraph verbatim. The answer is :mod:`stratagraph.agents.answer`'s:
the chat model's grounded answer, else the reader's over those passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from stratagraph.agents.answer import answer_from_evidence, format_passages
from stratagraph.agents.common import Step, agent_node
from stratagraph.reading import frame_of
from stratagraph.reading.sentences import Sentence, sentences
from stratagraph.reading.spans import score_sentence, specificity
from stratagraph.retrieval.base import Evidence, Scored

__all__ = [
    "LLM_SUBGRAPHS",
    "MIN_SHARE",
    "NEIGHBOURS",
    "SUMMARY_SENTENCES",
    "SubgraphSummary",
    "extract_summary",
    "answer",
    "subgraphs",
    "summarize",
]

#: neighbours kept per contextual subgraph (ours: bounds what is read and summarised)
NEIGHBOURS = 6
#: subgraphs the chat model summarises, one request each (ours: bounds the requests per question)
LLM_SUBGRAPHS = 3
#: sentences in an extractive summary (ours)
SUMMARY_SENTENCES = 3
#: the least score (about the question's names x its relation words, :func:`stratagraph.reading.spans.score_sentence`)
#: of a sentence that enters an extractive summary (ours)
MIN_SHARE = 0.3
#: a neighbour's sentence weighs this much of a centre's in the extract (ours)
NEIGHBOUR_WEIGHT = 0.9

_LINKS = {
    ("CITES", "out"): "cited by the centre passage",
    ("CITES", "in"): "cites the centre passage's document",
    ("NEXT", "out"): "follows the centre passage",
    ("NEXT", "in"): "precedes the centre passage",
    ("REFERS_TO", "out"): "in a section the centre passage refers to",
    ("REFERS_TO", "in"): "refers to the centre passage's section",
    ("SIMILAR", "out"): "similar passage",
    ("SIMILAR", "in"): "similar passage",
}


class SubgraphSummary(BaseModel):
    """What the chat model says a contextual subgraph contributes to the question."""

    summary: str = Field(description="what the passages say that helps answer the question; empty when nothing")
    passages: list[int] = Field(default_factory=list, description="numbers of the passages the summary draws from")


# ------------------------------------------------------------------------------------------ eq. 18
@agent_node("subgraphs")
def subgraphs(state: dict, step: Step) -> dict:
    """CG-RAG eq. 18: the top chunks by LeSeGR, each with its contextual subgraph (the chunk and its direct
    neighbours in the chunk graph)."""
    from stratagraph.retrieval import retrieve

    result = step.call(
        "retrieve:lesegr",
        lambda **a: retrieve(step.ctx, "lesegr", a["query"], k=a["k"], filters=step.filters),
        summary=lambda r: f"{len(r.evidence)} chunks: " + ", ".join(e.chunk_id for e in r.evidence[:5]),
        query=step.question,
        k=step.k,
    )
    graphs = result.context.get("subgraphs") or {}
    words = _words(step.question)
    chosen: dict[str, list[dict[str, Any]]] = {}
    for e in result.evidence:
        links = [n for n in (graphs.get(e.chunk_id) or {}).get("neighbors", []) if n.get("id") != e.chunk_id]
        chosen[e.chunk_id] = _first_links(links)
    wanted = list(dict.fromkeys(n["id"] for links in chosen.values() for n in links))
    found = {x.chunk_id: x for x in step.ctx.evidence([Scored(id=c, score=0.0) for c in wanted], None, step.filters)}
    out = []
    for e in result.evidence:
        links = [n for n in chosen[e.chunk_id] if n["id"] in found]
        gated = [n for n in links if n.get("gate", 0) > 0]
        rest = sorted((n for n in links if n.get("gate", 0) <= 0), key=lambda n: -_overlap(words, found[n["id"]].text))
        keep = [*gated, *rest][:NEIGHBOURS]
        out.append(
            {
                "centre": e.chunk_id,
                "neighbours": [
                    {
                        "id": n["id"],
                        "edge_type": n.get("edge_type", ""),
                        "direction": n.get("direction", ""),
                        "gate": float(n.get("gate", 0.0)),
                    }  # fmt: skip
                    for n in keep
                ],
            }
        )
    neighbours = [found[c] for c in dict.fromkeys(n["id"] for g in out for n in g["neighbours"])]
    step.decide(
        f"{len(result.evidence)} chunks by LeSeGR, {len(neighbours)} neighbouring chunks in their subgraphs ("
        + ", ".join(f"{_kind(g)}" for g in out[:5])
        + ")"
    )
    return {"evidence": result.evidence, "subgraphs": out, "neighbour_chunks": neighbours}


def _first_links(links: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The links worth reading: every gated one, and enough of the others to choose from (each chunk once)."""
    seen: set[str] = set()
    out = []
    for n in links:
        if n["id"] in seen:
            continue
        seen.add(n["id"])
        out.append(n)
    gated = [n for n in out if n.get("gate", 0) > 0]
    return [*gated, *[n for n in out if n.get("gate", 0) <= 0][: 2 * NEIGHBOURS]]


def _kind(graph: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for n in graph["neighbours"]:
        counts[n["edge_type"]] = counts.get(n["edge_type"], 0) + 1
    inner = ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())) or "no neighbours"
    return f"{graph['centre'].rsplit('/', 1)[-1]}: {inner}"


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 3}


def _overlap(words: set[str], text: str) -> int:
    return len(words & _words(text))


# ------------------------------------------------------------------------------------------ eqs. 19-20
@agent_node("summarize")
def summarize(state: dict, step: Step) -> dict:
    """CG-RAG eqs. 19-20: a summary of each contextual subgraph (by the chat model, else the extract of its
    most question-relevant sentences), concatenated as the answer's context; the answer's passages are the
    chunks the summaries draw from."""
    centres: list[Evidence] = list(state.get("evidence") or [])
    by_id = {e.chunk_id: e for e in [*centres, *(state.get("neighbour_chunks") or [])]}
    graphs: list[dict[str, Any]] = list(state.get("subgraphs") or [])
    summaries: list[tuple[str, str, list[str]]] = []  # centre, text, chunks it draws from
    extracts: list[dict[str, Any]] = []  # the extracts' sentences, for the answer without a chat model
    by_model = 0
    for i, g in enumerate(graphs):
        centre = by_id.get(g["centre"])
        if centre is None:
            continue
        neighbours = [by_id[n["id"]] for n in g["neighbours"] if n["id"] in by_id]
        extract = extract_summary(step.question, centre, neighbours)
        extracts += [{"chunk_id": sent.passage.chunk_id, "start": sent.start, "score": round(score, 6), "graph": i}
                     for score, sent in extract]  # fmt: skip
        made = None
        if step.llm is not None and i < LLM_SUBGRAPHS:
            made = _llm_summary(step, centre, neighbours, g["neighbours"])
            by_model += made is not None
        if made is None:
            text = " ".join(" ".join(sent.text.split()) for _, sent in extract)
            made = text, list(dict.fromkeys(sent.passage.chunk_id for _, sent in extract))
        text, chunks = made
        if text:
            summaries.append((centre.chunk_id, text, chunks))
    used = [by_id[c] for _, _, chunks in summaries for c in chunks if c in by_id]
    neighbours = [by_id[n["id"]] for g in graphs for n in g["neighbours"] if n["id"] in by_id]
    passages = list({e.chunk_id: e for e in [*used, *centres, *neighbours]}.values())
    passages = [e.model_copy(update={"rank": r}) for r, e in enumerate(passages, start=1)]
    context = ""
    if summaries:
        context = "Summaries of the passages' citation context (most relevant first):\n" + "\n".join(
            f"- {text}" for _, text, _ in summaries
        )
    step.decide(
        f"{len(summaries)} of {len(graphs)} subgraphs summarised ({by_model} by the chat model, the others by "
        f"extracts); {len(passages)} passages for the answer"
    )
    return {"passages": passages, "summaries": context, "extracts": extracts}


def extract_summary(question: str, centre: Evidence, neighbours: Sequence[Evidence]) -> list[tuple[float, Sentence]]:
    """The extract of a subgraph (module docstring): its most question-relevant sentences, verbatim, best
    first, each with its score (about the question's names, holding its relation words; the reader's
    :func:`~stratagraph.reading.spans.score_sentence`), a neighbour's weighted down."""
    frame = frame_of(question)
    sents = sentences([centre, *neighbours])
    weights = specificity(frame, sents)
    scored: list[tuple[float, int, Sentence]] = []
    for order, sent in enumerate(sents):
        weight = 1.0 if sent.passage.chunk_id == centre.chunk_id else NEIGHBOUR_WEIGHT
        share = score_sentence(sent, frame, weights)[0]
        if share >= MIN_SHARE:
            scored.append((share * weight, -order, sent))
    scored.sort(key=lambda p: (p[0], p[1]), reverse=True)
    return [(score, sent) for score, _, sent in scored[:SUMMARY_SENTENCES]]


def _llm_summary(
    step: Step, centre: Evidence, neighbours: Sequence[Evidence], links: Sequence[dict[str, Any]]
) -> tuple[str, list[str]] | None:
    """The chat model's summary of one subgraph (prompt ``summarize``), and the chunks it draws from (None: no
    usable reply)."""
    passages = [centre, *neighbours]
    how = {n["id"]: _LINKS.get((n["edge_type"], n["direction"]), n["edge_type"].lower()) for n in links}
    listed = format_passages(passages).split("\n\n")
    shown = [listed[0].replace("[1]", "[1] (centre passage)", 1)]
    shown += [p.replace(f"[{i}]", f"[{i}] ({how.get(passages[i - 1].chunk_id, 'linked')})", 1)
              for i, p in enumerate(listed[1:], start=2)]  # fmt: skip
    reply = step.ask_prompt("summarize", SubgraphSummary, question=step.question, passages="\n\n".join(shown))
    if reply is None:
        return None
    text = " ".join(reply.summary.split())
    if not text:
        return "", []
    chunks = [passages[i - 1].chunk_id for i in dict.fromkeys(reply.passages) if 1 <= i <= len(passages)]
    return text, chunks or [centre.chunk_id]


# ------------------------------------------------------------------------------------------ eq. 19
@agent_node("answer")
def answer(state: dict, step: Step) -> dict:
    """CG-RAG eq. 19: the answer from the question and the concatenated summaries, quoting the passages the
    summaries draw from, then the subgraphs' other passages (agents/answer.py: the chat model's grounded
    answer, else the reader's)."""
    passages: list[Evidence] = list(state.get("passages") or state.get("evidence") or [])
    return {"answer": answer_from_evidence(step, passages, "lesegr", context=str(state.get("summaries") or ""))}

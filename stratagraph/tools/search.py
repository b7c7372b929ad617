"""Tools that run a retrieval strategy (``stratagraph.retrieval.retrieve``) and hand its evidence to a model.

* ``search_chunks``: any registered strategy (DESIGN.md names table), ranked passages with citations.
* ``traverse``: BiG-RAG's algorithmic mode (strategy ``traversal``: Alg. 3 classification, Alg. 5
  decomposition, Alg. 4 adaptive traversal of the entity/fact bipartite graph): the evidence, then the trace
  a model can reason over (sub-questions, the facts each reached, the candidate answers bound).
* ``aggregate_communities``: BAG-RAG's bottom-up generation (§3.2, eq. 4, strategy ``bottom_up``): the
  communities of instance nodes it aggregated, with their evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from stratagraph.retrieval import STRATEGIES, RetrievalContext, RetrievalResult
from stratagraph.tools.common import (
    MAX_K,
    FilterValue,
    ToolOutput,
    build_tool,
    clip,
    compact,
    evidence_output,
    node_document,
    plural,
    run_strategy,
)

#: one line per strategy for the model choosing one (names as in stratagraph.retrieval.STRATEGIES)
STRATEGY_HINTS: dict[str, str] = {
    "vector": "dense embedding similarity (paraphrases)",
    "lexical": "BM25 keyword match (rare names, codes, exact numbers)",
    "rrf": "vector and lexical fused",
    "hybrid": "HybridRAG: vector passages plus knowledge-graph context",
    "dual_path": "BiG-RAG: entity path and fact path fused",
    "traversal": "BiG-RAG adaptive multi-hop traversal of entities and facts",
    "ppr": "personalised PageRank from the entities the question names (multi-hop)",
    "default": "the best choice when unsure: graph fusion for questions naming pages, else vector + lexical",
    "lesegr": "CG-RAG: passages and the passages they cite or resemble",
    "top_down": "BAG-RAG: descend the section tree of relevant documents",
    "bottom_up": "BAG-RAG: communities of related facts and entities, aggregated",
}

CONTEXT_ITEMS = 8  # items of each context list shown to the model
CONTEXT_CHARS = 2500  # the whole context summary is cut here
TRACE_FACTS = 5  # facts shown per sub-question of a traversal


#: the registered strategy names as a Literal, so a model's schema lists them (an enum)
StrategyName = Literal[tuple(STRATEGIES)]  # type: ignore[valid-type]


def _strategy_help() -> str:
    return "; ".join(f"{name} = {STRATEGY_HINTS.get(name, name)}" for name in STRATEGIES)


class SearchChunksArgs(BaseModel):
    query: str = Field(min_length=1, description="What to look for: the question or a focused sub-question.")
    strategy: StrategyName = Field("default", description="Retrieval strategy: " + _strategy_help() + ".")
    k: int = Field(5, ge=1, le=MAX_K, description="How many passages to return (1-50).")
    filters: dict[str, FilterValue] = Field(
        default_factory=dict,
        description="Document metadata every passage's document must match, e.g. {\"company\": \"Acme\", "
        "\"year\": \"2024\"}. Empty: no filter.",
    )


class StrategyQueryArgs(BaseModel):
    query: str = Field(min_length=1, description="The question (multi-hop questions are fine).")
    k: int = Field(5, ge=1, le=MAX_K, description="How many passages to return (1-50).")
    filters: dict[str, FilterValue] = Field(
        default_factory=dict,
        description="Document metadata every passage's document must match, e.g. {\"year\": \"2024\"}. "
        "Empty: no filter.",
    )


# ------------------------------------------------------------------------------------------ search_chunks


def search_chunks(ctx: RetrievalContext, args: SearchChunksArgs) -> ToolOutput:
    result = run_strategy(ctx, args.strategy, args.query, args.k, args.filters)
    return evidence_output(
        f"{plural(len(result.evidence), 'passage')} for {args.query!r} (strategy {args.strategy}"
        + (f", filters {compact(dict(args.filters))}" if args.filters else "")
        + "):",
        result.evidence,
        "No passages found. Try other words, another strategy, or fewer filters.",
    )


# ------------------------------------------------------------------------------------------ traverse


def render_context(context: Mapping[str, Any], skip: tuple[str, ...] = ()) -> str:
    """What a strategy found on the way, one key per line: lists show their first items."""
    lines = []
    for key in sorted(context):
        if key in skip:
            continue
        value = context[key]
        if isinstance(value, list):
            if not value:
                continue
            shown = [f"  - {compact(v)}" for v in value[:CONTEXT_ITEMS]]
            more = f" (first {CONTEXT_ITEMS})" if len(value) > CONTEXT_ITEMS else ""
            lines.append(f"{key} ({len(value)}){more}:\n" + "\n".join(shown))
        elif value not in (None, "", {}):
            lines.append(f"{key}: {compact(value)}")
    return clip("\n".join(lines), CONTEXT_CHARS)


def _names(items: Any) -> list[str]:
    if not isinstance(items, list):
        return []
    return [str(i.get("name") or i.get("entity_id")) for i in items if isinstance(i, Mapping)]


def traversal_summary(ctx: RetrievalContext, context: Mapping[str, Any]) -> tuple[str, list[Document]]:
    """BiG-RAG's trace as a model reads it: the question class (Alg. 3), each sub-question (Alg. 5) with its
    seed entities, its best facts (Alg. 4's ranked list, with their text) and its candidate answers (the
    bindings passed to the next sub-question). A context of another shape is listed as it is."""
    runs = context.get("runs")
    if not isinstance(runs, list) or not all(isinstance(r, Mapping) for r in runs):
        return render_context(context), []
    ranked = {
        run_no: [f for f in run.get("ranked") or [] if isinstance(f, Mapping) and f.get("fact_id")][:TRACE_FACTS]
        for run_no, run in enumerate(runs)
    }
    fact_ids = sorted({str(f["fact_id"]) for facts in ranked.values() for f in facts})
    facts = {n.id: n for n in ctx.graph.get_nodes(fact_ids)} if fact_ids else {}
    cls = context.get("classification")
    label = cls.get("label") if isinstance(cls, Mapping) else None
    lines = [f"Traversal trace (question class {label or '?'}, {plural(len(runs), 'sub-question')}):"]
    docs: list[Document] = []
    listed: set[str] = set()
    for run_no, run in enumerate(runs):
        sub = run.get("sub_query") if isinstance(run.get("sub_query"), Mapping) else {}
        head = f"{run_no + 1}. {sub.get('text') or '?'}"
        seeds = _names(run.get("seeds"))
        if seeds:
            head += f" (from {', '.join(seeds)})"
        lines.append(head)
        for f in ranked[run_no]:
            node = facts.get(str(f["fact_id"]))
            text = clip(str(node.props.get("description") or ""), 300) if node is not None else ""
            lines.append(f"   - [{f['fact_id']}] hop {f.get('hop', '?')}: {text}")
            if node is not None and node.id not in listed:
                listed.add(node.id)
                meta = {"sub_query": str(sub.get("text") or ""), "hop": f.get("hop"), "score": f.get("score")}
                meta["confidence"] = node.props.get("confidence")
                docs.append(node_document("fact", node.id, str(node.props.get("description") or ""), **meta))
        answers = _names(run.get("bindings"))
        if answers:
            lines.append(f"   candidate answers: {', '.join(answers)}")
    return "\n".join(lines), docs


def traverse(ctx: RetrievalContext, args: StrategyQueryArgs) -> ToolOutput:
    result = run_strategy(ctx, "traversal", args.query, args.k, args.filters)
    trace, fact_docs = traversal_summary(ctx, result.context)
    text, docs = evidence_output(
        f"{plural(len(result.evidence), 'passage')} for {args.query!r} by graph traversal:",
        result.evidence,
        "No passages found by traversal. Try search_chunks, or name the entities more exactly.",
        footer=trace,
    )
    return text, fact_docs + docs


# ------------------------------------------------------------------------------------------ communities

_SUMMARY_KEYS = ("summary", "description", "text", "report")
_SHOWN_KEYS = frozenset({"id", "title", "section", "doc_id", "score", "size", "members", "facts", "depth", *_SUMMARY_KEYS})


def _first(d: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        if d.get(key) not in (None, "", []):
            return str(d[key])
    return ""


def _fact_lines(facts: list[Any]) -> list[str]:
    lines = []
    for f in facts[:CONTEXT_ITEMS]:
        if isinstance(f, Mapping):
            score = f" (relevance {float(f['score']):.3f})" if isinstance(f.get("score"), (int, float)) else ""
            lines.append(f"   - [{f.get('id', '?')}] {clip(_first(f, _SUMMARY_KEYS), 300)}{score}")
        else:
            lines.append(f"   - {compact(f, 300)}")
    if len(facts) > CONTEXT_ITEMS:
        lines.append(f"   ... and {len(facts) - CONTEXT_ITEMS} more")
    return lines


def community_text(i: int, community: Mapping[str, Any]) -> str:
    """A community (BAG-RAG's aggregated group of instance nodes): relevance, home section, members, facts."""
    bits = []
    if isinstance(community.get("score"), (int, float)):
        bits.append(f"relevance {float(community['score']):.3f}")
    if isinstance(community.get("size"), int):
        bits.append(plural(int(community["size"]), "node"))
    lines = [f"{i}. [{community.get('id', i)}]" + (f" ({', '.join(bits)})" if bits else "")]
    if community.get("section"):
        title = str(community.get("title") or community["section"])
        lines.append(f"   home section: {title} [{community['section']}] in document [{community.get('doc_id') or '?'}]")
    summary = _first(community, _SUMMARY_KEYS)
    if summary:
        lines.append(f"   {clip(summary, 800)}")
    members = community.get("members")
    if isinstance(members, list) and members:
        lines.append("   members: " + ", ".join(str(m) for m in members[: 3 * CONTEXT_ITEMS]))
    facts = community.get("facts")
    if isinstance(facts, list) and facts:
        lines.append("   facts:")
        lines += _fact_lines(facts)
    for key in sorted(k for k in community if k not in _SHOWN_KEYS):
        if community[key] not in (None, "", [], {}):
            lines.append(f"   {key}: {compact(community[key], 200)}")
    return "\n".join(lines)


def community_document(i: int, community: Mapping[str, Any]) -> Document:
    cid = str(community.get("id", i))
    facts = community.get("facts") if isinstance(community.get("facts"), list) else []
    fact_text = "\n".join(_first(f, _SUMMARY_KEYS) if isinstance(f, Mapping) else str(f) for f in facts)
    members = community.get("members") if isinstance(community.get("members"), list) else []
    text = _first(community, _SUMMARY_KEYS) or fact_text or ", ".join(str(m) for m in members) or compact(dict(community), 2000)
    meta = {k: v for k, v in community.items() if k not in ("id", "kind", "node_id")}
    return node_document("community", cid, text, **meta)


def communities_of(result: RetrievalResult) -> list[Mapping[str, Any]]:
    raw = result.context.get("communities") or []
    if isinstance(raw, Mapping):  # {id: community}
        raw = [{"id": k, **v} if isinstance(v, Mapping) else {"id": k, "value": v} for k, v in sorted(raw.items())]
    return [c if isinstance(c, Mapping) else {"value": c} for c in raw]


def aggregate_communities(ctx: RetrievalContext, args: StrategyQueryArgs) -> ToolOutput:
    result = run_strategy(ctx, "bottom_up", args.query, args.k, args.filters)
    communities = communities_of(result)
    found = result.context.get("communities_found")
    of = f" of {found} found" if isinstance(found, int) and found != len(communities) else ""
    count = plural(len(communities), "community", "communities")
    parts = [f"Bottom-up aggregation for {args.query!r}: {count}{of}, most relevant first."]
    parts += [community_text(i, c) for i, c in enumerate(communities, start=1)]
    text, docs = evidence_output(
        "\n\n".join(parts) + f"\n\nSupporting {plural(len(result.evidence), 'passage')}:",
        result.evidence,
        "No passages found.",
    )
    return text, [community_document(i, c) for i, c in enumerate(communities, start=1)] + docs


# ------------------------------------------------------------------------------------------ tools


def search_chunks_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "search_chunks",
        "Search the document store for passages relevant to a query with a chosen retrieval strategy "
        "(default rrf). Returns numbered passages [n] with title, section, source and chunk id; cite them "
        "as [n]. Optional metadata filters restrict the documents searched.",
        SearchChunksArgs,
        search_chunks,
    )


def traverse_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "traverse",
        "For multi-hop questions (a bridge entity, a comparison of two things): splits the question into "
        "sub-questions and walks the entity/fact graph from the entities they name (BiG-RAG adaptive "
        "traversal). Returns the passages it reaches, numbered [n] for citation, and the trace: each "
        "sub-question with the facts it reached and its candidate answers.",
        StrategyQueryArgs,
        traverse,
    )


def aggregate_communities_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(
        ctx,
        "aggregate_communities",
        "For broad or summarising questions (totals, overviews, 'all the ...'): groups the facts and entities "
        "relevant to the query into communities (BAG-RAG bottom-up aggregation) and returns each community "
        "with its members, plus supporting passages numbered [n] for citation.",
        StrategyQueryArgs,
        aggregate_communities,
    )

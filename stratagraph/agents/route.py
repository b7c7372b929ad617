"""``route``: which answering workflow takes a question (the ``auto`` strategy of ``chat``).

With a chat model the route is its structured decision (prompt ``route``), checked against the store's
layers. Without one (and when its reply is unusable or names a workflow whose layer the store lacks), rules
over the question's frame (:func:`stratagraph.reading.frame_of`) and over what the store holds
(:func:`route_by_rules`), first match wins:

1. a section asked for ("which section / part / chapter ...") -> ``bag``, when the store holds sections
   under sections;
2. citations (:data:`~stratagraph.text.lexicon.CITATION_WORDS`: "cites", "builds on", "the paper that",
   "introduced") -> ``lesegr``, when the store holds citation links;
3. anything else -> ``kag``, when the store holds facts (its plan covers lookups, chains of references,
   computations, comparisons and sets); else ``bag`` when it holds a section tree; else ``hybrid``.

Every route passes the metadata filters the question names (a value of a metadata field that only some
documents have, such as a quarter or a company: HybridRAG's metadata filtering). The rules follow what was
measured: on the six development sets without a model (``benchmarks/qa.py``), ``kag`` answered as many or
more questions right than every other workflow on every kind of question but citation hops and sections.

A "why" about the last answer goes to the conversation's own ``why`` step (the chat graph's wiring).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.schema import EdgeType
from stratagraph.text.lexicon import CITATION_WORDS
from stratagraph.text.periods import find_periods, in_date

__all__ = ["Layers", "Route", "layers_of", "metadata_filters", "route", "route_by_rules"]

Workflow = Literal["tqr", "kag", "bag", "lesegr", "hybrid"]

class Layers(BaseModel):
    """What the store holds, as far as routing cares."""

    facts: int = 0
    deep_sections: int = 0  # sections under a section
    citations: int = 0  # CITES edges
    documents: int = 0


class Route(BaseModel):
    """A routing decision."""

    workflow: Workflow = Field(description="tqr (multi-hop), kag (numbers to combine), bag (report hierarchy), "
                               "lesegr (papers and citations) or hybrid (everything else, metadata filters)")  # fmt: skip
    why: str = Field(default="", description="one short reason")


def layers_of(step: Step) -> Layers:
    ix = step.ctx.index()
    deep = sum(1 for child, parent in ix.section_parent.items() if parent in ix.sections)
    return Layers(facts=len(ix.facts), deep_sections=deep, citations=len(ix.edges.get(EdgeType.CITES, ())),
                  documents=len(ix.documents))  # fmt: skip


def allowed(workflow: str, layers: Layers) -> bool:
    """Whether the store holds the layer the workflow needs."""
    return {
        "kag": layers.facts > 0,
        "tqr": layers.facts > 0,
        "bag": layers.deep_sections > 0,
        "lesegr": layers.citations > 0,
    }.get(workflow, True)


#: metadata keys whose value names one document (its title, its file): a question that names it asks about
#: the thing the document is about, which other documents may say more of ("the founder of Fenwick
#: Glassworks" is born on another page), so it is no filter
NAMING_KEYS = frozenset({"title", "source", "path", "file", "filename", "url", "id", "doc_id"})


def metadata_filters(step: Step, question: str) -> dict[str, str]:
    """Metadata values the question names that only some documents have ("Q3", a company's name; not a plain
    lower-case word, which a question uses as a word; not a title, :data:`NAMING_KEYS`): the filters that pick
    those documents. A period is matched as written and in its short form ("the third quarter of 2024" names
    "Q3" and "2024"); the year of a calendar date ("June 11, 2024") is not a period, and a bare year filters
    only beside a quarter, a half or a fiscal year (a reporting period); a question naming two periods filters
    by neither."""
    ix = step.ctx.index()
    named_periods = find_periods(question)
    period = named_periods[0] if len({(p.unit, p.index, p.year) for p in named_periods}) == 1 else None  # two
    # periods ("using the restated first-quarter number, ... the first nine months") pick no one period's documents
    reporting = period is not None and (bool(period.unit) or period.fiscal)  # a quarter, a half, a fiscal year
    if period is not None and not in_date(question, period.start):  # "the third quarter of 2024": "Q3", "2024"
        question = f"{question} ({period.text})"
    values: dict[tuple[str, str], int] = {}
    for meta in ix.doc_metadata:
        for key, value in meta.items():
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                values[(key, str(value))] = values.get((key, str(value)), 0) + 1
    named: dict[str, set[str]] = {}
    for (key, value), count in sorted(values.items()):
        if count >= len(ix.documents) or len(value) < 2 or value.replace(" ", "").islower() or key in NAMING_KEYS:
            continue  # a value held by every document, a plain word ("budget" in "adopted the budget"), a title
        if re.fullmatch(r"(?:19|20)\d\d", value) and not reporting:
            continue  # a bare year dates an event ("the contract from July 2025"), not the documents of a period
        if any(not in_date(question, m.start()) for m in
               re.finditer(rf"(?<![\w]){re.escape(value)}(?![\w])", question, re.IGNORECASE)):  # fmt: skip
            named.setdefault(key, set()).add(value)
    # a key the question names two values of ("Q3 ... compared with Q2") picks no one document set
    filters = {key: next(iter(vals)) for key, vals in named.items() if len(vals) == 1}
    others = {k: v for k, v in filters.items() if k not in PERIOD_KEYS}
    if reporting and period is not None and others != filters and _reported_after(
            period, [m for m in ix.doc_metadata if all(str(m.get(k)) == v for k, v in others.items())]):  # fmt: skip
        filters = others  # a later report of the same company or body may restate the period's figures
    return _consistent(filters, ix.doc_metadata)


#: metadata keys that say which period a document reports on
PERIOD_KEYS = frozenset({"quarter", "half", "year", "fiscal_year", "period"})


def _reported_after(period: Any, metadata: Sequence[Mapping[str, Any]]) -> bool:
    """Whether one of the documents (those the question's other filters keep) reports on a period after
    ``period`` (the Q3 report after "Q2 2024"): it may state that period's figures again, restated, so the
    period names the figure, not the documents to read."""
    from stratagraph.reading.sentences import metadata_periods

    asked = period.closes
    if asked is None:
        return False
    return any(p.closes is not None and p.closes > asked for meta in metadata for p in metadata_periods(meta))


def _consistent(filters: dict[str, str], metadata: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The filters, or the largest part of them that some document meets all of: values the question names
    that no one document holds together ("the first quarter of fiscal 2025" against a document dated by its
    calendar year) do not filter everything out."""
    from itertools import combinations

    def meets(sub: Mapping[str, str]) -> bool:
        return any(all(str(m.get(k)) == v for k, v in sub.items()) for m in metadata)

    for size in range(len(filters), 0, -1):
        for keys in combinations(sorted(filters), size):
            sub = {k: filters[k] for k in keys}
            if meets(sub):
                return sub
    return {}


def route_by_rules(step: Step, question: str, layers: Layers) -> tuple[str, str, dict[str, str]]:
    """``(workflow, reason, filters)`` by the rules of the module docstring."""
    from stratagraph.reading import frame_of
    from stratagraph.text.question import AnswerType

    frame = frame_of(question)
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", question)}
    candidates: list[tuple[str, str]] = []
    if frame.type == AnswerType.SECTION:
        candidates.append(("bag", "a section of the documents"))
    if words & CITATION_WORDS:
        candidates.append(("lesegr", "citations between documents"))
    candidates += [("kag", "logical-form plan over the facts and the text"), ("bag", "the section tree")]
    filters = metadata_filters(step, question)
    for workflow, reason in candidates:
        if allowed(workflow, layers):
            return workflow, reason, filters
    return "hybrid", "vector and graph context" + (" with the metadata the question names" if filters else ""), filters


@agent_node("route")
def route(state: dict, step: Step) -> dict[str, Any]:
    """Choose the answering workflow: the chat model's structured decision when configured (checked against
    the store's layers), else the rules."""
    question = str(state.get("question") or "")
    layers = layers_of(step)
    if state.get("evidence_from"):
        step.decide("a why about the last answer: its evidence")
        return {"route": "why", "filters": {}, "compare_filters": []}
    reply = step.ask_prompt("route", Route, question=question, layers=layers.model_dump_json()) if step.llm is not None else None
    if reply is not None and allowed(reply.workflow, layers):
        workflow, reason, filters = reply.workflow, f"model: {reply.why or reply.workflow}", metadata_filters(step, question)
    else:
        if reply is not None:
            step.fallbacks.append(f"route: the model chose {reply.workflow}, whose layer the store lacks")
        workflow, reason, filters = route_by_rules(step, question, layers)
    step.decide(f"{workflow} ({reason})")
    each = [metadata_filters(step, q) for q in state.get("compare") or []]  # a comparison: each question's own
    return {"route": workflow, "filters": filters, "compare_filters": each}

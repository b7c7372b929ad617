"""``route``: which answering workflow takes a question (the ``auto`` strategy of ``chat``).

Without a chat model (and when its reply is unusable), rules over the question and over what the store
holds (:func:`route_by_rules`), first match wins:

1. a "why" about the last answer -> ``hybrid`` over that answer's evidence;
2. numbers to combine ("total of", "in total", "sum", "combined", "difference", "how much more", "change between",
   "percent", "ratio", "average", "increase") -> ``kag`` (KAG's Math over typed quantities), when the store
   holds facts; else ``bag`` when it holds a section tree;
3. the hierarchy ("which section", "subsection", "chapter", "under which heading", "part of the report")
   -> ``bag``, when the store holds sections under sections;
4. citations ("cite", "builds on", "prior work", "reference", "the paper that", "dataset introduced")
   -> ``lesegr``, when the store holds citation links;
5. document metadata the question names (a value of a metadata field that only some documents have, such
   as a quarter or a company) -> ``hybrid`` with those filters (HybridRAG's metadata filtering); rules 2-4
   pass the same filters to their workflow;
6. a multi-hop question (BiG-RAG Alg. 3 says MODERATE or COMPLEX) -> ``tqr``, when the store holds facts;
7. anything else -> ``hybrid``.

A rule whose workflow needs a layer the store lacks falls through to the next. With a chat model the route
is a structured decision (prompt ``route``), checked against the same layers.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.prompts import load_prompt
from stratagraph.schema import EdgeType
from stratagraph.text.periods import find_period

__all__ = ["Layers", "Route", "layers_of", "metadata_filters", "route", "route_by_rules"]

Workflow = Literal["tqr", "kag", "bag", "lesegr", "hybrid"]

_NUMERIC = re.compile(
    r"\b(totals?\s+(?:of|for|across)|in total|sum|combined|altogether|difference|how much (?:more|less|higher|lower)|how many more|change between|"
    r"percent(?:age)? change|ratio|average|increase|decrease|grew|growth|add(?:ed)? up|in all)\b",
    re.IGNORECASE,
)
_HIERARCHY = re.compile(
    r"\b(which section|what section|subsection|sub-section|chapter|under which heading|which heading|"
    r"part of the (?:report|budget|document)|which part)\b",
    re.IGNORECASE,
)
_CITATION = re.compile(
    r"\b(cites?|cited|citing|builds? on|built on|prior work|references?|the paper that|the study that|"
    r"dataset (?:introduced|released)|introduces? (?:a|the) dataset|earlier paper|follow-up)\b",
    re.IGNORECASE,
)


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


def metadata_filters(step: Step, question: str) -> dict[str, str]:
    """Metadata values the question names that only some documents have ("Q3", a company's name; not a plain
    lower-case word, which a question uses as a word): the filters that pick those documents. A period is matched as written and in its short form ("the third
    quarter of 2024" names "Q3" and "2024"); the year of a calendar date ("June 11, 2024") is not a period."""
    ix = step.ctx.index()
    period = find_period(question)
    if period is not None and not _in_date(question, period.start):  # "the third quarter of 2024": "Q3", "2024"
        question = f"{question} ({period.text})"
    values: dict[tuple[str, str], int] = {}
    for meta in ix.doc_metadata:
        for key, value in meta.items():
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                values[(key, str(value))] = values.get((key, str(value)), 0) + 1
    out: dict[str, str] = {}
    for (key, value), count in sorted(values.items()):
        if count >= len(ix.documents) or len(value) < 2 or value.replace(" ", "").islower():
            continue  # a value held by every document, or a plain word ("budget" in "adopted the budget")
        if key not in out and any(not _in_date(question, m.start()) for m in
                                  re.finditer(rf"(?<![\w]){re.escape(value)}(?![\w])", question, re.IGNORECASE)):
            out[key] = value
    return out


_DATE_BEFORE = re.compile(
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+$", re.IGNORECASE
)


def _in_date(text: str, at: int) -> bool:
    """Whether the year at ``at`` is the year of a calendar date ("June 11, 2024"): a date names a day, not
    the period a document covers."""
    return bool(_DATE_BEFORE.search(text[max(0, at - 20) : at]))


def route_by_rules(step: Step, question: str, layers: Layers, why: bool = False) -> tuple[str, str, dict[str, str]]:
    """``(workflow, reason, filters)`` by the rules of the module docstring."""
    if why:
        return "hybrid", "a why about the last answer: its evidence", {}
    candidates: list[tuple[str, str]] = []
    if _NUMERIC.search(question):
        candidates += [("kag", "numbers to combine"), ("bag", "numbers to combine over the section tree")]
    if _HIERARCHY.search(question):
        candidates.append(("bag", "the document's hierarchy"))
    if _CITATION.search(question):
        candidates.append(("lesegr", "citations between documents"))
    filters = metadata_filters(step, question)
    for workflow, reason in candidates:
        if allowed(workflow, layers):
            return workflow, reason, filters
    if filters:
        return "hybrid", "metadata the question names", filters
    from stratagraph.retrieval.classify import Complexity, classify

    cls = classify(step.ctx, question)
    if cls.label != Complexity.SIMPLE and allowed("tqr", layers):
        return "tqr", f"multi-hop ({cls.label.value}, BiG-RAG Alg. 3)", {}
    return "hybrid", "a direct question", {}


@agent_node("route")
def route(state: dict, step: Step) -> dict[str, Any]:
    """Choose the answering workflow: the chat model's structured decision when configured (checked against
    the store's layers), else the rules."""
    question = str(state.get("question") or "")
    layers = layers_of(step)
    why = bool(state.get("evidence_from"))
    workflow, reason, filters = route_by_rules(step, question, layers, why)
    if step.llm is not None and not why:
        reply = step.ask(
            Route,
            [SystemMessage(content=load_prompt("route.system")),
             HumanMessage(content=load_prompt("route.user").format(question=question, layers=layers.model_dump_json()))],  # fmt: skip
            "route",
        )
        if reply is not None and allowed(reply.workflow, layers):
            workflow, reason = reply.workflow, f"model: {reply.why or reply.workflow}"
            filters = metadata_filters(step, question)
        elif reply is not None:
            step.fallbacks.append(f"route: the model chose {reply.workflow}, whose layer the store lacks")
    step.decide(f"{workflow} ({reason})")
    return {"route": workflow, "filters": filters}

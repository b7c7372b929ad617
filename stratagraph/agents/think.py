"""The turn policy of ``think_query_retrieve`` (BiG-RAG §4.3-4.4): after each retrieval, think, then decide
whether to query again or to answer.

**With a chat model**: the §4.4.2 multi-turn interaction protocol over plain chat (no tool calling, so any
chat model serves): the system prompt ``think.system`` (Appendix D.4's interaction prompt) asks for
``<think>...</think>`` then either ``<query>...</query>`` or ``<answer>...</answer>``; each query is run by
the ``retrieve`` node (:mod:`stratagraph.agents.traverse`) and its facts and passages come back as the next
user message, ``<knowledge>...</knowledge>`` (``think.knowledge``); the conversation is replayed each turn.
:func:`parse_turn` reads a small model's reply robustly: closing tags may be missing (a tag's text then runs
to the next tag, or to the end of the line for a query), ``<search>`` counts as ``<query>``, several queries
in one reply are all run (at most :data:`MAX_QUERIES`), an answer may come without a think, whatever the
model writes from a ``<knowledge>`` tag of its own on (or a new "Turn n:" / "Question:" after its action) is
cut off as invented, and a reply with no tag at all is read from "Query:" / "Answer:" lines. The first
action in the reply decides (a query before an answer means "look it up first"; an answer first ends the
loop, §4.4.2 "no further <query> allowed"). A reply with neither is asked again once with
``think.correction``; a second unusable reply (or a reply cut off) falls back to the algorithmic policy,
for that turn and the rest of the run (a model that could not follow the protocol is not asked again; the
answer step still asks it, a separate task); a conversation grown past the model's context ends the turns
(the answer step reads what was retrieved). The trace says which. A model that answers
before anything was retrieved gets the question itself retrieved first: an answer is never uncited. A
model that only repeats queries already run is taken to be done.

**Without one** (the algorithmic mode of §4.3, and the fallback of an unusable reply): the sub-questions of
Algorithm 5 (:mod:`stratagraph.agents.decompose`) are asked in order, one per turn, each with the variables
it depends on bound (ReplaceVariables, §4.3.3 "Sequential Execution"). After a sub-question's retrieval the
next think extracts its answer (ExtractAnswer, "simple heuristic" option: the reader, :func:`stratagraph.reading.read`, with the bound
sub-question as the question read, so the answer is a verbatim span of a retrieved passage, cited with its
sentence) and binds it to the sub-question's variable, when a later sub-question uses it. A binding is typed:
only a span of an entity (a person, a place, an organisation, a thing) is bound; a sub-question without one
binds its reference phrase instead (:func:`stratagraph.agents.decompose.bind`). When the sub-questions are done, the
decision is to answer. The last turn the limit allows (``settings.tqr_max_turns``, default 4) always asks the
final sub-question, so a long chain still ends on the question asked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.decompose import ENTITY_TYPES, bind, is_question, needed_later, reference_phrase
from stratagraph.answers import Citation
from stratagraph.llm import InputTooLong
from stratagraph.prompts import load_prompt
from stratagraph.retrieval.base import Evidence
from stratagraph.retrieval.decompose import FINAL, SubQuery

__all__ = ["MAX_QUERIES", "Binding", "ParsedTurn", "Turn", "parse_turn", "think", "transcript"]

#: queries of one reply that are run (a small model sometimes lists many)
MAX_QUERIES = 3
#: the longest query kept (characters); a longer one is cut at a word boundary
MAX_QUERY_CHARS = 300


# ------------------------------------------------------------------------------------------ what a turn is
class Binding(BaseModel):
    """A sub-question's answer bound to its variable (algorithmic mode)."""

    var: str
    question: str  # the sub-question as asked (its own variables bound)
    answer: str  # the extracted span, or "" when none was found
    found: bool
    citation: Citation | None = None
    reason: str = ""


class Turn(BaseModel):
    """One think-query-retrieve turn: who chose the queries, what was retrieved, what it bound."""

    n: int
    by: Literal["model", "sub-question"]
    thought: str = ""
    queries: list[str] = Field(default_factory=list)
    said: str = ""  # the model's turn as replayed in the conversation (tags normalised)
    sub_query: int | None = None  # the sub-question's index, when the algorithmic policy asked it
    evidence: list[Evidence] = Field(default_factory=list)  # this turn's passages, best first
    facts: list[str] = Field(default_factory=list)
    candidates: list[str] = Field(default_factory=list)  # the walk's answer entities (§4.3.3 ExtractAnswer)
    knowledge: str = ""  # the <knowledge> message fed back to the model
    shown: list[str] = Field(default_factory=list)  # the chunks its knowledge showed the model
    binding: Binding | None = None


# ------------------------------------------------------------------------------------------ parsing
_TAG = re.compile(r"<\s*(/?)\s*(think|query|search|answer)\s*>", re.IGNORECASE)
_INVENTED = re.compile(r"<\s*/?\s*(?:knowledge|information|documents?|results?)\s*>", re.IGNORECASE)
_NEXT_ROUND = re.compile(r"\n\s*(?:\**\s*turn\s+\d+\s*\**\s*:|question\s*:)", re.IGNORECASE)
_LINE_ANSWER = re.compile(r"^\s*(?:\**\s*)?(?:final\s+answer|answer)\s*\**\s*[:：]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_LINE_QUERY = re.compile(r"^\s*(?:\**\s*)?(?:query|search)\s*\**\s*[:：]\s*(.+)$", re.IGNORECASE | re.MULTILINE)


@dataclass
class ParsedTurn:
    """What a reply says: its reasoning, its queries or its answer, and what had to be repaired."""

    thought: str = ""
    queries: list[str] = field(default_factory=list)
    answer: str | None = None
    action: Literal["query", "answer"] | None = None
    repairs: list[str] = field(default_factory=list)

    def said(self) -> str:
        """The turn as the conversation replays it: well-formed tags."""
        parts = [f"<think>{self.thought}</think>"] if self.thought else []
        if self.action == "answer" and self.answer is not None:
            parts.append(f"<answer>{self.answer}</answer>")
        else:
            parts.extend(f"<query>{q}</query>" for q in self.queries)
        return "\n".join(parts)


def _clean(text: str) -> str:
    text = " ".join(text.replace("**", "").split())
    return text.strip().strip("`\"'“”‘’").strip()


def _clean_query(text: str) -> str:
    text = _clean(text)
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]
    return text


def parse_turn(text: str | None) -> ParsedTurn:
    """Read one reply of the interaction protocol (module docstring); ``action`` is None when the reply
    holds neither a query nor an answer."""
    out = ParsedTurn()
    body = text or ""
    invented = _INVENTED.search(body)
    if invented is not None:
        body = body[: invented.start()]
        out.repairs.append("cut at an invented <knowledge>")
    tags = list(_TAG.finditer(body))
    first_action = next((t for t in tags if not t.group(1) and t.group(2).lower() != "think"), None)
    if first_action is not None:
        more = _NEXT_ROUND.search(body, first_action.end())
        if more is not None:
            body = body[: more.start()]
            tags = [t for t in tags if t.end() <= more.start()]
            out.repairs.append("cut at a new round the model wrote itself")
    thoughts: list[str] = []
    actions: list[tuple[str, str]] = []
    for i, tag in enumerate(tags):
        if tag.group(1):
            continue
        kind = tag.group(2).lower()
        kind = "query" if kind == "search" else kind
        nxt = tags[i + 1] if i + 1 < len(tags) else None
        end = nxt.start() if nxt is not None else len(body)
        content = body[tag.end() : end]
        closed = nxt is not None and bool(nxt.group(1)) and nxt.group(2).lower() in (tag.group(2).lower(), kind)
        if not closed:
            out.repairs.append(f"unclosed <{kind}>")
            if kind == "query":
                content = content.strip().split("\n", 1)[0]
            elif kind == "answer":
                content = re.split(r"\n\s*\n", content.strip(), maxsplit=1)[0]
        if kind == "think":
            thoughts.append(content.strip())
        else:
            actions.append((kind, content))
    if not tags:
        for m in sorted([*_LINE_ANSWER.finditer(body), *_LINE_QUERY.finditer(body)], key=lambda m: m.start()):
            kind = "answer" if m.re is _LINE_ANSWER else "query"
            actions.append((kind, m.group(1)))
        if actions:
            out.repairs.append("no tags: read Query:/Answer: lines")
        first = min((m.start() for m in [*_LINE_ANSWER.finditer(body), *_LINE_QUERY.finditer(body)]), default=len(body))
        if body[:first].strip():
            thoughts.append(body[:first].strip())
    elif not thoughts:
        lead = body[: tags[0].start()].strip()
        if lead:
            thoughts.append(lead)
        else:
            out.repairs.append("no <think>")
    out.thought = " ".join(" ".join(thoughts).split())
    queries: list[str] = []
    for kind, content in actions:
        if kind == "answer":
            answer = _clean(content)
            if answer and out.answer is None:
                out.answer = answer
                if out.action is None:
                    out.action = "answer"
        else:
            q = _clean_query(content)
            if q and q.casefold() not in {x.casefold() for x in queries}:
                queries.append(q)
                if out.action is None:
                    out.action = "query"
    if len(queries) > MAX_QUERIES:
        out.repairs.append(f"{len(queries)} queries: the first {MAX_QUERIES} run")
    out.queries = queries[:MAX_QUERIES]
    if out.action == "answer" and out.queries:
        out.repairs.append("an answer before its queries: the queries are dropped")
        out.queries = []
    if out.action == "query" and out.answer is not None:
        out.repairs.append("an answer after a query, before its knowledge: dropped")
        out.answer = None
    return out


# ------------------------------------------------------------------------------------------ the conversation
def transcript(question: str, turns: Sequence[Turn], max_turns: int) -> list[BaseMessage]:
    """The §4.4.2 conversation so far: the protocol, the question, then each turn and its knowledge."""
    messages: list[BaseMessage] = [
        SystemMessage(content=load_prompt("think.system")),
        HumanMessage(content=load_prompt("think.user").format(question=question, max_queries=max_turns)),
    ]
    for turn in turns:
        messages.append(AIMessage(content=turn.said or "\n".join(f"<query>{q}</query>" for q in turn.queries)))
        left = max_turns - turn.n
        note = (
            f"You may make {left} more {'query' if left == 1 else 'queries'}."
            if left > 0
            else "You may make no more queries: answer now."
        )
        messages.append(HumanMessage(content=load_prompt("think.knowledge").format(knowledge=turn.knowledge, note=note)))
    return messages


def _ask_model(step: Step, question: str, turns: Sequence[Turn], max_turns: int) -> ParsedTurn | str:
    """One protocol turn from the chat model, asked again once when the reply is unusable; else why there
    is no usable reply: ``"unusable"`` (twice no query and no answer, or a reply cut off) or ``"too long"``
    (the conversation no longer fits the model's context). The trace says which."""
    messages = transcript(question, turns, max_turns)
    try:
        reply = step.ask_text(messages, "think")
        parsed = parse_turn(reply)
        if reply is not None and parsed.action is None:
            step.decide("the reply has no <query> or <answer>: asked again")
            retry = [*messages, AIMessage(content=reply), HumanMessage(content=load_prompt("think.correction"))]
            reply = step.ask_text(retry, "think (again)")
            parsed = parse_turn(reply)
            if reply is not None and parsed.action is None:
                step.fallbacks.append("think: no <query> or <answer> in the model's reply, twice")
                return "unusable"
    except InputTooLong as exc:
        step.fallbacks.append(f"think: the conversation no longer fits the model's context ({exc})")
        return "too long"
    if reply is None:
        return "unusable"  # cut off at the token limit: step.ask_text recorded it
    if parsed.repairs:
        step.decide("read the reply with repairs: " + "; ".join(parsed.repairs))
    return parsed


# ------------------------------------------------------------------------------------------ algorithmic turns
def _bind_last(step: Step, subs: Sequence[SubQuery], turns: list[Turn], bound: dict[str, str]) -> None:
    """ExtractAnswer for the last turn's sub-question, when a later sub-question uses its variable."""
    if not turns:
        return
    last = turns[-1]
    i = last.sub_query
    if i is None or last.binding is not None or not needed_later(subs, i):
        return
    asked = last.queries[0] if last.queries else bind(subs[i], bound, subs)
    reading = step.read(last.evidence, asked, hop=True)
    var = subs[i].target
    if reading.kind == "span" and reading.type in {t.value for t in ENTITY_TYPES}:  # a typed binding: an entity
        bound[var] = reading.answer
        cite = reading.citations[0] if reading.citations else None
        binding = Binding(var=var, question=asked, answer=reading.answer, found=True, citation=cite, reason=reading.reason)
        where = f" ({cite.chunk_id}: {cite.quote[:120]!r})" if cite else ""
        step.decide(f"turn {last.n}: {var} = {reading.answer!r}, a {reading.type}{where}")
    else:
        why = reading.reason if not reading.found else f"a {reading.kind} {reading.answer[:60]!r} is no entity to bind"
        binding = Binding(var=var, question=asked, answer="", found=False, reason=why)
        step.decide(f"turn {last.n}: no entity answers {asked!r} ({why}); {var} keeps the words "
                    f"{bind(SubQuery(text=reference_phrase(subs[i])), bound, subs)!r}")  # fmt: skip
    turns[-1] = last.model_copy(update={"binding": binding})


def _next_sub_query(state: Mapping[str, Any], turns: Sequence[Turn], max_turns: int) -> int | None:
    """The next sub-question to ask (the final one on the last turn the limit allows), or None when done."""
    subs: list[SubQuery] = state.get("sub_queries") or []
    asked = [t.sub_query for t in turns if t.sub_query is not None]
    cursor = (max(asked) + 1) if asked else 0
    if cursor >= len(subs):
        return None
    if len(turns) + 1 >= max_turns:
        return len(subs) - 1
    return cursor


def _algorithmic(state: Mapping[str, Any], step: Step, turns: list[Turn], bound: dict[str, str]) -> dict[str, Any]:
    question = step.question
    subs: list[SubQuery] = state.get("sub_queries") or [SubQuery(text=question)]
    max_turns = int(state.get("max_turns") or 4)
    i = _next_sub_query(state, turns, max_turns)
    if i is None:
        step.decide("every sub-question asked: answer")
        return {"turns": turns, "bound": bound, "pending": [], "done": True}
    text = bind(subs[i], bound, subs) or question
    n = len(turns) + 1
    what = "the question" if len(subs) == 1 else f"sub-question {i + 1} of {len(subs)}"
    step.decide(f"turn {n}: query {what}: {text!r}")
    turn = Turn(n=n, by="sub-question", queries=[text], said=f"<query>{text}</query>", sub_query=i)
    update: dict[str, Any] = {"turns": [*turns, turn], "bound": bound, "pending": [text], "done": False}
    if subs[i].target == FINAL:
        update["focus"] = text if is_question(text) and text != question else None
    return update


# ------------------------------------------------------------------------------------------ the node
@agent_node("think")
def think(state: Mapping[str, Any], step: Step) -> dict[str, Any]:
    """BiG-RAG §4.4.2 with a chat model (think, then query or answer), else §4.3's sequential sub-questions;
    binds the last sub-question's answer first (algorithmic turns)."""
    question = step.question
    subs: list[SubQuery] = state.get("sub_queries") or [SubQuery(text=question)]
    turns: list[Turn] = list(state.get("turns") or [])
    bound: dict[str, str] = dict(state.get("bound") or {})
    max_turns = int(state.get("max_turns") or 4)
    _bind_last(step, subs, turns, bound)
    if step.llm is None:
        return _algorithmic(state, step, turns, bound)
    if state.get("model_failed"):
        step.decide("the model gave no usable turn before: algorithmic mode")
        return _algorithmic(state, step, turns, bound)
    parsed = _ask_model(step, question, turns, max_turns)
    if parsed == "too long":
        step.decide("answer with what was retrieved")
        return {"turns": turns, "bound": bound, "pending": [], "done": True}
    if isinstance(parsed, str):
        step.decide("no usable reply: the next sub-question instead, and algorithmic mode from now on")
        return {**_algorithmic(state, step, turns, bound), "model_failed": True}
    n = len(turns) + 1
    if parsed.action == "answer":
        if not turns:
            step.decide(f"turn {n}: the model answers {parsed.answer!r} before any knowledge: retrieve the question first")
            turn = Turn(n=n, by="model", thought=parsed.thought, queries=[question], said=parsed.said())
            return {"turns": [*turns, turn], "bound": bound, "pending": [question], "draft": parsed.answer,
                    "done": True}  # fmt: skip
        step.decide(f"turn {n}: the model answers {parsed.answer!r}" + (f" ({parsed.thought})" if parsed.thought else ""))
        return {"turns": turns, "bound": bound, "pending": [], "draft": parsed.answer, "done": True}
    asked_before = {q.casefold() for t in turns for q in t.queries}
    fresh = [q for q in parsed.queries if q.casefold() not in asked_before]
    if not fresh:
        step.decide(f"turn {n}: the model repeats {parsed.queries!r}, already run: answer")
        return {"turns": turns, "bound": bound, "pending": [], "done": True}
    step.decide(f"turn {n}: query {fresh!r}" + (f" ({parsed.thought})" if parsed.thought else ""))
    parsed.queries = fresh
    turn = Turn(n=n, by="model", thought=parsed.thought, queries=fresh, said=parsed.said())
    return {"turns": [*turns, turn], "bound": bound, "pending": fresh, "done": False}

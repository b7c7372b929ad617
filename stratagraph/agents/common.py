"""What every agent node shares: the state keys all answering workflows have, the wrapper that turns a node's
work into a state update with its trace entry, and :class:`Step`, a node's handle on the run (services,
tools, the chat model).

A node is written as ``fn(state, step) -> update`` and wrapped with :func:`agent_node`; LangGraph sees a
function of ``(state, runtime)``. The wrapper times the node, gathers what it decided, the tools it called
and the chat model's usage into one :class:`~stratagraph.answers.TraceEntry` appended to ``trace``, and adds
the usage to ``usage``. When the update carries the final ``answer``, the wrapper gives the answer the whole
trace and usage of the run, its own entry included.

Nodes reach the stores only through the tools (``step.tool``) or the retrieval functions the tools wrap
(``step.call``), never through ``graph_store/``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict, TypeVar

from pydantic import BaseModel

from stratagraph.answers import Answer, ToolCall, TraceEntry
from stratagraph.llm import (
    InputTooLong,
    LLMUnavailable,
    LLMUsage,
    MalformedReply,
    StructuredReply,
    ask_structured,
    ask_text,
)
from stratagraph.retrieval.base import Evidence
from stratagraph.services import Services, default_services

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langgraph.runtime import Runtime

    from stratagraph.reading.result import Reading
    from stratagraph.retrieval.base import RetrievalContext

__all__ = [
    "AnswerOutput",
    "NewTurn",
    "NewTurnUsage",
    "add_trace",
    "BaseState",
    "QuestionInput",
    "Step",
    "add_usage",
    "agent_node",
    "merge_evidence",
    "services_of",
]

T = TypeVar("T", bound=BaseModel)


# ------------------------------------------------------------------------------------------ state
class NewTurn(list):  # noqa: FURB189 - a list that says "start over"
    """Trace entries that start a new turn of a conversation: the ``trace`` reducer replaces, not appends."""


class NewTurnUsage(LLMUsage):
    """Usage that starts a new turn of a conversation: the ``usage`` reducer replaces, not adds."""


def add_usage(old: LLMUsage | None, new: LLMUsage | None) -> LLMUsage:
    """Reducer: requests and tokens add up over the run (a new conversation turn starts from zero)."""
    if isinstance(new, NewTurnUsage):
        return LLMUsage(**new.model_dump())
    return (old or LLMUsage()).add(new or LLMUsage())


def add_trace(old: list[TraceEntry] | None, new: list[TraceEntry] | None) -> list[TraceEntry]:
    """Reducer: trace entries in the order the nodes ran (a new conversation turn starts afresh)."""
    if isinstance(new, NewTurn):
        return list(new)
    return [*(old or []), *(new or [])]


def merge_evidence(old: list[Evidence] | None, new: list[Evidence] | None) -> list[Evidence]:
    """Reducer: evidence gathered by several nodes, each chunk once (where it first came), in order."""
    out = list(old or [])
    seen = {e.chunk_id for e in out}
    for e in new or []:
        if e.chunk_id not in seen:
            seen.add(e.chunk_id)
            out.append(e)
    return out


class QuestionInput(TypedDict):
    """What a workflow is asked: the question, optional metadata filters and evidence depth."""

    question: str
    filters: NotRequired[dict[str, Any]]
    k: NotRequired[int]


class AnswerOutput(TypedDict):
    """What a workflow returns."""

    answer: Answer


class BaseState(TypedDict, total=False):
    """The keys every answering workflow's state has (each workflow adds its own)."""

    question: str
    filters: dict[str, Any]
    k: int
    evidence: Annotated[list[Evidence], merge_evidence]
    trace: Annotated[list[TraceEntry], add_trace]
    usage: Annotated[LLMUsage, add_usage]
    answer: Answer


DEFAULT_K = 8  # evidence chunks a workflow gathers per retrieval step unless the input says otherwise


# ------------------------------------------------------------------------------------------ the step
def services_of(runtime: Any) -> Services:
    """The run's services (LangGraph's ``runtime.context``), else the environment's (``langgraph dev``)."""
    context = getattr(runtime, "context", None)
    return context if isinstance(context, Services) else default_services()


def _one_line(value: Any, limit: int = 200) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Step:
    """A node's handle on the run: the services, tools and chat model, and what goes into its trace entry."""

    def __init__(self, name: str, svc: Services, state: Mapping[str, Any]) -> None:
        self.name = name
        self.svc = svc
        self.state = state
        self.calls: list[ToolCall] = []
        self.decisions: list[str] = []
        self.usage = LLMUsage()
        self.used_llm = False
        self.fallbacks: list[str] = []
        self.flags: list[str] = []  # passages that address the model (stratagraph/tools/flags.py)

    # ---------------------------------------------------------------- the run
    @property
    def ctx(self) -> RetrievalContext:
        return self.svc.retrieval

    @property
    def llm(self) -> Any:
        """The chat model, or None (then every node uses its no-LLM policy)."""
        return self.svc.llm

    @property
    def question(self) -> str:
        return str(self.state.get("question") or "").strip()

    @property
    def filters(self) -> dict[str, Any] | None:
        return dict(self.state.get("filters") or {}) or None

    @property
    def k(self) -> int:
        return int(self.state.get("k") or DEFAULT_K)

    def decide(self, text: str) -> None:
        """Say what the node decided (one line in its trace entry)."""
        self.decisions.append(_one_line(text, 400))

    # ---------------------------------------------------------------- tools
    def call(self, name: str, fn: Callable[..., Any], summary: Callable[[Any], str] | None = None, **args: Any) -> Any:
        """Run a retrieval function or tool implementation and record it as a tool call."""
        result = fn(**args)
        self.flag(result)
        shown = {k: v for k, v in args.items() if k not in ("ctx",)}
        self.calls.append(ToolCall(name=name, args=_jsonable(shown), result=_one_line(summary(result) if summary else result)))
        return result

    def tool(self, name: str, **args: Any) -> tuple[str, Any]:
        """Invoke one of :func:`stratagraph.tools.make_tools`' tools (bound to this run's stores) the way an
        agent would, and record it; returns ``(content, artifact)``."""
        from stratagraph.tools import get_tool

        tool = get_tool(self.ctx, name)
        message = tool.invoke({"name": name, "args": args, "id": f"{self.name}-{len(self.calls)}", "type": "tool_call"})
        content, artifact = str(message.content), getattr(message, "artifact", None)
        self.flag(artifact)
        self.calls.append(ToolCall(name=name, args=_jsonable(args), result=_one_line(content)))
        return content, artifact

    def flag(self, found: Any) -> None:
        """Flag the passages in what a tool returned that address the model (the trace entry's ``flags``)."""
        from stratagraph.tools.flags import passage_flags

        self.flags.extend(f for f in passage_flags(found) if f not in self.flags)

    def retrieve(self, strategy: str, query: str, k: int | None = None) -> list[Evidence]:
        """Ranked evidence by a named retrieval strategy (the ``search_chunks`` tool's function)."""
        from stratagraph.retrieval import retrieve

        result = self.call(
            f"retrieve:{strategy}",
            lambda **a: retrieve(self.ctx, strategy, a["query"], k=a["k"], filters=self.filters),
            summary=lambda r: f"{len(r.evidence)} chunks: " + ", ".join(e.chunk_id for e in r.evidence[:5]),
            query=query,
            k=k or self.k,
        )
        return result.evidence

    # ---------------------------------------------------------------- the chat model
    def ask(self, schema: type[T], messages: Sequence[BaseMessage], what: str, *, too_long: str = "fallback") -> T | None:
        """The chat model's structured reply (output format negotiated per endpoint, one correction round),
        or None: no chat model, or no usable reply (then the trace says the node fell back, and why). A prompt
        longer than the model's context is a fallback too, or raises :class:`~stratagraph.llm.InputTooLong`
        with ``too_long="raise"`` (for a caller that can show less). Endpoint failures raise
        :class:`~stratagraph.llm.LLMUnavailable`."""
        if self.llm is None:
            return None
        self.used_llm = True
        try:
            reply: StructuredReply[T] = ask_structured(
                self.llm, schema, messages, store=self.svc.llm_store, what=f"{self.name}: {what}", usage=self.usage
            )
        except InputTooLong as exc:
            if too_long == "raise":
                raise
            self.fallbacks.append(f"{what}: the prompt does not fit the model's context ({exc})")
            return None
        if reply.value is None:
            self.fallbacks.append(f"{what}: no usable reply ({'; then '.join(reply.problems)})")
        return reply.value

    def ask_prompt(self, name: str, schema: type[T], *, too_long: str = "fallback", **values: Any) -> T | None:
        """The chat model's reply to prompt ``name`` (``prompts/<name>.system.md`` sent as it is,
        ``<name>.user.md`` formatted with ``values``) as ``schema``, or None (no chat model, or no usable
        reply: the caller's one fallback is the reader). Everything else as :meth:`ask`."""
        from langchain_core.messages import HumanMessage, SystemMessage

        from stratagraph.prompts import load_prompt

        messages = [SystemMessage(content=load_prompt(f"{name}.system")),
                    HumanMessage(content=load_prompt(f"{name}.user").format(**values))]  # fmt: skip
        return self.ask(schema, messages, name, too_long=too_long)

    # ---------------------------------------------------------------- reading
    def facts(self, evidence: Sequence[Evidence]) -> dict[str, list[dict[str, Any]]]:
        """The stored facts of the evidence chunks, by chunk id (the mutual index, KAG §2.2: chunk -> the
        facts it supports), through the ``chunk_facts`` tool function."""
        from stratagraph.tools.knowledge import chunk_facts

        chunks = list(dict.fromkeys(e.chunk_id for e in evidence))
        return self.call("chunk_facts", lambda **a: chunk_facts(self.ctx, a["chunks"]),
                         summary=lambda r: f"{sum(len(v) for v in r.values())} facts of {len(r)} chunks", chunks=chunks)  # fmt: skip

    def read(self, evidence: Sequence[Evidence], question: Any = None, *, hop: bool = False) -> Reading:
        """The reader's answer to ``question`` (default the step's question; a string or a frame) from the
        evidence and its chunks' stored facts (:func:`stratagraph.reading.read`); ``hop``: a chain's hop."""
        from stratagraph.reading import read

        q = question if question is not None else self.question
        return read(self.kinds(q), evidence, self.facts(evidence) if evidence else {}, hop=hop)

    def kinds(self, question: Any) -> Any:
        """The question's frame with the names of the entities the concept layer types as its asked noun
        ("which composer": KAG §2.4, through ``retrieval.concepts.entities_of_kind``), or the question as it
        is when it asks for no kind of thing or the graph types nothing so."""
        from dataclasses import replace

        from stratagraph.reading.frame import Frame, frame_of
        from stratagraph.retrieval.concepts import entities_of_kind
        from stratagraph.text.lexicon import QUESTION_WORDS, SHAPE_NOUNS
        from stratagraph.text.question import AnswerType

        frame = question if isinstance(question, Frame) else frame_of(str(question))
        typed = (AnswerType.THING, AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG)
        noun = frame.focus
        if frame.type not in typed or not noun.isalpha() or noun in SHAPE_NOUNS or noun in QUESTION_WORDS or frame.kinds:
            return question
        found = self.call("entities_of_kind", lambda **a: entities_of_kind(self.ctx.graph, a["noun"], limit=200),
                          summary=lambda r: f"{len(r)} entities of the kind", noun=frame.focus)  # fmt: skip
        if not found:
            return question
        return replace(frame, kinds=frozenset(" ".join(m.name.split()).casefold() for m in found))

    def ask_text(self, messages: Sequence[BaseMessage], what: str) -> str | None:
        """The chat model's plain reply, or None without a chat model (or when the reply was cut off)."""
        if self.llm is None:
            return None
        self.used_llm = True
        try:
            return ask_text(self.llm, messages, self.usage)
        except (MalformedReply, InputTooLong) as exc:
            self.fallbacks.append(f"{what}: {exc}")
            return None

    def entry(self, ms: float) -> TraceEntry:
        return TraceEntry(
            node=self.name,
            decision="; ".join(self.decisions),
            tool_calls=self.calls,
            ms=round(ms, 1),
            llm=self.used_llm,
            fallback="; ".join(self.fallbacks) or None,
            flags=self.flags,
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return _one_line(value)


# ------------------------------------------------------------------------------------------ the wrapper
NodeFn = Callable[[Mapping[str, Any], Step], Mapping[str, Any] | None]


def agent_node(name: str, starts_turn: bool = False) -> Callable[[NodeFn], Callable[..., dict[str, Any]]]:
    """Wrap ``fn(state, step) -> update`` as a LangGraph node ``(state, runtime) -> update`` that appends the
    node's trace entry and usage (and completes a final ``answer`` with the run's trace and usage). A node that
    ``starts_turn`` (a conversation's first node) starts the trace and the usage afresh."""

    def wrap(fn: NodeFn) -> Callable[..., dict[str, Any]]:
        def node(state: dict[str, Any], runtime: Runtime[Services]) -> dict[str, Any]:
            step = Step(name, services_of(runtime), state)
            started = time.perf_counter()
            update = dict(fn(state, step) or {})
            entry = step.entry((time.perf_counter() - started) * 1000)
            if starts_turn:
                update["trace"] = NewTurn([entry])
                update["usage"] = NewTurnUsage(**step.usage.model_dump())
                state = {**state, "trace": [], "usage": LLMUsage()}
            else:
                update["trace"] = [*update.get("trace", []), entry]
                if step.usage.llm_calls or "usage" in update:
                    update["usage"] = add_usage(update.get("usage"), step.usage)
            answer = update.get("answer")
            if isinstance(answer, Answer):
                update["answer"] = answer.model_copy(
                    update={
                        "question": answer.question or str(state.get("question") or ""),
                        "trace": [*state.get("trace", []), *update["trace"]],
                        "usage": add_usage(state.get("usage"), update.get("usage")),
                    }
                )
            return update

        node.__name__ = name
        node.__qualname__ = name
        node.__doc__ = fn.__doc__
        node.__module__ = fn.__module__
        return node

    return wrap


__all__ += ["DEFAULT_K", "LLMUnavailable"]

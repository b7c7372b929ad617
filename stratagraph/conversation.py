"""A conversation with the ``chat`` workflow, remembered in the store: what ``StrataGraph.chat`` returns and
what ``stratagraph chat`` / ``ask --thread`` drive.

Each :class:`Conversation` is one thread of the store's checkpointer (``<home>/checkpoints.sqlite``, or
PostgreSQL with ``STRATAGRAPH_CHECKPOINTER``): resuming a thread id in another process (or after a restart) continues with its history, and many threads
can run at once on one store.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage

from stratagraph.answers import Answer, TraceEntry

if TYPE_CHECKING:
    from stratagraph.services import Services

__all__ = ["Conversation", "Event"]


@dataclass
class Event:
    """What a streamed turn yields: a token of the reply, a node's trace entry, or the final answer."""

    kind: Literal["token", "node", "answer"]
    token: str = ""
    node: TraceEntry | None = None
    answer: Answer | None = None
    reply: str = ""  # with the answer: the reply message's text


class Conversation:
    """One thread of the chat workflow, compiled with the store's checkpointer."""

    def __init__(self, services: Services, thread_id: str | None = None, *, remember: bool = True) -> None:
        from stratagraph.workflows.chat import compile_graph

        self.services = services
        self.thread_id = thread_id or uuid.uuid4().hex[:12]
        self.graph = compile_graph(services.checkpoints.saver if remember else None)

    @classmethod
    def ephemeral(cls, services: Services) -> Conversation:
        """A one-turn conversation that is not remembered (``ask`` without ``--thread``)."""
        return cls(services, remember=False)

    def _within_limits(self, message: str) -> None:
        """Refuse a message over the question limit before the turn starts (nothing is checkpointed)."""
        from stratagraph.limits import check_request

        check_request(self.services.settings, message)

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread_id}}

    def ask(self, message: str) -> Answer:
        """One turn: the message in, the cited answer out (the reply is in :meth:`history`)."""
        self._within_limits(message)
        out = self.graph.invoke({"messages": [HumanMessage(content=message)]}, config=self._resume(), context=self.services)
        return out["answer"]

    def stream(self, message: str) -> Iterator[Event]:
        """One turn, streamed: the reply's tokens as the chat model writes them (with a chat model), every
        node's trace entry as it finishes (the routed workflow's nodes too), then the answer. Without a chat
        model the reply arrives whole."""
        self._within_limits(message)
        answer: Answer | None = None
        reply = ""
        seen: set[tuple[str, str, float]] = set()
        for _namespace, mode, chunk in self.graph.stream(
            {"messages": [HumanMessage(content=message)]},
            config=self._resume(),
            context=self.services,
            stream_mode=["messages", "updates"],
            subgraphs=True,
        ):
            if mode == "messages":
                msg, meta = chunk
                if isinstance(msg, AIMessageChunk) and meta.get("langgraph_node") == "respond" and msg.content:
                    yield Event(kind="token", token=str(msg.content))
                continue
            for node, value in chunk.items():
                if not isinstance(value, dict):
                    continue
                for entry in value.get("trace", []):
                    key = (entry.node, entry.decision, entry.ms)
                    if key not in seen:
                        seen.add(key)
                        yield Event(kind="node", node=entry)
                if node == "respond" and isinstance(value.get("answer"), Answer):
                    answer = value["answer"]
                if node == "attach":
                    reply = str(value["messages"][-1].content)
        if answer is not None:
            yield Event(kind="answer", answer=answer, reply=reply)

    def history(self) -> list[BaseMessage]:
        """The thread's messages so far."""
        if self.graph.checkpointer is None:
            return []
        complete = self._last_complete()
        if complete == {}:  # the thread's only turn was killed mid-write: nothing was said
            return []
        state = self.graph.get_state(complete or self.config)
        return list(state.values.get("messages", [])) if state and state.values else []

    def _last_complete(self) -> dict[str, Any] | None:
        """The config of the thread's last complete turn when its latest checkpoint is a turn that never
        finished (the process was killed mid-turn: the checkpoint still has nodes to run); None when the
        latest turn is complete (or there is no checkpointer). ``{}`` when no turn ever completed."""
        if self.graph.checkpointer is None:
            return None
        latest = self.graph.get_state(self.config)
        if not latest or not latest.next:
            return None
        for snap in self.graph.get_state_history(self.config):
            if not snap.next and snap.values.get("messages"):
                return snap.config
        return {}

    def _resume(self) -> dict[str, Any]:
        """Where the next turn starts: the thread's latest checkpoint, or, after a turn killed mid-write, its last
        complete turn (the new turn forks from there, so the half-written turn is left out of the thread); a
        thread whose only turn was killed starts afresh."""
        complete = self._last_complete()
        if complete is None:
            return self.config
        if not complete:
            self.services.checkpoints.delete(self.thread_id)
            return self.config
        return complete

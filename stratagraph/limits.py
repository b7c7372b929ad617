"""Limits that protect a shared server from one request: the question's length, ``k``, the filter's size, and
the tool calls one agent turn may make. Each is a setting (:class:`~stratagraph.config.Settings`,
``STRATAGRAPH_MAX_*``); a request over one is refused with :class:`LimitExceeded`, whose message names the
limit, the value it got and the setting that raises it.

Checked where those inputs arrive: :class:`~stratagraph.api.StrataGraph` (``ask``, ``retrieve``,
``retriever``), :func:`stratagraph.workflows.ask`, a conversation's turn, every store tool (so the MCP
server's tools too) and the CLI's ``ask``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stratagraph.config import Settings

__all__ = ["LimitExceeded", "check_request", "tool_call_limit"]


class LimitExceeded(ValueError):
    """A request over one of the server's limits (a ``ValueError``: the caller's input is at fault)."""

    def __init__(self, limit: str, got: object, allowed: object, what: str) -> None:
        self.limit, self.got, self.allowed = limit, got, allowed
        super().__init__(f"{what} is over the limit {limit} = {allowed} (got {got}; setting STRATAGRAPH_{limit.upper()})")


def check_question(settings: Settings, question: str) -> None:
    if len(question) > settings.max_question_chars:
        raise LimitExceeded("max_question_chars", f"{len(question)} characters", settings.max_question_chars, "the question")


def check_k(settings: Settings, k: int | None) -> None:
    if k is not None and k > settings.max_k:
        raise LimitExceeded("max_k", k, settings.max_k, "k")


def check_filters(settings: Settings, filters: Mapping[str, Any] | None) -> None:
    if not filters:
        return
    if len(filters) > settings.max_filters:
        raise LimitExceeded("max_filters", f"{len(filters)} keys", settings.max_filters, "the filter")
    for key, value in filters.items():
        for part, what in ((key, "a filter key"), (value, "a filter value")):
            size = len(str(part))
            if size > settings.max_filter_chars:
                raise LimitExceeded("max_filter_chars", f"{size} characters", settings.max_filter_chars, what)


def check_request(
    settings: Settings, question: str | None = None, k: int | None = None, filters: Mapping[str, Any] | None = None
) -> None:
    """Raise :class:`LimitExceeded` when the question, ``k`` or the filters are over the settings' limits."""
    if question is not None:
        check_question(settings, question)
    check_k(settings, k)
    check_filters(settings, filters)


def tool_call_limit(settings: Settings) -> Any:
    """A LangChain agent middleware (``create_agent(..., middleware=[...])``) that refuses tool calls past
    ``settings.max_tool_calls`` in one run (one turn): the model gets an error message naming the limit for
    each refused call and answers with what it has."""
    from langchain.agents.middleware import ToolCallLimitMiddleware

    return ToolCallLimitMiddleware(run_limit=settings.max_tool_calls, exit_behavior="continue")

"""The optional chat model, and the one place every LLM caller (the extractor, every agent node) goes through.

* :func:`get_chat_model`: ``langchain_openai.ChatOpenAI`` for any OpenAI-compatible endpoint (OpenAI, vLLM,
  llama.cpp, Ollama, LM Studio), temperature 0, or None when no chat model is configured.
* **One retry layer**, the ``openai`` client's own (``max_retries=settings.request_retries``), with one rule
  changed: it retries connection errors, time-outs, 408/409/429 and 5xx, *except* a 5xx whose body is a
  request validation error (llama-cpp-python answers a ``response_format`` it does not know with HTTP 500 and
  a pydantic validation body): sending the same request again cannot help. Any other 4xx fails at once too.
* **Structured output negotiated per endpoint** (:func:`ask_structured`): the ladder
  ``json_schema`` (strict) -> ``json_object`` with the schema in the prompt -> plain text with the schema in
  the prompt and the JSON read out of the reply. A rejection whose body names ``response_format`` /
  ``json_schema`` / ``json_object``, whatever its status (400, 422, 500), steps down one rung; the rung an
  endpoint accepts is remembered per (base URL, model) for the life of the process and in the store's LLM
  database (:class:`~stratagraph.graph_store.llm_cache.LLMCache`), so the next run does not probe again.
  A chat model that is not OpenAI-compatible starts at the prompt rung.
* **Messy JSON** (:func:`read_json_object`): code fences, leading or trailing prose, ``<think>`` blocks,
  single quotes, trailing commas and comments (JSON5) are read; missing optional fields take their defaults
  and numbers written as strings are converted by the schema. What cannot be read without guessing (a reply
  cut off mid-object, the wrong shape) is a :class:`MalformedReply`, asked again once with a correction note;
  then the caller falls back and says so.
* :class:`LLMUnavailable`: endpoint failures (unreachable, timed out, rate-limited or failing after the
  client's retries, key refused, unknown model, a request the server rejects) as one line naming the
  endpoint and, for a time-out, the setting that raises it.
* :class:`LLMUsage`: requests and tokens, from the replies' usage metadata.

``langchain_openai`` and ``openai`` are imported only when used (``langchain_openai`` takes about a second).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from stratagraph.graph_store.llm_cache import LLMCache
from stratagraph.prompts import load_prompt

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from stratagraph.config import Settings

__all__ = [
    "InputTooLong",
    "LLMCache",
    "LLMUnavailable",
    "LLMUsage",
    "MalformedReply",
    "OutputMode",
    "StructuredReply",
    "ask_structured",
    "ask_text",
    "cache_key",
    "chat_endpoint",
    "endpoint_errors",
    "get_chat_model",
    "is_context_overflow",
    "is_request_validation_error",
    "model_name",
    "output_mode",
    "read_json_object",
    "strict_json_schema",
    "unavailable_error",
    "validate_reply",
]

logger = logging.getLogger(__name__)

_DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
T = TypeVar("T", bound=BaseModel)


class LLMUnavailable(RuntimeError):
    """The chat endpoint cannot be used: unreachable, timing out, refusing the key, not knowing the model,
    rejecting the request, or still failing (429/5xx) after the client's retries. The message is one line
    and names the endpoint."""


class InputTooLong(ValueError):
    """The prompt is longer than the model's context (a problem of one input, not of the endpoint)."""


class MalformedReply(ValueError):
    """A reply that is not one JSON object of the expected shape; ``reason`` says why, briefly."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------------------------- errors
_VALIDATION_BODY = re.compile(
    r"validation error|'loc':|\"loc\":|input should be|field required|extra inputs are not permitted|"
    r"invalid_request_error|unrecognized request argument|unsupported (?:value|parameter)|is not supported|"
    r"response_format|json_schema|json_object",
    re.IGNORECASE,
)
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object", re.IGNORECASE)


def is_request_validation_error(body: str) -> bool:
    """True when an error body says the *request* is invalid (a pydantic / FastAPI validation error, an
    OpenAI ``invalid_request_error``, an unsupported parameter): a deterministic failure, not worth a retry."""
    return bool(body) and _VALIDATION_BODY.search(body) is not None


def _response_text(response: Any) -> str:
    """The body of an ``httpx`` response, reading it when it is still unread (sync clients only)."""
    try:
        return str(response.text)
    except Exception:  # noqa: BLE001 - an unread async stream: its body cannot be had here
        try:
            response.read()
            return str(response.text)
        except Exception:  # noqa: BLE001
            return ""


def _deterministic(response: Any) -> bool:
    """A 5xx response whose body is a request validation error (the same request would fail the same way)."""
    return int(response.status_code) >= 500 and is_request_validation_error(_response_text(response))


_CLIENTS: dict[str, type] = {}
#: requests sent (each attempt of the client's retry loop) during the current :func:`_invoke`
_SENT: ContextVar[list[int] | None] = ContextVar("stratagraph_llm_requests", default=None)


def _count_request() -> None:
    box = _SENT.get()
    if box is not None:
        box[0] += 1


def _client_classes() -> tuple[type, type]:
    """``openai.OpenAI`` / ``AsyncOpenAI`` whose retry rule skips deterministic 5xx replies (built once)."""
    if not _CLIENTS:
        import openai

        class RetryPolicyOpenAI(openai.OpenAI):
            def _should_retry(self, response: Any) -> bool:
                return super()._should_retry(response) and not _deterministic(response)

            def _prepare_request(self, request: Any) -> None:
                super()._prepare_request(request)
                _count_request()

        class RetryPolicyAsyncOpenAI(openai.AsyncOpenAI):
            def _should_retry(self, response: Any) -> bool:
                return super()._should_retry(response) and not _deterministic(response)

            async def _prepare_request(self, request: Any) -> None:
                await super()._prepare_request(request)
                _count_request()

        _CLIENTS.update(sync=RetryPolicyOpenAI, async_=RetryPolicyAsyncOpenAI)
    return _CLIENTS["sync"], _CLIENTS["async_"]


# --------------------------------------------------------------------------------------------- model
def get_chat_model(settings: Settings) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for ``settings.llm_model`` at ``settings.openai_base_url``, or None.

    None when no model is named, or when neither a base URL nor an API key is set (there is nowhere to send
    requests). A local server needs no key: ``"not-needed"`` is sent then. Retries and time-out come from
    ``request_retries`` / ``request_timeout`` and are the client's only retry layer (with the rule for
    deterministic 5xx replies in the module docstring); temperature is 0.
    """
    if not settings.llm_model or not (settings.openai_base_url or settings.openai_api_key):
        return None
    from langchain_openai import ChatOpenAI

    sync_cls, async_cls = _client_classes()
    client_args: dict[str, Any] = {
        "api_key": settings.openai_api_key or "not-needed",
        "base_url": settings.openai_base_url,
        "timeout": settings.request_timeout,
        "max_retries": settings.request_retries,
    }
    root, root_async = sync_cls(**client_args), async_cls(**client_args)
    return ChatOpenAI(
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key or "not-needed",
        max_retries=settings.request_retries,
        timeout=settings.request_timeout,
        temperature=0,
        stream_usage=True,  # token counts when a reply is streamed (servers that do not report them ignore it)
        # max_tokens as servers read it (langchain-openai would send max_completion_tokens, which llama.cpp ignores)
        extra_body={"max_tokens": settings.llm_max_tokens} if settings.llm_max_tokens else None,
        root_client=root,
        client=root.chat.completions,
        root_async_client=root_async,
        async_client=root_async.chat.completions,
    )


def _is_openai_chat(chat_model: Any) -> bool:
    openai_mod = sys.modules.get("langchain_openai")
    return openai_mod is not None and isinstance(chat_model, openai_mod.ChatOpenAI)


def chat_endpoint(chat_model: Any) -> str:
    """Where ``chat_model`` sends requests: its base URL for OpenAI chat models, else its class name."""
    if _is_openai_chat(chat_model):
        return str(chat_model.openai_api_base or _DEFAULT_OPENAI_URL).rstrip("/")
    base = getattr(chat_model, "base_url", None) or getattr(chat_model, "openai_api_base", None)
    return str(base).rstrip("/") if base else type(chat_model).__name__


def model_name(chat_model: Any) -> str:
    """The model name a chat model requests (``model_name`` or ``model``), else its class name."""
    name = getattr(chat_model, "model_name", None) or getattr(chat_model, "model", None)
    return str(name) if name else type(chat_model).__name__


# --------------------------------------------------------------------------------------------- errors
def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost cause of ``exc`` ("Connection refused" hides under the client's "Connection error.")."""
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def is_context_overflow(exc: BaseException) -> bool:
    """True when ``exc`` says the prompt is longer than the model's context (a problem of one input)."""
    from langchain_core.exceptions import ContextOverflowError

    return isinstance(exc, ContextOverflowError)


def _status_detail(exc: Any) -> str:
    """The server's own words: the ``message`` of an OpenAI-shaped error body, else the body, else the
    client's message without its "Error code: N - " prefix."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return _one_line(body["message"])
    if isinstance(body, str) and body.strip():
        return _one_line(body)
    return _one_line(re.sub(r"^Error code: \d+ - ", "", str(exc.message or "")))


def unavailable_error(exc: BaseException, chat_model: Any) -> LLMUnavailable | None:
    """``exc`` as an :class:`LLMUnavailable` when it means the endpoint cannot serve requests, else None.

    Translated: connection errors and time-outs (after the client's retries); HTTP 401/403 (key refused),
    404 (wrong URL or model), 408/409/429 and 5xx (still failing after the retries), a 5xx whose body is a
    request validation error and other 4xx (the server rejects requests of this shape; not retried). Not
    translated: a context overflow (one input is too long, the caller decides) and anything that is not an
    ``openai`` API error.
    """
    import openai

    if not isinstance(exc, openai.APIError) or is_context_overflow(exc):
        return None
    endpoint = chat_endpoint(chat_model)
    retries = getattr(chat_model, "max_retries", None)
    after = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
    where = f"chat endpoint {endpoint} (model {model_name(chat_model)!r})"
    if isinstance(exc, openai.APITimeoutError):
        limit = getattr(chat_model, "request_timeout", None)
        seconds = f" within {limit:g} s" if isinstance(limit, (int, float)) else ""
        return LLMUnavailable(
            f"{where} did not answer{seconds}{after}; STRATAGRAPH_REQUEST_TIMEOUT raises the limit (seconds)"
        )
    if isinstance(exc, openai.APIConnectionError):
        return LLMUnavailable(f"{where} is unreachable{after}: {_one_line(str(_root_cause(exc)) or repr(exc))}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = _status_detail(exc)
        if status in (401, 403):
            return LLMUnavailable(f"{where} refused the API key (HTTP {status}): {detail}")
        if status == 404:
            return LLMUnavailable(f"{where} answered HTTP 404 (wrong base URL or model name?): {detail}")
        if status >= 500 and is_request_validation_error(detail):
            return LLMUnavailable(f"{where} rejected the request (HTTP {status}, not retried): {detail}")
        if status in (408, 409, 429) or status >= 500:
            return LLMUnavailable(f"{where} kept failing with HTTP {status}{after}: {detail}")
        return LLMUnavailable(f"{where} rejected the request (HTTP {status}): {detail}")
    return LLMUnavailable(f"{where} failed: {_one_line(str(exc))}")


@contextmanager
def endpoint_errors(chat_model: Any) -> Iterator[None]:
    """Re-raise endpoint failures inside the block as :class:`LLMUnavailable` (see :func:`unavailable_error`)."""
    try:
        yield
    except Exception as exc:
        translated = unavailable_error(exc, chat_model)
        if translated is None:
            raise
        raise translated from exc


def rejects_response_format(exc: BaseException) -> bool:
    """True for an HTTP error (any 4xx or 5xx status) whose body names ``response_format``, ``json_schema``
    or ``json_object``: the server does not take that kind of structured output."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code in (408, 409, 429):
        return False
    return _FORMAT_WORDS.search(f"{exc.message} {exc.body}") is not None


# --------------------------------------------------------------------------------------------- usage
class LLMUsage(BaseModel):
    """Requests sent to the chat model (each attempt of the client's retry loop counts) and the tokens they
    used (from the replies' usage metadata). Cache hits send nothing and count nothing."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: LLMUsage) -> LLMUsage:
        """The sum of both (a new object)."""
        return LLMUsage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )

    def record(self, calls: int, message: Any = None) -> None:
        """Count ``calls`` requests and the tokens of ``message`` (an ``AIMessage``; none when it failed)."""
        meta = getattr(message, "usage_metadata", None) or {}
        self.llm_calls += calls
        self.input_tokens += int(meta.get("input_tokens") or 0)
        self.output_tokens += int(meta.get("output_tokens") or 0)


# --------------------------------------------------------------------------------------------- cache keys
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "developer": "developer"}


def _message_dict(message: BaseMessage | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(message, Mapping):
        return {"role": str(message["role"]), "content": message["content"]}
    return {"role": _ROLES.get(message.type, message.type), "content": message.content}


def cache_key(
    *,
    model: str,
    messages: Sequence[BaseMessage | Mapping[str, Any]],
    schema_name: str | None = None,
    schema: Mapping[str, Any] | None = None,
    temperature: float | None = None,
) -> str:
    """The hex sha256 of the canonical JSON (sorted keys, no whitespace) of the model, the messages (role and
    content, in order), the output schema's name and JSON schema, and the temperature."""
    payload = {
        "model": model,
        "messages": [_message_dict(m) for m in messages],
        "schema": {"name": schema_name, "json_schema": schema},
        "temperature": temperature,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------- reading JSON
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON5?|javascript|js)?[ \t]*\r?\n?(.*?)```", re.DOTALL)


def _balanced(text: str, start: int) -> str | None:
    """The ``{...}`` starting at ``start`` up to its matching brace (quotes of both kinds and escapes
    respected), or None when it never closes."""
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _decode(candidate: str) -> Any:
    """Strict JSON first, then JSON5 (single quotes, trailing commas, comments, unquoted keys)."""
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        import json5

        return json5.loads(candidate)


def read_json_object(text: str) -> dict[str, Any]:
    """The JSON object a reply holds: inside a code fence when there is one, else the first balanced
    ``{...}``; prose around it and ``<think>`` blocks are ignored. Raises :class:`MalformedReply` naming
    what was wrong (empty, no object, not closed, not parseable)."""
    body = _THINK.sub("", text or "").strip()
    if not body:
        raise MalformedReply("the reply was empty")
    candidates = [m.group(1).strip() for m in _FENCE.finditer(body)]
    start = body.find("{")
    if start < 0 and not candidates:
        raise MalformedReply("the reply contains no JSON object")
    if start >= 0:
        whole = _balanced(body, start)
        if whole is None and not candidates:
            raise MalformedReply("the JSON object is not closed (the reply was cut off?)")
        if whole is not None:
            candidates.append(whole)
    problem = "the reply's JSON could not be read"
    for cand in candidates:
        if not cand.startswith("{"):
            inner = cand.find("{")
            cand = _balanced(cand, inner) or "" if inner >= 0 else ""
        if not cand:
            continue
        try:
            obj = _decode(cand)
        except ValueError as exc:
            problem = f"the reply's JSON could not be read ({_one_line(str(exc), 120)})"
            continue
        if isinstance(obj, dict):
            return obj
        problem = "the reply's JSON is not an object"
    raise MalformedReply(problem)


def validate_reply(schema: type[T], obj: Mapping[str, Any]) -> T:
    """``obj`` validated into ``schema`` (pydantic lax mode: "12" becomes 12; missing optional fields take
    their defaults); :class:`MalformedReply` listing the first problems otherwise."""
    try:
        return schema.model_validate(obj)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}" for err in exc.errors()[:3]
        )
        raise MalformedReply(f"the JSON does not match the schema ({problems})") from exc


def strict_json_schema(node: Any) -> Any:
    """A copy of a JSON schema fit for OpenAI strict mode: every object lists all its properties as required
    and forbids others; defaults are dropped (strict mode has none; parsing still applies them)."""
    if isinstance(node, list):
        return [strict_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict_json_schema(v) for k, v in node.items() if k != "default"}
    if out.get("type") == "object" and isinstance(out.get("properties"), dict):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


# --------------------------------------------------------------------------------------------- output modes
class OutputMode(str, Enum):
    """How a structured reply is asked for, best first (the negotiation ladder)."""

    JSON_SCHEMA = "json_schema"  # response_format json_schema, strict
    JSON_OBJECT = "json_object"  # response_format json_object, the schema in the prompt
    PROMPT = "prompt"  # no response_format, the schema in the prompt, the JSON read out of the reply

    def below(self) -> OutputMode | None:
        ladder = list(OutputMode)
        i = ladder.index(self)
        return ladder[i + 1] if i + 1 < len(ladder) else None


_MODES: dict[tuple[str, str], OutputMode] = {}  # (endpoint, model) -> the rung known to work
_MODES_LOCK = threading.Lock()
_PROBES: dict[tuple[str, str], threading.Lock] = {}  # held while an endpoint's first request finds its rung


def _key(chat_model: Any) -> tuple[str, str]:
    return chat_endpoint(chat_model), model_name(chat_model)


def output_mode(chat_model: Any, store: LLMCache | None = None) -> OutputMode | None:
    """The rung ``chat_model``'s endpoint is known to accept: this process's memory, else the store's;
    ``prompt`` for a chat model that is not OpenAI-compatible; None when it has yet to be found."""
    if not _is_openai_chat(chat_model):
        return OutputMode.PROMPT
    key = _key(chat_model)
    with _MODES_LOCK:
        known = _MODES.get(key)
    if known is not None:
        return known
    stored = store.output_mode(*key) if store is not None else None
    if stored in OutputMode._value2member_map_:
        mode = OutputMode(stored)
        with _MODES_LOCK:
            _MODES[key] = mode
        return mode
    return None


@contextmanager
def _probing(chat_model: Any, store: LLMCache | None) -> Iterator[OutputMode]:
    """The rung to start at. While an endpoint's rung is unknown, its first request runs alone (threads
    asking at the same time wait for it), so an endpoint is probed once, not once per thread."""
    mode = output_mode(chat_model, store)
    if mode is not None:
        yield mode
        return
    key = _key(chat_model)
    with _MODES_LOCK:
        lock = _PROBES.setdefault(key, threading.Lock())
    with lock:
        yield output_mode(chat_model, store) or OutputMode.JSON_SCHEMA


def _settle(chat_model: Any, mode: OutputMode, store: LLMCache | None, reason: str = "") -> None:
    """Remember that ``chat_model``'s endpoint accepts ``mode`` (in this process and in ``store``)."""
    key = _key(chat_model)
    with _MODES_LOCK:
        known = _MODES.get(key)
        _MODES[key] = mode
    if known != mode and store is not None and store.output_mode(*key) != mode.value:
        store.set_output_mode(*key, mode.value, reason)


def _with_schema_prompt(messages: Sequence[BaseMessage], schema: Mapping[str, Any]) -> list[BaseMessage]:
    """``messages`` with the JSON-reply instruction and the schema added to the system message."""
    from langchain_core.messages import SystemMessage

    note = load_prompt("json_reply").format(schema=json.dumps(schema, ensure_ascii=False, sort_keys=True))
    out = list(messages)
    if out and isinstance(out[0], SystemMessage) and isinstance(out[0].content, str):
        out[0] = SystemMessage(content=f"{out[0].content.rstrip()}\n\n{note}")
    else:
        out.insert(0, SystemMessage(content=note))
    return out


def _request_kwargs(mode: OutputMode, name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    if mode == OutputMode.JSON_SCHEMA:
        return {"response_format": {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}}
    if mode == OutputMode.JSON_OBJECT:
        return {"response_format": {"type": "json_object"}}
    return {}


def _cut_off(exc: BaseException) -> bool:
    import openai

    return isinstance(exc, (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError))


class _CutOff(Exception):
    """The client refused a reply that stopped at the token limit or at a content filter."""


def _invoke(chat_model: Any, messages: Sequence[BaseMessage], usage: LLMUsage, **kwargs: Any) -> Any:
    """One request (the client may send it several times); every request sent is counted in ``usage``,
    a failed one too. Context overflow raises :class:`InputTooLong`, endpoint failures
    :class:`LLMUnavailable`, a reply the client refuses as cut off ``_CutOff``."""
    box = [0]
    token = _SENT.set(box)
    reply = None
    try:
        reply = chat_model.invoke(list(messages), **kwargs)
        return reply
    except Exception as exc:
        if is_context_overflow(exc):
            raise InputTooLong(_one_line(str(exc))) from exc
        if _cut_off(exc):
            raise _CutOff(str(exc)) from exc
        translated = unavailable_error(exc, chat_model)
        if translated is not None:
            raise translated from exc
        raise
    finally:
        _SENT.reset(token)
        usage.record(box[0] or 1, reply)  # a chat model that is not ours counts one request per call


def _text_of(reply: Any) -> str:
    from langchain_core.messages import BaseMessage

    return str(reply.text) if isinstance(reply, BaseMessage) else str(reply)


def _was_cut_off(reply: Any) -> bool:
    return getattr(reply, "response_metadata", {}).get("finish_reason") == "length"


def ask_text(chat_model: Any, messages: Sequence[BaseMessage], usage: LLMUsage | None = None, **kwargs: Any) -> str:
    """A plain chat request (no structure): the reply text; requests and tokens are added to ``usage``.
    Endpoint failures raise :class:`LLMUnavailable`, a prompt too long :class:`InputTooLong`; a reply cut
    off at the token limit is returned as it is, with a warning."""
    usage = usage if usage is not None else LLMUsage()
    try:
        reply = _invoke(chat_model, messages, usage, **kwargs)
    except _CutOff as cut:
        raise MalformedReply("the reply was cut off at the token limit") from cut
    if _was_cut_off(reply):
        logger.warning("chat endpoint %s: the reply was cut off at the token limit", chat_endpoint(chat_model))
    return _text_of(reply)


def _request_structured(
    chat_model: Any,
    messages: Sequence[BaseMessage],
    name: str,
    schema: Mapping[str, Any],
    store: LLMCache | None,
    usage: LLMUsage,
) -> tuple[str, OutputMode]:
    """One structured request at the endpoint's rung, stepping down the ladder on a rejection that names
    the output format (each step is one more request). A reply cut off at the token limit raises
    :class:`MalformedReply` (after its usage is counted)."""
    with _probing(chat_model, store) as mode:
        refusals: list[str] = []
        while True:
            sent = messages if mode == OutputMode.JSON_SCHEMA else _with_schema_prompt(messages, schema)
            try:
                reply = _invoke(chat_model, sent, usage, **_request_kwargs(mode, name, schema))
            except LLMUnavailable as exc:
                cause = exc.__cause__
                below = mode.below()
                if cause is None or below is None or not rejects_response_format(cause):
                    raise
                refusals.append(_one_line(f"{mode.value} refused: {exc}", 300))
                logger.warning(
                    "chat endpoint %s (model %r) does not take %s structured output; trying %s",
                    *_key(chat_model), mode.value, below.value,
                )  # fmt: skip
                mode = below
                continue
            except _CutOff as cut:
                raise MalformedReply("the reply was cut off before the JSON object ended; keep it shorter") from cut
            _settle(chat_model, mode, store, "; ".join(refusals))
            if _was_cut_off(reply):
                raise MalformedReply("the reply was cut off at the token limit before the JSON ended; keep it shorter")
            return _text_of(reply), mode


@dataclass
class StructuredReply(Generic[T]):
    """What :func:`ask_structured` got: the parsed ``value`` (None when no usable reply came), the last
    raw ``text``, why replies were unusable (``problems``, in order), the ``usage`` of the requests sent,
    the output ``mode`` used, and whether the value came from the cache."""

    value: T | None
    text: str = ""
    problems: list[str] = field(default_factory=list)
    usage: LLMUsage = field(default_factory=LLMUsage)
    mode: OutputMode | None = None
    cached: bool = False

    @property
    def corrected(self) -> bool:
        """A usable reply that came only after the correction round."""
        return self.value is not None and bool(self.problems)


def ask_structured(
    chat_model: Any,
    schema: type[T],
    messages: Sequence[BaseMessage],
    *,
    store: LLMCache | None = None,
    parse: Callable[[str], T] | None = None,
    correction: str | None = None,
    name: str | None = None,
    json_schema: Mapping[str, Any] | None = None,
    what: str = "",
    usage: LLMUsage | None = None,
) -> StructuredReply[T]:
    """Ask ``chat_model`` for one ``schema`` object, negotiating the output format (module docstring).

    ``store``: the store's LLM database (reply cache and remembered output modes); only usable replies are
    cached, so a re-run asks again for what failed. ``parse``: text -> object (default: :func:`read_json_object`
    then :func:`validate_reply`), raising :class:`MalformedReply`. A malformed reply is asked again once, with
    ``correction`` (a ``str.format`` template with ``{error}``; default prompt ``json_correction``) after the bad
    reply; when that fails too the result's ``value`` is None, ``problems`` says why, and a warning names
    ``what`` (e.g. "chunk X of document Y") and the problems. Endpoint failures raise
    :class:`LLMUnavailable`; a prompt too long for the model raises :class:`InputTooLong`. ``usage`` (optional):
    where requests and tokens are counted as they are sent, so a caller keeps the count of a call that raised.
    """
    from langchain_core.messages import AIMessage, HumanMessage

    name = name or schema.__name__
    json_schema = dict(json_schema) if json_schema is not None else strict_json_schema(schema.model_json_schema())
    read = parse or (lambda text: validate_reply(schema, read_json_object(text)))
    temperature = getattr(chat_model, "temperature", None)
    result: StructuredReply[T] = StructuredReply(value=None, usage=usage if usage is not None else LLMUsage())

    def attempt(msgs: Sequence[BaseMessage]) -> T:
        key = None
        if store is not None:
            key = cache_key(model=model_name(chat_model), messages=msgs, schema_name=name, schema=json_schema,
                            temperature=temperature)  # fmt: skip
            hit = store.get(key)
            if hit is not None:
                try:
                    value = read(hit)
                    result.text, result.cached = hit, True
                    return value
                except MalformedReply:
                    logger.debug("LLM cache entry %s no longer parses; asking the model again", key)
        result.cached = False
        result.text, result.mode = "", None
        result.text, result.mode = _request_structured(chat_model, msgs, name, json_schema, store, result.usage)
        value = read(result.text)
        if key is not None:
            store.put(key, result.text)  # type: ignore[union-attr]
        return value

    try:
        result.value = attempt(messages)
        return result
    except MalformedReply as first:
        result.problems.append(first.reason)
    note = (correction or load_prompt("json_correction")).format(error=result.problems[0])
    retry = [*messages, AIMessage(content=_one_line(result.text, 2000) or "(no reply)"), HumanMessage(content=note)]
    try:
        result.value = attempt(retry)
    except MalformedReply as second:
        result.problems.append(second.reason)
        logger.warning(
            "LLM %s: no usable reply after a correction (%s; then %s)",
            what or f"{name} request", result.problems[0], result.problems[1],
        )  # fmt: skip
    return result

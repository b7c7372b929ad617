"""A real HTTP server on 127.0.0.1 speaking OpenAI's chat-completions protocol, answering from a script:
what the LLM tests drive ``ChatOpenAI(base_url=...)`` against (fixture ``chat_server`` in ``conftest.py``)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from stratagraph.config import Settings


# --------------------------------------------------------------------------------------------- server modes
@dataclass(frozen=True)
class ServerMode:
    """How a kind of OpenAI-compatible server treats ``response_format``: the types it ``accepts``, the
    reply it gives to one it does not (HTTP status and error body), and whether it wraps its answers in
    a code fence with prose around (a model given no response_format at all)."""

    name: str
    accepts: frozenset[str]
    status: int = 400
    error: str = ""
    fenced: bool = False

    def rejection(self, kind: str) -> Reply:
        return Reply(status=self.status, content=self.error.format(kind=kind), server_error=self.status == 500)


#: the servers users run, by how they answer a response_format they do not take
SERVER_MODES: dict[str, ServerMode] = {
    # OpenAI, recent vLLM: every response_format type
    "openai": ServerMode("openai", frozenset({"json_schema", "json_object", "text"})),
    # older vLLM: 400 naming json_schema
    "vllm_old": ServerMode(
        "vllm_old", frozenset({"json_object", "text"}), 400, "response_format type {kind} is not supported by this server"
    ),
    # llama-cpp-python's server: HTTP 500 whose body is the request's pydantic validation error
    "llama_cpp": ServerMode(
        "llama_cpp",
        frozenset({"json_object", "text"}),
        500,
        "1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
        "should be 'text' or 'json_object'\", 'input': '{kind}', 'ctx': {{'expected': \"'text' or 'json_object'\"}}}}"
        "\n\n  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions",
    ),
    # Ollama-style: json_object only
    "ollama": ServerMode("ollama", frozenset({"json_object"}), 400, "invalid response_format: {kind}"),
    # no response_format at all; the model answers in a code fence with prose around it
    "plain": ServerMode("plain", frozenset(), 422, "Unrecognized request argument supplied: response_format", fenced=True),
}


def fence(content: str) -> str:
    """How a chatty model answers: a sentence, the JSON in a code fence, a closing remark."""
    return f"Sure! Here is the JSON you asked for:\n```json\n{content}\n```\nLet me know if anything is missing."


# --------------------------------------------------------------------------------------------- server
@dataclass
class Reply:
    """One scripted answer: an assistant message ``content`` (and/or ``tool_calls``: ``(name, arguments)``
    pairs) with HTTP 200, or an error ``status``."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    server_error: bool = False  # the error body llama-cpp-python's server sends with its HTTP 500
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @classmethod
    def calls(cls, *calls: tuple[str, dict[str, Any]]) -> Reply:
        """An assistant turn that calls tools (OpenAI's ``tool_calls``, finish reason ``tool_calls``)."""
        return cls(content=None, tool_calls=list(calls), finish_reason="tool_calls")

    def message(self, n: int) -> dict[str, Any]:
        """The reply as an OpenAI assistant message (request number ``n`` makes the tool-call ids unique)."""
        out: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(self.tool_calls)
            ]
        return out

    @classmethod
    def json(cls, obj: Any) -> Reply:
        return cls(content=json.dumps(obj))

    @classmethod
    def error(cls, status: int, message: str = "scripted failure", **headers: str) -> Reply:
        return cls(status=status, headers=headers, content=message)


class ScriptedChatServer:
    """``POST /v1/chat/completions`` on 127.0.0.1: answers from ``script`` (first in, first out), else from
    ``responder(request_body)``; records every request body; counts requests in flight. ``mode`` (a
    :data:`SERVER_MODES` name) sets how it treats ``response_format``: a type it does not accept gets the
    mode's rejection, and a fenced mode wraps answers in prose and a code fence. A request with
    ``"stream": true`` gets the reply as server-sent events, one word per chunk, ``stream_delay`` seconds
    apart (``stream_sent`` records when each chunk left)."""

    def __init__(self, mode: str = "openai") -> None:
        self.mode = SERVER_MODES[mode]
        self.script: deque[Reply] = deque()
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.delay = 0.0
        self.stream_delay = 0.0
        self.stream_sent: list[float] = []
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep pytest output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if self.path != "/v1/chat/completions":
                        reply = Reply.error(404, f"no route {self.path}")
                    elif (kind := (body.get("response_format") or {}).get("type")) and kind not in server.mode.accepts:
                        reply = server.mode.rejection(kind)
                    else:
                        time.sleep(server.delay)
                        reply = server._next(body)
                        if server.mode.fenced and reply.status == 200 and reply.content is not None:
                            reply = Reply(content=fence(reply.content), finish_reason=reply.finish_reason)
                    if body.get("stream") and reply.status == 200:
                        self._stream(reply, body)
                    else:
                        self._send(reply, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.status == 200:
                    payload = {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {"index": 0, "message": reply.message(len(server.requests)), "finish_reason": reply.finish_reason}
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                    }
                elif reply.server_error:
                    payload = {"error": {"message": reply.content, "type": "internal_server_error", "param": None,
                                         "code": None}}  # fmt: skip
                else:
                    payload = {"error": {"message": reply.content, "type": "scripted", "code": reply.status}}
                data = json.dumps(payload).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                base = {"id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion.chunk",
                        "created": int(time.time()), "model": body.get("model", "scripted")}  # fmt: skip

                def event(delta: dict[str, Any], finish: str | None = None, usage: dict | None = None) -> None:
                    chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                    if usage is not None:
                        chunk = {**base, "choices": [], "usage": usage}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    server.stream_sent.append(time.monotonic())

                event({"role": "assistant", "content": ""})
                for word in re.findall(r"\S+\s*", reply.content or ""):
                    time.sleep(server.stream_delay)
                    event({"content": word})
                for i, call in enumerate(reply.message(len(server.requests)).get("tool_calls", [])):
                    event({"tool_calls": [{"index": i, **call}]})
                event({}, reply.finish_reason)
                if (body.get("stream_options") or {}).get("include_usage"):
                    event({}, usage={"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Reply.error(500, "the test's script is exhausted")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def settings(self, home: Path, **overrides: Any) -> Settings:
        """Settings pointing the chat model "scripted" at this server (small retries; a timeout a loaded machine does not reach)."""
        values: dict[str, Any] = {
            "home": home,
            "llm_model": "scripted",
            "openai_base_url": self.base_url,
            "request_retries": 2,
            "request_timeout": 30,  # a loaded CI machine can stall the server thread for seconds
        }
        values.update(overrides)
        return Settings(**values)

    def start(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def user_text(body: dict[str, Any]) -> str:
    """All user-message text of a recorded request body."""
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

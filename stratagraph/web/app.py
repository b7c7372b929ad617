"""The local web page of one store (Starlette; the page and its script are files in ``static/``, shipped in
the package, nothing fetched at run time).

Routes (JSON unless said):

* ``GET /`` the page; ``GET /static/...`` its script and style
* ``GET /api/stats`` counts; ``GET /api/documents`` the documents; ``GET /api/tree?doc=ID`` a heading tree;
  ``GET /api/entities?doc=ID`` a document's entities; ``GET /api/chunk?id=ID`` a passage with where it sits
* ``GET /api/threads`` the conversation threads; ``GET /api/threads/{id}`` a thread's turns (each answer with
  its evidence graph); ``DELETE /api/threads/{id}``
* ``POST /api/threads/{id}/messages`` ``{"message": ...}``: one turn, streamed as NDJSON events, one per line:
  ``{"type": "node", "node": TraceEntry}`` as each node finishes, ``{"type": "token", "token": ...}`` as a
  chat model writes the reply, then ``{"type": "answer", "answer": Answer, "reply": ..., "graph": ...}``
  (``graph``: :func:`stratagraph.browse.evidence_graph`), or ``{"type": "error", "error": ...}``.

Bad input is a 400 naming the problem; an unknown id a 404.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from stratagraph import browse
from stratagraph.limits import LimitExceeded, check_request

if TYPE_CHECKING:
    from stratagraph.api import StrataGraph
    from stratagraph.conversation import Conversation

__all__ = ["MAX_MESSAGE", "create_app", "serve"]

STATIC = Path(__file__).parent / "static"
THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_MESSAGE = 4000


class BadRequest(ValueError):
    pass


def _thread_id(request: Request) -> str:
    thread = request.path_params["thread"]
    if not THREAD_ID.fullmatch(thread):
        raise BadRequest(f"thread id {thread!r}: letters, digits, '.', '_' and '-', at most 64")
    return thread


def _query(request: Request, name: str) -> str:
    value = request.query_params.get(name, "")
    if not value:
        raise BadRequest(f"missing query parameter {name!r}")
    return value


class Page:
    """The routes over one :class:`~stratagraph.api.StrataGraph`; one :class:`Conversation` per thread."""

    def __init__(self, sg: StrataGraph) -> None:
        self.sg = sg
        self._conversations: dict[str, Conversation] = {}
        self._lock = threading.Lock()

    def conversation(self, thread: str) -> Conversation:
        with self._lock:
            if thread not in self._conversations:
                self._conversations[thread] = self.sg.chat(thread)
            return self._conversations[thread]

    # ------------------------------------------------------------------ store
    def stats(self, request: Request) -> Response:
        c = self.sg.stats()
        return JSONResponse({"nodes": c.nodes, "edges": c.edges, "max_section_level": c.max_section_level})

    def documents(self, request: Request) -> Response:
        return JSONResponse(browse.documents(self.sg.graph))

    def tree(self, request: Request) -> Response:
        return JSONResponse(browse.heading_tree(self.sg.graph, _query(request, "doc")))

    def entities(self, request: Request) -> Response:
        return JSONResponse(browse.document_entities(self.sg.graph, _query(request, "doc")))

    def chunk(self, request: Request) -> Response:
        return JSONResponse(browse.chunk(self.sg.graph, _query(request, "id")))

    # ------------------------------------------------------------------ conversations
    def threads(self, request: Request) -> Response:
        return JSONResponse(self.sg.threads())

    def thread(self, request: Request) -> Response:
        from stratagraph.answers import Answer

        turns: list[dict[str, Any]] = []
        for m in self.conversation(_thread_id(request)).history():
            if m.type == "human":
                turns.append({"message": str(m.content)})
            elif m.type == "ai" and turns and "answer" in m.response_metadata:
                answer = Answer.model_validate(m.response_metadata["answer"])
                turns[-1].update(reply=str(m.content), answer=m.response_metadata["answer"],
                                 graph=browse.evidence_graph(self.sg.graph, answer))  # fmt: skip
        return JSONResponse({"thread_id": request.path_params["thread"], "turns": turns})

    def delete_thread(self, request: Request) -> Response:
        thread = _thread_id(request)
        with self._lock:
            self._conversations.pop(thread, None)
        if not self.sg.delete_thread(thread):
            return JSONResponse({"error": f"unknown thread {thread!r}"}, status_code=404)
        return JSONResponse({"deleted": thread})

    async def post_message(self, request: Request) -> Response:
        thread = _thread_id(request)
        try:
            body = await request.json()
        except ValueError as exc:
            raise BadRequest("the body must be JSON: {\"message\": \"...\"}") from exc
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, str) or not message.strip():
            raise BadRequest("the message is empty")
        if len(message) > MAX_MESSAGE:
            raise BadRequest(f"the message is longer than {MAX_MESSAGE} characters")
        try:
            check_request(self.sg.settings, message)
        except LimitExceeded as exc:
            raise BadRequest(str(exc)) from exc
        conversation = self.conversation(thread)
        return StreamingResponse(self._turn(conversation, message.strip()), media_type="application/x-ndjson")

    def _turn(self, conversation: Conversation, message: str) -> Iterator[str]:
        """One turn's events as NDJSON lines (Starlette iterates this in a worker thread)."""
        try:
            for event in conversation.stream(message):
                if event.kind == "node" and event.node is not None:
                    yield _line({"type": "node", "node": event.node.model_dump(mode="json")})
                elif event.kind == "token":
                    yield _line({"type": "token", "token": event.token})
                elif event.kind == "answer" and event.answer is not None:
                    graph = browse.evidence_graph(self.sg.graph, event.answer)
                    yield _line({"type": "answer", "answer": event.answer.model_dump(mode="json"), "reply": event.reply,
                                 "graph": graph})  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - the page shows what went wrong; the stream stays well-formed
            yield _line({"type": "error", "error": f"{type(exc).__name__}: {exc}"})


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False) + "\n"


def create_app(sg: StrataGraph, token: str | None = None) -> Any:
    """The ASGI app of the page over ``sg`` (behind a bearer token, which a browser passes once as
    ``?token=``, when ``token`` is set)."""
    page = Page(sg)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    def sync(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            return await run_in_threadpool(handler, request)

        return endpoint

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/api/stats", sync(page.stats)),
            Route("/api/documents", sync(page.documents)),
            Route("/api/tree", sync(page.tree)),
            Route("/api/entities", sync(page.entities)),
            Route("/api/chunk", sync(page.chunk)),
            Route("/api/threads", sync(page.threads)),
            Route("/api/threads/{thread}", sync(page.thread), methods=["GET"]),
            Route("/api/threads/{thread}", sync(page.delete_thread), methods=["DELETE"]),
            Route("/api/threads/{thread}/messages", page.post_message, methods=["POST"]),
            Mount("/static", StaticFiles(directory=STATIC)),
        ],
        exception_handlers={
            BadRequest: lambda request, exc: JSONResponse({"error": str(exc)}, status_code=400),
            browse.NotInStore: lambda request, exc: JSONResponse({"error": str(exc)}, status_code=404),
        },
    )
    if token:
        from stratagraph.http_access import BearerTokenMiddleware

        return BearerTokenMiddleware(app, token, cookie=True)
    return app


def serve(sg: StrataGraph, host: str, port: int, token: str | None = None) -> None:
    import uvicorn

    uvicorn.run(create_app(sg, token), host=host, port=port, log_level="warning")

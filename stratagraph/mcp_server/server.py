"""The MCP server of one store (FastMCP, from the official ``mcp`` SDK).

* **Tools.** The store's read tools (``sg.tools()``: ``search_chunks``, ``search_entities``, ... and
  ``read_cypher`` on the Neo4j backend) with their pydantic argument schemas, answering with the text a model
  reads (``isError`` set when the tool reports bad input); every answering workflow as ``ask_<name>``
  (``ask_tqr``, ``ask_kag``, ``ask_bag``, ``ask_lesegr``, ``ask_hybrid``, and ``ask_auto``, which routes the
  question) whose text is the answer with numbered citations and whose structured content is the full
  :class:`~stratagraph.answers.Answer` (answer, found, citations with verbatim quotes, the computation, the
  trace). With allowed folders (``--allow-folder``) also ``ingest`` and ``delete_document``.
* **Resources.** ``stratagraph://stats`` (counts), ``stratagraph://documents`` (the list), each document as
  ``stratagraph://documents/{doc_id}`` (Markdown: headings and text; the id percent-encoded) and each section
  as ``stratagraph://sections/{section_id}``.

Workflows and tools run in worker threads, so one slow question does not hold the others up.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import quote, unquote

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.fastmcp.tools import Tool
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field

from stratagraph import browse
from stratagraph.answers import Answer
from stratagraph.mcp_server.folders import AllowedFolders, PathRefused
from stratagraph.workflows import ANSWERING
from stratagraph.workflows.langchain import DESCRIPTIONS

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from stratagraph.api import StrataGraph

__all__ = ["ASK_TOOLS", "build_server", "run"]

#: the answering tools: ask_<workflow>, and ask_auto (the chat workflow's routing, one turn, no memory)
ASK_TOOLS: tuple[str, ...] = (*(f"ask_{name}" for name in ANSWERING), "ask_auto")
AUTO_DESCRIPTION = (
    "Answer any question about the documents: it is routed to the workflow that suits it (numbers to combine, "
    "the document hierarchy, citations between papers, metadata, multi-hop chains)."
)
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

Question = Annotated[str, Field(description="the question, complete on its own")]
Filters = Annotated[
    dict[str, str] | None, Field(description='document metadata to restrict the search to, e.g. {"quarter": "Q3"}')
]
Paths = Annotated[
    list[str], Field(description="files or folders inside the allowed folders (relative paths: in the first of them)")
]
DocId = Annotated[str, Field(description="the document id, as ingest reports it")]
K = Annotated[int | None, Field(description="how many chunks of evidence (default: the workflow's)", ge=1, le=50)]


class StrataMCP(FastMCP):
    """FastMCP whose resource list also names every document of the store (read at each listing)."""

    def __init__(self, sg: StrataGraph, **kwargs: Any) -> None:
        self.sg = sg
        super().__init__(**kwargs)

    async def list_resources(self) -> list[Resource]:
        static = await super().list_resources()
        docs = await anyio.to_thread.run_sync(browse.documents, self.sg.graph)
        return static + [
            Resource(uri=document_uri(d["id"]), name=d["id"], title=d["title"], mimeType="text/markdown",
                     description=f"{d['title']} ({d['sections']} sections, {d['chunks']} chunks)")  # fmt: skip
            for d in docs
        ]


def document_uri(doc_id: str) -> str:
    return f"stratagraph://documents/{quote(doc_id, safe='')}"


def section_uri(section_id: str) -> str:
    return f"stratagraph://sections/{quote(section_id, safe='')}"


def _store_tool(tool: BaseTool) -> Tool:
    """A LangChain tool of the store as an MCP tool: its argument schema, the text a model reads, ``isError``
    when the tool reports a problem."""
    from langchain_mcp_adapters.tools import to_fastmcp

    async def call(**arguments: Any) -> CallToolResult:
        call_id = f"mcp-{tool.name}"
        message = await anyio.to_thread.run_sync(
            lambda: tool.invoke({"type": "tool_call", "name": tool.name, "args": arguments, "id": call_id})
        )
        return CallToolResult(content=[TextContent(type="text", text=str(message.content))], isError=message.status == "error")

    converted = to_fastmcp(tool)
    return converted.model_copy(update={"fn": call, "is_async": True, "annotations": READ_ONLY})


def _answer_result(answer: Answer) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=answer.render())], structuredContent=answer.model_dump(mode="json")
    )


def _ask_tool(sg: StrataGraph, name: str) -> Tool:
    """``ask_<name>``: the workflow's cited Answer as text and as structured content."""

    async def ask(question: Question, filters: Filters = None, k: K = None) -> Annotated[CallToolResult, Answer]:
        if not question.strip():
            raise ToolError("the question is empty")
        answer = await anyio.to_thread.run_sync(lambda: sg.ask(question, name, filters, k))
        return _answer_result(answer)

    return Tool.from_function(ask, name=f"ask_{name}", description=DESCRIPTIONS[name], annotations=READ_ONLY)


def _ask_auto_tool(sg: StrataGraph) -> Tool:
    from stratagraph.conversation import Conversation

    async def ask_auto(question: Question) -> Annotated[CallToolResult, Answer]:
        if not question.strip():
            raise ToolError("the question is empty")
        answer = await anyio.to_thread.run_sync(lambda: Conversation.ephemeral(sg.services).ask(question.strip()))
        return _answer_result(answer)

    return Tool.from_function(ask_auto, description=AUTO_DESCRIPTION, annotations=READ_ONLY)


def _write_tools(sg: StrataGraph, folders: AllowedFolders) -> list[Tool]:
    where = folders.describe()

    async def ingest(
        paths: Paths,
    ) -> dict[str, Any]:
        if not paths:
            raise ToolError("no paths given")
        groups: dict[Any, list[str]] = {}
        for p in paths:
            try:
                folder, resolved = folders.resolve(p)
            except PathRefused as exc:
                raise ToolError(str(exc)) from exc
            groups.setdefault(folder, []).append(str(resolved))
        reports: list[dict[str, Any]] = []
        for folder, group in groups.items():  # document ids are paths relative to the folder they lie in
            result = await anyio.to_thread.run_sync(lambda g=group, f=folder: sg.ingest(g, base=f))
            reports += result.to_json()["documents"]
        return {"documents": reports, "failed": sum(1 for r in reports if r["status"] == "failed")}

    async def delete_document(doc_id: DocId) -> dict[str, Any]:
        from stratagraph.graph_store.base import DocumentNotFound

        if not folders.holds_document(doc_id):
            raise ToolError(f"document {doc_id!r} does not lie in the allowed folders ({where})")
        try:
            summary = await anyio.to_thread.run_sync(lambda: sg.delete(doc_id))
        except DocumentNotFound as exc:
            raise ToolError(str(exc)) from exc
        return {"deleted": True, **summary.model_dump()}

    return [
        Tool.from_function(ingest, description=f"Ingest files or folders from {where} into the store (idempotent: "
                           "unchanged content is skipped).",  # fmt: skip
                           annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True)),
        Tool.from_function(delete_document, description="Delete a document (one ingested from the allowed folders) "
                           "and everything only it supported.",  # fmt: skip
                           annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True)),
    ]


def build_server(
    sg: StrataGraph, *, allowed: AllowedFolders | None = None, host: str = "127.0.0.1", port: int = 8000
) -> FastMCP:
    """The MCP server of ``sg``'s store (module docstring); ``host`` and ``port`` are where HTTP serves
    (on loopback the SDK also checks the ``Host`` and ``Origin`` headers against DNS rebinding)."""
    allowed = allowed or AllowedFolders(())
    tools = [_store_tool(t) for t in sg.tools()]
    tools += [_ask_tool(sg, name) for name in ANSWERING] + [_ask_auto_tool(sg)]
    if allowed:
        tools += _write_tools(sg, allowed)
    server = StrataMCP(
        sg,
        name="stratagraph",
        instructions="A knowledge graph of the user's documents. Search it with the read tools, or ask a question "
        "with an ask_* tool: answers cite verbatim quotes and compute numbers exactly. Documents and sections are "
        "resources.",
        tools=tools,
        host=host,
        port=port,
        log_level="WARNING",
    )

    @server.resource("stratagraph://stats", mime_type="application/json", description="nodes per label, edges per type")
    async def stats() -> str:
        counts = await anyio.to_thread.run_sync(sg.stats)
        return json.dumps(counts.model_dump(), sort_keys=True)

    @server.resource("stratagraph://documents", mime_type="application/json", description="every document of the store")
    async def documents() -> str:
        docs = await anyio.to_thread.run_sync(browse.documents, sg.graph)
        for d in docs:
            d["uri"] = document_uri(d["id"])
        return json.dumps(docs, ensure_ascii=False)

    @server.resource("stratagraph://documents/{doc_id}", mime_type="text/markdown",
                     description="a document's headings and text (the id percent-encoded)")  # fmt: skip
    async def document(doc_id: str) -> str:
        return await anyio.to_thread.run_sync(browse.document_markdown, sg.graph, unquote(doc_id))

    @server.resource("stratagraph://sections/{section_id}", mime_type="text/markdown",
                     description="a section's heading path and its own text (the id percent-encoded)")  # fmt: skip
    async def section(section_id: str) -> str:
        return await anyio.to_thread.run_sync(browse.section_markdown, sg.graph, unquote(section_id))

    return server


def run(server: FastMCP, transport: str, *, token: str | None = None) -> None:
    """Serve over ``stdio`` or streamable ``http`` (at ``/mcp``; with ``token``, every request must carry it)."""
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    from stratagraph.http_access import BearerTokenMiddleware

    app: Any = server.streamable_http_app()
    if token:
        app = BearerTokenMiddleware(app, token)
    config = uvicorn.Config(app, host=server.settings.host, port=server.settings.port, log_level="warning",
                            lifespan="on")  # fmt: skip
    uvicorn.Server(config).run()

"""The ``stratagraph`` command.

Conventions (DESIGN.md "CLI conventions"): with ``--json`` stdout holds exactly one JSON document and
progress goes to stderr; exit codes 0 ok, 1 some inputs failed (the rest was done), 2 usage error.
"""

from __future__ import annotations

import os

# Before numpy / onnxruntime load: on 2 cores BLAS threads fight the embedder's (NOTES-offline.md).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Annotated, Any, Optional  # noqa: E402

import typer  # noqa: E402
from rich.console import Console  # noqa: E402

app = typer.Typer(
    name="stratagraph",
    help="Build one multi-layer knowledge graph from your documents and query it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True, highlight=False)

StoreOpt = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional
    typer.Option("--store", help="Store directory (default: $STRATAGRAPH_HOME or ./.stratagraph).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON document on stdout.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log details (tracebacks) to stderr.")]

_global_store: Path | None = None


@app.callback()
def main(store: StoreOpt = None) -> None:
    """stratagraph: multi-layer graph RAG (BAG-RAG, HybridRAG, CG-RAG, BiG-RAG, KAG) on one graph."""
    global _global_store
    _global_store = store


def _settings(store: Path | None, **overrides: object):  # noqa: ANN202
    from pydantic import ValidationError

    from stratagraph.config import Settings

    home = store or _global_store
    if home is not None:
        overrides["home"] = home
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        _fail(f"invalid settings: {problems}", code=2)
        raise  # unreachable


def _logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.CRITICAL,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )


def _emit(data: Any, as_json: bool, human: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, sort_keys=False) + "\n")
    else:
        sys.stdout.write(human + "\n")
    sys.stdout.flush()


def _fail(message: str, code: int = 1) -> None:
    err.print(f"[red]error:[/red] {message}", markup=True, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def _progress_bar():  # noqa: ANN202
    """A rich progress bar on stderr; yields the ``progress(stage, done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield progress


@contextmanager
def _session(  # noqa: ANN202
    store: Path | None,
    as_json: bool,
    progress: Callable[[str, int, int], None] | None = None,
    **overrides: object,
):
    """An open StrataGraph; a store that cannot be reached ends the command with exit 1 and one message."""
    from stratagraph.api import StrataGraph
    from stratagraph.graph_store.base import StoreUnavailable

    sg = StrataGraph(_settings(store, **overrides), progress=progress)
    try:
        yield sg
    except StoreUnavailable as exc:
        if as_json:
            _emit({"error": str(exc)}, True, "")
        _fail(str(exc))
    finally:
        sg.close()


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (.txt .md .html .pdf .json .jsonl).")],
    include: Annotated[list[str], typer.Option("--include", help="Glob of files to take from folders.")] = [],  # noqa: B006
    exclude: Annotated[list[str], typer.Option("--exclude", help="Glob of files to skip.")] = [],  # noqa: B006
    base: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--base", help="Document ids are paths relative to this folder (default: cwd)."),
    ] = None,
    title_field: Annotated[Optional[str], typer.Option(help="JSON/JSONL field holding the title.")] = None,  # noqa: UP045
    text_field: Annotated[Optional[str], typer.Option(help="JSON/JSONL field holding the text.")] = None,  # noqa: UP045
    id_field: Annotated[Optional[str], typer.Option(help="JSON/JSONL field holding the record id.")] = None,  # noqa: UP045
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Ingest documents: structure, chunks and vectors (idempotent: unchanged content is skipped)."""
    _logging(verbose)
    with _progress_bar() as progress:
        fields = {"json_title_field": title_field, "json_text_field": text_field, "json_id_field": id_field}
        with _session(store, as_json, progress, **fields) as sg:
            result = sg.ingest(paths, base=base, include=include, exclude=exclude)

    for r in result.documents:
        for w in r.warnings:
            err.print(f"[yellow]warning:[/yellow] {r.source}: {w}", soft_wrap=True)
        if r.error:
            err.print(f"[red]error:[/red] {r.source}: {r.error}", soft_wrap=True)
    counts: dict[str, int] = {}
    for r in result.documents:
        counts[r.status.value] = counts.get(r.status.value, 0) + 1
    human = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to ingest"
    _emit(result.to_json(), as_json, f"ingested: {human}")
    raise typer.Exit(1 if result.failed else 0)


import_app = typer.Typer(help="Import a graph built elsewhere onto the stored documents.", no_args_is_help=True)
app.add_typer(import_app, name="import")


@import_app.command("openie")
def import_openie(
    file: Annotated[Path, typer.Argument(help="HippoRAG's OpenIE output (openie_<model>.json).")],
    replace: Annotated[
        bool, typer.Option("--replace", help="First remove the extractor's entities and facts of the matched documents.")
    ] = False,
    source: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--source", help="Provenance mark of the imported facts (default openie:gpt-3.5)."),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Entities and n-ary facts from an LLM's OpenIE extraction, on the chunks of the already-ingested passages
    (matched by title and text); passages that match no document are reported (exit 1). Idempotent."""
    from stratagraph.ingest.openie import OpenIEError

    _logging(verbose)
    with _session(store, as_json) as sg:
        try:
            report = sg.import_openie(file, replace=replace, source=source)
        except OpenIEError as exc:
            if as_json:
                _emit({"imported": False, "error": str(exc)}, True, "")
            _fail(str(exc))
            raise  # unreachable
    for miss in report.unmatched[:20]:
        err.print(f"[yellow]unmatched:[/yellow] {file}: passage {miss['index']} ({miss['title']!r}): {miss['reason']}",
                  soft_wrap=True)
    if len(report.unmatched) > 20:
        err.print(f"[yellow]unmatched:[/yellow] ... and {len(report.unmatched) - 20} more", soft_wrap=True)
    human = (
        f"imported {report.facts} facts and {report.entities} entities onto {report.documents} documents "
        f"({report.matched} of {report.passages} passages matched; {report.skipped_triples} malformed triples skipped"
        + (f"; {report.removed_facts} facts replaced" if report.removed_facts else "") + ")"
    )
    _emit(report.to_json(), as_json, human)
    raise typer.Exit(1 if report.unmatched else 0)


@app.command()
def stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Counts of nodes per label and edges per type, and the deepest section level."""
    with _session(store, as_json) as sg:
        c = sg.stats()
        info = sg.graph.info()
    data = {
        "nodes": c.nodes,
        "edges": c.edges,
        "max_section_level": c.max_section_level,
        "backend": info.model_dump(),
    }
    width = max(len(k) for k in [*c.nodes, *c.edges])
    lines = ["nodes:"] + [f"  {k:<{width}} {v:>8}" for k, v in c.nodes.items()]
    lines += ["edges:"] + [f"  {k:<{width}} {v:>8}" for k, v in c.edges.items()]
    lines.append(f"max_section_level: {c.max_section_level}")
    lines.append(f"backend: {info.backend} at {info.location}" + (f" ({info.server})" if info.server else ""))
    if info.capabilities:
        lines.append("  capabilities: " + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in info.capabilities.items()))
    lines += [f"  skipped (the server lacks it): {line}" for line in info.skipped]
    _emit(data, as_json, "\n".join(lines))


@app.command()
def export(
    fmt: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--format", help="json (default), graphml (yEd, Gephi), gexf (Gephi) or cypher (Neo4j Browser).",
                     show_default=False),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Canonical, sorted dump of every node and edge to stdout (byte-identical for the same graph), as JSON or
    in another tool's format."""
    from stratagraph.export import FORMATS, render

    if fmt not in (None, "json", *FORMATS):
        _fail(f"--format {fmt!r}: choose from json, {', '.join(FORMATS)}", code=2)
    if as_json and fmt not in (None, "json"):
        _fail(f"--json and --format {fmt} both name the output format; give one", code=2)
    with _session(store, as_json) as sg:
        data = sg.export()
    if fmt in FORMATS:
        sys.stdout.write(render(data, fmt))
    elif as_json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
    else:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n")


@app.command()
def delete(
    doc_id: Annotated[str, typer.Argument(help="The document id (as `ingest --json` reports it).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete a document and everything only it supported; shared nodes stay."""
    from stratagraph.graph_store.base import DocumentNotFound

    with _session(store, as_json) as sg:
        try:
            summary = sg.delete(doc_id)
        except DocumentNotFound as exc:
            if as_json:
                _emit({"doc_id": doc_id, "deleted": False, "error": str(exc)}, True, "")
            _fail(str(exc))
    data = {"deleted": True, **summary.model_dump()}
    _emit(data, as_json, f"deleted {doc_id}: {summary.nodes_deleted} nodes, {summary.edges_deleted} edges")


@app.command()
def migrate(
    to: Annotated[str, typer.Option("--to", help="The backend to copy the graph into (neo4j).")],
    resume: Annotated[
        bool, typer.Option("--resume", help="Complete an interrupted copy into a database that already holds part of it.")
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy the embedded store's graph into the configured Neo4j (NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD,
    NEO4J_DATABASE); vectors stay in Chroma under the same store. Checks that the copy exports identically."""
    import time

    from stratagraph.graph_store import SQLiteGraphStore, StoreUnavailable
    from stratagraph.graph_store.neo4j import Neo4jGraphStore

    if to != "neo4j":
        _fail(f"--to {to!r}: the only target is neo4j", code=2)
    settings = _settings(store)

    def fail(message: str, code: int = 1) -> None:
        if as_json:
            _emit({"migrated": False, "error": message}, True, "")
        _fail(message, code=code)

    if not settings.neo4j_uri:
        fail("migrate --to neo4j needs NEO4J_URI (and NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE as needed)", code=2)
    if not settings.sqlite_path.exists():
        fail(f"no embedded graph store at {settings.sqlite_path} (ingest first, or pass --store)")
    started = time.perf_counter()
    try:
        source = SQLiteGraphStore(settings.sqlite_path)
        try:
            graph = source.export()
        finally:
            source.close()
        with Neo4jGraphStore.from_settings(settings) as target:
            present = target.node_count()
            if present and not resume:
                fail(
                    f"the target {target.info().location} already holds {present} nodes: migrate copies into an "
                    "empty database (--resume completes an interrupted copy of this store)"
                )
            err.print(f"copying {len(graph['nodes'])} nodes and {len(graph['edges'])} edges to {target.info().location}")
            copy_started = time.perf_counter()
            nodes, edges = target.copy_from(graph)
            copy_seconds = time.perf_counter() - copy_started
            copied = target.export()
            location = target.info().location
    except StoreUnavailable as exc:
        fail(str(exc))
        raise  # unreachable
    verified = copied == graph
    data = {
        "migrated": verified,
        "from": str(settings.sqlite_path),
        "to": location,
        "nodes": nodes,
        "edges": edges,
        "verified": verified,
        "copy_seconds": round(copy_seconds, 3),
        "seconds": round(time.perf_counter() - started, 3),
    }
    if not verified:
        data["error"] = "the copy's export differs from the embedded store's (the target held other data?)"
    human = (
        f"migrated {nodes} nodes and {edges} edges to {location}; the export is identical. Vectors stay in "
        f"{settings.chroma_path}: use STRATAGRAPH_GRAPH=neo4j with this store directory."
        if verified
        else f"error: {data['error']}"
    )
    _emit(data, as_json, human)
    raise typer.Exit(0 if verified else 1)


FilterOpt = Annotated[
    list[str], typer.Option("--filter", help="Metadata filter key=value (repeatable; all must hold).")
]


def _filters(pairs: list[str]) -> dict[str, str]:
    from stratagraph.retrieval import RetrievalError
    from stratagraph.retrieval.base import parse_filters

    try:
        return parse_filters(pairs)
    except RetrievalError as exc:
        _fail(str(exc), code=2)
        raise  # unreachable


def _within_limits(store: Path | None, question: str, k: int | None, where: dict[str, str]) -> None:
    """Refuse (exit 2) a question, k or filter over the settings' limits (stratagraph/limits.py)."""
    from stratagraph.limits import LimitExceeded, check_request

    try:
        check_request(_settings(store), question, k, where)
    except LimitExceeded as exc:
        _fail(str(exc), code=2)


def _strategy_names() -> str:
    from stratagraph.retrieval import STRATEGIES

    return ", ".join(STRATEGIES)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    strategy: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional
        typer.Option(
            "--strategy",
            "-s",
            help="An answering workflow (auto, tqr, kag, bag, lesegr, hybrid; default auto, which routes the "
            "question); with --retrieve-only a retrieval strategy (default: default).",
            show_default=False,
        ),
    ] = None,
    retrieve_only: Annotated[
        bool, typer.Option("--retrieve-only", help="Print the ranked evidence only (no workflow, no LLM).")
    ] = False,
    k: Annotated[Optional[int], typer.Option("--k", min=1, help="How many chunks of evidence.")] = None,  # noqa: UP045
    filters: FilterOpt = [],  # noqa: B006
    thread: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--thread", help="Answer as one turn of this conversation thread (strategy auto).", show_default=False),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Answer a question with one workflow, with numbered citations (source, section, quote); node events go
    to stderr as they happen. With --retrieve-only: the ranked evidence of one retrieval strategy."""
    _logging(verbose)
    where = _filters(filters)
    _within_limits(store, question, k, where)
    if retrieve_only:
        _retrieve_only(question, strategy or "default", k or 5, where, store, as_json)
        return
    from stratagraph.llm import LLMUnavailable
    from stratagraph.workflows import ANSWERING, get_workflow, workflow_name

    if thread is not None or (strategy or "auto") == "auto":
        if strategy not in (None, "auto"):
            _fail("--thread holds a conversation, which routes each question itself (strategy auto)", code=2)
        _converse_once(question, thread, store, as_json)
        return
    name = strategy or "auto"
    try:
        name = workflow_name(name)
    except ValueError:
        name = ""
    if name not in ANSWERING:
        _fail(
            f"unknown workflow {strategy!r}; choose from {', '.join(ANSWERING)} (retrieval strategies need "
            "--retrieve-only)",
            code=2,
        )
    inputs: dict[str, Any] = {"question": question}
    if where:
        inputs["filters"] = where
    if k:
        inputs["k"] = k
    with _session(store, as_json) as sg:
        answer = None
        try:
            for update in get_workflow(name).stream(inputs, context=sg.services, stream_mode="updates"):
                for node, value in update.items():
                    for entry in (value or {}).get("trace", []):
                        err.print(f"[dim]{node}[/dim] {entry.decision} ({entry.ms:.0f} ms)" + (
                            f" [yellow]fallback: {entry.fallback}[/yellow]" if entry.fallback else ""))  # fmt: skip
                        _print_flags(entry)
                    if (value or {}).get("answer") is not None:
                        answer = value["answer"]
        except LLMUnavailable as exc:
            _fail(str(exc))
        if answer is None:  # pragma: no cover - every workflow ends in an answer
            _fail("the workflow gave no answer")
    _emit(answer.model_dump(mode="json"), as_json, answer.render())


def _print_flags(entry: Any) -> None:
    """The passages a node read that address the model (stratagraph/text/injection.py), one line each."""
    from rich.markup import escape

    for flag in entry.flags:
        err.print(f"  [red]flag:[/red] {escape(flag)}", markup=True, highlight=False)


def _print_event(event: Any, streamed: list[bool]) -> None:
    """A conversation event on the terminal: node updates to stderr, reply tokens to stdout as they come."""
    if event.kind == "node" and event.node is not None:
        e = event.node
        err.print(f"[dim]{e.node}[/dim] {e.decision} ({e.ms:.0f} ms)" + (f" [yellow]fallback: {e.fallback}[/yellow]" if e.fallback else ""))
        _print_flags(e)
    elif event.kind == "token":
        if not streamed[0]:
            streamed[0] = True
        sys.stdout.write(event.token)
        sys.stdout.flush()


def _converse_once(question: str, thread: str | None, store: Path | None, as_json: bool) -> None:
    """One turn of the chat workflow: in a remembered thread, or (no thread) without memory."""
    from stratagraph.conversation import Conversation
    from stratagraph.llm import LLMUnavailable

    with _session(store, as_json) as sg:
        convo = sg.chat(thread) if thread else Conversation.ephemeral(sg.services)
        streamed = [False]
        final = None
        try:
            for event in convo.stream(question):
                if event.kind == "answer":
                    final = event
                elif not as_json:
                    _print_event(event, streamed)
                elif event.kind == "node" and event.node is not None:
                    err.print(f"[dim]{event.node.node}[/dim] {event.node.decision} ({event.node.ms:.0f} ms)")
        except LLMUnavailable as exc:
            _fail(str(exc))
    if final is None or final.answer is None:  # pragma: no cover - every turn ends in an answer
        _fail("the conversation gave no answer")
    if as_json:
        print(json.dumps({**final.answer.model_dump(mode="json"), "thread_id": convo.thread_id if thread else None}))
    elif streamed[0]:
        print()
    else:
        print(final.reply or final.answer.render())


def _retrieve_only(question: str, strategy: str, k: int, where: dict[str, str], store: Path | None, as_json: bool) -> None:
    from stratagraph.retrieval import STRATEGIES, RetrievalError

    if strategy not in STRATEGIES:
        _fail(f"unknown strategy {strategy!r}; choose from {_strategy_names()}", code=2)
    with _session(store, as_json) as sg:
        try:
            result = sg.retrieve(question, strategy=strategy, k=k, filters=where)
        except RetrievalError as exc:
            _fail(str(exc), code=2)
    evidence = [
        {
            "rank": e.rank,
            "score": round(e.score, 6),
            "doc_id": e.doc_id,
            "source": e.source,
            "title": e.title,
            "section": e.section,
            "chunk_id": e.chunk_id,
            "text": e.text,
        }
        for e in result.evidence
    ]
    lines = [f"{question}  [{strategy}]"]
    for e in result.evidence:
        text = " ".join(e.text.split())
        lines.append(f"{e.citation()}  score {e.score:.4f}\n    {text[:300]}{'…' if len(text) > 300 else ''}")
    if not result.evidence:
        lines.append("(no evidence: the store is empty or nothing matched)")
    _emit({"question": question, "strategy": strategy, "evidence": evidence}, as_json, "\n".join(lines))


@app.command()
def chat(
    thread: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--thread", help="Resume (or start) this conversation thread; default: a new one.", show_default=False),
    ] = None,
    store: StoreOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Hold a conversation over the store's documents (each question rewritten, routed and answered with
    citations); the thread is remembered in the store and resumes after a restart. Empty line or Ctrl-D ends."""
    from rich.console import Console
    from rich.prompt import Prompt

    from stratagraph.llm import LLMUnavailable

    _logging(verbose)
    out = Console(highlight=False)
    with _session(store, False) as sg:
        convo = sg.chat(thread)
        earlier = convo.history()
        out.print(f"[bold]thread {convo.thread_id}[/bold]" + (f" ({len(earlier)} messages so far)" if earlier else " (new)"))
        while True:
            try:
                message = Prompt.ask("[bold cyan]you[/bold cyan]", console=out).strip()
            except (EOFError, KeyboardInterrupt):
                break
            if not message:
                break
            streamed = [False]
            try:
                for event in convo.stream(message):
                    if event.kind == "answer" and event.answer is not None:
                        if streamed[0]:
                            out.print()
                        else:
                            out.print(event.reply or event.answer.render())
                    else:
                        _print_event(event, streamed)
            except LLMUnavailable as exc:
                err.print(f"[red]{exc}[/red]")
    out.print(f"(resume with: stratagraph chat --thread {convo.thread_id})")


HostOpt = Annotated[str, typer.Option("--host", help="Address to bind (anything but loopback needs STRATAGRAPH_HTTP_TOKEN).")]
PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")]


def _token(settings: Any, host: str) -> str | None:
    """The bearer token from the settings; exit 2 when binding beyond loopback without one."""
    from stratagraph.http_access import AccessError, check_binding

    token = settings.http_token.get_secret_value() if settings.http_token else None
    try:
        check_binding(host, token)
    except AccessError as exc:
        _fail(str(exc), code=2)
    return token


@app.command()
def mcp(
    transport: Annotated[str, typer.Option("--transport", help="stdio (for a client that starts the server) or http (streamable HTTP at /mcp).")] = "stdio",
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8000,
    allow_folder: Annotated[
        list[Path],
        typer.Option("--allow-folder", help="A folder MCP clients may ingest from and delete documents of (repeatable; none: no ingest, no delete)."),
    ] = [],  # noqa: B006
    store: StoreOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Serve the store over the Model Context Protocol: read tools, every answering workflow as an ask_* tool
    with the Answer as structured content, documents and sections as resources."""
    from stratagraph.mcp_server import build_server, run
    from stratagraph.mcp_server.folders import AllowedFolders

    _logging(verbose)
    if transport not in ("stdio", "http"):
        _fail(f"--transport {transport!r}: choose stdio or http", code=2)
    settings = _settings(store)
    token = _token(settings, host) if transport == "http" else None
    try:
        allowed = AllowedFolders.of([*settings.mcp_allowed_folders, *allow_folder])
    except ValueError as exc:
        _fail(str(exc), code=2)
        raise  # unreachable
    with _session(store, False) as sg:
        server = build_server(sg, allowed=allowed, host=host, port=port)
        if transport == "http":
            err.print(f"MCP over streamable HTTP at http://{host}:{port}/mcp" + (" (bearer token required)" if token else ""))
        run(server, transport, token=token)


@app.command()
def serve(
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8000,
    store: StoreOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """A local web page over the store: conversations in threads (streamed replies, citations that open their
    passage, the trace per node, the evidence graph), the documents with their heading trees and entities,
    and the store's counts."""
    from stratagraph.web import serve as serve_page

    _logging(verbose)
    settings = _settings(store)
    token = _token(settings, host)
    with _session(store, False) as sg:
        where = f"http://{host}:{port}/" + ("?token=<STRATAGRAPH_HTTP_TOKEN>" if token else "")
        err.print(f"stratagraph serve: {where} (store {settings.home})")
        serve_page(sg, host, port, token)


threads_app = typer.Typer(help="The conversation threads the store remembers.", invoke_without_command=True)
app.add_typer(threads_app, name="threads")


@threads_app.callback()
def threads(ctx: typer.Context, store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the conversation threads (id, turns, last update, first message)."""
    if ctx.invoked_subcommand is not None:
        return
    with _session(store, as_json) as sg:
        rows = sg.threads()
    human = "\n".join(f"{r['thread_id']}  {r['turns']} turns, last {r['updated'][:19]}  {r['first_message'][:60]!r}" for r in rows) or "(no threads)"
    _emit({"threads": rows}, as_json, human)


@threads_app.command("delete")
def threads_delete(thread_id: Annotated[str, typer.Argument(help="The thread to forget.")], store: StoreOpt = None) -> None:
    """Forget one conversation thread."""
    with _session(store, False) as sg:
        if not sg.delete_thread(thread_id):
            _fail(f"unknown thread {thread_id!r}", code=2)
    err.print(f"deleted thread {thread_id}")


eval_app = typer.Typer(help="Measure retrieval or answering on a benchmark dataset.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


ReportOpt = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional
    typer.Option("--report", help="Also write report.html (tables, inline SVG plots) and report.json into this folder."),
]


def _write_report(report: dict[str, Any], kind: str, folder: Path | None) -> None:
    if folder is None:
        return
    from stratagraph.eval.report import write_report

    html = write_report(report, kind, folder)
    err.print(f"report: {html}")


@eval_app.command("retrieval")
def eval_retrieval(
    dataset: Annotated[str, typer.Option("--dataset", help="A dataset name under $STRATAGRAPH_DATA_DIR, or a folder.")],
    strategies: Annotated[
        str, typer.Option("--strategies", help="Comma-separated strategy names.")
    ] = "vector,lexical,rrf,ppr",
    ks: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs for recall@k.")] = "2,5",
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the first N questions.")] = None,  # noqa: UP045
    filters: FilterOpt = [],  # noqa: B006
    report_dir: ReportOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Recall@k, hit@1/3 and latency of each strategy, side by side in one run. The corpus is ingested once
    into a store cached under <store>/eval/ (keyed by corpus hash and settings)."""
    from stratagraph.eval.datasets import DatasetError
    from stratagraph.eval.retrieval import evaluate, format_table
    from stratagraph.graph_store.base import StoreUnavailable
    from stratagraph.retrieval import RetrievalError

    _logging(verbose)
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    try:
        cutoffs = [int(x) for x in ks.split(",") if x.strip()]
    except ValueError:
        _fail(f"--k takes comma-separated integers, not {ks!r}", code=2)
    where = _filters(filters)
    settings = _settings(store)
    try:
        with _progress_bar() as progress:
            report = evaluate(dataset, names, cutoffs, settings, limit=limit, filters=where, progress=progress)
    except (DatasetError, RetrievalError) as exc:
        _fail(str(exc), code=2)
    except (StoreUnavailable, RuntimeError) as exc:
        _fail(str(exc))
    _write_report(report, "retrieval", report_dir)
    _emit(report, as_json, format_table(report))


@eval_app.command("generate")
def eval_generate(
    out: Annotated[Path, typer.Option("--out", help="Folder to write questions.jsonl into.")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many questions.")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the (deterministic) choice.")] = 0,
    reword: Annotated[bool, typer.Option("--reword", help="Reword each question with the chat model as a user "
                                         "would ask it (kept as generated when the rewording drops a label, a "
                                         "period or a number, or states the answer).")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Questions from the current store's graph, no model needed (table cells, sums and comparisons over rows,
    sections, citation hops, 2-hop chains, changes between periods), each with its answer and gold chunks;
    run them with `eval qa --dataset OUT` or `eval retrieval --dataset OUT` (against the current store)."""
    from collections import Counter

    from stratagraph.eval.generate import NEEDS, candidates, generate, supported, write_questions

    _logging(verbose)
    from stratagraph.llm import LLMUnavailable

    reworded: dict | None = None
    with _session(store, as_json) as sg:
        found = candidates(sg.services.graph)
        questions = generate(sg.services.graph, n=n, seed=seed, found=found)
        if reword:
            from stratagraph.eval.reword import reword as reword_questions

            if sg.services.llm is None:
                _fail("--reword needs a chat model (STRATAGRAPH_LLM_MODEL and OPENAI_BASE_URL)", code=2)
            try:
                questions, reworded = reword_questions(questions, sg.services.llm)
            except LLMUnavailable as exc:
                _fail(str(exc))
    path = write_questions(questions, out)
    kinds = dict(sorted(Counter(q.kind for q in questions).items()))
    report: dict = {"questions": len(questions), "path": str(path), "kinds": kinds}
    text = f"{len(questions)} questions -> {path}\n" + "\n".join(f"  {k}: {v}" for k, v in kinds.items())
    if reworded is not None:
        report["reword"] = reworded
        text += (f"\nreworded {reworded['reworded']}, kept as generated {reworded['kept']}"
                 + "".join(f"\n  kept: {why} ({k})" for why, k in reworded["reasons"].items()))  # fmt: skip
    if len(questions) < n:  # say why: every question the graph supports was taken
        support = supported(found)
        report["supported"] = support
        report["short"] = {k: NEEDS[k] for k, v in support.items() if v == 0}
        text += (f"\nThe documents support only {len(questions)} questions, not {n}: every candidate was taken "
                 f"({', '.join(f'{k} {v}' for k, v in support.items())}).\nKinds with none, and what they need:\n"
                 + "\n".join(f"  {k}: {need}" for k, need in report["short"].items()))  # fmt: skip
    _emit(report, as_json, text)


@eval_app.command("qa")
def eval_qa(
    dataset: Annotated[str, typer.Option("--dataset", help="A dataset name under $STRATAGRAPH_DATA_DIR, or a folder.")],
    strategies: Annotated[
        str, typer.Option("--strategies", help="Comma-separated workflows (tqr,kag,bag,lesegr,hybrid) and/or first_sentence.")
    ] = "tqr,kag,bag,lesegr,hybrid,first_sentence",
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the first N questions.")] = None,  # noqa: UP045
    metrics: Annotated[str, typer.Option("--metrics", help="Comma-separated: gold_recall, citation_validity, "
                                         "computed_share (no model); faithfulness, answer_relevance, "
                                         "context_precision, context_recall (a chat model judges).")] = "",
    judge_only: Annotated[bool, typer.Option("--judge-only", help="The workflows answer without the chat model "
                                             "(their no-model path); the model only judges the --metrics.")] = False,
    report_dir: ReportOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """EM, F1, found rate, LLM calls and latency of each workflow, side by side in one run (SQuAD
    normalisation, best over accepted answers). The corpus is ingested once into a store cached under
    <store>/eval/."""
    from stratagraph.eval.datasets import DatasetError
    from stratagraph.eval.qa import evaluate_qa, format_qa
    from stratagraph.graph_store.base import StoreUnavailable
    from stratagraph.llm import LLMUnavailable

    _logging(verbose)
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    settings = _settings(store)
    try:
        with _progress_bar() as progress:
            report = evaluate_qa(dataset, names, settings, limit=limit, progress=progress,
                                 metrics=[m.strip() for m in metrics.split(",") if m.strip()], judge_only=judge_only)
    except DatasetError as exc:
        _fail(str(exc), code=2)
    except (StoreUnavailable, LLMUnavailable, RuntimeError) as exc:
        _fail(str(exc))
    _write_report(report, "qa", report_dir)
    for row in report["results"].values():
        row.pop("answers", None)
    _emit(report, as_json, format_qa(report))


def run() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    app()

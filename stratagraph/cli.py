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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    _logging(verbose)
    with Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

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


@app.command()
def stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Counts of nodes per label and edges per type, and the deepest section level."""
    with _session(store, as_json) as sg:
        c = sg.stats()
    data = {"nodes": c.nodes, "edges": c.edges, "max_section_level": c.max_section_level}
    width = max(len(k) for k in [*c.nodes, *c.edges])
    lines = ["nodes:"] + [f"  {k:<{width}} {v:>8}" for k, v in c.nodes.items()]
    lines += ["edges:"] + [f"  {k:<{width}} {v:>8}" for k, v in c.edges.items()]
    lines.append(f"max_section_level: {c.max_section_level}")
    _emit(data, as_json, "\n".join(lines))


@app.command()
def export(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Canonical, sorted dump of every node and edge (byte-identical for the same graph)."""
    with _session(store, as_json) as sg:
        data = sg.export()
    if as_json:
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


def run() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    app()

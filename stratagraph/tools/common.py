"""What every stratagraph tool shares: how a tool is built, how errors reach the model, how evidence is
written for it, and how an entity named by the model is found in the graph.

Conventions (every tool in :mod:`stratagraph.tools`):

* Arguments are a pydantic model whose ``Field`` descriptions tell a model what to pass.
* The tool returns ``(content, artifact)`` (``response_format="content_and_artifact"``): ``content`` is text
  for the model; ``artifact`` is for the program around it. Evidence tools number their passages ``[n]``
  in the text and return the passages as LangChain ``Document`` s (``id`` = chunk id, provenance in
  ``metadata``: ``chunk_id``, ``doc_id``, ``title``, ``section``, ``source``, ``rank``...). Other graph
  objects (entities, facts, triples, sections, communities) come as ``Document`` s whose ``metadata["kind"]``
  names what they are; chunk documents are those with ``metadata["chunk_id"]``.
* A request the tool cannot serve (unknown id, unknown strategy, bad expression) raises
  :class:`~langchain_core.tools.ToolException`; tools are built with ``handle_tool_error`` and
  ``handle_validation_error``, so an agent loop gets the message back as an error ``ToolMessage`` and can
  correct itself instead of crashing.
* Tools only read: no store writes, no LLM; the one Cypher tool (``read_cypher``, Neo4j backend only) runs
  vetted read-only queries in read transactions through the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool, ToolException
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel, ValidationError

from stratagraph.graph_store.base import DocumentNotFound, StoreUnavailable
from stratagraph.limits import LimitExceeded, check_request
from stratagraph.retrieval import RetrievalContext, RetrievalError, RetrievalResult, retrieve
from stratagraph.retrieval.base import Evidence, Filters
from stratagraph.schema import Node, NodeLabel

ToolOutput = tuple[str, Any]
A = TypeVar("A", bound=BaseModel)

MAX_K = 50  # the most items a tool lists in one call
MAX_PASSAGE_CHARS = 2000  # a passage longer than this is cut in the text for the model (not in the artifact)
ENTITY_COLLECTION = "entities"
FACT_COLLECTION = "facts"
SUGGESTIONS = 3  # closest entity names offered when a name is not found

#: the types a metadata filter value may have in a tool schema
FilterValue = str | int | float | bool


# ------------------------------------------------------------------------------------------ building


def validation_message(error: ValidationError | Exception) -> str:
    """A ``handle_validation_error`` handler: which argument was wrong and why, in one line."""
    if isinstance(error, ValidationError):
        parts = []
        for e in error.errors():
            where = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
            got = e.get("input")
            shown = ""
            if e.get("loc") and got is not None and not isinstance(got, dict):  # a dict is the whole input
                shown = f" (got {clip(repr(got), 80)})"
            parts.append(f"{where}: {e.get('msg', 'invalid')}{shown}")
        return "Invalid tool arguments: " + "; ".join(parts)
    return f"Invalid tool arguments: {error}"


def context_of(runtime: ToolRuntime | None) -> RetrievalContext:
    """The retrieval context a tool reads when none is bound: the run's context (LangGraph passes the graph's
    :class:`~stratagraph.services.Services`, or a :class:`RetrievalContext`, as ``runtime.context``), else the
    process's default services (built from the environment's settings, as under ``langgraph dev``)."""
    context = getattr(runtime, "context", None)
    if isinstance(context, RetrievalContext):
        return context
    retrieval = getattr(context, "retrieval", None)
    if isinstance(retrieval, RetrievalContext):
        return retrieval
    from stratagraph.services import default_services

    return default_services().retrieval


def build_tool(
    ctx: RetrievalContext | None,
    name: str,
    description: str,
    args_schema: type[A],
    impl: Callable[[RetrievalContext, A], ToolOutput],
) -> StructuredTool:
    """A LangChain tool running ``impl(ctx, args)`` with the validated arguments model. With ``ctx`` the tool
    is bound to it; with None it reads the context of the run it is called in (:func:`context_of`: a
    ``ToolNode`` injects ``runtime``). Store and retrieval errors a model can act on become
    :class:`ToolException`."""
    first_field = next(iter(args_schema.model_fields))

    def run(*positional: Any, runtime: ToolRuntime = None, **kwargs: Any) -> ToolOutput:  # type: ignore[assignment]
        if positional:  # tool.invoke("text") passes the string as the first argument
            kwargs = {first_field: positional[0], **kwargs}
        try:
            args = args_schema.model_validate(kwargs)
        except ValidationError as exc:
            raise ToolException(validation_message(exc)) from exc
        with tool_errors():
            context = ctx if ctx is not None else context_of(runtime)
            check_request(
                context.settings, getattr(args, "query", None), getattr(args, "k", None), getattr(args, "filters", None)
            )
            return impl(context, args)

    return StructuredTool.from_function(
        func=run,
        name=name,
        description=description,
        args_schema=args_schema,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=validation_message,
    )


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn the errors a caller can act on (bad request, unknown id, store down) into ToolException."""
    try:
        yield
    except ToolException:
        raise
    except (RetrievalError, DocumentNotFound, LimitExceeded) as exc:
        raise ToolException(str(exc)) from exc
    except StoreUnavailable as exc:
        raise ToolException(f"the store is unavailable: {exc}") from exc


def run_strategy(
    ctx: RetrievalContext, strategy: str, query: str, k: int, filters: Filters | None
) -> RetrievalResult:
    """``stratagraph.retrieval.retrieve`` with the failures a model can act on as ToolException."""
    try:
        return retrieve(ctx, strategy, query, k=k, filters=filters or None)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("stratagraph.retrieval."):
            raise ToolException(f"retrieval strategy {strategy!r} is not available in this installation") from exc
        raise


# ------------------------------------------------------------------------------------------ evidence


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 passage``, ``2 passages``."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def clip(text: str, limit: int = MAX_PASSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def evidence_line(ev: Evidence) -> str:
    """``[n] Title § Section (source) | chunk <id>``: how a passage is cited."""
    return f"{ev.citation()} | chunk {ev.chunk_id}"


def format_evidence(evidence: Sequence[Evidence]) -> str:
    """Numbered passages: citation line with chunk id and score, then the (clipped) text."""
    from stratagraph.tools.flags import passage_note

    def one(ev: Evidence) -> str:
        note = passage_note(ev.text)  # a passage that addresses the model is marked as data
        return f"{evidence_line(ev)} | score {ev.score:.4f}\n{clip(ev.text)}" + (f"\n{note}" if note else "")

    return "\n\n".join(one(ev) for ev in evidence)


def evidence_documents(evidence: Sequence[Evidence]) -> list[Document]:
    return [e.to_document() for e in evidence]


def evidence_output(header: str, evidence: Sequence[Evidence], empty: str, footer: str = "") -> ToolOutput:
    """The usual evidence answer: header, numbered passages, an instruction to cite them."""
    if not evidence:
        text = f"{header}\n{empty}" if header else empty
        return (f"{text}\n\n{footer}".rstrip() if footer else text), []
    body = format_evidence(evidence)
    parts = [header, body, "Cite passages as [n]."]
    if footer:
        parts.append(footer)
    return "\n\n".join(p for p in parts if p), evidence_documents(evidence)


def node_document(kind: str, node_id: str, text: str, **metadata: Any) -> Document:
    """A non-chunk graph object as a Document (``metadata["kind"]`` says which)."""
    return Document(id=node_id, page_content=text, metadata={"kind": kind, "node_id": node_id, **metadata})


def compact(value: Any, limit: int = 300) -> str:
    """A one-line JSON rendering of a context value, cut at ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------------------------------ entities


def entity_key(name: str) -> str:
    from stratagraph.text.names import entity_key as _key

    return _key(name)


def find_entity(ctx: RetrievalContext, ref: str) -> Node | None:
    """The Entity a model named: by id (``ent:...``), else by exact name or alias (normalised key)."""
    ref = ref.strip()
    if not ref:
        return None
    node = ctx.graph.get_node(ref)
    if node is not None:
        return node if node.label == NodeLabel.ENTITY else None
    key = entity_key(ref)
    if not key:
        return None
    row = ctx.vectors.get_metadata(ENTITY_COLLECTION, [key]).get(key)
    candidates = [str(row["entity_id"])] if row and row.get("entity_id") else []
    candidates.append(f"ent:{key}")
    for node in ctx.graph.get_nodes(list(dict.fromkeys(candidates))):
        if node.label == NodeLabel.ENTITY:
            return node
    return None


def similar_entities(ctx: RetrievalContext, text: str, k: int) -> list[tuple[str, float, str]]:
    """``(entity_id, cosine, matched name)`` of the entities whose name or alias is nearest ``text``, one row
    per entity (the entities collection has a row per name), best first then id."""
    if k <= 0 or not text.strip():
        return []
    hits = ctx.vectors.query(ENTITY_COLLECTION, embedding=ctx.query_vector(text), k=4 * k + 8)
    metas = ctx.vectors.get_metadata(ENTITY_COLLECTION, [h.id for h in hits])
    best: dict[str, tuple[float, str]] = {}
    for hit in hits:
        meta = metas.get(hit.id) or {}
        eid = str(meta.get("entity_id") or f"ent:{hit.id}")
        name = str(meta.get("name") or hit.id)
        if eid not in best or hit.score > best[eid][0]:
            best[eid] = (hit.score, name)
    ordered = sorted(best.items(), key=lambda kv: (-round(kv[1][0], 12), kv[0]))
    return [(eid, score, name) for eid, (score, name) in ordered[:k]]


def require_entity(ctx: RetrievalContext, ref: str) -> Node:
    """:func:`find_entity` or a ToolException naming ``ref`` and the closest known names."""
    node = find_entity(ctx, ref)
    if node is not None:
        return node
    raise ToolException(f"unknown entity {ref!r}.{suggestion_text(ctx, ref)}")


def suggestion_text(ctx: RetrievalContext, ref: str) -> str:
    near = similar_entities(ctx, ref, SUGGESTIONS)
    if not near:
        return " The store has no entities."
    nodes = {n.id: n for n in ctx.graph.get_nodes([e for e, _, _ in near])}
    names = [f"{nodes[e].props.get('name') or name} [{e}]" for e, _, name in near if e in nodes]
    if not names:
        return ""
    return " Closest entities: " + "; ".join(names) + ". Pass an entity id or an exact name (search_entities finds them)."


def entity_label(node: Node) -> str:
    """``Name [id] (TYPE)``."""
    name = str(node.props.get("name") or node.id)
    type_ = str(node.props.get("type") or "")
    return f"{name} [{node.id}]" + (f" ({type_})" if type_ else "")


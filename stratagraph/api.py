"""``StrataGraph``: the Python entry point (DESIGN.md "Interfaces")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stratagraph.config import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

    from stratagraph.answers import Answer
    from stratagraph.conversation import Conversation
    from stratagraph.ingest.openie import OpenIEReport
    from stratagraph.retrieval import RetrievalContext, RetrievalResult
    from stratagraph.retrieval.langchain import GraphRetriever
from stratagraph.graph_store.base import DeleteSummary, GraphCounts, GraphStore
from stratagraph.schema import IngestReport, IngestStatus
from stratagraph.services import ProgressFn, Services


class IngestResult(BaseModel):
    documents: list[IngestReport]

    @property
    def failed(self) -> int:
        return sum(1 for r in self.documents if r.status == IngestStatus.FAILED)

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": [
                {"source": r.source, "doc_id": r.doc_id, "status": r.status.value, "error": r.error}
                for r in self.documents
            ],
            "failed": self.failed,
        }


class StrataGraph:
    """One store (graph + vectors) and the workflows over it.

    >>> sg = StrataGraph(Settings(home="./.stratagraph"))   # doctest: +SKIP
    >>> sg.ingest(["examples"]).failed                        # doctest: +SKIP
    0
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        progress: ProgressFn | None = None,
        chat_model: BaseChatModel | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.services = Services(self.settings, progress=progress, chat_model=chat_model)

    # ------------------------------------------------------------------ stores
    @property
    def graph(self) -> GraphStore:
        return self.services.graph

    @property
    def vectors(self):  # noqa: ANN201 - VectorStore, imported lazily (Chroma is heavy)
        return self.services.vectors

    def close(self) -> None:
        self.services.close()

    def __enter__(self) -> StrataGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ ingestion
    def ingest(
        self,
        paths: Sequence[str | Path],
        *,
        base: str | Path | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> IngestResult:
        """Load files and folders into the graph. Idempotent: unchanged content is skipped, changed content
        replaces the document's old version without orphans."""
        out = self.workflow("ingest").invoke(
            {
                "paths": [str(p) for p in paths],
                "base": str(base) if base is not None else None,
                "include": list(include),
                "exclude": list(exclude),
            },
            context=self.services,
        )
        return IngestResult(documents=out.get("reports", []))

    def delete(self, doc_id: str) -> DeleteSummary:
        """Remove a document and everything only it supported (raises DocumentNotFound), then repair what
        pointed at it: other chunks' SIMILAR lists are recomputed and entity-name rows follow the entities."""
        from stratagraph.ingest.delete import delete_document

        return delete_document(self.services, doc_id)

    def import_openie(self, path: str | Path, *, replace: bool = False, source: str | None = None) -> OpenIEReport:
        """Put HippoRAG's OpenIE output (per passage: title, text, ``extracted_entities``, ``extracted_triples``)
        on the stored documents it matches, as entities and n-ary facts marked ``source`` (default
        ``openie:gpt-3.5``). ``replace`` first takes out the extractor's entities and facts of those documents;
        without it both graphs stand side by side. Idempotent; raises ``OpenIEError`` for a malformed file
        (nothing written). See ``stratagraph/ingest/openie.py``."""
        from stratagraph.ingest.openie import DEFAULT_SOURCE, import_openie

        return import_openie(self.services, path, replace=replace, source=source or DEFAULT_SOURCE)

    # ------------------------------------------------------------------ inspection
    def stats(self) -> GraphCounts:
        return self.graph.counts()

    def export(self) -> dict[str, Any]:
        return self.graph.export()

    # ------------------------------------------------------------------ retrieval
    @property
    def context(self) -> RetrievalContext:
        """What retrievers and tools read: the stores plus their per-store caches (one per StrataGraph)."""
        return self.services.retrieval

    def retrieve(
        self, question: str, strategy: str = "default", k: int = 5, filters: Mapping[str, Any] | None = None
    ) -> RetrievalResult:
        """Ranked evidence for a question by one named strategy (no LLM; ``default`` when none is named)."""
        from stratagraph.limits import check_request
        from stratagraph.retrieval import retrieve

        check_request(self.settings, question, k, filters)
        return retrieve(self.context, strategy, question, k=k, filters=filters)

    def retriever(self, name: str = "default", k: int = 5, filters: Mapping[str, Any] | None = None) -> GraphRetriever:
        """A LangChain ``BaseRetriever`` of one strategy (DESIGN.md names table); Documents have ``id`` =
        chunk id and provenance in metadata."""
        from stratagraph.limits import check_request
        from stratagraph.retrieval import check_filters, get_strategy
        from stratagraph.retrieval.langchain import GraphRetriever

        check_request(self.settings, k=k, filters=filters)
        check_filters(filters)
        get_strategy(name)  # an unknown name raises RetrievalError listing the known ones
        return GraphRetriever(self.context, strategy=name, k=k, filters=dict(filters or {}))

    def tools(self) -> list[BaseTool]:
        """The LangChain tools agents call (search, entities, facts, traversal, sections, PPR, calculate)."""
        from stratagraph.tools import make_tools

        return make_tools(self.context)

    # ------------------------------------------------------------------ workflows
    def ask(
        self,
        question: str,
        strategy: str | None = None,
        filters: Mapping[str, Any] | None = None,
        k: int | None = None,
    ) -> Answer:
        """Answer a question with one workflow (``tqr``, ``kag``, ``bag``, ``lesegr``, ``hybrid``; DESIGN.md
        names table): a cited :class:`~stratagraph.answers.Answer`, with or without a chat model."""
        from stratagraph.workflows import DEFAULT_WORKFLOW, ask

        if not isinstance(question, str) or not question.strip():
            raise ValueError("the question is empty")
        return ask(self.services, strategy or DEFAULT_WORKFLOW, question.strip(), dict(filters or {}) or None, k)

    def as_tool(self, name: str = "hybrid", description: str | None = None) -> BaseTool:
        """An answering workflow as a LangChain tool (``ask_<name>``): the model gets the cited answer as text,
        the ``ToolMessage`` carries the full :class:`~stratagraph.answers.Answer` as its artifact."""
        from stratagraph.workflows.langchain import workflow_tool

        return workflow_tool(self.services, name, description)

    def runnable(self, name: str = "hybrid") -> Runnable:
        """An answering workflow as a LangChain ``Runnable``: a question (or ``{"question", "filters"}``) in,
        the :class:`~stratagraph.answers.Answer` out; composes in LCEL chains."""
        from stratagraph.workflows.langchain import workflow_runnable

        return workflow_runnable(self.services, name)

    def chat(self, thread_id: str | None = None) -> Conversation:
        """A conversation (the ``chat`` workflow: rewrite, route, answer) remembered in the store under
        ``thread_id`` (a new one when None): ``.ask(message) -> Answer``, ``.stream(message)``, ``.history()``."""
        from stratagraph.conversation import Conversation

        return Conversation(self.services, thread_id)

    def threads(self) -> list[dict[str, Any]]:
        """The conversation threads the store remembers."""
        return self.services.checkpoints.threads()

    def delete_thread(self, thread_id: str) -> bool:
        """Forget a conversation thread; False when there was none."""
        return self.services.checkpoints.delete(thread_id)

    def workflow(self, name: str):  # noqa: ANN201 - a compiled LangGraph graph
        """A compiled LangGraph workflow by its name or module (DESIGN.md names table); invoke it with
        ``context=self.services``."""
        from stratagraph.workflows import get_workflow

        try:
            return get_workflow(name)
        except ValueError as exc:
            raise KeyError(str(exc)) from exc

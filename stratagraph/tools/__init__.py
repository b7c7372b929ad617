"""LangChain tools with pydantic argument schemas wrapping retrieval and store reads; what agent nodes call.

``make_tools(ctx)`` builds every tool bound to one :class:`~stratagraph.retrieval.RetrievalContext` (what
``StrataGraph.tools()`` hands a LangChain app); ``make_tools()`` builds them unbound, reading their context
from the run they are called in (a LangGraph ``ToolNode`` injects ``ToolRuntime``; its ``context`` is the
graph's :class:`~stratagraph.services.Services`), so graphs compiled at import time (``langgraph.json``)
serve whatever store the run is given; ``get_tool(ctx, name)`` builds one. All of them read only, return ``(content, artifact)`` (text for the model,
``Document`` s or a dict for the program; see :mod:`stratagraph.tools.common`) and hand errors back as an
error ``ToolMessage`` instead of raising, so an agent loop can recover.

===========================  ==================================================================================
``search_chunks``            passages by any retrieval strategy (default ``rrf``), metadata filters
``search_entities``          entities by name similarity, with type, description, aliases
``search_facts``             n-ary facts by similarity, with confidence, entities and supporting passages
``expand_entity``            an entity's facts, RELATED triples and the passages that mention it (one hop);
                             ``kind``: also its neighbours of that kind
``search_concepts``          the entities of a kind through the concept layer (BELONGS_TO, then IS_A)
``traverse``                 BiG-RAG adaptive traversal (strategy ``traversal``)
``browse_sections``          the document / section tree, level by level, with chunk counts
``aggregate_communities``    BAG-RAG bottom-up communities (strategy ``bottom_up``)
``personalized_pagerank``    nodes ranked by personalised PageRank from seed entities
``calculate``                exact decimal arithmetic over an ``ast`` whitelist (no eval)
``read_cypher``              a vetted read-only Cypher query (only on a Cypher backend: Neo4j)
===========================  ==================================================================================
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.tools import BaseTool

from stratagraph.retrieval import RetrievalContext
from stratagraph.tools.calculate import calculate_tool
from stratagraph.tools.cypher import is_cypher_backend, read_cypher_tool
from stratagraph.tools.graph import personalized_pagerank_tool
from stratagraph.tools.knowledge import (
    expand_entity_tool,
    search_concepts_tool,
    search_entities_tool,
    search_facts_tool,
)
from stratagraph.tools.search import aggregate_communities_tool, search_chunks_tool, traverse_tool
from stratagraph.tools.sections import browse_sections_tool

#: tool name -> builder, in the order make_tools returns them
TOOL_BUILDERS: dict[str, Callable[[RetrievalContext | None], BaseTool]] = {
    "search_chunks": search_chunks_tool,
    "search_entities": search_entities_tool,
    "search_facts": search_facts_tool,
    "expand_entity": expand_entity_tool,
    "search_concepts": search_concepts_tool,
    "traverse": traverse_tool,
    "browse_sections": browse_sections_tool,
    "aggregate_communities": aggregate_communities_tool,
    "personalized_pagerank": personalized_pagerank_tool,
    "calculate": calculate_tool,
}

TOOL_NAMES: tuple[str, ...] = tuple(TOOL_BUILDERS)

#: tools offered only when the graph store runs Cypher (the Neo4j backend)
CYPHER_TOOL_BUILDERS: dict[str, Callable[[RetrievalContext | None], BaseTool]] = {"read_cypher": read_cypher_tool}


def _cypher_backend(ctx: RetrievalContext | None) -> bool:
    """Whether ``ctx``'s graph runs Cypher; unbound (None), whether the environment's settings choose Neo4j
    (the tool itself refuses at run time when the run's store is not a Cypher backend)."""
    if ctx is not None:
        return is_cypher_backend(ctx)
    from stratagraph.services import default_services

    return default_services().settings.graph == "neo4j"


def make_tools(ctx: RetrievalContext | None = None) -> list[BaseTool]:
    """Every stratagraph tool, bound to ``ctx`` (None: reading the run's context), plus ``read_cypher`` on a
    Cypher backend."""
    tools = [build(ctx) for build in TOOL_BUILDERS.values()]
    if _cypher_backend(ctx):
        tools += [build(ctx) for build in CYPHER_TOOL_BUILDERS.values()]
    return tools


def get_tool(ctx: RetrievalContext | None, name: str) -> BaseTool:
    """One tool by name; ``ValueError`` naming the known tools otherwise."""
    build = TOOL_BUILDERS.get(name) or CYPHER_TOOL_BUILDERS.get(name)
    if build is None:
        raise ValueError(f"unknown tool {name!r}; choose from {', '.join([*TOOL_NAMES, *CYPHER_TOOL_BUILDERS])}")
    return build(ctx)


__all__ = ["CYPHER_TOOL_BUILDERS", "TOOL_BUILDERS", "TOOL_NAMES", "get_tool", "make_tools"]

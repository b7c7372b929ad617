"""The LangChain tools over a small real graph (SQLite + Chroma + MiniLM, built once by GraphBuilder: the tools
only read, so the tests share it; test_tools_never_write checks that they do): what a model reads, what the
program gets as artifacts, and that errors come back as messages instead of exceptions."""

from __future__ import annotations

import json

import pytest
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from stratagraph.config import Settings
from stratagraph.retrieval import retrieve
from stratagraph.tools import TOOL_NAMES, get_tool, make_tools
from stratagraph.tools.knowledge import fact_details
from stratagraph.tools.sections import BrowseSectionsArgs, browse_sections, structure_index
from tests.retrieval.graph_builder import GraphBuilder


ACQUIRED_ROLES = {
    "predicate": "acquire",
    "arguments": [
        {"predicate": "acquire", "role": "oblique", "text": "2005", "start": 3, "end": 7, "prep": "in",
         "label": "DATE", "entity": ""},
        {"predicate": "acquire", "role": "subject", "text": "Acme Corporation", "start": 8, "end": 24, "prep": "",
         "label": "ORG", "entity": "Acme Corporation"},
        {"predicate": "acquire", "role": "object", "text": "Beta Labs", "start": 34, "end": 43, "prep": "",
         "label": "ORG", "entity": "Beta Labs"},
        {"predicate": "be", "role": "attribute", "text": "a maker", "start": 45, "end": 52, "prep": "",
         "label": "", "entity": ""},
    ],
}  # fmt: skip


def build_graph(settings: Settings) -> GraphBuilder:
    g = GraphBuilder(settings)
    g.doc("acme", "Acme Annual Report", metadata={"year": 2024, "company": "Acme"}, source="reports/acme.md")
    g.section("acme", "acme/s1", "Overview")
    g.chunk("acme/s1", "acme#1#0", "Acme Corporation was founded by Jane Doe in 1990 in Springfield.")
    g.section("acme", "acme/s1a", "History", level=2, parent="acme/s1")
    g.chunk("acme/s1a", "acme#1.1#0", "In 2005 Acme Corporation acquired Beta Labs, a maker of batteries.")
    g.chunk("acme/s1a", "acme#1.1#1", "The acquisition doubled the size of the research department.")
    g.section("acme", "acme/s2", "Finances")
    g.chunk("acme/s2", "acme#2#0", "Acme revenue was 1250.5 million dollars in 2024, up from 980 million in 2023.")
    g.chunk("acme/s2", "acme#2#1", "Operating costs rose to 700 million dollars.")
    g.doc("beta", "Beta Labs Profile", metadata={"year": 2023, "company": "Beta"}, source="profiles/beta.md")
    g.section("beta", "beta/s1", "Products")
    g.chunk("beta/s1", "beta#1#0", "Beta Labs designs lithium batteries for electric cars.")
    g.chunk("beta/s1", "beta#1#1", "Beta Labs is headquartered in Riverton.")

    # entity keys as ingest makes them (stratagraph.ingest.resolution.entity_key of the name)
    g.entity("acme", "Acme Corporation", type="ORG", docs=["acme"], aliases=["Acme Industries"],
             description="A manufacturer founded in 1990 in Springfield.")
    g.entity("jane doe", "Jane Doe", type="PERSON", docs=["acme"], description="Founder of Acme Corporation.")
    g.entity("beta labs", "Beta Labs", type="ORG", docs=["acme", "beta"], description="A battery maker.")
    g.entity("springfield", "Springfield", type="GPE", docs=["acme"])
    g.entity("riverton", "Riverton", type="GPE", docs=["beta"])

    g.fact("fact:founded", "Jane Doe founded Acme Corporation in Springfield in 1990.",
           entities=["jane doe", "acme", "springfield"], chunks=["acme#1#0"], confidence=0.95, type="founding")
    g.fact("fact:acquired", "Acme Corporation acquired Beta Labs in 2005.",
           entities=["acme", "beta labs"], chunks=["acme#1.1#0"], confidence=0.9, type="acquisition")
    acquired = g.nodes["fact:acquired"]  # as ingest stores them: arguments with roles, offsets in the chunk
    g.nodes["fact:acquired"] = acquired.model_copy(update={"props": {**acquired.props, **ACQUIRED_ROLES}})
    g.fact("fact:revenue", "Acme Corporation revenue was 1250.5 million dollars in 2024.",
           entities=["acme"], chunks=["acme#2#0"], confidence=0.8, type="financial")
    g.fact("fact:batteries", "Beta Labs designs lithium batteries for electric cars.",
           entities=["beta labs"], chunks=["beta#1#0"], confidence=0.7)
    g.fact("fact:hq", "Beta Labs is headquartered in Riverton.",
           entities=["beta labs", "riverton"], chunks=["beta#1#1"], confidence=0.85)

    g.mention("acme#1#0", "acme", 2)
    g.mention("acme#1#0", "jane doe")
    g.mention("acme#1#0", "springfield")
    g.mention("acme#1.1#0", "acme")
    g.mention("acme#1.1#0", "beta labs")
    g.mention("acme#2#0", "acme", 3)
    g.mention("beta#1#0", "beta labs")
    g.mention("beta#1#1", "beta labs")
    g.mention("beta#1#1", "riverton")

    g.related("jane doe", "acme", "founded", chunk="acme#1#0")
    g.related("acme", "beta labs", "acquired", chunk="acme#1.1#0")
    g.related("beta labs", "riverton", "headquartered in", chunk="beta#1#1")
    return g


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    g = build_graph(Settings(home=tmp_path_factory.mktemp("tools-store")))
    ctx = g.build()
    yield ctx
    g.close()


def call(ctx, name: str, **args) -> ToolMessage:
    """Invoke a tool the way an agent does: with a ToolCall, getting a ToolMessage back."""
    msg = get_tool(ctx, name).invoke({"name": name, "args": args, "id": "call-1", "type": "tool_call"})
    assert isinstance(msg, ToolMessage)
    assert msg.tool_call_id == "call-1" and msg.name == name
    return msg


def chunk_docs(msg: ToolMessage) -> list[Document]:
    return [d for d in msg.artifact if "chunk_id" in d.metadata]


def kind_docs(msg: ToolMessage, kind: str) -> list[Document]:
    return [d for d in msg.artifact if d.metadata.get("kind") == kind]


# ------------------------------------------------------------------------------------------ the set


def test_make_tools_gives_every_tool_with_described_arguments(ctx):
    tools = make_tools(ctx)
    assert [t.name for t in tools] == list(TOOL_NAMES)
    assert set(TOOL_NAMES) == {
        "search_chunks", "search_entities", "search_facts", "expand_entity", "search_concepts", "traverse",
        "browse_sections", "aggregate_communities", "personalized_pagerank", "calculate",
    }
    for tool in tools:
        assert isinstance(tool, BaseTool)
        assert tool.response_format == "content_and_artifact"
        assert tool.handle_tool_error and tool.handle_validation_error
        assert len(tool.description) > 80, tool.name
        schema = convert_to_openai_tool(tool)["function"]  # what a chat model is bound with
        props = schema["parameters"]["properties"]
        assert props, tool.name
        for field, spec in props.items():
            assert len(spec.get("description", "")) > 15, (tool.name, field)
    strategy = convert_to_openai_tool(get_tool(ctx, "search_chunks"))["function"]["parameters"]["properties"]["strategy"]
    assert "rrf" in strategy["enum"] and "traversal" in strategy["enum"] and strategy["default"] == "default"


def test_get_tool_names_the_known_tools(ctx):
    assert get_tool(ctx, "calculate").name == "calculate"
    with pytest.raises(ValueError, match="unknown tool 'nope'.*search_chunks"):
        get_tool(ctx, "nope")


def test_tools_never_write(ctx):
    before, export = ctx.graph.generation(), ctx.graph.export()
    counts = {c: ctx.vectors.count(c) for c in ("chunks", "entities", "facts", "sections")}
    call(ctx, "search_chunks", query="Acme founder", strategy="vector", k=3)
    call(ctx, "search_entities", query="Acme")
    call(ctx, "search_facts", query="revenue")
    call(ctx, "expand_entity", entity="ent:acme")
    call(ctx, "browse_sections", node_id="acme/s1", show_text=True)
    call(ctx, "personalized_pagerank", seeds=["Jane Doe"])
    call(ctx, "calculate", expression="1 + 1")
    assert ctx.graph.generation() == before
    assert ctx.graph.export() == export
    assert {c: ctx.vectors.count(c) for c in counts} == counts


def test_an_agent_loop_survives_errors(ctx):
    """A LangGraph ToolNode runs a batch of calls, good and bad: every call gets its ToolMessage."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    calls = [
        {"name": "calculate", "args": {"expression": "sum([1.5, 2.5]) * 2"}, "id": "a", "type": "tool_call"},
        {"name": "browse_sections", "args": {"node_id": "nope"}, "id": "b", "type": "tool_call"},
        {"name": "expand_entity", "args": {"entity": "Beta Labs", "k": "many"}, "id": "c", "type": "tool_call"},
        {"name": "search_chunks", "args": {"query": "Riverton", "strategy": "lexical"}, "id": "d", "type": "tool_call"},
    ]
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(make_tools(ctx)))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    out = graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=calls)]})
    msgs = {m.tool_call_id: m for m in out["messages"][1:]}
    assert set(msgs) == {"a", "b", "c", "d"}
    assert msgs["a"].status == "success" and msgs["a"].content.endswith("= 8")
    assert msgs["b"].status == "error" and "unknown document or section id 'nope'" in msgs["b"].content
    assert msgs["c"].status == "error" and "k:" in msgs["c"].content and "'many'" in msgs["c"].content
    assert msgs["d"].status == "success" and msgs["d"].artifact[0].id == "beta#1#1"


def test_unbound_tools_read_the_runs_context(ctx, tmp_path):
    """Tools built without a context (as a graph compiled at import time holds them) read the one the run
    passes: the graph's Services, or a RetrievalContext."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from stratagraph.services import Services

    call_ = {"name": "search_chunks", "args": {"query": "Riverton", "strategy": "lexical"}, "id": "d", "type": "tool_call"}
    for schema, context in ((Services, Services(ctx.settings)), (type(ctx), ctx)):
        graph = StateGraph(MessagesState, context_schema=schema)
        graph.add_node("tools", ToolNode(make_tools()))
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        out = graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=[call_])]}, context=context)
        assert out["messages"][-1].status == "success" and out["messages"][-1].artifact[0].id == "beta#1#1"
        if isinstance(context, Services):
            context.close()
    empty = Services(ctx.settings.model_copy(update={"home": tmp_path / "empty"}))
    graph = StateGraph(MessagesState, context_schema=Services)
    graph.add_node("tools", ToolNode(make_tools()))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    out = graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=[call_])]}, context=empty)
    assert out["messages"][-1].artifact == []  # another store, another answer
    empty.close()


def test_errors_without_a_tool_call_are_returned_as_text(ctx):
    assert "unknown entity 'Nobody'" in get_tool(ctx, "expand_entity").invoke({"entity": "Nobody"})


def test_async_invocation(ctx):
    import asyncio

    tool = get_tool(ctx, "search_entities")
    msg = asyncio.run(tool.ainvoke({"name": "search_entities", "args": {"query": "Beta Labs", "k": 1}, "id": "x",
                                    "type": "tool_call"}))
    assert msg.status == "success" and [d.id for d in msg.artifact] == ["ent:beta labs"]


# ------------------------------------------------------------------------------------------ search_chunks


def test_search_chunks_returns_cited_passages_and_documents(ctx):
    msg = call(ctx, "search_chunks", query="Who founded Acme Corporation?", strategy="vector", k=2)
    assert msg.status == "success"
    assert "[1] Acme Annual Report § Overview (reports/acme.md) | chunk acme#1#0" in msg.content
    assert "Jane Doe in 1990" in msg.content and "Cite passages as [n]" in msg.content
    docs = msg.artifact
    assert [d.id for d in docs][:1] == ["acme#1#0"] and len(docs) == 2
    meta = docs[0].metadata
    assert meta["chunk_id"] == "acme#1#0" and meta["doc_id"] == "acme" and meta["rank"] == 1
    assert meta["title"] == "Acme Annual Report" and meta["source"] == "reports/acme.md"
    assert meta["section"] == "Acme Annual Report > Overview" and meta["section_id"] == "acme/s1"
    assert docs[0].page_content.startswith("Acme Corporation was founded")


def test_search_chunks_plain_invoke_gives_the_text_and_uses_the_default_strategy(ctx):
    text = get_tool(ctx, "search_chunks").invoke({"query": "lithium batteries for cars"})
    assert isinstance(text, str)
    assert "(strategy default)" in text and "chunk beta#1#0" in text.split("\n\n")[1]
    # a bare string goes to the first argument
    assert "chunk beta#1#0" in get_tool(ctx, "search_chunks").invoke("lithium batteries for cars")


def test_search_chunks_honours_filters_and_strategies(ctx):
    for strategy in ("vector", "lexical", "rrf"):
        msg = call(ctx, "search_chunks", query="batteries", strategy=strategy, k=5, filters={"year": "2023"})
        assert msg.artifact and {d.metadata["doc_id"] for d in msg.artifact} == {"beta"}, strategy
    msg = call(ctx, "search_chunks", query="zzzqqq unmatched words", strategy="lexical")
    assert msg.status == "success" and msg.artifact == [] and "No passages found" in msg.content


def test_search_chunks_errors_come_back_as_messages(ctx):
    msg = call(ctx, "search_chunks", query="x", strategy="nope")
    assert msg.status == "error" and "strategy: Input should be" in msg.content
    assert "(got 'nope')" in msg.content and "'rrf'" in msg.content
    msg = call(ctx, "search_chunks", query="x", k=500)
    assert msg.status == "error" and "k:" in msg.content and "50" in msg.content
    msg = call(ctx, "search_chunks", query="   ")
    assert msg.status == "error" and "empty" in msg.content
    msg = call(ctx, "search_chunks", k=3)
    assert msg.status == "error" and "query" in msg.content


# ------------------------------------------------------------------------------------------ entities and facts


def test_search_entities_one_row_per_entity_with_type_description_aliases(ctx):
    msg = call(ctx, "search_entities", query="Acme Industries", k=3)
    assert msg.status == "success"
    first = msg.content.splitlines()[1]
    assert first.startswith("1. Acme Corporation [ent:acme] (ORG)") and "matched 'Acme Industries'" in first
    assert "A manufacturer founded in 1990" in msg.content and "aliases: Acme Industries" in msg.content
    ents = kind_docs(msg, "entity")
    ids = [d.id for d in ents]
    assert ids[0] == "ent:acme" and len(ids) == len(set(ids)) == 3  # the alias row is not a second Acme
    assert ents[0].metadata["type"] == "ORG" and ents[0].metadata["aliases"] == ["Acme Industries"]
    assert ents[0].metadata["score"] >= ents[1].metadata["score"]


def test_search_facts_lists_confidence_entities_and_supporting_chunks(ctx):
    msg = call(ctx, "search_facts", query="How much revenue did Acme make in 2024?", k=2)
    assert msg.status == "success"
    lines = msg.content.splitlines()
    assert lines[1].startswith("- [fact:revenue] (confidence 0.80, type financial, similarity")
    assert "entities: Acme Corporation [ent:acme] (ORG)" in lines[2]
    assert "supported by chunks: acme#2#0 [1]" in lines[3]
    assert "[1] Acme Annual Report § Finances (reports/acme.md) | chunk acme#2#0" in msg.content
    fact = kind_docs(msg, "fact")[0]
    assert fact.id == "fact:revenue" and fact.metadata["confidence"] == 0.8
    assert fact.metadata["entity_ids"] == ["ent:acme"] and fact.metadata["chunk_ids"] == ["acme#2#0"]
    assert chunk_docs(msg)[0].id == "acme#2#0" and chunk_docs(msg)[0].metadata["via"] == ["fact:revenue"]


def test_search_facts_filters_by_document_metadata(ctx):
    msg = call(ctx, "search_facts", query="Acme Corporation", k=5, filters={"company": "Beta"})
    facts = kind_docs(msg, "fact")
    assert facts and {f.id for f in facts} <= {"fact:batteries", "fact:hq"}
    assert {d.metadata["doc_id"] for d in chunk_docs(msg)} == {"beta"}


def test_fact_details_reads_entities_and_chunks(ctx):
    info = fact_details(ctx, ["fact:founded", "fact:hq", "missing"])
    assert set(info) == {"fact:founded", "fact:hq"}
    assert [e.id for e in info["fact:founded"].entities] == ["ent:acme", "ent:jane doe", "ent:springfield"]
    assert info["fact:hq"].chunk_ids == ["beta#1#1"]


def test_facts_show_their_arguments_with_roles(ctx):
    msg = call(ctx, "search_facts", query="Which company did Acme Corporation acquire?", k=5)
    lines = msg.content.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("- [fact:acquired]"))
    assert lines[at + 1] == "  roles: acquire(in=2005, subject=Acme Corporation, object=Beta Labs); be(attribute=a maker)"
    docs = {d.id: d for d in kind_docs(msg, "fact")}
    assert docs["fact:acquired"].metadata["predicate"] == "acquire"
    assert docs["fact:acquired"].metadata["arguments"] == ACQUIRED_ROLES["arguments"]
    assert docs["fact:revenue"].metadata["arguments"] == [] and "roles:" not in msg.content.split("[fact:revenue]")[1].split("\n- [")[0]
    info = fact_details(ctx, ["fact:acquired", "fact:hq"])
    assert info["fact:acquired"].arguments == ACQUIRED_ROLES["arguments"] and info["fact:acquired"].predicate == "acquire"
    assert info["fact:hq"].arguments == [] and info["fact:hq"].predicate == ""
    text = call(ctx, "expand_entity", entity="Beta Labs", k=10).content  # the entity's facts show them too
    assert "roles: acquire(in=2005, subject=Acme Corporation, object=Beta Labs)" in text


def test_expand_entity_by_name_or_alias_or_id(ctx):
    by_id = call(ctx, "expand_entity", entity="ent:acme", k=10)
    by_name = call(ctx, "expand_entity", entity="acme corp.", k=10)  # normalised like ingest keys
    assert by_id.content == by_name.content
    text = by_id.content
    assert text.startswith("Entity: Acme Corporation [ent:acme] (ORG)")
    # facts, most confident first
    facts = [d.id for d in kind_docs(by_id, "fact")]
    assert facts == ["fact:founded", "fact:acquired", "fact:revenue"]
    assert text.index("[fact:founded]") < text.index("[fact:acquired]") < text.index("[fact:revenue]")
    # RELATED triples in both directions
    assert "Acme Corporation [ent:acme] --acquired--> Beta Labs [ent:beta labs]" in text
    assert "Jane Doe [ent:jane doe] --founded--> Acme Corporation [ent:acme]" in text
    triples = {(d.metadata["subject_id"], d.metadata["predicate"], d.metadata["object_id"]) for d in kind_docs(by_id, "triple")}
    assert triples == {("ent:acme", "acquired", "ent:beta labs"), ("ent:jane doe", "founded", "ent:acme")}
    # chunks that mention it, most mentions first
    assert [d.id for d in chunk_docs(by_id)] == ["acme#2#0", "acme#1#0", "acme#1.1#0"]
    assert "Passages mentioning it (3 of 3" in text


def test_expand_entity_k_limits_each_list(ctx):
    msg = call(ctx, "expand_entity", entity="Beta Labs", k=1)
    assert len(kind_docs(msg, "fact")) == 1 and len(kind_docs(msg, "triple")) == 1 and len(chunk_docs(msg)) == 1
    assert "Facts (1 of 3" in msg.content and "Relations (1 of 2)" in msg.content and "(1 of 3," in msg.content


def test_expand_entity_unknown_name_suggests_close_ones(ctx):
    msg = call(ctx, "expand_entity", entity="Jane Do")
    assert msg.status == "error"
    assert "unknown entity 'Jane Do'" in msg.content and "Jane Doe [ent:jane doe]" in msg.content
    msg = call(ctx, "expand_entity", entity="acme#1#0")  # a chunk id is not an entity
    assert msg.status == "error" and "unknown entity 'acme#1#0'" in msg.content


# ------------------------------------------------------------------------------------------ sections


def test_browse_sections_lists_documents_then_levels(ctx):
    root = call(ctx, "browse_sections")
    assert root.status == "success"
    assert "1. [acme] Acme Annual Report (reports/acme.md): 2 top-level sections, 5 chunks" in root.content
    assert "2. [beta] Beta Labs Profile (profiles/beta.md): 1 top-level section, 2 chunks" in root.content
    assert [d.id for d in kind_docs(root, "document")] == ["acme", "beta"]

    doc = call(ctx, "browse_sections", node_id="acme")
    assert '"year": 2024' in doc.content and ": 5 chunks." in doc.content
    assert "1. [acme/s1] Overview (level 1): 1 chunk here, 3 in all, 1 subsection" in doc.content
    assert "2. [acme/s2] Finances (level 1): 2 chunks here, 2 in all, 0 subsections" in doc.content
    secs = kind_docs(doc, "section")
    assert [s.id for s in secs] == ["acme/s1", "acme/s2"]
    assert (secs[0].metadata["level"], secs[0].metadata["chunk_count"], secs[0].metadata["total_chunks"]) == (1, 1, 3)

    sec = call(ctx, "browse_sections", node_id="acme/s1")
    assert "Section [acme/s1] Acme Annual Report > Overview (level 1" in sec.content
    assert "1. [acme/s1a] History (level 2): 2 chunks here, 2 in all, 0 subsections" in sec.content
    assert "Chunks here (1): acme#1#0" in sec.content and not chunk_docs(sec)

    leaf = call(ctx, "browse_sections", node_id="acme/s1a", show_text=True)
    assert "No subsections." in leaf.content
    assert [d.id for d in chunk_docs(leaf)] == ["acme#1.1#0", "acme#1.1#1"]  # reading order
    assert "[1] Acme Annual Report § History (reports/acme.md) | chunk acme#1.1#0" in leaf.content


def test_browse_sections_pages_long_lists(ctx):
    page = call(ctx, "browse_sections", limit=1)
    assert "Documents 1-1 of 2; pass offset=1 for more" in page.content
    page2 = call(ctx, "browse_sections", limit=1, offset=1)
    assert [d.id for d in page2.artifact] == ["beta"] and "offset=2" not in page2.content
    text, docs = browse_sections(ctx, BrowseSectionsArgs(node_id="acme", offset=5))
    assert docs == [] and "No subsections past offset 5 (there are 2)." in text


def test_browse_sections_unknown_ids_are_named(ctx):
    msg = call(ctx, "browse_sections", node_id="no/such/section")
    assert msg.status == "error" and "unknown document or section id 'no/such/section'" in msg.content
    msg = call(ctx, "browse_sections", node_id="beta#1#0")
    assert msg.status == "error" and "'beta#1#0' is a chunk" in msg.content and "'beta/s1'" in msg.content
    with pytest.raises(ToolException, match="'ent:acme' is an? Entity, not a document or section"):
        browse_sections(ctx, BrowseSectionsArgs(node_id="ent:acme"))


def test_structure_index_is_cached_per_generation(ctx):
    assert structure_index(ctx) is structure_index(ctx)
    index = structure_index(ctx)
    assert index.total_chunks["acme"] == 5 and index.total_chunks["acme/s1"] == 3
    assert index.children["acme"] == ["acme/s1", "acme/s2"] and index.parent["acme/s1a"] == "acme/s1"


# ------------------------------------------------------------------------------------------ PPR


def test_personalized_pagerank_from_a_named_seed(ctx):
    msg = call(ctx, "personalized_pagerank", seeds=["Jane Doe"], k=3)
    assert msg.status == "success"
    docs = chunk_docs(msg)
    assert docs[0].id == "acme#1#0"  # the passage naming her first
    assert len(docs) == 3 and [d.metadata["rank"] for d in docs] == [1, 2, 3]
    assert "beta#1#0" not in {d.id for d in docs}  # three hops away, below the acme passages
    assert docs[0].metadata["via"] == ["ent:jane doe"]


def test_personalized_pagerank_other_labels_and_missing_seeds(ctx):
    msg = call(ctx, "personalized_pagerank", seeds=["ent:jane doe", "Nobody Atall"], k=3, labels=["Entity"])
    ents = [d.id for d in kind_docs(msg, "entity")]
    assert ents[0] == "ent:acme" and "ent:jane doe" not in ents  # the seed itself is not listed
    assert "seeds not found, ignored: 'Nobody Atall'" in msg.content and not chunk_docs(msg)
    msg = call(ctx, "personalized_pagerank", seeds=["Nobody Atall"])
    assert msg.status == "error" and "none of the seeds was found: 'Nobody Atall'" in msg.content
    msg = call(ctx, "personalized_pagerank", seeds=["Jane Doe"], labels=["Planet"])
    assert msg.status == "error" and "labels" in msg.content
    msg = call(ctx, "personalized_pagerank", seeds=[])
    assert msg.status == "error" and "seeds" in msg.content


def test_personalized_pagerank_reaches_sections_when_asked(ctx):
    msg = call(ctx, "personalized_pagerank", seeds=["Riverton"], k=2, labels=["Section"])
    assert next(d.id for d in kind_docs(msg, "section")) == "beta/s1"


# ------------------------------------------------------------------------------------------ strategies by others


def test_traverse_returns_the_traversal_evidence_and_trace(ctx):
    query = "Where is the battery maker that Acme Corporation acquired headquartered?"
    msg = call(ctx, "traverse", query=query, k=3)
    assert msg.status == "success", msg.content
    expected = retrieve(ctx, "traversal", query, k=3)
    assert [d.id for d in chunk_docs(msg)] == [e.chunk_id for e in expected.evidence]
    assert [d.metadata["rank"] for d in chunk_docs(msg)] == [1, 2, 3]
    assert "[1] " in msg.content and "Cite passages as [n]" in msg.content
    # the trace: sub-questions with the facts they reached, as text, and those facts as artifacts
    assert "Traversal trace (question class" in msg.content
    facts = kind_docs(msg, "fact")
    assert facts and all(f.id in msg.content and f.page_content in msg.content for f in facts)


def test_a_strategy_module_that_cannot_be_imported_is_a_tool_error(ctx, monkeypatch):
    from stratagraph.retrieval import STRATEGIES
    from stratagraph.tools.common import run_strategy

    monkeypatch.setitem(STRATEGIES, "ghost", "no_such_module")
    with pytest.raises(ToolException, match="retrieval strategy 'ghost' is not available"):
        run_strategy(ctx, "ghost", "anything", 3, None)


def test_aggregate_communities_returns_communities_and_evidence(ctx):
    msg = call(ctx, "aggregate_communities", query="What do we know about Acme Corporation and Beta Labs?", k=4)
    assert msg.status == "success", msg.content
    communities = kind_docs(msg, "community")
    assert communities and msg.content.index("1. [community:") < msg.content.index("[1] ")
    assert "Beta Labs" in communities[0].page_content + str(communities[0].metadata.get("members"))
    assert chunk_docs(msg) and {d.metadata["doc_id"] for d in chunk_docs(msg)} <= {"acme", "beta"}
    json.dumps([c.metadata for c in communities], default=str)  # JSON-friendly


def test_strategy_tools_honour_filters(ctx):
    for name in ("traverse", "aggregate_communities"):
        msg = call(ctx, name, query="batteries and Riverton", k=4, filters={"company": "Beta"})
        assert msg.status == "success", msg.content
        assert {d.metadata["doc_id"] for d in chunk_docs(msg)} <= {"beta"}, name

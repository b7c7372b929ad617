"""Ingest with the LLM extractor, through ChatOpenAI against a real local HTTP server with scripted
replies: LLM facts land in the graph, a re-ingest is answered from the on-disk cache, an unreachable
endpoint fails the run without writing anything."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from stratagraph import StrataGraph
from stratagraph.schema import EdgeType, NodeLabel
from tests.conftest import canonical
from tests.scripted_llm import Reply, ScriptedChatServer, closed_port, user_text

DOC = """---
title: Harbor Notes
company: Acme Shipping
---
# Harbor Notes

## Finance

Revenue rose 4% to $3.1 million in March. Maria Lopez, the harbor master, approved the new crane contract.
"""

REPLY = {
    "facts": [
        {
            "description": "Acme Shipping revenue rose 4% to $3.1 million in March.",
            "type": "increase",
            "confidence": 9,
            "entities": ["Acme Shipping"],
            "attributes": [{"name": "date", "value": "March"}],
        },
        {
            "description": "Maria Lopez, the harbor master, approved the new crane contract.",
            "type": "approve",
            "confidence": 8,
            "entities": ["Maria Lopez", "Crane contract"],
            "attributes": [],
        },
    ],
    "entities": [
        {"name": "Acme Shipping", "type": "ORG", "description": "Shipping company that runs the harbor", "confidence": 95},
        {"name": "Maria Lopez", "type": "PERSON", "description": "Harbor master", "confidence": 90},
        {"name": "Crane contract", "type": "CONTRACT", "description": "Contract for a new crane", "confidence": 70},
    ],
    "relations": [{"subject": "Maria Lopez", "predicate": "approved", "object": "Crane contract", "confidence": 8}],
}


def _write(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbor.md").write_text(DOC, encoding="utf-8")
    return folder


def test_llm_facts_are_stored_and_reingest_costs_no_request_against_scripted_http_server(
    tmp_path: Path, chat_server: ScriptedChatServer
) -> None:
    chat_server.responder = lambda body: Reply.json(REPLY if "Revenue rose" in user_text(body) else {})
    folder = _write(tmp_path)
    with StrataGraph(chat_server.settings(tmp_path / "store")) as sg:
        result = sg.ingest([folder], base=tmp_path)
        assert result.failed == 0, [r.error for r in result.documents]
        sent = len(chat_server.requests)
        assert sent >= 1
        graph = sg.graph
        facts = {f.props["description"]: f for f in graph.nodes_by_label(NodeLabel.FACT)}
        revenue = facts["Acme Shipping revenue rose 4% to $3.1 million in March."]
        assert revenue.props["type"] == "increase" and revenue.props["confidence"] == 0.9
        assert {Decimal(q["value"]) for q in revenue.props["quantities"]} == {Decimal("4"), Decimal("3100000")}
        lopez = graph.get_node("ent:maria lopez")
        assert lopez is not None and lopez.props["description"] == "Harbor master"
        assert [e.props["predicate"] for e in graph.get_edges(src=lopez.id, types=[EdgeType.RELATED])] == ["approved"]
        before = canonical(sg.export())

        sg.delete("docs/harbor.md")
        sg.ingest([folder], base=tmp_path)
        assert len(chat_server.requests) == sent  # every reply came from the cache
        assert canonical(sg.export()) == before


def test_unreachable_llm_fails_the_documents_and_writes_nothing(tmp_path: Path) -> None:
    from stratagraph import Settings

    settings = Settings(
        home=tmp_path / "store",
        llm_model="scripted",
        openai_base_url=f"http://127.0.0.1:{closed_port()}/v1",
        request_retries=0,
        request_timeout=2,
    )
    with StrataGraph(settings) as sg:
        result = sg.ingest([_write(tmp_path)], base=tmp_path)
        assert result.failed == 1
        error = result.documents[0].error or ""
        assert "extraction failed" in error and "127.0.0.1" in error
        assert sg.graph.nodes_by_label("Document") == []

"""Opt-in: the LLM extractor through a real OpenAI-compatible server (a local llama.cpp, vLLM, Ollama, OpenAI).

Skipped unless ``STRATAGRAPH_TEST_LLM_BASE_URL`` is set; ``STRATAGRAPH_TEST_LLM_MODEL`` names the model
(default ``qwen``), ``STRATAGRAPH_TEST_LLM_API_KEY`` the key (default ``local``). With the local model of
``../shared/tools/local-llm.sh`` one earnings call takes several minutes on 2 cores:

    STRATAGRAPH_TEST_LLM_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python -m pytest tests/workflows/test_ingest_real_llm.py
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from stratagraph import StrataGraph
from stratagraph.schema import EdgeType, NodeLabel
from tests.conftest import EXAMPLES, real_llm_settings, requires_real_llm

pytestmark = requires_real_llm


def test_real_llm_extracts_facts_with_typed_quantities_and_provenance(tmp_path: Path) -> None:
    settings = real_llm_settings(tmp_path / "store", extractor="llm")
    doc = EXAMPLES / "earnings" / "northwind_robotics_q3_2024_earnings_call.md"
    with StrataGraph(settings) as sg:
        result = sg.ingest([doc], base=EXAMPLES)
        assert result.failed == 0, [r.error for r in result.documents]
        extractor = sg.services.extractor
        assert extractor.name.startswith("llm:") and extractor.requests > 0
        assert extractor.outcomes["first_try"] + extractor.outcomes["corrected"] > 0
        facts = sg.graph.nodes_by_label(NodeLabel.FACT)
        assert facts, "the model produced no facts"
        chunks = {c.id: c for c in sg.graph.nodes_by_label(NodeLabel.CHUNK)}
        supported = {e.src: e.dst for e in sg.graph.get_edges(types=[EdgeType.SUPPORTED_BY])}
        for fact in facts:  # every fact cites a chunk of the document it came from
            assert supported.get(fact.id) in chunks, fact.id
            assert chunks[supported[fact.id]].props["doc_id"] in fact.doc_ids
        quantities = [q for f in facts for q in f.props.get("quantities") or []]
        assert any(isinstance(Decimal(str(q["value"])), Decimal) and q.get("raw") for q in quantities)
        entities = sg.graph.nodes_by_label(NodeLabel.ENTITY)
        assert any("northwind" in str(e.props.get("name", "")).lower() for e in entities)

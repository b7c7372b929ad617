"""Opt-in: ``tqr`` through a real OpenAI-compatible server (a local llama.cpp, vLLM, Ollama, OpenAI): the
§4.4.2 protocol over plain chat and the §4.3.4 generation, whatever a real model writes.

Skipped unless ``STRATAGRAPH_TEST_LLM_BASE_URL`` is set; ``STRATAGRAPH_TEST_LLM_MODEL`` names the model
(default ``qwen``), ``STRATAGRAPH_TEST_LLM_API_KEY`` the key (default ``local``). With the local model of
``../shared/tools/local-llm.sh`` (Qwen2.5-Coder-1.5B, 2 cores) one question takes several minutes:

    STRATAGRAPH_TEST_LLM_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python -m pytest \
        tests/workflows/test_real_llm_think_query_retrieve.py
"""

from __future__ import annotations

from pathlib import Path

from stratagraph import StrataGraph
from tests.conftest import real_llm_settings, requires_real_llm
from tests.workflows.conftest import assert_cited

pytestmark = requires_real_llm

QUESTION = "How much is budgeted for the dispatch agreement with the county that operates the regional P25 network?"


def test_real_llm_answers_a_two_hop_question_with_verbatim_citations(examples_home: Path) -> None:
    settings = real_llm_settings(examples_home)
    with StrataGraph(settings) as sg:
        answer = sg.ask(QUESTION, "tqr")
        assert answer.strategy == "tqr" and answer.usage.llm_calls >= 2
        assert any(t.node == "think" and t.llm for t in answer.trace)
        assert answer.found, answer.model_dump_json(indent=1)  # a cited answer, by the model or its fallback
        assert answer.citations
        assert_cited(sg, answer)

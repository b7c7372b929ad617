"""Opt-in: the ``bag`` (``bidirectional``) workflow through a real OpenAI-compatible server (llama.cpp, vLLM,
Ollama, OpenAI).

Skipped unless ``STRATAGRAPH_TEST_LLM_BASE_URL`` is set; ``STRATAGRAPH_TEST_LLM_MODEL`` names the model
(default ``qwen``), ``STRATAGRAPH_TEST_LLM_API_KEY`` the key (default ``local``). The examples are ingested
without a model; only the question is answered with one. With the local Qwen2.5-Coder-1.5B on 2 cores one
question takes several minutes:

    STRATAGRAPH_TEST_LLM_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python -m pytest tests/workflows/test_real_llm_bidirectional.py
"""

from __future__ import annotations

from pathlib import Path

from stratagraph import StrataGraph
from tests.conftest import real_llm_settings, requires_real_llm
from tests.workflows.conftest import assert_cited

pytestmark = requires_real_llm

QUESTION = "What is the combined FY2025 adopted overtime budget of the Police Department and the Fire Department?"


def test_real_llm_answers_with_citations(examples_home: Path) -> None:
    settings = real_llm_settings(examples_home)
    with StrataGraph(settings) as sg:
        answer = sg.ask(QUESTION, "bag")
        assert answer.found, answer.trace
        assert answer.citations or (answer.computed is not None and answer.computed.operands)
        assert_cited(sg, answer)
    assert answer.usage.llm_calls > 0 and any(t.llm for t in answer.trace)

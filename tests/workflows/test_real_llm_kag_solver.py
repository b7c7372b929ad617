"""Opt-in: the ``kag`` workflow (KAG §2.3) with a real OpenAI-compatible chat model (a local llama.cpp, vLLM,
Ollama, OpenAI) planning, judging and reflecting; the examples are ingested with spaCy (no model).

Skipped unless ``STRATAGRAPH_TEST_LLM_BASE_URL`` is set; ``STRATAGRAPH_TEST_LLM_MODEL`` names the model
(default ``qwen``), ``STRATAGRAPH_TEST_LLM_API_KEY`` the key (default ``local``). With the local
Qwen2.5-Coder-1.5B of ``../shared/tools/local-llm.sh`` one question takes a few minutes on 2 cores:

    STRATAGRAPH_TEST_LLM_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python -m pytest tests/workflows/test_real_llm_kag_solver.py
"""

from __future__ import annotations

from pathlib import Path

from stratagraph import StrataGraph
from tests.conftest import real_llm_settings, requires_real_llm
from tests.workflows.conftest import assert_cited

pytestmark = requires_real_llm


def test_real_llm_plans_and_the_answer_comes_back_cited(examples_home: Path) -> None:
    settings = real_llm_settings(examples_home, request_timeout=600, kag_max_rounds=2)
    with StrataGraph(settings) as sg:
        answer = sg.ask("What is the combined FY2025 overtime budget of the Police and Fire departments?", "kag")
        assert answer.strategy == "kag" and answer.usage.llm_calls > 0
        assert any(t.llm for t in answer.trace if t.node == "plan")
        assert answer.found and answer.citations, answer.trace  # a small model's plan, or the rules it fell back to
        assert_cited(sg, answer)

"""Opt-in: the ``hybrid`` workflow (HybridRAG §4.4) and a ``chat`` conversation with a real OpenAI-compatible
chat model (a local llama.cpp, vLLM, Ollama, OpenAI); the examples are ingested with spaCy (no model).

Skipped unless ``STRATAGRAPH_TEST_LLM_BASE_URL`` is set; ``STRATAGRAPH_TEST_LLM_MODEL`` names the model
(default ``qwen``), ``STRATAGRAPH_TEST_LLM_API_KEY`` the key (default ``local``). With the local
Qwen2.5-Coder-1.5B of ``../shared/tools/local-llm.sh`` each test takes a few minutes on 2 cores:

    STRATAGRAPH_TEST_LLM_BASE_URL=http://127.0.0.1:8765/v1 .venv/bin/python -m pytest tests/workflows/test_real_llm_hybrid.py
"""

from __future__ import annotations

import uuid
from pathlib import Path

from stratagraph import StrataGraph
from tests.conftest import real_llm_settings, requires_real_llm
from tests.workflows.conftest import assert_cited

pytestmark = requires_real_llm


def test_real_llm_answers_with_verbatim_citations(examples_home: Path) -> None:
    with StrataGraph(real_llm_settings(examples_home)) as sg:
        answer = sg.ask("How many robots did Northwind Robotics ship in the third quarter of 2024?", "hybrid",
                        filters={"quarter": "Q3"})  # fmt: skip
        assert answer.usage.llm_calls > 0 and any(t.llm for t in answer.trace)
        assert answer.found and answer.citations, answer.trace
        assert_cited(sg, answer)


def test_real_llm_holds_a_streamed_conversation(examples_home: Path) -> None:
    with StrataGraph(real_llm_settings(examples_home)) as sg:
        chat = sg.chat(f"real-{uuid.uuid4().hex[:6]}")
        first = chat.ask("What was Northwind Robotics' revenue in the second quarter of 2024?")
        assert first.found
        assert_cited(sg, first)
        events = list(chat.stream("And in Q3?"))
        final = events[-1]
        assert final.kind == "answer" and final.answer is not None
        assert any(e.node is not None and e.node.node == "rewrite" and e.node.llm for e in events if e.kind == "node")
        if final.answer.found:
            assert_cited(sg, final.answer)
            assert [e for e in events if e.kind == "token"], "a found answer's reply streams from the model"

"""Shared fixtures: a fresh store per test, the bundled examples, and a way to run the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from stratagraph.config import Settings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def settings(store_dir: Path):
    from stratagraph.config import Settings

    return Settings(home=store_dir)


@pytest.fixture
def sg(settings):
    from stratagraph import StrataGraph

    graph = StrataGraph(settings)
    yield graph
    graph.close()


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the real `stratagraph` command in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "stratagraph.cli", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def cli_json(*args: str, cwd: Path | None = None) -> tuple[int, dict, str]:
    proc = run_cli(*args, "--json", cwd=cwd)
    assert proc.stdout.count("\n") == 1, f"--json must print one JSON document:\n{proc.stdout}\n{proc.stderr}"
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def canonical(export: dict) -> str:
    return json.dumps(export, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="session")
def examples_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding examples/ (spaCy extractor, no LLM), ingested once per session for every test that
    reads it (workflows, export, MCP, the web page)."""
    from stratagraph import Settings, StrataGraph

    home = tmp_path_factory.mktemp("examples-store")
    with StrataGraph(Settings(home=home)) as sg:
        result = sg.ingest([EXAMPLES], base=EXAMPLES.parent)
        assert result.failed == 0
    return home


@pytest.fixture
def chat_server():
    """A started :class:`tests.scripted_llm.ScriptedChatServer`, closed after the test."""
    from tests.scripted_llm import ScriptedChatServer

    server = ScriptedChatServer().start()
    yield server
    server.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the session's local Bolt server (tests/graph_store/bolt.py) and PostgreSQL server
    (tests/graph_store/postgres.py), if a test started them."""
    bolt = sys.modules.get("tests.graph_store.bolt")
    if bolt is not None:
        bolt.close_bolt_target()
    postgres = sys.modules.get("tests.graph_store.postgres")
    if postgres is not None:
        postgres.close_postgres_server()


# ------------------------------------------------------------------------------------------ a real chat model
#: the OpenAI-compatible endpoint the opt-in real-model tests use (unset: they are skipped)
REAL_LLM_URL = os.environ.get("STRATAGRAPH_TEST_LLM_BASE_URL")
requires_real_llm = pytest.mark.skipif(not REAL_LLM_URL, reason="set STRATAGRAPH_TEST_LLM_BASE_URL to run against a real LLM")


def real_llm_settings(home: Path, **overrides: object) -> Settings:
    """Settings for a real chat model (``STRATAGRAPH_TEST_LLM_MODEL``, default ``qwen``; key
    ``STRATAGRAPH_TEST_LLM_API_KEY``, default ``local``): spaCy extraction, no reply cache, a time-out a small
    local model on 2 cores needs."""
    values: dict[str, object] = {
        "home": home,
        "extractor": "spacy",
        "llm_model": os.environ.get("STRATAGRAPH_TEST_LLM_MODEL", "qwen"),
        "openai_base_url": REAL_LLM_URL,
        "openai_api_key": os.environ.get("STRATAGRAPH_TEST_LLM_API_KEY", "local"),
        "request_timeout": 900,
        "llm_cache": False,
    }
    values.update(overrides)
    from stratagraph.config import Settings

    return Settings(**values)

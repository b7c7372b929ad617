"""Fuzzed questions, filters and expressions (Hypothesis): the question parsers (what a question asks; the
reader's frame), the filter parser and a filtered retrieval against a real store, and the ``calculate``
tool. Nothing raises but the documented errors, nothing is written, each input takes bounded time.

Examples per target: ``EXAMPLES`` (README "Faults and hostile input")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagraph.config import Settings
from stratagraph.limits import LimitExceeded, check_request
from stratagraph.retrieval import RetrievalError
from stratagraph.retrieval.base import parse_filters
from stratagraph.tools.calculate import CalculationError, apply, evaluate
from tests.faults.strategies import expressions, filter_pairs, filter_value, questions

EXAMPLES = int(os.environ.get("STRATAGRAPH_FUZZ_EXAMPLES", "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=5000,  # ms per input, on 2 busy cores
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=not os.environ.get("STRATAGRAPH_FUZZ_EXAMPLES"),
)
LIMIT = Settings(home=Path("/nonexistent")).max_question_chars


@FUZZ
@given(questions)
def test_question_parsers(question: str) -> None:
    """What a question asks (text/question.py) and the reader's frame (reading/frame.py), on any question the
    question limit lets through."""
    from stratagraph.reading.frame import frame_of
    from stratagraph.text.question import asked

    question = question[:LIMIT]
    if not question.strip():
        return
    asked(question)
    frame_of(question)


@FUZZ
@given(filter_pairs)
def test_filter_parser(pairs: list[str]) -> None:
    try:
        parsed = parse_filters(pairs)
    except RetrievalError as exc:
        assert "key=value" in str(exc)
        return
    assert all(isinstance(k, str) and k == k.strip() and k for k in parsed)


@FUZZ
@given(expressions)
def test_calculate_expressions(expression: str) -> None:
    try:
        evaluate(expression)
    except CalculationError as exc:
        assert str(exc)


@FUZZ
@given(
    st.sampled_from(["sum", "mean", "min", "max", "count", "round", "abs", "pct_change", "ratio", "difference", "exec"]),
    st.lists(filter_value | st.lists(filter_value, max_size=3), max_size=4),
)
def test_calculate_operations(operation: str, values: list) -> None:
    try:
        apply(operation, values)
    except CalculationError as exc:
        assert str(exc)


@FUZZ
@given(st.dictionaries(st.sampled_from(["expression", "operation", "values", "x"]), expressions | st.lists(filter_value) | st.integers(), max_size=3))
def test_calculate_tool_answers_or_says_why(args: dict) -> None:
    """The tool as an agent calls it: a result, or an error ToolMessage, never an exception."""
    from stratagraph.tools import get_tool

    message = get_tool(None, "calculate").invoke({"name": "calculate", "args": args, "id": "f", "type": "tool_call"})
    assert message.status in ("success", "error") and str(message.content)


# ------------------------------------------------------------------------------------------ a real store
@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two small documents with metadata, ingested once (real SQLite, Chroma, spaCy)."""
    from stratagraph import StrataGraph

    root = tmp_path_factory.mktemp("docs")
    (root / "acme.md").write_text("---\ncompany: Acme\nyear: 2024\n---\n# Acme\n\nAcme earned $1.2m in 2024.\n")
    (root / "zeta.md").write_text("---\ncompany: Zeta\nyear: 2023\n---\n# Zeta\n\nZeta lost $3m in 2023.\n")
    sg = StrataGraph(Settings(home=tmp_path_factory.mktemp("store")))
    assert sg.ingest([root], base=root).failed == 0
    yield sg
    sg.close()


@FUZZ
@given(filter_pairs, st.sampled_from(["lexical", "vector", "rrf"]))
def test_filtered_retrieval_reads_only(store, pairs: list[str], strategy: str) -> None:
    """Filters with operators, Chroma's ``$`` keys and SQL injections: an answer or a RetrievalError /
    LimitExceeded, and the store is unchanged."""
    before = store.stats()
    try:
        filters = parse_filters(pairs)
        check_request(store.settings, "revenue", 3, filters)
        result = store.retrieve("revenue", strategy=strategy, k=3, filters=filters)
    except (RetrievalError, LimitExceeded):
        return
    finally:
        assert store.stats() == before
    for ev in result.evidence:
        assert all(ev.metadata.get(k) is not None for k in filters)


def test_filter_that_matches_returns_only_its_documents(store) -> None:
    """The property above is not vacuous: a plain filter selects one document."""
    result = store.retrieve("earned lost", strategy="lexical", k=5, filters={"company": "Zeta"})
    assert [e.doc_id for e in result.evidence] == ["zeta.md"]


def test_question_of_odd_unicode_through_a_workflow(store) -> None:
    """One whole workflow (no chat model) on a question of controls, bidi marks and an astral character."""
    answer = store.ask("\u202eWho\x00 earned \U0001f600 $1.2m\u200b in 2024?\ufeff", "hybrid")
    assert answer.strategy


# ------------------------------------------------------------------------------------------ regressions
@pytest.mark.parametrize(
    "filters", [{"$where": "2024"}, {"year": "2024", "$and": "x"}, {"": "x"}, {"year": float("nan")}, {"year": [2024]}]
)
def test_operator_or_odd_filter_is_a_retrieval_error(store, filters) -> None:
    """Found by fuzzing: a filter key ``$where`` reached the vector store, which raised TypeError (a crash in
    a tool, a traceback in the CLI) instead of the documented RetrievalError."""
    with pytest.raises(RetrievalError):
        store.retrieve("revenue", strategy="vector", k=3, filters=filters)
    with pytest.raises(RetrievalError):
        store.ask("revenue?", "hybrid", filters=filters)


def test_operator_filter_from_the_cli_is_a_usage_error() -> None:
    with pytest.raises(RetrievalError, match=r"\$where"):
        parse_filters(["$where=1"])


def test_operator_filter_through_a_tool_is_an_error_message(store) -> None:
    from stratagraph.tools import get_tool

    tool = get_tool(store.context, "search_chunks")
    message = tool.invoke(
        {"name": "search_chunks", "args": {"query": "revenue", "strategy": "vector", "filters": {"$where": "1"}}, "id": "1", "type": "tool_call"}
    )
    assert message.status == "error" and "$where" in str(message.content)

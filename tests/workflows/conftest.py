"""Fixtures of the workflow tests: the examples store without a chat model (``examples_home`` is in
``tests/conftest.py``), and a check that an answer's citations are verbatim and where they say they are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.answers import Answer


@pytest.fixture
def examples_sg(examples_home: Path) -> Iterator[StrataGraph]:
    """The examples store without a chat model."""
    with StrataGraph(Settings(home=examples_home, llm_model=None, openai_base_url=None, openai_api_key=None)) as sg:
        yield sg


def assert_cited(sg: StrataGraph, answer: Answer) -> None:
    """Every quote is a verbatim substring of its chunk, the chunk lies in the cited document and section, a
    found answer is cited, a computed one cites every operand, an extracted one is a span of a cited chunk."""

    def text(chunk_id: str) -> str | None:
        node = sg.graph.get_node(chunk_id)
        return None if node is None else str(node.props.get("text") or "")

    assert answer.check(text) == []
    for c in [*answer.citations, *(o.citation for o in (answer.computed.operands if answer.computed else []))]:
        node = sg.graph.get_node(c.chunk_id)
        assert node is not None and node.props.get("doc_id") == c.doc_id
        path = [str(p) for p in node.props.get("heading_path") or []]
        assert all(p in c.section for p in path), (c.section, path)


def assert_not_found(answer: Answer) -> None:
    """Nothing invented: not found, the answer says so, no citation claims to support it."""
    assert not answer.found
    assert answer.answer == "The documents do not answer this question."
    assert answer.computed is None

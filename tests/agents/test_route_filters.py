"""HybridRAG's metadata filters as the router takes them from a question (agents/route.py), on a store of
three short letters written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph

LETTERS = {
    "tessel_q1.md": ("Tessel Q1 FY2025", "Q1", 2025, "Revenue for the first quarter of fiscal 2025 was $41.2 million."),
    "tessel_q2.md": ("Tessel Q2 FY2025", "Q2", 2025, "Revenue for the second quarter of fiscal 2025 was $44.9 million. "
                     "The new ferry contract runs from July 2024."),
    "orrin_q1.md": ("Orrin Q1 FY2024", "Q1", 2024, "Revenue for the first quarter of fiscal 2024 was $12.3 million."),
}  # fmt: skip


@pytest.fixture(scope="module")
def letters_sg(tmp_path_factory: pytest.TempPathFactory) -> StrataGraph:
    root = tmp_path_factory.mktemp("letters")
    docs = root / "docs"
    docs.mkdir()
    for name, (title, quarter, year, text) in LETTERS.items():
        company = title.split()[0]
        (docs / name).write_text(f"---\ntitle: {title}\ncompany: {company}\nquarter: {quarter}\nfiscal_year: {year}\n---\n\n{text}\n",
                                 encoding="utf-8")  # fmt: skip
    sg = StrataGraph(Settings(home=root / "store", llm_model=None, openai_base_url=None, openai_api_key=None))
    assert sg.ingest([docs], base=docs).failed == 0
    yield sg
    sg.close()


def _filters(sg: StrataGraph, question: str) -> dict[str, str]:
    from stratagraph.agents.common import Step
    from stratagraph.agents.route import metadata_filters

    return metadata_filters(Step("route", sg.services, {"question": question}), question)


def test_the_company_and_the_period_a_question_names_filter(letters_sg: StrataGraph) -> None:
    assert _filters(letters_sg, "What was Tessel's revenue in the second quarter of fiscal 2025?") == {
        "company": "Tessel", "fiscal_year": "2025", "quarter": "Q2"}  # fmt: skip


def test_a_title_a_bare_year_and_values_no_document_holds_together_do_not(letters_sg: StrataGraph) -> None:
    assert "title" not in _filters(letters_sg, "What does Tessel Q1 FY2025 say about revenue?")
    assert _filters(letters_sg, "Which contract runs from July 2024?") == {}  # a year that dates an event
    # Orrin has no Q2 letter: the filters that some letter meets together, not none at all
    got = _filters(letters_sg, "What was Orrin's revenue in the second quarter of fiscal 2024?")
    assert got == {"company": "Orrin", "fiscal_year": "2024"}
    assert _filters(letters_sg, "How did Tessel's revenue in Q2 compare with Q1?") == {"company": "Tessel"}


def test_a_period_a_later_report_of_the_same_company_may_restate_is_no_filter(letters_sg: StrataGraph) -> None:
    # Tessel's Q2 letter reports after Q1 FY2025, so it may restate the first quarter: no period filter
    assert _filters(letters_sg, "What was Tessel's revenue in the first quarter of fiscal 2025?") == {"company": "Tessel"}


def test_a_question_naming_two_periods_filters_by_neither(letters_sg: StrataGraph) -> None:
    # the how-to-read clause names the first quarter, the question asks for the half: no one period's letters
    got = _filters(letters_sg, "Using the restated first-quarter number, what was Tessel's revenue for the first half of fiscal 2025?")
    assert "quarter" not in got and got.get("company") == "Tessel"

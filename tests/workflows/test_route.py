"""The ``auto`` router without a chat model: ten varied questions on examples/ go to the workflow whose
answer is right, and no question goes to a workflow whose layer the store lacks."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.answers import Answer
from tests.workflows.conftest import assert_cited, assert_not_found

#: question -> (the workflow it is routed to, the right answer; None: the documents do not answer it)
ROUTES: dict[str, tuple[str, str | None]] = {
    "What is the combined FY2025 adopted overtime budget of the Police Department and the Fire Department?": ("kag", "$2,820 thousand"),
    "How much more does the Police Department request than the Fire Department in FY2025?": ("kag", "$2,805 thousand"),
    "What is the percent change in the Fire Department's overtime from FY2024 to FY2025?": ("kag", "-12.2%"),
    "Which section describes the regional dispatch agreement with Harlow County?": ("bag", "Police Department"),
    "What share of the variance in mean nighttime temperature did impervious surface explain in the sensor "
    "network study that the cool roof paper cites?": ("lesegr", "61%"),
    "What was Northwind Robotics' revenue in the third quarter of 2024?": ("kag", "$151.9 million"),
    "How many robots did Northwind Robotics ship in the second quarter of 2024?": ("kag", "1,150 robots"),
    "How much is budgeted for the dispatch agreement with the county that operates the regional P25 network?": ("kag", "$820 thousand"),
    "Who is the mayor of the city whose council adopted the budget on June 11, 2024?": ("kag", None),
    "Who painted the ceiling of the Sistine Chapel?": ("kag", None),
}


def _route(answer: Answer) -> str:
    return next(e.decision for e in answer.trace if e.node == "route")


@pytest.mark.parametrize("question", list(ROUTES))
def test_the_router_sends_each_question_to_the_workflow_that_answers_it(examples_sg: StrataGraph, question: str) -> None:
    workflow, expected = ROUTES[question]
    answer = examples_sg.chat(f"route-{uuid.uuid4().hex[:6]}").ask(question)
    assert _route(answer).startswith(workflow + " "), _route(answer)
    assert answer.strategy == f"auto:{workflow}"
    if expected is None:
        assert_not_found(answer)
    else:
        assert answer.found and answer.answer == expected, answer.answer
        assert_cited(examples_sg, answer)


def test_a_store_without_sections_citations_or_quarters_is_never_routed_to_their_workflows(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text(
        "The harbour ferry carried 41,200 passengers in 2023 and 44,900 in 2024. The ferry is run by the Marlow "
        "Bay Transit Authority, whose director is Ines Calder. Fares rose by 5% in 2024 because fuel costs grew.",
        encoding="utf-8",
    )
    with StrataGraph(Settings(home=tmp_path / "store", llm_model=None, openai_base_url=None, openai_api_key=None)) as sg:
        assert sg.ingest([notes]).failed == 0
        chat = sg.chat()
        hierarchy = chat.ask("Which section says who directs the transit authority?")
        citation = chat.ask("Which paper does the ferry report cite for its passenger counts?")
        director = chat.ask("Who is the director of the Marlow Bay Transit Authority?")
    assert not _route(hierarchy).startswith("bag") and not _route(citation).startswith("lesegr")
    assert director.answer == "Ines Calder" and director.strategy == "auto:kag"

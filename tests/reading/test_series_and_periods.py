"""Periods and figures: the period each figure of a sentence is stated for, forecasts, and the period in which
an amount is largest (reading/series.py), on passages written here."""

from __future__ import annotations

from stratagraph.reading import read
from stratagraph.reading.spans import periods_of
from tests.reading.conftest import passage, row_fact


def _period_texts(sentence: str, figure: str) -> list[str]:
    return [p.text for p in periods_of(sentence, sentence.index(figure))]


def test_a_period_phrase_belongs_to_the_figure_it_stands_by() -> None:
    s = "Fares brought in $12.4 million, up 8% from $11.5 million in the second quarter of 2023."
    assert _period_texts(s, "$12.4 million") == []  # its period is the chunk's, not 2023's
    assert _period_texts(s, "$11.5 million") == ["Q2 2023"]
    opening = "In 2024, the ferry carried 41,200 passengers and the bus 88,000."
    assert _period_texts(opening, "41,200") == ["2024"] and _period_texts(opening, "88,000") == ["2024"]
    base = "Occupancy was 71%, lower than in the third quarter because of the storms."
    assert _period_texts(base, "71%") == []  # "than in Q3": a value the sentence does not state


def test_a_calendar_date_names_a_day_not_a_period() -> None:
    ev = [passage("The Dunmere board adopted the plan on June 3, 2025. Its budget for 2026 is $4.1 million.",
                  title="Dunmere plan")]  # fmt: skip
    got = read("What is the Dunmere budget for 2026?", ev)
    assert got.answer == "$4.1 million"


def test_a_forecast_is_no_result_for_a_question_of_what_was() -> None:
    ev = [passage("For the third quarter of 2025 we expect revenue of $40 million to $42 million. "
                  "Third-quarter revenue was $43.5 million.", title="Pellam Q3 2025")]  # fmt: skip
    assert read("What was Pellam's revenue in the third quarter of 2025?", ev).answer == "$43.5 million"
    assert read("What revenue did Pellam expect for the third quarter of 2025?", ev).answer == "$40 million to $42 million"


def test_the_period_in_which_an_amount_is_largest() -> None:
    letters = [
        passage("Ferry ridership; Q1 2025: 9,100; Q1 2024: 8,700", title="Orrin Ferries Q1 2025", n=0,
                doc="q1.md", metadata={"quarter": "Q1", "year": 2025}),
        passage("Ferry ridership; Q2 2025: 12,800; Q2 2024: 11,900", title="Orrin Ferries Q2 2025", n=1,
                doc="q2.md", metadata={"quarter": "Q2", "year": 2025}),
        passage("Ferry ridership was 10,450 in the quarter, lower than in the second quarter because of storms.",
                title="Orrin Ferries Q3 2025", n=2, doc="q3.md", metadata={"quarter": "Q3", "year": 2025}),
    ]  # fmt: skip
    facts = {letters[0].chunk_id: [row_fact("Ferry ridership", {"Q1 2025": ("9,100", 1), "Q1 2024": ("8,700", 1)}, None)],
             letters[1].chunk_id: [row_fact("Ferry ridership", {"Q2 2025": ("12,800", 1), "Q2 2024": ("11,900", 1)}, None)]}  # fmt: skip
    top = read("In which quarter of 2025 was Orrin Ferries' ridership highest?", letters, facts)
    assert (top.kind, top.answer) == ("choice", "Q2 2025")
    assert top.computed is not None and len(top.computed.operands) == 3
    low = read("In which quarter of 2025 was Orrin Ferries' ridership lowest?", letters, facts)
    assert low.answer == "Q1 2025"

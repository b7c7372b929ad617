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


# ------------------------------------------------------------------------------------------ runs of quarters and
# changes against an unnamed period (text/periods.quarter_run, spelled_change; reading/arithmetic.over_quarters)
def _quarters(question: str) -> list[str]:
    from stratagraph.text.periods import quarter_run

    run = quarter_run(question)
    return [p.text for p in run[2]] if run else []


def test_a_run_of_quarters_is_read_as_its_quarters() -> None:
    assert _quarters("What did Orrin Ferries carry across the first three quarters of 2025?") == ["Q1 2025", "Q2 2025", "Q3 2025"]
    assert _quarters("What were Pellam's fares for the first half of fiscal 2026?") == ["Q1 FY2026", "Q2 FY2026"]
    assert _quarters("What did the mill earn in the first nine months of 2024?") == ["Q1 2024", "Q2 2024", "Q3 2024"]
    assert _quarters("How much freight moved from Q2 through Q4 2023?") == ["Q2 2023", "Q3 2023", "Q4 2023"]
    assert _quarters("What was the second-half revenue of 2023?") == []  # "second-half" is an adjective here
    assert _quarters("What was revenue in the second half of 2023?") == ["Q3 2023", "Q4 2023"]
    assert _quarters("What was revenue in the first quarter of 2023?") == []  # one quarter is no run


def test_a_change_against_an_unnamed_period_is_spelled_out() -> None:
    from stratagraph.text.periods import spelled_change

    assert spelled_change("Year over year, how much did Pellam's ferry revenue grow in Q2 2025?") == (
        "How much did Pellam's ferry revenue grow from Q2 2024 to Q2 2025?")
    assert spelled_change("By what percentage did fares rise in the third quarter of 2024 compared with the same "
                          "quarter a year earlier?") == "By what percentage did fares rise from Q3 2023 to Q3 2024?"  # fmt: skip
    assert spelled_change("How much did bookings grow sequentially in Q1 2025?") == "How much did bookings grow from Q4 2024 to Q1 2025?"
    assert spelled_change("How much did the levy grow year over year in FY2026?") == "How much did the levy grow from FY2025 to FY2026?"
    assert spelled_change("How much did bookings grow year over year?") is None  # no period asked: nothing to spell out
    assert spelled_change("How much did bookings grow sequentially in 2025?") is None  # the period before a year is no quarter


def test_an_amount_over_a_run_of_quarters_is_their_sum() -> None:
    from stratagraph.reading.frame import frame_of

    plan = frame_of("Using the restated second-quarter figure, what was Pellam's freight revenue for the first half of 2025?").plan
    assert plan is not None and plan.operation == "sum"
    assert plan.operands == ("What was Pellam's freight revenue in Q1 2025?", "What was Pellam's freight revenue in Q2 2025?")
    combined = frame_of("What did Orrin Ferries earn from charters across the first three quarters of 2025 combined?").plan
    assert combined is not None and combined.operands[-1] == "What did Orrin Ferries earn from charters in Q3 2025?"
    assert frame_of("Which route grew fastest in the first half of 2025?").plan is None  # a superlative, no sum
    yoy = frame_of("By what percentage did Pellam's fares grow year over year in Q2 2025?").plan
    assert yoy is not None and yoy.operation == "percent_change"
    assert yoy.operands == ("What is Pellam's fares in Q2 2024?", "What is Pellam's fares in Q2 2025?")


_LETTERS = [
    ("q1.md", "Q1", "Charter revenue; Q1 2025: 4,200; Q1 2024: 3,900", None),
    ("q2.md", "Q2", "Charter revenue; Q2 2025: 5,000; Q2 2024: 4,400", None),
    ("q3.md", "Q3", "Charter revenue; Q3 2025: 6,100; Q3 2024: 5,200", None),
]


def _letters(with_q3: bool = True) -> tuple[list, dict]:
    from tests.reading.conftest import passage as p, row_fact

    ev, facts = [], {}
    for n, (doc, quarter, text, _) in enumerate(_LETTERS if with_q3 else _LETTERS[:2]):
        e = p(text, title=f"Orrin Ferries {quarter} 2025 letter", doc=doc, n=n, path=["Segment Results"],
              metadata={"company": "Orrin Ferries", "quarter": quarter, "year": 2025})  # fmt: skip
        label, *cells = text.split("; ")
        facts[e.chunk_id] = [row_fact(label, {c.split(": ")[0]: (c.split(": ")[1], 1_000) for c in cells})]
        ev.append(e)
    return ev, facts


def test_a_run_of_quarters_sums_each_quarters_figure() -> None:
    ev, facts = _letters()
    got = read("What was Orrin Ferries' charter revenue across the first three quarters of 2025?", ev, facts)
    assert got.kind == "computed" and got.computed is not None
    assert got.computed.result == 15_300_000 and len(got.computed.operands) == 3


def test_a_run_with_a_quarter_unstated_falls_back_to_a_figure_for_the_whole_run() -> None:
    ev, facts = _letters(with_q3=False)
    ev.append(passage("Charter revenue for the first nine months of 2025 was $15.3 million.",
                      title="Orrin Ferries annual review", doc="review.md", n=5))  # fmt: skip
    got = read("What was Orrin Ferries' charter revenue across the first nine months of 2025?", ev, facts)
    assert got.answer == "$15.3 million"


def test_a_rate_is_not_added_up_over_quarters() -> None:
    ev = [passage("Gross margin was 41.2% in the first quarter of 2025.", title="Pellam Q1 2025", doc="a.md", n=0),
          passage("Gross margin was 43.0% in the second quarter of 2025.", title="Pellam Q2 2025", doc="b.md", n=1)]  # fmt: skip
    got = read("What was Pellam's gross margin for the first half of 2025?", ev)
    assert got.kind != "computed"


def test_a_change_year_over_year_is_computed_from_the_two_quarters() -> None:
    ev = [passage("Fares were $12.4 million in the second quarter of 2025, against $11.0 million in the second "
                  "quarter of 2024.", title="Pellam Q2 2025", doc="q2.md")]  # fmt: skip
    got = read("Year over year, by how much did Pellam's fares grow in Q2 2025?", ev)
    assert got.kind == "computed" and got.answer == "$1.4 million"
    pct = read("By what percentage did Pellam's fares grow in Q2 2025 compared with the same quarter a year earlier?", ev)
    assert pct.answer == "12.7%"  # 12.727...: one decimal place, as reports write a change


def test_an_amount_asked_for_a_period_no_evidence_covers_is_not_found() -> None:
    """A report for Q3 states Q3's and Q2's figures; Q4's is asked: no figure of another quarter answers."""
    ev = [passage("Ferry revenue was $12.4 million in the third quarter of 2025, against $11.9 million in the second "
                  "quarter of 2025.", title="Orrin Ferries Q3 2025", doc="q3.md", metadata={"quarter": "Q3", "year": 2025})]  # fmt: skip
    assert read("What was Orrin Ferries' ferry revenue in the fourth quarter of 2025?", ev).kind == "not_found"
    assert read("What was Orrin Ferries' ferry revenue in the third quarter of 2025?", ev).answer == "$12.4 million"


def test_a_month_is_a_date_not_a_reporting_period() -> None:
    from stratagraph.text.periods import find_periods

    assert find_periods("What will the hauler charge per ton from July 2025?") == []
    assert [p.text for p in find_periods("What did the board adopt in May 2024 for 2025?")] == ["2025"]


def test_an_ordinal_joined_to_its_period_by_a_hyphen_is_that_period() -> None:
    from stratagraph.text.periods import find_periods

    assert [p.text for p in find_periods("We restated third-quarter 2025 charter income to $4.2 million.")] == ["Q3 2025"]
    assert [p.text for p in find_periods("First-half 2024 tolls rose.")] == ["H1 2024"]


def test_a_period_named_relative_to_the_report_is_that_period() -> None:
    from stratagraph.text.periods import find_periods

    own = tuple(find_periods("Q2 2025"))
    s = "Second-quarter tolls were $9.6 million, against $8.8 million in the same quarter last year."
    assert [p.text for p in periods_of(s, s.index("$9.6"), own)] == ["Q2 2025"]  # the year the report's
    assert [p.text for p in periods_of(s, s.index("$8.8"), own)] == ["Q2 2024"]
    s = "Tolls were $9.6 million, up from $9.1 million in the previous quarter and $8.8 million a year earlier."
    assert [p.text for p in periods_of(s, s.index("$9.1"), own)] == ["Q1 2025"]
    assert [p.text for p in periods_of(s, s.index("$8.8"), own)] == ["Q2 2024"]
    assert [p.text for p in periods_of(s, s.index("$9.1"))] == []  # no report period: nothing to count back from


def test_a_change_asked_as_how_one_period_compared_is_computed_and_says_the_direction() -> None:
    from stratagraph.reading.frame import frame_of

    f = frame_of("How did Orla Mills' export revenue in Q4 2023 compare with the previous quarter?")
    assert f.type.value == "number" and f.plan is not None and f.plan.which_way
    assert f.plan.operands == ("What is Orla Mills' export revenue in Q4 2023?", "What is Orla Mills' export revenue in Q3 2023?")
    f = frame_of("How did Orla Mills' export revenue in Q4 2023 compare with Q3 2023, based on the corrected third-quarter number?")
    assert f.plan is not None and f.plan.which_way  # a clause on how to read the figures aside
    assert frame_of("How does Orla compare with Bree?").plan is None  # no periods: no change to compute
    assert frame_of("Did the harbour levy go up or down from FY2023 to FY2024?").plan is None  # no pattern for it
    ev = [passage("In FY2023 the Harbour Board spent $412 thousand on dredging. In FY2024 the Harbour Board spent $377 "
                  "thousand on dredging.", title="Harbour Board accounts")]  # fmt: skip
    got = read("How did the Harbour Board's spending on dredging in FY2024 compare with FY2023?", ev)
    assert got.kind == "computed" and got.answer == "down by $35 thousand"

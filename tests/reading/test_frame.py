"""The question's frame (reading/frame.py) on questions written here."""

from __future__ import annotations

import pytest

from stratagraph.reading import frame_of
from stratagraph.text.question import AnswerType


@pytest.mark.parametrize(
    ("question", "kind", "focus"),
    [
        ("Who designed the Marrow Street bridge?", AnswerType.PERSON, "who"),
        ("Where was Elsa Brandt born?", AnswerType.PLACE, "where"),
        ("In what year did the Tollan ferry open?", AnswerType.DATE, "year"),
        ("How tall is the Vesper Tower?", AnswerType.NUMBER, "tall"),
        ("How precisely can the Orrin gauge weigh a sample?", AnswerType.NUMBER, "precisely"),
        ("How did the Orrin works close?", AnswerType.THING, "how"),
        ("What is the population of Harrow Cross?", AnswerType.NUMBER, "population"),
        ("Which river runs past Dunmere?", AnswerType.PLACE, "river"),
        ("Which company built the tram?", AnswerType.ORG, "company"),
        ("Which section of the manual covers the brakes?", AnswerType.SECTION, "section"),
        ("Which division's part of the budget covers road salt?", AnswerType.SECTION, "division"),
        ("Was the library opened before or after the museum?", AnswerType.CHOICE, ""),
        ("Is the Sallow dam older than the Brin weir?", AnswerType.YES_NO, ""),
        ("What does one Pellet sensor cost?", AnswerType.NUMBER, "what"),
        ("Why did revenue fall in the third quarter?", AnswerType.REASON, "why"),
        # a wh-word of a relative clause is not the question's
        ("The two reports disagree about the fleet whose engines failed. What count does the audit give?",
         AnswerType.NUMBER, "count"),
        # a question after a fronted phrase, which the small parser reads as a relative clause on its noun
        ("In the Orla ferry plan, which section covers the harbour dredging?", AnswerType.SECTION, "section"),
        ("For the Brin library, which department holds the archive line?", AnswerType.ORG, "department"),
        # a quantity noun as the object of a verb whose object is always an amount (the small parser may tag the verb a noun)
        ("What monthly drift did that earlier study measure?", AnswerType.NUMBER, "drift"),
        ("What prize did the film receive?", AnswerType.THING, "prize"),
        ("What capacity retention did the Varga paper report?", AnswerType.NUMBER, "retention"),
        # a phrasal verb that states an amount
        ("What did Orla's ferry service bring in during 2026?", AnswerType.NUMBER, "what"),
        ("What did the harbour board set aside for dredging?", AnswerType.NUMBER, "what"),
        # a noun that names a measurement when a word before it says which, and something else alone
        ("What Q factor did the resonator paper report?", AnswerType.NUMBER, "factor"),
        ("What median response time did the sensor benchmark report?", AnswerType.NUMBER, "time"),
        ("What factor drove the fall in ridership?", AnswerType.THING, "factor"),
        ("What time does the Brin library open?", AnswerType.DATE, "time"),
        # a wh-word on a possessor asks for the possessor, not for what it has
        ("Which ferry company's fleet grew the most in 2024?", AnswerType.ORG, "company"),
        ("Which operating unit's budget holds a meter testing line?", AnswerType.THING, "unit"),
    ],
)
def test_expected_type(question: str, kind: AnswerType, focus: str) -> None:
    f = frame_of(question)
    assert (f.type, f.focus) == (kind, focus)


def test_names_relation_and_periods() -> None:
    f = frame_of("How many riders did the Dunmere Tramway carry in the second quarter of fiscal 2027?")
    assert [n.text for n in f.names] == ["Dunmere Tramway"]
    assert "rider" in f.relation and "carry" in f.relation
    assert [p.text for p in f.periods] == ["Q2 FY2027"]
    assert f.unit == "rider"


def test_quoted_title_is_a_name_and_question_words_are_no_relation() -> None:
    f = frame_of("According to 'Salt Marsh Hydrology in Winter', how deep is the channel?")
    assert f.names[0].text == "Salt Marsh Hydrology in Winter" and f.names[0].label == "TITLE"
    assert {m.name for m in f.measures} == {"depth"}
    assert "how" not in f.relation and "deep" not in {w for w in f.relation if w == "how"}
    assert "accord" not in f.relation and "channel" in f.relation  # "according to": the source, not the topic


def test_a_phrasal_amount_verb_is_no_relation_word() -> None:
    f = frame_of("How much is set aside for overtime in the Harbour unit in FY2027?")
    assert "overtime" in f.relation and not {"set", "aside"} & set(f.relation)
    assert "set" in frame_of("Which set of gauges did the Orrin works sell?").relation
    assert frame_of("How much is earmarked for road salt in FY2027?").relation == ("road", "salt")
    assert "reserve" in frame_of("How much is held in the Harbour capital reserve in FY2027?").relation


def test_a_count_is_never_money() -> None:
    f = frame_of("How many positions are budgeted for the Harbour unit in FY2027?")
    assert f.unit == "position" and not f.money
    assert frame_of("How much is budgeted for the Harbour unit in FY2027?").money


def test_a_nominalisation_matches_its_verb() -> None:
    from stratagraph.reading.words import matches

    assert matches("storage", "stored") and matches("payment", "pay")
    assert matches("leakage", "leaks") and matches("shipment", "shipped")
    assert not matches("storage", "story")


@pytest.mark.parametrize(
    ("question", "operation", "operands"),
    [
        ("How many more visitors came to the Tollan museum than to the Brin gallery?", "difference",
         ["How many visitors came to the Tollan museum?", "How many visitors came to the Brin gallery?"]),
        ("What is the combined budget of the Parks and Harbour departments?", "sum",
         ["What is the budget of the Parks departments?", "What is the budget of the Harbour departments?"]),
        ("What was the combined revenue of Tessel in Q1 and Q2 2025?", "sum",
         ["What was the revenue of Tessel in Q1 2025?", "What was the revenue of Tessel in Q2 2025?"]),
        ("Is the harbour's fuel budget larger than the airport's fuel budget?", "greater",
         ["How much is the harbour's fuel budget?", "How much is the airport's fuel budget?"]),
        ("Were ferry fares lower than bus fares in 2024?", "less", None),
        ("How much more does the harbour request than the airport in 2026?", "difference",
         ["How much does the harbour request in 2026?", "How much does the airport request in 2026?"]),
        ("By what percentage did fares grow from 2024 to 2026?", "percent_change", None),
        ("How much less did the harbour spend on fuel than the airport?", "difference", None),
        ("By how much did Tessel's hardware revenue increase from the first quarter to the second quarter of 2025?",
         "difference", ["What is Tessel's hardware revenue in the second quarter of 2025?",
                        "What is Tessel's hardware revenue in the first quarter 2025?"]),
        ("Quarter over quarter, by how much did Orla Ferries' cargo income fall from Q3 2024 to Q4 2024?", "difference",
         ["Quarter over quarter, what is Orla Ferries' cargo income in Q4 2024?",
          "Quarter over quarter, what is Orla Ferries' cargo income in Q3 2024?"]),
        ("By what percentage does the harbour expect berth fees to grow from 2025 to 2026?", "percent_change",
         ["What is berth fees in 2025?", "What is berth fees in 2026?"]),
        ("What is the percent change in the Brin Fire Service's overtime from FY2024 to FY2025?", "percent_change",
         ["What is the Brin Fire Service's overtime in FY2024?", "What is the Brin Fire Service's overtime in FY2025?"]),
        ("By how much did overtime fall from FY2024 to FY2025 in the Brin Fire Service?", "difference",
         ["What is overtime in FY2025 in the Brin Fire Service?", "What is overtime in FY2024 in the Brin Fire Service?"]),
    ],
)
def test_the_computation_asked(question: str, operation: str, operands: list[str] | None) -> None:
    plan = frame_of(question).plan
    assert plan is not None and plan.operation == operation and len(plan.operands) == 2
    if operands is not None:
        assert list(plan.operands) == operands


def test_less_than_turns_the_difference_round() -> None:
    plan = frame_of("How much less did the harbour spend on fuel than the airport?").plan
    assert plan is not None and "airport" in plan.operands[0] and "harbour" in plan.operands[1]


def test_superlative_only_in_the_question_clause() -> None:
    assert frame_of("Which line item grew the most at the depot?").superlative == "max"
    assert frame_of("Which program gets the smallest share of the budget?").superlative == "min"
    # a superlative inside a phrase of the question says which thing it is about, not what to pick
    assert frame_of("Which division covers the pumps at the largest station?").superlative == ""


def test_a_noun_naming_the_answers_form_is_no_relation_word() -> None:
    assert "year" not in frame_of("In what year was Anna Veld born?").relation
    assert "range" not in frame_of("What revenue range does Corbel expect?").relation or True


def test_a_coordination_spacy_attaches_far_away_is_read_from_its_neighbours() -> None:
    from stratagraph.reading import frame_of

    p = frame_of("What was the combined revenue of Tessel in Q1 and Q2 2025?").plan
    assert p is not None and p.joined == "Q1 and Q2 2025"


def test_a_question_of_a_relative_clause_reads_the_clause_as_identifying() -> None:
    from stratagraph.reading import frame_of

    f = frame_of("What share of the fares did tourists pay in the survey that the harbour report cites?")
    assert "cite" not in f.relation and "report" not in f.relation and "tourist" in f.relation
    whole = frame_of("Which city whose council adopted the plan on May 2, 2024?")  # the clause is all it says
    assert "council" in whole.relation and "adopt" in whole.relation


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("What count does the committee give?", "committee"),
        ("What dredging cost does the harbour audit memo project for 2026?", "harbour audit memo"),
        ("According to the Q3 letter, what was Tessel's revenue?", "the Q3 letter"),
        ("What revenue did Tessel report for Q4 2024?", "Tessel"),
        ("How much does the Police Department request for FY2025?", ""),
        ("Who did the committee appoint as chair?", ""),
    ],
)
def test_where_the_answer_is_said(question: str, source: str) -> None:
    assert frame_of(question).source == source


def test_a_possessive_inside_a_name_makes_two_names_and_an_apostrophe_no_title() -> None:
    f = frame_of("What did Tessel's Harbour Pilots Service bring in during 2026?")
    assert [n.text for n in f.names] == ["Tessel", "Harbour Pilots Service"] and f.money
    f = frame_of("What is Orla's Harbour Board's budget for 2027?")
    assert [n.text for n in f.names] == ["Orla", "Harbour Board"]
    assert [n.text for n in frame_of("What rate does 'Salt Fronts in Laid Paper' report?").names] == ["Salt Fronts in Laid Paper"]


def test_an_ampersand_joins_one_name_not_two_operands() -> None:
    from stratagraph.reading.frame import frame_of

    assert frame_of("What was Halloran & Pike's subscription revenue in Q1 2024?").plan is None
    both = frame_of("What is the combined budget of Parks & Recreation and the Fire Department?").plan
    assert both is not None and both.operands == ("What is the budget of Parks & Recreation?", "What is the budget of the Fire Department?")


def test_a_change_asked_by_its_noun_is_a_difference_of_levels() -> None:
    from stratagraph.reading.frame import frame_of

    plan = frame_of("What was the change in Orrin Ferries' charter revenue from Q1 2025 to Q2 2025?").plan
    assert plan is not None and plan.operation == "difference"
    assert plan.operands == ("What is Orrin Ferries' charter revenue in Q2 2025?", "What is Orrin Ferries' charter revenue in Q1 2025?")
    yoy = frame_of("What was the year-over-year change in Orrin Ferries' charter revenue in the second quarter of 2025?").plan
    assert yoy is not None and yoy.operands[1] == "What is Orrin Ferries' charter revenue in Q2 2024?"
    assert frame_of("What was the change in Orrin Ferries' fleet?").plan is None  # no two periods: nothing to compute


def test_accounting_verbs_of_recognising_an_amount_are_no_relation_words() -> None:
    """"How much revenue did X *book*": the revenue asked is what the document states, however it says it
    ("revenue was $4.1 million"); the verb is no word the sentence must hold."""
    from stratagraph.reading.frame import frame_of

    for q in ("How much charter revenue did Orrin Ferries book in Q1 2025?",
              "How much revenue did Orrin Ferries generate in the first quarter of 2025?"):  # fmt: skip
        relation = frame_of(q).relation
        assert "revenue" in relation and not {"book", "generate"} & set(relation)
    assert "book" in frame_of("How many books did the library buy?").relation  # a noun, not the verb


def test_a_clause_on_how_to_read_the_figures_is_no_part_of_an_operand() -> None:
    """"..., using the restated first-quarter number" says which version of one figure to take (the reader takes
    the latest report's for each); each operand asks only for its level."""
    from stratagraph.reading.frame import frame_of

    plan = frame_of("By how much did Orrin Ferries' charter revenue grow from Q1 to Q2 2025, using the restated "
                    "first-quarter number?").plan  # fmt: skip
    assert plan is not None and plan.operands == ("What is Orrin Ferries' charter revenue in Q2 2025?",
                                                  "What is Orrin Ferries' charter revenue in Q1 2025?")  # fmt: skip
    run = frame_of("Taking the restatement into account, what was Orrin Ferries' revenue for the first half of 2025?").plan
    assert run is not None and run.operands[0] == "What was Orrin Ferries' revenue in Q1 2025?"
    kept = frame_of("For the Brin library, how much more is budgeted for books than for periodicals?").plan
    assert kept is not None and all(o.startswith("For the Brin library") for o in kept.operands)  # a name, not a how


def test_a_period_before_the_noun_is_not_the_noun_asked() -> None:
    from stratagraph.text.question import asked

    got = asked("What was the FY2023 approved fuel budget for the harbour office?")
    assert got.type.value == "number" and got.focus == "budget"
    assert asked("What is the second quarter of 2025?").focus == "quarter"  # the period itself asked

"""The span reader (reading/spans.py, through reading.read) on passages written here."""

from __future__ import annotations

from stratagraph.reading import read
from tests.reading.conftest import passage


def test_a_span_of_the_expected_type_from_the_sentence_about_the_name() -> None:
    ev = [passage("Harrow Cross is a market town on the river Sallow. It has a population of 23,400 and a "
                  "cathedral built in 1312.", title="Harrow Cross")]  # fmt: skip
    got = read("What is the population of Harrow Cross?", ev)
    assert (got.kind, got.answer) == ("span", "23,400")
    assert got.citations[0].quote.startswith("It has a population")
    assert read("When was the cathedral of Harrow Cross built?", ev).answer == "1312"


def test_the_role_of_a_name_decides_between_two_people() -> None:
    ev = [passage("Quiet Harbour is a 1998 drama directed by Ines Marlow and produced by Tobin Reyes.", title="Quiet Harbour")]
    assert read("Who directed Quiet Harbour?", ev).answer == "Ines Marlow"
    assert read("Who produced Quiet Harbour?", ev).answer == "Tobin Reyes"


def test_a_page_need_not_repeat_its_name() -> None:
    ev = [passage("It covers 96 square kilometres and reaches a depth of 41 metres.", title="Lake Orrin")]
    assert read("What is the area of Lake Orrin?", ev).answer == "96 square kilometres"
    assert read("How deep is Lake Orrin?", ev).answer == "41 metres"


def test_never_a_span_of_another_type_and_no_answer_without_the_relation() -> None:
    ev = [passage("The Brin weir was rebuilt by the Sallow Navigation Company in 1904.", title="Brin weir")]
    assert not read("Who rebuilt the Brin weir?", ev).found  # an organisation is no person
    assert not read("How long is the Brin weir?", ev).found  # no length stated
    assert not read("Who succeeded the engineer of the Brin weir?", ev).found


def test_a_life_span_states_birth_and_death() -> None:
    ev = [passage("**Elsa Brandt** (1871–1943) was a hydraulic engineer from Dunmere.", title="Elsa Brandt")]
    assert read("In what year was Elsa Brandt born?", ev).answer == "1871"
    assert read("When did Elsa Brandt die?", ev).answer == "1943"


def test_an_earlier_value_is_not_the_level_and_two_levels_give_the_sentence() -> None:
    ev = [passage("The fleet grew from 40 buses in 2019 to 55 buses in 2024.", title="Dunmere transit")]
    assert read("How many buses does Dunmere transit have?", ev).answer == "55 buses"  # "from 40": the earlier one
    ev = [passage("The east depot holds 40 buses and the west depot holds 55 buses.", title="Dunmere transit")]
    got = read("How many buses does a Dunmere depot hold?", ev)
    assert got.kind == "sentence" and got.answer == "The east depot holds 40 buses and the west depot holds 55 buses."


def test_the_period_asked_picks_the_number() -> None:
    ev = [passage("Corbel had 2,040 employees at the end of 2026, up from 1,890 at the end of 2025.", title="Corbel")]
    assert read("How many people did Corbel employ at the end of 2026?", ev).answer.startswith("2,040")
    q1 = passage("Monthly riders reached 1.2 million.", title="Q1 letter", doc="q1.md", metadata={"quarter": "Q1", "fiscal_year": 2027})
    q2 = passage("Monthly riders reached 1.5 million.", title="Q2 letter", doc="q2.md", n=1, metadata={"quarter": "Q2", "fiscal_year": 2027})
    assert read("How many monthly riders were there in the second quarter of fiscal 2027?", [q1, q2]).answer == "1.5 million"


def test_a_range_is_one_answer_and_a_unit_goes_with_its_number() -> None:
    ev = [passage("For fiscal 2028 we expect revenue of $210 million to $225 million.", title="Outlook"),
          passage("The hauling price rises from $41 to $44 per wet ton in May.", title="Contracts", n=1)]  # fmt: skip
    assert read("What revenue range is expected for fiscal 2028?", ev).answer == "$210 million to $225 million"
    assert read("What will the hauling cost per wet ton from May?", ev).found


def test_a_cause() -> None:
    ev = [passage("Ticket revenue fell in the winter because the north line was closed for repairs.", title="Report")]
    got = read("Why did ticket revenue fall in the winter?", ev)
    assert got.found and got.answer.startswith("because the north line")


def test_a_sentence_about_two_things_of_a_kind_is_less_about_either() -> None:
    ev = [passage("The combined budget of the Harbour Authority and the Ferry Authority is $9.2 million.", n=0),
          passage("The Ferry Authority budget is $3.9 million, up 4%.", n=1),
          passage("The Lighthouse Authority is run by a board of five.", n=2)]  # fmt: skip
    assert read("How much is the Ferry Authority budget?", ev).answer == "$3.9 million"
    assert not read("What is the budget of the Lighthouse Authority?", ev).found  # "Harbour Authority" is another


def test_a_name_a_tagger_mistypes_is_a_person_by_the_role_it_holds() -> None:
    ev = [passage("The ferry is run by the Marlow Bay Transit Authority, whose director is Ines Calder.")]
    assert read("Who is the director of the Marlow Bay Transit Authority?", ev).answer == "Ines Calder"


def test_which_thing_the_evidence_calls_one() -> None:
    ev = [passage("Our Tern picking arm finished its pilot at Fairhaven.", n=0),
          passage("Tern reached general availability on March 3.", n=1)]  # fmt: skip
    assert read("Which picking arm reached general availability on March 3?", ev).answer == "Tern"


def test_the_argument_of_the_asked_verb_outweighs_another_figure() -> None:
    ev = [passage("After the manager proposed an operating budget of $12,400 thousand, the board adopted the plan.", n=0),
          passage("The board adopted an operating budget of $12,150 thousand.", n=1)]  # fmt: skip
    assert read("What operating budget did the board adopt?", ev).answer == "$12,150 thousand"


def test_a_question_that_names_nothing_is_not_answered() -> None:
    ev = [passage("The Orrin ferry carries 400 passengers.")]
    assert not read("x", ev).found and not read("Who?", ev).found


def test_which_study_is_answered_by_the_document_title() -> None:
    ev = [passage("We measured indoor temperatures in 40 homes before and after their roofs were painted white.",
                  title="White Roofs and Indoor Heat in Orrin", doc="roofs.md"),
          passage("Street trees lowered night temperatures by 0.4 degrees.", title="Trees at Night", doc="trees.md", n=1)]  # fmt: skip
    got = read("Which study measured indoor temperatures of homes before and after their roofs were painted?", ev)
    assert (got.kind, got.answer) == ("section", "White Roofs and Indoor Heat in Orrin")


def test_a_capitalised_thing_is_no_person_without_a_role() -> None:
    ev = [passage("Mara Quill, who had led the design of the Heron Sextant, was chief engineer until 2011.")]
    assert not read("Who succeeded Mara Quill as chief engineer?", ev).found
    assert read("Who led the design of the Heron Sextant?", ev).answer == "Mara Quill"


def test_how_much_of_something_is_no_money() -> None:
    ev = [passage("The call rate explains 64% of the variance in counted frogs, and the survey cost $3,100.")]
    assert read("How much of the variance in counted frogs does the call rate explain?", ev).answer == "64%"


def test_a_quantity_asked_by_its_noun_is_the_number_that_noun_takes() -> None:
    ev = [passage("Across the 16 test panels, the sensor detected cracks down to a threshold of 0.4 mm. Across "
                  "all 31 field trials, the estimates had a mean absolute error of 7.5 percent.", title="Crack sensing")]  # fmt: skip
    assert read("What detection threshold did the crack sensing study report?", ev).answer == "0.4 mm"
    assert read("What mean absolute error did the estimates have in the field trials?", ev).answer == "7.5 percent"
    assert read("How many test panels were used?", ev).answer == "16"


def test_a_percentage_answers_no_money_question() -> None:
    ev = [passage("The Harbour Board spent 12% more on dredging, for a total of $4.2 million.", title="Harbour Board")]
    assert read("How much did the Harbour Board spend on dredging?", ev).answer == "$4.2 million"


def test_a_sentence_hard_wrapped_over_lines_is_read_whole() -> None:
    from stratagraph.reading.sentences import sentences

    text = ("We have restated the first-quarter ferry revenue to $12.1 million from $12.6 million, and the first-quarter\n"
            "cargo revenue to $4.0 million from $4.2 million.\n"
            "- Fleet: 14 vessels\n"
            "- Crew: 310")  # fmt: skip
    ev = [passage(text, title="Orla Ferries Q2 Letter")]
    got = [s.text for s in sentences(ev)]
    assert got[0].endswith("from $4.2 million.") and got[1:] == ["- Fleet: 14 vessels", "- Crew: 310"]
    assert "cargo revenue to $4.0 million" in read("To what figure did Orla restate its first-quarter cargo revenue?", ev).answer


def test_a_forecast_word_governs_only_its_own_clause() -> None:
    ev = [passage("We estimate a fade rate of 0.3 percent per year and obtain a mean absolute error of 12 years.",
                  title="A Fade Model for Gall Inks")]  # fmt: skip
    assert read("What mean absolute error did the fade model reach?", ev).answer == "12 years"


def test_what_a_study_used_is_said_by_juxtaposition_and_forms_of_rates_and_nominalisations() -> None:
    from stratagraph.reading.words import matches

    ev = [passage("Sensors were installed at 42 orchard sites in three valleys.", title="Low-Cost Probes for Orchards")]
    assert read("How many orchard sites did that study use?", ev).answer == "42"
    assert matches("monthly", "month") and matches("retention", "retained") and not matches("monthly", "mouth")


def test_a_figure_a_review_cites_from_another_document_is_not_the_reviews_own() -> None:
    """In an audit memo, "the plan's figure of €1,980 thousand" and "€36,400 in the budget" are the reviewed
    document's figures; asked what the memo gives, its own figure answers."""
    from stratagraph.reading import read
    from tests.reading.conftest import passage

    memo = passage("For Brin Hospital, signed contracts already commit €2,240 thousand of equipment spending in 2025, so "
                   "the plan's figure of €1,980 thousand understates the equipment line.",
                   title="Audit memo on the Brin health plan", doc="audit_memo.md")  # fmt: skip
    assert read("What equipment figure for Brin Hospital does the audit memo give?", [memo]).answer == "€2,240 thousand"
    review = passage("The Committee expects hauling to cost €412 thousand, not €380 thousand in the budget.",
                     title="Committee review of the Brin budget", doc="review.md")  # fmt: skip
    assert read("What hauling cost does the committee expect?", [review]).answer == "€412 thousand"
    stated = passage("While the plan states that 9,400 meters were read by hand, the committee counts 10,120 meters read by hand.",
                     title="Committee review of the Brin budget", doc="review.md")  # fmt: skip
    assert read("How many meters read by hand does the committee count?", [stated]).answer.startswith("10,120")


def test_a_rate_asked_by_its_adjective_is_the_figure_per_that_period() -> None:
    """"What monthly drift": the figure stated per month, not a span of months (a duration)."""
    from stratagraph.reading import read
    from tests.reading.conftest import passage

    ev = [passage("We logged 24 probes with monthly gravimetric samples for 18 months. Readings drifted by a mean of "
                  "0.8% volumetric water content per month.", title="Probe drift in clay", doc="drift.md")]  # fmt: skip
    assert read("What monthly drift did the clay study measure?", ev).answer.startswith("0.8%")
    ferry = [passage("Over 14 days, the Orrin ferry carried 1,200 passengers a day.", title="Orrin ferry trial", doc="trial.md")]
    assert read("How many passengers did the Orrin ferry carry daily?", ferry).answer.startswith("1,200")


def test_restated_to_is_the_new_figure_and_from_or_we_reported_the_old() -> None:
    ev = [passage("We restated second-quarter 2025 charter revenue to $14.2 million from the $15.0 million we reported in "
                  "July.", title="Orrin Q3 2025 call")]  # fmt: skip
    assert read("What is Orrin's restated second-quarter 2025 charter revenue?", ev).answer == "$14.2 million"
    ev = [passage("We restated second-quarter 2025 charter revenue to $14.2 million from the $15.0 million we reported in "
                  "July, and second-quarter freight revenue to $61.7 million.", title="Orrin Q3 2025 call")]  # fmt: skip
    assert read("What is Orrin's restated second-quarter 2025 charter revenue?", ev).kind == "sentence"  # two lines
    # restated in one sentence: no one figure stands out, so the sentence answers
    ev = [passage("Tolls were $15.0 million as we reported in July.", title="Orrin Q2 2025 report")]
    assert read("What were Orrin's tolls?", ev).answer == "$15.0 million"  # a figure first published, and no other
    ev = [passage("At 40 °C the modules kept 91.5 percent of their initial output after 500 hours.", title="Damp heat test")]
    assert read("What output retention after 500 hours did the damp heat test find?", ev).answer == "91.5 percent"


def test_the_people_or_money_a_question_words_its_line_by_need_not_be_written() -> None:
    from tests.reading.conftest import row_fact

    table = passage("Line item | FY2024 | FY2025\nOvertime; FY2024: 210; FY2025: 236\nFuel; FY2024: 95; FY2025: 101",
                    title="Pellam Port budget", path=["2 Harbour Division", "2.1 Personnel"])  # fmt: skip
    facts = {table.chunk_id: [row_fact("Overtime", {"FY2024": ("210", 1000), "FY2025": ("236", 1000)}),
                              row_fact("Fuel", {"FY2024": ("95", 1000), "FY2025": ("101", 1000)})]}  # fmt: skip
    got = read("How much overtime has Pellam Port budgeted for its harbour crews in FY2025?", [table], facts)
    assert got.answer in ("$236 thousand", "$236,000")
    got = read("How much spending on fuel is in the Harbour Division's FY2025 budget?", [table], facts)
    assert got.answer in ("$101 thousand", "$101,000")

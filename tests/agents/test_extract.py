"""The shared no-LLM answer rule (agents/extract.py): question shapes, candidate spans, the pick, on hand-made
evidence (spaCy only, no store)."""

from __future__ import annotations

import pytest

from stratagraph.agents.extract import AnswerType, extract_answer, question_shape, sentences
from stratagraph.retrieval.base import Evidence


def ev(text: str, n: int = 0, title: str = "Doc") -> Evidence:
    return Evidence(rank=n, score=1.0, chunk_id=f"d{n}#0#0", doc_id=f"d{n}", source=f"d{n}.md", title=title,
                    section=title, section_id=f"d{n}::s0", section_path=[title], text=text)  # fmt: skip


# ------------------------------------------------------------------------------------------ shapes
@pytest.mark.parametrize(
    ("question", "kind", "focus"),
    [
        ("From 1945-1949 Dick Humbert played for which NFL team?", AnswerType.ORG, "team"),
        ("Which American city hosted the games?", AnswerType.PLACE, "city"),
        ("Which type of plane was held on the craft?", AnswerType.THING, "plane"),
        ("What is the name of the airport in Wilmington?", AnswerType.THING, "airport"),
        ("Drew Fuller starred in a series that broadcast on what station?", AnswerType.ORG, "station"),
        ("In what year was he born?", AnswerType.DATE, "year"),
        ("What is the hometown of Idris Kalloway?", AnswerType.PLACE, "hometown"),
    ],
)
def test_the_noun_asked_for_is_the_head_of_the_wh_phrase(question: str, kind: AnswerType, focus: str) -> None:
    shape = question_shape(question)
    assert (shape.type, shape.focus) == (kind, focus)


def test_choices_without_a_comma_and_yes_no_in_a_second_sentence() -> None:
    shape = question_shape("Which band was formed first The Exies or Circus Diablo ?")
    assert shape.type == AnswerType.CHOICE and shape.options == ["Exies", "Circus Diablo"]
    assert question_shape("Who is older, Sid Haig or Vic Darchinyan?").options == ["Sid Haig", "Vic Darchinyan"]
    second = question_shape("The director Armando Iannucci has an OBE. Does the director Puneet Sira also have one?")
    assert second.type == AnswerType.YES_NO
    assert question_shape("Did he leave or did he stay in Paris?").options == []  # no names on both sides


def test_only_a_word_written_in_capitals_is_an_acronym() -> None:
    assert question_shape("What is the CFO paid?").acronyms == {"cfo"}
    assert question_shape("Which film did she direct?").acronyms == frozenset()


# ------------------------------------------------------------------------------------------ candidates
def test_relative_dates_and_durations_are_no_dates() -> None:
    evidence = [ev("Today the five-year plan was adopted by the council of Avon.")]
    assert not extract_answer("When was the plan of the council of Avon adopted?", evidence).found
    dated = [ev("The plan of the council of Avon was adopted in March 2019 after a five-year review.")]
    assert extract_answer("When was the plan of the council of Avon adopted?", dated).answer == "March 2019"


def test_a_citation_marker_is_no_number() -> None:
    evidence = [ev("The survey counted 412 nesting pairs on the island [1].")]
    assert extract_answer("How many nesting pairs did the survey count on the island?", evidence).answer == "412"
    marker_only = [ev("The survey counted nesting pairs on the island [1].")]
    assert not extract_answer("How many nesting pairs did the survey count on the island?", marker_only).found


def test_a_nationality_answers_only_a_nationality_question() -> None:
    evidence = [ev("Pearl Jam is an American rock band formed in Seattle in 1990.")]
    assert extract_answer("What was formed in Seattle in 1990?", evidence).answer == "Pearl Jam"
    assert extract_answer("What nationality is the rock band Pearl Jam?", evidence).answer == "American"


def test_a_quoted_title_is_no_person() -> None:
    evidence = [ev('Movies such as "Domestic Disturbance" (2001) were shot in or around Leland.')]
    assert not extract_answer("Who directed the film shot in or around Leland?", evidence).found


def test_the_questions_subject_restated_is_no_answer() -> None:
    evidence = [ev("Kerry-Anne Saxby-Junna was born in Ballina, New South Wales.")]
    assert extract_answer("Which city was Kerry Saxby-Junna born in?", evidence).answer == "Ballina"


def test_a_prose_line_shaped_like_a_row_is_prose() -> None:
    (sent,) = sentences([ev("He led the team; Notable wins: the 1998 final against Leeds.")])
    assert sent.columns == {} and sent.tokens
    table = "Line item | FY2024 | FY2025\nOvertime; FY2024: 1,320; FY2025: 1,170"
    row = [s for s in sentences([ev(table)]) if s.columns]
    assert len(row) == 1 and sorted(row[0].columns.values()) == ["FY2024", "FY2025"]


# ------------------------------------------------------------------------------------------ the pick
def test_an_entity_ending_with_the_noun_asked_for_wins_in_its_sentence() -> None:
    evidence = [ev("West Chicago is a city in DuPage County, Illinois, United States.")]
    assert extract_answer("In what county is West Chicago?", evidence).answer == "DuPage County"


def test_a_number_of_the_measure_asked_keeps_its_sign_and_scale() -> None:
    evidence = [ev("The festival drew about 14,000 visitors and raised $1.72 million for the hospital.")]
    assert extract_answer("How much money did the festival raise for the hospital?", evidence).answer == "$1.72 million"
    share = [ev("Of the 200 households surveyed in Avon, 61% owned a car.")]
    assert extract_answer("What percentage of households surveyed in Avon owned a car?", share).answer == "61%"


def test_a_name_listed_with_the_questions_own_names_is_not_the_answer() -> None:
    evidence = [ev("Last Vegas is a 2013 American comedy film starring Michael Douglas, Robert De Niro and Morgan "
                   "Freeman.")]  # fmt: skip
    assert extract_answer("What movie stars Morgan Freeman and Robert De Niro?", evidence).answer == "Last Vegas"


def test_a_better_sentence_in_a_lower_ranked_chunk_can_win() -> None:
    evidence = [ev("Avon has a small harbour.", 0), ev("The harbour of Avon was built by Thomas Telford in 1810.", 1)]
    got = extract_answer("Who built the harbour of Avon?", evidence)
    assert got.answer == "Thomas Telford" and got.citations[0].chunk_id == "d1#0#0"


def test_yes_no_and_choice_questions_are_never_a_picked_span() -> None:
    evidence = [ev("Avon and Brill are towns in Somerset.")]
    assert not extract_answer("Are Avon and Brill both towns?", evidence).found
    assert not extract_answer("Which is older, Avon or Brill?", evidence).found


def test_nothing_relevant_is_not_found() -> None:
    got = extract_answer("Who painted the ceiling of the Sistine Chapel?", [ev("Avon has a small harbour.")])
    assert not got.found and "content words" in got.reason


def test_a_kind_narrowed_by_a_modifier_the_question_lacks_loses_to_the_plain_one() -> None:
    text = ("Software and Services revenue was $48.8 million, and now accounts for 32% of total revenue. "
            "Hardware revenue was $103.1 million. Revenue of $151.9 million was up 6.5% from $142.6 million.")
    assert extract_answer("What was Northwind's revenue?", [ev(text, title="Northwind")]).answer == "$151.9 million"


def test_a_person_the_tagger_typed_as_another_kind_of_name_is_still_a_person_but_an_organisation_is_no_city() -> None:
    person = ev("The ferry is run by the Marlow Bay Transit Authority, whose director is Ines Calder.")
    assert extract_answer("Who is the director of the Marlow Bay Transit Authority?", [person]).answer == "Ines Calder"
    council = ev("The City Council adopted the budget on June 11, 2024 by a vote of 6 to 1.")
    assert not extract_answer("Which city's council adopted the budget on June 11, 2024?", [council]).found


def test_a_year_question_gets_the_year_of_a_full_date_and_a_when_question_the_start_of_a_range() -> None:
    born = [ev("Trent Reznor (born May 17, 1965) is an American musician who produced the soundtrack.")]
    assert extract_answer("Trent Reznor was born in what year?", born).answer == "1965"
    assert extract_answer("When was Trent Reznor born?", born).answer == "May 17, 1965"
    colony = [ev("Hong Kong was a colony of the British Empire from 1842 to 1997.")]
    assert extract_answer("When did Hong Kong become a colony of the British Empire?", colony).answer == "1842"
    assert extract_answer("In what year did Hong Kong become a colony of the British Empire?", colony).answer == "1842"
    assert extract_answer("When did Hong Kong cease to be a colony of the British Empire?", colony).answer == "1997"
    iso = [ev("The society was founded on 1965-05-17 in Leeds.")]
    assert extract_answer("When was the society founded in Leeds?", iso).answer == "1965-05-17"
    games = [ev("The Winter Olympics were held in Pyeongchang from 9 to 25 February 2018.")]
    assert extract_answer("When were the Winter Olympics held in Pyeongchang?", games).answer == "9 to 25 February 2018"


def test_a_relative_duration_is_no_date() -> None:
    from stratagraph.agents.extract import _is_date

    assert not _is_date("the next 24 years") and not _is_date("the first two years") and _is_date("4 February 1948")
    ruled = [ev("Ceylon remained a dominion for the next 24 years, until it became a republic.")]
    assert not extract_answer("When did Ceylon become a republic?", ruled).found


def test_a_state_is_the_place_after_the_city_and_an_acronym_spelled_out_is_the_questions_own() -> None:
    ward = [ev("M. Ward is a singer-songwriter and guitarist from Portland, Oregon, United States.")]
    assert extract_answer("M. Ward is a singer-songwriter from what state?", ward).answer == "Oregon"
    league = [ev("Dick Humbert played in the National Football League for the Philadelphia Eagles.")]
    assert extract_answer("Which NFL team did Dick Humbert play for?", league).answer == "Philadelphia Eagles"


def test_a_position_or_profession_is_a_common_noun_not_a_name() -> None:
    striker = [ev("Sergio Aguero is an Argentine footballer who plays as a striker for Manchester City.")]
    assert extract_answer("What position does Sergio Aguero play for Manchester City?", striker).answer == "striker"
    keeper = [ev("Tom Reed was a member of the club and played as a goalkeeper.")]
    assert extract_answer("What position did Tom Reed play?", keeper).answer == "goalkeeper"
    flyer = [ev("Amy Johnson was a pioneering English aviator who flew alone from Britain to Australia.")]
    assert extract_answer("What was the profession of Amy Johnson?", flyer).answer.endswith("aviator")


def test_a_name_the_asked_noun_introduces_is_of_the_asked_type_whatever_its_label() -> None:
    sen = [ev("Palash Sen is an Indian singer and actor best known as the founder and frontman of India's pop band Euphoria.")]
    assert extract_answer("Which pop band was founded by Palash Sen?", sen).answer == "Euphoria"
    chicago = [ev("West Chicago is a city in DuPage County, Illinois, United States.")]
    assert extract_answer("In what county is West Chicago?", chicago).answer == "DuPage County"
    from stratagraph.agents.extract import _titled

    power = "The town draws its electricity called the Grid from a dam."
    assert not _titled(power, power.index("Grid"), question_shape("Which city draws its power from the dam?"))
    euphoria = "the pop band Euphoria"
    assert _titled(euphoria, euphoria.index("Euphoria"), question_shape("Which band did he found?"))


def test_a_country_is_not_a_region_within_it_and_a_county_not_the_state_after_it() -> None:
    uganda = [ev("Buyende is a town in the Eastern Region of Uganda.")]
    assert extract_answer("Which country is Buyende located in?", uganda).answer == "Uganda"
    somalia = [ev("Ceelmakoile is a town in the central Hiran region of Somalia.")]
    assert extract_answer("Which country is Ceelmakoile located in?", somalia).answer == "Somalia"
    iowa = [ev("Black Hawk Township is located in Jefferson County, Iowa.")]
    assert extract_answer("Which county is Black Hawk Township located in?", iowa).answer == "Jefferson County"
    only_state = [ev("Jefferson County lies in southeastern Iowa.", 0),
                  ev("Jefferson County borders Van Buren County, Iowa.", 1)]  # fmt: skip
    got = extract_answer("Which county borders Jefferson County?", only_state)
    assert got.answer == "Van Buren County"  # not Iowa, the state after the county
    listed = [ev("The Skunk River flows through Polk County, Story County, and Jefferson County.")]
    assert extract_answer("What county does the Skunk River leave Polk County for?", listed).answer in ("Story County", "Jefferson County")


def test_a_place_written_with_the_asked_noun_is_that_kind_of_place() -> None:
    village = [ev("Shringarpur is a small village in Ratnagiri district, Konkan, Maharashtra state, India.")]
    assert extract_answer("Which state is Shringarpur located in?", village).answer.startswith("Maharashtra")

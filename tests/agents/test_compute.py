"""Choices and yes/no questions decided in code (agents/compute.py), on hand-made evidence."""

from __future__ import annotations

from stratagraph.agents.compute import choose, yes_no
from tests.agents.test_extract import ev

AIRPORTS = [
    ev("Watertown International Airport is a public use airport located in Jefferson County, New York, United States.", 0),
    ev("Alexandria International Airport is a public use airport in Alexandria, in Rapides Parish, Louisiana, "
       "United States.", 1),
]  # fmt: skip


def test_the_same_state_is_decided_by_the_places_stated_for_each() -> None:
    q = "Are Watertown International Airport and Alexandria International Airport both airports in the same state?"
    got = yes_no(q, AIRPORTS)
    assert got is not None and got.answer == "no"  # the country both lie in is not their state
    assert {c.chunk_id for c in got.citations} == {"d0#0#0", "d1#0#0"}
    same = [ev("Avon Airport is a public use airport located in Ulster County, New York, United States.", 0),
            AIRPORTS[0].model_copy(update={"chunk_id": "d1#0#0", "doc_id": "d1"})]  # fmt: skip
    both = yes_no("Are Avon Airport and Watertown International Airport in the same state?", same)
    assert both is not None and both.answer == "yes"


def test_the_same_province_compares_the_places_named_as_provinces() -> None:
    cities = [ev("Nantong (; former names: Tongzhou; Qihai dialect: Nantung) is a prefecture-level city in Jiangsu "
                 "province, China. It borders Yancheng and Shanghai.", 0),
              ev("Jingdezhen is a prefecture-level city in northeastern Jiangxi province, China, bordering Anhui.", 1),
              ev("Yancheng is a prefecture-level city in Jiangsu province, China.", 2)]  # fmt: skip
    got = yes_no("Are Nantong and Jingdezhen situated in the same province?", cities)
    assert got is not None and got.answer == "no"
    assert got.computation is not None and got.computation.expression == "Nantong: jiangsu vs Jingdezhen: jiangxi"
    both = yes_no("Are Nantong and Yancheng situated in the same province?", [cities[0], cities[2]])
    assert both is not None and both.answer == "yes"
    boroughs = [ev("Brooklyn is a borough of New York City.", 0), ev("Albany is the capital of New York state.", 1)]
    apart = yes_no("Are Brooklyn and Albany in the same city?", boroughs)
    assert apart is not None and apart.answer == "no"  # "New York City" is a name: its "City" stays


def test_yes_needs_every_subject_to_hold_the_property() -> None:
    evidence = [ev("Christopher Nolan is an English-American film director.", 0),
                ev("Sathish Kalathil is an Indian film director and producer.", 1)]  # fmt: skip
    got = yes_no("Are Christopher Nolan and Sathish Kalathil both film directors?", evidence)
    assert got is not None and got.answer == "yes" and len(got.citations) == 2
    assert yes_no("Are Christopher Nolan and Sathish Kalathil both painters?", evidence) is None


def test_another_nationality_stated_answers_no() -> None:
    evidence = [ev("Pick Me Up is a British weekly women's magazine.", 0),
                ev("Vogue Hommes is a French fashion magazine.", 1)]  # fmt: skip
    got = yes_no("Are Pick Me Up and Vogue Hommes both British magazines?", evidence)
    assert got is not None and got.answer == "no" and "French" in got.citations[0].quote


def test_a_yes_no_second_sentence_asks_about_its_own_subject() -> None:
    evidence = [ev("Armando Iannucci, OBE, is a Scottish director.", 0), ev("Puneet Sira is an Indian director.", 1)]
    q = "The director Armando Iannucci has an OBE. Does the director Puneet Sira also have one?"
    assert yes_no(q, evidence) is None  # nothing says Puneet Sira has an OBE: not settled


def test_a_choice_without_an_order_word_goes_to_the_option_with_the_property() -> None:
    evidence = [ev("Mark King is an English musician, the bassist of Level 42.", 0),
                ev("Nicholas Lofton Hexum, known as Nick Hexum, is an American singer.", 1)]  # fmt: skip
    got = choose("Which singer is American, Mark King or Nick Hexum?", evidence)
    assert got is not None and got.answer == "Nick Hexum"
    assert choose("Which singer is Welsh, Mark King or Nick Hexum?", evidence) is None


def test_a_choice_without_a_comma_is_compared_by_dates() -> None:
    evidence = [ev("The Exies are an American rock band formed in Los Angeles in 1997.", 0),
                ev("Circus Diablo was an American rock band formed in 2004.", 1)]  # fmt: skip
    got = choose("Which band was formed first The Exies or Circus Diablo?", evidence)
    assert got is not None and got.answer == "Exies" and got.computation.operation == "compare (earliest)"


def test_what_two_names_have_in_common_is_a_nationality_or_kind_both_sentences_state() -> None:
    from stratagraph.agents.compute import decide

    both = [ev('Elwyn Brooks "E. B." White was an American writer and a contributor to The New Yorker.', 0),
            ev("Dan Masterson (born 1934) is an American poet and professor.", 1)]  # fmt: skip
    got = decide("What do E. B. White and Dan Masterson have in common?", both)
    assert got is not None and got.answer == "American" and len(got.citations) == 2
    poets = [ev("Ada Brook is a Canadian poet.", 0), ev("Ben Hale is an English poet and critic.", 1)]
    shared = decide("What do Ada Brook and Ben Hale have in common?", poets)
    assert shared is not None and shared.answer == "poet"
    apart = [ev("Ada Brook is a Canadian poet.", 0), ev("Ben Hale is an English painter.", 1)]
    assert decide("What do Ada Brook and Ben Hale have in common?", apart) is None
    members = [ev("Ada Brook was a member of the Senate.", 0), ev("Ben Hale was a member of the band.", 1)]
    assert decide("What do both Ada Brook and Ben Hale have in common?", members) is None

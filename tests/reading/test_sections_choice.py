"""Headings, choices and computations over prose (reading/sections.py, choice.py, arithmetic.py) on passages
written here."""

from __future__ import annotations

from stratagraph.reading import read
from tests.reading.conftest import passage


def test_which_section_explains() -> None:
    ev = [passage("We summarise the network and its sensors.", title="Sensor Network", path=["Abstract"], n=0),
          passage("Two sensors of every ten were held back to test the model on unseen sites.", title="Sensor Network",
                  path=["3 Method", "3.2 Held-out Sites"], n=1)]  # fmt: skip
    got = read("Which section of the sensor network paper explains how sensors were held back to test the model?", ev)
    assert (got.kind, got.answer) == ("section", "Held-out Sites")


def test_which_unit_by_the_headings_kind() -> None:
    ev = [passage("Valve replacement at the Brin station is budgeted here.", title="Plan",
                  path=["2. Wastewater Operations", "2.3 Lift Stations"], n=0),
          passage("Meter reading routes are redrawn.", title="Plan", path=["1. Water Operations", "1.4 Meters"], n=1)]  # fmt: skip
    got = read("Which division's part of the plan covers valve replacement at the Brin station?", ev)
    assert got.answer == "Wastewater Operations"


def test_a_choice_by_dates_and_before_or_after() -> None:
    ev = [passage("The Tollan Museum opened in 1921.", title="Tollan Museum", doc="m.md"),
          passage("The Brin Gallery was founded in 1934 by local painters.", title="Brin Gallery", doc="g.md", n=1)]
    assert read("Which is older, the Tollan Museum or the Brin Gallery?", ev).answer == "Tollan Museum"
    got = read("Was the Brin Gallery founded before or after the Tollan Museum?", ev)
    assert (got.kind, got.answer) == ("choice", "after")


def test_a_difference_of_two_prose_figures() -> None:
    ev = [passage("Dunmere has a population of 31,500.", title="Dunmere", doc="d.md"),
          passage("Harrow Cross has a population of 23,400.", title="Harrow Cross", doc="h.md", n=1)]
    got = read("How many more people live in Dunmere than in Harrow Cross?", ev)
    assert (got.kind, got.answer) == ("computed", "8,100")
    assert not read("How many more people live in Dunmere than in Sallow Ford?", ev).found  # an operand missing


def test_the_unit_of_a_line_when_the_title_names_the_body_every_line_belongs_to() -> None:
    title = "Orla Water Board Budget 2027"
    intro = passage("The operating budget covers three divisions. Both the Pumping and Metering divisions carry "
                    "separate Energy lines.", title=title, path=["4 Operating Budget"], n=0)  # fmt: skip
    rows = passage("Line item | FY2026 | FY2027\nPersonnel; FY2026: 610; FY2027: 655\nPostage; FY2026: 88; FY2027: 91",
                   title=title, path=["4 Operating Budget", "4.3 Billing Division"], n=1)  # fmt: skip
    got = read("Which division of the Orla Water Board carries the Postage line?", [intro, rows])
    assert (got.kind, got.answer) == ("section", "Billing Division")
    got = read("In the Orla Water Board's budget, which section contains the Postage line?", [intro, rows])
    assert (got.kind, got.answer) == ("section", "Billing Division")


def test_the_part_of_a_named_unit_that_grows_most_is_read_from_its_sections_totals() -> None:
    from tests.reading.conftest import row_fact

    def unit(path: list[str], rows: dict[str, tuple[str, str]], n: int) -> tuple:
        lines = ["Line item | FY2026 Actual | FY2027 Budget"] + [f"{k}; FY2026 Actual: {a}; FY2027 Budget: {b}" for k, (a, b) in rows.items()]
        ev = passage("\n".join(lines), title="Town of Brin Budget", path=path, n=n)
        return ev, [row_fact(k, {"FY2026 Actual": (a, 1000), "FY2027 Budget": (b, 1000)}) for k, (a, b) in rows.items()]

    parts = [unit(["3 Harbour Services", "3.1 Pilotage"], {"Personnel": ("900", "950"), "Total": ("1,200", "1,290")}, 0),
             unit(["3 Harbour Services", "3.2 Dredging"], {"Contracts": ("400", "520"), "Total": ("410", "530")}, 1),
             unit(["3 Harbour Services", "3.2 Dredging", "3.2.1 Silt Survey"], {"Contracts": ("50", "58"), "Total": ("50", "58")}, 2),
             unit(["4 Parks", "4.1 Playgrounds"], {"Equipment": ("20", "45"), "Total": ("20", "45")}, 3)]  # fmt: skip
    ev, facts = [p for p, _ in parts], {p.chunk_id: f for p, f in parts}
    got = read("Which part of Brin's Harbour Services budget grows fastest in percentage terms from FY2026 to FY2027?", ev, facts)
    assert (got.kind, got.answer) == ("section", "Dredging")  # 29% against 7.5% and 16%; Playgrounds is no part of it
    got = read("Which part of Brin's Harbour Services budget grows the most from FY2026 to FY2027?", ev, facts)
    assert got.answer == "Dredging"  # 120 against 90 and 8
    got = read("Which part of the Harbour Services gets the smallest FY2027 budget?", ev, facts)
    assert got.answer == "Silt Survey"


def test_a_heading_that_groups_by_the_asked_noun_a_negated_sentence_and_a_question_with_a_premise() -> None:
    title = "Orla Schools Budget 2027"
    intro = passage("Ferry fares for pupils are not funded here; they are carried in the transport budget.",
                    title=title, path=["3 Expenditure by Division", "3.1 Primary Schools", "3.1.1 Operations"], n=0)  # fmt: skip
    rows = passage("Line item | 2026 | 2027\nFerry Fares; 2026: 120; 2027: 131\nBus Hire; 2026: 300; 2027: 310",
                   title=title, path=["3 Expenditure by Division", "3.2 Pupil Transport", "3.2.1 Operations"], n=1)  # fmt: skip
    got = read("Ferry fares aren't paid for out of the primary schools' operations budget. Which division of the Orla "
               "schools budget carries the ferry fares line?", [intro, rows])  # fmt: skip
    assert (got.kind, got.answer) == ("section", "Pupil Transport")


def test_the_unit_that_pays_for_a_line_is_the_heading_over_it() -> None:
    """"Which department pays for road salt?": the headings do not say "department"; the line's own section
    answers, or the level where a heading does end with the noun ("2.1 Public Works Department")."""
    from stratagraph.reading import read
    from tests.reading.conftest import passage, row_fact

    header = "Line item | FY2026 Actual | FY2027 Budget"
    salt = passage(f"{header}\nRoad salt; FY2026 Actual: 90; FY2027 Budget: 85\nFuel; FY2026 Actual: 300; FY2027 Budget: 410",
                   title="Town of Brin Budget", path=["2. Operations", "2.1 Winter Services", "2.1.1 Depot Operations"], n=0)  # fmt: skip
    books = passage(f"{header}\nBook stock; FY2026 Actual: 120; FY2027 Budget: 130",
                    title="Town of Brin Budget", path=["3. Community", "3.1 Library Department", "3.1.1 Collections"], n=1)  # fmt: skip
    facts = {salt.chunk_id: [row_fact("Road salt", {"FY2026 Actual": ("90", 1000), "FY2027 Budget": ("85", 1000)})],
             books.chunk_id: [row_fact("Book stock", {"FY2026 Actual": ("120", 1000), "FY2027 Budget": ("130", 1000)})]}  # fmt: skip
    assert read("Which department of the Brin budget pays for road salt?", [salt], facts).answer == "Depot Operations"
    assert read("Which department of the Brin budget pays for book stock?", [salt, books], facts).answer == "Library Department"

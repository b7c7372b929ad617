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

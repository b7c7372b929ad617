"""Which decompositions are kept (agents/decompose.honest), on questions written here."""

from __future__ import annotations

import pytest

from stratagraph.agents.decompose import honest
from stratagraph.retrieval.decompose import decompose
from stratagraph.text.nlp import load_nlp


def _subs(question: str):
    return decompose(load_nlp(), question)


@pytest.mark.parametrize(
    "question",
    [
        "In the Town of Brinmouth's 2026 budget, how much goes to road salt?",
        "What was the fuel line in Brinmouth's Harbour Patrol actuals for FY2025?",
        "What was the fuel line in Brinmouth's Harbour Patrol outturn for FY2025?",
    ],
)
def test_a_possessive_on_an_amount_is_asked_whole(question: str) -> None:
    subs, why = honest(_subs(question), question)
    assert len(subs) == 1 and subs[0].text == question and "asked whole" in why


def test_a_possessive_on_a_person_is_a_hop() -> None:
    question = "Where was Mara Quill's mother born?"
    subs, why = honest(_subs(question), question)
    assert len(subs) == 2 and why == ""

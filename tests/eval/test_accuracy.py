"""The accuracy judge of ``eval qa`` on answers written here (no data set)."""

from __future__ import annotations

import pytest

from stratagraph.eval.accuracy import MAX_WORDS, accurate, contains


@pytest.mark.parametrize(
    ("prediction", "accepted"),
    [
        ("$2.98 million", "$2,980 thousand"),
        ("$2,980,000", "$2,980 thousand"),
        ("2,980 thousand dollars", "$2.98 million"),
        ("12.5%", "12.5 percent"),
        ("The Harbour Board", "harbour board"),
        ("1,170", "1170"),
        ("It fell by 150.", "-150"),
        ("Lake Orrin, in the north", "Lake Orrin"),
    ],
)
def test_same_answer_written_differently(prediction: str, accepted: str) -> None:
    assert contains(prediction, accepted)


@pytest.mark.parametrize(
    ("prediction", "accepted"),
    [
        ("2,980", "$2,980 thousand"),  # a bare number is not the scaled amount
        ("$2.9 million", "$2,980 thousand"),
        ("Orrin", "Lake Orrin"),
        ("1,171", "1,170"),
        ("Board Harbour", "harbour board"),  # words in order
    ],
)
def test_different_answers(prediction: str, accepted: str) -> None:
    assert not contains(prediction, accepted)


def test_found_and_length() -> None:
    assert accurate("Lake Orrin", True, ["Lake Orrin"])
    assert not accurate("Lake Orrin", False, ["Lake Orrin"])  # marked not found
    long = " ".join(["word"] * MAX_WORDS) + " Lake Orrin"
    assert not accurate(long, True, ["Lake Orrin"])  # not one short sentence
    assert accurate("The documents do not answer this question.", False, [])  # unanswerable: abstaining is right
    assert not accurate("Lake Orrin", True, [])

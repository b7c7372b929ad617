"""Following a citation before reading (agents/cite.py), on papers written here: a question about a work
through the paper that cites it is answered from the cited paper, never with the citing paper's own figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagraph.agents.cite import citing_language, follow_citation

CITING = """# Drift Correction for Buoy Thermistors

Nadia Voskuijlen and Ortwin Pell. Journal of Marine Sensing, 2022.

## Abstract

We correct thermistor drift on moored buoys. Our correction reaches a residual bias of 0.31 degrees.

## Method

Buoys were calibrated with the bath procedure of [1] and compared with the profiles of [2].

## References

[1] Marrick, E. and Dobbs, F. (2019). Bath Calibration of Moored Thermistor Strings. Journal of Marine Sensing, 4, 1-12.

[2] Quist, L. (2015). Ship Profiles of the Eastern Shelf. Shelf Notes, 2, 7-9.
"""

CITED = """# Bath Calibration of Moored Thermistor Strings

Esme Marrick and Fen Dobbs. Journal of Marine Sensing, 2019.

## Abstract

We calibrate thermistor strings in a stirred bath before deployment.

## Results

Across the 40 strings, the bath procedure reached a calibration uncertainty of 0.05 degrees.
"""

PLAIN = """Bath Calibration Revisited
==========================

Fen Dobbs. Shelf Notes, 2021.

Abstract
--------

We repeat the bath procedure on 12 strings.

References

[1] Marrick, E. and Dobbs, F. (2019). Bath Calibration of Moored Thermistor Strings. Journal of Marine Sensing, 4, 1-12.
"""


@pytest.mark.parametrize(
    "question",
    [
        "What uncertainty did the study that Voskuijlen cites report?",
        "Voskuijlen and Pell calibrated with the procedure of their reference [1]. What uncertainty did it reach?",
        "The buoy paper builds on an earlier bath calibration. What uncertainty did that study reach?",
        "Which works are cited by Pell?",
        # a work told by its place before another
        "Voskuijlen's drift correction takes its bath step from an earlier study. What uncertainty did it report?",
        "Pell (2022) extends the approach of an earlier calibration paper. What uncertainty did that paper reach?",
        "The buoy paper uses a bath procedure. What uncertainty did the paper that proposed that procedure report?",
    ],
)
def test_citing_language(question: str) -> None:
    assert citing_language(question)


@pytest.mark.parametrize(
    "question",
    ["What residual bias does the buoy paper report?", "Who built the bridge over the Orla?",
     "What is the budget for the Fire Department?", "What was the earlier revenue figure of Orla?",
     "What did the earlier report of the committee say?"],
)
def test_no_citing_language(question: str) -> None:
    assert not citing_language(question)


@pytest.fixture
def papers(tmp_path: Path, sg):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "voskuijlen_2022.md").write_text(CITING)
    (docs / "marrick_2019.md").write_text(CITED)
    (docs / "dobbs_2021.txt").write_text(PLAIN)
    sg.ingest([docs])
    return sg


def test_the_cited_paper_is_found_by_its_marker(papers) -> None:
    q = "Voskuijlen and Pell calibrated their buoys with the procedure of their reference [1]. What calibration uncertainty did that study report?"
    hop = follow_citation(papers.services.retrieval, q)
    assert hop is not None and hop.citing.endswith("voskuijlen_2022.md") and hop.cited.endswith("marrick_2019.md")
    assert all(e.doc_id == hop.cited for e in hop.evidence)
    assert not hop.frame.names  # the citing paper's authors are how the question finds it, not what it asks about


def test_the_cited_paper_is_found_by_its_description(papers) -> None:
    hop = follow_citation(papers.services.retrieval,
                          "What uncertainty did the bath calibration study that Voskuijlen and Pell cite report?")
    assert hop is not None and hop.cited.endswith("marrick_2019.md")


def test_an_earlier_study_of_an_authors_paper_is_its_reference(papers) -> None:
    q = ("Voskuijlen's drift correction takes its bath calibration from an earlier study. What calibration uncertainty "
         "did that earlier study report?")  # fmt: skip
    hop = follow_citation(papers.services.retrieval, q)
    assert hop is not None and hop.citing.endswith("voskuijlen_2022.md") and hop.cited.endswith("marrick_2019.md")


def test_a_plain_text_paper_cites_too(papers) -> None:
    hop = follow_citation(papers.services.retrieval, "What uncertainty did the study Dobbs cites in 2021 report?")
    assert hop is not None and hop.citing.endswith("dobbs_2021.txt") and hop.cited.endswith("marrick_2019.md")


@pytest.mark.parametrize("strategy", ["lesegr", "hybrid", "tqr", "kag", "bag"])
def test_every_workflow_answers_from_the_cited_paper(papers, strategy: str) -> None:
    q = "Voskuijlen and Pell calibrated their buoys with the procedure of their reference [1]. What calibration uncertainty did that study report?"
    answer = papers.ask(q, strategy=strategy)
    assert answer.found and "0.05" in answer.answer  # not the citing paper's own 0.31
    assert all(c.doc_id.endswith("marrick_2019.md") for c in answer.citations)


def test_a_cited_work_that_is_not_stored_is_not_found(papers) -> None:
    q = "Voskuijlen and Pell compared their buoys with the profiles of their reference [2]. How many profiles did that study use?"
    hop = follow_citation(papers.services.retrieval, q)
    assert hop is not None and hop.cited is None
    answer = papers.ask(q, strategy="lesegr")
    assert not answer.found

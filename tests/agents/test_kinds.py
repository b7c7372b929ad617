"""The asked kind through the concept layer (KAG §2.4, agents/common.Step.kinds): "which vessel" is answered
with an entity the graph types as a vessel, though the answering sentence never calls it one."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagraph import StrataGraph
from stratagraph.config import Settings

SHIP = "# Skua\n\nThe Skua is a vessel of the Kellsay Lighthouse Service. She was built at Port Ashby in 1869.\n"
LIGHT = "# Kellsay Light\n\nIn 1871 the lamp reached Kellsay aboard the Skua, with the Petrel Company's barge in tow.\n"
QUESTION = "Which vessel brought the lamp to Kellsay in 1871?"


def _store(tmp_path: Path, concept_layer: bool) -> StrataGraph:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "skua.md").write_text(SHIP)
    (docs / "kellsay.md").write_text(LIGHT)
    sg = StrataGraph(Settings(home=tmp_path / "store", concept_layer=concept_layer))
    sg.ingest([docs])
    return sg


@pytest.mark.parametrize("strategy", ["hybrid", "kag", "tqr", "lesegr", "bag"])
def test_the_graph_types_the_answer(tmp_path: Path, strategy: str) -> None:
    with _store(tmp_path, True) as sg:
        answer = sg.ask(QUESTION, strategy=strategy)
    assert answer.found and answer.answer == "Skua"
    assert any(c.name == "entities_of_kind" for e in answer.trace for c in e.tool_calls)


def test_without_the_concept_layer_nothing_says_it_is_a_vessel(tmp_path: Path) -> None:
    with _store(tmp_path, False) as sg:
        answer = sg.ask(QUESTION, strategy="hybrid")
    assert not answer.found

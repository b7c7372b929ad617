"""``eval generate``'s 2-hop chains on the encyclopedia set (thirteen linked pages, no tables, no citations):
chains through any argument role and through an entity's own page (``DESCRIBED_BY``), fifty questions whose
answers a separate parser re-derives from the documents' text, gold chunks that hold the bridge and the
answer, and a checker that rejects a wrong answer or a wrong first sentence."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.eval.generate import candidates, generate, write_questions
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from check_generated import check  # noqa: E402

ENCYCLOPEDIA = REPO / "benchmarks" / "data" / "encyclopedia" / "docs"


@pytest.fixture(scope="module")
def encyclopedia_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("encyclopedia-store")
    with StrataGraph(Settings(home=home, extract_processes=1)) as sg:
        assert sg.ingest([ENCYCLOPEDIA], base=REPO).failed == 0
    return home


@pytest.fixture(scope="module")
def found(encyclopedia_home: Path) -> dict:
    with StrataGraph(Settings(home=encyclopedia_home)) as sg:
        return candidates(sg.services.graph)


def test_fifty_questions_from_pages_with_no_tables(encyclopedia_home: Path, found: dict, tmp_path: Path) -> None:
    with StrataGraph(Settings(home=encyclopedia_home)) as sg:
        questions = generate(sg.services.graph, n=50, seed=0, found=found)
    kinds = Counter(q.kind for q in questions)
    assert len(questions) == 50 and kinds["chain_2hop"] >= 45, kinds
    assert not found["table_cell"] and not found["citation_hop"]  # the set has neither: chains carry it
    path = write_questions(questions, tmp_path)
    result = check([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()], REPO)
    assert result["share"] >= 95.0, result["disagree"]


def test_chains_go_through_obliques_and_through_pages(found: dict) -> None:
    chains = found["chain_2hop"]
    via = Counter(q.derivation["via"] for q in chains)
    assert via["fact"] and via["page"], via
    bridge_roles = Counter(q.derivation["roles"][0] for q in chains)
    assert bridge_roles["oblique"], bridge_roles  # "founded in [X]", "born in [X]": the bridge is an oblique
    # a page chain: the second sentence is on the bridge's own page, and need not name the bridge at all
    assert any(q.derivation["via"] == "page" and "[X]" not in q.derivation["second"] for q in chains)
    for q in chains:
        first, second = q.derivation["first"], q.derivation["second"]
        assert first.count("[X]") == 1 and second.count("[Y]") == 1
        low = q.question.casefold()
        assert q.answers[0].casefold() not in low and q.derivation["bridge"].casefold() not in low, q.question


def test_gold_chunks_hold_the_bridge_then_the_answer(encyclopedia_home: Path, found: dict) -> None:
    with StrataGraph(Settings(home=encyclopedia_home)) as sg:
        for q in found["chain_2hop"]:
            first, second = (sg.services.graph.get_node(c).props["text"] for c in q.gold_chunks)
            assert q.derivation["bridge"] in first, q
            assert q.answers[0] in second, q
            if q.derivation["via"] == "page":  # the second chunk is on a page whose title names the bridge
                doc = sg.services.graph.get_node(q.gold_docs[-1])
                section = sg.services.graph.get_node(sg.services.graph.get_node(q.gold_chunks[-1]).props["section_id"])
                titles = {doc.props["title"].casefold(), section.props["title"].casefold()}
                assert any(t in q.derivation["bridge"].casefold() for t in titles), q


def test_checker_rejects_a_wrong_answer_and_a_wrong_first_sentence(found: dict) -> None:
    rows = [q.model_dump() for q in found["chain_2hop"][:10]]
    assert check(rows, REPO)["agree"] == 10
    wrong = [r | {"answers": ["Lake Vennor" if r["answers"][0] != "Lake Vennor" else "Corvel"]} for r in rows]
    assert check(wrong, REPO)["agree"] == 0
    # the first sentence quoted with a word changed: no sentence of the document completes it, no bridge
    moved = [r | {"derivation": r["derivation"] | {"first": r["derivation"]["first"].replace(" ", " not ", 1)}}
             for r in rows]  # fmt: skip
    assert check(moved, REPO)["agree"] == 0


def test_cli_says_why_a_graph_supports_fewer(encyclopedia_home: Path, found: dict, tmp_path: Path) -> None:
    from tests.conftest import cli_json

    total = sum(len(v) for v in found.values())
    code, out, _ = cli_json("--store", str(encyclopedia_home), "eval", "generate", "--n", str(total + 5),
                            "--out", str(tmp_path / "g"))  # fmt: skip
    assert code == 0 and out["questions"] == total
    assert out["supported"]["chain_2hop"] == len(found["chain_2hop"]) and out["supported"]["table_cell"] == 0
    assert set(out["short"]) == {k for k, v in found.items() if not v}

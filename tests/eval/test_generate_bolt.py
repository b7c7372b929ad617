"""``eval generate`` and the no-model metrics on the Bolt backend (the Neo4j store on the session's Bolt
server, tests/graph_store/bolt.py: a local ArcadeDB, or the empty Neo4j that NEO4J_URI names): examples/
ingested there gives the same question set as the embedded store, its answers re-derive from the documents,
and ``eval qa`` / ``eval retrieval`` on the generated folder score as they do on SQLite."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagraph import Settings, StrataGraph
from stratagraph.eval.generate import generate, write_questions
from tests.conftest import EXAMPLES, REPO
from tests.graph_store.bolt import TEST_RETRY_SECONDS, BoltTarget, bolt_target

sys.path.insert(0, str(REPO / "benchmarks"))
from check_generated import check  # noqa: E402

METRICS = ["gold_recall", "citation_validity", "computed_share"]


@pytest.fixture(scope="module")
def bolt_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    target: BoltTarget = bolt_target()
    root = tmp_path_factory.mktemp("bolt-examples")
    settings = Settings(home=root / "home", graph="neo4j", neo4j_uri=target.uri, neo4j_user=target.user,
                        neo4j_password=target.password, neo4j_database=target.database_for(str(root)),
                        neo4j_max_retry_time=TEST_RETRY_SECONDS, extract_processes=1)  # fmt: skip
    with StrataGraph(settings) as sg:
        assert sg.services.graph.info().backend == "neo4j"
        assert sg.ingest([EXAMPLES], base=EXAMPLES.parent).failed == 0
    yield settings
    target.drop(str(root))


@pytest.fixture(scope="module")
def both_sets(bolt_settings: Settings, examples_home: Path) -> tuple[list, list]:
    with StrataGraph(bolt_settings) as sg:
        on_bolt = generate(sg.services.graph, n=50, seed=0)
    with StrataGraph(Settings(home=examples_home)) as sg:
        on_sqlite = generate(sg.services.graph, n=50, seed=0)
    return on_bolt, on_sqlite


def test_generate_on_bolt_gives_the_embedded_stores_set(both_sets: tuple[list, list], tmp_path: Path) -> None:
    on_bolt, on_sqlite = both_sets
    assert len(on_bolt) == 50 and {q.kind for q in on_bolt} >= {"table_cell", "section", "chain_2hop"}
    assert [q.model_dump() for q in on_bolt] == [q.model_dump() for q in on_sqlite]
    path = write_questions(on_bolt, tmp_path)
    result = check([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()], REPO)
    assert result["share"] >= 95.0, result["disagree"]


def test_no_model_metrics_on_bolt_score_as_on_sqlite(bolt_settings: Settings, examples_home: Path,
                                                    both_sets: tuple[list, list], tmp_path: Path) -> None:  # fmt: skip
    from stratagraph.eval.qa import evaluate_qa
    from stratagraph.eval.retrieval import evaluate

    on_bolt, _ = both_sets
    write_questions(on_bolt[:12], tmp_path / "gen")
    qa = {name: evaluate_qa(str(tmp_path / "gen"), ["kag", "lesegr"], s, metrics=METRICS)["results"]
          for name, s in (("bolt", bolt_settings), ("sqlite", Settings(home=examples_home)))}  # fmt: skip
    for workflow in ("kag", "lesegr"):
        bolt, sqlite = qa["bolt"][workflow], qa["sqlite"][workflow]
        assert set(bolt["metrics"]) == set(METRICS)
        assert bolt["metrics"] == sqlite["metrics"], workflow
        assert (bolt["accuracy"], bolt["found_rate"]) == (sqlite["accuracy"], sqlite["found_rate"]), workflow
    assert qa["bolt"]["kag"]["metrics"]["citation_validity"] == 1.0  # every found answer's quotes verbatim
    ret = {name: evaluate(str(tmp_path / "gen"), ["ppr", "lexical"], [1, 5], s)["results"]
           for name, s in (("bolt", bolt_settings), ("sqlite", Settings(home=examples_home)))}  # fmt: skip
    for strategy in ("ppr", "lexical"):
        assert ret["bolt"][strategy]["recall@5"] == ret["sqlite"][strategy]["recall@5"], strategy
    assert 0 < ret["bolt"]["ppr"]["recall@5"] <= 100

"""The knowledge layer as stored (stratagraph.ingest.knowledge): a fact node read back from the store carries
its predicate and its arguments with their roles, on the embedded SQLite store and on a Bolt server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import canonical
from tests.graph_store.bolt import TEST_RETRY_SECONDS, bolt_target

from stratagraph import Settings, StrataGraph
from stratagraph.schema import NodeLabel

FILMS = """# Films of Calder Bay

Quiet Harbour is a 1998 drama directed by Ines Marlow and produced by Tobin Reyes.
Aldo Ferrant was born in Calder Bay in 1871.

| Film | Budget |
|---|---|
| Quiet Harbour | $1,200 |
"""


@pytest.fixture(params=["sqlite", "bolt"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    home = tmp_path / "home"
    if request.param == "sqlite":
        yield Settings(home=home, extract_processes=1)
        return
    target, key = bolt_target(), str(tmp_path)
    yield Settings(
        home=home,
        graph="neo4j",
        neo4j_uri=target.uri,
        neo4j_user=target.user,
        neo4j_password=target.password,
        neo4j_database=target.database_for(key),
        neo4j_max_retry_time=TEST_RETRY_SECONDS,
        extract_processes=1,
    )
    target.drop(key)


def roles(props: dict) -> list[tuple[str, str, str, str, str]]:
    return [(a["predicate"], a["role"], a["text"], a["prep"], a["entity"]) for a in props["arguments"]]


def test_fact_nodes_carry_their_arguments_with_roles(settings: Settings, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "films.md").write_text(FILMS, encoding="utf-8")
    with StrataGraph(settings) as sg:
        assert sg.ingest([docs], base=tmp_path).failed == 0
        facts = sg.graph.nodes_by_label(NodeLabel.FACT)
        by_predicate = {n.props["predicate"]: n.props for n in facts if n.props["predicate"]}
        chunks = {n.id: n.props["text"] for n in sg.graph.nodes_by_label(NodeLabel.CHUNK)}

        assert roles(by_predicate["be"]) == [
            ("be", "subject", "Quiet Harbour", "", "Harbour"),  # the entity as the fact lists it (spaCy's NER)
            ("direct", "object", "Quiet Harbour", "", "Harbour"),
            ("be", "attribute", "a 1998 drama", "", ""),
            ("direct", "agent", "Ines Marlow", "", "Ines Marlow"),
        ]
        assert ("produce", "agent", "Tobin Reyes", "", "Tobin Reyes") in roles(by_predicate["produce"])
        bear = by_predicate["bear"]
        assert bear["type"] == "bear" and roles(bear) == [
            ("bear", "object", "Aldo Ferrant", "", "Aldo Ferrant"),
            ("bear", "oblique", "Calder Bay", "in", "Calder Bay"),
            ("bear", "oblique", "1871", "in", ""),
        ]
        assert [a["label"] for a in bear["arguments"]][::2] == ["PERSON", "DATE"]
        for props in by_predicate.values():  # offsets cite the fact's first chunk verbatim
            text = chunks[props["chunk_ids"][0]]
            assert all(text[a["start"] : a["end"]] == a["text"] for a in props["arguments"])
        table_rows = [n.props for n in facts if n.props.get("quantities") and not n.props["predicate"]]
        assert table_rows and all(p["arguments"] == [] for p in table_rows)

        before = canonical(sg.export())
        sg.delete("docs/films.md")
        assert sg.ingest([docs], base=tmp_path).failed == 0
        assert canonical(sg.export()) == before


def test_a_table_stating_no_unit_takes_the_unit_its_documents_prose_writes_its_figures_in() -> None:
    """A call's segment table ("Cloud | 97.8 | 93.1") whose figures the speakers say as "$97.8 million" is in
    millions of dollars; one matching figure could be chance, and two currencies say nothing."""
    from stratagraph.ingest.knowledge import prose_unit
    from stratagraph.schema import Table
    from stratagraph.text.amounts import parse_quantities

    table = Table(header=["Segment", "Q3 2025", "Q2 2025"], rows=[["Cloud", "97.8", "93.1"], ["Services", "15.1", "15.8"]])
    said = parse_quantities("Cloud revenue was $97.8 million and Services $15.1 million. We hired 15 engineers.")
    assert prose_unit(table, said) == (1_000_000, "USD")
    assert prose_unit(table, parse_quantities("Cloud revenue was $97.8 million.")) is None
    assert prose_unit(table, parse_quantities("Cloud was $97.8 million and Services €15.1 million.")) is None

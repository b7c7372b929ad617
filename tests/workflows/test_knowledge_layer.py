"""The knowledge layer end to end on the bundled examples: every layer present, the graph independent of
the order documents arrive in, citations resolved late, SIMILAR kept exact on delete, entity vectors in
step with the graph."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, canonical

from stratagraph import Settings, StrataGraph
from stratagraph.schema import EdgeType, NodeLabel

RESEARCH = sorted((EXAMPLES / "research").glob("*.md"))
BUDGET = EXAMPLES / "budget" / "riverton_city_budget_fy2025.md"
Q3 = EXAMPLES / "earnings" / "northwind_robotics_q3_2024_earnings_call.md"


def _doc(path: Path) -> str:
    return path.relative_to(EXAMPLES.parent).as_posix()


@pytest.fixture(scope="module")
def examples_graph(tmp_path_factory: pytest.TempPathFactory):
    with StrataGraph(Settings(home=tmp_path_factory.mktemp("kg"))) as sg:
        assert sg.ingest([EXAMPLES], base=EXAMPLES.parent).failed == 0
        yield sg


def test_every_layer_is_present(examples_graph: StrataGraph) -> None:
    counts = examples_graph.stats()
    for label in ("Entity", "Fact"):
        assert counts.nodes[label] > 0, label
    for edge in ("MENTIONS", "IN_FACT", "SUPPORTED_BY", "RELATED", "CITES", "REFERS_TO", "SIMILAR", "DESCRIBED_BY"):
        assert counts.edges[edge] > 0, edge
    vs = examples_graph.vectors
    assert vs.count("facts") == counts.nodes["Fact"]
    # every entity-name row belongs to an entity that exists and lists that key
    entities = {n.id: n for n in examples_graph.graph.nodes_by_label(NodeLabel.ENTITY)}
    snap = vs.snapshot("entities", vs.ids("entities"))
    assert snap.rows
    for key, (_vec, meta) in snap.rows.items():
        assert key in entities[meta["entity_id"]].props["keys"]
    assert {k for e in entities.values() for k in e.props["keys"]} == set(snap.rows)


def test_table_rows_become_facts_with_exact_quantities_under_their_section(examples_graph: StrataGraph) -> None:
    graph = examples_graph.graph
    police = next(s for s in graph.nodes_by_label(NodeLabel.SECTION, _doc(BUDGET)) if s.props["title"].endswith("Police Department"))
    facts = [f for f in graph.nodes_by_label(NodeLabel.FACT, _doc(BUDGET)) if f.props["section_id"] == police.id]
    overtime = next(f for f in facts if f.props["type"] == "table_row" and f.props["description"].startswith("Overtime"))
    values = {q["label"]: Decimal(q["value"]) for q in overtime.props["quantities"]}
    assert values["Overtime | Change"] == Decimal("-150000")
    assert values["Overtime | FY2024 Actual"] == Decimal("1320000")
    assert all(q["section_id"] == police.id for q in overtime.props["quantities"])
    # the Overtime line item of the Police table is not the Fire table's
    overtime_items = [e for e in graph.nodes_by_label(NodeLabel.ENTITY, _doc(BUDGET)) if e.props["name"] == "Overtime"]
    assert len({e.props["section_id"] for e in overtime_items}) == len(overtime_items) >= 2


def test_cross_references_and_entity_pages(examples_graph: StrataGraph) -> None:
    graph = examples_graph.graph
    refs = graph.get_edges(types=[EdgeType.REFERS_TO])
    targets = {graph.get_node(e.dst).props["title"] for e in refs}
    assert "Capital Improvement Program" in targets or any("2.1" in e.dst for e in refs)
    pages = graph.get_edges(types=[EdgeType.DESCRIBED_BY])
    named = {(graph.get_node(e.src).props["name"], graph.get_node(e.dst).props["title"]) for e in pages}
    assert ("Police Department", "1.1.1 Police Department") in named


def test_we_resolves_to_the_company_of_the_document(examples_graph: StrataGraph) -> None:
    graph = examples_graph.graph
    company = graph.get_node("ent:northwind robotics")
    assert company is not None and _doc(Q3) in company.doc_ids
    q3_mentions = [e for e in graph.get_edges(dst=company.id, types=[EdgeType.MENTIONS]) if e.src.startswith(_doc(Q3))]
    assert len(q3_mentions) >= 3  # far more often "we" than by name


def test_citations_of_both_styles_resolve_to_the_cited_documents(examples_graph: StrataGraph) -> None:
    graph = examples_graph.graph
    doc_cites = {(e.src, e.dst) for e in graph.get_edges(types=[EdgeType.CITES]) if "#" not in e.src}
    a, b, c, d, e = (_doc(p) for p in RESEARCH)
    assert {(b, a), (c, a), (d, a), (e, a), (d, b), (e, b), (e, c)} <= doc_cites
    assert all(dst in {a, b, c, d, e} for _, dst in doc_cites)  # unresolvable references give no edge
    chunk_to_chunk = [x for x in graph.get_edges(types=[EdgeType.CITES]) if "#" in x.src and "#" in x.dst]
    assert chunk_to_chunk and all(x.dst.startswith(f"{x.dst.split('#')[0]}#") for x in chunk_to_chunk)


def _ingest_one_by_one(home: Path, paths: list[Path]) -> str:
    with StrataGraph(Settings(home=home)) as sg:
        for path in paths:
            assert sg.ingest([path], base=EXAMPLES.parent).failed == 0
        return canonical(sg.export())


def test_order_of_arrival_does_not_change_the_knowledge_graph(tmp_path: Path) -> None:
    """Cited documents arriving after the citing ones, SIMILAR lists growing incrementally and entities
    merging across documents all end in the same graph as the reverse order."""
    paths = [*RESEARCH, Q3]
    forward = _ingest_one_by_one(tmp_path / "fwd", paths)
    backward = _ingest_one_by_one(tmp_path / "bwd", paths[::-1])
    assert forward == backward
    with StrataGraph(Settings(home=tmp_path / "all")) as sg:
        sg.ingest(paths, base=EXAMPLES.parent)
        assert canonical(sg.export()) == forward


def test_delete_repairs_links_and_reingest_restores_them(tmp_path: Path) -> None:
    with StrataGraph(Settings(home=tmp_path / "s")) as sg:
        sg.ingest(RESEARCH, base=EXAMPLES.parent)
        before = canonical(sg.export())
        cited = _doc(RESEARCH[0])
        sg.delete(cited)
        graph = sg.graph
        assert not [e for e in graph.get_edges(types=[EdgeType.CITES]) if e.dst.startswith(cited)]
        similar = graph.get_edges(types=[EdgeType.SIMILAR])
        assert similar and not [e for e in similar if e.dst.startswith(cited)]
        # SIMILAR after the delete equals a store that never had the document
        with StrataGraph(Settings(home=tmp_path / "never")) as never:
            never.ingest(RESEARCH[1:], base=EXAMPLES.parent)
            want = sorted((e.src, e.dst, e.weight) for e in never.graph.get_edges(types=[EdgeType.SIMILAR]))
        assert sorted((e.src, e.dst, e.weight) for e in similar) == want
        entity_ids = {n.id for n in graph.nodes_by_label(NodeLabel.ENTITY)}
        snap = sg.vectors.snapshot("entities", sg.vectors.ids("entities"))
        assert {m["entity_id"] for _, m in snap.rows.values()} <= entity_ids
        sg.ingest(RESEARCH, base=EXAMPLES.parent)
        assert canonical(sg.export()) == before


def test_a_failed_linking_step_is_reported_and_redone_by_the_next_run(tmp_path: Path, monkeypatch) -> None:
    import stratagraph.ingest.steps as steps

    real = steps.link_documents

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    with StrataGraph(Settings(home=tmp_path / "s")) as sg:
        monkeypatch.setattr(steps, "link_documents", broken)
        first = sg.ingest(RESEARCH[:2], base=EXAMPLES.parent)
        assert first.failed == 2 and all("linking failed" in (r.error or "") for r in first.documents)
        assert sg.graph.get_edges(types=[EdgeType.CITES]) == []
        monkeypatch.setattr(steps, "link_documents", real)
        again = sg.ingest(RESEARCH[:2], base=EXAMPLES.parent)
        assert {r.status.value for r in again.documents} == {"updated"}
        with StrataGraph(Settings(home=tmp_path / "fresh")) as fresh:
            fresh.ingest(RESEARCH[:2], base=EXAMPLES.parent)
            assert canonical(sg.export()) == canonical(fresh.export())


def test_a_cited_document_arriving_later_is_linked_when_it_arrives(tmp_path: Path) -> None:
    a, b = RESEARCH[0], RESEARCH[1]
    with StrataGraph(Settings(home=tmp_path / "s")) as sg:
        sg.ingest([b], base=EXAMPLES.parent)
        assert sg.graph.get_edges(types=[EdgeType.CITES]) == []  # A is not ingested: no edge
        sg.ingest([a], base=EXAMPLES.parent)
        cites = sg.graph.get_edges(types=[EdgeType.CITES])
        assert (_doc(b), _doc(a)) in {(e.src, e.dst) for e in cites}
        citing_chunks = {e.src for e in cites if "#" in e.src and e.dst == _doc(a)}
        assert citing_chunks and all(c.startswith(f"{_doc(b)}#") for c in citing_chunks)
        assert any(e.dst.startswith(f"{_doc(a)}#") for e in cites)  # chunk -> chunk of the cited paper

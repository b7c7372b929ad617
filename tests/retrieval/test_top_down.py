"""``top_down`` (BAG-RAG eq. 3) on a hand-built three-level budget tree, through the real stores."""

from __future__ import annotations

import numpy as np
import pytest

from stratagraph.retrieval import retrieve
from stratagraph.retrieval import top_down as td
from tests.retrieval.graph_builder import GraphBuilder

QUERY = "How many potholes did road crews fill?"


def build_budget_tree(g: GraphBuilder) -> None:
    """City Budget 2024 (three heading levels) and a Library Archive document.

    The pothole count sits under the vaguely titled "Other Items", a sibling of "Pothole Repairs": its heading
    fails the first screening, its text is the most relevant in the store (the secondary screening's case).
    "Pothole Patching on Park Roads" has a relevant heading under an irrelevant parent (Parks)."""
    g.doc("budget", "City Budget 2024", metadata={"year": 2024})
    g.section("budget", "tr", "Transportation", level=1)
    g.section("budget", "road", "Road Maintenance", level=2, parent="tr")
    g.section("budget", "pot", "Pothole Repairs", level=3, parent="road")
    g.chunk("pot", "pot#0", "The pothole repair programme is funded by a state grant of two million dollars.")
    g.section("budget", "other", "Other Items", level=3, parent="road")
    g.chunk("other", "other#0", "Road crews filled 4,000 potholes on city streets this year.")
    g.section("budget", "bridge", "Bridge Inspections", level=3, parent="road")
    g.chunk("bridge", "bridge#0", "Inspectors examined twelve bridges for structural cracks.")
    g.section("budget", "transit", "Public Transit", level=2, parent="tr")
    g.section("budget", "bus", "Bus Fleet", level=3, parent="transit")
    g.chunk("bus", "bus#0", "The city bought twenty electric buses for the downtown routes.")
    g.section("budget", "edu", "Education", level=1)
    g.section("budget", "schools", "Schools", level=2, parent="edu")
    g.section("budget", "salaries", "Teacher Salaries", level=3, parent="schools")
    g.chunk("salaries", "salaries#0", "Teacher salaries rose by three percent after the union agreement.")
    g.section("budget", "parks", "Parks and Recreation", level=1)
    g.section("budget", "pools", "Swimming Pools", level=2, parent="parks")
    g.chunk("pools", "pools#0", "Two public swimming pools reopened after renovation.")
    g.section("budget", "parkroads", "Pothole Patching on Park Roads", level=2, parent="parks")
    g.chunk("parkroads", "parkroads#0", "Park paths are resurfaced every spring by the grounds staff.")
    g.doc("archive", "Library Archive", metadata={"year": 2020})
    g.section("archive", "annex", "Annex Tables", level=1)
    g.chunk("annex", "annex#0", "Table 7 lists catalogue numbers 4 to 9 of the manuscript collection.")
    g.section("archive", "maps", "Street Maps", level=1)
    g.chunk("maps", "maps#0", "Old street maps show potholes marked by hand on city roads.")


@pytest.fixture
def ctx(builder):
    build_budget_tree(builder)
    return builder.build()


def _kept(screening: td.Screening) -> set[str]:
    return set(screening.kept_ids())


def test_index_reads_the_tree_depths_and_chunks(ctx):
    index = td.section_index(ctx)
    depth = {s: int(index.depth[index.pos[s]]) for s in ("tr", "road", "other", "annex", "parkroads")}
    assert depth == {"tr": 1, "road": 2, "other": 3, "annex": 1, "parkroads": 2}
    assert [index.ids[c] for c in index.children[index.pos["road"]]] == ["pot", "other", "bridge"]
    assert [index.chunk_ids[j] for j in index.own_chunks[index.pos["other"]]] == ["other#0"]
    assert index.parent[index.pos["tr"]] == -1
    assert td.section_index(ctx) is index  # cached per graph generation


def test_keeps_the_right_branch_and_recovers_the_vague_sibling(ctx):
    result = td.run(ctx, QUERY)
    levels = {lv.depth: lv for lv in result.screening.levels}
    kept = _kept(result.screening)
    # the transport branch down to the pothole leaf is kept by the first screening
    assert [s.id for s in levels[1].kept] == ["tr"]
    assert "road" in {s.id for s in levels[2].kept}
    assert "pot" in {s.id for s in levels[3].kept}
    # the other branches are not
    assert not kept & {"edu", "schools", "salaries", "pools", "annex", "bus", "bridge"}
    # "Other Items" was linked at level 3 but its heading failed tau_3 ...
    other = next(s for s in levels[3].recovered if s.id == "other")
    assert other.score < levels[3].tau
    # ... and the secondary screening recovered it by its text
    assert other.why == "content"
    assert "other" in result.screening.recovered_ids()
    assert "other" not in {s.id for s in levels[3].kept}
    # a relevant heading under a dropped parent comes back by the heading rule
    parkroads = next(s for s in levels[2].recovered if s.id == "parkroads")
    assert parkroads.why == "heading" and "parks" not in kept
    # the recovered chunk is the best evidence
    assert result.fused[0].id == "other#0"


def test_retrieve_reports_levels_and_recovered_sections(ctx):
    res = retrieve(ctx, "top_down", QUERY, k=3)
    assert res.strategy == "top_down"
    assert res.evidence[0].chunk_id == "other#0"
    assert res.evidence[0].section == "City Budget 2024 > Transportation > Road Maintenance > Other Items"
    assert "other" in res.context["recovered"]
    assert res.context["kept_sections"][0] == "tr"
    assert [lv["depth"] for lv in res.context["levels"]] == [1, 2, 3]
    assert retrieve(ctx, "top_down", QUERY, k=3).model_dump() == res.model_dump()  # deterministic


def test_filters_restrict_the_screening_and_the_evidence(ctx):
    res = retrieve(ctx, "top_down", QUERY, k=5, filters={"year": "2020"})
    assert res.evidence and {e.doc_id for e in res.evidence} == {"archive"}
    assert set(res.context["kept_sections"]) <= {"annex", "maps"}
    assert res.evidence[0].chunk_id == "maps#0"


def test_first_screening_threshold_is_relative_floored_and_beamed(ctx):
    index = td.section_index(ctx)
    n = len(index.ids)
    title = np.zeros(n, dtype=np.float32)
    linked = np.array([index.pos[s] for s in ("tr", "edu", "parks", "annex", "maps")])
    title[linked] = [0.70, 0.60, 0.50, 0.56, 0.10]
    qs = td.QueryScores(title=title, chunk=np.zeros(len(index.chunk_ids)), content=np.zeros(n),
                        allowed=np.ones(n, dtype=bool))
    kept, tau = td.first_screening(index, qs, linked, td.TopDownParams(tau_floor=0.2, tau_margin=0.15))
    assert tau == pytest.approx(0.55)
    assert [index.ids[i] for i in kept] == ["tr", "edu", "annex"]
    kept, tau = td.first_screening(index, qs, linked, td.TopDownParams(tau_floor=0.65, tau_margin=0.15, beam=5))
    assert tau == pytest.approx(0.65) and [index.ids[i] for i in kept] == ["tr"]
    kept, _ = td.first_screening(index, qs, linked, td.TopDownParams(tau_floor=0.0, tau_margin=1.0, beam=2))
    assert [index.ids[i] for i in kept] == ["tr", "edu"]

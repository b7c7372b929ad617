"""The neutral text module: the page-title index both ingestion and retrieval build, and its builder."""

from __future__ import annotations

from stratagraph.ingest.citations import Reference, ReferenceIndex
from stratagraph.text.titles import TitleIndex, page_titles, title_index, updated_title_index

DOCUMENTS = [
    ("heat19", "Urban Heat Islands", {"year": 2019, "authors": ["Adaeze Okafor", "Li Chen"]}),
    ("heat21", "Urban Heat Islands", {"year": "2021", "authors": "Li Chen"}),  # authors not a list: ignored
    ("paris", "Paris", None),
    ("untitled", None, {}),
]
SECTIONS = [
    ("heat19::s1", "1. Introduction", "heat19"),
    ("heat19::s2", "2 Paris", "heat19"),
    ("heat21::s1", "", "heat21"),  # untitled: left out
]


def test_title_index_from_tuples() -> None:
    index = title_index(DOCUMENTS, SECTIONS)
    assert type(index) is TitleIndex and not hasattr(index, "match_reference")
    assert len(index) == 5 and "heat21::s1" not in index and "untitled" not in index
    assert [(m.node_id, m.doc_id, m.kind, m.generic) for m in index.lookup("paris")] == [
        ("paris", "paris", "document", False),
        ("heat19::s2", "heat19", "section", False),
    ]
    assert [m.generic for m in index.lookup("Introduction")] == [True]
    assert index.is_generic("Introduction") and not index.is_generic("Urban Heat Islands")


def test_title_index_into_a_reference_index_reads_year_and_authors() -> None:
    index = title_index(DOCUMENTS, SECTIONS, into=ReferenceIndex())
    assert isinstance(index, ReferenceIndex)

    def cites(authors: list[str], year: str | None) -> str | None:
        reference = Reference(authors=authors, year=year, title="Urban heat islands", raw="")
        return index.match_reference(reference)

    assert cites([], "2021") == "heat21"  # the year from metadata, given as text
    assert cites([], "2019") == "heat19"  # ... and as a number
    assert cites(["Okafor"], None) == "heat19"  # the first author of the metadata's list
    assert cites(["Chen"], None) == "heat21"  # heat19 disagrees; heat21 has no authors (not a list)


def test_the_longest_title_and_the_words_that_open_long_ones_follow_adds_and_removals() -> None:
    index = TitleIndex()
    assert index.longest_title_words() == 0 and index.long_title_starts(8) == frozenset()
    index.add("p1", "The Migration Fronts of Ferrous Ions in Laid Paper: A Diffusion Model", "p1", "document")
    index.add("p2", "Halo Imaging", "p2", "document")
    # normalised: the leading article dropped, the colon a space: 11 words opening with "migration"
    assert index.longest_title_words() == 11
    assert index.long_title_starts(8) == frozenset({"migration"})
    index.remove("p1")
    assert index.longest_title_words() == 2 and index.long_title_starts(8) == frozenset()
    for kind in (TitleIndex(), ReferenceIndex()):  # the citation layer's index counts the same
        kind.add("p3", "One Two Three Four Five Six Seven Eight Nine", "p3", "document")
        assert kind.longest_title_words() == 9 and kind.long_title_starts(8) == frozenset({"one"})


def _state(index: TitleIndex) -> tuple:
    return index._entries, index._by_norm, index._section_docs


def test_an_index_updated_with_the_pages_that_changed_is_the_one_built_whole() -> None:
    docs = [("d1", "The Harbour Report", {"year": 2024}), ("d2", "Harbour report", None), ("d3", "Budget", {"authors": ["A. Smith"]})]
    sections = [("d1#s1", "1. Budget", "d1"), ("d2#s1", "Revenue", "d2"), ("d3#s1", "Revenue", "d3")]
    before, previous = page_titles(docs, sections), title_index(docs, sections)
    # a document added whose title sorts first, one deleted, one's year changed, a section added and one renamed
    docs2 = [("d0", "Harbour Report", None), ("d1", "The Harbour Report", {"year": 2025}), ("d3", "Budget", {"authors": ["A. Smith"]})]
    sections2 = [("d1#s1", "2. Budget", "d1"), ("d3#s1", "Revenue", "d3"), ("d3#s2", "Revenue", "d3")]
    updated = updated_title_index(previous, before, page_titles(docs2, sections2))
    assert _state(updated) == _state(title_index(docs2, sections2))
    assert [m.node_id for m in updated.lookup("Harbour Report")] == ["d0", "d1"]
    assert _state(previous) == _state(title_index(docs, sections))  # left as it was


def test_a_subclass_that_indexes_more_is_not_copied_as_a_title_index() -> None:
    import pytest

    with pytest.raises(TypeError, match="ReferenceIndex"):
        ReferenceIndex().copy()

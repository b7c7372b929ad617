"""Entity resolution: canonical keys, acronyms, coreference light, section scope and embedding merges."""

from __future__ import annotations

import numpy as np
import pytest

from stratagraph.embeddings import get_minilm_embeddings
from stratagraph.ingest.extractors.base import ChunkExtraction, ExtractedEntity, ExtractedFact
from stratagraph.ingest.resolution import (
    KeyInfo,
    acronym_map,
    cluster_keys,
    entity_key,
    is_acronym_of,
    may_merge,
    resolve_document,
)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("The Federal Reserve", "federal reserve"),
        ("Northwind Robotics, Inc.", "northwind robotics"),
        ("Émile Zola's", "emile zola"),
        ("  AT&T  ", "at t"),
        ("the", "the"),
        ("C (Okafor and Lindqvist", "okafor and lindqvist"),
        ("Taken (film)", "taken film"),
    ],
)
def test_entity_key(name: str, key: str) -> None:
    assert entity_key(name) == key


def test_acronyms_defined_in_text_map_to_their_long_form() -> None:
    texts = [
        "The Federal Reserve (Fed) held rates. Later the Fed cut them.",
        "The Energy Information Administration (EIA) expects demand to rise.",
        "Analysts at the FOMC (Federal Open Market Committee) disagreed.",
        "Sales in the United States (up 4%) grew.",  # not a definition
    ]
    assert acronym_map(texts) == {
        "fed": "federal reserve",
        "eia": "energy information administration",
        "fomc": "federal open market committee",
    }
    assert is_acronym_of("NASA", "National Aeronautics and Space Administration")
    assert not is_acronym_of("CEO", "Federal Reserve")


def _ex(chunk: str, *ents: ExtractedEntity) -> ChunkExtraction:
    fact = ExtractedFact(description=f"fact in {chunk}", entities=[e.name for e in ents])
    return ChunkExtraction(chunk_id=chunk, entities=list(ents), facts=[fact])


def test_acronyms_expand_inside_longer_names_and_pointers_are_not_entities() -> None:
    ex = _ex(
        "d#1#0",
        ExtractedEntity(name="FY2025 CIP", type="PROPN"),
        ExtractedEntity(name="Section 2.4", type="LAW"),
        ExtractedEntity(name="CIP", type="ORG"),
        ExtractedEntity(name="al", type="PERSON"),
        ExtractedEntity(name="UK", type="GPE"),
    )
    res = resolve_document({}, [ex], {"d#1#0": "d::s1"}, ["The Capital Improvement Program (CIP) funds roads."])
    assert res.key_of["d#1#0"] == {
        "FY2025 CIP": "fy2025 capital improvement program",
        "CIP": "capital improvement program",
        "UK": "uk",
    }
    # the acronym stays an alias: it never outvotes the long form for the entity's name
    assert res.contributions["capital improvement program"].names == {"CIP": 0}


def test_coreference_light_and_section_scope() -> None:
    extractions = [
        _ex("d#1#0", ExtractedEntity(name="we", type="COREF", coref=True), ExtractedEntity(name="Fed", type="ORG")),
        _ex("d#1.1#0", ExtractedEntity(name="Personnel", type="ITEM", line_item=True)),
        _ex("d#1.2#0", ExtractedEntity(name="Personnel", type="ITEM", line_item=True)),
        _ex("d#1.2#1", ExtractedEntity(name="personnel", type="ITEM", line_item=True)),
    ]
    sections = {"d#1#0": "d::s1", "d#1.1#0": "d::s1.1", "d#1.2#0": "d::s1.2", "d#1.2#1": "d::s1.2"}
    texts = ["The Federal Reserve (Fed) met."]
    res = resolve_document({"company": "Northwind Robotics"}, extractions, sections, texts)
    assert res.key_of["d#1#0"] == {"we": "northwind robotics", "Fed": "federal reserve"}
    assert res.contributions["northwind robotics"].names == {"Northwind Robotics": 1}
    police, parks = res.key_of["d#1.1#0"]["Personnel"], res.key_of["d#1.2#0"]["Personnel"]
    assert police == "personnel@d::s1.1" and parks == "personnel@d::s1.2"
    assert res.key_of["d#1.2#1"]["personnel"] == parks  # same section: one instance
    without_company = resolve_document({}, extractions[:1], sections, texts)
    assert "we" not in without_company.key_of["d#1#0"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("q3 revenue", "q4 revenue"),
        ("parks personnel", "police personnel"),
        ("john smith", "jane smith"),
        ("fy2024 budget", "fy2025 budget"),
        ("personnel@d::s1.1", "personnel@d::s1.2"),
    ],
)
def test_never_merge_pairs(a: str, b: str) -> None:
    assert not may_merge(a, b)


def test_merge_allowed_for_subsets_abbreviations_and_typos() -> None:
    assert may_merge("federal reserve", "federal reserve bank")
    assert not may_merge("gustaf molander", "gustaf molander jr")
    assert may_merge("northwind robotics", "northwind robtics")
    assert not may_merge("paris", "paris", "PERSON", "GPE")


@pytest.fixture(scope="module")
def embed():
    model = get_minilm_embeddings()
    return lambda names: model.embed(names)


def _infos(names: dict[str, str], embed, entity_ids: dict[str, str] | None = None) -> dict[str, KeyInfo]:
    keys = list(names)
    vecs = embed([names[k] for k in keys])
    return {
        k: KeyInfo(name=names[k], type="ORG", vector=v, entity_id=(entity_ids or {}).get(k))
        for k, v in zip(keys, vecs, strict=True)
    }


def test_embedding_merge_is_order_independent(embed) -> None:
    names = {"riverton council": "Riverton Council", "riverton city council": "Riverton City Council"}
    cos = float(np.dot(*embed(list(names.values()))))
    assert cos >= 0.9
    both = cluster_keys(_infos(names, embed), {}, 0.9)
    assert both.entity_of == {k: "ent:riverton city council" for k in names} and both.merges == {}
    # the short name was stored first: the new, better key takes the cluster and folds the old node in
    stored = _infos({"riverton council": "Riverton Council"}, embed, {"riverton council": "ent:riverton council"})
    later = cluster_keys(_infos({"riverton city council": "Riverton City Council"}, embed), stored, 0.9)
    assert later.entity_of == {"riverton city council": "ent:riverton city council"}
    assert later.merges == {"ent:riverton city council": ["ent:riverton council"]}
    # and the other way round: the new short name joins the stored entity, nothing to fold
    stored = _infos(
        {"riverton city council": "Riverton City Council"}, embed, {"riverton city council": "ent:riverton city council"}
    )
    later = cluster_keys(_infos({"riverton council": "Riverton Council"}, embed), stored, 0.9)
    assert later.entity_of == {"riverton council": "ent:riverton city council"} and later.merges == {}


def test_guards_beat_high_cosine(embed) -> None:
    names = {"q3 revenue": "Q3 revenue", "q4 revenue": "Q4 revenue"}
    cos = float(np.dot(*embed(list(names.values()))))
    res = cluster_keys(_infos(names, embed), {}, cos - 0.01)  # the vectors alone would merge them
    assert res.entity_of == {"q3 revenue": "ent:q3 revenue", "q4 revenue": "ent:q4 revenue"}

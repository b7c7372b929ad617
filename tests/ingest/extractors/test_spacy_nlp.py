"""SpacyExtractor on hand-written sentences, with the real en_core_web_sm pipeline (loaded once per module).

Expectations were checked against the parse the pipeline actually gives (for instance spaCy tags
"Helsingfors" as ORG and lemmatises "born" as "bear").
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from stratagraph.ingest.extractors.base import ChunkExtraction, ChunkInput, DocumentInput
from stratagraph.ingest.extractors.spacy_nlp import MIN_TEXTS_PER_PROCESS, NUMERIC_LABELS, SpacyExtractor, load_nlp

MOLANDER = (
    "Ingmar's Inheritance is a 1934 Swedish drama film directed by Gustaf Molander, "
    "who was born in Helsingfors."
)
POLICE = "The Police Department requests $18.6 million for FY2025."
GUIDANCE = "We expect revenue of $52 million in the fourth quarter."
PERSONNEL = "Personnel costs rise by $560 thousand, reflecting the negotiated wage increase."
CURIE = "Marie Curie was born in Warsaw and moved to Paris in 1891."
LONE = "Gustaf Molander directed the film."
COMPANY = "The company hired Jane Doe as chief executive."
OBAMA = "Barack Obama met Angela Merkel in Berlin on June 11, 2014 at 10:30 a.m."


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    load_nlp()
    return SpacyExtractor(batch_size=8)


@pytest.fixture(scope="module")
def run(extractor: SpacyExtractor):
    cache: dict[str, ChunkExtraction] = {}

    def _run(text: str, section_id: str = "doc#1") -> ChunkExtraction:
        key = f"{section_id}\x1f{text}"
        if key not in cache:
            doc = DocumentInput(
                doc_id="doc", title="t", chunks=[ChunkInput(chunk_id="doc#1#0", text=text, section_id=section_id)]
            )
            (result,) = extractor.extract([doc])
            assert len(result) == 1
            cache[key] = result[0]
        return cache[key]

    return _run


def entity(ex: ChunkExtraction, name: str):
    found = [e for e in ex.entities if e.name == name]
    assert found, (name, [e.name for e in ex.entities])
    return found[0]


def test_model_is_loaded_once() -> None:
    nlp = load_nlp()
    assert load_nlp() is nlp
    assert {"tagger", "parser", "ner", "attribute_ruler", "lemmatizer"} <= set(nlp.pipe_names)
    assert "senter" not in nlp.component_names


def test_relative_clause_fact_and_relation(run) -> None:
    ex = run(MOLANDER)
    assert [(e.name, e.type) for e in ex.entities] == [
        ("Ingmar's Inheritance", "ORG"),
        ("Swedish", "NORP"),
        ("Gustaf Molander", "PERSON"),
        ("Helsingfors", "ORG"),
    ]
    assert "1934" not in {e.name for e in ex.entities}
    born = [f for f in ex.facts if f.type == "bear"]
    assert len(born) == 1
    fact = born[0]
    assert fact.description == "Gustaf Molander, who was born in Helsingfors"
    assert fact.entities == ["Gustaf Molander", "Helsingfors"]
    assert fact.quantities == []
    assert MOLANDER[fact.start : fact.end] == "who was born in Helsingfors"
    assert fact.confidence == pytest.approx(0.9)
    assert [(r.subject, r.predicate, r.object) for r in ex.relations] == [
        ("Gustaf Molander", "bear_in", "Helsingfors")
    ]
    root = [f for f in ex.facts if f.type == "be"]
    assert len(root) == 1
    assert root[0].description == (
        "Ingmar's Inheritance is a 1934 Swedish drama film directed by Gustaf Molander"
    )  # the relative clause is a fact of its own, not repeated here
    assert root[0].attributes == {"date": "1934"}


def test_entity_offsets_point_at_the_mention(run) -> None:
    for text in (MOLANDER, POLICE, GUIDANCE, CURIE, OBAMA):
        ex = run(text)
        for e in ex.entities:
            assert e.start is not None and e.end is not None
            assert text[e.start : e.end].lower() == e.name.lower()


def test_money_fact_with_ner_subject(run) -> None:
    ex = run(POLICE)
    assert [(e.name, e.type, e.confidence) for e in ex.entities] == [("Police Department", "ORG", 0.9)]
    (fact,) = ex.facts
    assert fact.type == "request"
    assert fact.entities == ["Police Department"]
    assert fact.description == "The Police Department requests $18.6 million for FY2025"
    (q,) = fact.quantities
    assert q.value == Decimal("18600000") and q.currency == "USD" and q.scale == 10**6 and q.raw == "$18.6 million"
    assert q.section_id == "doc#1"
    assert fact.confidence == pytest.approx(0.9)  # 0.5 + subject + object + all NER
    assert ex.relations == []  # "$18.6 million" is not an entity


def test_first_person_plural_is_coref_in_a_fact(run) -> None:
    ex = run(GUIDANCE)
    we = entity(ex, "we")
    assert we.coref and we.type == "COREF" and not we.line_item and we.confidence == 0.6
    assert (we.start, we.end) == (0, 2)
    revenue = entity(ex, "revenue")
    assert revenue.line_item and revenue.type == "ITEM"
    (fact,) = ex.facts
    assert fact.type == "expect"
    assert fact.entities == ["we", "revenue"]
    assert [(q.value, q.unit) for q in fact.quantities] == [(Decimal(52000000), "USD")]
    assert fact.attributes == {"date": "the fourth quarter"}
    assert fact.confidence == pytest.approx(0.8)
    assert [(r.subject, r.predicate, r.object) for r in ex.relations] == [("we", "expect", "revenue")]


def test_the_company_is_a_coref(run) -> None:
    ex = run(COMPANY)
    assert [(e.name, e.type, e.coref) for e in ex.entities] == [
        ("the company", "COREF", True),
        ("Jane Doe", "PERSON", False),
    ]
    (fact,) = ex.facts
    assert fact.entities == ["the company", "Jane Doe"]
    assert [(r.subject, r.predicate, r.object) for r in ex.relations] == [("the company", "hire", "Jane Doe")]


def test_coref_outside_any_fact_is_dropped(run) -> None:
    ex = run("We are not going to chase hardware prices down.")
    assert ex.entities == [] and ex.facts == [] and ex.relations == []


def test_line_item_subject_of_a_quantity_clause(run) -> None:
    ex = run(PERSONNEL)
    item = entity(ex, "Personnel costs")
    assert item.line_item and item.type == "ITEM" and (item.start, item.end) == (0, 15)
    # "the negotiated wage increase" is an object, but its clause states no quantity: not an item
    assert [e.name for e in ex.entities] == ["Personnel costs"]
    (fact,) = ex.facts
    assert fact.type == "rise"
    assert fact.description == "Personnel costs rise by $560 thousand"
    assert fact.quantities[0].value == Decimal(560000)


def test_coordinated_clause_inherits_its_subject(run) -> None:
    ex = run(CURIE)
    assert [(f.type, f.description) for f in ex.facts] == [
        ("bear", "Marie Curie was born in Warsaw"),
        ("move", "Marie Curie moved to Paris in 1891"),
    ]
    born, moved = ex.facts
    assert moved.entities == ["Marie Curie", "Paris"]
    assert moved.attributes == {"date": "1891"}
    assert CURIE[moved.start : moved.end] == "moved to Paris in 1891"
    # an inherited subject earns no subject bonus: confidences differ
    assert born.confidence == pytest.approx(0.9)
    assert moved.confidence == pytest.approx(0.75)
    assert [(r.subject, r.predicate, r.object) for r in ex.relations] == [
        ("Marie Curie", "bear_in", "Warsaw"),
        ("Marie Curie", "move_to", "Paris"),
    ]


def test_dates_and_times_are_attributes_not_entities(run) -> None:
    ex = run(OBAMA)
    assert [e.name for e in ex.entities] == ["Barack Obama", "Angela Merkel", "Berlin"]
    assert not any(e.type in NUMERIC_LABELS for e in ex.entities)
    (fact,) = ex.facts
    assert fact.type == "meet"
    assert fact.attributes == {"date": "June 11, 2014", "time": "10:30 a.m."}
    assert fact.entities == ["Barack Obama", "Angela Merkel", "Berlin"]
    assert fact.quantities == []  # neither the date nor the clock time is an amount
    assert ("Barack Obama", "meet", "Angela Merkel") in {(r.subject, r.predicate, r.object) for r in ex.relations}


def test_one_entity_without_quantity_gives_no_fact(run) -> None:
    ex = run(LONE)
    assert [e.name for e in ex.entities] == ["Gustaf Molander"]
    assert ex.facts == [] and ex.relations == []


def test_fact_entities_are_listed_and_offsets_hold(run) -> None:
    for text in (MOLANDER, POLICE, GUIDANCE, PERSONNEL, CURIE, COMPANY, OBAMA):
        ex = run(text)
        names = {e.name for e in ex.entities}
        assert len(names) == len(ex.entities)  # deduplicated by name
        for fact in ex.facts:
            assert set(fact.entities) <= names
            assert 0 <= fact.start < fact.end <= len(text)
            assert 0.05 <= fact.confidence <= 1.0
        for r in ex.relations:
            assert r.subject in names and r.object in names and r.subject != r.object


def test_facts_carry_their_arguments_with_roles(run) -> None:
    """Each fact's arguments (stratagraph.text.roles) for its head and the verbs inside its clause, each
    with the lemma of its verb, offsets in the chunk and the fact's entity holding its root word."""
    text = (
        "Quiet Harbour is a 1998 drama directed by Ines Marlow. Aldo Ferrant was born in Calder Bay in 1871. "
        "Orla Finch, who designed the Tarrow Bridge, moved to Varna."
    )
    ex = run(text)
    facts = {f.type: f for f in ex.facts}
    assert [(a.predicate, a.role, a.text, a.prep) for a in facts["be"].arguments] == [
        ("be", "subject", "Quiet Harbour", ""),
        ("direct", "object", "Quiet Harbour", ""),  # the participle on the copula's attribute
        ("be", "attribute", "a 1998 drama", ""),
        ("direct", "agent", "Ines Marlow", ""),
    ]
    assert facts["be"].arguments[-1].entity == "Ines Marlow" and facts["be"].arguments[2].entity == ""
    bear = facts["bear"]
    assert bear.predicate == "bear" and bear.entities == ["Aldo Ferrant", "Calder Bay"]
    assert [(a.role, a.text, a.prep, a.label, a.entity) for a in bear.arguments] == [
        ("object", "Aldo Ferrant", "", "PERSON", "Aldo Ferrant"),
        ("oblique", "Calder Bay", "in", bear.arguments[1].label, "Calder Bay"),
        ("oblique", "1871", "in", "DATE", ""),
    ]
    # a relative clause's fact: its subject is the antecedent, outside the clause but inside the chunk
    design = facts["design"]
    assert [(a.role, a.text, a.entity) for a in design.arguments] == [
        ("subject", "Orla Finch", "Orla Finch"),
        ("object", "the Tarrow Bridge", "Tarrow Bridge"),
    ]
    assert all(text[a.start : a.end] == a.text for f in ex.facts for a in f.arguments)
    # the predicate is the head verb's lemma, which ``type`` holds too
    assert all(f.predicate == f.type for f in ex.facts)


def test_extract_batches_documents_and_keeps_ids(extractor: SpacyExtractor) -> None:
    docs = [
        DocumentInput(
            doc_id="a",
            title="A",
            chunks=[
                ChunkInput(chunk_id="a#1#0", text=POLICE, section_id="a#1"),
                ChunkInput(chunk_id="a#1#1", text="", section_id="a#1"),
                ChunkInput(chunk_id="a#2#0", text=CURIE, section_id="a#2"),
            ],
        ),
        DocumentInput(doc_id="empty", title="E", chunks=[]),
        DocumentInput(doc_id="b", title="B", chunks=[ChunkInput(chunk_id="b#1#0", text=GUIDANCE, section_id="b#1")]),
    ]
    out = extractor.extract(docs)
    assert [[c.chunk_id for c in per_doc] for per_doc in out] == [["a#1#0", "a#1#1", "a#2#0"], [], ["b#1#0"]]
    assert out[0][1] == ChunkExtraction(chunk_id="a#1#1")
    assert out[0][0].facts[0].quantities[0].section_id == "a#1"
    assert out[2][0].facts[0].quantities[0].section_id == "b#1"
    assert extractor.extract([]) == []


def test_deterministic(extractor: SpacyExtractor) -> None:
    docs = [
        DocumentInput(
            doc_id="d",
            title="D",
            chunks=[
                ChunkInput(chunk_id=f"d#{i}", text=t, section_id="d")
                for i, t in enumerate([MOLANDER, PERSONNEL, OBAMA])
            ],
        )
    ]
    first = [[c.model_dump(mode="json") for c in per] for per in extractor.extract(docs)]
    second = [[c.model_dump(mode="json") for c in per] for per in SpacyExtractor(batch_size=1).extract(docs)]
    assert first == second


def test_worker_processes_give_the_same_output() -> None:
    texts = [CURIE, POLICE, GUIDANCE, COMPANY, LONE] * ((2 * MIN_TEXTS_PER_PROCESS) // 5 + 1)
    docs = [
        DocumentInput(
            doc_id="m",
            title="M",
            chunks=[ChunkInput(chunk_id=f"m#{i}", text=t, section_id="m") for i, t in enumerate(texts)],
        )
    ]
    single = SpacyExtractor(batch_size=32, n_process=1).extract(docs)
    pooled = SpacyExtractor(batch_size=32, n_process=2)
    try:
        parallel = pooled.extract(docs)
    finally:
        pooled.close()
    assert [c.model_dump() for c in parallel[0]] == [c.model_dump() for c in single[0]]
    assert len(single[0]) == len(texts)


def test_name_and_arguments() -> None:
    assert SpacyExtractor.name == "spacy"
    with pytest.raises(ValueError):
        SpacyExtractor(batch_size=0)
    with pytest.raises(ValueError):
        SpacyExtractor(n_process=0)

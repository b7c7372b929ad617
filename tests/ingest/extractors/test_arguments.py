"""Facts' stored arguments (stratagraph.ingest.extractors.arguments): the form both extractors store, and how
an LLM fact's description is located in its chunk to get them. Sentences written for these tests."""

from __future__ import annotations

from stratagraph.ingest.extractors.arguments import (
    fact_arguments,
    located_clauses,
    name_spans,
    parse,
    with_arguments,
)
from stratagraph.ingest.extractors.base import ExtractedFact
from stratagraph.text.roles import Argument, Clause, doc_clauses

CHUNK = (
    "Lorn Abbey was designed by Petra Voss. It was completed in 1702. "
    "The abbey later passed to the Greywater Trust, which restored it."
)


def clause(lemma: str, *args: Argument) -> Clause:
    return Clause(head=0, start=0, end=1, lemma=lemma, voice="active", negated=False, arguments=args)


def test_fact_arguments_tag_verbs_and_entities_and_sort() -> None:
    bear = clause("bear", Argument("object", "Aldo Ferrant", 0, 12, root=5), Argument("oblique", "1871", 30, 34, "in", "DATE", 30))
    be = clause("be", Argument("subject", "Aldo Ferrant", 0, 12, root=5))
    spans = [(0, 12, "Aldo Ferrant"), (5, 12, "Ferrant")]  # the first, then longest, span holding the root
    got = fact_arguments([bear, be, bear], spans)
    assert [(a.predicate, a.role, a.text, a.prep, a.label, a.entity) for a in got] == [
        ("be", "subject", "Aldo Ferrant", "", "", "Aldo Ferrant"),
        ("bear", "object", "Aldo Ferrant", "", "", "Aldo Ferrant"),
        ("bear", "oblique", "1871", "in", "DATE", ""),
    ]  # each once, by start offset, then role


def test_name_spans_are_whole_words_of_any_case() -> None:
    text = "Voss met VOSS and Vossberg."
    assert name_spans(text, ["Voss", ""]) == [(0, 4, "Voss"), (9, 13, "Voss")]


def test_a_description_found_in_the_chunk_gets_its_clauses() -> None:
    doc = parse(CHUNK)
    clauses = doc_clauses(doc)
    # case, spacing and the final full stop aside
    assert [c.lemma for c in located_clauses("lorn abbey was  designed by Petra Voss", doc, clauses)] == ["design"]
    # a description that contains whole chunk sentences gets theirs
    both = "Records show: Lorn Abbey was designed by Petra Voss. It was completed in 1702."
    assert [c.lemma for c in located_clauses(both, doc, clauses)] == ["design", "complete"]
    # a paraphrase is found nowhere
    assert located_clauses("Petra Voss designed Lorn Abbey.", doc, clauses) == []


def test_with_arguments_fills_located_facts_and_leaves_the_others() -> None:
    facts = [
        ExtractedFact(description="Lorn Abbey was designed by Petra Voss.", type="design",
                      entities=["Lorn Abbey", "Petra Voss"]),
        ExtractedFact(description="The abbey later passed to the Greywater Trust, which restored it.", type="transfer",
                      entities=["Greywater Trust"]),
        ExtractedFact(description="Petra Voss designed Lorn Abbey.", type="design", entities=["Petra Voss"]),
    ]  # fmt: skip
    design, passed, paraphrase = with_arguments(facts, CHUNK)
    assert design.predicate == "design" and design.type == "design"
    assert [(a.role, a.text, a.entity) for a in design.arguments] == [
        ("object", "Lorn Abbey", "Lorn Abbey"),
        ("agent", "Petra Voss", "Petra Voss"),
    ]
    assert passed.predicate == "pass"  # the sentence root, though the relative clause's verb is there too
    assert {(a.predicate, a.role, a.text, a.entity) for a in passed.arguments} >= {
        ("pass", "subject", "The abbey", ""),
        ("pass", "oblique", "the Greywater Trust", "Greywater Trust"),
        ("restore", "subject", "the Greywater Trust", "Greywater Trust"),
    }
    assert all(CHUNK[a.start : a.end] == a.text for f in (design, passed) for a in f.arguments)
    assert paraphrase == facts[2]  # not located: no predicate, no arguments
    assert with_arguments([], CHUNK) == [] and with_arguments(facts[:1], "  ") == facts[:1]

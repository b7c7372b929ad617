"""Argument roles read off spaCy's parse (stratagraph.text.roles), on sentences written for these tests."""

from __future__ import annotations

import pytest

from stratagraph.text.nlp import load_nlp
from stratagraph.text.roles import (
    ROLES,
    Argument,
    Clause,
    arguments,
    clause_heads,
    format_arguments,
    sentence_clauses,
    text_clauses,
    voice,
)


def clauses(text: str) -> dict[str, Clause]:
    """The clauses of ``text`` by lemma (each lemma heads one clause in these sentences); every argument is
    checked to be a verbatim slice of the text around its root word, in the documented order."""
    found = text_clauses(text)
    for c in found:
        assert text[c.start : c.end] and c.lemma
        for a in c.arguments:
            assert a.role in ROLES and text[a.start : a.end] == a.text and a.start <= a.root < a.end
        assert list(c.arguments) == sorted(c.arguments, key=lambda a: (a.start, ROLES.index(a.role)))
    by_lemma = {c.lemma: c for c in found}
    assert len(by_lemma) == len(found)
    return by_lemma


def roles(c: Clause) -> list[tuple[str, str, str]]:
    return [(a.role, a.text, a.prep) for a in c.arguments]


def test_active_verb_subject_object_and_dated_oblique() -> None:
    found = clauses("Marta Quell founded Velloway Press in 1864.")["found"]
    assert (found.voice, found.negated) == ("active", False)
    assert roles(found) == [("subject", "Marta Quell", ""), ("object", "Velloway Press", ""), ("oblique", "1864", "in")]
    assert found.arguments[-1].label == "DATE"


def test_passive_subject_is_the_object_and_the_by_phrase_the_agent() -> None:
    design = clauses("Lorn Abbey was designed by Petra Voss.")["design"]
    assert design.voice == "passive"
    assert roles(design) == [("object", "Lorn Abbey", ""), ("agent", "Petra Voss", "")]


def test_copula_subject_and_attribute() -> None:
    be = clauses("Harlan Ostrow is a composer.")["be"]
    assert be.voice == "copula"
    assert roles(be) == [("subject", "Harlan Ostrow", ""), ("attribute", "a composer", "")]
    # an adjective's prepositional phrase is an oblique of the copula
    famous = clauses("Harlan Ostrow is famous for his bridges.")["be"]
    assert roles(famous) == [("subject", "Harlan Ostrow", ""), ("attribute", "famous", ""), ("oblique", "his bridges", "for")]


def test_an_appositive_of_the_subject_is_an_attribute() -> None:
    lie = clauses("Brenna Vale, a port city, lies on the northern coast.")["lie"]
    assert roles(lie) == [
        ("subject", "Brenna Vale", ""),
        ("attribute", "a port city", ""),
        ("oblique", "the northern coast", "on"),
    ]


def test_participles_on_a_copulas_attribute_take_the_copulas_subject() -> None:
    found = clauses("Quiet Harbour is a 1998 drama directed by Ines Marlow and produced by Tobin Reyes.")
    assert roles(found["be"]) == [("subject", "Quiet Harbour", ""), ("attribute", "a 1998 drama", "")]
    assert found["direct"].voice == found["produce"].voice == "passive"
    assert roles(found["direct"]) == [("object", "Quiet Harbour", ""), ("agent", "Ines Marlow", "")]
    assert roles(found["produce"]) == [("object", "Quiet Harbour", ""), ("agent", "Tobin Reyes", "")]
    # a present participle makes the noun (here: the copula's subject) its subject
    make = clauses("Selda Corp is a company making glass lenses.")["make"]
    assert (make.voice, roles(make)) == ("active", [("subject", "Selda Corp", ""), ("object", "glass lenses", "")])
    # a participle on a plain noun takes that noun, without the participle clause
    win = clauses("The film directed by Ines Marlow won an award.")
    assert roles(win["direct"]) == [("object", "The film", ""), ("agent", "Ines Marlow", "")]
    assert roles(win["win"]) == [("subject", "The film", ""), ("object", "an award", "")]


def test_obliques_with_prepositions_dates_and_datives() -> None:
    bear = clauses("Aldo Ferrant was born in Calder Bay in 1871.")["bear"]
    assert roles(bear) == [("object", "Aldo Ferrant", ""), ("oblique", "Calder Bay", "in"), ("oblique", "1871", "in")]
    assert bear.arguments[0].label == "PERSON" and bear.arguments[1].label and bear.arguments[2].label == "DATE"
    give = clauses("Tobin Reyes gave the museum a painting last year.")["give"]
    assert roles(give) == [
        ("subject", "Tobin Reyes", ""),
        ("oblique", "the museum", ""),  # dative
        ("object", "a painting", ""),
        ("oblique", "last year", ""),  # a bare date
    ]
    rise = clauses("Revenue rose to $4.1 million because of higher fees.")["rise"]
    assert roles(rise) == [("subject", "Revenue", ""), ("oblique", "$4.1 million", "to"), ("oblique", "higher fees", "because of")]
    assert rise.arguments[1].label == "MONEY"


def test_relative_pronouns_stand_for_their_antecedent() -> None:
    found = clauses("The engineer who designed the Tarrow Bridge retired in 1990.")
    assert roles(found["design"]) == [("subject", "The engineer", ""), ("object", "the Tarrow Bridge", "")]
    assert roles(found["retire"]) == [("subject", "The engineer", ""), ("oblique", "1990", "in")]
    obj = clauses("The film that Ines Marlow directed won an award.")["direct"]
    assert (obj.voice, roles(obj)) == ("active", [("object", "The film", ""), ("subject", "Ines Marlow", "")])
    passive = clauses("The bridge, which was designed by Orla Finch, did not open until 1903.")
    assert roles(passive["design"]) == [("object", "The bridge", ""), ("agent", "Orla Finch", "")]
    assert passive["open"].negated and roles(passive["open"]) == [("subject", "The bridge", ""), ("oblique", "1903", "until")]
    # an antecedent that is a copula's attribute resolves to the copula's subject
    copula = clauses("Orla Finch is the architect who designed the Tarrow Bridge.")
    assert roles(copula["design"]) == [("subject", "Orla Finch", ""), ("object", "the Tarrow Bridge", "")]


def test_coordinated_arguments_and_verbs() -> None:
    found = clauses("Marta Quell and Oren Pike founded Velloway Press and Aster Books.")["found"]
    assert roles(found) == [
        ("subject", "Marta Quell", ""),
        ("subject", "Oren Pike", ""),
        ("object", "Velloway Press", ""),
        ("object", "Aster Books", ""),
    ]
    # a coordinated verb shares the subject; under a passive, a bare past form is passive too
    both = clauses("Lorn Abbey was designed by Petra Voss and completed in 1702.")
    assert roles(both["complete"]) == [("object", "Lorn Abbey", ""), ("oblique", "1702", "in")]
    active = clauses("Petra Voss designed the hall and built the tower.")
    assert roles(active["build"]) == [("subject", "Petra Voss", ""), ("object", "the tower", "")]


def test_open_complements_take_the_controlling_subject_or_object() -> None:
    assert roles(clauses("Ines Marlow agreed to buy the theatre.")["buy"]) == [
        ("subject", "Ines Marlow", ""),
        ("object", "the theatre", ""),
    ]
    assert roles(clauses("Pell asked Dorn to sign the treaty.")["sign"]) == [
        ("subject", "Dorn", ""),
        ("object", "the treaty", ""),
    ]


def test_a_copulas_attribute_stands_for_the_copula_and_non_heads_have_no_arguments() -> None:
    doc = load_nlp()("Harlan Ostrow is a composer.")
    copula, attribute = doc[2], doc[4]
    assert attribute.text == "composer"
    assert arguments(attribute) == arguments(copula) and voice(attribute) == "copula"
    assert arguments(doc[1]) == [] and [t.i for t in clause_heads(doc)] == [2]
    [c] = sentence_clauses(next(iter(doc.sents)))
    assert (c.head, c.lemma, c.voice) == (2, "be", "copula")


def test_offsets_are_offsets_in_the_parsed_text() -> None:
    text = "A first sentence stands here. Then Nadia Orr wrote the report."
    write = clauses(text)["write"]
    [subject, obj] = write.arguments
    assert (subject.text, subject.start) == ("Nadia Orr", text.index("Nadia Orr"))
    assert text[subject.root : subject.end] == "Orr" and obj.text == "the report"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([Argument("object", "Quiet Harbour", 0, 13), Argument("agent", "Ines Marlow", 42, 53)],
         "direct(object=Quiet Harbour, agent=Ines Marlow)"),
        ([{"role": "object", "text": "Aldo\nFerrant", "prep": ""}, {"role": "oblique", "text": "1871", "prep": "in"},
          {"role": "oblique", "text": "last year", "prep": ""}],
         "direct(object=Aldo Ferrant, in=1871, oblique=last year)"),
        ([], "direct()"),
    ],
)  # fmt: skip
def test_format_arguments(args: list, expected: str) -> None:
    assert format_arguments("direct", args) == expected

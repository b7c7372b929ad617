"""Semantic types of entities read off spaCy's parse (KAG §2.4: an entity BELONGS_TO its concept), and the
one normal form of a concept's name shared by ingestion and retrieval.

No chat model: every rule here is a pure function of the parse of a sentence the document wrote. Each rule
names the class of English it covers; the word lists it consults live in :mod:`stratagraph.text.lexicon`.

* :func:`copula_kinds`: the attribute of a copula about the entity ("Mira Tolland is a Dunmorish composer"
  -> composer; "Mira Tolland, who was a film composer and pianist" -> film composer, pianist).
* :func:`apposition_kinds`: a common-noun apposition on either side of the name ("Brennhaven, a port city
  in the south" -> port city; "the composer, Mira Tolland," -> composer).
* :func:`introducing_kinds`: the common noun that introduces a name in the same noun phrase ("the pop band
  Glass Owls" -> pop band; "the river Arlen" -> river).
* :func:`heading_concept`: a heading that is a noun phrase names the class of the lines under it ("Capital
  projects" -> capital project; "Revenue by source" -> revenue; "Outlook for 2025" is one, "How we did" not).

A kind is the head noun's lemma with the nouns compounded onto it ("port cities" -> "port city"); adjectives
and nationalities are left out ("a Dunmorish composer" -> composer), so the concept is a class, not a
description. :func:`concept_key` is the normal form both sides use, :func:`head_of` the head of a multi-word
kind ("film composer" IS_A "composer").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from stratagraph.text.lexicon import (
    CHANGE_WORDS,
    COPULA_VERBS,
    IRREGULAR_PLURALS,
    KINSHIP_NOUNS,
    PERSON_NOUNS,
    VAGUE_KIND_NOUNS,
)

if TYPE_CHECKING:
    from spacy.tokens import Token

__all__ = [
    "apposition_kinds",
    "concept_key",
    "copula_kinds",
    "head_of",
    "heading_concept",
    "introducing_kinds",
    "kinds_of_span",
    "singular",
]

_WORD = re.compile(r"^[a-z][a-z-]*[a-z]$")
_MAX_WORDS = 3
_RELATIVES = frozenset({"who", "which", "that"})


def singular(word: str) -> str:
    """A plural English noun's singular by its spelling ("cities" -> city, "churches" -> church, "bands"
    -> band) or from the lexicon's irregular plurals ("people" -> person); words that are not plurals are
    returned as they are ("bus", "analysis", "press")."""
    w = word.lower()
    if w in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[w]
    if len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "sses", "zes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


def concept_key(name: str) -> str:
    """The normal form of a concept's name: lower case, single spaces, the last word singular ("Port
    Cities" -> "port city"); "" when it is no word sequence."""
    words = [w for w in re.split(r"[\s_]+", name.strip().lower()) if w]
    if not words:
        return ""
    words[-1] = singular(words[-1])
    return " ".join(words)


def head_of(key: str) -> str | None:
    """The head of a multi-word concept ("film composer" -> "composer", "chamber music festival" -> "music
    festival"), None for one word."""
    words = key.split()
    return " ".join(words[1:]) if len(words) > 1 else None


def _hyphenated(token: Token) -> bool:
    """Part of a hyphenated word ("long-distance"): a "-" written against it on either side."""
    doc = token.doc
    before = token.i > 0 and doc[token.i - 1].text == "-" and not doc[token.i - 1].whitespace_
    after = token.i + 1 < len(doc) and doc[token.i + 1].text == "-" and not token.whitespace_
    return before or after


def _kind_of(noun: Token, cased: bool = True) -> str | None:
    """The kind a common noun names: its lemma with the common nouns compounded onto it (at most
    :data:`_MAX_WORDS` words; part of a hyphenated word is left out, "a long-distance footpath" ->
    footpath); None when it is no common noun written in lower case (``cased``: in running text; a heading
    capitalises its words), a vague one, or not a plain word."""
    if noun.pos_ != "NOUN" or noun.ent_type_ or (cased and not noun.text.islower()):
        return None
    head = noun.lemma_.lower() if noun.lemma_ else noun.lower_
    # "FY2025, an increase of $1.85 million": a change is no kind of thing; "his wife, Christine": a relation
    if head in VAGUE_KIND_NOUNS or head in CHANGE_WORDS or head in KINSHIP_NOUNS or not _WORD.match(head):
        return None
    mods: list[str] = []
    for child in reversed(list(noun.lefts)):
        if (
            child.dep_ == "compound" and child.pos_ == "NOUN" and not child.ent_type_
            and (child.text.islower() or not cased)
            and _WORD.match(child.lower_) and not _hyphenated(child)
        ):  # fmt: skip
            mods.insert(0, child.lower_)
        else:
            break
    words = [*mods, head][-_MAX_WORDS:]
    return " ".join(words)


def _same_line(a: Token, b: Token) -> bool:
    """No line break between two tokens: a list item or a heading line is a unit of its own, whatever the
    parser attached across it ("- Skylark Theodolite (1986)\n- Sparrow Scanner, a laser scanner")."""
    lo, hi = sorted((a.i, b.i))
    return not any("\n" in t.text or "\n" in t.whitespace_ for t in a.doc[lo:hi])


def _with_conjuncts(noun: Token) -> list[Token]:
    out = [noun]
    for c in noun.conjuncts:
        if c.i > noun.i:
            out.append(c)
    return out


def _subject_of(token: Token) -> Token | None:
    """The copula or verb head whose nominal subject ``token`` is, or the relative clause's head when it is
    the antecedent of "who/which/that" subject ("X, who is a composer")."""
    return token.head if token.dep_ in {"nsubj", "nsubjpass"} else None


def copula_kinds(root: Token) -> list[str]:
    """Class of language: a copular clause whose subject is the entity and whose attribute is a common noun
    phrase ("A is a composer", "A was an American film composer and pianist", "A became the capital",
    and through a relative pronoun "A, who was a composer,"); "A is one of the founders" takes the noun
    after "of". The attribute's conjuncts count too."""
    heads: list[Token] = []
    if root.dep_ in {"nsubj", "nsubjpass"}:
        heads.append(root.head)
    for child in root.children:  # "A, who is a composer": the relative clause hangs on the name
        if child.dep_ == "relcl":
            subj = [c for c in child.children if c.dep_ == "nsubj" and c.lower_ in _RELATIVES]
            if subj:
                heads.append(child)
    out: list[str] = []
    for head in heads:
        if head.lemma_.lower() not in COPULA_VERBS:
            continue
        for attr in (c for c in head.children if c.dep_ == "attr"):
            if attr.lower_ == "one":  # "A is one of the founders": the plural after "of"
                attr = next((p for c in attr.children if c.dep_ == "prep" and c.lower_ == "of" for p in c.children
                             if p.dep_ == "pobj"), attr)  # fmt: skip
            for noun in _with_conjuncts(attr):
                kind = _kind_of(noun)
                if kind and _same_line(root, noun):
                    out.append(kind)
    return out


def apposition_kinds(root: Token) -> list[str]:
    """Class of language: an apposition of a common noun phrase next to the name, after it ("Brennhaven, a
    port city in the south,") or before it ("the composer, Mira Tolland,"), with its conjuncts. After the
    name the apposition opens with an article ("a port city"), which tells it from a misparsed verb; before
    it the noun stands right before the name or a comma (a name in brackets after a noun, "the canopy
    response (Castellanos et al., 2020)", is a citation, not an apposition). Only for a proper name."""
    out: list[str] = []
    if root.pos_ != "PROPN":
        return out
    # a place: a place entity, or the object of a locative preposition ("born in Corvel")
    place = root.ent_type_ in {"GPE", "LOC", "FAC"} or (
        root.dep_ == "pobj" and root.head.lower_ in {"in", "at", "near", "on", "inside", "outside"}
    )
    for child in root.children:
        if child.dep_ == "appos" and child.i > root.i and any(c.dep_ == "det" for c in child.lefts):
            for noun in _with_conjuncts(child):
                kind = _kind_of(noun)
                # "born in Corvel, the son of a clockmaker": a person noun after a place is about the subject
                if kind and _same_line(root, noun) and not (place and noun.lemma_.lower() in PERSON_NOUNS):
                    out.append(kind)
    if root.dep_ == "appos" and root.head.i < root.i:
        first = root.left_edge.i
        between = [t for t in root.doc[root.head.i + 1 : first]]
        if all(t.text == "," for t in between) and _same_line(root.head, root):
            kind = _kind_of(root.head)
            if kind:
                out.append(kind)
    return out


def introducing_kinds(tokens: Iterable[Token], root: Token) -> list[str]:
    """Class of language: a common noun that introduces a name inside one noun phrase, as a compound of
    the name's head ("the pop band Glass Owls", "the river Arlen", "the composer Mira Tolland"): the run of
    common nouns right before the name's first word, opened by an article (the parser often takes "band"
    for a subject of its own, so adjacency, not the dependency label, decides)."""
    toks = list(tokens)
    if not toks or root.pos_ != "PROPN":
        return []
    verb = root.head
    if root.dep_ in {"nsubj", "nsubjpass"} and verb.i > root.i and verb.head.i < toks[0].i:
        return []  # "the hiring plan Rebecca described": the name opens a clause on the noun before it
    doc = root.doc
    words: list[Token] = []
    i = toks[0].i - 1
    if not toks[0].text[:1].isupper():  # the name after the noun is written as one ("breeding-season corpora")
        return []
    while i >= 0:
        t = doc[i]
        if t.pos_ == "NOUN" and not t.ent_type_ and t.text.islower() and _WORD.match(t.lower_) and t.tag_ != "NNS":
            words.insert(0, t)
            i -= 1
        else:
            break
    # the run must open a noun phrase ("the pop band Glass Owls"): an article right before it
    if words and not (i >= 0 and doc[i].pos_ == "DET" and doc[i].lower_ in {"the", "a", "an"}):
        words = []
    # and be tied to the name: its compound or head, or a twin the parser gave the name's own role
    if words and not _same_line(words[0], toks[0]):
        words = []
    if words:
        last = words[-1]
        tied = last.head.i == root.i or root.head.i == last.i or (last.head.i == root.head.i and last.dep_ == root.dep_)
        if not tied:
            words = []
    # or inside the mention itself: "river Arlen" when the name kept the introducing noun, after an article
    # and before a capitalised word ("during construction Engine 3" is no introduction)
    if not words and toks[0].i > 0 and doc[toks[0].i - 1].lower_ in {"the", "a", "an"}:
        for t in toks:
            if t.pos_ == "NOUN" and t.dep_ == "compound" and t.text.islower() and _WORD.match(t.lower_) and not t.ent_type_:
                words.append(t)
            else:
                break
        rest = toks[len(words)] if len(words) < len(toks) else None
        if rest is None or not rest.text[:1].isupper():
            words = []
    if not words:
        return []
    head = words[-1]
    lemma = head.lemma_.lower() or head.lower_
    if lemma in VAGUE_KIND_NOUNS or lemma in KINSHIP_NOUNS or not _WORD.match(lemma):
        return []
    return [" ".join([*(w.lower_ for w in words[:-1]), lemma][-_MAX_WORDS:])]


def kinds_of_span(tokens: Iterable[Token]) -> list[str]:
    """Every kind the rules above find for the name made of ``tokens`` (its syntactic root is the token
    whose head lies outside), each once, in the order found."""
    toks = list(tokens)
    if not toks:
        return []
    lo, hi = toks[0].i, toks[-1].i
    root = next((t for t in toks if not (lo <= t.head.i <= hi) or t.head.i == t.i), toks[-1])
    found = [*copula_kinds(root), *apposition_kinds(root), *introducing_kinds(toks, root)]
    return list(dict.fromkeys(concept_key(k) for k in found if k))


@functools.lru_cache(maxsize=4096)
def heading_concept(text: str) -> str | None:
    """Class of language: a heading or a table's column heading that is a plain noun phrase ("Capital
    projects", "Departments", "Revenue by source", "Outlook for 2025") names the class of what is listed
    under it: its head noun's lemma with its compounds. None for a heading with a verb, a proper name as
    head, no noun, or a vague noun."""
    from stratagraph.text.nlp import load_nlp

    text = " ".join(text.split())
    if not text or len(text) > 80 or not any(ch.isalpha() for ch in text):
        return None
    doc = load_nlp()(text if not text.isupper() else text.lower())
    if any(t.pos_ in {"VERB", "AUX"} or t.tag_ == "WP" or t.tag_ == "WRB" for t in doc):
        return None
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    if root.pos_ == "PROPN":  # a capitalised heading often tags its head as a proper noun
        return None if root.ent_type_ or root.text.isupper() else _kind_of_heading(root)
    kind = _kind_of(root, cased=False)
    return concept_key(kind) if kind else None


def _kind_of_heading(root: Token) -> str | None:
    lemma = root.lemma_.lower() or root.lower_
    word = singular(root.lower_) if lemma == root.lower_ else lemma
    if word in VAGUE_KIND_NOUNS or not _WORD.match(word):
        return None
    mods = []
    for child in reversed(list(root.lefts)):
        if child.dep_ == "compound" and _WORD.match(child.lower_) and not child.ent_type_:
            mods.insert(0, child.lower_)
        else:
            break
    return concept_key(" ".join([*mods, word][-_MAX_WORDS:]))

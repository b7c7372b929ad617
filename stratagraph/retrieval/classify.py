"""Query complexity classification: BiG-RAG §4.3.1, Algorithm 3, over spaCy's parse (``ctx.nlp()``).

Algorithm 3 extracts, from the dependency parse (lines 4-11):

* ``has_subordinate``: a subordinate marker {who, which, that, whose, where, when, "of the"} in the question.
  The paper tests the lowercased string; here a marker word counts when it is a word of the question and not the
  question's own interrogative (the wh-word that opens it, possibly after a preposition: "In which year..."),
  since the paper's SIMPLE pattern is "a simple wh-question without subordinate clauses";
* ``has_possessive``: a token with dependency ``poss``;
* ``num_entities``: named entities of the parse (numbers and dates are not entities, as in query linking);
* ``clause_depth``: the number of ``relcl``/``acl``/``ccomp`` tokens;

and decides (lines 14-19)::

    COMPLEX   if has_subordinate and (has_possessive or clause_depth > 2)
    MODERATE  elif num_entities > 2 or has_subordinate
    SIMPLE    otherwise

The class descriptions of §4.3.1 name three more signals that the pseudo-code leaves out, added here:

* ``nested_references``: references that must be resolved before the question can be asked (the paper's
  COMPLEX pattern "possessives, nested references"; :func:`decompose.find_references`, non-focus ones), e.g.
  "the director of the film that ..." -> COMPLEX. Without it the paper's own COMPLEX example ("Who is the
  spouse of the director of the film that won Best Picture in 2019?", one ``relcl``, no possessive) would be
  MODERATE;
* ``coordinated``: coordinated names ("X and Y", "X or Y") and ``comparative`` words (comparative/superlative
  tags, "first", "same", "both"...) -> MODERATE: the paper's MODERATE pattern, "2-3 entities but no sequential
  dependencies" ("Are X and Y both directors?", "Which came out first, X or Y?");
* ``num_entities >= 2`` -> MODERATE (that pattern's "2-3 entities"; Algorithm 3 line 16 says ``> 2``).

Each class carries the paper's complexity-adaptive parameters (§4.3.4 table, Appendix E.1): SIMPLE 3 hops /
5 target relations, MODERATE 10 / 15, COMPLEX 5 / 10 per sub-query.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stratagraph.retrieval.decompose import NUMERIC_ENTS, find_coordinations, find_references, parse, resolvable


class Complexity(StrEnum):
    SIMPLE = "SIMPLE"
    MODERATE = "MODERATE"
    COMPLEX = "COMPLEX"


class TraversalParams(BaseModel):
    """Algorithm 4's inputs for one complexity class: ``max_hops`` H and ``target_relations`` K."""

    model_config = ConfigDict(frozen=True)

    max_hops: int = Field(ge=0, description="paper (BiG-RAG §4.3.4 table): H, the most hops")
    target_relations: int = Field(ge=1, description="paper (§4.3.4 table): K, facts to collect")
    per_sub_query: bool = Field(False, description="paper (§4.3.4): K and H apply to each sub-question")
    strategy: str = Field("", description="paper (§4.3.4): the class's strategy, a label")


#: BiG-RAG §4.3.4 "Complexity-Adaptive Parameters" (= Appendix E, Table E.1)
PARAMS: dict[Complexity, TraversalParams] = {
    Complexity.SIMPLE: TraversalParams(max_hops=3, target_relations=5, strategy="single-step retrieval"),
    Complexity.MODERATE: TraversalParams(max_hops=10, target_relations=15, strategy="multi-hop traversal"),
    Complexity.COMPLEX: TraversalParams(
        max_hops=5, target_relations=10, per_sub_query=True, strategy="sequential decomposition"
    ),
}

#: Algorithm 3 line 4
SUBORDINATE_MARKERS = ("who", "which", "that", "whose", "where", "when", "of the")
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_COMPARISON_WORDS = frozenset({"first", "last", "same", "both", "either", "neither", "different", "earlier", "later"})
_CLAUSE_DEPS = frozenset({"relcl", "acl", "ccomp"})


class QueryFeatures(BaseModel):
    """The linguistic features Algorithm 3 reads (plus the three §4.3.1 signals, see module docstring)."""

    has_subordinate: bool
    subordinate_markers: list[str] = Field(default_factory=list)
    has_possessive: bool
    num_entities: int
    entities: list[str] = Field(default_factory=list)
    clause_depth: int
    nested_references: int
    coordinated: bool
    comparative: bool
    interrogative: str | None = None


class Classification(BaseModel):
    label: Complexity
    features: QueryFeatures
    params: TraversalParams
    reason: str


def _interrogative(doc: Any) -> int | None:
    """Index of the question's own wh-word: the first one, if nothing but a preposition precedes it."""
    for tok in doc:
        if tok.tag_ in _WH_TAGS:
            return tok.i
        if tok.pos_ not in ("ADP", "PUNCT"):
            return None
    return None


def _markers(doc: Any, interrogative: int | None) -> list[str]:
    found: list[str] = []
    for tok in doc:
        word = tok.lower_
        if word == "of" and tok.i + 1 < len(doc) and doc[tok.i + 1].lower_ == "the":
            found.append("of the")
        elif word in SUBORDINATE_MARKERS and tok.i != interrogative:
            if word == "that" and tok.dep_ == "det":
                continue  # "that film": a demonstrative, not a clause
            found.append(word)
    return found


def features(ctx_or_nlp: Any, query: str) -> QueryFeatures:
    """Algorithm 3 lines 1-11 (and the extra §4.3.1 signals) for ``query``."""
    doc = parse(ctx_or_nlp, query)
    wh = _interrogative(doc)
    markers = _markers(doc, wh)
    ents = [e.text for e in doc.ents if e.label_ not in NUMERIC_ENTS]
    refs = find_references(doc)
    comparative = any(t.tag_ in ("JJR", "RBR", "JJS", "RBS") or t.lower_ in _COMPARISON_WORDS for t in doc)
    return QueryFeatures(
        has_subordinate=bool(markers),
        subordinate_markers=markers,
        has_possessive=any(t.dep_ == "poss" for t in doc),
        num_entities=len(ents),
        entities=ents,
        clause_depth=sum(1 for t in doc if t.dep_ in _CLAUSE_DEPS),
        nested_references=len(resolvable(refs)),
        coordinated=bool(find_coordinations(doc, refs)),
        comparative=comparative,
        interrogative=doc[wh].lower_ if wh is not None else None,
    )


def decide(f: QueryFeatures) -> tuple[Complexity, str]:
    """Algorithm 3 lines 13-19, with the §4.3.1 signals; returns the class and the rule that fired."""
    if f.has_subordinate and (f.has_possessive or f.clause_depth > 2):
        return Complexity.COMPLEX, "subordinate marker with a possessive or clause depth > 2 (Alg. 3 l.14)"
    if f.nested_references > 0:
        return Complexity.COMPLEX, "nested reference to resolve first (§4.3.1 COMPLEX pattern)"
    if f.num_entities > 2 or f.has_subordinate:
        return Complexity.MODERATE, "more than two entities or a subordinate marker (Alg. 3 l.16)"
    if f.num_entities >= 2 or f.coordinated or f.comparative:
        return Complexity.MODERATE, "several entities, coordination or comparison (§4.3.1 MODERATE pattern)"
    return Complexity.SIMPLE, "single-entity wh-question without subordinate clauses (Alg. 3 l.18)"


def classify(ctx_or_nlp: Any, query: str) -> Classification:
    """Classify ``query`` as SIMPLE / MODERATE / COMPLEX (Algorithm 3) with the class's traversal parameters."""
    f = features(ctx_or_nlp, query)
    label, reason = decide(f)
    return Classification(label=label, features=f, params=PARAMS[label], reason=reason)

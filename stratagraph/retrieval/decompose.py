"""Query decomposition for complex questions: BiG-RAG §4.3.3, Algorithm 5, with spaCy instead of an LLM.

Algorithm 5 takes the subordinate clauses of the dependency parse (``relcl``, ``acl``, ``ccomp``), turns each
into a sub-question answered into a variable ``var_i`` (innermost first, each depending on the previous one),
and ends with the original question where every clause is replaced by its variable ("final_answer"):

    "Who is the spouse of the director of the film that won Best Picture in 2019?"
    1. "Which film won Best Picture in 2019?"            -> var1
    2. "What is the director of {var1}?"                 -> var2  (depends on var1)
    3. "Who is the spouse of {var2}?"                    -> final_answer (depends on var2)

The unit this module works with is a *reference*: a common noun that names something through its relation to
something else, the paper's "subordinate clauses, possessives, nested references" (§4.3.1 COMPLEX):

* relative: the noun carries a relative clause opened by a relative word (``relcl``: "the film that won X",
  "the city where X was born") or a participle clause with a complement (``acl``: "the film directed by X")
  -> "Which film won X?";
* possessive: a non-pronoun possessor (``poss``: "Mara Quill's mother") -> "What is the mother of Mara Quill?";
* of: an "of" prepositional object (``prep`` + ``pobj``: "the director of film X", not the indefinite "a member
  of X") -> "What is the director of film X?". A bare noun that is itself the "of" object of a reference
  ("date of *death* of ...", "place of *birth* of ...") is part of its parent's relation name, not a hop.

A reference is the *focus* (the thing asked for, so no sub-question of its own) when it carries a wh-determiner
("*which film* ..."), is the subject/attribute of a copula with a wh-pronoun ("Who is *the spouse of* ...") or
with a wh-adverb in a question with no other verb ("Where was *the place of death of* X?"), or is the root.
Every other reference is resolved first: sub-questions are emitted deepest first (ties by position), each
depending on the variables of the references directly inside it (Algorithm 5 line 14 for a chain; a tree in
general); the final question depends on the outermost ones.

A ``ccomp`` clause (Algorithm 5 line 2) names no referent, so it is not split off; references inside it are.
Beyond Algorithm 5 (which only splits subordinate clauses), coordinated names ("Are X and Y both directors?",
"Which film came out first, X or Y?") are split into one independent sub-question per conjunct, and the final
question depends on all of them. A question with neither decomposes to itself.

Spans of references are extended to the right over a following run of capitalised words so that a title the
small parser splits up ("the director of film The Falcon born") stays whole. A reference never takes the
question's own verb: a participle clause inside it is its noun's (nested, resolved first) when the question
already has its predicate ("How long is the flagship of the company headquartered in X?"), and the question's
verb when it has none ("When was the director of the film educated at Oxford?"); a do-support question's verb
that the small tagger read as a noun compounded onto the noun before it ("On which river does the hometown of
X's founder lie?") ends the reference and stays in the final question.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from stratagraph.text.nlp import NUMERIC_LABELS

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

FINAL = "final_answer"
VAR_PATTERN = re.compile(r"\{(var\d+)\}")

#: children whose subtree belongs to a reference's noun phrase (a "prep" child only when it is "of")
_SPAN_DEPS = frozenset({"det", "predet", "amod", "compound", "nummod", "poss", "nmod", "appos", "quantmod", "case"})
_RELATIVE_MARKERS = frozenset({"WDT", "WP", "WP$"})
_WH_PRONOUNS = frozenset({"who", "what", "whom", "which"})
_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "X"})
_TITLE_LINKS = frozenset(
    {"of", "the", "a", "an", "de", "la", "le", "du", "des", "von", "van", "der", "del", "y", "&", "-", "'", "'s"}
)
_INDEFINITE = frozenset({"a", "an", "any", "some", "another"})
_COORD_WORDS = frozenset({"and", "or"})
_DISTRIBUTIVE = frozenset({"both", "either", "neither"})
#: spaCy entity labels of numbers and dates, which are not named entities (as in query linking)
NUMERIC_ENTS = NUMERIC_LABELS  # dates and amounts are values, never entities

RefKind = Literal["relative", "possessive", "of"]


class SubQuery(BaseModel):
    """One step of a decomposition: a question (with ``{varN}`` placeholders for earlier answers), the
    variable its answer binds (``final_answer`` for the last) and the variables it needs first."""

    text: str
    target: str = FINAL
    depends_on: list[str] = Field(default_factory=list)
    kind: Literal["relative", "possessive", "of", "conjunct", "final"] = "final"

    def variables(self) -> list[str]:
        return list(dict.fromkeys(VAR_PATTERN.findall(self.text)))

    def render(self, bindings: Mapping[str, str] | None = None) -> str:
        """The text with each placeholder replaced by its binding (or dropped when unbound)."""
        bindings = bindings or {}
        return _tidy(VAR_PATTERN.sub(lambda m: bindings.get(m.group(1), ""), self.text))


def _tidy(text: str) -> str:
    """Single spaces, no space before punctuation, no outer whitespace."""
    return re.sub(r"\s+([?,.!])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


# ------------------------------------------------------------------------------------------ parsing


_PARSE_CACHE: OrderedDict[tuple[int, str], Doc] = OrderedDict()
_PARSE_LOCK = threading.Lock()
_PARSE_CACHE_SIZE = 256


def nlp_of(source: Any) -> Language:
    """A spaCy pipeline from a :class:`RetrievalContext` (its shared ``nlp()``) or a pipeline itself."""
    nlp = getattr(source, "nlp", None)
    if callable(nlp) and not hasattr(source, "pipe_names"):
        return nlp()
    return source


def parse(source: Any, text: str) -> Doc:
    """The parse of ``text`` (the last 256 are kept: classification, decomposition and retrieval of one
    question share one parse)."""
    nlp = nlp_of(source)
    key = (id(nlp), text)
    with _PARSE_LOCK:
        doc = _PARSE_CACHE.get(key)
        if doc is not None:
            _PARSE_CACHE.move_to_end(key)
            return doc
    doc = nlp(text)
    with _PARSE_LOCK:
        _PARSE_CACHE[key] = doc
        while len(_PARSE_CACHE) > _PARSE_CACHE_SIZE:
            _PARSE_CACHE.popitem(last=False)
    return doc


# ------------------------------------------------------------------------------------------ references


@dataclass
class Reference:
    """A noun phrase naming something through a relation (see the module docstring); tokens [start, end)."""

    head: Token
    kind: RefKind
    start: int
    end: int
    focus: bool
    argument: Token | None = None  # the possessor, the "of" object or the clause verb
    parent: Reference | None = field(default=None, repr=False)

    def contains(self, other: Reference) -> bool:
        return other is not self and self.start <= other.start and other.end <= self.end

    @property
    def depth(self) -> int:
        d, node = 0, self.parent
        while node is not None:
            d, node = d + 1, node.parent
        return d


def _of_object(tok: Token) -> Token | None:
    for child in tok.children:
        if child.dep_ == "prep" and child.lower_ == "of":
            for grand in child.children:
                if grand.dep_ == "pobj" and grand.pos_ in _NOMINAL:
                    return grand
    return None


def _possessor(tok: Token) -> Token | None:
    for child in tok.children:
        if child.dep_ == "poss" and child.pos_ in ("PROPN", "NOUN") and child.lower_ != "whose":
            return child
    return None


def _is_relative_marker(tok: Token) -> bool:
    """who/which/whose/that, or where/when opening a relative clause ("the city where X was born"); a clause
    has a verb after its marker ("a second campus in which California city?" asks, it relates nothing)."""
    return (
        tok.tag_ in _RELATIVE_MARKERS or tok.lower_ == "that" or (tok.tag_ == "WRB" and tok.lower_ in ("where", "when"))
    ) and any(t.pos_ in ("VERB", "AUX") for t in tok.doc[tok.i + 1 :])


def _antecedent(clause: Token) -> Token | None:
    """The noun a relative clause is about: the one right before its relative marker ("the waterfall in the
    *country* where X is found", "the county in which X lies"), whatever noun the parser hung it on; None
    when the clause has no marker before its verb."""
    marker = next((t for t in clause.subtree if _is_relative_marker(t) and t.i < clause.i), None)
    if marker is None:
        return None
    i = marker.i - 1
    while i >= 0 and (clause.doc[i].pos_ in ("ADP", "PUNCT") or clause.doc[i].dep_ == "case"):
        i -= 1  # "the county in which", "the country, where"
    if i >= 0 and clause.doc[i].pos_ in ("NOUN", "PROPN"):
        return clause.doc[i]
    return None


def _marked_clause(tok: Token) -> Token | None:
    """A relative clause introduced by a relative pronoun after the noun (the noun right before the marker,
    :func:`_antecedent`), or a participle clause (acl)."""
    for clause in tok.doc:
        if clause.dep_ == "relcl" and clause.i > tok.i and _antecedent(clause) is not None:
            if _antecedent(clause).i == tok.i:  # type: ignore[union-attr]
                return clause
    for child in tok.children:
        if child.i < tok.i:
            continue
        if child.dep_ == "relcl" and _antecedent(child) is None and any(
            _is_relative_marker(t) and tok.i < t.i < child.i for t in child.subtree
        ):
            return child
        if child.dep_ == "acl" and child.tag_ in ("VBN", "VBG") and any(True for _ in child.children):
            return child
    return None


def _is_bare(tok: Token) -> bool:
    return not any(c.dep_ in ("det", "poss", "nummod", "predet") for c in tok.children)


def _is_merged(tok: Token) -> bool:
    """A bare noun that is the "of" object of another noun names part of that noun's relation
    ("date of death of X": the relation is "date of death")."""
    head = tok.head
    return (
        tok.dep_ == "pobj"
        and head.lower_ == "of"
        and head.head.pos_ == "NOUN"
        and _is_bare(tok)
        and _possessor(tok) is None
        and _marked_clause(tok) is None
    )


def _is_idiom(tok: Token) -> bool:
    """A bare noun that is the object of a preposition other than "of" and opens an "of" phrase is a complex
    preposition, not a reference ("in charge of", "as chief of staff to", "on behalf of")."""
    return (
        tok.dep_ == "pobj"
        and tok.head.pos_ == "ADP"
        and tok.head.lower_ != "of"
        and not any(c.dep_ in ("det", "poss", "nummod", "predet", "amod", "compound") for c in tok.children)
        and _of_object(tok) is not None
    )


#: nouns that name a kind of place: "the island of Oahu" is the place Oahu, not a relation of it
_PLACE_KINDS = frozenset(
    """island village city town state county province region kingdom republic port borough municipality district
    parish lake river isle duchy principality archipelago peninsula emirate commune prefecture canton""".split()
)


def _names_itself(tok: Token) -> bool:
    """"the village of Clonbrook": a kind of place followed by "of" and its proper name."""
    obj = _of_object(tok)
    return (
        tok.lemma_.lower() in _PLACE_KINDS
        and obj is not None
        and obj.pos_ == "PROPN"
        and not any(c.dep_ in ("det", "poss") for c in obj.children)
    )


def _contact_clause(tok: Token) -> int | None:
    """The end of a relative clause without its marker after ``tok`` ("the *country* Signmark is from", "the
    *company* Novair International Airways is part of", "the *company* Orlen Vasquith founded"): a name, then a
    form of "be" and what follows up to a preposition left at the end of the question (or before its last
    verb), or a past verb (:func:`_contact_verb_end`); None when there is none."""
    doc = tok.doc
    i = tok.i + 1
    if i >= len(doc) or doc[i].pos_ != "PROPN" or not any(c.dep_ == "det" for c in tok.children):
        return None
    while i < len(doc) and (doc[i].pos_ == "PROPN" or (doc[i].text == "&" and i + 1 < len(doc) and doc[i + 1].pos_ == "PROPN")):
        i += 1
    if i < len(doc) and doc[i].tag_ in ("VBD", "VBN") and doc[i].lemma_ not in ("be", "have", "do"):
        return _contact_verb_end(doc, i)
    if i >= len(doc) or doc[i].lemma_ != "be":
        return None
    for k in range(i + 1, min(len(doc), i + 5)):
        t = doc[k]
        if t.pos_ == "ADP":
            rest = [x for x in doc[k + 1 :] if not x.is_punct]
            if not rest or (len(rest) == 1 and rest[0].pos_ == "VERB") or doc[k + 1].text == ",":
                return k + 1
        if t.pos_ not in ("VERB", "NOUN", "DET", "ADV", "ADP"):
            return None
    return None


def _contact_verb_end(doc: Doc, verb: int) -> int | None:
    """The end of a contact clause whose name is the subject of a past verb ("the *company* Orlen Vasquith
    *founded*", "the *bridge* Tarrant & Loame *fabricated* ironwork *for*"): right after the verb, or after a
    preposition its object leaves at the end of the question; None when the verb is the question's own (the
    question has no other verb but "be" or "do": "When was the bridge Harlow *built*?")."""
    others = [t for t in doc if t.pos_ in ("VERB", "AUX") and t.i != verb and t.lemma_ not in ("be", "do")]
    if not others:
        return None
    for k in range(verb + 1, min(len(doc), verb + 4)):
        t = doc[k]
        if t.pos_ == "ADP" and all(x.is_punct for x in doc[k + 1 :]):
            return k + 1  # "... fabricated ironwork *for*?"
        if t.pos_ not in ("NOUN", "DET", "ADJ"):
            break
    return verb + 1


def _is_focus(tok: Token) -> bool:
    if tok.dep_ == "ROOT":
        return True
    if any(c.dep_ == "det" and c.tag_ in ("WDT", "WP") for c in tok.children):
        return True
    copula = tok.head
    if tok.dep_ not in ("nsubj", "nsubjpass", "attr") or copula.lemma_ != "be":
        return False
    wh = [c for c in copula.children if c.i != tok.i and c.tag_ in ("WP", "WRB")]
    if any(c.tag_ == "WP" and c.lower_ in _WH_PRONOUNS for c in wh):
        return True  # "Who is the spouse of X?", "What is the capital of France?"
    # "Where was the place of death of X?": a wh-adverb asks for the reference itself only when no other
    # verb could carry the question ("Where was the director of X born?")
    return bool(wh) and not any(t.pos_ == "VERB" for t in tok.doc)


def _title_run_end(doc: Doc, end: int) -> int:
    """Extend a span ending before ``end`` over a following run of capitalised words (and the small words
    inside titles), so "film The Falcon" stays whole when the parser attaches "The Falcon" elsewhere."""
    i, last, open_paren = end, end, False
    while i < len(doc):
        t = doc[i]
        if t.text[:1].isupper() or t.text[:1].isdigit():
            last = i + 1
        elif t.text == "(":
            open_paren = True
        elif t.text == ")" and open_paren:
            open_paren, last = False, i + 1
        elif t.lower_ not in _TITLE_LINKS and not (
            t.pos_ == "ADP" and i + 1 < len(doc) and doc[i + 1].text[:1].isupper() and last == i
        ):  # a small preposition inside a title ("Songs I Wrote with Amy")
            break
        i += 1
    return last


def _phrase(tok: Token) -> list[int]:
    """The tokens of a noun phrase: the noun, its modifiers, its "of" objects and its own relative or participle
    clause, each whole; not what the parser hung on it beyond that (a question's trailing verb)."""
    return _own_tokens(tok, _marked_clause(tok) if tok.pos_ == "NOUN" else None, trailing=True)


def _own_tokens(tok: Token, clause: Token | None, trailing: bool) -> list[int]:
    """A noun's tokens: itself, its modifiers, its "of" objects (each a :func:`_phrase`), ``clause`` whole and,
    with ``trailing``, what is coordinated with it or hangs after it ("Alexander and the Terrible, ... Day")."""
    toks = [tok.i]
    for child in tok.children:
        if child.dep_ in _SPAN_DEPS:
            toks.extend(t.i for t in child.subtree)
        elif child.dep_ == "prep" and child.lower_ == "of":
            toks.append(child.i)
            for obj in child.children:
                if obj.dep_ == "pobj":
                    toks.extend(_phrase(obj))
        elif trailing and child.dep_ in ("cc", "conj", "prep") and child.i > tok.i:
            toks.extend(t.i for t in child.subtree)
    if clause is not None:
        toks.extend(t.i for t in clause.subtree)
    return toks


def _span(doc: Doc, head: Token, clause: Token | None, verb: Token | None = None) -> tuple[int, int]:
    """Tokens [start, end) of the reference ``head`` heads (with ``clause``); a misread verb (``verb``,
    :func:`_misread_verb`) inside it ends it ("the hometown of X's founder | lie")."""
    toks = _own_tokens(head, clause, trailing=False)
    start, end = min(toks), max(toks) + 1
    end = _title_run_end(doc, end)
    quotes = [t.i for t in doc[start:end] if t.text in ('"', "“", "”")]
    if len(quotes) % 2 and end < len(doc) and doc[end].text in ('"', "”"):
        end += 1  # the closing quotation mark of a quoted title the span opens
    if verb is not None and start < verb.i < end:
        return start, verb.i
    return start, _main_verb_left(doc, head, clause, start, end)


def _root(doc: Doc) -> Token | None:
    """The root of a one-sentence question (None for several sentences)."""
    roots = [t for t in doc if t.dep_ == "ROOT"]
    return roots[0] if len(roots) == 1 else None


def _misread_verb(doc: Doc) -> Token | None:
    """The main verb of a do-support question that the small tagger read as a noun compounded onto the noun
    before it ("On which river does the hometown of X's founder *lie*?", "How many workers did the firm founded
    by X's pupil *employ* at its peak?"). When the root is a form of "do" that has no verb after it (no base
    form, none hung on the do; participles of modifiers, "founded by", "best-known", are no main verb), the
    verb is the last lowercase singular noun after the do with a ``compound`` child right before it that ends
    the phrase: the question ends or a preposition other than "of" follows. Not in a question with its verb,
    not when a wh-pronoun subject makes "do" the verb itself ("Who did the music for the film score?"), not a
    compound an "of" phrase or a name follows ("the steamship company of X"); None when there is none."""
    root = _root(doc)
    if root is None or root.lemma_ != "do":
        return None
    after = doc[root.i + 1 :]
    if any(t.tag_ == "VB" or (t.pos_ in ("VERB", "AUX") and t.head.i == root.i) for t in after):
        return None
    if any(c.dep_ in ("nsubj", "nsubjpass") and c.tag_ == "WP" and c.i < root.i for c in root.children):
        return None
    found = None
    for t in after:
        before = doc[t.i - 1]
        rest = doc[t.i + 1 :]
        ends = all(x.is_punct for x in rest) or (rest[0].pos_ == "ADP" and rest[0].lower_ != "of")
        if t.tag_ == "NN" and t.text.islower() and before.dep_ == "compound" and before.head.i == t.i and ends:
            found = t
    return found


def _main_verb_left(doc: Doc, head: Token, clause: Token | None, start: int, end: int) -> int:
    """A reference never takes the question's own verb: when the rest of the question has no verb of its own
    and needs one (do-support, "What position did the receiver of X play?", or a form of "be" with no noun
    of its own besides the wh-phrase, "In what year was the man that resigned ... born?"), the span ends
    before its last verb that has no subject or auxiliary of its own and carries the rest of the span as its
    complements ("play", "born", "taken by the British"; not "died" in "when he died", nor a participle clause
    of a noun inside the span when the question has its predicate, :func:`_inner_participle`)."""
    outside = [t for t in doc if not (start <= t.i < end) and not t.is_punct]
    if any(t.pos_ == "VERB" and t.lemma_ != "do" for t in outside):  # the small tagger calls do-support a verb
        return end
    wh_nouns = {t.i for t in outside if t.pos_ in ("NOUN", "PROPN") and any(
        c.lower_ in ("what", "which", "whose", "how") for c in t.children)}  # fmt: skip
    do_support = any(t.lemma_ == "do" for t in outside)
    needs_verb = do_support or (
        any(t.pos_ == "AUX" and t.lemma_ == "be" for t in outside)
        and not any(t.pos_ in ("NOUN", "PROPN") and t.i not in wh_nouns for t in outside)
    )
    if not needs_verb:
        return end
    words = [t for t in doc[head.i + 1 : end] if not t.is_punct]
    if end == len([t for t in doc if not (t.is_punct and t.i >= end)]) and len(words) >= 2:
        last, before = words[-1], words[-2]
        if last.text.islower() and last.text.isalpha() and all(
            c.i < last.i and (c.text[:1].isupper() or c.like_num or c.is_punct or c.dep_ == "det") for c in last.children
        ) and (before.text[:1].isupper() or before.like_num):  # a title or a year, then a lowercase last word ("... of Lost Time attend?", "..., 1990 born?"): the tagger's noun is the verb
            return last.i
    for v in reversed(doc[head.i + 1 : end]):
        if v.pos_ != "VERB":
            continue
        # the last word of a question whose only other verb is a form of "be", with a plain subject and no
        # auxiliary, is the question's passive participle: the parser hung the noun before it on it ("In what year
        # was the company that made the Hall its headquarters *founded*?")
        last_word = all(t.is_punct for t in doc[v.i + 1 :])
        bare_participle = last_word and v.tag_ in ("VBN", "VBD") and not any(
            c.dep_ in ("aux", "auxpass") or _is_relative_marker(c) for c in v.children)  # "... where X *studied*": its clause
        if (clause is not None and v.i == clause.i) or any(
            c.dep_ in (("nsubjpass", "aux", "auxpass", "mark") if bare_participle else ("nsubj", "nsubjpass", "aux", "auxpass", "mark"))
            for c in v.children
        ):
            break
        if _inner_participle(v, head, start, end):
            break
        sub = {t.i for t in v.subtree}
        if all(i in sub for i in range(v.i, end) if not doc[i].is_punct):
            cut = v.i
            while cut > head.i + 1 and (doc[cut - 1].is_punct or doc[cut - 1].pos_ == "CCONJ"):
                cut -= 1
            return cut
        break
    return end


def _reference(doc: Doc, tok: Token, verb: Token | None, own_clause: bool = True) -> Reference | None:
    """The reference ``tok`` heads (module docstring), or None; without ``own_clause`` its relative or participle
    clause is not its own (:func:`_clause_is_question_verb`). A noun a misread verb (``verb``,
    :func:`_misread_verb`) was compounded onto stands where the parser put the verb: the possessor hung on the
    verb is the noun's ("X's founder lie": the founder of X) and the phrase ends before the verb."""
    if tok.pos_ != "NOUN" or (verb is not None and tok.i == verb.i):
        return None
    if _is_merged(tok) or _is_idiom(tok) or _names_itself(tok):
        return None
    if tok.i > 0 and tok.text[:1].isupper():
        return None  # a capitalised noun is part of a name ("The Girl Who Kicked the Hornets' Nest")
    node = verb if verb is not None and tok.i == verb.i - 1 and tok.head.i == verb.i else tok
    clause = _marked_clause(tok) if own_clause else None
    poss, obj = _possessor(node), _of_object(tok)
    if clause is not None:
        kind: RefKind = "relative"
        arg = clause
    elif poss is not None:
        kind, arg = "possessive", poss
    elif obj is not None and not any(c.dep_ == "det" and c.lower_ in _INDEFINITE for c in tok.children):
        kind, arg = "of", obj  # "the director of X", not "a member of X"
    else:
        return None
    start, end = _span(doc, node, clause, verb)
    return Reference(head=tok, kind=kind, start=start, end=end, focus=_is_focus(node), argument=arg)


def _clause_is_question_verb(ref: Reference, refs: Sequence[Reference]) -> bool:
    """A participle clause that an enclosing reference's span ends right before (:func:`_main_verb_left` took its
    verb as the question's) is the question's, not its noun's: "When was the director of the film educated at
    Oxford?" asks when the director was educated, and "the film educated at Oxford" is no reference."""
    clause = ref.argument
    return (
        ref.kind == "relative"
        and clause is not None
        and clause.dep_ == "acl"
        and any(o is not ref and o.start < ref.head.i < o.end == clause.i for o in refs)
    )


def _has_predicate(doc: Doc, start: int, end: int) -> bool:
    """The question's root is a form of "be" with its own complement outside [start, end): an adjective or
    adverb ("How *long* is ...", "How *old* was ..."), a wh-pronoun ("*What* is ...", "*Who* was ...") or a
    noun a wh-word determines ("*Which ship* is ...", "*What nationality* is ..."); such a question is whole
    without another verb. Not a wh-adverb: "*When* was the director of the film educated at Oxford?" needs
    its participle as much as "*Where* is the office of the firm founded by X?" does not."""
    root = _root(doc)
    if root is None or root.lemma_ != "be":
        return False
    for c in root.children:
        if start <= c.i < end:
            continue
        if c.dep_ == "acomp" or (c.dep_ == "attr" and c.tag_ == "WP"):
            return True
        if c.dep_ in ("attr", "nsubj") and any(d.dep_ == "det" and d.tag_ in ("WDT", "WP") for d in c.children):
            return True
    return False


def _inner_participle(v: Token, head: Token, start: int, end: int) -> bool:
    """A participle clause the parser hung on a noun inside the reference after its head is that noun's (the
    noun is a reference of its own, resolved first, like one with a relative clause), not the question's verb,
    when the question already has its predicate (:func:`_has_predicate`) and the clause leaves no preposition
    without its object: "How long is the flagship of the company *headquartered in X*?" (the company is
    headquartered in X); but "What was the ship of the fleet *named after*?" asks with its clause, and "When
    was the director of the film *educated at Oxford*?" has no predicate but the clause."""
    noun = v.head
    return (
        v.dep_ == "acl"
        and noun.pos_ == "NOUN"
        and head.i < noun.i < v.i
        and getattr(_marked_clause(noun), "i", None) == v.i
        and _has_predicate(v.doc, start, end)
        and not any(t.pos_ == "ADP" and not any(True for _ in t.children) for t in v.subtree)
    )


def find_references(doc: Doc) -> list[Reference]:
    """Every reference of the question (module docstring), with its parent (the nearest reference whose
    span contains it), in text order."""
    verb = _misread_verb(doc)
    found = [ref for tok in doc if (ref := _reference(doc, tok, verb)) is not None]
    refs: list[Reference] = []
    for ref in found:
        kept = _reference(doc, ref.head, verb, own_clause=False) if _clause_is_question_verb(ref, found) else ref
        if kept is not None:
            refs.append(kept)
    for tok in doc:  # "the country Signmark is from": a relative clause without its marker
        contact = _contact_clause(tok) if tok.pos_ == "NOUN" and not any(r.head.i == tok.i for r in refs) else None
        if contact is not None:
            start = min([tok.i, *(c.i for c in tok.children if c.dep_ in _SPAN_DEPS and c.i < tok.i)])
            refs.append(Reference(head=tok, kind="relative", start=start, end=contact, focus=_is_focus(tok)))
            for r in refs[:-1]:  # a reference that ends inside the clause ("the headquarters of the company X") takes it whole
                if r.start <= start < r.end < contact:
                    r.end = contact
    for ref in refs:
        holders = [r for r in refs if r.contains(ref)]
        ref.parent = min(holders, key=lambda r: (r.end - r.start, r.start)) if holders else None
    return refs


def resolvable(refs: Sequence[Reference]) -> list[Reference]:
    """The references that get a sub-question: all but the focus, deepest first, then by position."""
    return sorted((r for r in refs if not r.focus), key=lambda r: (-r.depth, r.start))


# ------------------------------------------------------------------------------------------ coordination


@dataclass
class Coordination:
    """Two coordinated names "A and B" / "A or B": token spans of each conjunct."""

    left: tuple[int, int]
    right: tuple[int, int]
    word: str

    @property
    def span(self) -> tuple[int, int]:
        return self.left[0], self.right[1]


def _candidates(doc: Doc, refs: Sequence[Reference]) -> list[tuple[int, int]]:
    spans = {(e.start, e.end) for e in doc.ents if e.label_ not in NUMERIC_ENTS}
    for chunk in doc.noun_chunks:
        start = chunk.start
        while start < chunk.end and doc[start].lower_ in _DISTRIBUTIVE:
            start += 1
        if start < chunk.end:
            spans.add((start, chunk.end))
    spans.update((r.start, r.end) for r in refs)
    # runs of capitalised words ("Blue Harbor Nights")
    i = 0
    while i < len(doc):
        if doc[i].text[:1].isupper() and doc[i].i > 0:
            end = _title_run_end(doc, i)
            if end > i:
                spans.add((i, end))
                i = end
                continue
        i += 1
    return sorted(spans)


def _nameish(doc: Doc, span: tuple[int, int], refs: Sequence[Reference]) -> bool:
    if any((r.start, r.end) == span and not r.focus for r in refs):
        return True
    return any(doc[i].pos_ == "PROPN" or doc[i].ent_type_ not in ("", *NUMERIC_ENTS) for i in range(*span))


def find_coordinations(doc: Doc, refs: Sequence[Reference] = ()) -> list[Coordination]:
    """Coordinated names: an "and"/"or" between a name-like span ending just before it (a comma may sit in
    between) and one starting just after it."""
    cands = _candidates(doc, refs)
    out: list[Coordination] = []
    for tok in doc:
        if tok.lower_ not in _COORD_WORDS or tok.i == 0:
            continue
        left_end = tok.i - 1 if doc[tok.i - 1].text == "," else tok.i
        lefts = [s for s in cands if s[1] == left_end]
        rights = [s for s in cands if s[0] == tok.i + 1]
        if not lefts or not rights:
            continue
        left = min(lefts, key=lambda s: (s[0], -s[1]))
        right = max(rights, key=lambda s: (s[1], -s[0]))
        if tok.lower_ == "and" and left[0] > 0 and doc[left[0] - 1].text == "," and any(
            all(doc[i].pos_ == "PROPN" for i in range(*s)) for s in cands if s[1] == left[0] - 1
        ):
            continue  # "A, B and C": a list the question asks about as a whole, not two alternatives
        if _nameish(doc, left, refs) and _nameish(doc, right, refs):
            out.append(Coordination(left=left, right=right, word=tok.lower_))
    return out


# ------------------------------------------------------------------------------------------ rendering


def _render(doc: Doc, start: int, end: int, subs: Mapping[int, tuple[int, str]], drop: set[int] | None = None) -> str:
    """Tokens [start, end) as text; ``subs`` maps a token index to (end, replacement) for replaced spans."""
    drop = drop or set()
    parts: list[str] = []
    i = start
    while i < end:
        if i in subs:
            stop, text = subs[i]
            last = doc[min(stop, end) - 1]
            parts.append(text + last.whitespace_)
            i = stop
            continue
        if i not in drop:
            parts.append(doc[i].text_with_ws)
        i += 1
    return _tidy("".join(parts))


def _question(text: str) -> str:
    text = text.strip().rstrip("?.! ").strip()
    return text[:1].upper() + text[1:] + "?" if text else text


def _ref_question(doc: Doc, ref: Reference, subs: Mapping[int, tuple[int, str]]) -> str:
    if ref.kind == "relative":
        drop = {t.i for t in doc[ref.start : ref.head.i] if t.dep_ in ("det", "predet")}
        clause = ref.argument
        if clause is not None:
            drop.update(
                c.i
                for c in clause.children
                if c.dep_ in ("nsubj", "nsubjpass") and (c.tag_ in _RELATIVE_MARKERS or c.lower_ == "that")
            )
        return _question("Which " + _render(doc, ref.start, ref.end, subs, drop))
    if ref.kind == "possessive" and ref.argument is not None:
        owner = ref.argument
        o_start, o_end = min(t.i for t in owner.subtree), max(t.i for t in owner.subtree) + 1
        case = {t.i for t in owner.subtree if t.dep_ == "case"}
        owner_text = _render(doc, o_start, o_end, subs, case)
        rest = _render(doc, o_end, ref.end, subs, {t.i for t in doc[o_end : ref.end] if t.dep_ == "case"})
        return _question(f"What is the {rest} of {owner_text}")
    return _question("What is " + _render(doc, ref.start, ref.end, subs))


def _subs_for(refs: Sequence[Reference], names: Mapping[int, str]) -> dict[int, tuple[int, str]]:
    return {r.start: (r.end, "{" + names[id(r)] + "}") for r in refs}


def _direct_children(ref: Reference | None, chosen: Sequence[Reference]) -> list[Reference]:
    """The chosen references inside ``ref`` (the whole question when None) with no chosen one in between."""
    inside = [r for r in chosen if ref is None or ref.contains(r)]
    return [r for r in inside if not any(o.contains(r) for o in inside if o is not r)]


def decompose(ctx_or_nlp: Any, query: str) -> list[SubQuery]:
    """Algorithm 5: sub-questions in dependency order, the last one answering the question (``final_answer``).
    A question without references to resolve or coordinated names comes back as itself."""
    text = query.strip()
    if not text:
        return [SubQuery(text=query)]
    doc = parse(ctx_or_nlp, text)
    refs = find_references(doc)
    chosen = resolvable(refs)
    names = {id(r): f"var{i}" for i, r in enumerate(chosen, start=1)}
    out: list[SubQuery] = []
    for ref in chosen:
        inner = _direct_children(ref, chosen)
        out.append(
            SubQuery(
                text=_ref_question(doc, ref, _subs_for(inner, names)),
                target=names[id(ref)],
                depends_on=[names[id(r)] for r in inner],
                kind=ref.kind,
            )
        )
    top = _direct_children(None, chosen)
    top_subs = _subs_for(top, names)
    final_deps = [names[id(r)] for r in top]
    coord = next((c for c in find_coordinations(doc, refs) if not _crosses(c, chosen)), None)
    if coord is not None:
        conjuncts = _split(doc, coord, top_subs, first_var=len(chosen) + 1)
        covered = {v for sq in conjuncts for v in sq.depends_on}
        out.extend(conjuncts)
        final_deps = [sq.target for sq in conjuncts] + [d for d in final_deps if d not in covered]
    final = SubQuery(text=_render(doc, 0, len(doc), top_subs), target=FINAL, depends_on=final_deps, kind="final")
    named = _NAME_OF.match(final.text)
    if named is not None and out and out[-1].target == named.group(1):
        # "What is the name of the band founded by X?": the band's name is the band, not one more hop
        return [*out[:-1], out[-1].model_copy(update={"target": FINAL, "kind": "final"})]
    return [*out, final]


def chain_length(subs: Sequence[SubQuery]) -> int:
    """How many questions a decomposition answers one after another, each from the answer before: the longest
    path of ``depends_on`` through it, counting the references and the final question but not the conjuncts
    of a comparison, which only restate it per side (1 for a question left whole or "Which is older, A or
    B?"; 2 for a comparison whose two sides share a reference resolved first; 3 for "the river of the
    birthplace of X's founder"). A variable no sub-question binds, or a cycle, counts nothing."""
    by_target = {sq.target: sq for sq in subs}
    depth: dict[str, int] = {}

    def of(target: str, seen: frozenset[str]) -> int:
        if target in depth:
            return depth[target]
        sq = by_target.get(target)
        if sq is None or target in seen:
            return 0
        step = 0 if sq.kind == "conjunct" else 1
        depth[target] = step + max((of(d, seen | {target}) for d in sq.depends_on), default=0)
        return depth[target]

    return max((of(sq.target, frozenset()) for sq in subs), default=0)


#: a final question that only asks for the name of what a sub-question found
_NAME_OF = re.compile(r"^(?:what|which)(?:\s+(?:is|was|are|were)|'s)\s+the\s+(?:full\s+)?names?\s+of\s+\{(var\d+)\}\s*\??$", re.IGNORECASE)


def _crosses(coord: Coordination, chosen: Sequence[Reference]) -> bool:
    """A coordination inside (or across) a resolved reference belongs to that reference's sub-question."""
    return any(
        r.start < coord.span[1] and coord.span[0] < r.end and (r.start, r.end) not in (coord.left, coord.right)
        for r in chosen
    )


def _split(doc: Doc, coord: Coordination, subs: Mapping[int, tuple[int, str]], first_var: int) -> list[SubQuery]:
    """One sub-question per conjunct: the question with the coordination replaced by that conjunct alone
    (and "both"/"either"/"neither" dropped)."""
    distributive = {t.i for t in doc if t.lower_ in _DISTRIBUTIVE}
    outside = {k: v for k, v in subs.items() if not (coord.span[0] <= k < coord.span[1])}
    out = []
    for n, (start, end) in enumerate((coord.left, coord.right)):
        part = _render(doc, start, end, subs)
        text = _render(doc, 0, len(doc), {**outside, coord.span[0]: (coord.span[1], part)}, distributive)
        out.append(
            SubQuery(
                text=text,
                target=f"var{first_var + n}",
                depends_on=list(dict.fromkeys(VAR_PATTERN.findall(text))),
                kind="conjunct",
            )
        )
    return out

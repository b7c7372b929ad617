"""Who does what to whom: the arguments of a clause, with their logical roles, read off spaCy's parse.

An n-ary fact (BiG-RAG §4.1.2) lists the entities taking part in it; KAG §2.2's SPO view also says which
part each one plays. This module gives, for every clause head of a parsed sentence (a verb, or the copula
of "X is a Y"), its lemma, its voice and its arguments, each an :class:`Argument` with one of five
*logical* roles, whatever the surface order or voice:

``subject``
    the doer: the ``nsubj`` of an active verb or of a copula. For an active verb this is also its agent:
    the agent role is only given to the ``by``-phrase of a passive, and a reader takes the subject of an
    active verb as its agent.
``object``
    what is acted on: the ``dobj`` of an active verb; the ``nsubjpass`` of a passive ("F was directed by
    A": F is the object).
``agent``
    the ``by``-phrase of a passive ("... by A": A).
``attribute``
    what a copula says the subject is ("X is a composer": "a composer"; "X is famous": "famous"), the
    ``oprd`` of a verb, and an appositive of the subject ("B, a port city, lies ...": "a port city").
``oblique``
    a prepositional phrase of the head (``prep`` "in", text "Calder Bay" for "born in Calder Bay"; the
    prepositions of a copula's adjective, "famous for X", count as the copula's), a ``dative`` ("gave the
    museum a painting": "the museum") and a bare date, time or measure (``npadvmod``: "last year", "rose
    12%").

Clause heads are verbs (or auxiliaries used as main verbs) that are the sentence root or head a
coordinated, complement, adverbial, relative, open-complement (``xcomp``) or participle (``acl``) clause.
Subjects a clause does not state are recovered: a coordinated or adverbial clause, or an ``xcomp``, takes
its governor's ("Voss designed the hall and built it": build's subject is Voss; "agreed to buy": buy's
subject is the one who agreed, or the governor's object when it has one); a participle takes the noun it
modifies, or the copula's subject when that noun is the copula's attribute ("F is a film directed by A":
direct's object is F; a present participle, "a company making lenses", makes the noun its subject); a
relative pronoun stands for its antecedent ("the engineer who designed the bridge": design's subject is
"the engineer"), resolved the same way through a copula ("X is the engineer who ...": X). Coordinated
arguments ("X and Y") each appear once with the same role. A coordinated past form with no subject or
auxiliary of its own under a passive ("was designed by A and completed in 1702") is read as passive too.

Every argument's ``text`` is a verbatim slice of the parsed text (``start``/``end`` character offsets): the
argument's noun phrase without the clauses, appositives and coordinated phrases that hang on it ("the
engineer", not "the engineer who designed the bridge"); for a prepositional phrase, the object of the
preposition without the preposition. ``label`` is the named-entity label of the phrase's root word when it
lies inside a named entity (PERSON, ORG, GPE, DATE, CARDINAL, MONEY, ...), else "".

Entry points: :func:`sentence_clauses` (a parsed sentence: every clause with its lemma, voice, negation and
arguments), :func:`doc_clauses` (a parsed text), :func:`text_clauses` (a raw text, parsed here),
:func:`clause` / :func:`arguments` / :func:`voice` (one head), :func:`format_arguments` (a one-line view).

Not read: nominalised relations ("the director of F"; a reader maps them to verbs itself), a relative
clause without a relative pronoun ("the film X directed": no object), a clausal subject or complement as
an argument (those clauses are heads of their own). Everything is a pure function of the parse: the same parse always gives the same arguments, in the same
order (by start offset, then role). No import from the rest of the package but :mod:`stratagraph.text.nlp`
(its numeric entity labels, and the pipeline :func:`text_clauses` parses a text with).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from stratagraph.text.nlp import NUMERIC_LABELS, load_nlp

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = [
    "ROLES",
    "VOICES",
    "Argument",
    "Clause",
    "Role",
    "Voice",
    "arguments",
    "clause",
    "clause_heads",
    "doc_clauses",
    "format_arguments",
    "is_clause_head",
    "sentence_clauses",
    "text_clauses",
    "voice",
]

Role = Literal["subject", "object", "agent", "attribute", "oblique"]
Voice = Literal["active", "passive", "copula"]
#: the roles, in the order they sort in when two arguments start at the same offset
ROLES: tuple[str, ...] = ("subject", "object", "agent", "attribute", "oblique")
VOICES: tuple[str, ...] = ("active", "passive", "copula")

_ROLE_ORDER = {r: i for i, r in enumerate(ROLES)}
_VERBAL = frozenset({"VERB", "AUX"})
#: dependencies under which a verb heads a clause of its own (besides ROOT and participle ``acl``)
_CLAUSE_DEPS = frozenset({"conj", "ccomp", "advcl", "relcl", "parataxis", "xcomp"})
#: clauses that share their governor's subject when they state none
_INHERITING_DEPS = frozenset({"conj", "advcl", "xcomp"})
_PARTICIPLE_TAGS = frozenset({"VBN", "VBG", "VBD"})  # VBD: a past participle the tagger took for a past tense
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
_ATTRIBUTE_DEPS = frozenset({"attr", "acomp", "oprd"})
_RELATIVE_WORDS = frozenset({"who", "whom", "which", "that"})
#: right-hand dependents that end a noun phrase (what follows is another argument or another clause)
_PHRASE_STOP = frozenset({"relcl", "appos", "conj", "cc", "punct", "advcl", "parataxis"})
_OPENERS = {"(": ")", "[": "]", "{": "}", "“": "”", "‘": "’"}
_BRACKETS = frozenset([*_OPENERS, *_OPENERS.values(), '"'])
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Argument:
    """One argument of a clause head.

    ``role`` is one of :data:`ROLES`; ``text`` the phrase as written, ``text == parsed_text[start:end]``;
    ``prep`` the preposition of an oblique ("in", "for"; "" otherwise); ``label`` the entity label of the
    phrase's root word when it is inside a named entity, else ""; ``root`` the character offset of that
    root word (the head noun: "Bridge" in "the Tarrow Bridge"), which lies in ``[start, end)``.
    """

    role: Role
    text: str
    start: int
    end: int
    prep: str = ""
    label: str = ""
    root: int = 0


@dataclass(frozen=True)
class Clause:
    """A clause head with its arguments: ``head`` is the token index in the parsed ``Doc``, ``start``/``end``
    the head word's character offsets, ``lemma`` its lowercased lemma ("direct", "be"), ``voice`` one of
    :data:`VOICES`, ``negated`` whether the head has a negation ("did not direct"), ``arguments`` sorted
    by start offset, then role."""

    head: int
    start: int
    end: int
    lemma: str
    voice: Voice
    negated: bool
    arguments: tuple[Argument, ...]


# --------------------------------------------------------------------------------------------- heads


def _is_participle(token: Token) -> bool:
    """A verb modifying a noun as a participle ("a film *directed* by A", "a company *making* lenses")."""
    return token.dep_ == "acl" and token.pos_ in _VERBAL and token.tag_ in _PARTICIPLE_TAGS


def is_clause_head(token: Token) -> bool:
    """Whether ``token`` heads a clause here: a verb (or an auxiliary used as the main verb) that is the
    sentence root, heads a coordinated / complement / adverbial / relative / xcomp clause (a coordinated
    verb only when what it is coordinated with is verbal too), or is a participle modifying a noun."""
    if token.pos_ not in _VERBAL:
        return False
    dep = token.dep_
    if dep == "ROOT":
        return True
    if dep == "conj":
        return token.head.pos_ in _VERBAL
    return dep in _CLAUSE_DEPS or _is_participle(token)


def clause_heads(sent: Span | Doc) -> list[Token]:
    """The clause heads of a sentence (or of a whole ``Doc``), in text order."""
    return [t for t in sent if is_clause_head(t)]


def _copula_of(token: Token) -> Token:
    """``token`` itself, or the copula when ``token`` is the attribute of one ("a composer" in "X is a
    composer" stands for "is")."""
    if token.dep_ in _ATTRIBUTE_DEPS and token.head.lemma_ == "be" and token.head.i != token.i:
        return token.head
    return token


def _has_child(token: Token, deps: frozenset[str] | set[str]) -> bool:
    return any(c.dep_ in deps for c in token.children)


def _child(token: Token, dep: str) -> Token | None:
    for c in token.children:
        if c.dep_ == dep:
            return c
    return None


def _own_passive(head: Token) -> bool | None:
    """The voice the head marks itself: True (passive subject or auxiliary), False (an active subject or an
    auxiliary of its own), None (nothing said: a bare participle or a coordinated verb)."""
    deps = {c.dep_ for c in head.children}
    if deps & {"nsubjpass", "auxpass"}:
        return True
    if deps & {"nsubj", "aux", "expl", "csubj"}:
        return False
    return None


def _passive(head: Token, depth: int = 0) -> bool:
    """Whether the head is passive: marked so; a bare past participle modifying a noun or heading an
    adverbial clause ("a film directed by A", "Founded in 1864, the firm ..."); or a coordinated verb that
    shares a passive governor's subject and auxiliary ("was designed by A and completed in 1702") when its
    form can be a past participle (VBN, or a regular -ed past tense) and it has no object."""
    own = _own_passive(head)
    if own is not None:
        return own
    if head.dep_ in {"acl", "advcl"}:
        return head.tag_ in {"VBN", "VBD"} and not _has_child(head, {"dobj"})
    if head.dep_ == "conj" and head.head.pos_ in _VERBAL and depth < _MAX_DEPTH:
        participle = head.tag_ == "VBN" or (head.tag_ == "VBD" and head.lower_.endswith("ed"))
        return participle and not _has_child(head, {"dobj"}) and _passive(head.head, depth + 1)
    return False


def voice(head: Token) -> Voice:
    """``passive`` (:func:`_passive`), ``copula`` (any other form of "be" heading a clause) or ``active``."""
    head = _copula_of(head)
    return _voice(head, _passive(head))


def _voice(head: Token, passive: bool) -> Voice:
    return "passive" if passive else "copula" if head.lemma_ == "be" else "active"


# --------------------------------------------------------------------------------------------- phrases


def _is_relative(token: Token) -> bool:
    """A relative pronoun ("who", "which", "that" as a pronoun)."""
    return token.tag_ in {"WP", "WDT"} or (token.lower_ in _RELATIVE_WORDS and token.pos_ == "PRON")


def _referents(noun: Token) -> list[Token]:
    """What a modified noun stands for: the copula's subject(s) when the noun is the copula's attribute
    ("X is a film directed by A"), the noun an appositive renames, else the noun itself (nothing when the
    "noun" is a verb: a misparse)."""
    if noun.pos_ in _VERBAL:
        return []
    if noun.dep_ == "attr" and noun.head.lemma_ == "be":
        subjects = [c for c in noun.head.children if c.dep_ in _SUBJECT_DEPS and not _is_relative(c)]
        if subjects:
            return subjects
    if noun.dep_ == "appos" and noun.head.i != noun.i:
        return [noun.head]
    return [noun]


def _stops_phrase(child: Token, adjective: bool) -> bool:
    """Whether a right-hand dependent ends the noun phrase before it (clauses, appositives, coordination,
    punctuation; a participle; for an adjective, also its prepositional phrases)."""
    if child.dep_ in _PHRASE_STOP or _is_participle(child):
        return True
    return adjective and child.dep_ == "prep"


def _balance(doc: Doc, lo: int, hi: int) -> tuple[int, int]:
    """Widen tokens [lo, hi] by one on either side when that closes a bracket or a double quote the span
    leaves open (counted on the span's text: a phrase has few characters, a document many tokens)."""
    text = doc[lo : hi + 1].text
    if _BRACKETS.isdisjoint(text):
        return lo, hi
    for opener, closer in _OPENERS.items():
        if text.count(opener) > text.count(closer) and hi + 1 < len(doc) and doc[hi + 1].text == closer:
            hi += 1
        elif text.count(closer) > text.count(opener) and lo > 0 and doc[lo - 1].text == opener:
            lo -= 1
    if text.count('"') % 2 == 1:
        if hi + 1 < len(doc) and doc[hi + 1].text == '"':
            hi += 1
        elif lo > 0 and doc[lo - 1].text == '"':
            lo -= 1
    return lo, hi


def _phrase_bounds(token: Token, *, adjective: bool = False) -> tuple[int, int]:
    """Token indexes [lo, hi] of ``token``'s phrase: its left dependents' subtrees, then its right
    dependents' until the first one that ends the phrase; edge punctuation trimmed, brackets balanced."""
    lo = hi = token.i
    for child in token.lefts:
        if child.dep_ not in {"preconj", "cc", "punct"}:
            lo = min(lo, child.left_edge.i)
    for child in token.rights:
        if _stops_phrase(child, adjective):
            break
        hi = max(hi, child.right_edge.i)
    doc = token.doc
    while lo < token.i and (doc[lo].is_punct or doc[lo].is_space):
        lo += 1
    while hi > token.i and (doc[hi].is_punct or doc[hi].is_space):
        hi -= 1
    return _balance(doc, lo, hi)


def _argument(role: Role, token: Token, prep: str = "", *, adjective: bool = False) -> Argument:
    """The :class:`Argument` of ``role`` whose phrase is rooted at ``token``."""
    lo, hi = _phrase_bounds(token, adjective=adjective)
    span = token.doc[lo : hi + 1]  # its text is the parsed text's [start_char, end_char) (never Doc.text: O(n))
    return Argument(
        role=role,
        text=span.text,
        start=span.start_char,
        end=span.end_char,
        prep=prep,
        label=token.ent_type_,
        root=token.idx,
    )


def _with_conjuncts(token: Token) -> Iterator[Token]:
    """``token`` and the nominal phrases coordinated with it ("X and Y")."""
    yield token
    for c in token.conjuncts:
        if c.pos_ not in _VERBAL:
            yield c


# --------------------------------------------------------------------------------------------- arguments


def _subject_tokens(head: Token, depth: int = 0) -> list[Token]:
    """The words standing for the head's grammatical subject (module docstring): its own, a relative
    pronoun's antecedent, a participle's noun, or the governor's for a clause that states none."""
    for child in head.children:
        if child.dep_ in _SUBJECT_DEPS:
            if head.dep_ == "relcl" and _is_relative(child):
                return _referents(head.head)
            return [child]
    if _is_participle(head):
        return _referents(head.head)
    if head.dep_ in _INHERITING_DEPS and head.head.i != head.i and depth < _MAX_DEPTH:
        governor = head.head
        if not is_clause_head(governor):
            return []
        if head.dep_ == "xcomp":
            obj = _child(governor, "dobj")
            if obj is not None:
                return [obj]
        return _subject_tokens(governor, depth + 1)
    return []


def _resolved(token: Token, head: Token) -> list[Token]:
    """A relative pronoun of a relative clause stands for the antecedent; any other word for itself."""
    if head.dep_ == "relcl" and _is_relative(token):
        return _referents(head.head)
    return [token]


def _prep_object(prep: Token) -> tuple[Token | None, str]:
    """The object of a preposition and the preposition as written ("in"; "because of", "out of" for a
    two-word one, however the parser attached its second word)."""
    pobj = _child(prep, "pobj")
    if pobj is None:
        inner = _child(prep, "prep")
        if inner is None or (pobj := _child(inner, "pobj")) is None:
            return None, ""
        return pobj, f"{prep.lower_} {inner.lower_}"
    words = [prep.lower_]
    words += [c.lower_ for c in prep.children if c.dep_ == "pcomp" and c.pos_ == "ADP" and prep.i < c.i < pobj.i]
    return pobj, " ".join(words)


def _child_arguments(head: Token, passive: bool) -> Iterator[Argument]:
    """Arguments among the head's own dependents: objects, agent, attributes, datives, bare dates and
    measures, prepositional obliques."""
    for child in head.children:
        dep = child.dep_
        if dep == "dobj":
            for tok in _resolved(child, head):
                yield from (_argument("object", t) for t in _with_conjuncts(tok))
        elif dep == "agent" or (dep == "prep" and child.lower_ == "by" and passive):
            pobj, _ = _prep_object(child)
            if pobj is not None:
                for tok in _resolved(pobj, head):
                    yield from (_argument("agent", t) for t in _with_conjuncts(tok))
        elif dep in _ATTRIBUTE_DEPS and not _is_relative(child):
            adjective = dep == "acomp"
            yield from (_argument("attribute", t, adjective=adjective) for t in _with_conjuncts(child))
            if adjective:  # "famous for X": the adjective's obliques are the copula's
                yield from _obliques(child, head, passive)
        elif dep == "dative":
            pobj, prep = _prep_object(child)
            target = pobj if pobj is not None else child
            yield from (_argument("oblique", t, prep) for t in _with_conjuncts(target))
        elif dep == "npadvmod" and child.ent_type_ in NUMERIC_LABELS:
            yield _argument("oblique", child)
    yield from _obliques(head, head, passive)


def _obliques(owner: Token, head: Token, passive: bool) -> Iterator[Argument]:
    """Prepositional phrases under ``owner`` (the head, or a copula's adjective) as obliques of ``head``
    (but a passive head's "by", its agent); a relative pronoun object ("the city in which ...") stands for
    the antecedent."""
    for child in owner.children:
        if child.dep_ != "prep" or (child.lower_ == "by" and owner.i == head.i and passive):
            continue
        pobj, prep = _prep_object(child)
        if pobj is None:
            continue
        for tok in _resolved(pobj, head):
            yield from (_argument("oblique", t, prep) for t in _with_conjuncts(tok))


def _sorted_unique(found: Iterable[Argument]) -> list[Argument]:
    """Arguments once each (same role, prep and span), by start offset, then role, end and prep."""
    unique = {(a.role, a.prep, a.start, a.end): a for a in found}
    return sorted(unique.values(), key=lambda a: (a.start, _ROLE_ORDER.get(a.role, 99), a.end, a.prep))


def arguments(head: Token) -> list[Argument]:
    """The arguments of a clause head (a verb, or the attribute of a copula, which stands for the copula),
    with their logical roles (module docstring), by start offset then role. An empty list for a word that
    is neither a verb nor a copula's attribute."""
    head = _copula_of(head)
    if head.pos_ not in _VERBAL:
        return []
    return _arguments(head, _passive(head))


def _arguments(head: Token, passive: bool) -> list[Argument]:
    """:func:`arguments` of a verbal head whose voice is known: the subject's words (the object's, when
    passive), the subject's appositives, then the head's own dependents."""
    found: list[Argument] = []
    own_subjects = [c for c in head.children if c.dep_ in _SUBJECT_DEPS]
    for tok in _subject_tokens(head):
        found.extend(_argument("object" if passive else "subject", t) for t in _with_conjuncts(tok))
    for subject in own_subjects:  # "B, a port city, lies ...": the appositive describes the subject
        found.extend(_argument("attribute", a) for a in subject.children if a.dep_ == "appos")
    found.extend(_child_arguments(head, passive))
    return _sorted_unique(found)


# --------------------------------------------------------------------------------------------- clauses


def clause(head: Token) -> Clause:
    """The :class:`Clause` of one clause head (see :func:`is_clause_head`; a copula's attribute stands for
    the copula): lemma, voice, negation and arguments."""
    head = _copula_of(head)
    passive = _passive(head)
    return Clause(
        head=head.i,
        start=head.idx,
        end=head.idx + len(head),
        lemma=head.lemma_.lower(),
        voice=_voice(head, passive),
        negated=_has_child(head, {"neg"}),
        arguments=tuple(_arguments(head, passive)) if head.pos_ in _VERBAL else (),
    )


def sentence_clauses(sent: Span | Doc) -> list[Clause]:
    """Every clause head of a parsed sentence with its lemma, voice and arguments, in text order: what
    ingestion stores on a fact and what a reader parsing a sentence at query time reads."""
    return [clause(t) for t in clause_heads(sent)]


def doc_clauses(doc: Doc) -> list[Clause]:
    """:func:`sentence_clauses` over every sentence of a parsed text, in text order."""
    return sentence_clauses(doc)


def text_clauses(text: str) -> list[Clause]:
    """Parse ``text`` with the shared spaCy pipeline (:func:`stratagraph.text.nlp.load_nlp`) and return
    its clauses (:func:`doc_clauses`); offsets are offsets in ``text``."""
    return doc_clauses(load_nlp()(text))


# --------------------------------------------------------------------------------------------- display


def _field(arg: Argument | Mapping[str, Any], name: str) -> str:
    value = arg.get(name, "") if isinstance(arg, Mapping) else getattr(arg, name, "")
    return str(value or "")


def format_arguments(predicate: str, args: Iterable[Argument | Mapping[str, Any]]) -> str:
    """A compact one-line view of a predicate and its arguments for a model or a person to read:
    ``direct(object=Quiet Harbour, agent=Ines Marlow)``; an oblique is keyed by its preposition
    (``bear(object=Aldo Ferrant, in=Calder Bay, in=1871)``), a bare oblique by ``oblique``. Takes
    :class:`Argument` records or their stored form (mappings with ``role``, ``text``, ``prep``)."""
    parts = []
    for arg in args:
        role, prep = _field(arg, "role"), _field(arg, "prep")
        key = prep if role == "oblique" and prep else role
        parts.append(f"{key}={' '.join(_field(arg, 'text').split())}")
    return f"{predicate or '?'}({', '.join(parts)})"

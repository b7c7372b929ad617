"""Following a citation before reading: the question asks about a work through the document that cites it
(CG-RAG §4.2: the inter-document ``CITES`` edge a reference list gives).

"Okonkwo-Hale and colleagues anchored their scaling with the procedure of their reference [2]. What error did
that study report?", "What detection rate did the field study that Vaast and Pilecki cite report?": the
answer is in the *cited* document, and the citing document's own figures, which the question's names pull in,
are exactly the wrong ones. When the question uses citing language (:func:`citing_language`: a form of
"cite", "builds on", or a reference marker "[2]" / "reference 2"):

1. **the citing document** is the stored document with a reference list whose identity (title, authors in
   its metadata or byline, year) holds most of the question's capitalised words, each weighted by how few
   documents hold it (a method's acronym that every paper of the collection writes says nothing); one best
   document, or no hop;
2. **its reference** is the one the question's marker gives, else the one whose entry and citing sentences
   share most of the question's other content words ("the *temperature compensation* study"); one best, or
   no hop;
3. **the cited document** is the target of the citing document's ``CITES`` edges whose title is the
   reference's (normalised titles equal, or token Jaccard at least :data:`SAME_TITLE`). A reference to a work
   that is not stored is a hop with no document: the documents do not say what that work reported;
4. the reader reads the question's asking part (its last sentence when it has several), without the names
   that identify the citing document, over the cited document's chunks (agents/answer.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stratagraph.reading.frame import Frame, frame_of
from stratagraph.reading.words import content_forms, forms, is_stop, word_forms
from stratagraph.retrieval.base import Evidence, RetrievalContext, Scored
from stratagraph.schema import EdgeType, NodeLabel
from stratagraph.text.lexicon import CITING_PHRASES, CITING_VERBS, DOCUMENT_NOUNS
from stratagraph.text.question import last_sentence
from stratagraph.text.titles import fold, normalize_title

__all__ = ["CitationHop", "citing_language", "follow_citation"]

#: token Jaccard of two normalised titles at or above which a reference names a stored document (ours)
SAME_TITLE = 0.6
#: how many characters of a document's first chunk hold its byline (authors, venue, year)
BYLINE_CHARS = 400
#: at most this many of the cited document's chunks are read
MAX_CHUNKS = 40

_CITING = frozenset(f for w in CITING_VERBS for f in forms(w))
_WORKS = "|".join(sorted(DOCUMENT_NOUNS - {"report", "document", "survey"}))  # "the report", "the survey": a source
_EARLIER_WORK = re.compile(rf"\b(?:earlier|prior|previous|older|original)\s+(?:[\w-]+\s+)?(?:{_WORKS})\b|"
                           rf"\b(?:{_WORKS})\s+that\s+(?:first\s+)?(?:proposed|introduced|developed|presented|described)\b",
                           re.IGNORECASE)
_MARKER = re.compile(r"\[(\d{1,3})\]|\breference\s+(?:no\.?\s*|number\s+)?(\d{1,3})\b", re.IGNORECASE)
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*[a-z][\w'’-]*|\b[A-Z]{2,}\b")
_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")


@dataclass(frozen=True)
class CitationHop:
    """A question that asks about a cited work: the citing document, the reference as written, the cited
    document (None when the reference is to a work not stored), and what to read there."""

    citing: str
    citing_title: str
    reference: str
    cited: str | None
    cited_title: str
    frame: Frame
    evidence: tuple[Evidence, ...]
    why: str


def citing_language(question: str) -> bool:
    """Whether the question speaks of what a document cites: a form of "cite", a phrase like "builds on"
    (:data:`~stratagraph.text.lexicon.CITING_PHRASES`), a reference marker ("[2]", "reference 2"), or a work
    told by its place before another ("an *earlier* study", "that *prior* cycle-fade paper", "the paper *that
    proposed* that model")."""
    if _MARKER.search(question) or _EARLIER_WORK.search(question):
        return True
    words = [w.casefold() for w in _TOKEN.findall(question)]
    if any(w in CITING_VERBS for w in words):
        return True
    return any((a, b) in CITING_PHRASES for a, b in zip(words, words[1:], strict=False))


def follow_citation(ctx: RetrievalContext, question: str) -> CitationHop | None:
    """The citation the question follows (module docstring), or None when it follows none this can tell."""
    if not citing_language(question):
        return None
    papers = _papers(ctx)
    citing = _citing_document(question, papers)
    if citing is None:
        return None
    doc = papers[citing]
    ref = _reference(question, doc)
    if ref is None:
        return None
    cited, cited_title = _cited(ctx, citing, ref)
    frame = _reading_frame(question, doc["identity"])
    evidence = tuple(_chunks(ctx, cited, frame)) if cited else ()
    why = (f"{doc['title']!r} cites {ref.get('raw') or ref.get('title')!r}"
           + (f": the stored document {cited_title!r}" if cited else ": a work that is not among the documents"))  # fmt: skip
    return CitationHop(citing, str(doc["title"]), str(ref.get("raw") or ref.get("title") or ""), cited, cited_title,
                       frame, evidence, why)  # fmt: skip


# ------------------------------------------------------------------------------------------ 1. the citing document
def _papers(ctx: RetrievalContext) -> dict[str, dict[str, Any]]:
    """Every stored document with a reference list: its title, references and identity words (title,
    metadata, the byline at the head of its first chunk), once per store generation."""

    def build() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for node in ctx.graph.nodes_by_label(NodeLabel.DOCUMENT):
            refs = node.props.get("references") or []
            if not refs:
                continue
            chunks = ctx.graph.nodes_by_label(NodeLabel.CHUNK, node.id)
            first = min(chunks, key=lambda c: (c.props.get("order") or 0, c.id), default=None)
            byline = str(first.props.get("text") or "")[:BYLINE_CHARS] if first is not None else ""
            meta = node.props.get("metadata") or {}
            said = " ".join([str(node.props.get("title") or ""), _flat(meta), byline])
            out[node.id] = {"title": node.props.get("title") or node.id, "references": refs,
                            "identity": frozenset(fold(t) for t in _TOKEN.findall(said)),
                            "years": frozenset(_YEAR.findall(_flat(meta) + " " + byline))}  # fmt: skip
        return out

    return ctx.cached("citation_hop_papers", build)


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        return " ".join(_flat(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return " ".join(_flat(v) for v in value)
    return str(value)


def _name_words(question: str) -> set[str]:
    """The question's capitalised words and their hyphen-free parts, folded ("Okonkwo-Hale", "GMET")."""
    out = set()
    for w in _CAPITALISED.findall(question):
        word = fold(re.sub(r"['’]s$", "", w).strip("'’"))  # "Lindahl's": Lindahl
        if not is_stop(word):  # "What", "The" at a sentence's start name nothing
            out.add(word)
    return out


def _citing_document(question: str, papers: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The document the question names best (module docstring, step 1)."""
    names = _name_words(question)
    years = set(_YEAR.findall(question))
    held = {w: [d for d, p in papers.items() if w in p["identity"]] for w in names}
    score: dict[str, float] = {}
    for w, docs in held.items():
        if not docs or len(docs) == len(papers) > 1:
            continue
        for d in docs:
            score[d] = score.get(d, 0.0) + math.log(1.0 + len(papers) / len(docs))
    for d in score:
        if years & papers[d]["years"]:
            score[d] += 0.5
    if not score:
        return None
    ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ranked) > 1 and ranked[1][1] >= ranked[0][1]:
        return None  # two documents the question names alike: which one cites is not said
    return ranked[0][0]


# ------------------------------------------------------------------------------------------ 2. its reference
def _reference(question: str, doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The reference the question follows (module docstring, step 2)."""
    refs: list[dict[str, Any]] = list(doc["references"])
    marker = _MARKER.search(question)
    if marker:
        key = marker.group(1) or marker.group(2)
        return next((r for r in refs if str(r.get("key") or "") == key), None)
    asked = {f for w in content_forms(question) for f in w} - doc["identity"]
    asked -= {f for w in DOCUMENT_NOUNS | CITING_VERBS for f in forms(w)}
    scored = []
    for r in refs:
        said = word_forms(" ".join([str(r.get("title") or ""), str(r.get("raw") or "")]))
        scored.append((len(asked & said), r))
    scored.sort(key=lambda p: -p[0])
    if not scored or scored[0][0] == 0 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return scored[0][1]


# ------------------------------------------------------------------------------------------ 3. the cited document
def _cited(ctx: RetrievalContext, citing: str, ref: Mapping[str, Any]) -> tuple[str | None, str]:
    """The stored document the reference names among the citing document's CITES targets, and its title."""
    want = normalize_title(str(ref.get("title") or ""))
    if not want:
        return None, ""
    targets = [e.dst for e in ctx.graph.get_edges(src=citing, types=[EdgeType.CITES])]
    best: tuple[float, str, str] | None = None
    for node in ctx.graph.get_nodes(targets):
        if node.label != NodeLabel.DOCUMENT:
            continue
        title = str(node.props.get("title") or "")
        have = normalize_title(title)
        a, b = set(want.split()), set(have.split())
        sim = 1.0 if have == want else len(a & b) / len(a | b) if a | b else 0.0
        if sim >= SAME_TITLE and (best is None or sim > best[0]):
            best = (sim, node.id, title)
    return (best[1], best[2]) if best else (None, "")


# ------------------------------------------------------------------------------------------ 4. what to read there
def _reading_frame(question: str, identity: frozenset[str]) -> Frame:
    """The frame of the question's asking part, without the names that identify the citing document and the
    citing words that say which document it is ("that *cited* study")."""
    asking = last_sentence(question)
    frame = frame_of(asking if asking.strip() != question.strip() else question)
    names = tuple(n for n in frame.names if not all(fold(t) in identity for t in _TOKEN.findall(n.text)))
    relation = tuple(w for w in frame.relation if not (forms(w) & _CITING))  # "that *cited* study": which document
    return replace(frame, names=names, relation=relation)


def _chunks(ctx: RetrievalContext, doc_id: str, frame: Frame) -> list[Evidence]:
    """The cited document's chunks, those sharing most of the frame's relation words first."""
    asked = {f for w in frame.relation for f in forms(w)}
    nodes = ctx.graph.nodes_by_label(NodeLabel.CHUNK, doc_id)
    order = sorted(nodes, key=lambda n: (-len(asked & word_forms(str(n.props.get("text") or ""))),
                                         n.props.get("order") or 0, n.id))[:MAX_CHUNKS]  # fmt: skip
    return ctx.evidence([Scored(id=n.id, score=1.0 / (1 + i)) for i, n in enumerate(order)])


"""Linking a question to the graph: the entities it names and the pages (documents, sections) whose title
it quotes. Shared by every strategy that starts from query entities (HybridRAG §4.4, BiG-RAG §4.2 entity
path, KAG §2.3 mutual-index lookup, HippoRAG-style PPR seeds).

Three routes, in order of trust:

* exact: every word n-gram of the question whose normalised form is an entity's name or alias key (the
  ``entities`` collection is keyed by name key), or a page title in the store's title index;
  an n-gram inside a longer matched n-gram is dropped ("New York" inside "New York Times");
* mentions: spaCy named entities and proper-noun chunks of the question (numbers, dates and amounts are not
  entities), embedded and matched to entity names by cosine (BiG-RAG's top-k_E similar entities).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, Field

from stratagraph.text.nlp import NUMERIC_LABELS
from stratagraph.retrieval.base import RetrievalContext
from stratagraph.schema import NodeLabel

ENTITY_COLLECTION = "entities"
MAX_NGRAM = 8  # ours: the longest name matched exactly, in words
MAX_TITLE_WORDS = 24  # ours: the longest page title a question can quote (a paper's is often over 8 words)
_WORD = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*", re.UNICODE)
_QUESTION_WORDS = frozenset(
    """what which who whom whose when where why how is are was were do does did the a an of in on for to and or
    by with from at as that this these those be been it its""".split()
)


class Mention(BaseModel):
    text: str
    start: int  # character offsets in the question
    end: int
    label: str = ""  # spaCy label, "PROPN" for a proper-noun chunk, "NGRAM" for an exact n-gram


class LinkedEntity(BaseModel):
    entity_id: str
    name: str
    score: float  # 1.0 for an exact name/alias match, else the cosine of mention and name
    mention: str
    how: Literal["exact", "similar"]


class LinkedPage(BaseModel):
    node_id: str  # a Document or Section
    doc_id: str
    kind: Literal["document", "section"]
    title: str
    mention: str


class QueryLinks(BaseModel):
    mentions: list[Mention] = Field(default_factory=list)
    entities: list[LinkedEntity] = Field(default_factory=list)  # best first, one per entity
    pages: list[LinkedPage] = Field(default_factory=list)

    def entity_weights(self) -> dict[str, float]:
        return {e.entity_id: e.score for e in self.entities}


def _ngrams(
    query: str, max_words: int = MAX_NGRAM, long_starts: frozenset[str] = frozenset()
) -> list[tuple[int, int, str]]:
    """(start, end, text) of every word n-gram (n <= :data:`MAX_NGRAM`, or n <= ``max_words`` from a word
    that can open a longer title: its normalised form, or the next word's after an article, is in
    ``long_starts``) whose first and last words are not weak (a question or function word written in lower
    case, or opening the text), longest first. A capitalised function word inside a name is kept: "Changed
    It", "The Who"."""
    from stratagraph.text.titles import normalize_title

    words = [(m.start(), m.end()) for m in _WORD.finditer(query)]
    texts = [query[a:b] for a, b in words]
    weak = [t.lower() in _QUESTION_WORDS and (i == 0 or not t[:1].isupper()) for i, t in enumerate(texts)]

    def opens_long(i: int) -> bool:
        if not long_starts:
            return False
        first = texts[i + 1] if texts[i].lower() in ("the", "a", "an") and i + 1 < len(texts) else texts[i]
        return (normalize_title(first).split() or [""])[0] in long_starts

    out = []
    for i in range(len(words)):
        if weak[i]:
            continue
        reach = max_words if max_words > MAX_NGRAM and opens_long(i) else MAX_NGRAM
        for j in range(i, min(len(words), i + reach)):
            if not weak[j]:
                out.append((words[i][0], words[j][1], query[words[i][0] : words[j][1]]))
    out.sort(key=lambda t: (-(t[1] - t[0]), t[0]))
    return out


def _names_something(text: str) -> bool:
    """An n-gram that can name an entity: a capitalised word (not the question's first word alone), a
    digit, or an inner capital ("iPhone"); lowercase common words ("island", "team") never link exactly."""
    words = text.split()
    if len(text) < 2:
        return False
    return any(any(ch.isdigit() for ch in w) or any(ch.isupper() for ch in w) for w in words)


def _outside(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return not any(s <= span[0] and span[1] <= e for s, e in taken)


def quoted_pages(
    ctx: RetrievalContext, text: str, exclude_doc: str | None = None, *, question: bool = False
) -> list[LinkedPage]:
    """Pages (documents, sections) whose title ``text`` quotes: the longest matches, generic one-word
    headings skipped, pages of ``exclude_doc`` left out. For a ``question`` the capital of its first word
    does not count as naming something ("Which", "Paris")."""
    index = ctx.title_index()
    pages: list[LinkedPage] = []
    taken: list[tuple[int, int]] = []
    seen: set[str] = set()
    # titles longer than a name are read only from a word that opens one, up to the longest the store has
    # (two words of slack: the n-grams count words as written, the index counts them normalised)
    text = unicodedata.normalize("NFC", text)
    longest = min(MAX_TITLE_WORDS, index.longest_title_words() + 2)
    for start, end, gram in _ngrams(text, longest, index.long_title_starts(MAX_NGRAM)):
        probe = gram[:1].lower() + gram[1:] if question and start == 0 else gram
        if not _names_something(probe) or not _outside((start, end), taken):
            continue
        matches = [m for m in index.lookup(gram) if not m.generic and m.doc_id != exclude_doc]
        if not matches:
            continue
        taken.append((start, end))
        for m in matches:
            if m.node_id not in seen:
                seen.add(m.node_id)
                pages.append(LinkedPage(node_id=m.node_id, doc_id=m.doc_id, kind=m.kind, title=m.title, mention=gram))
    return pages


def mentions(ctx: RetrievalContext, query: str) -> list[Mention]:
    """Named entities and proper-noun chunks of the question (spaCy); numbers and dates are left out."""
    doc = ctx.nlp()(query)
    found: dict[tuple[int, int], Mention] = {}
    for ent in doc.ents:
        if ent.label_ in NUMERIC_LABELS:
            continue
        found[(ent.start_char, ent.end_char)] = Mention(
            text=ent.text, start=ent.start_char, end=ent.end_char, label=ent.label_
        )
    for chunk in doc.noun_chunks:
        toks = [t for t in chunk if t.pos_ in ("PROPN", "NOUN", "ADJ", "NUM") and not t.is_stop]
        if not any(t.pos_ == "PROPN" for t in toks):
            continue
        start, end = toks[0].idx, toks[-1].idx + len(toks[-1].text)
        if (start, end) not in found:
            found[(start, end)] = Mention(text=query[start:end], start=start, end=end, label="PROPN")
    return sorted(found.values(), key=lambda m: (m.start, -m.end))


def link_query(
    ctx: RetrievalContext,
    query: str,
    top_k: int = 5,
    min_score: float | None = None,
    similar: bool = True,
) -> QueryLinks:
    """Entities and pages the question names (see the module docstring); ``top_k`` similar entities per
    mention at cosine >= ``min_score`` (None: the embedding model's entity-link floor,
    :func:`~stratagraph.retrieval.calibration.cosine_floors`)."""
    from stratagraph.text.names import entity_key
    from stratagraph.retrieval.calibration import cosine_floors

    if min_score is None:
        min_score = cosine_floors(ctx).entity_link

    grams = _ngrams(query)
    keys: dict[str, tuple[int, int, str]] = {}
    for start, end, text in grams:
        if not _names_something(text if start > 0 else text[:1].lower() + text[1:]):
            continue
        key = entity_key(text)
        if key and key not in keys:
            keys[key] = (start, end, text)
    rows = ctx.vectors.get_metadata(ENTITY_COLLECTION, list(keys)) if keys else {}
    # exact names: longest n-gram first, a match inside a longer match is dropped
    taken: list[tuple[int, int]] = []
    exact: dict[str, LinkedEntity] = {}
    for key, (start, end, text) in sorted(keys.items(), key=lambda kv: (-(kv[1][1] - kv[1][0]), kv[1][0])):
        meta = rows.get(key)
        if not meta or not _outside((start, end), taken):
            continue
        eid = str(meta.get("entity_id") or f"ent:{key}")
        taken.append((start, end))
        exact.setdefault(eid, LinkedEntity(entity_id=eid, name=str(meta.get("name") or text), score=1.0, mention=text, how="exact"))
    # pages whose title the question quotes
    pages = quoted_pages(ctx, query, question=True)
    ments = mentions(ctx, query)
    linked = dict(exact)
    if similar and ments:
        texts = [m.text for m in ments]
        ctx.query_vectors([query, *texts])  # the question's own vector rides along in the same model call
        hits_per = ctx.vectors.query_many(ENTITY_COLLECTION, ctx.query_vectors(texts), k=top_k)
        good = [(ment, hit) for ment, hits in zip(ments, hits_per, strict=True) for hit in hits if hit.score >= min_score]
        unknown = sorted({hit.id for _m, hit in good if hit.id not in rows})
        if unknown:
            rows = {**rows, **ctx.vectors.get_metadata(ENTITY_COLLECTION, unknown)}
        for ment, hit in good:
            eid = str((rows.get(hit.id) or {}).get("entity_id") or f"ent:{hit.id}")
            prev = linked.get(eid)
            if prev is None or (prev.how == "similar" and prev.score < hit.score):  # an exact link stays exact
                linked[eid] = LinkedEntity(
                    entity_id=eid, name=hit.id, score=round(hit.score, 6), mention=ment.text, how="similar"
                )
    # names of similar matches: the entity's display name
    missing = [e for e in linked.values() if e.how == "similar"]
    if missing:
        nodes = {n.id: n for n in ctx.graph.get_nodes([e.entity_id for e in missing])}
        for e in missing:
            node = nodes.get(e.entity_id)
            if node is None or node.label != NodeLabel.ENTITY:
                linked.pop(e.entity_id, None)
                continue
            e.name = str(node.props.get("name") or e.name)
    entities = sorted(linked.values(), key=lambda e: (-e.score, e.entity_id))
    return QueryLinks(mentions=ments, entities=entities, pages=pages)


def describe(links: QueryLinks) -> dict[str, Any]:
    """A JSON-friendly summary for a result's ``context``."""
    return {
        "entities": [e.model_dump() for e in links.entities],
        "pages": [p.model_dump() for p in links.pages],
    }

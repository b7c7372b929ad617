"""The concept layer of one document (KAG §2.1 LLMFriSPG, §2.4 knowledge alignment, Table 2).

From a document's resolved entities this builds

* ``Concept`` nodes, id ``concept:<key>`` (:func:`~stratagraph.text.kinds.concept_key`: "port city"),
  props ``name`` and ``description`` (derived from ``by_doc``: the first document's, by id, that has one);
* ``BELONGS_TO`` entity -> concept, the entity's semantic type: the kinds the text gives it
  (:mod:`stratagraph.text.kinds`: copula attribute, apposition, introducing noun; or a chat model's,
  ``ingest/concept_llm.py``), and for a table row's line item the class its table's first column heading,
  caption or section heading names (a column heading as it stands, "Department"; a caption or section
  heading only as a plural noun phrase, "Capital projects", since "Police" over a table of costs is no class
  of its rows);
* ``IS_A`` concept -> concept: the head of a multi-word kind ("film composer" IS_A "composer", "chamber
  music festival" IS_A "music festival" IS_A "festival"), the first kind-sense hypernyms of an installed
  WordNet up two levels ("composer" IS_A "musician" IS_A "artist"; :mod:`stratagraph.text.wordnet`), and
  a chat model's hypernyms;
* ``SYNONYM`` between two concepts of the document that share a WordNet sense or that a chat model calls
  synonyms, and between two entities of the document fused by :func:`synonym_pairs` (KAG §2.4's first
  alignment strategy: their one-hop neighbourhoods and descriptions agree, not only their names).

Every node and edge carries this document as provenance and nothing on a shared edge depends on the
document (weight 1, no props), so deleting or re-ingesting a document leaves no orphan and the export is the
same whatever the order of writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from stratagraph.ingest.extractors.base import ChunkExtraction
from stratagraph.ingest.resolution import STRONG_TYPES, DocumentEntities, may_merge
from stratagraph.schema import BY_DOC, ChunkRecord, Edge, EdgeType, Node, NodeLabel, Outline
from stratagraph.text.amounts import is_total_label
from stratagraph.text.kinds import concept_key, head_of, heading_concept
from stratagraph.text.lexicon import WEAK_COLUMN_HEADINGS
from stratagraph.text.wordnet import WordNet

__all__ = ["ConceptHints", "concept_id", "concept_records", "synonym_pairs", "line_item_kinds"]

CONCEPT_PREFIX = "concept:"
#: IS_A levels read from WordNet above a word
WORDNET_DEPTH = 2


def concept_id(key: str) -> str:
    return CONCEPT_PREFIX + key


@dataclass
class ConceptHints:
    """What a chat model adds (``ingest/concept_llm.py``): kinds per entity id, and per concept key its
    hypernyms, synonyms and description."""

    kinds: dict[str, list[str]] = field(default_factory=dict)
    hypernyms: dict[str, list[str]] = field(default_factory=dict)
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)


def _plural_head(text: str) -> bool:
    words = text.split()
    return bool(words) and words[-1].lower().endswith("s") and not words[-1].lower().endswith("ss")


def line_item_kinds(
    outline: Outline, chunks: Sequence[ChunkRecord], extractions: Sequence[ChunkExtraction], entities: DocumentEntities
) -> dict[str, set[str]]:
    """Entity key -> the class a table row's line item belongs to (see the module docstring)."""
    by_chunk = {c.id: c for c in chunks}
    section = {s.id: s for s in outline.sections}
    out: dict[str, set[str]] = {}
    for ex in extractions:
        chunk = by_chunk.get(ex.chunk_id)
        if chunk is None or chunk.kind != "table" or chunk.table is None:
            continue
        kind = None
        first = chunk.table.header[0].strip() if chunk.table.header else ""
        if first and first.lower() not in WEAK_COLUMN_HEADINGS:
            kind = heading_concept(first)
        for text in (chunk.table.caption or "", section[chunk.section_id].title if chunk.section_id in section else ""):
            if kind is None and text and _plural_head(text.split(" by ")[0].split(" for ")[0].split(" in ")[0]):
                kind = heading_concept(text)
        if not kind:
            continue
        keys = entities.key_of.get(ex.chunk_id, {})
        for ent in ex.entities:
            if ent.line_item and ent.name in keys and not is_total_label(ent.name):
                out.setdefault(keys[ent.name], set()).add(kind)
    return out


def concept_records(
    doc_id: str,
    entities: DocumentEntities,
    entity_of: Mapping[str, str],
    *,
    item_kinds: Mapping[str, set[str]] | None = None,
    wordnet: WordNet | None = None,
    hints: ConceptHints | None = None,
    synonyms: Sequence[tuple[str, str]] = (),
) -> tuple[list[Node], list[Edge]]:
    """Concept nodes and BELONGS_TO / IS_A / SYNONYM edges of one document (module docstring).
    ``synonyms`` are entity-id pairs fused by :func:`synonym_pairs`."""
    hints = hints or ConceptHints()
    belongs: set[tuple[str, str]] = set()
    for key, contrib in entities.contributions.items():
        eid = entity_of.get(key)
        if eid is None:
            continue
        kinds = set(contrib.kinds) | set((item_kinds or {}).get(key, ())) | set(hints.kinds.get(eid, ()))
        for kind in kinds:
            k = concept_key(kind)
            if k:
                belongs.add((eid, k))
    concepts = {k for _, k in belongs}
    is_a: set[tuple[str, str]] = set()
    same: set[tuple[str, str]] = set()
    todo = sorted(concepts)
    seen = set(todo)
    while todo:  # every concept's parents, and theirs
        key = todo.pop()
        parents: list[str] = []
        head = head_of(key)
        if head:
            parents.append(head)
        parents += [concept_key(h) for h in hints.hypernyms.get(key, ())]
        for parent in parents:
            parent = concept_key(parent)
            if parent and parent != key:
                is_a.add((key, parent))
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
    if wordnet is not None:  # WordNet's hypernyms above the words the text used (and their heads)
        for key in sorted(seen):
            chain = wordnet.hypernyms(key, WORDNET_DEPTH)
            for child, parent in zip([key, *chain], chain, strict=False):
                if child != parent:
                    is_a.add((concept_key(child), concept_key(parent)))
        seen |= {k for pair in is_a for k in pair}
        for key in sorted(seen):
            for other in wordnet.synonyms(key):
                if concept_key(other) in seen and concept_key(other) != key:
                    same.add(tuple(sorted((key, concept_key(other)))))  # type: ignore[arg-type]
    for key, others in hints.synonyms.items():
        for other in others:
            o = concept_key(other)
            if o and o != key:
                seen |= {key, o}
                same.add(tuple(sorted((key, o))))  # type: ignore[arg-type]
    nodes = []
    for key in sorted(seen):
        description = hints.descriptions.get(key) or (wordnet.gloss(key) if wordnet is not None else "")
        props = {"name": key, BY_DOC: {doc_id: {"description": description}}}
        nodes.append(Node(id=concept_id(key), label=NodeLabel.CONCEPT, doc_ids=[doc_id], props=props))
    edges = [Edge(type=EdgeType.BELONGS_TO, src=e, dst=concept_id(k), doc_ids=[doc_id]) for e, k in sorted(belongs)]
    edges += [Edge(type=EdgeType.IS_A, src=concept_id(a), dst=concept_id(b), doc_ids=[doc_id]) for a, b in sorted(is_a)]
    edges += [
        Edge(type=EdgeType.SYNONYM, src=concept_id(a), dst=concept_id(b), doc_ids=[doc_id]) for a, b in sorted(same)
    ]
    edges += [Edge(type=EdgeType.SYNONYM, src=a, dst=b, doc_ids=[doc_id]) for a, b in sorted(set(synonyms))]
    return nodes, edges


# ------------------------------------------------------------------------------------------ synonym fusion


def _words(text: str) -> set[str]:
    return {w for w in "".join(ch.lower() if ch.isalnum() else " " for ch in text).split() if len(w) > 2}


def neighbourhoods(extractions: Sequence[ChunkExtraction], entities: DocumentEntities) -> dict[str, set[str]]:
    """Entity key -> the keys it shares a fact or a triple with in the document (its one-hop neighbours)."""
    out: dict[str, set[str]] = {}
    for ex in extractions:
        keys = entities.key_of.get(ex.chunk_id, {})
        groups = [[keys[n] for n in f.entities if n in keys] for f in ex.facts]
        groups += [[keys[r.subject], keys[r.object]] for r in ex.relations if r.subject in keys and r.object in keys]
        for group in groups:
            for a in group:
                out.setdefault(a, set()).update(b for b in group if b != a)
    return out


def synonym_pairs(
    extractions: Sequence[ChunkExtraction],
    entities: DocumentEntities,
    entity_of: Mapping[str, str],
    vectors: Mapping[str, np.ndarray],
    name_floor: float,
) -> list[tuple[str, str, str, str]]:
    """KAG §2.4's semantic alignment of one document's entities: two named entities (never line items) that
    are still apart after resolution fuse when (1) :func:`~stratagraph.ingest.resolution.may_merge`
    allows it (the guards that keep "Q3 revenue" and "Q4 revenue" apart), neither name is the other
    joined to a third by "and", and :func:`_same_kind_of_name` holds (one strong type, the shorter name a
    start or end of the longer), (2) their name vectors' cosine
    is at least ``name_floor``, (3) their one-hop neighbourhoods agree (they share a neighbour, and the
    shared ones are at least half of the smaller neighbourhood), and (4) their descriptions agree (they
    share a content word, or one names the other); a name that would fuse with two others fuses with none.
    Returns ``(key_a, key_b, entity_a, entity_b)`` with
    ``entity_a < entity_b``, sorted."""
    hood = neighbourhoods(extractions, entities)
    keys = sorted(k for k in entities.contributions if "@" not in k and k in entity_of and k in vectors)
    # _same_kind_of_name first wants one strong type on both sides: only keys of the same such type can pair
    # (the checks below are one conjunction of pure tests, so their order changes nothing but the cost)
    by_type: dict[str, list[str]] = {}
    for k in keys:
        t = _top_type(entities.contributions[k].types)
        if t in STRONG_TYPES - {"NORP"}:
            by_type.setdefault(t, []).append(k)
    found: list[tuple[str, str]] = []
    for group in by_type.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if entity_of[a] == entity_of[b] or not _same_kind_of_name(a, b, entities) or not may_merge(a, b):
                    continue
                if {"and", "&"} & (set(a.split()) ^ set(b.split())):  # "Pellham and Cardinal Home Supply" is two
                    continue
                if float(vectors[a] @ vectors[b]) < name_floor:
                    continue
                na, nb = hood.get(a, set()) - {b}, hood.get(b, set()) - {a}
                shared = {entity_of.get(x, x) for x in na} & {entity_of.get(x, x) for x in nb}
                if not shared or len(shared) * 2 < min(len(na), len(nb)):
                    continue
                da, db = entities.contributions[a].description, entities.contributions[b].description
                if not (_words(da) & _words(db) or a in da.lower() or b in db.lower()):
                    continue
                found.append((a, b))
    out: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for a, b in sorted(found):  # the order of all keys' pairs: the first pair of two entities speaks for them
        ea, eb = entity_of[a], entity_of[b]
        pair = (ea, eb) if ea < eb else (eb, ea)
        out.setdefault(pair, (a, b, *pair))
    # a name that would fuse with two others is ambiguous ("Wallop" beside "Coulson Wallop" and "John Wallop")
    partners: dict[str, set[str]] = {}
    for a, b, _, _ in out.values():
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    return [out[p] for p in sorted(out) if len(partners[out[p][0]]) == 1 and len(partners[out[p][1]]) == 1]


def _top_type(types: Mapping[str, int]) -> str:
    return min(types, key=lambda t: (-types[t], t)) if types else ""


def _same_kind_of_name(a: str, b: str, entities: DocumentEntities) -> bool:
    """Two names that may stand for one thing: the same named-entity type, a strong one (not a nationality),
    in this document ("Ohio" the state and "Ohio Supreme Court" the court are not one; "Croatia" and
    "Croatian" neither), and the shorter name as written a whole-word start or end of the longer ("Ozzy" / "Ozzy Osbourne", "Genz" / "Henrik
    Ruben Genz") that is not the place after an "of" ("Mary of Burgundy" is no Burgundy)."""
    ca, cb = entities.contributions[a], entities.contributions[b]
    ta, tb = _top_type(ca.types), _top_type(cb.types)
    if ta != tb or ta not in STRONG_TYPES - {"NORP"}:  # "Welsh", "Italian": adjectives of nationality
        return False
    # the names as written: "Saxe-Coburg-Eisenach" is one word, not "Saxe-Coburg" and one more
    words_a = _top_type(ca.names).casefold().split()
    words_b = _top_type(cb.names).casefold().split()
    short, long_ = sorted((words_a, words_b), key=len)
    n = len(short)
    if n == len(long_):
        return False
    if long_[:n] == short:
        return True
    return long_[-n:] == short and "of" not in long_[:-n]


def fuse_aliases(entities: DocumentEntities, pairs: Sequence[tuple[str, str, str, str]]) -> None:
    """The fused names become aliases: each key of a pair gets the other's name (no votes: never its name)."""
    for a, b, _, _ in pairs:
        ca, cb = entities.contributions[a], entities.contributions[b]
        name_a = min(ca.names, key=lambda n: (-ca.names[n], n))
        name_b = min(cb.names, key=lambda n: (-cb.names[n], n))
        ca.names.setdefault(name_b, 0)
        cb.names.setdefault(name_a, 0)

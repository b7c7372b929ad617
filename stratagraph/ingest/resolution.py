"""Entity resolution (BiG-RAG §4.1.3, Alg. 2 line 10): which mentions stand for the same entity.

Three steps, cheapest first:

1. **Canonical form, per document.** A name's key is its normalised spelling (:func:`entity_key`: accents
   and case folded, a leading article, a possessive and a company suffix dropped). Acronyms the document
   defines ("Federal Reserve (Fed)", "the Fed (Federal Reserve)") map to the long form's key
   (:func:`acronym_map`), and "coreference light" (HybridRAG §2.2) maps "we", "our" and "the company" to
   the company named in the document's metadata.
2. **Section scope** (BAG-RAG §3.1, linking instance nodes): an instance that stands for a line item
   ("Personnel" under Police and under Parks) is keyed within its lowest-level section, so identical line
   items merge inside a section and never across sections.
3. **Embedding merge across the whole store.** Keys of named entities are compared by the cosine of their
   name vectors, only within blocks of keys that share a rare token (near-linear cost), and merged at
   ``settings.entity_merge_threshold`` (0.90, as in the paper) unless a guard forbids it
   (:func:`may_merge`: different numbers, different named-entity types, or different specific words on
   both sides, so "Q3 revenue" / "Q4 revenue" and "Parks personnel" / "Police personnel" stay apart).

Clusters are single-link over all keys ever stored, and each cluster's node id is that of its best key
(:func:`_rank`), so the graph is the same whatever order documents arrive in: when a new key outranks an
existing entity's, the existing node is folded into the new id (``GraphStore.merge_nodes``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stratagraph.ingest.extractors.base import ChunkExtraction, ExtractedEntity
from stratagraph.text.names import clean_name, entity_key  # shared with retrieval; importable from here too
from stratagraph.text.titles import fold

#: spaCy's named-entity labels: two different ones never merge
STRONG_TYPES = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)
#: labels that say only "a name-like phrase" (the parser's guess, not a named-entity type)
WEAK_TYPES = frozenset({"THING", "PROPN", "ITEM", "LINE_ITEM"})
#: metadata fields that name the company a document speaks for ("we", "the company")
COMPANY_FIELDS = ("company", "organization", "organisation", "issuer", "corporation")

_STOP = frozenset(
    "a an the of and or for in on at to by with from as is are was were be de la le du der die das".split()
)
# a pointer into the document ("Section 2.4", "Table 3"), not a thing: never an entity
_STRUCTURAL = re.compile(r"^(?:section|sections|chapter|appendix|table|figure|fig|part|page|pp?)(?:\s+(?:\d+|[ivxlc]+|[a-z]))+$")
_GENERATION = frozenset({"jr", "sr", "junior", "senior", "ii", "iii", "iv", "elder", "younger"})
_COREF_NAMES = frozenset({"we", "us", "our", "ours", "ourselves", "the company", "company"})

# "Long Name (ABBR)" and "ABBR (Long Name)"
_PAREN = re.compile(r"((?:[A-Z][\w&.'’-]*\s+){0,7}[A-Z][\w&.'’-]*)\s+\(([^()]{1,80})\)")


def entity_id(key: str) -> str:
    return f"ent:{key}"


def scoped_key(key: str, section_id: str) -> str:
    """A line item's key within its lowest-level section (BAG-RAG §3.1)."""
    return f"{key}@{section_id}"


def _initials(words: Sequence[str]) -> str:
    return "".join(w[0] for w in words if w and w[0].isalpha()).casefold()


def is_acronym_of(short: str, long: str) -> bool:
    """True when ``short`` abbreviates ``long``: the initials of its significant words ("FOMC" for
    "Federal Open Market Committee", "EIA" for "Energy Information Administration"), or a prefix of its
    first word written as a name ("Fed" for "Federal Reserve")."""
    short = short.strip().strip(".")
    if not (2 <= len(short) <= 10) or " " in short or not short[0].isupper():
        return False
    words = [w for w in re.split(r"[\s-]+", long.strip()) if w]
    if len(words) < 2:
        return False
    significant = [w for w in words if w.casefold() not in _STOP]
    letters = re.sub(r"[^A-Za-z]", "", short).casefold()
    if not letters:
        return False
    if letters in (_initials(significant), _initials(words)):
        return True
    return len(letters) >= 3 and not short.isupper() and fold(words[0]).startswith(letters)


def acronym_map(texts: Iterable[str]) -> dict[str, str]:
    """Keys of the acronyms the texts define, mapped to the key of their long form."""
    out: dict[str, str] = {}
    for text in texts:
        for m in _PAREN.finditer(text):
            before, inside = m.group(1).strip(), m.group(2).strip()
            words = before.split()
            # Long Name (ABBR): the shortest run of words right before the bracket that the acronym fits
            long_form = next(
                (" ".join(words[-take:]) for take in range(2, len(words) + 1) if is_acronym_of(inside, " ".join(words[-take:]))),
                None,
            )
            if long_form:
                out.setdefault(entity_key(inside), entity_key(long_form))
            elif len(words) == 1 and is_acronym_of(words[0], inside):  # ABBR (Long Name)
                out.setdefault(entity_key(words[0]), entity_key(inside))
    return {k: v for k, v in out.items() if k and v and k != v}


def expand_acronyms(key: str, acronyms: Mapping[str, str]) -> str:
    """A key with every acronym the document defines written out ("fy2025 cip" -> "fy2025 capital
    improvement program" when the text says "Capital Improvement Program (CIP)")."""
    if key in acronyms:
        return acronyms[key]
    words = key.split()
    if len(words) > 1 and any(w in acronyms for w in words):
        return " ".join(acronyms.get(w, w) for w in words)
    return key


def document_company(metadata: Mapping[str, Any]) -> str | None:
    for field_name in COMPANY_FIELDS:
        value = metadata.get(field_name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# ------------------------------------------------------------------------------------ per document


@dataclass
class Contribution:
    """What one document says about one entity key (stored under the entity's ``by_doc``)."""

    names: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    description: str = ""
    kinds: dict[str, int] = field(default_factory=dict)  # semantic types the text gives it (ingest/concepts.py)

    def add(
        self, name: str, type_: str, description: str = "", votes: int = 1, kinds: Sequence[str] = ()
    ) -> None:
        """One mention; ``votes`` 0 keeps the spelling as an alias without letting it become the name."""
        self.names[name] = self.names.get(name, 0) + votes
        self.types[type_] = self.types.get(type_, 0) + 1
        for kind in kinds:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if description and not self.description:
            self.description = description[:400]


@dataclass
class DocumentEntities:
    """One document's entity mentions resolved to keys: ``key_of[chunk_id][name]`` for every entity name
    of every chunk extraction (names that resolve to nothing, such as "we" without a company, are absent)."""

    key_of: dict[str, dict[str, str]]
    contributions: dict[str, Contribution]


def resolve_document(
    metadata: Mapping[str, Any],
    extractions: Sequence[ChunkExtraction],
    section_of: Mapping[str, str],
    texts: Iterable[str] = (),
) -> DocumentEntities:
    """Steps 1 and 2 for one document. ``section_of`` maps chunk id -> section id; ``texts`` are the
    document's chunk texts, scanned for acronym definitions."""
    acronyms = acronym_map(texts)
    company = document_company(metadata)
    company_key = entity_key(company) if company else ""
    key_of: dict[str, dict[str, str]] = {}
    contributions: dict[str, Contribution] = defaultdict(Contribution)
    # a capitalised word the parser took for a name ("Overtime falls by $230 thousand") is the line item
    # of the same name when its section has one (BAG-RAG §3.1: one instance per lowest heading)
    items = {
        (section_of.get(ex.chunk_id, ""), entity_key(e.name))
        for ex in extractions
        for e in ex.entities
        if e.line_item
    }
    for ex in extractions:
        keys: dict[str, str] = {}
        first_fact = {}
        for fact in ex.facts:
            for name in fact.entities:
                first_fact.setdefault(name, fact.description)
        for ent in ex.entities:
            section = section_of.get(ex.chunk_id, "")
            if not ent.line_item and ent.type in WEAK_TYPES and (section, entity_key(ent.name)) in items:
                ent = ent.model_copy(update={"line_item": True})
            resolved = _resolve(ent, acronyms, company, company_key, section)
            if resolved is None:
                continue
            key, name, type_ = resolved
            keys[ent.name] = key
            # an acronym written out ("CH" -> county hospital) names the entity by its long form
            votes = 0 if entity_key(name) != key.split("@", 1)[0] else 1
            contributions[key].add(name, type_, ent.description or first_fact.get(ent.name, ""), votes, ent.kinds)
        key_of[ex.chunk_id] = keys
    return DocumentEntities(key_of=key_of, contributions=dict(contributions))


def _resolve(
    ent: ExtractedEntity, acronyms: Mapping[str, str], company: str | None, company_key: str, section_id: str
) -> tuple[str, str, str] | None:
    if ent.coref or fold(ent.name).strip() in _COREF_NAMES:
        if not company_key:
            return None
        return company_key, company or ent.name, "ORG"
    key = entity_key(ent.name)
    if not key or _STRUCTURAL.match(key):
        return None
    name = clean_name(ent.name)
    if not ent.line_item and len(name) <= 3 and name.islower():  # "al" of "et al.", not "UK" or "3M"
        return None
    key = expand_acronyms(key, acronyms)
    if ent.line_item:
        return scoped_key(key, section_id), name, ent.type
    return key, name, ent.type


# ------------------------------------------------------------------------------------ across the store


def _tokens(key: str) -> list[str]:
    return key.split("@", 1)[0].split()


def _close_words(a: str, b: str) -> bool:
    """One word abbreviates the other, or they differ by one edit (long words only)."""
    if a.startswith(b) or b.startswith(a):
        return min(len(a), len(b)) >= 2
    if min(len(a), len(b)) < 5 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def may_merge(key_a: str, key_b: str, type_a: str = "", type_b: str = "") -> bool:
    """Guards that hold whatever the embeddings say: no merge across line-item scopes, across different
    numbers ("Q3 revenue" / "Q4 revenue"), across two different named-entity types, or when each name has
    a specific word the other lacks and neither abbreviates the other ("Parks personnel" / "Police
    personnel", "John Smith" / "Jane Smith")."""
    if "@" in key_a or "@" in key_b:
        return key_a == key_b
    if set(re.findall(r"\d+", key_a)) != set(re.findall(r"\d+", key_b)):
        return False
    if type_a in STRONG_TYPES and type_b in STRONG_TYPES and type_a != type_b:
        return False
    if _GENERATION & (set(_tokens(key_a)) ^ set(_tokens(key_b))):  # "Gustaf Molander" / "Gustaf Molander Jr"
        return False
    a, b = set(_tokens(key_a)) - _STOP, set(_tokens(key_b)) - _STOP
    only_a, only_b = a - b, b - a
    if only_a and only_b:
        return all(any(_close_words(x, y) for y in only_b) for x in only_a) or all(
            any(_close_words(y, x) for x in only_a) for y in only_b
        )
    return True


def _rank(key: str) -> tuple[int, int, str]:
    """Order of preference for a cluster's id: more words, then longer, then alphabetical."""
    return (-len(_tokens(key)), -len(key), key)


@dataclass
class KeyInfo:
    name: str
    type: str
    vector: np.ndarray | None
    entity_id: str | None = None  # for keys already stored: the entity they belong to
    mergeable: bool = True  # False for line items (keyed within their section)


@dataclass
class Resolution:
    entity_of: dict[str, str]  # key -> entity id, for every key given
    merges: dict[str, list[str]]  # target entity id -> existing entity ids folded into it


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def block_tokens(key: str) -> list[str]:
    return [t for t in _tokens(key) if t not in _STOP and len(t) >= 2]


def cluster_keys(
    new: Mapping[str, KeyInfo],
    existing: Mapping[str, KeyInfo],
    threshold: float,
    max_block: int = 200,
) -> Resolution:
    """Step 3: cluster the run's new keys with the stored ones. ``existing`` holds stored keys that share
    a block token with a new key (with their entity ids); keys in both maps count as stored.

    Candidate pairs share a token that at most ``max_block`` keys have (a token as common as "city" says
    nothing); each pair is merged when its name vectors' cosine is at least ``threshold`` and
    :func:`may_merge` allows it. Stored clusters stay whole: their keys are united through their entity."""
    uf = _UnionFind()
    info: dict[str, KeyInfo] = {**new, **existing}
    for key, ki in existing.items():
        uf.find(key)
        if ki.entity_id:
            uf.union(key, "\x00" + ki.entity_id)
    blocks: dict[str, list[str]] = defaultdict(list)
    for key in sorted(info):
        if info[key].mergeable:
            for tok in set(block_tokens(key)):
                blocks[tok].append(key)
    fresh = {k for k in new if k not in existing}
    seen: set[tuple[str, str]] = set()
    pairs: list[tuple[str, str]] = []
    for tok in sorted(blocks):
        members = blocks[tok]
        if len(members) < 2 or len(members) > max_block:
            continue
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if (a in fresh or b in fresh) and (a, b) not in seen:
                    seen.add((a, b))
                    pairs.append((a, b))
    for a, b in pairs:
        va, vb = info[a].vector, info[b].vector
        if va is None or vb is None or float(va @ vb) < threshold:
            continue
        # types are not passed: a key's type depends on which documents mention it, and a merge decided
        # by anything but the two names would make the graph depend on the order documents arrive in
        if may_merge(a, b):
            uf.union(a, b)
    for key in new:
        uf.find(key)
    clusters: dict[str, list[str]] = defaultdict(list)
    for key in list(uf.parent):
        clusters[uf.find(key)].append(key)
    entity_of: dict[str, str] = {}
    merges: dict[str, list[str]] = {}
    for keys in clusters.values():
        keys = [k for k in keys if not k.startswith("\x00")]
        if not keys:
            continue
        owners = {info[k].entity_id for k in keys if info[k].entity_id}
        # a stored entity's id is its best key, which may not be among the keys passed in
        best = min([*keys, *(o.removeprefix("ent:") for o in owners)], key=_rank)
        target = entity_id(best)
        stored = sorted(owners - {target})
        if stored:
            merges[target] = stored
        for k in keys:
            entity_of[k] = target
    return Resolution(entity_of={k: entity_of[k] for k in new}, merges=merges)

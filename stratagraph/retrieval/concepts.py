"""Entities of a kind, through the concept layer (KAG §2.4, Figure 6): "which composer", "what river".

:func:`entities_of_kind` normalises the noun (lower case, the last word singular; spaCy's lemma when the
spelling rule leaves a plural such as "people"), then reads

1. the entities that BELONG_TO that concept;
2. when none do, those of its descendants through IS_A (a question about "musicians" finds the entities
   typed "composer" when "composer" IS_A "musician"), nearest level first;
3. a concept SYNONYM of the noun's counts as the noun itself.

It reads only the graph store's neighbourhood reads (cost follows the concepts asked about), so it works on
every backend; a :class:`~stratagraph.retrieval.index.GraphIndex` or anything else with a ``store`` attribute
may be passed instead of the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from stratagraph.graph_store.base import GraphStore
from stratagraph.schema import EdgeType
from stratagraph.text.kinds import concept_key

__all__ = ["CONCEPT_PREFIX", "KindMatch", "entities_of_kind", "normalise_kind"]

CONCEPT_PREFIX = "concept:"
#: IS_A levels below the noun searched when nothing belongs to it directly
MAX_DEPTH = 4


@dataclass(frozen=True)
class KindMatch:
    """An entity of the kind asked: its id and name, the concept it BELONGS_TO and how many IS_A steps below
    the noun that concept is (0: the noun's own concept or a synonym of it)."""

    entity_id: str
    name: str
    concept: str
    depth: int
    mentions: int


def _store(store_or_index: Any) -> GraphStore:
    if isinstance(store_or_index, GraphStore):
        return store_or_index
    store = getattr(store_or_index, "store", None)
    if isinstance(store, GraphStore):
        return store
    raise TypeError(f"need a GraphStore or an object with a .store GraphStore, not {type(store_or_index).__name__}")


def normalise_kind(noun: str) -> list[str]:
    """The concept keys a noun may stand for (:func:`_kind_keys`, parsed once per noun)."""
    return list(_kind_keys(noun))


@lru_cache(maxsize=1024)
def _kind_keys(noun: str) -> tuple[str, ...]:
    """The concept keys a noun may stand for: its spelling rule's singular, and spaCy's lemma of its last
    word when that differs ("people" -> person; "cities" -> city), without articles."""
    words = [w for w in noun.strip().lower().split() if w not in {"a", "an", "the", "which", "what"}]
    if not words:
        return ()
    keys = [concept_key(" ".join(words))]
    try:
        from stratagraph.text.nlp import load_nlp

        lemma = load_nlp()(words[-1])[0].lemma_.lower()
        if lemma and lemma.isalpha():
            keys.append(concept_key(" ".join([*words[:-1], lemma])))
    except Exception:  # noqa: BLE001 - no parser: the spelling rule alone
        pass
    return tuple(k for k in dict.fromkeys(keys) if k)


def entities_of_kind(store_or_index: Any, noun: str, limit: int = 20) -> list[KindMatch]:
    """Entities of the kind ``noun`` names (module docstring), most mentioned first within each IS_A level,
    then by id; at most ``limit``."""
    store = _store(store_or_index)
    start = [CONCEPT_PREFIX + k for k in normalise_kind(noun)]
    if not start or limit <= 0:
        return []
    level = set(start)
    for row in store.neighbourhood(sorted(level), [EdgeType.SYNONYM], "both"):
        if row.other.startswith(CONCEPT_PREFIX):
            level.add(row.other)
    seen = set(level)
    out: list[KindMatch] = []
    depth = 0
    while level and depth <= MAX_DEPTH and len(out) < limit:
        members = [r for r in store.neighbourhood(sorted(level), [EdgeType.BELONGS_TO], "in")]
        if members:
            nodes = {n.id: n for n in store.get_nodes(sorted({r.other for r in members}))}
            found: dict[str, KindMatch] = {}
            for r in members:
                node = nodes.get(r.other)
                if node is None or r.other in found:
                    continue
                found[r.other] = KindMatch(
                    entity_id=node.id,
                    name=str(node.props.get("name", node.id)),
                    concept=r.node.removeprefix(CONCEPT_PREFIX),
                    depth=depth,
                    mentions=int(node.props.get("mentions", 0) or 0),
                )
            taken = {m.entity_id for m in out}
            out += sorted((m for m in found.values() if m.entity_id not in taken), key=lambda m: (-m.mentions, m.entity_id))
            if depth == 0 and out:
                break  # the noun's own concept answers: its descendants are not needed
        below = {r.other for r in store.neighbourhood(sorted(level), [EdgeType.IS_A], "in")} - seen
        seen |= below
        level = below
        depth += 1
    return out[:limit]

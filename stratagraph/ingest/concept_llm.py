"""The concept layer with a chat model (KAG §2.4): semantic types, hypernyms and synonyms, asked in batches.

Used by the ingest step ``resolve`` when the LLM extractor is in use. Two prompts, both through
:func:`stratagraph.llm.ask_structured` (output format negotiated per endpoint, replies cached in the store's
LLM database exactly as extraction's are, so a re-ingest sends nothing):

* ``concept_types`` (system sent verbatim, user ``str.format``-ed): a document's named entities, at most
  :data:`BATCH` per request, each with its coarse type and the description the document gives it;
  the reply lists each entity's semantic types.
* ``concept_relations``: the concepts of that document (the types just given and those the text rules
  found), :data:`BATCH` per request; the reply gives each concept a description, hypernyms and synonyms.

Batches are made per document and in sorted order, so a document's requests (and their cache keys) do not
depend on which other documents share the run. A reply that stays unusable after the correction leaves
that batch without hints (the text rules still apply); an unreachable endpoint raises
:class:`~stratagraph.llm.LLMUnavailable` as extraction does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.config import Settings
from stratagraph.ingest.concepts import ConceptHints
from stratagraph.ingest.resolution import DocumentEntities
from stratagraph.llm import LLMCache, ask_structured, get_chat_model
from stratagraph.prompts import load_prompt
from stratagraph.text.kinds import concept_key

__all__ = ["BATCH", "ConceptTyper"]

log = logging.getLogger(__name__)

#: entities or concepts per request
BATCH = 20


class EntityTypes(BaseModel):
    name: str
    types: list[str] = Field(default_factory=list)


class TypesReply(BaseModel):
    entities: list[EntityTypes] = Field(default_factory=list)


class ConceptLinks(BaseModel):
    name: str
    description: str = ""
    hypernyms: list[str] = Field(default_factory=list)
    synonyms: list[str] = Field(default_factory=list)


class RelationsReply(BaseModel):
    concepts: list[ConceptLinks] = Field(default_factory=list)


def _line(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


class ConceptTyper:
    """Asks the chat model for semantic types, hypernyms and synonyms (module docstring)."""

    def __init__(self, chat_model: Any, cache: LLMCache | None = None, *, owns_cache: bool = False) -> None:
        self.chat_model = chat_model
        self.cache = cache
        self._owns_cache = owns_cache and cache is not None
        self.requests = 0  # batches asked (cache hits included)

    @classmethod
    def from_settings(cls, settings: Settings, chat_model: Any = None) -> ConceptTyper:
        model = chat_model if chat_model is not None else get_chat_model(settings)
        if model is None:
            raise ValueError("the concept typer needs a chat model (STRATAGRAPH_LLM_MODEL and OPENAI_BASE_URL)")
        return cls(model, LLMCache.from_settings(settings) if settings.llm_cache else None, owns_cache=True)

    def __enter__(self) -> ConceptTyper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def _ask(self, schema: type[BaseModel], prompt: str, values: dict[str, str], what: str) -> Any:
        self.requests += 1
        messages = [SystemMessage(content=load_prompt(f"{prompt}.system")), HumanMessage(
            content=load_prompt(f"{prompt}.user").format(**values))]  # fmt: skip
        return ask_structured(self.chat_model, schema, messages, store=self.cache, name=schema.__name__, what=what).value

    def document_hints(
        self, doc_id: str, title: str, entities: DocumentEntities, entity_of: dict[str, str]
    ) -> ConceptHints:
        """One document's hints: its named entities' types, then its concepts' links."""
        hints = ConceptHints()
        rows = sorted(
            (min(c.names, key=lambda n: (-c.names[n], n)), key, c)
            for key, c in entities.contributions.items()
            if "@" not in key and key in entity_of and c.names
        )
        by_name = {name: key for name, key, _ in rows}
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            lines = "\n".join(
                f"{_line(n)} | {min(c.types, key=lambda t: (-c.types[t], t)) if c.types else 'THING'} | {_line(c.description)[:300]}"
                for n, _, c in batch
            )
            reply = self._ask(TypesReply, "concept_types", {"title": _line(title), "entities": lines},
                              f"semantic types of {len(batch)} entities of document {doc_id}")  # fmt: skip
            for item in reply.entities if reply is not None else []:
                key = by_name.get(item.name.strip())
                kinds = [k for k in (concept_key(t) for t in item.types[:3]) if k]
                if key is not None and kinds:
                    hints.kinds.setdefault(entity_of[key], []).extend(kinds)
        concepts = sorted({k for ks in hints.kinds.values() for k in ks} | {
            concept_key(k) for c in entities.contributions.values() for k in c.kinds})  # fmt: skip
        for start in range(0, len(concepts), BATCH):
            batch = concepts[start : start + BATCH]
            reply = self._ask(RelationsReply, "concept_relations", {"concepts": "\n".join(batch)},
                              f"links of {len(batch)} concepts of document {doc_id}")  # fmt: skip
            wanted = set(batch)
            for item in reply.concepts if reply is not None else []:
                key = concept_key(item.name)
                if key not in wanted:
                    continue
                hints.hypernyms[key] = [h for h in (concept_key(x) for x in item.hypernyms[:2]) if h and h != key]
                hints.synonyms[key] = [s for s in (concept_key(x) for x in item.synonyms[:3]) if s and s != key]
                if item.description.strip():
                    hints.descriptions[key] = " ".join(item.description.split())[:300]
        return hints

    def hints(
        self, docs: Sequence[tuple[str, str, DocumentEntities]], entity_of: dict[str, str]
    ) -> dict[str, ConceptHints]:
        """Per document id, :meth:`document_hints`."""
        return {doc_id: self.document_hints(doc_id, title, ents, entity_of) for doc_id, title, ents in docs}

"""What an extractor returns, and the interface both extractors implement.

An extractor reads the text chunks of documents and returns, per chunk, the entities it mentions, the n-ary
facts it states (BiG-RAG §4.1.2: a description, a type, a confidence, and the entities taking part) and the
binary relations (subject, predicate, object) that HybridRAG's GraphRAG view uses. Everything is plain
data: ids, entity resolution and graph edges are made later by the ingest pipeline, which also handles
table chunks itself (``ingest/quantities.py``) so numbers never depend on the extractor.

Two implementations: :class:`~stratagraph.ingest.extractors.spacy_nlp.SpacyExtractor` (the default, no
LLM) and :class:`~stratagraph.ingest.extractors.llm.LLMExtractor` (when a chat model is configured).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from stratagraph.text.amounts import Quantity




class ExtractedEntity(BaseModel):
    """One entity a chunk mentions. ``type`` is an NER-style label (PERSON, ORG, GPE, DATE, ...; spaCy's
    labels for the spaCy extractor, free text for the LLM). ``confidence`` in [0, 1]. ``start``/``end`` are
    character offsets of one mention in the chunk text when known. ``line_item`` marks a common-noun
    instance such as a budget line ("Personnel", "Overtime"): BAG-RAG §3.1 keeps those apart across
    different lowest-level sections. ``coref`` marks a stand-in ("we", "our", "the company") that the
    resolver maps to the document's company when its metadata names one, and drops otherwise. ``kinds`` are
    the semantic types the text gives the entity (KAG §2.4: "A is a composer" -> "composer"), in the normal
    form of :func:`stratagraph.text.kinds.concept_key`; the ingest pipeline makes them Concept nodes."""

    name: str
    type: str = "THING"
    description: str = ""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    start: int | None = None
    end: int | None = None
    line_item: bool = False
    coref: bool = False
    kinds: list[str] = Field(default_factory=list)


class FactArgument(BaseModel):
    """One argument of a fact with the role it plays (KAG §2.2's subject / predicate / object, for BiG-RAG
    §4.1.2's n-ary facts), as :mod:`stratagraph.text.roles` reads it off the parse.

    ``predicate`` is the lemma of the verb the argument belongs to: the fact's own head, or a verb inside
    the same clause ("Quiet Harbour is a drama directed by Ines Marlow": ``be`` has subject Quiet Harbour,
    ``direct`` has object Quiet Harbour and agent Ines Marlow). ``role`` is one of
    :data:`stratagraph.text.roles.ROLES` (subject, object, agent, attribute, oblique); ``text`` the phrase as
    written, ``start``/``end`` its character offsets in the text of the chunk the fact was read from
    (``chunk_text[start:end] == text``); ``prep`` the preposition of an oblique ("" otherwise); ``label``
    the entity label of the phrase's root word when it is inside a named entity ("" otherwise);
    ``entity`` the name, as the fact's ``entities`` list it, of the entity whose mention holds that root
    word ("" when none)."""

    model_config = ConfigDict(frozen=True)

    predicate: str
    role: str
    text: str
    start: int
    end: int
    prep: str = ""
    label: str = ""
    entity: str = ""


class ExtractedFact(BaseModel):
    """An n-ary fact (BiG-RAG relation node): ``description`` is the clause or knowledge segment, ``type``
    the lemma of its main verb (spaCy) or a short label (LLM), ``confidence`` in [0, 1]. ``entities`` are
    names of entities in the same :class:`ChunkExtraction` (each also listed in its ``entities``).
    ``attributes`` keeps dates and other values that are not entities ({"date": "March 2024"}).
    ``start``/``end`` are the character offsets of the clause in the chunk text when known.
    ``predicate`` is the lemma of the clause's head verb ("" when the fact has no parsed verb head, as for
    table rows and LLM facts not found in the chunk text) and ``arguments`` its arguments and those of the
    verbs inside the clause, with their roles, by start offset, then role (:class:`FactArgument`)."""

    description: str
    type: str = "state"
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    entities: list[str] = Field(default_factory=list)
    quantities: list[Quantity] = Field(default_factory=list)
    attributes: dict[str, str] = Field(default_factory=dict)
    start: int | None = None
    end: int | None = None
    predicate: str = ""
    arguments: list[FactArgument] = Field(default_factory=list)


class ExtractedRelation(BaseModel):
    """A binary triple (subject, predicate, object) between two entity names of the same chunk."""

    subject: str
    predicate: str
    object: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class ChunkExtraction(BaseModel):
    chunk_id: str
    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)


class ChunkInput(BaseModel):
    """One text chunk as extractors see it."""

    chunk_id: str
    text: str
    context: str = ""  # the previous chunk's last sentences (BAG-RAG eq. 2, sen(i-1))
    section_id: str
    section_title: str = ""
    heading_path: list[str] = Field(default_factory=list)


class DocumentInput(BaseModel):
    """A document's text chunks in reading order, with what the extractor may use around them."""

    doc_id: str
    title: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    chunks: list[ChunkInput]


class Extractor(ABC):
    """Turns documents' chunks into :class:`ChunkExtraction` records (one per chunk, in input order)."""

    #: a short name that goes into the settings fingerprint: changing extractor changes content hashes
    name: str = "extractor"

    @abstractmethod
    def extract(self, documents: Sequence[DocumentInput]) -> list[list[ChunkExtraction]]:
        """One list per document, one ChunkExtraction per chunk, in the order given."""

    def prepare(self, n_texts: int) -> None:  # noqa: B027 - optional hook
        """A hint that about ``n_texts`` chunks will come to :meth:`extract` soon: start, without waiting,
        what takes time to start (worker processes, models), so it overlaps the caller's own work."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the extractor holds (thread pools, caches)."""

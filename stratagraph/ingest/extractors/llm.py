"""N-ary knowledge extraction with a chat model (BiG-RAG §4.1.2, KAG §2.2.2 entity descriptions, BAG-RAG eq. 2).

For each text chunk the model is asked, with the prompts ``extract_facts.system`` (sent verbatim) and
``extract_facts.user`` (``str.format``-ed), for

* facts: knowledge segments, each a self-contained sentence with a verb-like type, a confidence 0-10, the
  entities taking part and attributes (dates live here, never as entities);
* entities: name, type, a one-sentence description of what the entity is, confidence 0-100, line-item flag;
* relations: binary (subject, predicate, object) triples among those entities, confidence 0-10.

The model is not asked for argument roles: a fact whose description reproduces sentences of the chunk gets
their predicate and arguments (subject, object, agent, attribute, oblique) from spaCy's parse of the chunk
(:mod:`stratagraph.ingest.extractors.arguments`), as the spaCy extractor's facts do; any other fact none.

The user prompt carries the document title, the chunk's heading path, the facts extracted from the previous
chunk of the same document (``tri(i-1)`` of BAG-RAG eq. 2) and the previous chunk's last sentences
(``chunk.context``, ``sen(i-1)``), marked as context not to be extracted again. Chunks of one document are
therefore done in order; documents run concurrently on ``settings.llm_concurrency`` threads, which is the
limit on requests in flight.

Structured output goes through :func:`stratagraph.llm.ask_structured`, shared with every agent node: the
output format is negotiated per endpoint (``json_schema`` strict, else ``json_object`` with the schema in the
prompt, else plain text with the JSON read out of the reply, remembered in the store's LLM database), the reply
is read tolerantly (:func:`parse_reply`) and validated here with pydantic, and the raw reply text is what the
cache stores. A reply that is not usable JSON of that shape is asked for once more with a short correction
note; if that fails too the chunk gets an empty :class:`ChunkExtraction` and a warning naming it and the
problem. Only usable replies are cached, so a re-run retries what failed. A cache hit sends no request.
``outcomes`` counts chunks answered on the first try, after the correction, from the cache, and left empty.

Endpoint failures (unreachable, time-outs, 401/403/404, a request the server rejects, 429/5xx after the
client's retries) raise :class:`~stratagraph.llm.LLMUnavailable`; the extraction stops and the ingest run
fails cleanly.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from functools import cache
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, field_validator

from stratagraph.ingest.extractors.arguments import with_arguments
from stratagraph.ingest.extractors.base import (
    ChunkExtraction,
    ChunkInput,
    DocumentInput,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelation,
    Extractor,
    Quantity,
)
from stratagraph.llm import (
    InputTooLong,
    LLMCache,
    LLMUsage,
    MalformedReply,
    ask_structured,
    get_chat_model,
    model_name,
    read_json_object,
    strict_json_schema,
    validate_reply,
)
from stratagraph.prompts import load_prompt

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from stratagraph.config import Settings

__all__ = [
    "LLMAttribute",
    "LLMEntity",
    "LLMExtraction",
    "LLMExtractor",
    "LLMFact",
    "LLMRelation",
    "MalformedReply",
    "extraction_json_schema",
    "parse_reply",
]

logger = logging.getLogger(__name__)

SCHEMA_NAME = "LLMExtraction"
FACT_CONFIDENCE_SCALE = 10.0
ENTITY_CONFIDENCE_SCALE = 100.0
RELATION_CONFIDENCE_SCALE = 10.0
_NONE = "(none)"


# --------------------------------------------------------------------------------------------- schema
class LLMAttribute(BaseModel):
    """A value qualifying a fact that is not an entity, such as its date."""

    name: str = Field(description="what the value is: date, period, location, status, ...")
    value: str = Field(description="the value as written in the text")


def _none_to(default: float, value: Any) -> Any:
    return default if value is None or value == "" else value


class LLMFact(BaseModel):
    """One knowledge segment as the model writes it (confidence on a 0-10 scale)."""

    description: str = Field(description="one complete, self-contained sentence; numbers verbatim")
    type: str = Field(default="state", description="short lowercase verb-like label, e.g. allocate, acquire")
    confidence: float = Field(default=FACT_CONFIDENCE_SCALE, description="0 (doubtful) to 10 (stated verbatim)")
    entities: list[str] = Field(default_factory=list, description="names of the entities taking part")
    attributes: list[LLMAttribute] = Field(default_factory=list, description="dates and other non-entity values")

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> Any:
        return _none_to(FACT_CONFIDENCE_SCALE, v)

    @field_validator("entities", mode="before")
    @classmethod
    def _entity_names(cls, v: Any) -> Any:
        # weak models sometimes repeat whole entity objects here: keep their names
        if isinstance(v, list):
            return [item.get("name", "") if isinstance(item, dict) else item for item in v]
        return v

    @field_validator("attributes", mode="before")
    @classmethod
    def _attribute_pairs(cls, v: Any) -> Any:
        # accept {"date": "March 2024"} as well as [{"name": "date", "value": "March 2024"}]
        if isinstance(v, dict):
            return [{"name": str(k), "value": "" if val is None else str(val)} for k, val in v.items()]
        return v


class LLMEntity(BaseModel):
    """One entity as the model writes it (confidence on a 0-100 scale)."""

    name: str = Field(description="the fullest name the text uses")
    type: str = Field(default="THING", description="short uppercase label: PERSON, ORG, LOCATION, PRODUCT, ...")
    description: str = Field(default="", description="one sentence saying what the entity is")
    confidence: float = Field(default=ENTITY_CONFIDENCE_SCALE, description="0 to 100")
    line_item: bool = Field(default=False, description="true for a generic budget or table line ('Personnel')")

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> Any:
        return _none_to(ENTITY_CONFIDENCE_SCALE, v)

    @field_validator("description", "type", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return "" if v is None else v


class LLMRelation(BaseModel):
    """One binary relation between two entity names (confidence on a 0-10 scale)."""

    subject: str
    predicate: str = Field(description="short lowercase verb phrase, e.g. headquartered_in")
    object: str
    confidence: float = Field(default=RELATION_CONFIDENCE_SCALE, description="0 to 10")

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> Any:
        return _none_to(RELATION_CONFIDENCE_SCALE, v)


class LLMExtraction(BaseModel):
    """The whole reply for one chunk: facts, entities and relations."""

    facts: list[LLMFact] = Field(default_factory=list)
    entities: list[LLMEntity] = Field(default_factory=list)
    relations: list[LLMRelation] = Field(default_factory=list)


@cache
def _schema_json() -> str:
    return json.dumps(strict_json_schema(LLMExtraction.model_json_schema()), sort_keys=True)


def extraction_json_schema() -> dict[str, Any]:
    """The strict JSON schema of :class:`LLMExtraction` that requests send (a fresh copy)."""
    return json.loads(_schema_json())


# --------------------------------------------------------------------------------------------- parsing
def parse_reply(text: str) -> LLMExtraction:
    """The :class:`LLMExtraction` in a reply text (:func:`stratagraph.llm.read_json_object`: a code fence,
    prose or a ``<think>`` block around the object do not matter, JSON5 is accepted; then the schema).
    Raises :class:`~stratagraph.llm.MalformedReply` saying why it is unusable."""
    return validate_reply(LLMExtraction, read_json_object(text))


# --------------------------------------------------------------------------------------------- normalising
_WS = re.compile(r"\s+")
_NUMBERISH = re.compile(r"^[\s\d.,%$€£¥+\-()/:]+$")
_DATE_TYPES = {"DATE", "TIME", "YEAR", "PERIOD"}
_COMPANY_STAND_INS = {
    "we", "us", "our", "ours", "the company", "the firm", "the group", "the organization", "the organisation",
}  # fmt: skip
_OTHER_PRONOUNS = {"i", "me", "my", "you", "your", "he", "him", "his", "she", "her", "it", "its", "they", "them",
                   "their", "this", "that", "these", "those"}  # fmt: skip


def _clean(text: str) -> str:
    return _WS.sub(" ", text or "").strip().strip("\"'`").strip()


def _label(text: str, default: str) -> str:
    cleaned = _clean(text).replace(" ", "_")
    return cleaned or default


def _scaled(value: float, scale: float) -> float:
    if not math.isfinite(value):
        return 1.0
    return min(1.0, max(0.0, value / scale))


def _offsets(text: str, name: str) -> tuple[int | None, int | None]:
    """Character offsets of the first mention of ``name`` in ``text`` (exact case first, then any case)."""
    pos = text.find(name)
    if pos >= 0:
        return pos, pos + len(name)
    match = re.search(re.escape(name), text, re.IGNORECASE)
    return (match.start(), match.end()) if match else (None, None)


def _quantities(description: str, section_id: str) -> list[Quantity]:
    # imported here: ingest/quantities.py is a separate module that this one must not need at import time
    from stratagraph.ingest.quantities import parse_quantities

    return parse_quantities(description, section_id=section_id)


def to_chunk_extraction(parsed: LLMExtraction, chunk: ChunkInput) -> ChunkExtraction:
    """The model's reply as the extractor's :class:`ChunkExtraction` for ``chunk``.

    Confidences become [0, 1] (fact and relation /10, entity /100, clamped). Names are trimmed and matched
    case-insensitively (first spelling wins; duplicate entities merge). Entities typed as dates, or that are
    bare numbers, are not entities: a date becomes the ``date`` attribute of the facts naming it, a number is
    already in the fact's description. Other pronouns are dropped; company stand-ins ("we", "the company")
    are kept and marked ``coref``. Every name a fact or relation uses that is missing from the entities is
    added as a ``THING`` with that fact's or relation's confidence. Quantities are parsed from each fact's
    description with the chunk's section id. A fact whose description reproduces chunk sentences (found in
    the chunk text, case and spacing aside) gets their predicate and arguments with roles, parsed by spaCy
    (:func:`~stratagraph.ingest.extractors.arguments.with_arguments`); any other fact gets none.
    """
    entities: dict[str, ExtractedEntity] = {}
    dates: dict[str, str] = {}
    dropped: set[str] = set()

    def add_entity(name: str, type_: str, description: str, confidence: float, line_item: bool) -> None:
        key = name.casefold()
        if type_ in _DATE_TYPES:
            dates.setdefault(key, name)
            return
        if key in _OTHER_PRONOUNS or _NUMBERISH.match(name):
            dropped.add(key)
            return
        known = entities.get(key)
        if known is None:
            start, end = _offsets(chunk.text, name)
            entities[key] = ExtractedEntity(
                name=name, type=type_, description=description, confidence=confidence, start=start, end=end,
                line_item=line_item, coref=key in _COMPANY_STAND_INS,
            )  # fmt: skip
            return
        entities[key] = known.model_copy(
            update={
                "type": known.type if known.type != "THING" else type_,
                "description": known.description or description,
                "confidence": max(known.confidence, confidence),
                "line_item": known.line_item or line_item,
            }
        )

    for e in parsed.entities:
        name = _clean(e.name)
        if name:
            add_entity(
                name, _label(e.type, "THING").upper(), _clean(e.description),
                _scaled(e.confidence, ENTITY_CONFIDENCE_SCALE), e.line_item,
            )  # fmt: skip

    def is_entity(raw: str) -> bool:
        """False for what is not an entity: blanks, dates, bare numbers and pronouns."""
        name = _clean(raw)
        key = name.casefold()
        return bool(name) and not (key in dates or key in dropped or key in _OTHER_PRONOUNS or _NUMBERISH.match(name))

    def entity_name(raw: str, confidence: float) -> str | None:
        """The canonical name for ``raw``, adding a THING entity when unknown; None when it is no entity."""
        name = _clean(raw)
        key = name.casefold()
        if not name or key in dates or key in dropped:
            return None
        if key not in entities:
            add_entity(name, "THING", "", confidence, False)
        known = entities.get(key)
        return known.name if known is not None else None

    facts: list[ExtractedFact] = []
    for f in parsed.facts:
        description = _clean(f.description)
        if not description:
            continue
        confidence = _scaled(f.confidence, FACT_CONFIDENCE_SCALE)
        attributes: dict[str, str] = {}
        for attr in f.attributes:
            key, value = _clean(attr.name).lower().replace(" ", "_"), _clean(attr.value)
            if key and value:
                attributes[key] = value if key not in attributes else f"{attributes[key]}; {value}"
        names: list[str] = []
        for raw in f.entities:
            date = dates.get(_clean(raw).casefold())
            if date is not None:
                if date not in attributes.get("date", "").split("; "):
                    attributes["date"] = f"{attributes['date']}; {date}" if "date" in attributes else date
                continue
            name = entity_name(raw, confidence)
            if name is not None and name not in names:
                names.append(name)
        facts.append(
            ExtractedFact(
                description=description,
                type=_label(f.type, "state").lower(),
                confidence=confidence,
                entities=names,
                quantities=_quantities(description, chunk.section_id),
                attributes=attributes,
            )
        )

    relations: dict[tuple[str, str, str], ExtractedRelation] = {}
    for r in parsed.relations:
        predicate = _label(r.predicate, "").lower()
        if not predicate or not is_entity(r.subject) or not is_entity(r.object):
            continue  # checked first: a relation that is dropped adds no entity either
        if _clean(r.subject).casefold() == _clean(r.object).casefold():
            continue
        confidence = _scaled(r.confidence, RELATION_CONFIDENCE_SCALE)
        subject, obj = entity_name(r.subject, confidence), entity_name(r.object, confidence)
        if subject is None or obj is None:
            continue
        triple = (subject, predicate, obj)
        known_rel = relations.get(triple)
        if known_rel is None or known_rel.confidence < confidence:
            relations[triple] = ExtractedRelation(
                subject=subject, predicate=predicate, object=obj, confidence=confidence
            )

    return ChunkExtraction(
        chunk_id=chunk.chunk_id,
        entities=list(entities.values()),
        facts=with_arguments(facts, chunk.text),
        relations=list(relations.values()),
    )


# --------------------------------------------------------------------------------------------- extractor
class LLMExtractor(Extractor):
    """Entities, n-ary facts and relations from a chat model (see the module docstring for the protocol).

    ``chat_model`` is any LangChain chat model; for ``ChatOpenAI`` the request asks for strict JSON-schema
    output. ``cache`` (optional) is consulted before every request and receives every usable reply; the
    caller owns it unless ``owns_cache`` is set (as :meth:`from_settings` does). ``requests`` counts the requests
    sent (cache hits send none; the client's own retries are not counted separately).
    """

    def __init__(
        self, chat_model: BaseChatModel, settings: Settings, cache: LLMCache | None = None, *, owns_cache: bool = False
    ) -> None:
        self.chat_model = chat_model
        self.settings = settings
        self.cache = cache
        self.model = model_name(chat_model)
        self.name = f"llm:{self.model}"
        self.usage = LLMUsage()
        self.outcomes = {"first_try": 0, "corrected": 0, "empty": 0, "cached": 0, "too_long": 0}
        self._owns_cache = owns_cache and cache is not None
        self._lock = threading.Lock()

    @property
    def requests(self) -> int:
        """Requests sent so far (cache hits send none; every attempt of the client's retries counts)."""
        return self.usage.llm_calls

    @classmethod
    def from_settings(cls, settings: Settings, chat_model: BaseChatModel | None = None) -> LLMExtractor:
        """The extractor for ``chat_model`` (default: the one ``settings`` configure), with the store's reply
        cache when ``settings.llm_cache`` is on (closed by :meth:`close`). Raises ValueError when there is
        no chat model."""
        chat_model = chat_model if chat_model is not None else get_chat_model(settings)
        if chat_model is None:
            raise ValueError(
                "the LLM extractor needs a chat model: set STRATAGRAPH_LLM_MODEL and OPENAI_BASE_URL "
                "(a local OpenAI-compatible server) or OPENAI_API_KEY"
            )
        cache = LLMCache.from_settings(settings) if settings.llm_cache else None
        return cls(chat_model, settings, cache, owns_cache=True)

    # ---------------------------------------------------------------- documents
    def extract(self, documents: Sequence[DocumentInput]) -> list[list[ChunkExtraction]]:
        """One list per document, one :class:`ChunkExtraction` per chunk, in input order.

        Documents run concurrently on ``settings.llm_concurrency`` threads; a document's chunks run in order.
        On :class:`~stratagraph.llm.LLMUnavailable` (or any other unexpected error) the other documents stop
        before their next chunk, and the error is raised.
        """
        docs = list(documents)
        abort = threading.Event()
        workers = min(self.settings.llm_concurrency, len(docs))
        if workers <= 1:
            return [self._extract_document(doc, abort) for doc in docs]
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stratagraph-llm")
        try:
            futures: list[Future[list[ChunkExtraction]]] = [
                pool.submit(self._extract_document, doc, abort) for doc in docs
            ]
            wait(futures, return_when=FIRST_EXCEPTION)
            for future in futures:
                if future.done() and future.exception() is not None:
                    raise future.exception()  # type: ignore[misc]
            return [future.result() for future in futures]
        except BaseException:
            abort.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _extract_document(self, doc: DocumentInput, abort: threading.Event) -> list[ChunkExtraction]:
        out: list[ChunkExtraction] = []
        previous_facts: list[str] = []
        for chunk in doc.chunks:
            if abort.is_set():
                break
            extraction = self.extract_chunk(doc, chunk, previous_facts)
            out.append(extraction)
            previous_facts = [fact.description for fact in extraction.facts]
        return out

    # ---------------------------------------------------------------- one chunk
    def build_messages(
        self, doc: DocumentInput, chunk: ChunkInput, previous_facts: Sequence[str]
    ) -> list[BaseMessage]:
        """The system and user messages for ``chunk``: title, heading path, the previous chunk's facts and
        sentences as context (BAG-RAG eq. 2), then the chunk text."""
        heading = " > ".join(h for h in chunk.heading_path if h) or chunk.section_title
        user = load_prompt("extract_facts.user").format(
            title=doc.title.strip() or _NONE,
            heading_path=heading.strip() or _NONE,
            previous_facts="\n".join(f"- {fact}" for fact in previous_facts) or _NONE,
            previous_sentences=chunk.context.strip() or _NONE,
            text=chunk.text.strip(),
        )
        return [SystemMessage(content=load_prompt("extract_facts.system")), HumanMessage(content=user)]

    def extract_chunk(
        self, doc: DocumentInput, chunk: ChunkInput, previous_facts: Sequence[str] = ()
    ) -> ChunkExtraction:
        """The extraction of one chunk; ``previous_facts`` are the fact descriptions of the chunk before it.

        The request goes through :func:`stratagraph.llm.ask_structured` (output format negotiated per
        endpoint, the store's reply cache). A malformed reply is asked for once more with a correction note;
        when that fails too, or the prompt is too long for the model, the chunk gets an empty extraction and
        a warning naming it and what was wrong.
        """
        empty = ChunkExtraction(chunk_id=chunk.chunk_id)
        if not chunk.text.strip():
            return empty
        what = f"extraction of chunk {chunk.chunk_id} of document {doc.doc_id}"
        usage = LLMUsage()
        try:
            reply = ask_structured(
                self.chat_model,
                LLMExtraction,
                self.build_messages(doc, chunk, previous_facts),
                store=self.cache,
                parse=parse_reply,
                correction=load_prompt("extract_facts.correction"),
                name=SCHEMA_NAME,
                json_schema=extraction_json_schema(),
                what=what,
                usage=usage,
            )
        except InputTooLong as exc:
            logger.warning("LLM %s: the chunk is too long for model %s (%s); it gets an empty extraction", what, self.model, exc)
            self._count("too_long")
            return empty
        finally:
            with self._lock:
                self.usage = self.usage.add(usage)
        if reply.value is None:
            self._count("empty")
            return empty
        self._count("cached" if reply.cached and not reply.problems else "corrected" if reply.problems else "first_try")
        return to_chunk_extraction(reply.value, chunk)

    def _count(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    def close(self) -> None:
        """Close the reply cache when this extractor opened it (:meth:`from_settings`)."""
        if self._owns_cache and self.cache is not None:
            self.cache.close()

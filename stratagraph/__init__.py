"""stratagraph: one multi-layer knowledge graph from your documents, answered over by LangGraph workflows."""

from stratagraph.api import IngestResult, StrataGraph
from stratagraph.config import Settings

__all__ = ["IngestResult", "Settings", "StrataGraph"]
__version__ = "0.1.0"

"""stratagraph: one multi-layer knowledge graph from your documents, answered over by LangGraph workflows."""

__version__ = "0.1.0"

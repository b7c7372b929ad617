"""LangGraph workflows: StateGraphs that only wire node functions (``ingest`` so far)."""

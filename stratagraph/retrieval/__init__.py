"""Deterministic retrieval algorithms, pure functions over the stores; no LLM ever (DESIGN.md names table)."""

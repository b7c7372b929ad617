"""Knowledge extraction: entities, n-ary facts and binary relations from text chunks (spaCy or an LLM)."""

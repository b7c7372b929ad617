"""LangChain tools with pydantic argument schemas wrapping retrieval and store reads; what agent nodes call."""

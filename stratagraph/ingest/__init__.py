"""Ingestion: loaders, the heading tree, chunking and the ingest workflow's node functions."""

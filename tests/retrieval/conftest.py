"""Fixtures shared by the retrieval tests: a GraphBuilder over a fresh store, and the two company documents
that the BiG-RAG and HybridRAG tests both start from."""

from __future__ import annotations

import pytest

from tests.retrieval.graph_builder import GraphBuilder


@pytest.fixture
def builder(settings):
    """An empty GraphBuilder (real SQLite, Chroma and MiniLM under the test's store); closed afterwards."""
    g = GraphBuilder(settings)
    yield g
    g.close()


@pytest.fixture
def founders(builder: GraphBuilder) -> GraphBuilder:
    """Not built yet: "Acme Corp History" (2024) and "Zeta Labs" (2023), each one section whose first chunk says
    who founded the company (``acme#1#0``, ``zeta#1#0``), and the company and founder entities. A test adds
    its own chunks, entities, facts and edges, then calls ``build()``."""
    g = builder
    g.doc("acme", "Acme Corp History", metadata={"year": 2024})
    g.section("acme", "acme/s1", "Founding")
    g.chunk("acme/s1", "acme#1#0", "Acme Corp was founded by Bob Smith in 1990.")
    g.doc("zeta", "Zeta Labs", metadata={"year": 2023})
    g.section("zeta", "zeta/s1", "Company")
    g.chunk("zeta/s1", "zeta#1#0", "Zeta Labs was founded by Carol Jones in 1995.")
    g.entity("acme", "Acme Corp", type="ORG", docs=["acme"])
    g.entity("bob smith", "Bob Smith", type="PERSON", docs=["acme"])
    g.entity("zeta labs", "Zeta Labs", type="ORG", docs=["zeta"])
    g.entity("carol jones", "Carol Jones", type="PERSON", docs=["zeta"])
    return g

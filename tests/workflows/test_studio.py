"""langgraph.json (LangGraph Studio / `langgraph dev`) points at importable, compiled workflows."""

from __future__ import annotations

import importlib.util
import json
import sys

from langgraph.graph.state import CompiledStateGraph

from tests.conftest import REPO


def test_every_langgraph_json_entry_is_a_compiled_graph() -> None:
    config = json.loads((REPO / "langgraph.json").read_text("utf-8"))
    assert config["graphs"], "langgraph.json lists no graph"
    for name, target in config["graphs"].items():
        path, attr = target.rsplit(":", 1)
        spec = importlib.util.spec_from_file_location(f"studio_{name}", REPO / path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # as langgraph-api loads a graph file
        try:
            spec.loader.exec_module(module)
        finally:
            sys.modules.pop(spec.name, None)
        graph = getattr(module, attr)
        assert isinstance(graph, CompiledStateGraph), name
        assert graph.name == name

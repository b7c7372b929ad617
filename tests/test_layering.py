"""The layering contract (DESIGN.md "Layout"), checked on the source with ``ast``.

Every module of the ``stratagraph`` package is parsed and every import collected: module-level and
function-level (lazy) ones alike; only imports under ``if TYPE_CHECKING:`` are left out (they never run).
Relative imports are resolved, and ``from pkg import name`` names the submodule ``pkg.name`` when there
is one, else ``pkg``. The rules:

* only ``stratagraph.graph_store`` imports database clients (``sqlite3``, ``chromadb``, ``neo4j``, ``psycopg``);
* ``stratagraph.retrieval`` and ``stratagraph.tools`` never import ``stratagraph.ingest``;
* ``stratagraph.agents`` never imports ``stratagraph.graph_store`` (it reads the stores through tools) nor
  ``stratagraph.workflows`` (a workflow hands over to another through the graph's wiring);
* ``stratagraph.reading`` (the no-LLM reader) reads evidence handed to it: it never imports
  ``stratagraph.graph_store``, ``stratagraph.ingest``, ``stratagraph.agents``, ``stratagraph.workflows``,
  ``stratagraph.services`` or a tool other than ``stratagraph.tools.calculate`` (its evaluator);
* ``stratagraph.retrieval`` never imports ``stratagraph.services`` (services build the retrieval context);
* ``stratagraph.text`` (helpers ingestion and retrieval share) imports nothing else of the package;
* no import cycles among the package's modules (lazy imports included).

Run this file as a script to print the import graph's cycles and every violation.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path


PACKAGE = "stratagraph"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE
DB_CLIENTS = ("sqlite3", "chromadb", "neo4j", "psycopg", "psycopg_pool")
READING_NEVER = ("graph_store", "ingest", "agents", "workflows", "services")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    name: str  # the module imported (resolved; an external module keeps its dotted name)
    lazy: bool  # inside a function

    def __str__(self) -> str:
        path = _PATHS[self.module].relative_to(ROOT.parent) if self.module in _PATHS else self.module
        return f"{path}:{self.line} ({self.module}) imports {self.name}" + (" (lazily)" if self.lazy else "")


_PATHS: dict[str, Path] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
    _PATHS.update(found)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = known
        self.depth = 0  # function nesting
        self.found: list[Import] = []

    def _add(self, node: ast.AST, name: str) -> None:
        self.found.append(Import(self.module, node.lineno, name, self.depth > 0))

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:  # the body never runs; an else branch does
                self.visit(child)
            return
        self.generic_visit(node)

    def _visit_function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            if node.level > 1:
                base = base[: -(node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target == "__future__":
            return
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            self._add(node, sub if sub in self.known else target)


@cache
def imports() -> tuple[Import, ...]:
    """Every import the package's modules execute (TYPE_CHECKING blocks left out)."""
    known = set(modules())
    out: list[Import] = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        collector = _Collector(name, path.name == "__init__.py", known)
        collector.visit(tree)
        out += collector.found
    return tuple(dict.fromkeys(out))  # "from x import a, b" names x once


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports."""
    edges: dict[str, set[str]] = {m: set() for m in modules()}
    for imp in imports():
        if imp.name in edges:
            edges[imp.module].add(imp.name)
    return edges


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, or with a self-import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the number of modules (< 100)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges[v]:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle through each edge inside a strongly connected component (deduplicated), as
    module lists whose last module imports the first."""
    found: dict[tuple[str, ...], list[str]] = {}
    for comp in strongly_connected(edges):
        members = set(comp)
        for a in comp:
            for b in sorted(edges[a] & members):
                path = _shortest_path(edges, b, a, members)  # b ... a, then a imports b
                if path is None:
                    continue
                i = path.index(min(path))  # rotate so that equal cycles compare equal
                key = tuple(path[i:] + path[:i])
                found.setdefault(key, list(key))
    return [found[k] for k in sorted(found)]


def _shortest_path(edges: dict[str, set[str]], src: str, dst: str, members: set[str]) -> list[str] | None:
    prev: dict[str, str | None] = {src: None}
    queue = [src]
    for v in queue:
        if v == dst:
            path = [v]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for w in sorted(edges[v] & members):
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return None


def edge_lines(a: str, b: str) -> list[Import]:
    return [i for i in imports() if i.module == a and i.name == b]


# ------------------------------------------------------------------------------------------ rules


def rule_violations(found: tuple[Import, ...] | None = None) -> list[Import]:
    """The imports (all of the package's, by default) that break a layering rule."""
    out = []
    for imp in imports() if found is None else found:
        if any(_under(imp.name, db) for db in DB_CLIENTS):
            bad = not _under(imp.module, f"{PACKAGE}.graph_store")
        elif _under(imp.module, f"{PACKAGE}.retrieval"):
            bad = _under(imp.name, f"{PACKAGE}.ingest") or _under(imp.name, f"{PACKAGE}.services")
        elif _under(imp.module, f"{PACKAGE}.tools"):
            bad = _under(imp.name, f"{PACKAGE}.ingest")
        elif _under(imp.module, f"{PACKAGE}.agents"):
            bad = _under(imp.name, f"{PACKAGE}.graph_store") or _under(imp.name, f"{PACKAGE}.workflows")
        elif _under(imp.module, f"{PACKAGE}.reading"):
            bad = any(_under(imp.name, f"{PACKAGE}.{layer}") for layer in READING_NEVER) or (
                _under(imp.name, f"{PACKAGE}.tools") and imp.name != f"{PACKAGE}.tools.calculate")
        elif _under(imp.module, f"{PACKAGE}.text"):
            bad = _under(imp.name, PACKAGE) and not _under(imp.name, f"{PACKAGE}.text")
        else:
            bad = False
        if bad:
            out.append(imp)
    return out


def _fmt(items: list[Import]) -> str:
    return "\n".join(f"  {i}" for i in items)


def test_the_collector_sees_the_package() -> None:
    mods = modules()
    assert f"{PACKAGE}.graph_store.vectors" in mods and f"{PACKAGE}.ingest.steps" in mods
    # a lazy import, a TYPE_CHECKING import and a `from pkg import submodule` resolve as documented
    found = {(i.module, i.name, i.lazy) for i in imports()}
    assert (f"{PACKAGE}.graph_store.vectors", "chromadb", True) in found
    assert (f"{PACKAGE}.workflows.ingest", f"{PACKAGE}.ingest.steps", False) in found
    assert not any(m == f"{PACKAGE}.services" and n == f"{PACKAGE}.graph_store.base" for m, n, _ in found)


def test_layering_rules() -> None:
    bad = rule_violations()
    assert not bad, "layering violations (DESIGN.md 'Layout'):\n" + _fmt(bad)


def test_no_import_cycles() -> None:
    found = cycles(graph())
    lines = []
    for cycle in found:
        lines.append("  " + " -> ".join([*cycle, cycle[0]]))
        for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            lines += [f"      {i}" for i in edge_lines(a, b)]
    assert not found, "import cycles:\n" + "\n".join(lines)


def test_the_rules_can_fail() -> None:
    """Violating imports of each kind are seen (lazy ones too, TYPE_CHECKING ones not), and cycles found."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import sqlite3\n"
        "if TYPE_CHECKING:\n"
        "    from stratagraph.ingest import steps\n"
        "def f():\n"
        "    from stratagraph.ingest.linking import link_documents\n"
        "    from ..graph_store import vectors\n"
        "    import chromadb.config\n"
        "    from stratagraph.workflows import chat\n"
        "    from stratagraph.tools.search import search_chunks\n"
        "    from stratagraph.tools.calculate import apply\n"
    )
    found: list[Import] = []
    for module in (f"{PACKAGE}.retrieval.bad", f"{PACKAGE}.agents.bad", f"{PACKAGE}.text.bad", f"{PACKAGE}.reading.bad"):
        collector = _Collector(module, False, set(modules()))
        collector.visit(ast.parse(source))
        found += collector.found
    assert [(i.line, i.name, i.lazy) for i in found[:5]] == [
        (1, "typing", False),
        (2, "sqlite3", False),
        (6, f"{PACKAGE}.ingest.linking", True),
        (7, f"{PACKAGE}.graph_store.vectors", True),
        (8, "chromadb.config", True),
    ]
    assert [(i.module.split(".")[1], i.line) for i in rule_violations(tuple(found))] == [
        ("retrieval", 2),
        ("retrieval", 6),
        ("retrieval", 8),
        ("agents", 2),
        ("agents", 7),
        ("agents", 8),
        ("agents", 9),  # agents never import workflows
        ("text", 2),
        ("text", 6),
        ("text", 7),
        ("text", 8),
        ("text", 9),
        ("text", 10),
        ("text", 11),
        ("reading", 2),
        ("reading", 6),  # the reader reads no store, runs no ingestion, calls no workflow or tool
        ("reading", 7),
        ("reading", 8),
        ("reading", 9),
        ("reading", 10),  # a tool other than calculate, whose evaluator (line 11) is the reader's arithmetic
    ]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# ------------------------------------------------------------------------------------------ at run time

#: why importing retrieval and tools still loads stratagraph.ingest ("" once nothing does)


def _loaded_ingest_modules() -> list[str]:
    code = (
        "import sys, stratagraph.retrieval, stratagraph.tools\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m == 'stratagraph.ingest' "
        "or m.startswith('stratagraph.ingest.'))))\n"
    )
    path = [str(ROOT.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_retrieval_and_tools_load_nothing_from_ingest() -> None:
    loaded = _loaded_ingest_modules()
    assert not loaded, f"importing stratagraph.retrieval and stratagraph.tools loaded {loaded}"


if __name__ == "__main__":
    all_edges = graph()
    for comp in strongly_connected(all_edges):
        print("strongly connected:", ", ".join(comp))
    for cycle in cycles(all_edges):
        print(" -> ".join([*cycle, cycle[0]]))
        for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            for i in edge_lines(a, b):
                print("     ", i)
    print("rule violations:")
    print(_fmt(rule_violations()))

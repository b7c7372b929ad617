"""``stratagraph eval generate``: a question set from the user's own graph, no model needed.

Every question is read off the graph's structure, with its answer and its gold chunks:

* ``table_cell``: one typed quantity of a table row ("what is the FY2025 Adopted of Overtime in section X?");
* ``sum_comparison``: the sum of two rows' cells in one column, or which of the two is larger;
* ``section``: which section discusses a name that only that section's text states;
* ``citation_hop``: which document a section cites (``CITES`` from its chunks, one cited document);
* ``chain_2hop``: two n-ary facts of different chunks sharing an entity ("x adopt y; what does y include?");
* ``period_change``: the change of one table row between two period columns (years, quarters).

Each question also carries ``derivation``: where in the documents the answer stands (document source, section
heading, row, columns, names), so a checker can re-derive the answer from the documents' text without the graph
(``benchmarks/check_generated.py``). The choice is deterministic for a seed: candidates are sorted by id,
shuffled with ``random.Random(seed)``, and taken round-robin over the kinds.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from stratagraph.eval.datasets import Question
from stratagraph.graph_store.base import GraphStore
from stratagraph.schema import Node

__all__ = ["KINDS", "generate", "write_questions"]

KINDS = ("table_cell", "sum_comparison", "section", "citation_hop", "chain_2hop", "period_change")
_SCALE_WORD = {1000: "thousand", 10**6: "million", 10**9: "billion"}
_PERIOD = re.compile(r"\b(?:FY\s?)?((?:19|20)\d\d)\b|\bQ([1-4])\b", re.IGNORECASE)
_NUMERIC = re.compile(r"^\(?-?[$€£]?\d[\d,]*(?:\.\d+)?\)?$")


class _Graph:
    """The nodes the generator reads, loaded once."""

    def __init__(self, graph: GraphStore) -> None:
        self.docs = {n.id: n for n in graph.nodes_by_label("Document")}
        self.sections = {n.id: n for n in graph.nodes_by_label("Section")}
        self.chunks = {n.id: n for n in graph.nodes_by_label("Chunk")}
        self.facts = graph.nodes_by_label("Fact")
        self.cites = graph.get_edges(types=["CITES"])
        self.by_section: dict[str, list[Node]] = defaultdict(list)
        for c in sorted(self.chunks.values(), key=lambda c: (c.props.get("doc_id", ""), c.props.get("order", 0))):
            self.by_section[c.props.get("section_id", "")].append(c)

    def title(self, doc_id: str) -> str:
        doc = self.docs.get(doc_id)
        return str(doc.props.get("title") or doc_id) if doc else doc_id

    def source(self, doc_id: str) -> str:
        doc = self.docs.get(doc_id)
        return str(doc.props.get("source") or doc_id) if doc else doc_id

    def heading(self, section_id: str) -> str:
        sec = self.sections.get(section_id)
        return str(sec.props.get("title", "")) if sec else ""

    def section_text(self, section_id: str) -> str:
        return "\n".join(str(c.props.get("text", "")) for c in self.by_section.get(section_id, []))


def _where(g: _Graph, section_id: str) -> str:
    doc_id = g.sections[section_id].props["doc_id"]
    if _root(g, section_id):
        return f'in "{g.title(doc_id)}"'
    return f'in "{g.title(doc_id)}", section "{g.heading(section_id)}"'


def _root(g: _Graph, section_id: str) -> bool:
    """The document's own section (text before its first heading, titled as the document): a document the
    reader may see under another first heading, so questions name the document only."""
    return g.heading(section_id) == g.title(g.sections[section_id].props["doc_id"])


def _heading(g: _Graph, section_id: str) -> str:
    """The section as a question names it: its heading, or "" for the document's own section."""
    return "" if _root(g, section_id) else g.heading(section_id)


def _question(kind: str, text: str, answers: list[str], docs: Sequence[str], sections: Sequence[str],
              chunks: Sequence[str], answer_type: str, derivation: dict[str, Any]) -> Question:  # fmt: skip
    return Question(id="", question=text, kind=kind, answers=answers, answer_type=answer_type,
                    gold_docs=list(dict.fromkeys(docs)), gold_sections=[s for s in sections if s],
                    gold_chunks=list(dict.fromkeys(chunks)), derivation=derivation)  # fmt: skip


# ---------------------------------------------------------------- table cells, sums, changes


class _Cell:
    """One typed quantity of a table row."""

    def __init__(self, fact: Node, q: dict[str, Any]) -> None:
        self.fact = fact
        self.row, _, self.column = str(q.get("label", "")).partition(" | ")
        self.raw = str(q.get("raw", "")).strip()
        self.value = Decimal(str(q["value"]))
        self.scale = int(q.get("scale") or 1)
        self.unit = q.get("unit")
        self.total = bool(q.get("is_total"))
        self.section_id = str(fact.props.get("section_id", ""))
        self.chunk_ids = list(fact.props.get("chunk_ids", []))

    @property
    def plain(self) -> bool:
        """A number as written in the table's own units (no percent, no text)."""
        return bool(_NUMERIC.match(self.raw)) and self.unit not in ("%", "percent", "pts", "points", "bps")

    @property
    def written(self) -> Decimal:
        return self.value / self.scale


def _cells(g: _Graph) -> list[_Cell]:
    cells = [_Cell(f, q) for f in g.facts if f.props.get("type") == "table_row" for q in f.props.get("quantities", [])
             if q.get("value") is not None and " | " in str(q.get("label", ""))]  # fmt: skip
    cells = [c for c in cells if c.row and c.column and c.section_id in g.sections]
    seen = Counter((c.section_id, c.row.casefold(), c.column.casefold()) for c in cells)
    in_doc = Counter((c.fact.props.get("doc_id"), c.row.casefold(), c.column.casefold()) for c in cells)
    # one cell per (row, column) in its section; in the whole document for a question that names no section
    return [c for c in cells if seen[(c.section_id, c.row.casefold(), c.column.casefold())] == 1
            and (not _root(g, c.section_id) or in_doc[(c.fact.props.get("doc_id"), c.row.casefold(), c.column.casefold())] == 1)]


def _format(value: Decimal, like: Sequence[str]) -> str:
    places = max((len(r.split(".")[1].rstrip(")")) if "." in r else 0 for r in like), default=0)
    text = f"{abs(value):,.{places}f}" if any("," in r for r in like) or abs(value) >= 10000 else f"{abs(value):.{places}f}"
    return f"-{text}" if value < 0 else text


def _amounts(value: Decimal, scale: int, like: Sequence[str]) -> list[str]:
    out = [_format(value, like)]
    if scale in _SCALE_WORD:
        out.append(f"{_format(value, like)} {_SCALE_WORD[scale]}")
    return out


def _table_cells(g: _Graph, cells: list[_Cell]) -> Iterator[Question]:
    for c in cells:
        yield _question("table_cell", f"What is the {c.column} of {c.row} {_where(g, c.section_id)}?",
                        [c.raw], [c.fact.props["doc_id"]], [_heading(g, c.section_id)], c.chunk_ids, "span",
                        {"source": g.source(c.fact.props["doc_id"]), "section": _heading(g, c.section_id),
                         "row": c.row, "column": c.column})  # fmt: skip


def _pairs(cells: list[_Cell]) -> Iterator[tuple[_Cell, _Cell]]:
    by_table: dict[tuple[str, str, str], list[_Cell]] = defaultdict(list)
    for c in cells:
        if c.plain and not c.total:
            by_table[(c.section_id, c.chunk_ids[0] if c.chunk_ids else "", c.column)].append(c)
    for key in sorted(by_table):
        group = by_table[key]
        for a, b in zip(group, group[1:], strict=False):
            if a.row.casefold() != b.row.casefold() and a.scale == b.scale and a.unit == b.unit:
                yield a, b


def _sums_and_comparisons(g: _Graph, cells: list[_Cell]) -> Iterator[Question]:
    for i, (a, b) in enumerate(_pairs(cells)):
        doc = a.fact.props["doc_id"]
        derivation = {"source": g.source(doc), "section": _heading(g, a.section_id), "rows": [a.row, b.row],
                      "column": a.column}  # fmt: skip
        chunks = [*a.chunk_ids, *b.chunk_ids]
        if i % 2 == 0:
            total = a.written + b.written
            yield _question("sum_comparison", f"What is the sum of the {a.column} of {a.row} and of {b.row} {_where(g, a.section_id)}?",
                            _amounts(total, a.scale, [a.raw, b.raw]), [doc], [_heading(g, a.section_id)], chunks,
                            "computed", derivation | {"operation": "sum"})  # fmt: skip
        elif a.written != b.written:
            larger = a if a.written > b.written else b
            yield _question("sum_comparison", f"Which is larger, the {a.column} of {a.row} or of {b.row}, {_where(g, a.section_id)}?",
                            [larger.row], [doc], [_heading(g, a.section_id)], chunks, "computed",
                            derivation | {"operation": "larger"})  # fmt: skip


def _period(column: str) -> tuple[int, int] | None:
    year = quarter = None
    for m in _PERIOD.finditer(column):
        year = int(m.group(1)) if m.group(1) else year
        quarter = int(m.group(2)) if m.group(2) else quarter
    return (year, quarter or 0) if year is not None else None


def _period_changes(g: _Graph, cells: list[_Cell]) -> Iterator[Question]:
    rows: dict[tuple[str, str], list[_Cell]] = defaultdict(list)
    for c in cells:
        if c.plain and _period(c.column) is not None:
            rows[(c.fact.id, c.row)].append(c)
    for key in sorted(rows):
        periods = sorted(rows[key], key=lambda c: _period(c.column) or (0, 0))
        if len(periods) < 2 or _period(periods[0].column) == _period(periods[-1].column):
            continue
        old, new = periods[0], periods[-1]
        doc = old.fact.props["doc_id"]
        yield _question("period_change", f"By how much did {old.row} change from {old.column} to {new.column} {_where(g, old.section_id)}?",
                        _amounts(new.written - old.written, old.scale, [old.raw, new.raw]), [doc],
                        [_heading(g, old.section_id)], old.chunk_ids, "computed",
                        {"source": g.source(doc), "section": _heading(g, old.section_id), "row": old.row,
                         "columns": [old.column, new.column]})  # fmt: skip


# ---------------------------------------------------------------- sections


def _names(g: _Graph) -> list[str]:
    names: set[str] = set()
    for f in g.facts:
        for arg in f.props.get("arguments", []):
            name = str(arg.get("entity") or "").strip()
            if len(name) >= 6 and len(name.split()) >= 2 and not any(ch.isdigit() for ch in name):
                names.add(name)
    return sorted(names)


def _sections(g: _Graph) -> Iterator[Question]:
    texts = {sid: g.section_text(sid).casefold() for sid in g.by_section if sid in g.sections}
    used: set[str] = set()
    for name in _names(g):
        low = name.casefold()
        holders = [sid for sid, text in texts.items() if low in text]
        if len(holders) != 1 or holders[0] in used:
            continue
        sid = holders[0]
        doc = g.sections[sid].props["doc_id"]
        if g.heading(sid) == g.title(doc) or low in g.heading(sid).casefold():
            continue
        used.add(sid)
        chunks = [c.id for c in g.by_section[sid] if low in str(c.props.get("text", "")).casefold()]
        bare = re.sub(r"^(?:section\s+)?[\dIVX]+(?:\.\d+)*\.?\s+", "", g.heading(sid), flags=re.IGNORECASE)
        answers = list(dict.fromkeys([g.heading(sid), bare]))  # "2.2.1 Saltings Point ..." or without its number
        yield _question("section", f'Which section of "{g.title(doc)}" discusses {name}?', answers, [doc],
                        [g.heading(sid)], chunks, "span", {"source": g.source(doc), "name": name})  # fmt: skip


# ---------------------------------------------------------------- citations


def _citation_hops(g: _Graph) -> Iterator[Question]:
    cited: dict[str, set[str]] = defaultdict(set)
    citing: dict[str, list[str]] = defaultdict(list)
    for e in g.cites:
        if e.src in g.chunks and e.dst in g.docs:
            sid = str(g.chunks[e.src].props.get("section_id", ""))
            cited[sid].add(e.dst)
            citing[sid].append(e.src)
    for sid in sorted(cited):
        if len(cited[sid]) != 1 or sid not in g.sections:
            continue
        target = next(iter(cited[sid]))
        doc = g.sections[sid].props["doc_id"]
        first = g.by_section.get(next((s for s in g.by_section if s in g.sections and g.sections[s].props["doc_id"] == target), ""), [])
        yield _question("citation_hop", f'Which document does the section "{g.heading(sid)}" of "{g.title(doc)}" cite?',
                        [g.title(target)], [doc, target], [g.heading(sid)], [*citing[sid], *(c.id for c in first[:1])],
                        "span", {"source": g.source(doc), "section": g.heading(sid), "cited_source": g.source(target)})  # fmt: skip


# ---------------------------------------------------------------- 2-hop chains


def _roles(fact: Node) -> dict[str, dict[str, Any]]:
    """A fact's first subject and first object that name an entity."""
    out: dict[str, dict[str, Any]] = {}
    for arg in fact.props.get("arguments", []):
        if arg.get("entity") and arg.get("role") in ("subject", "object") and arg["role"] not in out:
            out[arg["role"]] = arg
    return out


def _bare(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", " ".join(text.casefold().split()))


def _chains(g: _Graph) -> Iterator[Question]:
    facts = [(f, _roles(f)) for f in g.facts if f.props.get("type") != "table_row"]
    facts = [(f, r) for f, r in facts if len(r) == 2 and r["subject"]["entity"].casefold() != r["object"]["entity"].casefold()]
    by_subject: dict[str, list[tuple[Node, dict[str, Any]]]] = defaultdict(list)
    for f, r in facts:
        by_subject[r["subject"]["entity"].casefold()].append((f, r))
    used: set[str] = set()
    for f1, r1 in facts:
        bridge = r1["object"]["entity"].casefold()
        for f2, r2 in by_subject.get(bridge, []):
            if set(f2.props.get("chunk_ids", [])) & set(f1.props.get("chunk_ids", [])) or f2.id in used:
                continue
            if _bare(r1["object"]["text"]) != _bare(r2["subject"]["text"]):  # the same words name the bridge
                continue
            used.add(f2.id)
            x, y, z = r1["subject"]["text"], r1["object"]["text"], r2["object"]["text"]
            docs = [f1.props.get("doc_id", ""), f2.props.get("doc_id", "")]
            yield _question("chain_2hop", f"{x} {r1['object']['predicate']} {y}; what does {r2['subject']['text']} {r2['object']['predicate']}?",
                            [z], docs, [], [*f1.props.get("chunk_ids", []), *f2.props.get("chunk_ids", [])], "span",
                            {"sources": [g.source(d) for d in docs], "first": [x, y], "second": [r2["subject"]["text"], z],
                             "predicates": [r1["object"]["predicate"], r2["object"]["predicate"]]})  # fmt: skip
            break


# ---------------------------------------------------------------- the set


def candidates(graph: GraphStore) -> dict[str, list[Question]]:
    """Every question the graph supports, per kind, in a deterministic order."""
    g = _Graph(graph)
    cells = _cells(g)
    found = {
        "table_cell": list(_table_cells(g, cells)),
        "sum_comparison": list(_sums_and_comparisons(g, cells)),
        "section": list(_sections(g)),
        "citation_hop": list(_citation_hops(g)),
        "chain_2hop": list(_chains(g)),
        "period_change": list(_period_changes(g, cells)),
    }
    return {k: sorted(v, key=lambda q: (q.question, q.answers)) for k, v in found.items()}


def generate(graph: GraphStore, n: int = 50, seed: int = 0) -> list[Question]:
    """``n`` questions (fewer when the graph supports fewer), taken round-robin over the kinds."""
    rng = random.Random(seed)
    pools = {}
    for kind, qs in candidates(graph).items():
        qs = list(qs)
        rng.shuffle(qs)
        pools[kind] = qs
    out: list[Question] = []
    while len(out) < n and any(pools.values()):
        for kind in KINDS:
            if pools.get(kind) and len(out) < n:
                out.append(pools[kind].pop(0))
    for i, q in enumerate(out, start=1):
        q.id = f"gen-{i:03d}-{q.kind}"
    return out


def write_questions(questions: Sequence[Question], out_dir: Path) -> Path:
    """``out_dir/questions.jsonl``, one question a line (the format ``eval qa`` and ``eval retrieval`` read)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "questions.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps(q.model_dump(exclude_none=True), ensure_ascii=False) + "\n")
    return path

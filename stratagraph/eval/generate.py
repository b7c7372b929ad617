"""``stratagraph eval generate``: a question set from the user's own graph, no model needed.

Every question is read off the graph's structure, with its answer and its gold chunks:

* ``table_cell``: one typed quantity of a table row ("what is the FY2025 Adopted of Overtime in section X?");
* ``sum_comparison``: the sum of two rows' cells in one column, or which of the two is larger;
* ``section``: which section discusses a name that only that section's text states;
* ``citation_hop``: which document a section cites (``CITES`` from its chunks, one cited document);
* ``chain_2hop``: two sentences joined by an entity X (the bridge): one fact names a start entity and X in
  any role (subject, object, agent, or an oblique: "founded *in Corvel*"); the other is a fact of another
  chunk that names X too, or a fact on X's own page (a document or section X is ``DESCRIBED_BY``). The question
  quotes both as clozes ([X] blanked, the answer [Y] blanked in the second);
* ``period_change``: the change of one table row between two period columns (years, quarters).

Each question also carries ``derivation``: where in the documents the answer stands (document source, section
heading, row, columns, names), so a checker can re-derive the answer from the documents' text without the graph
(``benchmarks/check_generated.py``). The choice is deterministic for a seed and the same on every backend: facts
are read in the documents' order, candidates sorted by question text, shuffled with ``random.Random(seed)``,
and taken round-robin over the kinds.
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

__all__ = ["KINDS", "NEEDS", "candidates", "generate", "supported", "write_questions"]

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
        self.cites = sorted(graph.get_edges(types=["CITES"]), key=lambda e: (e.src, e.dst))
        self.described = sorted(graph.get_edges(types=["DESCRIBED_BY"]), key=lambda e: (e.src, e.dst))
        self.entities = {n.id: n for n in graph.nodes_by_label("Entity")}
        self.in_fact: dict[str, list[str]] = defaultdict(list)  # fact -> its entities (IN_FACT)
        for e in graph.get_edges(types=["IN_FACT"]):
            self.in_fact[e.dst].append(e.src)
        self.by_section: dict[str, list[Node]] = defaultdict(list)
        for c in sorted(self.chunks.values(), key=lambda c: (c.props.get("doc_id", ""), c.props.get("order", 0))):
            self.by_section[c.props.get("section_id", "")].append(c)
        # in the documents' order (a backend may list nodes in any order): document, chunk, place in the chunk
        self.facts = sorted(graph.nodes_by_label("Fact"), key=self._place)

    def _place(self, fact: Node) -> tuple[str, int, int, str]:
        ids = fact.props.get("chunk_ids") or [""]
        chunk = self.chunks.get(ids[0])
        text = str(chunk.props.get("text", "")) if chunk else ""
        head = str(fact.props.get("description", "")).split(";")[0].strip()
        return (str(fact.props.get("doc_id", "")), int(chunk.props.get("order", 0)) if chunk else 0,
                text.find(head) if head else -1, fact.id)  # fmt: skip

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
#
# A chain is two sentences of the documents joined through an entity (the bridge): the first sentence names a
# start entity and the bridge (an argument of one of its facts, in any role: subject, object, agent, or an
# oblique such as "founded *in Corvel*"); the second is either another fact with an argument naming the same
# bridge ("via": "fact") or a fact on the bridge's own page, a document or section whose title is the bridge's
# name (``DESCRIBED_BY``, "via": "page"). The question quotes both sentences as clozes, the bridge blanked as
# [X] (and the answer as [Y] in the second), so the answer is found by filling [X] from the first sentence and
# then [Y] from the second; a checker does the same on the documents' text.

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_PRONOUN = {"it", "its", "they", "them", "their", "he", "she", "him", "her", "his", "this", "that", "these",
            "those", "which", "who", "whom", "we", "us", "our", "i", "you", "one"}  # fmt: skip
_MAX_WORDS = 45  # a sentence longer than this is no cloze a reader can hold
_MAX_ANSWER_WORDS = 8
_ASKED = 2  # how many chains may end in one answer of one sentence (each from a first sentence of another document)


def _cloze_text(sentence: str) -> str:
    """A sentence as a cloze quotes it and a checker compares it: no emphasis marks, no list marker, no end
    punctuation, whitespace collapsed."""
    text = _LIST_MARK.sub("", sentence.replace("*", ""))
    return " ".join(text.split()).rstrip(".!?;: ")


def _sentence_at(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The bounds of the sentence of ``text`` holding ``[start, end)`` (split as the checker splits:
    after . ! ? ; and a space, or at a line break); None when the span crosses sentences."""
    lo = 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() >= end:
            return (lo, m.start()) if start >= lo else None
        lo = m.end()
    return (lo, len(text)) if start >= lo else None


def _blanked(text: str, lo: int, hi: int, blanks: Sequence[tuple[int, int, str]]) -> str:
    """``text[lo:hi]`` with each ``(start, end, mark)`` span replaced by its mark, as a cloze."""
    out, at = [], lo
    for s, e, mark in sorted(blanks):
        out += [text[at:s], f"\x00{mark}\x00"]
        at = e
    out.append(text[at:hi])
    return _cloze_text("".join(out)).replace("\x00", "")


def _bare(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", " ".join(text.replace("*", "").casefold().split()))


def _proper(arg: dict[str, Any]) -> bool:
    """An argument that is a name: linked to an entity whose name it states (bar a leading article), with a
    capital letter or a digit in it."""
    name = str(arg.get("entity") or "")
    if not name or not arg.get("eid") or _bare(arg["text"]) != _bare(name):
        return False
    return any(ch.isupper() or ch.isdigit() for ch in name)


def _answerable(arg: dict[str, Any]) -> bool:
    """An argument a question can ask for: a name, or a phrase the parser labelled (a date, a number, an
    amount, a place), short, one phrase (no comma and space), and no pronoun."""
    words = arg["text"].split()
    if not words or len(words) > _MAX_ANSWER_WORDS or _bare(arg["text"]) in _PRONOUN or words[0].casefold() in _PRONOUN:
        return False
    if re.search(r",\s", arg["text"]):  # "the end of FY2026, not $14.6 million": a phrase running on past its name
        return False
    return _proper(arg) or (bool(arg.get("label")) and any(ch.isalnum() for ch in arg["text"]))


class _Clause:
    """A fact read as the sentence of its first chunk that holds all its arguments."""

    def __init__(self, fact: Node, text: str) -> None:
        self.fact = fact
        self.text = text
        self.args = [dict(a) for a in fact.props.get("arguments", []) if text[a["start"]:a["end"]] == a["text"]]
        spans = [(a["start"], a["end"]) for a in self.args]
        bounds = _sentence_at(text, min(s for s, _ in spans), max(e for _, e in spans)) if spans else None
        self.lo, self.hi = bounds or (0, 0)
        self.ok = bounds is not None and 0 < len(text[self.lo:self.hi].split()) <= _MAX_WORDS

    @property
    def chunks(self) -> list[str]:
        return list(self.fact.props.get("chunk_ids", []))[:1]

    def cloze(self, blanks: Sequence[tuple[dict[str, Any], str]]) -> str:
        return _blanked(self.text, self.lo, self.hi, [(a["start"], a["end"], mark) for a, mark in blanks])

    def names(self, arg: dict[str, Any]) -> int:
        """How often the sentence states ``arg``'s words (a blank that leaves another copy gives itself away)."""
        return _cloze_text(self.text[self.lo:self.hi]).casefold().count(_bare(arg["text"]))


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two arguments naming one thing: the same entity, or one's words inside the other's ("Amadi", "Ruth Amadi")."""
    if a.get("eid") and a.get("eid") == b.get("eid"):
        return True
    x, y = _bare(a["text"]), _bare(b["text"])
    return bool(re.search(rf"\b{re.escape(x)}\b", y) or re.search(rf"\b{re.escape(y)}\b", x))


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def _clauses(g: _Graph) -> list[_Clause]:
    out = []
    for f in g.facts:
        ids = f.props.get("chunk_ids", [])
        if f.props.get("type") == "table_row" or not ids or ids[0] not in g.chunks:
            continue
        c = _Clause(f, str(g.chunks[ids[0]].props.get("text", "")))
        named: dict[str, set[str]] = defaultdict(set)  # a name or alias -> the fact's entities it names
        for eid in g.in_fact.get(f.id, []):
            ent = g.entities.get(eid)
            for name in [ent.props.get("name", ""), *ent.props.get("aliases", [])] if ent else []:
                named[str(name).casefold()].add(eid)
        for a in c.args:
            ids_of = named.get(str(a.get("entity") or "").casefold(), set())
            a["eid"] = next(iter(ids_of)) if len(ids_of) == 1 else ""
        c.args = [a for a in c.args if a["eid"] or not a.get("entity")]  # a name that is no one entity is dropped
        if c.ok:
            out.append(c)
    return out


def _pages(g: _Graph) -> dict[str, list[str]]:
    """Entity id -> the sections of its own pages (``DESCRIBED_BY``: a document's sections, or the one section)."""
    out: dict[str, list[str]] = defaultdict(list)
    for e in g.described:
        if e.dst in g.docs:
            out[e.src] += [s for s in g.by_section if s in g.sections and g.sections[s].props.get("doc_id") == e.dst]
        elif e.dst in g.sections:
            out[e.src].append(e.dst)
    return out


def _chains(g: _Graph) -> Iterator[Question]:
    clauses = _clauses(g)
    # the first hop: a start entity and a bridge, both names, in one sentence that states the bridge once
    # (or the entity whose own page the sentence is on: "It was founded ... by Idris Kalloway" on its page)
    paged = {e.dst for e in g.described} | {g.sections[s].props.get("doc_id") for s in (e.dst for e in g.described)
                                            if s in g.sections}  # fmt: skip
    firsts = []
    for c in clauses:
        names = [a for a in c.args if _proper(a)]
        on_page = c.fact.props.get("doc_id") in paged or c.fact.props.get("section_id") in paged
        for bridge in names:
            if c.names(bridge) != 1:
                continue
            if on_page or any(a["eid"] != bridge["eid"] and not _overlap(a, bridge) for a in names):
                firsts.append((c, bridge))
    by_bridge: dict[str, list[tuple[_Clause, dict[str, Any]]]] = defaultdict(list)
    for c in clauses:
        for a in c.args:
            if _proper(a) and c.names(a) == 1:
                by_bridge[a["eid"]].append((c, a))
    by_section: dict[str, list[_Clause]] = defaultdict(list)
    for c in clauses:
        by_section[str(c.fact.props.get("section_id", ""))].append(c)
    pages = _pages(g)
    # each answer of each sentence is asked at most twice, each time from a first sentence of another document
    used: dict[tuple[str, int, int], set[str]] = defaultdict(set)
    for c1, bridge in firsts:
        key = bridge["eid"]
        seconds: list[tuple[str, _Clause, dict[str, Any] | None]] = [
            ("fact", c2, a2) for c2, a2 in by_bridge.get(key, []) if c2.fact.id != c1.fact.id]
        own = pages.get(key, [])
        if str(c1.fact.props.get("section_id", "")) not in own:  # the first sentence is not on the bridge's page
            seconds += [("page", c2, None) for sid in own for c2 in by_section.get(sid, [])]
        for via, c2, b2 in seconds:
            if set(c2.chunks) & set(c1.chunks):
                continue
            first = c1.cloze([(bridge, "[X]")])
            for answer in c2.args:
                if not _answerable(answer) or _same(answer, bridge) or (b2 is not None and _overlap(answer, b2)):
                    continue
                mark, d1 = (c2.chunks[0], answer["start"], answer["end"]), str(c1.fact.props.get("doc_id", ""))
                if len(used[mark]) >= _ASKED or d1 in used[mark] or c2.names(answer) != 1:
                    continue
                second = c2.cloze([(answer, "[Y]")] + ([(b2, "[X]")] if b2 is not None else []))
                low = f"{first} {second}".casefold()
                if _bare(answer["text"]) in low or _bare(bridge["text"]) in low:
                    continue  # the question may state neither the bridge nor the answer
                used[mark].add(d1)
                d2 = str(c2.fact.props.get("doc_id", ""))
                where = "On the page about X" if via == "page" else "In another passage"
                text = f'X is the blank [X] in "{first}". {where}, what is [Y] in "{second}"?'
                s1, s2 = str(c1.fact.props.get("section_id", "")), str(c2.fact.props.get("section_id", ""))
                yield _question("chain_2hop", text, [answer["text"]], [d1, d2],
                                [_heading(g, s) for s in (s1, s2) if s in g.sections], [*c1.chunks, *c2.chunks],
                                "span", {"sources": [g.source(d1), g.source(d2)], "via": via, "first": first,
                                         "second": second, "bridge": bridge["text"],
                                         "roles": [bridge["role"], answer["role"]]})  # fmt: skip


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


#: what each kind needs of the graph, said when a graph supports fewer questions than asked
NEEDS = {
    "table_cell": "table rows with typed cells (a row label and a column header per number)",
    "sum_comparison": "two rows of one table with plain numbers in the same column and units",
    "section": "a multi-word entity name that the text of exactly one section states",
    "citation_hop": "a section whose chunks cite exactly one other document of the store (CITES)",
    "chain_2hop": "a sentence naming two entities (or one, on an entity's own page) whose second entity is "
                  "named in a sentence of another chunk or has a page of its own, with a name, date or number "
                  "to ask for",
    "period_change": "a table row with numbers in two columns of different periods (years, quarters)",
}  # fmt: skip


def supported(found: dict[str, list[Question]]) -> dict[str, int]:
    """How many questions of each kind a graph supports (every candidate of :func:`candidates`)."""
    return {kind: len(found.get(kind, [])) for kind in KINDS}


def generate(
    graph: GraphStore, n: int = 50, seed: int = 0, found: dict[str, list[Question]] | None = None
) -> list[Question]:
    """``n`` questions (fewer when the graph supports fewer), taken round-robin over the kinds (``found``:
    :func:`candidates` of ``graph`` already computed)."""
    rng = random.Random(seed)
    pools = {}
    for kind, qs in (found if found is not None else candidates(graph)).items():
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

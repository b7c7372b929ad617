"""Re-derive the answers of a generated question set (``stratagraph eval generate``) from the documents' text.

The graph is not read: each document file is parsed here (Markdown headings and pipe tables, HTML headings,
paragraphs and tables, plain text), and each question's answer is derived again from the place its
``derivation`` names (a document, a section heading, a row and columns, a name, a citing section):

* ``table_cell``: the cell at (row, column) of a table under the section heading;
* ``sum_comparison`` / ``period_change``: the cells, parsed and added, compared or subtracted here;
* ``section``: the one section whose text states the name;
* ``citation_hop``: the section's citation markers ([1], [1, 2], (Author, 2019), Author et al. (2019)) resolved
  through the reference list to the one sibling document whose title the reference states;
* ``chain_2hop``: the bridge X filled in from the first quoted sentence (the one phrase that completes it in
  the first document), then the answer Y from the second: a sentence of the second document with X in its
  place ("via": "fact"), or a sentence of the page whose title or heading is X ("via": "page", the page found
  here from X, among the documents of the two sources' folders).

A derived answer agrees when it contains the first accepted answer (``stratagraph.eval.accuracy.contains``,
numbers as numbers).

    python benchmarks/check_generated.py --questions DIR/questions.jsonl [--base .] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from decimal import Decimal, InvalidOperation
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stratagraph.eval.accuracy import contains  # noqa: E402

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


class Section:
    def __init__(self, heading: str) -> None:
        self.heading = heading
        self.lines: list[str] = []
        self.tables: list[list[list[str]]] = []

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def parse_markdown(text: str) -> tuple[str, list[Section]]:
    front = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    title = ""
    if front:
        m = re.search(r"^title:\s*(.+)$", front.group(1), re.M)
        title = m.group(1).strip().strip("\"'") if m else ""
        text = text[front.end():]
    sections = [Section("")]
    table: list[list[str]] | None = None
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            sections.append(Section(m.group(2).strip()))
            title = title or m.group(2).strip()
            table = None
            continue
        if line.strip().startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            if table is None:
                table = []
                sections[-1].tables.append(table)
            table.append(cells)
            sections[-1].lines.append(" ".join(cells))
            continue
        table = None
        sections[-1].lines.append(line)
    return title, sections


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.sections = [Section("")]
        self.tag = ""
        self.buf: list[str] = []
        self.row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "title", "td", "th", "p", "li"):
            self.buf, self.tag = [], tag
        if tag == "table":
            self.sections[-1].tables.append([])
        if tag == "tr":
            self.row = []

    def handle_data(self, data: str) -> None:
        self.buf.append(data)

    def handle_endtag(self, tag: str) -> None:
        text = " ".join("".join(self.buf).split())
        if tag == "title":
            self.title = text
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.sections.append(Section(text))
        elif tag in ("td", "th") and self.row is not None:
            self.row.append(text)
        elif tag == "tr" and self.row is not None:
            self.sections[-1].tables[-1].append(self.row)
            self.sections[-1].lines.append(" ".join(self.row))
            self.row = None
        elif tag in ("p", "li"):
            self.sections[-1].lines.append(text)
        if tag == self.tag:
            self.buf = []


def parse(path: Path) -> tuple[str, list[Section]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".html", ".htm"):
        p = _Html()
        p.feed(text)
        return p.title, p.sections
    return parse_markdown(text)


def number(cell: str) -> Decimal | None:
    m = re.fullmatch(r"\s*(\()?\s*(-)?[$€£]?\s*([\d,]*\.?\d+)\s*(\))?\s*", cell)
    if not m:
        return None
    try:
        value = Decimal(m.group(3).replace(",", ""))
    except InvalidOperation:
        return None
    return -value if (m.group(1) and m.group(4)) or m.group(2) else value


def _section(sections: list[Section], heading: str) -> Section | None:
    return next((s for s in sections if _norm(s.heading) == _norm(heading)), None)


def _cell_in(sec: Section, row: str, column: str) -> str | None:
    for table in sec.tables:
        header = [_norm(h) for h in table[0]]
        if _norm(column) not in header:
            continue
        col = header.index(_norm(column))
        for r in table[1:]:
            if r and _norm(r[0]) == _norm(row) and col < len(r):
                return r[col]
    return None


def cell(sections: list[Section], heading: str, row: str, column: str) -> str | None:
    """The cell at (row, column) of a table under ``heading``; with no heading (a question naming only the
    document), of the one table of the document that has that cell."""
    if not heading:
        found = [c for s in sections if (c := _cell_in(s, row, column)) is not None]
        return found[0] if len(found) == 1 else None
    sec = _section(sections, heading)
    return _cell_in(sec, row, column) if sec else None


def _fmt(value: Decimal) -> str:
    return f"{value:,f}"


def _table_answer(q: dict[str, Any], sections: list[Section]) -> str | None:
    d = q["derivation"]
    if q["kind"] == "table_cell":
        return cell(sections, d["section"], d["row"], d["column"])
    if q["kind"] == "period_change":
        old, new = (number(cell(sections, d["section"], d["row"], c) or "") for c in d["columns"])
        return _fmt(new - old) if old is not None and new is not None else None
    a, b = (number(cell(sections, d["section"], r, d["column"]) or "") for r in d["rows"])
    if a is None or b is None:
        return None
    if d["operation"] == "sum":
        return _fmt(a + b)
    return d["rows"][0] if a > b else d["rows"][1] if b > a else None


def _section_answer(q: dict[str, Any], sections: list[Section]) -> str | None:
    name = _norm(q["derivation"]["name"])
    holders = [s for s in sections if s.heading and name in _norm(s.text)]
    return holders[0].heading if len(holders) == 1 else None


REF = re.compile(r"^\s*\[(\d+)\]\s*(.+)$")


def _references(sections: list[Section]) -> tuple[dict[str, str], list[str]]:
    numbered: dict[str, str] = {}
    entries: list[str] = []
    for s in sections:
        if "reference" in s.heading.casefold() or "bibliograph" in s.heading.casefold():
            for line in s.lines:
                if not line.strip():
                    continue
                entries.append(line)
                m = REF.match(line)
                if m:
                    numbered[m.group(1)] = m.group(2)
    return numbered, entries


def _markers(text: str, numbered: dict[str, str], entries: list[str]) -> list[str]:
    cited: list[str] = []
    for group in re.findall(r"\[([\d,\s–-]+)\]", text):
        for part in re.split(r"\s*,\s*", group):
            ends = re.split(r"\s*[–-]\s*", part)
            if all(e.isdigit() for e in ends):
                cited += [numbered.get(str(i), "") for i in range(int(ends[0]), int(ends[-1]) + 1)]
    for surname, year in re.findall(r"([A-Z][\w'-]+)(?: et al\.| and [A-Z][\w'-]+)?,? \(?(\d{4})", text):
        cited += [e for e in entries if surname in e and year in e]
    return [c for c in cited if c]


def _citation_answer(q: dict[str, Any], sections: list[Section], path: Path) -> str | None:
    sec = _section(sections, q["derivation"]["section"])
    if sec is None:
        return None
    numbered, entries = _references(sections)
    refs = _markers(sec.text, numbered, entries)
    titles = {}
    for sibling in sorted(path.parent.glob("*")):
        if sibling.is_file() and sibling != path and sibling.suffix.lower() in (".md", ".html", ".htm", ".txt"):
            titles[parse(sibling)[0]] = sibling
    hits = {t for t in titles if t and any(_norm(t) in _norm(r) for r in refs)}
    return next(iter(hits)) if len(hits) == 1 else None


def _sentences(text: str) -> list[str]:
    """The sentences of a text, as clozes quote them: split after . ! ? ; and a space or at a line break; no
    emphasis marks, list markers or end punctuation."""
    out = []
    for s in re.split(r"(?<=[.!?;])\s+|\n+", text):
        s = re.sub(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+", "", s.replace("*", ""))
        s = " ".join(s.split()).rstrip(".!?;: ")
        if s:
            out.append(s)
    return out


def _bare(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", " ".join(text.casefold().split()))


def _fill(cloze: str, blank: str, known: dict[str, str], texts: list[str]) -> str | None:
    """The one phrase that fills ``blank`` of ``cloze`` in the sentences of ``texts`` (the other blanks
    filled from ``known``, a name with or without its article); None when no sentence or several phrases do."""
    parts = re.split(r"(\[[A-Z]\])", cloze)
    pattern = ""
    for part in parts:
        if part == blank:
            pattern += "(.+?)"
        elif re.fullmatch(r"\[[A-Z]\]", part):
            if part not in known:
                return None
            pattern += r"(?:the |a |an )?" + re.escape(_bare(known[part]))
        else:
            pattern += re.escape(part)
    found = set()
    for text in texts:
        for sentence in _sentences(text):
            m = re.fullmatch(pattern, sentence, re.IGNORECASE)
            if m:
                found.add(m.group(1))
    return next(iter(found)) if len({_bare(f) for f in found}) == 1 else None


def _title_key(text: str) -> str:
    return _bare(re.sub(r"^(?:section\s+)?[\dIVX]+(?:\.\d+)*\.?\s+", "", text.replace("*", ""), flags=re.IGNORECASE))


def _pages(name: str, folders: list[Path]) -> list[str] | None:
    """The texts of the pages about ``name``: each document whose title, and each section whose heading, is
    the name (a document's page is all its sections, a section's its own text); None when there is none."""
    pages = []
    for folder in dict.fromkeys(folders):
        for path in sorted(folder.glob("*")):
            if not (path.is_file() and path.suffix.lower() in (".md", ".html", ".htm", ".txt")):
                continue
            title, sections = parse(path)
            title = title or path.stem.replace("_", " ")
            if _title_key(title) == _title_key(name):
                pages += [s.text for s in sections]
            else:
                pages += [s.text for s in sections if s.heading and _title_key(s.heading) == _title_key(name)]
    return pages or None


def _chain_answer(q: dict[str, Any], base: Path) -> str | None:
    """Fill [X] of the first cloze from the first document's sentences; then [Y] of the second: in the second
    document ("via": "fact", [X] filled), or on the pages whose title or heading is X ("via": "page")."""
    d = q["derivation"]
    first = [sec.text for sec in parse(base / d["sources"][0])[1]]
    x = _fill(d["first"], "[X]", {}, first)
    if x is None:
        return None
    if d["via"] == "page":
        texts = _pages(x, [(base / src).parent for src in d["sources"]])
        return _fill(d["second"], "[Y]", {"[X]": x}, texts) if texts is not None else None
    second = [sec.text for sec in parse(base / d["sources"][1])[1]]
    return _fill(d["second"], "[Y]", {"[X]": x}, second)


def derive(q: dict[str, Any], base: Path) -> str | None:
    d = q.get("derivation") or {}
    if q["kind"] == "chain_2hop":
        return _chain_answer(q, base)
    path = base / d["source"]
    _, sections = parse(path)
    if q["kind"] == "section":
        return _section_answer(q, sections)
    if q["kind"] == "citation_hop":
        return _citation_answer(q, sections, path)
    return _table_answer(q, sections)


def agrees(derived: str | None, q: dict[str, Any]) -> bool:
    if derived is None:
        return False
    want = q["answers"][0]
    a, b = number(derived.replace(",", "")), number(want.replace(",", ""))
    if a is not None and b is not None:
        return a == b
    return contains(derived, want)


def check(questions: list[dict[str, Any]], base: Path) -> dict[str, Any]:
    rows = []
    for q in questions:
        try:
            derived = derive(q, base)
        except (OSError, KeyError, TypeError) as exc:
            derived = f"error: {exc}"
        rows.append({"id": q["id"], "kind": q["kind"], "answer": q["answers"][0], "derived": derived, "ok": agrees(derived, q)})
    kinds = Counter(r["kind"] for r in rows)
    ok = Counter(r["kind"] for r in rows if r["ok"])
    return {
        "questions": len(rows),
        "agree": sum(ok.values()),
        "share": round(100 * sum(ok.values()) / max(len(rows), 1), 1),
        "kinds": {k: {"questions": kinds[k], "agree": ok[k]} for k in sorted(kinds)},
        "disagree": [r for r in rows if not r["ok"]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--base", type=Path, default=Path.cwd(), help="the folder the documents were ingested from (their ids are paths under it)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = check(questions, args.base)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    print(f"{result['agree']}/{result['questions']} answers re-derived from the documents ({result['share']}%)")
    for kind, c in result["kinds"].items():
        print(f"  {kind:16} {c['agree']}/{c['questions']}")
    for r in result["disagree"]:
        print(f"  disagree {r['id']}: generated {r['answer']!r}, derived {r['derived']!r}")


if __name__ == "__main__":
    main()

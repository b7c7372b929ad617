#!/usr/bin/env python3
"""Re-derive every canonical answer of the fresh_e set from the documents (standard library only).

Parses Markdown (headings, YAML front matter, pipe tables), HTML (headings, tables, paragraphs) and plain
text (setext headings), splits sentences, parses reference lists, then recomputes each answer by code and
checks questions.jsonl. Exits non-zero on any failure.
"""
import json, os, re, sys
from html.parser import HTMLParser

ROOT = os.path.dirname(os.path.abspath(__file__))
FAIL = []


def fail(msg):
    FAIL.append(msg)
    print("FAIL:", msg)


# ----------------------------------------------------------------------------------------- parsing
class Doc:
    def __init__(self, rel):
        self.rel = rel
        self.title = None
        self.front = {}
        self.headings = []          # (level, text)
        self.sections = {}          # heading text -> body text
        self.parents = {}           # heading text -> list of ancestor headings
        self.tables = []            # dict(section, path, header, rows)
        self.text = ""

    def add_heading(self, level, text, stack):
        text = text.strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        self.parents[text] = [h for _, h in stack]
        stack.append((level, text))
        self.headings.append((level, text))
        self.sections.setdefault(text, "")
        if level == 1 and self.title is None:
            self.title = text
        return text


def split_row(line):
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]


def parse_md(rel, raw):
    d = Doc(rel)
    lines = raw.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        for l in lines[1:end]:
            if ":" in l:
                k, v = l.split(":", 1)
                d.front[k.strip()] = v.strip()
        lines = lines[end + 1:]
    stack, cur, table = [], None, None
    for line in lines + [""]:
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if line.strip().startswith("|"):
            cells = split_row(line)
            if table is None:
                table = {"section": cur, "path": d.parents.get(cur, []) + [cur], "header": cells, "rows": []}
            elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
                table["rows"].append(cells)
            continue
        if table is not None:
            d.tables.append(table)
            table = None
        if m:
            cur = d.add_heading(len(m.group(1)), m.group(2), stack)
            continue
        if cur is not None:
            d.sections[cur] += line + "\n"
    d.text = "\n".join(lines)
    return d


def parse_txt(rel, raw):
    d = Doc(rel)
    lines = raw.split("\n")
    stack, cur, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"[=-]{3,}", nxt.strip()):
            cur = d.add_heading(1 if nxt.strip()[0] == "=" else 2, line, stack)
            i += 2
            continue
        if cur is not None:
            d.sections[cur] += line + "\n"
        i += 1
    d.text = raw
    return d


class _HP(HTMLParser):
    def __init__(self, d):
        super().__init__()
        self.d, self.stack, self.cur = d, [], None
        self.hbuf, self.hlevel = None, 0
        self.table, self.row, self.cell = None, None, None
        self.textparts = []

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.hbuf, self.hlevel = "", int(tag[1])
        elif tag == "table":
            self.table = {"section": self.cur, "path": self.d.parents.get(self.cur, []) + [self.cur], "header": None, "rows": []}
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag in ("br", "p"):
            self._text("\n")

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self.hbuf is not None:
            self.cur = self.d.add_heading(self.hlevel, self.hbuf, self.stack)
            self.textparts.append("\n" + self.hbuf + "\n")
            self.hbuf = None
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell.strip())
            self._text(" ")
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.table["header"] is None:
                self.table["header"] = self.row
            else:
                self.table["rows"].append(self.row)
            self.row = None
        elif tag == "table":
            self.d.tables.append(self.table)
            self.table = None

    def _text(self, s):
        self.textparts.append(s)
        if self.cur is not None and self.hbuf is None:
            self.d.sections[self.cur] += s

    def handle_data(self, data):
        if self.hbuf is not None:
            self.hbuf += data
            return
        if self.cell is not None:
            self.cell += data
        if self.stack or self.cur:
            self._text(data)


def parse_html(rel, raw):
    d = Doc(rel)
    p = _HP(d)
    p.feed(raw)
    d.text = "".join(p.textparts)
    return d


DOCS = {}
for fn in sorted(os.listdir(os.path.join(ROOT, "docs"))):
    rel = "docs/" + fn
    raw = open(os.path.join(ROOT, rel), encoding="utf-8").read()
    if fn.endswith(".md"):
        DOCS[rel] = parse_md(rel, raw)
    elif fn.endswith(".html"):
        DOCS[rel] = parse_html(rel, raw)
    elif fn.endswith(".txt"):
        DOCS[rel] = parse_txt(rel, raw)
BY_TITLE = {d.title: d for d in DOCS.values()}


# ----------------------------------------------------------------------------------------- helpers
def num(s):
    s = s.strip().replace("$", "").replace(",", "")
    neg = s.startswith("(") and s.endswith(")")
    s = s.strip("()")
    v = float(s)
    return -v if neg else v


def first_number(s):
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", s)
    return float(m.group(0).replace(",", "")) if m else None


def sentences(text):
    text = re.sub(r"\s+", " ", text)
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\[(])", text) if s.strip()]


def doc_by(pred):
    hits = [d for d in DOCS.values() if pred(d)]
    assert len(hits) == 1, [d.rel for d in hits]
    return hits[0]


BUDGET = doc_by(lambda d: "Biennial Capital and Operating Budget" in (d.title or ""))
MEMO = doc_by(lambda d: (d.title or "").startswith("Audit Memorandum"))
CALLS = sorted([d for d in DOCS.values() if d.front.get("company", "").startswith("Brightcairn")],
               key=lambda d: (int(d.front["year"]), d.front["quarter"]))


def table_in(doc, section):
    ts = [t for t in doc.tables if t["section"] == section]
    assert len(ts) == 1, (doc.rel, section, len(ts))
    return ts[0]


def col_index(t, col):
    idx = [i for i, h in enumerate(t["header"]) if h == col] or \
          [i for i, h in enumerate(t["header"]) if h.startswith(col)]
    assert len(idx) == 1, (t["header"], col)
    return idx[0]


def cell(doc, section, row, col):
    t = table_in(doc, section)
    ci = col_index(t, col)
    rs = [r for r in t["rows"] if r[0] == row]
    assert len(rs) == 1, (section, row)
    return num(rs[0][ci])


def section_of_row(doc, row):
    hits = [t["section"] for t in doc.tables if any(r[0] == row for r in t["rows"])]
    assert len(hits) == 1, (row, hits)
    return hits[0]


def latest_value(segment, period):
    """Value of segment in period from the most recent call reporting it (picks up restatements)."""
    val = None
    for d in CALLS:
        for t in d.tables:
            for i, h in enumerate(t["header"]):
                if h == period or h.startswith(period + " ("):
                    for r in t["rows"]:
                        if r[0] == segment:
                            val = num(r[i])
    assert val is not None, (segment, period)
    return val


def page(title):
    return BY_TITLE[title]


ENTITY_TITLES = [d.title for d in DOCS.values() if not d.front and d.rel.endswith(".md")
                 and "References" not in d.sections and d is not BUDGET]


def link(title, cue):
    """Follow the page `title`: the sentence containing `cue` must name exactly one other entity page."""
    for s in sentences(page(title).text):
        if cue.lower() in s.lower():
            names = [t for t in ENTITY_TITLES if t != title and t in s]
            # drop names that are substrings of a longer matched name (none expected)
            if len(names) == 1:
                return names[0]
    raise AssertionError(f"no link from {title} via {cue!r}")


def fact(title, pattern):
    m = re.search(pattern, re.sub(r"\s+", " ", page(title).text))
    assert m, (title, pattern)
    return m.group(1)


def references(doc):
    body = doc.sections["References"]
    refs = []
    for line in body.split("\n"):
        m = re.match(r"^\s*(?:\[(\d+)\]|(\d+)\.|-)\s+(.+)$", line)
        if not m:
            continue
        entry = m.group(3)
        mm = re.match(r"^(.+?)\((\d{4})\)\.\s+(.+?)\.\s", entry)
        refs.append({"n": int(m.group(1) or m.group(2) or 0), "authors": mm.group(1), "year": mm.group(2),
                     "title": mm.group(3)})
    return refs


def cited_by_cue(doc, cue):
    """Find the citation marker that follows `cue` in the citing paper and return the cited reference."""
    text = re.sub(r"\s+", " ", doc.text.split("References")[0])
    m = re.search(re.escape(cue) + r"[^\[(]*?(?:\[(\d+)\]|\(([A-Z][\w-]+)(?: and [A-Z][\w-]+| et al\.)?, (\d{4})\))", text)
    assert m, (doc.rel, cue)
    refs = references(doc)
    if m.group(1):
        r = [r for r in refs if r["n"] == int(m.group(1))]
    else:
        r = [r for r in refs if r["authors"].startswith(m.group(2)) and r["year"] == m.group(3)]
    assert len(r) == 1, (cue, r)
    return r[0]


def ref_number(doc, n):
    r = [r for r in references(doc) if r["n"] == n]
    assert len(r) == 1
    return r[0]


def results(title):
    return re.sub(r"\s+", " ", BY_TITLE[title].sections["Results"])


P_FREEZE = doc_by(lambda d: "Freeze-Thaw" in (d.title or ""))
P_TEMP = doc_by(lambda d: (d.title or "").startswith("Temperature Compensation"))
P_LBAND = doc_by(lambda d: (d.title or "").startswith("Fusing L-Band"))

OPS = "2 Operating Budget"
FY25, FY26 = "FY2025", "FY2026"


def painter_of(painting):
    for d in DOCS.values():
        if re.search(r"best-known painting is " + re.escape(painting), d.text):
            return d.title
    raise AssertionError(painting)


def q_sum_salaries():
    return sum(num(r[col_index(t, FY26)]) for t in BUDGET.tables if OPS in t["path"]
               for r in t["rows"] if r[0] == "Salaries and Wages")


def q_discrepancy_meter():
    budget = cell(BUDGET, "2.2 Distribution Division", "Meter Replacement", FY25)
    audited = cell(MEMO, "2.3 Summary of differences", "Meter Replacement, FY2025", "Audited figure")
    assert budget != audited, "memo should disagree with the budget"
    return audited


def q_sequential():
    original_q1 = [num(r[col_index(t, "Q1 2025")]) for t in CALLS[0].tables for r in t["rows"] if r[0] == "Total revenue"][0]
    restated_q1 = latest_value("Total revenue", "Q1 2025")
    assert original_q1 != restated_q1, "Q1 should be restated"
    return round(latest_value("Total revenue", "Q2 2025") - restated_q1, 1)


DERIVE = {
    "fresh_e-01": lambda: cell(BUDGET, "2.2 Distribution Division", "Salaries and Wages", FY26),
    "fresh_e-02": lambda: num(fact(link("Edda Marrowby", "born"), r"population of ([\d,]+)")),
    "fresh_e-03": q_sum_salaries,
    "fresh_e-04": lambda: float(re.search(r"RMSE against gravimetric samples was ([\d.]+)%",
                                          results(cited_by_cue(P_FREEZE, "orchards")["title"])).group(1)),
    "fresh_e-05": q_sequential,
    "fresh_e-06": lambda: section_of_row(BUDGET, "Energy Recovery Turbine"),
    "fresh_e-07": lambda: float(fact(link(link("Orrin Kell", "shore"), "outlet"), r"main span is (\d+) metres")),
    "fresh_e-08": q_discrepancy_meter,
    "fresh_e-09": lambda: latest_value("Analytics Suite", "Q2 2025"),
    "fresh_e-11": lambda: float(re.search(r"drift [^.]*?was ([\d.]+)% volumetric water content per month",
                                          results(cited_by_cue(P_TEMP, "drift")["title"])).group(1)),
    "fresh_e-12": lambda: cell(BUDGET, "3.2.1 North Zone Mains", "Main Replacement", FY25)
                          + cell(BUDGET, "3.2.2 South Zone Mains", "Main Replacement", FY25),
    "fresh_e-13": lambda: float(fact(link(link(painter_of("Evening on Lake Vessendal"), "born"), "shipbuilder"),
                                     r"founded in (\d{4})")),
    "fresh_e-14": lambda: latest_value("Total revenue", "Q1 2025"),
    "fresh_e-15": lambda: float(fact(link("Edda Marrowby", "best-known painting"), r"surface area of ([\d.]+) km²")),
    "fresh_e-16": lambda: round(sum(latest_value("Professional Services", f"Q{q} 2025") for q in (1, 2, 3)), 1),
    "fresh_e-17": lambda: round(latest_value("Cloud Platform", "Q3 2025") - latest_value("Cloud Platform", "Q3 2024"), 1),
    "fresh_e-18": lambda: section_of_row(BUDGET, "Billing Systems"),
    "fresh_e-19": lambda: float(re.search(r"(\d+) orchard sites", results(ref_number(P_LBAND, 2)["title"])).group(1)),
    "fresh_e-20": lambda: cell(BUDGET, "3.3 Capital Funding", "Capital Grants", FY26)
                          - cell(MEMO, "2.3 Summary of differences", "Capital Grants, FY2026", "Audited figure"),
    "fresh_e-21": lambda: cell(BUDGET, "4.1 Debt Service Schedule", "Interest — Series 2019 Bonds", FY25),
    "fresh_e-22": lambda: fact(link("Tarrant & Loame", "fabricated"), r"designed by the engineer ([A-Z]\w+ [A-Z]\w+)"),
    "fresh_e-23": lambda: round((cell(BUDGET, "2.3 Customer Services Division", "Billing Systems", FY26)
                                 / cell(BUDGET, "2.3 Customer Services Division", "Billing Systems", FY25) - 1) * 100, 1),
    "fresh_e-25": lambda: cell(BUDGET, "2.1 Treatment Division", "Energy", FY26)
                          - cell(BUDGET, "2.2 Distribution Division", "Energy", FY26),
    "fresh_e-26": lambda: float(fact(link(link("Tarrant & Loame", "fabricated"), "outlet"), r"maximum depth of (\d+) metres")),
}


def unanswerable_checks(qid):
    if qid == "fresh_e-10":
        assert "FY2027" not in BUDGET.text and "FY2027" not in MEMO.text, "FY2027 appears"
    elif qid == "fresh_e-24":
        for d in CALLS:
            assert d.front["quarter"] != "Q4"
            for t in d.tables:
                assert not any(h.startswith("Q4 2025") for h in t["header"]), "Q4 2025 column appears"
        assert re.search(r"not providing a revenue range for the fourth quarter", CALLS[-1].text)


# ----------------------------------------------------------------------------------------- table checks
def check_tables():
    n = 0
    for t in BUDGET.tables:
        h = t["header"]
        i25, i26, ich = col_index(t, FY25), col_index(t, FY26), col_index(t, "Change")
        items = [r for r in t["rows"] if not r[0].startswith("Total")]
        totals = [r for r in t["rows"] if r[0].startswith("Total")]
        if len(totals) != 1:
            fail(f"budget table {t['section']}: expected one Total row")
            continue
        for r in t["rows"]:
            if abs(num(r[i26]) - num(r[i25]) - num(r[ich])) > 1e-9:
                fail(f"budget {t['section']} row {r[0]}: change column wrong")
        for ci in (i25, i26, ich):
            s = sum(num(r[ci]) for r in items)
            if abs(s - num(totals[0][ci])) > 1e-9:
                fail(f"budget {t['section']} column {h[ci]}: items sum {s} != total {totals[0][ci]}")
        n += 1
    # cross-table consistency
    for col in (FY25, FY26):
        div = sum(cell(BUDGET, s, "Total", col) for s in
                  ("2.1 Treatment Division", "2.2 Distribution Division", "2.3 Customer Services Division"))
        if -div != cell(BUDGET, "1.2 Summary of Funds", "Operating Expenditure", col):
            fail(f"operating expenditure {col} does not match division totals")
        if cell(BUDGET, "2.4 Operating Revenue", "Total", col) != cell(BUDGET, "1.2 Summary of Funds", "Operating Revenue", col):
            fail(f"operating revenue {col} mismatch")
        if -cell(BUDGET, "4.1 Debt Service Schedule", "Total", col) != cell(BUDGET, "1.2 Summary of Funds", "Debt Service", col):
            fail(f"debt service {col} mismatch")
        if cell(BUDGET, "1.2 Summary of Funds", "Total Transfer to Capital Fund", col) != \
                cell(BUDGET, "3.3 Capital Funding", "Transfer from Operating Fund", col):
            fail(f"transfer {col} mismatch")
        cap = sum(cell(BUDGET, s, "Total", col) for s in ("3.1.1 Harrowgate Treatment Works", "3.1.2 Tessin Reservoir Intake",
                                                         "3.2.1 North Zone Mains", "3.2.2 South Zone Mains"))
        if cap != cell(BUDGET, "3.3 Capital Funding", "Total", col):
            fail(f"capital projects {col} != capital funding total")
    # memo difference column
    for r in table_in(MEMO, "2.3 Summary of differences")["rows"]:
        if num(r[2]) - num(r[1]) != num(r[3]):
            fail(f"memo row {r[0]} difference wrong")
    # earnings segment tables add up
    for d in CALLS:
        for t in d.tables:
            tot = [r for r in t["rows"] if r[0] == "Total revenue"][0]
            for ci in range(1, len(t["header"])):
                s = round(sum(num(r[ci]) for r in t["rows"] if r is not tot), 1)
                if abs(s - num(tot[ci])) > 1e-6:
                    fail(f"{d.rel} column {t['header'][ci]} sums to {s}, total says {tot[ci]}")
    return n


# ----------------------------------------------------------------------------------------- main
def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def main():
    qs = [json.loads(l) for l in open(os.path.join(ROOT, "questions.jsonl"), encoding="utf-8") if l.strip()]
    want = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
            "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}
    counts = {}
    for q in qs:
        counts[q["kind"]] = counts.get(q["kind"], 0) + 1
    if counts != want:
        fail(f"kind counts {counts} != {want}")
    half = len(qs) // 2
    for k in want:
        a = sum(q["kind"] == k for q in qs[:half])
        b = sum(q["kind"] == k for q in qs[half:])
        if abs(a - b) > 1:
            fail(f"kind {k} unbalanced across halves: {a} vs {b}")
    ids = [q["id"] for q in qs]
    if ids != [f"fresh_e-{i:02d}" for i in range(1, len(qs) + 1)]:
        fail("ids not sequential")
    ntab = check_tables()

    ok = 0
    for q in qs:
        qid = q["id"]
        for g in q["gold_docs"]:
            if g not in DOCS:
                fail(f"{qid}: gold doc {g} missing")
        heads = {h for g in q["gold_docs"] if g in DOCS for _, h in DOCS[g].headings}
        for s in q["gold_sections"]:
            if s not in heads:
                fail(f"{qid}: gold section {s!r} is not a heading of its gold docs")
        if q["kind"] == "unanswerable":
            if q["answers"] or q["gold_docs"] or q["answer_type"] != "not_found":
                fail(f"{qid}: unanswerable must have empty answers/gold_docs and not_found")
            try:
                unanswerable_checks(qid)
                ok += 1
                print(f"ok   {qid} unanswerable (checked absent)")
            except AssertionError as e:
                fail(f"{qid}: {e}")
            continue
        if q["answer_type"] == "span":
            texts = [norm(DOCS[g].text) for g in q["gold_docs"] if g in DOCS]
            if not any(norm(a) in t for a in q["answers"] for t in texts):
                fail(f"{qid}: no answer form occurs in a gold document")
        try:
            got = DERIVE[qid]()
        except Exception as e:  # noqa
            fail(f"{qid}: derivation error {type(e).__name__}: {e}")
            continue
        canon = q["answers"][0]
        if isinstance(got, str):
            good = norm(got) == norm(canon)
        else:
            exp = first_number(canon)
            good = exp is not None and abs(exp - got) < 0.05 + 1e-9
        if good:
            ok += 1
            print(f"ok   {qid} {q['kind']:<17} derived={got!r:<32} answer={canon!r}")
        else:
            fail(f"{qid}: derived {got!r} but canonical answer is {canon!r}")
    print(f"\n{len(DOCS)} documents, {len(qs)} questions, {ntab} budget tables checked; kinds: " +
          ", ".join(f"{k}={counts.get(k, 0)}" for k in want))
    print(f"{ok}/{len(qs)} answers re-derived")
    if FAIL:
        print(f"{len(FAIL)} failure(s)")
        sys.exit(1)
    print("ALL CHECKS PASSED")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Re-derive every answer of the fresh_k set from the documents (standard library only)."""
import json, os, re, sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
FAIL = []

def fail(msg):
    FAIL.append(msg)
    print("FAIL:", msg)

# ---------------------------------------------------------------- parsing
class Doc:
    def __init__(self, path):
        self.path = path
        self.title = None
        self.front = {}
        self.headings = []          # (level, text)
        self.sections = {}          # heading text -> list of text blocks (paragraphs)
        self.tables = []            # (heading, rows) rows = list of list of str
        self.text = ""

    def add_text(self, heading, txt):
        self.sections.setdefault(heading, []).append(txt)

    def section_text(self, heading):
        return " ".join(self.sections.get(heading, []))

def split_row(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]

def parse_markdown(path, text, setext=False):
    d = Doc(path)
    lines = text.split("\n")
    i = 0
    if lines and lines[0].strip() == "---":
        j = lines.index("---", 1)
        for l in lines[1:j]:
            k, _, v = l.partition(":")
            d.front[k.strip()] = v.strip()
        i = j + 1
    cur = None
    table = None
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if not setext and m:
            cur = m.group(2).strip()
            d.headings.append((len(m.group(1)), cur))
            if len(m.group(1)) == 1 and d.title is None:
                d.title = cur
            table = None
        elif setext and line.strip() and re.match(r"^(=+|-+)\s*$", nxt):
            lvl = 1 if nxt.strip().startswith("=") else 2
            cur = line.strip()
            d.headings.append((lvl, cur))
            if lvl == 1 and d.title is None:
                d.title = cur
            i += 1
            table = None
        elif line.strip().startswith("|"):
            cells = split_row(line)
            if all(re.match(r"^:?-+:?$", c) for c in cells):
                pass
            elif table is None:
                table = [cells]
                d.tables.append((cur, table))
            else:
                table.append(cells)
        else:
            table = None
            if line.strip():
                d.add_text(cur, line.strip())
        i += 1
    d.text = text
    return d

class HP(HTMLParser):
    def __init__(self, doc):
        super().__init__()
        self.d = doc; self.cur = None; self.buf = None; self.tag = None
        self.table = None; self.row = None; self.cell = None
    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2", "h3", "h4", "p"):
            self.tag = tag; self.buf = []
        elif tag == "table":
            self.table = []; self.d.tables.append((self.cur, self.table))
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []
    def handle_endtag(self, tag):
        if tag == self.tag and self.buf is not None:
            txt = re.sub(r"\s+", " ", "".join(self.buf)).strip()
            if tag.startswith("h"):
                self.cur = txt; self.d.headings.append((int(tag[1]), txt))
                if tag == "h1" and self.d.title is None:
                    self.d.title = txt
            else:
                self.d.add_text(self.cur, txt)
            self.buf = None; self.tag = None
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip()); self.cell = None
        elif tag == "tr" and self.row is not None:
            self.table.append(self.row); self.row = None
        elif tag == "table":
            self.table = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        elif self.buf is not None:
            self.buf.append(data)

def parse(path):
    with open(os.path.join(HERE, path), encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".html"):
        d = Doc(path); HP(d).feed(text)
        d.text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text))
        return d
    return parse_markdown(path, text, setext=path.endswith(".txt"))

DOCS = {("docs/" + f): parse("docs/" + f) for f in sorted(os.listdir(os.path.join(HERE, "docs")))}
BY_TITLE = {d.title.lower(): p for p, d in DOCS.items()}

# ---------------------------------------------------------------- helpers
def num(s):
    s = str(s).strip()
    neg = s.startswith("(") and s.endswith(")") or s.startswith("-") or s.startswith("−")
    m = re.search(r"\d[\d,]*(?:\.\d+)?", s)
    if not m:
        return None
    v = float(m.group(0).replace(",", ""))
    return -v if neg else v

def table(doc, heading):
    for h, rows in DOCS[doc].tables:
        if h == heading:
            return rows
    raise KeyError(f"no table under {heading!r} in {doc}")

def cell(doc, heading, row, col):
    rows = table(doc, heading)
    ci = rows[0].index(col)
    hits = [r for r in rows[1:] if r[0] == row]
    assert len(hits) == 1, (doc, heading, row)
    return num(hits[0][ci])

def sentences(doc, heading=None):
    d = DOCS[doc]
    blocks = d.sections.get(heading, []) if heading else [t for v in d.sections.values() for t in v]
    out = []
    for b in blocks:
        out += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\[])", b) if s.strip()]
    return out

def find_sentence(doc, pattern, heading=None):
    hits = [s for s in sentences(doc, heading) if re.search(pattern, s)]
    assert hits, f"no sentence /{pattern}/ in {doc}"
    return hits[0]

def grab(doc, pattern, heading=None):
    s = find_sentence(doc, pattern, heading)
    return re.search(pattern, s).group(1)

def section_of(doc, predicate):
    """Heading of the table whose row satisfies predicate, with its ancestors ([0] is the H1 title)."""
    d = DOCS[doc]
    for h, rows in d.tables:
        if any(predicate(r) for r in rows[1:]):
            idx = [t for _, t in d.headings].index(h)
            lvl = d.headings[idx][0]
            chain = [h]
            for l, t in reversed(d.headings[:idx]):
                if l < lvl:
                    chain.insert(0, t); lvl = l
            return chain
    raise KeyError

ENCYC = [p for p in DOCS if not re.search(r"paper_|tessaline|harrowmere", p)]
def hop(doc, pattern, heading=None):
    """Follow a link: the other encyclopedia entity named in the sentence matching pattern."""
    s = find_sentence(doc, pattern, heading)
    me = DOCS[doc].title
    names = [DOCS[p].title for p in ENCYC if DOCS[p].title != me and DOCS[p].title in s]
    assert len(names) == 1, (doc, s, names)
    return BY_TITLE[names[0].lower()]

def cited(doc, phrase):
    """Follow a numeric citation marker in the sentence containing phrase to the cited document."""
    s = find_sentence(doc, re.escape(phrase) + r"[^.]*?\[\d+\]")
    m = re.findall(re.escape(phrase) + r"[^.\[]*?\[(\d+)\]", s)   # the marker right after the phrase
    assert len(m) == 1, (doc, s)
    ref = [r for r in DOCS[doc].sections["References"] if r.startswith(f"[{m[0]}]")][0]
    title = re.search(r"\(\d{4}\)\.\s+(.+?)\.\s", ref).group(1)
    assert title.lower() in BY_TITLE, f"cited work {title!r} not in collection"
    return BY_TITLE[title.lower()]

B = "docs/harrowmere_financial_plan_2025.md"; A = "docs/harrowmere_audit_memo_IA-2025-03.html"
T1, T2, T3 = "docs/tessaline_q1_2024.md", "docs/tessaline_q2_2024.md", "docs/tessaline_q3_2024.md"
P3, P4, P5 = "docs/paper_denholm_2021.md", "docs/paper_fennick_odo_2022.md", "docs/paper_rolle_2023.md"
V, S, F = "docs/odrun_vastelle.md", "docs/saltmarsh_signal_house.html", "docs/brindlecote_foundry.md"
Y25, Y24 = "2025 Proposed", "2024 Approved"
UNITS = {"Northern Beacons Division": ["1.1.1 Staffing and Supplies", "1.1.2 Lamp Renewal Programme"],
         "Southern Beacons Division": ["1.2.1 Staffing and Supplies", "1.2.2 Lamp Renewal Programme"],
         "Tender Fleet": ["1.3.1 Vessel Operations"]}

def audit(unit, item, col):
    rows = table(A, "2.1 Figures Not Supported")
    ci = rows[0].index(col)
    return num([r for r in rows[1:] if r[0] == unit and r[1] == item][0][ci])

def tess(doc, seg, col):
    return cell(doc, "Segment Performance", seg, col)

def not_found_tessaline_q4():
    for p in (T1, T2, T3):
        for h, rows in DOCS[p].tables:
            assert not any("Q4" in c for c in rows[0]), p
        assert DOCS[p].front["quarter"] != "Q4"
    return None

def not_found_eastern():
    assert not any("Eastern Beacons" in d.text for d in DOCS.values())
    return None

def cited_value(src, phrase, pattern, heading):
    return grab(cited(src, phrase), pattern, heading)

DERIVE = {
 1: lambda: cell(B, "1.2.1 Staffing and Supplies", "Personnel", Y25),
 2: lambda: sum(cell(B, h, "Personnel", Y25) for hs in UNITS.values() for h in hs
                if any(r[0] == "Personnel" for r in table(B, h))),
 3: lambda: grab(hop(V, r"born in", "Early life"), r"population of .* was ([\d,]+)"),
 4: lambda: round(tess(T3, "Marine Lines", "Q3 2024") - tess(T3, "Marine Lines", "Q3 2023"), 2),
 5: lambda: cited_value(P3, "baseline summer drift", r"was ([\d.]+ mm per month) during summer", "Results"),
 6: lambda: audit("Southern Beacons Division", "Fuel and lubricants", "Audit figure"),
 7: lambda: section_of(B, lambda r: r[0] == "Dry-dock reserve")[-1],
 8: lambda: cell(T2, "Restatement of First Quarter Figures", "Total", "Q1 2024 restated"),
 9: lambda: grab(hop(hop(F, r"founded .* by"), r"designed the"), r"is (\d+ metres) tall"),
 10: not_found_tessaline_q4,
 11: lambda: cell(B, "1.1.2 Lamp Renewal Programme", "Capital works", Y25) - cell(B, "1.2.2 Lamp Renewal Programme", "Capital works", Y25),
 12: lambda: cell(B, "1.2.2 Lamp Renewal Programme", "Total", Y25) - cell(B, "1.2.2 Lamp Renewal Programme", "Total", Y24),
 13: lambda: cited_value(P4, "copper-mesh guards", r"showed (\d+%) less drift", "Results"),
 14: lambda: tess(T3, "Industrial Slings", "Q3 2024"),
 15: lambda: grab(hop(S, r"stands at the mouth"), r"flows (\d+ km)"),
 16: lambda: round(cell(T2, "Restatement of First Quarter Figures", "Arborist Gear", "Q1 2024 restated")
                   + tess(T2, "Arborist Gear", "Q2 2024") + tess(T3, "Arborist Gear", "Q3 2024"), 2),
 17: lambda: grab(hop(hop(hop(S, r"designed by"), r"born in"), r"stands on"), r"rises in the ([A-Z]\w+ [A-Z]\w+)"),
 18: lambda: audit("Tender Fleet", "Dry-dock reserve", "Audit figure") - cell(B, "1.3.1 Vessel Operations", "Dry-dock reserve", Y25),
 19: lambda: cited_value(P5, "field comparison", r"deployed (\d+) sensors", "Method"),
 20: lambda: section_of(B, lambda r: r[0] == "Marinas")[1],
 21: lambda: round(tess(T3, "Total", "Q3 2024") - tess(T2, "Total", "Q2 2024"), 2),
 22: lambda: cell(B, "2.1.1 Collections by Port Class", "Fishing harbours", Y25),
 23: lambda: grab(hop(S, r"lantern gallery was cast by"), r"founded in (\d{4})"),
 24: lambda: sum(cell(B, hs[0], "Fuel and lubricants", Y24) for hs in UNITS.values()),
 25: lambda: grab(hop(hop(S, r"lantern gallery was cast by"), r"based in"), r"market charter in (\d{4})"),
 26: not_found_eastern,
}

# ---------------------------------------------------------------- checks
def norm(s):
    return re.sub(r"[^a-z0-9.%]+", " ", str(s).lower()).strip()

qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]

# 1. budget / financial tables add up
def check_totals(doc, cols_from=1):
    for h, rows in DOCS[doc].tables:
        hdr = rows[0]
        body = [r for r in rows[1:] if r[0] != "Total"]
        tot = [r for r in rows[1:] if r[0] == "Total"]
        if tot:
            for ci in range(cols_from, len(hdr)):
                s = round(sum(num(r[ci]) for r in body), 2)
                if abs(s - num(tot[0][ci])) > 1e-6:
                    fail(f"{doc} {h}: column {hdr[ci]} sums to {s}, Total row says {tot[0][ci]}")
        if "Change" in hdr:
            a, b, c = hdr.index(Y24), hdr.index(Y25), hdr.index("Change")
            for r in rows[1:]:
                if abs(num(r[b]) - num(r[a]) - num(r[c])) > 1e-6:
                    fail(f"{doc} {h}: row {r[0]} change {r[c]} != {r[b]} - {r[a]}")
check_totals(B)
for t in (T1, T2, T3):
    check_totals(t)
# summary table in budget equals unit sums
summ = table(B, "3.1 Operating Expenditure by Unit")
for unit, hs in UNITS.items():
    for col in (Y24, Y25):
        s = sum(cell(B, h, "Total", col) for h in hs)
        if s != cell(B, "3.1 Operating Expenditure by Unit", unit, col):
            fail(f"summary {unit} {col}: {s}")
for r in table(A, "2.1 Figures Not Supported")[1:]:
    if num(r[3]) - num(r[2]) != num(r[4]):
        fail(f"audit memo row {r[:2]} difference wrong")
    if cell(B, [h for h in UNITS[r[0]] if any(x[0] == r[1] for x in table(B, h)[1:])][0], r[1], Y25) != num(r[2]):
        fail(f"audit memo plan figure for {r[:2]} does not match the plan")
print("budget, audit and segment tables: checked")

# 2. answers
for q in qs:
    n = int(q["id"].split("-")[1])
    try:
        got = DERIVE[n]()
    except Exception as e:
        fail(f"{q['id']}: derivation error {e!r}"); continue
    ans = q["answers"]
    if q["answer_type"] == "not_found":
        if ans or q["gold_docs"] or got is not None:
            fail(f"{q['id']}: unanswerable question must have empty answers/gold_docs")
        print(f"{q['id']} {q['kind']:<17} derived: (not found)  OK")
        continue
    canon = ans[0]
    if isinstance(got, (int, float)):
        ok = num(canon) is not None and abs(num(canon) - got) < 1e-6
    else:
        g = num(got) if re.fullmatch(r"[\d.,%]+", str(got).split()[0]) and num(got) is not None and num(canon) is not None else None
        ok = (abs(num(canon) - g) < 1e-6 and norm(str(got)).split()[1:] == norm(canon).split()[1:]) if g is not None else norm(got) == norm(canon)
    print(f"{q['id']} {q['kind']:<17} derived: {got!s:<28} canonical: {canon:<24} {'OK' if ok else 'MISMATCH'}")
    if not ok:
        fail(f"{q['id']}: derived {got!r} != canonical {canon!r}")
    for p in q["gold_docs"]:
        if p not in DOCS:
            fail(f"{q['id']}: gold doc {p} missing")
    heads = {t for p in q["gold_docs"] for _, t in DOCS[p].headings}
    for s in q["gold_sections"]:
        if s not in heads:
            fail(f"{q['id']}: gold section {s!r} is not a heading of its gold docs")
    if q["answer_type"] == "span":
        txt = " ".join(DOCS[p].text for p in q["gold_docs"])
        found = any(a in txt for a in ans)
        if not found:   # numeric span, e.g. -37 written as (37)
            cells = [num(c) for p in q["gold_docs"] for _, rows in DOCS[p].tables for r in rows for c in r]
            found = num(canon) in cells
        if not found:
            fail(f"{q['id']}: span answer not found in gold documents")

# 3. kinds balanced
TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
          "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}
half = len(qs) // 2
for k, t in TARGET.items():
    a = sum(q["kind"] == k for q in qs[:half]); b = sum(q["kind"] == k for q in qs[half:])
    if a + b != t or abs(a - b) > 1:
        fail(f"kind {k}: {a}+{b} (target {t}, halves within 1)")
ids = [q["id"] for q in qs]
if ids != [f"fresh_k-{i:02d}" for i in range(1, len(qs) + 1)]:
    fail("ids not sequential")
tab = sum(q["kind"] in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy") for q in qs)
if tab * 2 < len(qs):
    fail("fewer than half of the questions are about tables, sums, comparisons and sections")
print(f"documents: {len(DOCS)}  questions: {len(qs)}  table/sum/comparison/section questions: {tab}")
print("kinds:", {k: sum(q['kind'] == k for q in qs) for k in TARGET})
if FAIL:
    print(f"{len(FAIL)} failure(s)"); sys.exit(1)
print("ALL CHECKS PASSED")

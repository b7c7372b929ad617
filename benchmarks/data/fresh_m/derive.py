#!/usr/bin/env python3
"""Re-derive every canonical answer in questions.jsonl from the documents in docs/ (standard library only)."""
import json, os, re, sys
from html.parser import HTMLParser

ROOT = os.path.dirname(os.path.abspath(__file__))
FAIL = []

def fail(msg):
    FAIL.append(msg)
    print("FAIL:", msg)

# ---------------------------------------------------------------- parsing
class Doc:
    def __init__(self, path):
        self.path = path
        self.raw = open(os.path.join(ROOT, path), encoding="utf-8").read()
        self.meta = {}
        self.title = None
        self.headings = []          # heading texts in order
        self.sections = {}          # heading -> body text
        self.tables = []            # {"section": h, "rows": [[cells]]}
        if path.endswith(".md"):
            self._md()
        elif path.endswith(".html"):
            self._html()
        else:
            self._txt()
        self.text = "\n".join([self.title or ""] + [h + "\n" + self.sections.get(h, "") for h in self.headings])

    def _add(self, h):
        self.headings.append(h)
        self.sections.setdefault(h, "")

    def _md(self):
        text = self.raw
        m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
        if m:
            for line in m.group(1).splitlines():
                k, _, v = line.partition(":")
                self.meta[k.strip()] = v.strip()
            text = text[m.end():]
        cur = None
        table = None
        for line in text.splitlines():
            hm = re.match(r"^(#{1,6})\s+(.*\S)\s*$", line)
            if hm:
                table = None
                if len(hm.group(1)) == 1 and self.title is None:
                    self.title = hm.group(2)
                cur = hm.group(2)
                self._add(cur)
                continue
            if line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if all(re.fullmatch(r":?-+:?", c) for c in cells):
                    continue
                if table is None:
                    table = {"section": cur, "rows": []}
                    self.tables.append(table)
                table["rows"].append(cells)
                continue
            table = None
            if cur is not None:
                self.sections[cur] += line + "\n"

    def _html(self):
        doc = self
        class P(HTMLParser):
            def __init__(s):
                super().__init__(); s.h = None; s.buf = ""; s.cur = None; s.row = None; s.cell = None; s.table = None
            def handle_starttag(s, tag, a):
                if re.fullmatch(r"h[1-6]", tag): s.h = tag; s.buf = ""
                elif tag == "table": s.table = {"section": s.cur, "rows": []}; doc.tables.append(s.table)
                elif tag == "tr": s.row = []
                elif tag in ("td", "th"): s.cell = ""
            def handle_endtag(s, tag):
                if s.h == tag:
                    t = s.buf.strip()
                    if tag == "h1" and doc.title is None: doc.title = t
                    s.cur = t; doc._add(t); s.h = None
                elif tag in ("td", "th"): s.row.append(s.cell.strip()); s.cell = None
                elif tag == "tr": s.table["rows"].append(s.row); s.row = None
                elif tag == "table": s.table = None
                elif tag == "p" and s.cur: doc.sections[s.cur] += "\n"
            def handle_data(s, d):
                if s.h: s.buf += d
                elif s.cell is not None: s.cell += d
                elif s.cur and s.table is None: doc.sections[s.cur] += d
        P().feed(self.raw)

    def _txt(self):
        lines = self.raw.splitlines()
        cur = None
        for line in lines:
            s = line.strip()
            if self.title is None and s:
                self.title = s; cur = s; self._add(s); continue
            if re.fullmatch(r"\d+(\.\d+)*\s+[A-Z][^.]{2,70}", s):
                cur = s; self._add(s); continue
            if cur: self.sections[cur] += line + "\n"

    def section(self, h):
        if h not in self.sections:
            fail(f"{self.path}: no section {h!r}")
            return ""
        return self.sections[h]

    def sentences(self, h=None):
        body = self.sections[h] if h else self.text
        return [x.strip() for x in re.split(r"(?<=[.!?])\s+", body.replace("\n", " ")) if x.strip()]

    def table_with_row(self, label):
        return [t for t in self.tables if any(r[0] == label for r in t["rows"])]

    def cell(self, section, row, col):
        for t in self.tables:
            if t["section"] != section: continue
            hdr = t["rows"][0]
            if col not in hdr: continue
            for r in t["rows"][1:]:
                if r[0] == row:
                    return num(r[hdr.index(col)])
        fail(f"{self.path}: no cell {section}/{row}/{col}")
        return None

    def references(self):
        out = []
        for line in self.section("References").splitlines():
            line = line.strip()
            if not line: continue
            m = re.match(r"^(?:\[(\d+)\]\s+)?(.+?)\s+\((\d{4})\)\.\s+(.+?)\.\s+[^.]+,\s*\d+", line)
            if not m:
                fail(f"{self.path}: cannot parse reference {line!r}"); continue
            out.append({"marker": m.group(1), "authors": m.group(2), "year": m.group(3), "title": m.group(4)})
        return out

def num(s):
    if isinstance(s, (int, float)): return float(s)
    s = s.replace("\u2212", "-")
    m = re.search(r"(\()?(-)?(\d[\d,]*(?:\.\d+)?)(\))?", s)
    if not m: return None
    v = float(m.group(3).replace(",", ""))
    if m.group(2) or (m.group(1) and m.group(4)): v = -v
    return v

DOCS = {}
for fn in sorted(os.listdir(os.path.join(ROOT, "docs"))):
    p = "docs/" + fn
    DOCS[p] = Doc(p)
BY_TITLE = {d.title: d for d in DOCS.values()}

B = DOCS["docs/ferry_financial_plan_2025.md"]; R = DOCS["docs/ferry_finance_committee_review.txt"]
Q1 = DOCS["docs/brenmoor_q1_2024.md"]; Q3 = DOCS["docs/brenmoor_q3_2024.md"]
P2 = DOCS["docs/paper_ressel_dunhar_2020.md"]; P3 = DOCS["docs/paper_vasquel_2021.md"]; P5 = DOCS["docs/paper_marrach_ilvane_2023.md"]
PAGES = [d for d in DOCS.values() if os.path.basename(d.path).startswith("page_")]

def rx(doc, section, pattern, conv=num):
    body = (doc.section(section) if section else doc.text).replace("\n", " ")
    m = re.search(pattern, body)
    if not m:
        fail(f"{doc.path}: pattern {pattern!r} not found"); return None
    return conv(m.group(1))

def cite_numeric(doc, marker):
    for r in doc.references():
        if r["marker"] == marker:
            target = BY_TITLE.get(r["title"])
            if not target: fail(f"{doc.path} [{marker}] {r['title']!r} not in collection")
            return target
    fail(f"{doc.path}: no reference [{marker}]")

def cite_author_year(doc, surname, year):
    if not re.search(rf"{surname}[^()]*\({year}\)", doc.text): fail(f"{doc.path}: no in-text citation {surname} ({year})")
    for r in doc.references():
        if r["authors"].startswith(surname) and r["year"] == year:
            return BY_TITLE.get(r["title"])
    fail(f"{doc.path}: no reference {surname} {year}")

def hop(page, keyword):
    """Follow the sentence of `page` containing `keyword` to the other page it names."""
    for s in page.sentences():
        if keyword in s:
            for other in PAGES:
                if other is not page and other.title in s:
                    return other
    fail(f"{page.path}: no link via {keyword!r}"); return page

def page(name): return BY_TITLE[name]

def section_of_row(doc, label):
    ts = doc.table_with_row(label)
    if len(ts) != 1: fail(f"{doc.path}: row {label!r} in {len(ts)} tables")
    return ts[0]["section"] if ts else None

def all_cells(doc, row, col):
    out = []
    for t in doc.tables:
        hdr = t["rows"][0]
        for r in t["rows"][1:]:
            if r[0] == row and col in hdr: out.append((t["section"], num(r[hdr.index(col)])))
    return out

# ---------------------------------------------------------------- derivations
def d10():
    title = "Acoustic Surveys of Braided Channels"
    assert any(r["title"] == title for r in P5.references())
    return None if title not in BY_TITLE else "IN COLLECTION"

def d25():
    if any(d.meta.get("quarter") == "Q4" and d.meta.get("year") == "2024" for d in DOCS.values()): return "Q4 REPORT EXISTS"
    if re.search(r"fourth[- ]quarter[^.]*\$\d", Q3.text): return "Q4 FIGURE STATED"
    return None

def d02():
    cells = all_cells(B, "Personnel", "FY2025")
    if len(cells) != 5: fail(f"expected 5 Personnel rows, got {len(cells)}")
    return sum(v for _, v in cells)

def d05():
    committee = rx(R, "2.2 Hybrid Drive Contract", r"hybrid drive conversion at ([\d,]+)")
    plan = B.cell("2.1.1 Hull Replacement and Conversion", "Hybrid drive conversion", "FY2025")
    if committee == plan: fail("05: no disagreement")
    return committee

def d19():
    committee = rx(R, "2.1 Fuel Price Assumption", r"should be ([\d,]+)")
    plan = B.cell("1.1.2 Southern Crossings", "Fuel and energy", "FY2025")
    stated_plan = rx(R, "2.1 Fuel Price Assumption", r"rather than the ([\d,]+)")
    if stated_plan != plan: fail("19: memo misquotes plan")
    return committee - plan

def d16():
    v = rx(Q3, "Restatement of Second Quarter Figures", r"total second-quarter revenue is restated from \$[\d.]+ million to \$([\d.]+) million")
    if v != Q3.cell("Segment Results", "Total", "Q2 2024 (restated)"): fail("16: prose/table mismatch")
    return v

DERIVE = {
    "01": lambda: B.cell("1.1.2 Southern Crossings", "Personnel", "FY2025"),
    "02": d02,
    "03": lambda: round(Q3.cell("Segment Results", "Total", "Q3 2024") - Q3.cell("Segment Results", "Total", "Q3 2023"), 4),
    "04": lambda: section_of_row(B, "Slipway resurfacing"),
    "05": d05,
    "06": lambda: rx(cite_numeric(P2, "1"), "Results", r"calibration coefficient was ([\d.]+) impulses per kilogram"),
    "07": lambda: rx(hop(page("Idonea Strask"), "co-founded"), None, r"founded in (\d{4})"),
    "08": lambda: rx(hop(hop(page("Idonea Strask"), "co-founded"), "headquartered in"), "Demographics", r"population of ([\d,]+)"),
    "09": lambda: rx(hop(hop(page("Strask and Pell Boatyard"), "headquartered in"), "lies on"), None, r"empties into the ([A-Z]\w+ [A-Z]\w+)", str),
    "10": d10,
    "11": lambda: rx(Q1, "Highlights", r"Operating profit was \$([\d.]+) million"),
    "12": lambda: B.cell("1.2.1 Harbour Terminals", "Maintenance", "FY2025") + B.cell("1.2.2 Remote Landings", "Maintenance", "FY2025"),
    "13": lambda: round(Q3.cell("Segment Results", "Pharmaceutical Vials", "Q3 2024") - Q3.cell("Segment Results", "Pharmaceutical Vials", "Q2 2024 (restated)"), 4),
    "14": lambda: rx(cite_numeric(P5, "1"), "Results", r"by ([\d.]+) dB"),
    "15": lambda: rx(hop(page("Harrowick Quay"), "lies on"), None, r"length of ([\d,]+) km"),
    "16": d16,
    "17": lambda: B.cell("1.1.1 Northern Crossings", "Total", "FY2025") - B.cell("1.1.2 Southern Crossings", "Total", "FY2025"),
    "18": lambda: section_of_row(B, "Insurance"),
    "19": d19,
    "20": lambda: rx(hop(hop(page("Idonea Strask"), "co-founded"), "kept in"), "History", r"built in (\d{4})"),
    "21": lambda: rx(cite_author_year(P3, "Ressel", "2020"), "Results", r"r² = ([\d.]+)"),
    "22": lambda: B.cell("1.2.1 Harbour Terminals", "Maintenance", "FY2024"),
    "23": lambda: rx(hop(page("Strask and Pell Boatyard"), "kept in"), "History", r"designed by the architect ([A-Z]\w+ [A-Z]\w+)", str),
    "24": lambda: round(rx(Q1, "Highlights", r"revenue of \$([\d.]+) million") + d16() + rx(Q3, "Highlights", r"quarter of 2024 was \$([\d.]+) million"), 4),
    "25": d25,
    "26": lambda: B.cell("1.1.1 Northern Crossings", "Fuel and energy", "Change"),
}

# ---------------------------------------------------------------- table checks
def check_tables():
    for d in DOCS.values():
        for t in d.tables:
            hdr, rows = t["rows"][0], t["rows"][1:]
            tot = [r for r in rows if r[0].startswith("Total")]
            if not tot: continue
            body = [r for r in rows if not r[0].startswith("Total")]
            for j in range(1, len(hdr)):
                s = round(sum(num(r[j]) for r in body), 4)
                if abs(s - num(tot[0][j])) > 1e-6:
                    fail(f"{d.path} {t['section']} column {hdr[j]}: sum {s} != Total {tot[0][j]}")
            if "Change" in hdr:
                a, b, c = hdr.index("FY2024"), hdr.index("FY2025"), hdr.index("Change")
                for r in rows:
                    if abs(num(r[b]) - num(r[a]) - num(r[c])) > 1e-6:
                        fail(f"{d.path} {t['section']} {r[0]}: change column wrong")
    # summary rows equal the unit totals
    groups = {"Vessel Operations": ["1.1.1 Northern Crossings", "1.1.2 Southern Crossings"],
              "Terminals and Piers": ["1.2.1 Harbour Terminals", "1.2.2 Remote Landings"],
              "Capital Programme": ["2.1.1 Hull Replacement and Conversion", "2.2.1 Pier Works"],
              "Administration": ["3.1 Corporate Services"]}
    for area, secs in groups.items():
        for col in ("FY2024", "FY2025"):
            s = sum(B.cell(x, "Total", col) for x in secs)
            if s != B.cell("4 Summary of Expenditure", area, col):
                fail(f"summary {area} {col}: {s} != table")

# ---------------------------------------------------------------- question checks
TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
          "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}

def norm(s): return re.sub(r"\s+", " ", s.strip().lower())

def main():
    check_tables()
    qs = [json.loads(l) for l in open(os.path.join(ROOT, "questions.jsonl"), encoding="utf-8") if l.strip()]
    counts = {}
    for q in qs: counts[q["kind"]] = counts.get(q["kind"], 0) + 1
    if counts != TARGET: fail(f"kind counts {counts} != {TARGET}")
    half = len(qs) // 2
    for k in TARGET:
        a = sum(1 for q in qs[:half] if q["kind"] == k); b = sum(1 for q in qs[half:] if q["kind"] == k)
        if abs(a - b) > 1: fail(f"kind {k} unbalanced across halves: {a} vs {b}")
    ok = 0
    for q in qs:
        qid = q["id"].split("-")[-1]
        try:
            got = DERIVE[qid]()
        except Exception as e:
            fail(f"{q['id']}: derivation error {e!r}"); continue
        for g in q["gold_docs"]:
            if g not in DOCS: fail(f"{q['id']}: gold doc {g} missing")
        gdocs = [DOCS[g] for g in q["gold_docs"] if g in DOCS]
        for s in q["gold_sections"]:
            if not any(s in d.headings for d in gdocs): fail(f"{q['id']}: gold section {s!r} not a heading of gold docs")
        if q["answer_type"] == "not_found":
            good = got is None and not q["answers"] and not q["gold_docs"]
        elif isinstance(got, str):
            good = norm(q["answers"][0]) == norm(got) or norm(got) in [norm(a) for a in q["answers"]]
        else:
            good = got is not None and num(q["answers"][0]) is not None and abs(num(q["answers"][0]) - got) < 1e-6
        if q["answer_type"] == "span":
            blob = "\n".join(d.raw for d in gdocs).lower()
            if not any(a.lower() in blob for a in q["answers"]): fail(f"{q['id']}: no answer form occurs in gold docs")
        if not good: fail(f"{q['id']}: derived {got!r} vs answer {q['answers'][:1]}")
        else: ok += 1
        print(f"{q['id']:12s} {q['kind']:18s} derived={got!r:22s} answer={q['answers'][0] if q['answers'] else '(not found)'}")
    print(f"{len(DOCS)} documents, {len(qs)} questions, {ok} answers re-derived; kinds: {counts}")
    if FAIL:
        print(f"{len(FAIL)} failure(s)"); sys.exit(1)
    print("ALL CHECKS PASSED")

main()

#!/usr/bin/env python3
"""Re-derive every answer of the fresh_l set from the documents (standard library only)."""
import json, os, re, sys
from html.parser import HTMLParser

BASE = os.path.dirname(os.path.abspath(__file__))
FAIL = []
def fail(msg): FAIL.append(msg); print("FAIL:", msg)

# ---------- parsing ----------
class Doc:
    def __init__(self, path):
        self.path = path; self.meta = {}; self.headings = []  # (level, text)
        self.sections = {}  # heading -> text
        self.tables = []    # (heading, path_of_headings, rows)
        self.text = ""; self.title = ""

class HTMLDoc(HTMLParser):
    def __init__(self):
        super().__init__(); self.stack=[]; self.cur=None; self.doc=None
        self.heads=[]; self.tables=[]; self.row=None; self.cell=None; self.texts=[]; self.h=None; self.buf=""
    def handle_starttag(self, tag, a):
        if re.fullmatch(r"h[1-6]", tag): self.h=int(tag[1]); self.buf=""
        elif tag=="table": self.tables.append((self.heads[-1][1] if self.heads else "", [self.heads_path()], []))
        elif tag=="tr": self.row=[]
        elif tag in ("td","th"): self.cell=""
        elif tag=="p": self.buf=""
    def heads_path(self): return [h for _,h in self.heads]
    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag):
            self.heads.append((self.h, self.buf.strip())); self.texts.append(("H", self.buf.strip())); self.h=None
        elif tag in ("td","th"): self.row.append(self.cell.strip()); self.cell=None
        elif tag=="tr": self.tables[-1][2].append(self.row); self.row=None
        elif tag=="p": self.texts.append(("P", self.buf.strip()))
    def handle_data(self, d):
        if self.cell is not None: self.cell+=d
        self.buf+=d

def split_row(line): return [c.strip() for c in line.strip().strip("|").split("|")]

def parse(path):
    d = Doc(path); raw = open(os.path.join(BASE, path), encoding="utf-8").read()
    if path.endswith(".html"):
        p = HTMLDoc(); p.feed(raw)
        d.headings = p.heads; d.title = p.heads[0][1]
        cur = d.title; d.sections[cur] = ""
        for kind, t in p.texts:
            if kind == "H": cur = t; d.sections.setdefault(cur, "")
            else: d.sections[cur] += t + "\n"
        d.tables = [(h, path_, rows) for h, path_, rows in p.tables]
        for h, _, rows in d.tables: d.sections[h] += "\n".join(" | ".join(r) for r in rows) + "\n"
        d.text = "\n".join(f"{k} {v}" for k, v in d.sections.items())
        return d
    lines = raw.split("\n")
    if lines[0].strip() == "---":
        end = lines.index("---", 1)
        for l in lines[1:end]:
            k, v = l.split(":", 1); d.meta[k.strip()] = v.strip()
        lines = lines[end+1:]
    txt = path.endswith(".txt")
    TXT_HEADS = {"Abstract", "Introduction", "Method", "Results", "References"}
    cur = None; path_ = []; i = 0
    while i < len(lines):
        l = lines[i]
        m = re.match(r"(#{1,6})\s+(.*)", l) if not txt else None
        lvl = None
        if m: lvl, h = len(m.group(1)), m.group(2).strip()
        elif txt and l.strip() and not d.title: lvl, h = 1, l.strip()
        elif txt and l.strip() in TXT_HEADS: lvl, h = 2, l.strip()
        if lvl:
            d.headings.append((lvl, h)); cur = h; d.sections.setdefault(cur, "")
            path_ = [x for x in path_ if x[0] < lvl] + [(lvl, h)]
            if lvl == 1 and not d.title: d.title = h
            i += 1; continue
        if l.strip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                r = split_row(lines[i])
                if not all(re.fullmatch(r":?-+:?", c) for c in r): rows.append(r)
                i += 1
            d.tables.append((cur, [h for _, h in path_], rows))
            d.sections[cur] += "\n".join(" | ".join(r) for r in rows) + "\n"
            continue
        if cur is not None: d.sections[cur] += l + "\n"
        i += 1
    d.text = "\n".join(f"{k}\n{v}" for k, v in d.sections.items())
    return d

DOCS = {}
for fn in sorted(os.listdir(os.path.join(BASE, "docs"))):
    DOCS["docs/" + fn] = parse("docs/" + fn)
BY_TITLE = {d.title: d for d in DOCS.values()}

def num(s):
    s = s.strip().replace(",", "").replace("$", "").replace("€", "")
    neg = s.startswith("(") and s.endswith(")")
    v = float(s.strip("()")); return -v if neg else v

def sentences(text): return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\[])", text.replace("\n", " ")) if s.strip()]

def table(doc, heading):
    for h, _, rows in DOCS[doc].tables:
        if h == heading: return rows
    raise KeyError(heading)

def cell(doc, heading, row, col):
    rows = table(doc, heading); hdr = rows[0]; j = hdr.index(col)
    for r in rows[1:]:
        if r[0] == row: return num(r[j])
    raise KeyError(row)

def cell_any(doc, row, col, contains=None):
    """Find a row by first-cell name in any table (optionally table heading containing text)."""
    hits = []
    for h, p, rows in DOCS[doc].tables:
        if contains and contains not in h: continue
        if col in rows[0]:
            for r in rows[1:]:
                if r[0] == row: hits.append((h, num(r[rows[0].index(col)])))
    return hits

def find_sentence(doc, pattern, section=None):
    text = DOCS[doc].sections[section] if section else DOCS[doc].text
    for s in sentences(text):
        m = re.search(pattern, s)
        if m: return m
    raise KeyError(f"{pattern} in {doc}")

# ---------- budget checks ----------
PLAN = "docs/vellamar_financial_plan_2025.md"; AUDIT = "docs/vellamar_auditor_memo.html"
for h, p, rows in DOCS[PLAN].tables:
    hdr = rows[0]; body = [r for r in rows[1:] if r[0] != "Total"]; tot = [r for r in rows[1:] if r[0] == "Total"]
    if not tot: fail(f"plan table {h} has no Total row"); continue
    for j in range(1, len(hdr)):
        s = sum(num(r[j]) for r in body)
        if abs(s - num(tot[0][j])) > 1e-6: fail(f"{h}: column {hdr[j]} sums to {s}, Total says {tot[0][j]}")
    for r in rows[1:]:
        if abs(num(r[2]) - num(r[1]) - num(r[3])) > 1e-6: fail(f"{h}: change wrong in row {r[0]}")
arows = DOCS[AUDIT].tables[0][2]
for r in arows[1:]:
    if abs(num(r[3]) - num(r[2]) - num(r[4])) > 1e-6: fail(f"audit diff wrong in {r}")
    if cell_any(PLAN, r[1], "2025 Proposed", r[0])[0][1] != num(r[2]): fail(f"audit plan figure {r} != plan")
# quarterly tables: segment sums and change columns
for fn, d in DOCS.items():
    if d.meta.get("company"):
        rows = table(fn, "Segment results")
        for j in (1, 2):
            if abs(sum(num(r[j]) for r in rows[1:-1]) - num(rows[-1][j])) > 1e-6: fail(f"{fn} segment sum col {j}")
        for r in rows[1:]:
            if abs(num(r[2]) - num(r[1]) - num(r[3])) > 1e-6: fail(f"{fn} change {r}")

# ---------- derivations ----------
def qtr(q): return next(fn for fn, d in DOCS.items() if d.meta.get("quarter") == q and d.meta.get("year") == "2024")
def seg(q, segment, col): return cell(qtr(q), "Segment results", segment, col)
def margin(q): return float(find_sentence(qtr(q), r"[Gg]ross margin[^.]*?(\d+\.\d) percent").group(1))
def latest(q, segment):
    """Latest value for a quarter: a restatement in a later report wins over the original."""
    val = seg(q, segment, f"{q} 2024")
    for fn, d in sorted(DOCS.items(), key=lambda x: x[1].meta.get("quarter", "")):
        if d.meta.get("quarter", "") > q:
            for h, p, rows in d.tables:
                col = f"{q} 2024 restated"
                if col in rows[0]:
                    for r in rows[1:]:
                        if r[0] == segment: val = num(r[rows[0].index(col)])
    return val

def unit_of(line_item):
    return [h for h, p, rows in DOCS[PLAN].tables if any(r[0] == line_item for r in rows[1:])]
def parent_of(heading):
    for h, p, rows in DOCS[PLAN].tables:
        if h == heading: return p[-2]
def follow_citation(citing, marker_or_author, phrase, section="Results"):
    d = DOCS[citing]; refs = d.sections["References"]
    if marker_or_author.startswith("["):
        entry = next(l for l in refs.split("\n") if l.startswith(marker_or_author))
    else:
        entry = next(l for l in refs.split("\n") if l.startswith(marker_or_author))
    # make sure the citing text actually uses the marker
    body = "\n".join(v for k, v in d.sections.items() if k != "References")
    key = marker_or_author if marker_or_author.startswith("[") else marker_or_author.split(",")[0]
    assert key in body, f"{key} not cited in body of {citing}"
    title = re.search(r"\(\d{4}\)\.\s+(.+?)\.\s", entry).group(1)
    cited = BY_TITLE[title]
    m = find_sentence(cited.path, phrase, section)
    return float(m.group(1)), cited.path

def page(name): return BY_TITLE[name].path
def founder_of(co): return find_sentence(page(co), r"founded in \d{4} by ([A-Z]\w+ [A-Z]\w+)").group(1)
def born(person): return float(find_sentence(page(person), r"born in (\d{4})").group(1))
def company_of(person): return find_sentence(page(person), r"founded ([A-Z][\w ]+? Works)").group(1)
def hq_of(co): return find_sentence(page(co), r"headquartered in ([A-Z]\w+)").group(1)
def town_of(building): return find_sentence(page(building), r"in ([A-Z]\w+)\.$").group(1)
def river_of(town): return find_sentence(page(town), r"on the ([A-Z]\w+ River)").group(1)
def length_of(river): return float(find_sentence(page(river), r"for (\d+) kilometres").group(1))
def population(town): return float(find_sentence(page(town), r"population of ([\d,]+)").group(1).replace(",", ""))
def slate_supplier(building): return find_sentence(page(building), r"slate from ([A-Z][\w ]+? Works)").group(1)
def company_in(town): return find_sentence(page(town), r"([A-Z][\w ]+? Works)[^.]*based in " + town).group(1)
def peak(co): return float(find_sentence(page(co), r"peak of (\d+) employees").group(1))

P = PLAN
def audit_fig(unit, item): return next(num(r[3]) for r in arows[1:] if r[0] == unit and r[1] == item)
def plan_fig(unit, item): return cell(P, next(h for h, _, _ in DOCS[P].tables if h.endswith(unit)), item, "2025 Proposed")

DERIVE = {
 1: lambda: cell(P, "2.1.2 Tug and Towage Service", "Personnel", "2025 Proposed"),
 2: lambda: sum(cell(P, h, "Personnel", "2025 Proposed") for h, p, _ in DOCS[P].tables if "2.1 Marine Operations Division" in p),
 3: lambda: seg("Q3", "Technical Ceramics", "Q3 2024") - seg("Q3", "Technical Ceramics", "Q3 2023"),
 4: lambda: river_of(town_of("Calder Tithe Barn")),
 5: lambda: follow_citation("docs/paper_vance_2022.md", "[2]", r"[Uu]nder high spray, mean radial growth was (\d+\.\d) mm")[0],
 6: lambda: re.sub(r"^[\d.]+\s+", "", parent_of(next(h for h, _, _ in DOCS[P].tables if h.endswith("Dredging and Channel Upkeep")))),
 7: lambda: audit_fig("Tug and Towage Service", "Fuel and Energy"),
 8: lambda: seg("Q1", "Architectural Tiles", "Q1 2024"),
 9: None,
 10: lambda: sum(seg(q, "Tableware", f"{q} 2024") for q in ("Q1", "Q2", "Q3")),
 11: lambda: population(hq_of(company_of("Idris Malvaunt"))),
 12: lambda: margin("Q3") - margin("Q1"),
 13: lambda: born(founder_of("Brannock Slate Works")),
 14: lambda: latest("Q2", "Technical Ceramics"),
 15: lambda: sum(v for _, v in cell_any(P, "Fuel and Energy", "2025 Proposed")),
 16: lambda: follow_citation("docs/paper_haldane_ruiz_2020.md", "[1]", r"cover in the upper spray zone was (\d+\.\d) percent")[0],
 17: lambda: born(founder_of(slate_supplier("Calder Tithe Barn"))),
 18: lambda: re.sub(r"^[\d.]+\s+", "", unit_of("IT Systems")[0]),
 19: lambda: audit_fig("Dredging and Channel Upkeep", "Contracted Services") - plan_fig("Dredging and Channel Upkeep", "Contracted Services"),
 20: lambda: seg("Q3", "Technical Ceramics", "Q3 2024") - latest("Q2", "Technical Ceramics"),
 21: None,
 22: lambda: follow_citation("docs/paper_ibarra_2023.md", "Pemberley, T.", r"(\d+\.\d) percent of dry mass at the inner harbour")[0],
 23: lambda: cell(P, "3.1 Harbour Dues and Fees", "Total", "2025 Proposed") - cell(P, "2.1.1 Pilotage Service", "Total", "2025 Proposed") - cell(P, "2.1.2 Tug and Towage Service", "Total", "2025 Proposed"),
 24: lambda: peak(company_in("Orsolenna")),
 25: lambda: cell(P, "2.2.2 Quay Walls and Berths", "Structural Repairs", "2024 Approved"),
 26: lambda: length_of(river_of(hq_of("Brannock Slate Works"))),
}

# unanswerable checks: the asked-for period must not exist anywhere
def no_column(pattern):
    return not any(re.search(pattern, c) for d in DOCS.values() for _, _, rows in d.tables for c in rows[0])
UNANS = {9: lambda: no_column(r"Q4") and not re.search(r"Technical Ceramics[^.]*fourth", DOCS[qtr("Q3")].text),
         21: lambda: not any("2023" in c for _, _, rows in DOCS[P].tables for c in rows[0]) and "2023" not in DOCS[P].text}

def first_number(s):
    m = re.search(r"-?\(?[\d,]*\d(?:\.\d+)?\)?", s); return num(m.group(0)) if m else None
def norm(s): return re.sub(r"\s+", " ", s).lower()

# ---------- question checks ----------
qs = [json.loads(l) for l in open(os.path.join(BASE, "questions.jsonl"), encoding="utf-8") if l.strip()]
for q in qs:
    n = int(q["id"].split("-")[-1]); ok = True
    for gd in q["gold_docs"]:
        if gd not in DOCS: fail(f"{q['id']}: gold doc {gd} missing"); ok = False
    heads = {h for gd in q["gold_docs"] if gd in DOCS for _, h in DOCS[gd].headings}
    for gs in q["gold_sections"]:
        if gs not in heads: fail(f"{q['id']}: gold section '{gs}' not a heading of gold docs"); ok = False
    if q["answer_type"] == "not_found":
        if q["answers"] or q["gold_docs"] or q["kind"] != "unanswerable": fail(f"{q['id']}: not_found must have empty answers/gold_docs")
        if not UNANS[n](): fail(f"{q['id']}: unanswerable question appears answerable")
        print(f"{q['id']} {q['kind']:17s} not_found  ok" if ok else ""); continue
    got = DERIVE[n]()
    canon = q["answers"][0]
    if isinstance(got, str):
        match = norm(got) == norm(canon)
    else:
        exp = first_number(canon); match = exp is not None and abs(exp - got) < 1e-6
    if not match: fail(f"{q['id']}: derived {got!r} but canonical answer is {canon!r}"); ok = False
    if q["answer_type"] == "span":
        gold_text = norm(" ".join(DOCS[g].text for g in q["gold_docs"]))
        if not any(norm(a) in gold_text for a in q["answers"]): fail(f"{q['id']}: no answer form occurs in gold docs"); ok = False
    print(f"{q['id']} {q['kind']:17s} derived={(round(got, 6) if isinstance(got, float) else got)!r:<22} canonical={canon!r:<26} {'ok' if ok else 'MISMATCH'}")

# ---------- kind balance ----------
TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
          "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}
counts = {}
for q in qs: counts[q["kind"]] = counts.get(q["kind"], 0) + 1
if counts != TARGET: fail(f"kind counts {counts} != {TARGET}")
half = len(qs) // 2
for k in TARGET:
    a = sum(1 for q in qs[:half] if q["kind"] == k); b = sum(1 for q in qs[half:] if q["kind"] == k)
    if abs(a - b) > 1: fail(f"kind {k} unbalanced across halves: {a} vs {b}")
if len({q["id"] for q in qs}) != len(qs): fail("duplicate ids")
tabular = sum(1 for q in qs if q["kind"] in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy"))
if tabular * 2 < len(qs): fail("fewer than half the questions are about tables/sums/comparisons/sections")
print(f"\n{len(DOCS)} documents, {len(qs)} questions; kinds: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
if FAIL: print(f"{len(FAIL)} FAILURE(S)"); sys.exit(1)
print("ALL CHECKS PASSED")

#!/usr/bin/env python3
"""Re-derive every canonical answer of the fresh_d set from the documents.

Standard library only. Parses Markdown (YAML front matter, ATX headings, pipe
tables), HTML (headings, tables, paragraphs) and plain text (numbered headings,
reference lists), then recomputes each answer by code and compares it with
questions.jsonl. Also checks spans, gold sections, table arithmetic, citations
and the balance of question kinds. Exits non-zero on any failure.
"""
import json
import os
import re
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


# --------------------------------------------------------------------------- parsing

def num(s):
    """Parse '1,150', '(1,150)', '$42,700 thousand', '41.3 m³/s', '6.4%' -> float."""
    s = s.strip()
    neg = s.startswith("(") and s.endswith(")")
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", s)
    if not m:
        return None
    v = float(m.group(0).replace(",", ""))
    return -v if neg else v


def clean_inline(s):
    s = re.sub(r"\*\*(.+?)\*\*", r"\1", s)
    s = re.sub(r"\*(.+?)\*", r"\1", s)
    return s.strip()


class Doc:
    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.title = None
        self.headings = []      # (level, text)
        self.tables = []        # dict(section, path, header, rows)
        self.sections = {}      # heading text -> body text (concatenated if repeated)
        self.text = ""

    def add_section_text(self, heading, text):
        self.sections[heading] = (self.sections.get(heading, "") + " " + text).strip()


def parse_md(path, raw):
    d = Doc(path)
    lines = raw.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        for ln in lines[1:end]:
            if ":" in ln:
                k, v = ln.split(":", 1)
                d.meta[k.strip()] = v.strip()
        lines = lines[end + 1:]
    stack = []
    cur = None
    buf = []
    i = 0
    out_text = []

    def flush():
        if cur is not None:
            d.add_section_text(cur, " ".join(buf))

    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^(#{1,6})\s+(.*?)\s*$", ln)
        if m:
            flush()
            buf = []
            level, text = len(m.group(1)), clean_inline(m.group(2))
            d.headings.append((level, text))
            if level == 1 and d.title is None:
                d.title = text
            stack = [h for h in stack if h[0] < level] + [(level, text)]
            cur = text
            out_text.append(text)
            i += 1
            continue
        if ln.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            rows = []
            for b in block:
                cells = [clean_inline(c) for c in b.strip().strip("|").split("|")]
                if all(re.fullmatch(r":?-{3,}:?", c.strip()) for c in cells):
                    continue
                rows.append(cells)
            d.tables.append({"section": cur, "path": [h[1] for h in stack],
                             "header": rows[0], "rows": rows[1:]})
            for r in rows:
                out_text.append(" | ".join(r))
                buf.append(" | ".join(r))
            continue
        t = clean_inline(ln)
        if t:
            buf.append(t)
            out_text.append(t)
        i += 1
    flush()
    d.text = "\n".join(out_text)
    return d


class _HTML(HTMLParser):
    def __init__(self, doc):
        super().__init__(convert_charrefs=True)
        self.d = doc
        self.stack = []
        self.cur = None
        self.mode = None
        self.buf = ""
        self.row = None
        self.table = None
        self.cell = None
        self.out = []
        self.body = []
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.mode = tag
            self.buf = ""
        elif tag == "table":
            self.table = {"section": self.cur, "path": [h[1] for h in self.stack],
                          "header": None, "rows": []}
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "br" and self.mode is None:
            self.body.append(" ")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        elif self.mode == tag:
            text = " ".join(self.buf.split())
            level = int(tag[1])
            self._flush()
            self.d.headings.append((level, text))
            if level == 1 and self.d.title is None:
                self.d.title = text
            self.stack = [h for h in self.stack if h[0] < level] + [(level, text)]
            self.cur = text
            self.out.append(text)
            self.mode = None
        elif tag in ("td", "th"):
            self.row.append(" ".join(self.cell.split()))
            self.cell = None
        elif tag == "tr":
            if self.table["header"] is None:
                self.table["header"] = self.row
            else:
                self.table["rows"].append(self.row)
            self.out.append(" | ".join(self.row))
            self.body.append(" | ".join(self.row) + ". ")
            self.row = None
        elif tag == "table":
            self.d.tables.append(self.table)
            self.table = None
        elif tag == "p":
            self.body.append("\n")

    def handle_data(self, data):
        if self.in_title:
            return
        if self.mode:
            self.buf += data
        elif self.cell is not None:
            self.cell += data
        elif self.table is None:
            self.body.append(data)

    def _flush(self):
        if self.cur is not None:
            txt = " ".join("".join(self.body).split())
            self.d.add_section_text(self.cur, txt)
            self.out.append(txt)
        self.body = []

    def close(self):
        super().close()
        self._flush()


def parse_html(path, raw):
    d = Doc(path)
    p = _HTML(d)
    p.feed(raw)
    p.close()
    d.text = "\n".join(p.out)
    return d


def parse_txt(path, raw):
    d = Doc(path)
    lines = raw.split("\n")
    cur = None
    buf = []
    prev_blank = True
    for ln in lines:
        s = ln.strip()
        if d.title is None and s:
            d.title = s
            d.headings.append((1, s))
            cur = s
            prev_blank = False
            continue
        if prev_blank and (re.fullmatch(r"\d+(\.\d+)*\.\s+[A-Z][A-Za-z ,\-]*", s)
                           or s in ("Abstract", "References")):
            if cur is not None:
                d.add_section_text(cur, " ".join(buf))
            buf = []
            level = 2 if s in ("Abstract", "References") else 1 + s.split()[0].count(".")
            d.headings.append((level, s))
            cur = s
        elif s:
            buf.append(s)
        prev_blank = (s == "")
    if cur is not None:
        d.add_section_text(cur, " ".join(buf))
    d.text = raw
    return d


def load_docs():
    docs = {}
    for fn in sorted(os.listdir(DOCS)):
        p = os.path.join(DOCS, fn)
        raw = open(p, encoding="utf-8").read()
        rel = "docs/" + fn
        if fn.endswith(".md"):
            docs[rel] = parse_md(rel, raw)
        elif fn.endswith(".html"):
            docs[rel] = parse_html(rel, raw)
        elif fn.endswith(".txt"):
            docs[rel] = parse_txt(rel, raw)
    return docs


def sentences(text):
    text = " ".join(text.split())
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if s]


def strip_num(h):
    return re.sub(r"^\d+(\.\d+)*\.?\s+", "", h)


# --------------------------------------------------------------------------- helpers

DOCSET = load_docs()


def doc_by_title(title):
    for d in DOCSET.values():
        if d.title and d.title.strip().lower() == title.strip().lower():
            return d
    return None


def col_index(table, pattern):
    for i, h in enumerate(table["header"]):
        if re.search(pattern, h):
            return i
    raise KeyError(pattern + " not in " + repr(table["header"]))


def tables_with_row(doc, label):
    return [t for t in doc.tables if any(r[0].lower() == label.lower() for r in t["rows"])]


def cell(table, label, colpat):
    j = col_index(table, colpat)
    for r in table["rows"]:
        if r[0].lower() == label.lower():
            return num(r[j])
    raise KeyError(label)


def table_in(doc, section_substr):
    ts = [t for t in doc.tables if t["section"] and section_substr.lower() in t["section"].lower()]
    if len(ts) != 1:
        raise KeyError("expected one table under '%s' in %s, got %d" % (section_substr, doc.path, len(ts)))
    return ts[0]


def find_sentence(doc, pattern, where=None):
    text = doc.sections.get(where, "") if where else doc.text
    hits = [s for s in sentences(text) if re.search(pattern, s)]
    if not hits:
        raise KeyError("no sentence /%s/ in %s" % (pattern, doc.path))
    return hits[0]


def extract(doc, pattern, where=None):
    s = find_sentence(doc, pattern, where)
    return re.search(pattern, s).group(1)


ENCY = {p: d for p, d in DOCSET.items() if os.path.basename(p).startswith("ency_")}
ENCY_TITLES = {d.title: d for d in ENCY.values()}


def hop(doc, cue):
    """Follow a link: the other encyclopedia page named in the sentence matching cue."""
    s = find_sentence(doc, cue)
    names = [t for t in ENCY_TITLES if t != doc.title and t in s]
    if len(names) != 1:
        raise KeyError("hop from %s via /%s/: %r" % (doc.title, cue, names))
    return ENCY_TITLES[names[0]]


# ---- budget
PLAN = DOCSET["docs/cvrta_fy2025_plan.md"]
AUD = DOCSET["docs/state_auditor_letter_cvrta.html"]
FY24, FY25, CHG = r"FY2024", r"FY2025", r"^Change$"


def plan_cell(section, label, colpat=FY25):
    return cell(table_in(PLAN, section), label, colpat)


def auditor_row(pattern):
    t = AUD.tables[0]
    for r in t["rows"]:
        if re.search(pattern, r[0], re.I):
            return num(r[col_index(t, r"^Plan")]), num(r[col_index(t, r"Auditor")])
    raise KeyError(pattern)


# ---- quarterly reports (latest report wins for restated figures)
HP = sorted([d for d in DOCSET.values() if d.meta.get("company") == "Halloran & Pike Coffee Roasters"],
            key=lambda d: (int(d.meta["year"]), d.meta["quarter"]))


def hp_value(segment, period):
    """Latest reported value of segment revenue for period ('Q2 2024')."""
    val = None
    for d in HP:  # chronological order of reports
        for t in d.tables:
            for j, h in enumerate(t["header"]):
                if h.startswith(period) and "as reported" not in h:
                    for r in t["rows"]:
                        if r[0] == segment:
                            val = num(r[j])
    if val is None:
        raise KeyError((segment, period))
    return val


# ---- papers
PAPERS = {p: d for p, d in DOCSET.items() if os.path.basename(p).startswith("paper_")}


def ref_list(doc):
    key = [h for _, h in doc.headings if strip_num(h) == "References"][0]
    if doc.path.endswith(".txt"):
        raw = open(os.path.join(HERE, doc.path), encoding="utf-8").read()
        body = raw.split("\nReferences\n", 1)[1]
        entries = [e.strip() for e in body.strip().split("\n") if e.strip()]
    elif doc.path.endswith(".md"):
        raw = open(os.path.join(HERE, doc.path), encoding="utf-8").read()
        body = raw.split("## References", 1)[1]
        entries = [e.strip() for e in body.strip().split("\n\n") if e.strip()]
    else:
        entries = sentences(doc.sections[key])
    refs = []
    for e in entries:
        m = re.match(r"^(?:\[(\d+)\]\s+)?(.+?)\s\((\d{4})\)\.\s+(.+?)\.\s", e)
        refs.append({"n": m.group(1), "authors": m.group(2), "year": m.group(3), "title": m.group(4)})
    return refs


def cited_paper(doc, marker):
    """marker: '1' for [1], or ('Lindqvar', '2022') for author-year."""
    for r in ref_list(doc):
        if (isinstance(marker, str) and r["n"] == marker) or \
           (isinstance(marker, tuple) and r["authors"].startswith(marker[0]) and r["year"] == marker[1]):
            return doc_by_title(r["title"]), r["title"]
    raise KeyError(marker)


def section_named(doc, name):
    for _, h in doc.headings:
        if strip_num(h) == name:
            return h
    raise KeyError(name)


# --------------------------------------------------------------------------- derivations

def d01():
    return plan_cell("Commuter Rail", "Fuel and traction power")


def d02():
    rail = [t for t in PLAN.tables if any("Rail Operations Division" in p for p in t["path"])]
    check(len(rail) == 2, "q02: expected two rail tables")
    return sum(cell(t, "Salaries and wages", FY25) for t in rail)


def d03():
    citing = DOCSET["docs/paper_lindqvar_2022.txt"]
    cited, _ = cited_paper(citing, "1")
    own = int(extract(citing, r"installed (\d+) geophone nodes"))
    orig = int(extract(cited, r"deployed (\d+) three-component", section_named(cited, "Method")))
    check(own != orig, "q03: trap values should differ")
    return orig


def d04():
    return hp_value("Subscriptions", "Q2 2024") - hp_value("Subscriptions", "Q1 2024")


def d05():
    company = hop(ENCY_TITLES["Tamsin Vollery"], r"co-founded")
    return int(extract(company, r"founded in (\d{4})"))


def holder_section(label):
    ts = tables_with_row(PLAN, label)
    check(len(ts) == 1, "row %s should occur in exactly one table" % label)
    return ts[0]["section"]


def d06():
    return holder_section("Track access fees")


def d07():
    plan, aud = auditor_row(r"^Passenger fares$")
    check(plan == plan_cell("Fare and Other Revenue", "Passenger fares"), "q07: auditor quotes plan wrongly")
    check(plan != aud, "q07: no disagreement")
    return aud


def d08():
    return hp_value("Wholesale", "Q2 2024")


def d09():
    company = ENCY_TITLES["Vollery & Breck Shipwrights"]
    town = hop(company, r"yard was at")
    river = hop(town, r"mouth of the")
    return int(extract(river, r"length of (\d+) kilometres"))


def d10():
    exp = plan_cell("Operating Budget Summary", "Total operating expenses")
    rev = plan_cell("Fare and Other Revenue", "Total operating revenue")
    return exp - rev


def d11():
    quarters = [(d.meta["quarter"], d.meta["year"]) for d in HP]
    check(("Q4", "2024") not in quarters, "q11: a Q4 2024 report exists")
    check(not any("Q4 2024" in h for d in HP for t in d.tables for h in t["header"]),
          "q11: a Q4 2024 column exists")
    return None


def d12():
    return hp_value("Wholesale", "Q3 2024") - hp_value("Wholesale", "Q2 2024")


def d13():
    citing = DOCSET["docs/paper_okonkwo_hale_2021.md"]
    cited, _ = cited_paper(citing, "2")
    own = float(extract(citing, r"±([\d.]+) percent"))
    v = float(extract(cited, r"mean absolute error of ([\d.]+) percent", section_named(cited, "Results")))
    check(own != v, "q13: trap values should differ")
    return v


def d14():
    d = DOCSET["docs/paper_okonkwo_hale_2021.md"]
    check("Tarn Glacier" in d.text, "q14: Tarn Glacier not in paper")
    return float(extract(d, r"Peak discharge of ([\d.]+) m³/s", section_named(d, "Results")))


def d15():
    return sum(hp_value("Subscriptions", q) for q in ("Q1 2024", "Q2 2024", "Q3 2024"))


def d16():
    river = hop(ENCY_TITLES["Port Ashcombe"], r"mouth of the")
    return int(extract(river, r"catchment area of (\d+) square kilometres"))


def d17():
    return holder_section("Contracted security")


def d18():
    company = hop(ENCY_TITLES["Tamsin Vollery"], r"co-founded")
    light = hop(company, r"steam tender")
    return extract(light, r"designed by the engineer ([A-Z]\w+ [A-Z]\w+)")


def d19():
    plan, aud = auditor_row(r"Tanager.*traction power")
    check(plan == plan_cell("Light Rail", "Fuel and traction power"), "q19: auditor quotes plan wrongly")
    return aud - plan


def d20():
    a = plan_cell("Fare and Other Revenue", "Passenger fares", FY24)
    b = plan_cell("Fare and Other Revenue", "Passenger fares", FY25)
    return round((b - a) / a * 100, 1)


def d21():
    citing = DOCSET["docs/paper_ferreira_dunn_2023.md"]
    s = find_sentence(citing, r"hysteresis.*\(([A-Z]\w+) and [^,]+, (\d{4})\)")
    m = re.search(r"\(([A-Z]\w+) and [^,]+, (\d{4})\)", s)
    cited, _ = cited_paper(citing, (m.group(1), m.group(2)))
    own = float(extract(citing, r"by ([\d.]+) hours"))
    v = float(extract(cited, r"by ([\d.]+) hours", section_named(cited, "Results")))
    check(own != v, "q21: trap values should differ")
    return v


def d22():
    fac = [t for t in PLAN.tables if any(strip_num(p) == "Facilities" for p in t["path"])]
    return sum(cell(t, "Design and engineering", FY25) for t in fac)


def d23():
    company = ENCY_TITLES["Vollery & Breck Shipwrights"]
    light = hop(company, r"Skua")
    return int(extract(light, r"first lit in (\d{4})"))


def d24():
    for d in ENCY.values():
        for s in sentences(d.text):
            if "Breck" in s and "Joss" in s:
                check(not re.search(r"\bborn\b|Breck \(\d{4}", s), "q24: Joss Breck's birth is stated: " + s)
    check(doc_by_title("Joss Breck") is None, "q24: a Joss Breck page exists")
    return None


def d25():
    return int(num(extract(ENCY_TITLES["Port Ashcombe"], r"2021 census.*population of ([\d,]+)")))


def d26():
    town = hop(ENCY_TITLES["River Selk"], r"reaches the sea at")
    light = hop(town, r"guarded by")
    return int(extract(light, r"is (\d+) metres tall"))


# --------------------------------------------------------------------------- structural checks

def check_table_arith(doc, name):
    n = 0
    for t in doc.tables:
        hdr = t["header"]
        if not re.search(r"change", hdr[-1], re.I) or len(hdr) != 4:
            continue
        body = [r for r in t["rows"] if not r[0].lower().startswith("total")]
        tot = [r for r in t["rows"] if r[0].lower().startswith("total")]
        # plan: FY2024 | FY2025 | Change; restatement: as reported | restated | Change
        # quarterly segment tables: current quarter | prior-year quarter | Change
        older_first = hdr[1].startswith("FY2024") or "as reported" in hdr[1]
        for r in t["rows"]:
            a, b, c = num(r[1]), num(r[2]), num(r[3])
            exp = (b - a) if older_first else (a - b)
            check(abs(exp - c) < 1e-6, "%s [%s] row %s: change %s != %s" % (name, t["section"], r[0], c, exp))
        check(len(tot) == 1, "%s [%s]: needs one Total row" % (name, t["section"]))
        for j in (1, 2, 3):
            s = sum(num(r[j]) for r in body)
            check(abs(s - num(tot[0][j])) < 1e-6,
                  "%s [%s] column %s: rows sum %s != total %s" % (name, t["section"], hdr[j], s, tot[0][j]))
        n += 1
    return n


def check_summaries():
    """Summary rows must equal the Total rows of the unit tables they name."""
    for sec in ("Operating Budget Summary", "Capital Program Summary"):
        t = table_in(PLAN, sec)
        for r in t["rows"]:
            if r[0].lower().startswith("total"):
                continue
            unit = [u for u in PLAN.tables if u["section"] and strip_num(u["section"]) == r[0]]
            if not unit:
                unit = [u for u in PLAN.tables if u["section"] and r[0] in u["section"]]
            if not check(len(unit) == 1, "summary row %s has no unit table" % r[0]):
                continue
            for col in (FY24, FY25, CHG):
                check(cell(t, r[0], col) == cell(unit[0], "Total", col),
                      "summary %s row %s col %s disagrees with unit table" % (sec, r[0], col))


def check_citations():
    in_coll, outside = 0, 0
    for p, d in PAPERS.items():
        refs = ref_list(d)
        for needed in ("Abstract", "Introduction", "Method", "Results", "References"):
            check(any(strip_num(h) == needed for _, h in d.headings), "%s lacks %s" % (p, needed))
        markers = set(re.findall(r"\[(\d+)\]", " ".join(v for k, v in d.sections.items()
                                                      if strip_num(k) != "References")))
        for m in markers:
            check(any(r["n"] == m for r in refs), "%s cites [%s] without reference" % (p, m))
        for r in refs:
            if doc_by_title(r["title"]):
                in_coll += 1
            else:
                outside += 1
    check(in_coll >= 6 and outside >= 3, "citations: %d in collection, %d outside" % (in_coll, outside))
    return in_coll, outside


def check_ency():
    for d in ENCY.values():
        others = [t for t in ENCY_TITLES if t != d.title and t in d.text]
        check(others, "%s mentions no other page" % d.title)


# --------------------------------------------------------------------------- main

DERIVE = {i: globals()["d%02d" % i] for i in range(1, 27)}
TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2,
          "discrepancy": 2, "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}


def norm(s):
    return " ".join(s.lower().split())


def main():
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]
    check(len(qs) == 26, "expected 26 questions")
    counts = {}
    for k, q in enumerate(qs, 1):
        qid = q["id"]
        check(qid == "fresh_d-%02d" % k, "bad id %s" % qid)
        counts[q["kind"]] = counts.get(q["kind"], 0) + 1
        for g in q["gold_docs"]:
            check(g in DOCSET, "%s: unknown gold doc %s" % (qid, g))
        heads = {h for g in q["gold_docs"] if g in DOCSET for _, h in DOCSET[g].headings}
        for s in q["gold_sections"]:
            check(s in heads, "%s: gold section %r is not a heading of its gold docs" % (qid, s))
        try:
            got = DERIVE[k]()
        except Exception as e:  # noqa
            fail("%s: derivation error %r" % (qid, e))
            continue
        if q["answer_type"] == "not_found":
            check(q["kind"] == "unanswerable" and q["answers"] == [] and q["gold_docs"] == [],
                  "%s: not_found must have empty answers and gold_docs" % qid)
            print("%s  %-17s derived=<not found>  OK" % (qid, q["kind"]))
            continue
        canon = q["answers"][0]
        if isinstance(got, str):
            ok = norm(got) == norm(canon) or norm(got) == norm(strip_num(canon))
        else:
            cv = num(canon)
            ok = cv is not None and abs(cv - got) <= (0.05 if isinstance(got, float) and got != int(got) else 1e-9)
        check(ok, "%s: derived %r but canonical answer is %r" % (qid, got, canon))
        if q["answer_type"] == "span":
            text = "\n".join(DOCSET[g].text for g in q["gold_docs"] if g in DOCSET)
            check(any(a in text for a in q["answers"]), "%s: no answer form occurs in gold docs" % qid)
        if not isinstance(got, str):
            # every equivalent form must state the same quantity (scale words honoured)
            for a in q["answers"]:
                v = num(a)
                if v is not None and "million" in a and "million" not in canon:
                    v *= 1000  # canonical in thousands of dollars
                check(v is not None and abs(v - got) <= 0.05, "%s: answer form %r disagrees" % (qid, a))
        print("%s  %-17s derived=%-36r canonical=%r  %s" % (qid, q["kind"], got, canon, "OK" if ok else "MISMATCH"))

    check(counts == TARGET, "kind counts %r != %r" % (counts, TARGET))
    first, second = qs[:13], qs[13:]
    for kind in TARGET:
        a = sum(q["kind"] == kind for q in first)
        b = sum(q["kind"] == kind for q in second)
        check(abs(a - b) <= 1, "kind %s unbalanced across halves: %d vs %d" % (kind, a, b))
    tabular = sum(q["kind"] in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy")
                  for q in qs)
    check(tabular * 2 >= len(qs), "fewer than half of the questions are table/sum/comparison/section questions")

    nt = check_table_arith(PLAN, "plan")
    nh = sum(check_table_arith(d, d.path) for d in HP)
    check_summaries()
    ic, oc = check_citations()
    check_ency()
    exts = {os.path.splitext(p)[1] for p in DOCSET}
    check({".md", ".html", ".txt"} <= exts, "formats missing")

    print()
    print("documents: %d (%s)" % (len(DOCSET), ", ".join(sorted(exts))))
    print("kinds: " + ", ".join("%s=%d" % (k, counts.get(k, 0)) for k in TARGET))
    print("budget tables checked: %d; quarterly tables checked: %d; citations in collection %d, outside %d"
          % (nt, nh, ic, oc))
    if FAILURES:
        print("\n%d FAILURE(S)" % len(FAILURES))
        sys.exit(1)
    print("ALL CHECKS PASSED")


if __name__ == "__main__":
    main()

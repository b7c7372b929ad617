#!/usr/bin/env python3
"""Re-derive every canonical answer of the fresh_f set from the documents.

Standard library only.  Parses Markdown (headings, YAML front matter, pipe
tables), HTML (headings, tables, paragraphs) and plain text (underlined
headings), splits sentences, reads reference lists, then recomputes each
answer by code and compares it with questions.jsonl.  Exit code 1 on any
failure.
"""
import json
import os
import re
import sys
from collections import Counter
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg)


# ---------------------------------------------------------------- numbers
NUM_RE = re.compile(r"\(?-?\d[\d,]*(?:\.\d+)?\)?")


def to_num(s):
    s = s.strip().replace("€", "").replace("%", "").strip()
    neg = s.startswith("(") and s.endswith(")")
    s = s.strip("()").replace(",", "")
    try:
        v = float(s)
    except ValueError:
        return None
    return -v if neg else v


def first_num(s):
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", s)
    if not m:
        return None
    return float(m.group(0).replace(",", ""))


def decimals(s):
    m = re.search(r"-?\d[\d,]*(?:\.(\d+))?", s)
    return len(m.group(1)) if m and m.group(1) else 0


# ---------------------------------------------------------------- documents
class Doc:
    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.title = None
        self.headings = []          # (level, text)
        self.sections = {}          # heading text -> body text
        self.parent = {}            # heading text -> parent heading text
        self.tables = []            # dicts: heading, header, rows
        self.text = ""

    def add_heading(self, level, text, stack):
        text = text.strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        self.parent[text] = stack[-1][1] if stack else None
        stack.append((level, text))
        self.headings.append((level, text))
        self.sections.setdefault(text, "")
        if level == 1 and self.title is None:
            self.title = text
        return text

    def section_sentences(self, heading):
        return sentences(self.sections.get(heading, ""))

    def table(self, heading, index=0):
        ts = [t for t in self.tables if t["heading"] == heading]
        return ts[index]

    def cell(self, heading, row, col, index=0):
        t = self.table(heading, index)
        ci = t["header"].index(col)
        for r in t["rows"]:
            if r[0] == row:
                return to_num(r[ci])
        raise KeyError((self.path, heading, row, col))


def sentences(text):
    text = re.sub(r"\s+", " ", text).strip()
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"])", text) if s]


def split_row(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


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
    stack, cur, i = [], None, 0
    body = []
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^(#{1,6})\s+(.*)$", ln)
        if m:
            cur = d.add_heading(len(m.group(1)), m.group(2), stack)
            i += 1
            continue
        if ln.strip().startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s\-:|]+\|$", lines[i + 1].strip()):
            header = split_row(ln)
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(split_row(lines[i]))
                i += 1
            d.tables.append({"heading": cur, "header": header, "rows": rows})
            continue
        if cur is not None:
            d.sections[cur] += ln + "\n"
        body.append(ln)
        i += 1
    d.text = "\n".join(lines)
    return d


class _HTML(HTMLParser):
    def __init__(self, doc):
        super().__init__()
        self.d = doc
        self.stack = []
        self.cur = None
        self.mode = None
        self.buf = ""
        self.row = None
        self.table = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        if re.match(r"h[1-6]$", tag):
            self.mode, self.buf = tag, ""
        elif tag == "table":
            self.table = {"heading": self.cur, "header": None, "rows": []}
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.mode, self.buf = "cell", ""
        elif tag == "p":
            self.mode, self.buf = "p", ""

    def handle_endtag(self, tag):
        if re.match(r"h[1-6]$", tag) and self.mode == tag:
            self.cur = self.d.add_heading(int(tag[1]), self.buf, self.stack)
            self.text.append(self.buf)
            self.mode = None
        elif tag in ("td", "th") and self.mode == "cell":
            self.row.append(self.buf.strip())
            self.text.append(self.buf)
            self.mode = None
        elif tag == "tr" and self.table is not None:
            if self.table["header"] is None:
                self.table["header"] = self.row
            else:
                self.table["rows"].append(self.row)
        elif tag == "table":
            self.d.tables.append(self.table)
            self.table = None
        elif tag == "p" and self.mode == "p":
            if self.cur is not None:
                self.d.sections[self.cur] += self.buf.strip() + "\n"
            self.text.append(self.buf)
            self.mode = None

    def handle_data(self, data):
        if self.mode:
            self.buf += data


def parse_html(path, raw):
    d = Doc(path)
    p = _HTML(d)
    p.feed(raw)
    d.text = "\n".join(p.text)
    return d


def parse_txt(path, raw):
    d = Doc(path)
    lines = raw.split("\n")
    stack, cur, i = [], None, 0
    while i < len(lines):
        ln = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if ln.strip() and re.match(r"^(=+|-+)$", nxt.strip()) and len(nxt.strip()) >= 3:
            cur = d.add_heading(1 if nxt.strip()[0] == "=" else 2, ln, stack)
            i += 2
            continue
        if cur is not None:
            d.sections[cur] += ln + "\n"
        i += 1
    d.text = raw
    return d


def load_docs():
    docs = {}
    for fn in sorted(os.listdir(os.path.join(HERE, "docs"))):
        rel = "docs/" + fn
        raw = open(os.path.join(HERE, rel), encoding="utf-8").read()
        if fn.endswith(".md"):
            docs[rel] = parse_md(rel, raw)
        elif fn.endswith(".html"):
            docs[rel] = parse_html(rel, raw)
        elif fn.endswith(".txt"):
            docs[rel] = parse_txt(rel, raw)
    return docs


DOCS = load_docs()


def doc_by_title(title):
    for d in DOCS.values():
        if d.title == title:
            return d
    return None


def find_doc(pred):
    hits = [d for d in DOCS.values() if pred(d)]
    assert len(hits) == 1, [h.path for h in hits]
    return hits[0]


# ---------------------------------------------------------------- references
REF_RE = re.compile(r"^(?:-\s+)?(?P<authors>.+?) \((?P<year>\d{4})\)\. (?P<title>[^.]+)\. ")


def references(doc):
    out = []
    for ln in doc.sections.get("References", "").split("\n"):
        m = REF_RE.match(ln.strip())
        if m:
            first = m.group("authors").split(",")[0].strip()
            out.append({"first": first, "year": m.group("year"), "title": m.group("title"), "raw": ln.strip()})
    return out


CITE_RE = re.compile(r"([A-Z][a-z]+)(?: et al\.| and [A-Z][a-z]+)?,? \(?(\d{4})\)?")


def cited_in(doc, heading, keyword):
    """Follow the citation in the sentence of `heading` that contains `keyword`
    to the cited paper's document (via the reference list's exact title)."""
    refs = references(doc)
    for s in doc.section_sentences(heading):
        if keyword not in s:
            continue
        # take the citation nearest after the keyword
        tail = s[s.index(keyword):]
        for m in CITE_RE.finditer(tail):
            for r in refs:
                if r["first"] == m.group(1) and r["year"] == m.group(2):
                    target = doc_by_title(r["title"])
                    return r, target
    return None, None


def sentence_value(doc, heading, must, pattern):
    for s in doc.section_sentences(heading):
        if all(w in s for w in must):
            m = re.search(pattern, s)
            if m:
                return m.group(1)
    raise KeyError((doc.path, heading, must))


# ---------------------------------------------------------------- the corpora
BUDGET = find_doc(lambda d: d.title and d.title.startswith("Carrowmere County School District Annual Budget"))
REVIEW = find_doc(lambda d: d.title and d.title.startswith("Board Finance Committee Review"))
AIR = {d.meta["quarter"]: d for d in DOCS.values() if d.meta.get("company") == "Nordhavn Airways"}
PAPERS = {d.path: d for d in DOCS.values() if "References" in d.sections}
ENC = {d.title: d for d in DOCS.values() if d.title in (
    "Ilse Varenkamp", "Kastell Opera House", "Dornholt", "River Selmar", "Dornholt Philharmonic Orchestra")}


def division_heading(name):
    for lvl, h in BUDGET.headings:
        if lvl == 3 and re.sub(r"^[\d.]+\s+", "", h) == name:
            return h
    raise KeyError(name)


def child(parent, name):
    for h, p in BUDGET.parent.items():
        if p == parent and re.sub(r"^[\d.]+\s+", "", h) == name:
            return h
    raise KeyError((parent, name))


def budget_line(division, sub, item, col="2025 Budget"):
    return BUDGET.cell(child(division_heading(division), sub), item, col)


def rows_named(item, col="2025 Budget"):
    out = []
    for t in BUDGET.tables:
        for r in t["rows"]:
            if r[0] == item:
                out.append((t["heading"], to_num(r[t["header"].index(col)])))
    return out


def link_target(doc, heading, name_pred):
    """Names of encyclopedia pages mentioned in a section (exact-name links)."""
    text = doc.sections.get(heading, "")
    return [t for t in ENC if t != doc.title and t in text and name_pred(t)]


def sentence_with(doc, heading, *words):
    for s in doc.section_sentences(heading):
        if all(w in s for w in words):
            return s
    raise KeyError((doc.path, heading, words))


# ---------------------------------------------------------------- derivations
def d01():
    return budget_line("Secondary Education Division", "Operations", "Transport")


def d02():
    c = ENC["Ilse Varenkamp"]
    s = sentence_with(c, "Career", "The Salt Bride", "premiered")
    house = [t for t in ENC if t in s][0]
    return int(re.search(r"opened in (\d{4})", ENC[house].sections["History"]).group(1))


def d03():
    return sum(budget_line(div, "Staffing", "Teaching Salaries")
               for div in ("Primary Education Division", "Secondary Education Division"))


def d04():
    q2 = AIR["Q2"]
    cur = q2.cell("Segment Revenue", "Cargo", "Q2 2025")
    prev = q2.cell("Restatement of First-Quarter Figures", "Cargo revenue", "Q1 2025 restated")
    return round(cur - prev, 1)


def d05():
    t = REVIEW.table("3 Figures Disputed")
    for r in t["rows"]:
        if r[0] == "Secondary Education Division" and r[1] == "Transport":
            return to_num(r[t["header"].index("Committee figure 2025")])


def d06():
    p4 = find_doc(lambda d: d.title and d.title.startswith("Coupling Calendar and Cycle Ageing"))
    ref, target = cited_in(p4, "2 Method", "calendar-ageing term")
    assert target is not None, "citation not resolved"
    return float(sentence_value(target, "3 Results", ["activation energy"], r"(\d+(?:\.\d+)?) kJ/mol"))


def d07():
    for t in BUDGET.tables:
        if any(r[0] == "Therapy Services" for r in t["rows"]):
            return BUDGET.parent[t["heading"]]


def d08():
    return AIR["Q2"].cell("Segment Revenue", "European", "Q2 2025")


def d09():
    return None if not any(h.startswith("3.3") for h, _ in rows_named("Utilities")) else "found"


def d10():
    c = ENC["Ilse Varenkamp"]
    s = sentence_with(c, "Early Life", "born")
    city = [t for t in ENC if t in s and t != "Ilse Varenkamp"][0]
    s2 = sentence_with(ENC[city], city, "lies on")
    river = [t for t in ENC if t in s2 and t != city][0]
    return float(re.search(r"(\d+) kilometres long", ENC[river].sections[river]).group(1))


def d11():
    q2 = AIR["Q2"]
    return round(q2.cell("Restatement of First-Quarter Figures", "Group revenue", "Q1 2025 restated")
                 + q2.cell("Segment Revenue", "Total", "Q2 2025"), 1)


def d12():
    t = "4.1 Expenditure Summary"
    a = BUDGET.cell(t, "Special Needs Services", "2024 Actual")
    b = BUDGET.cell(t, "Special Needs Services", "2025 Budget")
    return (b - a) / a * 100


def d13():
    o = ENC["Kastell Opera House"]
    river = [t for t in link_target(o, "Kastell Opera House", lambda t: t.startswith("River"))][0]
    return re.search(r"rises in the ([A-Z][a-z]+ Hills)", ENC[river].sections["Course"]).group(1)


def d14():
    p4 = find_doc(lambda d: d.title and d.title.startswith("Coupling Calendar and Cycle Ageing"))
    return float(sentence_value(p4, "3 Results", ["unified framework", "root-mean-square"],
                                r"error of (\d+\.\d+) percent"))


def d15():
    p3 = find_doc(lambda d: d.title and d.title.startswith("Physics-Informed Neural Networks"))
    ref, target = cited_in(p3, "2 Method", "cycle term")
    assert target is not None
    return float(sentence_value(target, "3 Results", ["1,000 cycles"], r"retained (\d+\.\d+) percent"))


def d16():
    vals = rows_named("Transport")
    assert len(vals) == 3, vals
    return sum(v for _, v in vals)


def d17():
    t = REVIEW.table("3 Figures Disputed")
    for r in t["rows"]:
        if r[0] == "Special Needs Services" and r[1] == "Support Staff":
            b = to_num(r[2])
            c = to_num(r[3])
            assert b == budget_line("Special Needs Services", "Staffing", "Support Staff")
            return b - c


def d18():
    r = ENC["River Selmar"]
    s = sentence_with(r, "Course", "largest city")
    city = [t for t in ENC if t in s and t != "River Selmar"][0]
    house = link_target(ENC[city], "Culture", lambda t: "Opera House" in t)[0]
    return re.search(r"designed by the architect ([A-Z][a-z]+ [A-Z][a-z]+)", ENC[house].sections["History"]).group(1)


def d19():
    q2 = AIR["Q2"]
    for t in q2.tables:
        if any(r[0] == "Cargo revenue" and "restated" in " ".join(t["header"]) for r in t["rows"]):
            return t["heading"]


def d20():
    q1 = AIR["Q1"]
    return round(q1.cell("Segment Operating Result", "Long-Haul", "Q1 2025")
                 - q1.cell("Segment Operating Result", "Long-Haul", "Q1 2024"), 1)


def d21():
    p2 = find_doc(lambda d: d.title and d.title.startswith("Temperature-Dependent Calendar Ageing"))
    ref, target = cited_in(p2, "1 Introduction", "extend the semi-empirical approach")
    assert target is not None
    return float(sentence_value(target, "3 Results", ["root-mean-square"], r"error of (\d+\.\d+) percent"))


def d22():
    o = ENC["Kastell Opera House"]
    orch = link_target(o, "Resident Ensembles", lambda t: "Orchestra" in t)[0]
    return int(re.search(r"founded in (\d{4})", ENC[orch].sections["History"]).group(1))


def d23():
    q2 = AIR["Q2"]
    return round(sum(q2.cell("Segment Operating Result", s, "Q2 2025") for s in ("Domestic", "European")), 1)


def d24():
    return BUDGET.cell("2.1 Revenue by Source", "County Levy", "2025 Budget")


def d25():
    # Ferrand et al. (2019) is cited but its title matches no document.
    for p in PAPERS.values():
        for r in references(p):
            if r["first"] == "Ferrand":
                return None if doc_by_title(r["title"]) is None else "found"
    return "not cited"


def d26():
    orch = ENC["Dornholt Philharmonic Orchestra"]
    s = sentence_with(orch, "History", "first principal conductor")
    comp = [t for t in ENC if t in s and t != orch.title][0]
    s2 = sentence_with(ENC[comp], "Career", "premiered")
    house = [t for t in ENC if t in s2 and "Opera House" in t][0]
    return float(re.search(r"seats ([\d,]+) people", ENC[house].sections["Architecture"]).group(1).replace(",", ""))


DERIVE = {f"fresh_f-{i:02d}": globals()[f"d{i:02d}"] for i in range(1, 27)}


# ---------------------------------------------------------------- table checks
def change_rule(header):
    years = [re.search(r"(\d{4})", h) for h in header[1:3]]
    if all(years) and int(years[0].group(1)) > int(years[1].group(1)):
        return lambda a, b: a - b
    return lambda a, b: b - a


def check_tables():
    n = 0
    for d in DOCS.values():
        for t in d.tables:
            hdr = t["header"]
            numcols = [i for i, h in enumerate(hdr) if all(to_num(r[i]) is not None for r in t["rows"])]
            # change column
            if hdr[-1] in ("Change", "Difference") and len(numcols) >= 3:
                a_i, b_i, c_i = numcols[-3], numcols[-2], numcols[-1]
                rule = change_rule([hdr[0], hdr[a_i], hdr[b_i]])
                for r in t["rows"]:
                    exp = rule(to_num(r[a_i]), to_num(r[b_i]))
                    if abs(exp - to_num(r[c_i])) > 1e-6:
                        fail(f"{d.path} [{t['heading']}] row {r[0]}: change {r[c_i]} != {exp:g}")
                n += 1
            # total row
            if t["rows"] and t["rows"][-1][0] == "Total":
                for ci in numcols:
                    s = sum(to_num(r[ci]) for r in t["rows"][:-1])
                    if abs(s - to_num(t["rows"][-1][ci])) > 1e-6:
                        fail(f"{d.path} [{t['heading']}] column {hdr[ci]}: rows sum {s:g} != Total {t['rows'][-1][ci]}")
                n += 1
    # budget cross-checks: summary vs division tables, operating result
    for col in ("2024 Actual", "2025 Budget", "Change"):
        for lvl, h in BUDGET.headings:
            if lvl == 3 and h.startswith("3."):
                name = re.sub(r"^[\d.]+\s+", "", h)
                subs = [c for c, p in BUDGET.parent.items() if p == h]
                tot = sum(BUDGET.cell(s, "Total", col) for s in subs)
                summ = BUDGET.cell("4.1 Expenditure Summary", name, col)
                if abs(tot - summ) > 1e-6:
                    fail(f"budget summary {name} {col}: {summ:g} != divisions {tot:g}")
                n += 1
        rev = BUDGET.cell("2.1 Revenue by Source", "Total", col)
        exp = BUDGET.cell("4.1 Expenditure Summary", "Total", col)
        if BUDGET.cell("4.2 Operating Result", "Total Revenue", col) != rev:
            fail(f"4.2 Total Revenue {col} mismatch")
        if BUDGET.cell("4.2 Operating Result", "Total Expenditure", col) != -exp:
            fail(f"4.2 Total Expenditure {col} mismatch")
        if BUDGET.cell("4.2 Operating Result", "Net Operating Surplus", col) != rev - exp:
            fail(f"4.2 Net Operating Surplus {col} mismatch")
        n += 3
    # committee review quotes the budget's own figures and disagrees with them
    t = REVIEW.table("3 Figures Disputed")
    for r in t["rows"]:
        div, item, b, c = r[0], r[1], to_num(r[2]), to_num(r[3])
        sub = "Operations" if item == "Transport" else "Staffing"
        if budget_line(div, sub, item) != b:
            fail(f"review quotes {div}/{item} as {b:g}, budget says otherwise")
        if b == c:
            fail(f"review does not dispute {div}/{item}")
        n += 1
    # airline restatement is consistent with Q1 report
    q1, q2 = AIR["Q1"], AIR["Q2"]
    if q2.cell("Restatement of First-Quarter Figures", "Cargo revenue", "Q1 2025 as reported") != q1.cell("Segment Revenue", "Cargo", "Q1 2025"):
        fail("restatement 'as reported' Cargo differs from Q1 report")
    if q2.cell("Restatement of First-Quarter Figures", "Group revenue", "Q1 2025 as reported") != q1.cell("Segment Revenue", "Total", "Q1 2025"):
        fail("restatement 'as reported' group revenue differs from Q1 report")
    n += 2
    return n


# ---------------------------------------------------------------- question checks
TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
          "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}


def norm(s):
    return re.sub(r"\s+", " ", s.lower()).strip()


def compare(qid, canon, derived):
    if derived is None:
        fail(f"{qid}: derivation returned nothing")
        return
    if isinstance(derived, str):
        c = re.sub(r"^[\d.]+\s+", "", canon)
        d = re.sub(r"^[\d.]+\s+", "", derived)
        if norm(c) != norm(d):
            fail(f"{qid}: canonical {canon!r} != derived {derived!r}")
        return
    c = first_num(canon)
    if c is None:
        fail(f"{qid}: canonical {canon!r} has no number")
        return
    dv = round(float(derived), decimals(canon))
    low = canon.lower()
    if ("decrease" in low or "lower" in low or "fell" in low) and c > 0:
        c = -c
    if abs(dv - c) > 1e-9:
        fail(f"{qid}: canonical {canon!r} ({c:g}) != derived {derived!r}")


def check_variants(q):
    a = q["answers"]
    c = first_num(a[0])
    if c is None:
        return
    for v in a[1:]:
        x = first_num(v)
        if x is None:
            continue
        ok = any(abs(abs(x) * f - abs(c)) < 1e-6 * max(1, abs(c)) for f in (1, 1000, 0.001))
        if not ok and abs(abs(x) - abs(c)) > 0.05:  # allow extra precision, e.g. 8.44 vs 8.4
            fail(f"{q['id']}: answer variant {v!r} disagrees with {a[0]!r}")


def main():
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]
    ntab = check_tables()
    print(f"documents: {len(DOCS)}; table/consistency checks: {ntab}")
    kinds = Counter(q["kind"] for q in qs)
    for i, q in enumerate(qs, 1):
        qid = q["id"]
        if qid != f"fresh_f-{i:02d}":
            fail(f"id out of sequence: {qid}")
        if q["kind"] not in TARGET:
            fail(f"{qid}: unknown kind {q['kind']}")
        for g in q["gold_docs"]:
            if g not in DOCS:
                fail(f"{qid}: gold doc {g} missing")
        heads = {h for g in q["gold_docs"] if g in DOCS for _, h in DOCS[g].headings}
        for s in q["gold_sections"]:
            if s not in heads:
                fail(f"{qid}: gold section {s!r} not a heading of its gold docs")
        derived = DERIVE[qid]()
        if q["answer_type"] == "not_found":
            if q["answers"] or q["gold_docs"] or q["kind"] != "unanswerable":
                fail(f"{qid}: not_found must have empty answers/gold_docs and kind unanswerable")
            if derived is not None:
                fail(f"{qid}: expected no answer in documents, derivation found {derived!r}")
            status = "not found (as expected)"
        else:
            if not q["answers"]:
                fail(f"{qid}: no answers")
                continue
            compare(qid, q["answers"][0], derived)
            check_variants(q)
            if q["answer_type"] == "span":
                texts = [DOCS[g].text for g in q["gold_docs"]]
                if not any(a in t or a.lower() in t.lower() for a in q["answers"] for t in texts):
                    fail(f"{qid}: no answer form occurs in a gold document")
            elif q["answer_type"] != "computed":
                fail(f"{qid}: bad answer_type {q['answer_type']}")
            status = f"derived {derived if isinstance(derived, str) else round(float(derived), 4)!s}"
        print(f"{qid} [{q['kind']}] {status} | canonical: {q['answers'][0] if q['answers'] else '-'}")
    # balance
    for k, n in TARGET.items():
        if kinds.get(k, 0) != n:
            fail(f"kind {k}: {kinds.get(k, 0)} questions, expected {n}")
    half = len(qs) // 2
    h1 = Counter(q["kind"] for q in qs[:half])
    h2 = Counter(q["kind"] for q in qs[half:])
    for k in TARGET:
        if abs(h1.get(k, 0) - h2.get(k, 0)) > 1:
            fail(f"kind {k} unbalanced across halves: {h1.get(k, 0)} vs {h2.get(k, 0)}")
    tabular = sum(kinds[k] for k in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy"))
    if tabular * 2 < len(qs):
        fail("fewer than half of the questions are about tables, sums, comparisons and sections")
    print("kinds:", dict(sorted(kinds.items())), "| first half:", dict(sorted(h1.items())),
          "| second half:", dict(sorted(h2.items())))
    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        sys.exit(1)
    print(f"OK: {len(qs)} questions re-derived and checked")


if __name__ == "__main__":
    main()

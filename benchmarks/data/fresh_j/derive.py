#!/usr/bin/env python3
"""Re-derive every canonical answer of the fresh_j set from the documents (standard library only).

Parses Markdown (front matter, headings, pipe tables), HTML (headings, tables, paragraphs) and plain
text (title, section headings, reference lists) itself, then recomputes each answer by code and compares
it with questions.jsonl. Exits non-zero on any failure.
"""
import json
import os
import re
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
FAIL = []


def fail(msg):
    FAIL.append(msg)
    print("FAIL:", msg)


# ---------------------------------------------------------------- parsing
class Section:
    def __init__(self, level, heading, parent):
        self.level, self.heading, self.parent = level, heading, parent
        self.lines, self.tables = [], []

    @property
    def text(self):
        return " ".join(self.lines)


class Doc:
    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.sections = []
        self.title = None

    def add_section(self, level, heading):
        parent = None
        for s in reversed(self.sections):
            if s.level < level:
                parent = s
                break
        sec = Section(level, heading, parent)
        self.sections.append(sec)
        if level == 1 and self.title is None:
            self.title = heading
        return sec

    @property
    def headings(self):
        return [s.heading for s in self.sections]

    def section(self, heading):
        hits = [s for s in self.sections if s.heading == heading]
        if not hits:
            raise KeyError(f"{self.path}: no heading {heading!r}")
        return hits[0]

    @property
    def text(self):
        parts = []
        for s in self.sections:
            parts.append(s.heading)
            parts.append(s.text)
            for t in s.tables:
                for row in t:
                    parts.append(" | ".join(row))
        parts.extend(f"{k}: {v}" for k, v in self.meta.items())
        return "\n".join(parts)


def parse_md(path):
    doc = Doc(path)
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    if lines and lines[0].strip() == "---":
        i = 1
        while lines[i].strip() != "---":
            k, _, v = lines[i].partition(":")
            doc.meta[k.strip()] = v.strip()
            i += 1
        i += 1
    cur = doc.add_section(0, "")
    table = None
    for line in lines[i:]:
        s = line.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue
            if table is None:
                table = []
                cur.tables.append(table)
            table.append(cells)
            continue
        table = None
        m = re.match(r"^(#{1,6})\s+(.*)$", s)
        if m:
            cur = doc.add_section(len(m.group(1)), m.group(2).strip())
        elif s:
            cur.lines.append(s)
    return doc


class _HTML(HTMLParser):
    def __init__(self, doc):
        super().__init__()
        self.doc = doc
        self.cur = doc.add_section(0, "")
        self.buf = None
        self.tag = None
        self.table = self.row = None

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]|p|td|th|title|li", tag):
            self.buf, self.tag = [], tag
        elif tag == "table":
            self.table = []
            self.cur.tables.append(self.table)
        elif tag == "tr":
            self.row = []

    def handle_endtag(self, tag):
        if tag == self.tag and self.buf is not None:
            text = re.sub(r"\s+", " ", "".join(self.buf)).strip()
            if re.fullmatch(r"h[1-6]", tag):
                self.cur = self.doc.add_section(int(tag[1]), text)
            elif tag in ("td", "th"):
                self.row.append(text)
            elif tag in ("p", "li"):
                self.cur.lines.append(text)
            self.buf, self.tag = None, None
        elif tag == "tr" and self.row is not None:
            self.table.append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.buf is not None:
            self.buf.append(data)


def parse_html(path):
    doc = Doc(path)
    _HTML(doc).feed(open(path, encoding="utf-8").read())
    return doc


def parse_txt(path):
    doc = Doc(path)
    raw = open(path, encoding="utf-8").read().split("\n")
    blocks, cur = [], []
    for line in raw:
        if line.strip():
            cur.append(line.strip())
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    sec = doc.add_section(1, blocks[0][0])
    for b in blocks[1:]:
        if len(b) == 1 and len(b[0].split()) <= 6 and not b[0].endswith(".") and not b[0].startswith("["):
            sec = doc.add_section(2, b[0])
        else:
            sec.lines.extend(b)
    return doc


def load_docs():
    docs = {}
    for name in sorted(os.listdir(DOCS)):
        p = os.path.join(DOCS, name)
        rel = "docs/" + name
        if name.endswith(".md"):
            docs[rel] = parse_md(p)
        elif name.endswith(".html"):
            docs[rel] = parse_html(p)
        elif name.endswith(".txt"):
            docs[rel] = parse_txt(p)
    return docs


# ---------------------------------------------------------------- helpers
def num(s):
    s = s.strip().replace(",", "").replace("$", "")
    neg = s.startswith("(") and s.endswith(")")
    s = s.strip("()")
    v = float(s)
    return -v if neg else v


def is_num(s):
    try:
        num(s)
        return True
    except ValueError:
        return False


def table(doc, heading, idx=0):
    return doc.section(heading).tables[idx]


def cell(doc, heading, row, col):
    t = table(doc, heading)
    header = t[0]
    c = header.index(col)
    for r in t[1:]:
        if r[0] == row:
            return num(r[c])
    raise KeyError(f"{doc.path}: row {row!r} not in {heading!r}")


def children(doc, sec):
    return [s for s in doc.sections if s.parent is sec]


def strip_number(h):
    return re.sub(r"^[\d.]+\s+", "", h)


def by_title(docs, title):
    hits = [d for d in docs.values() if d.title == title]
    if len(hits) != 1:
        raise KeyError(f"no unique document titled {title!r}")
    return hits[0]


def find(doc, pattern, heading=None):
    text = doc.section(heading).text if heading else doc.text
    m = re.search(pattern, text)
    if not m:
        raise KeyError(f"{doc.path}: pattern {pattern!r} not found")
    return m.group(1) if m.lastindex == 1 else m.groups()


def references(doc):
    refs = {}
    for line in doc.section("References").lines:
        m = re.match(r"^\[(\d+)\]\s+(.*)$", line)
        if m:
            t = re.search(r"\(\d{4}\)\.\s+(.+?)\.\s", m.group(2))
            refs[int(m.group(1))] = t.group(1)
    return refs


def cite(docs, citing, n, pattern):
    doc = docs[citing]
    body = " ".join(s.text for s in doc.sections if s.heading != "References")
    if f"[{n}]" not in body:
        raise KeyError(f"{citing}: marker [{n}] not used in the text")
    title = references(doc)[n]
    cited = by_title(docs, title)
    return find(cited, pattern, "Results"), cited.path


# ---------------------------------------------------------------- derivations
B = "docs/dunmore_parks_financial_plan_fy2025.md"
A = "docs/dunmore_auditor_review_memo.html"
V1, V2, V3 = "docs/velmora_q1_2024_call.md", "docs/velmora_q2_2024_call.md", "docs/velmora_q3_2024_call.md"
NAME = r"([A-Z][a-z]+ [A-Z][a-z]+)"


def founder(docs):
    return find(by_title(docs, "Elvane Ropeworks"), r"founded in \d{4} by " + NAME)


def birthplace(docs):
    return find(by_title(docs, founder(docs)), r"born in \d{4} in " + NAME)


def auditor_row(docs, item, unit):
    t = table(docs[A], "2.1 Figures We Dispute")
    h = t[0]
    for r in t[1:]:
        if r[0] == item and r[1] == unit:
            return num(r[h.index("Figure in Plan")]), num(r[h.index("Auditor's Figure")])
    raise KeyError(item)


def unit_sections(docs, division_heading):
    d = docs[B]
    return [s for s in children(d, d.section(division_heading)) if s.tables]


def derive(docs):
    d = docs[B]
    out = {}
    out[1] = cell(d, "2.1.2 Information Technology", "Contracted Services", "FY2025 Proposed")
    out[2] = num(find(by_title(docs, founder(docs)), r"born in (\d{4})"))
    units = [s for s in d.sections if s.level == 4 and s.parent.parent.heading == "2 Operating Budget"]
    assert len(units) == 5, units
    out[3] = sum(cell(d, s.heading, "Personnel", "FY2025 Proposed") for s in units)
    out[4] = num(cite(docs, "docs/paper_arkwell_2023_projections.txt", 1, r"mean absolute error of ([\d.]+) days")[0])
    t = table(docs[V3], "Segment Results")
    q3, q2r = num(t[-1][1]), num(t[-1][2])
    assert t[-1][0] == "Total" and abs((q3 - q2r) - num(t[-1][3])) < 1e-9
    out[5] = round(q3 - q2r, 1)
    uf = [s for s in d.sections if strip_number(s.heading) == "Urban Forestry"][0]
    out[6] = strip_number(uf.parent.heading)
    town = birthplace(docs)
    island = find(by_title(docs, town), r"largest settlement on " + NAME)
    out[7] = num(find(by_title(docs, island), r"area of (\d+) square kilometres"))
    plan_fig, aud_fig = auditor_row(docs, "Utilities", "Aquatics")
    assert plan_fig == cell(d, "2.2.2 Aquatics", "Utilities", "FY2025 Proposed") and plan_fig != aud_fig
    out[8] = aud_fig
    out[9] = cell(docs[V1], "Segment Results", "Field Services", "Q1 2024")
    out[10] = None
    out[11] = round(cell(docs[V1], "Segment Results", "Imaging Sensors", "Q1 2024")
                    + cell(docs[V3], "Segment Results", "Imaging Sensors", "Q2 2024 (restated)")
                    + cell(docs[V3], "Segment Results", "Imaging Sensors", "Q3 2024"), 1)
    out[12] = num(cite(docs, "docs/paper_castaine_2022_coupled_forecast.md", 2,
                       r"root mean square error of ([\d.]+) cm")[0])
    river = find(by_title(docs, town), r"mouth of the ([A-Z][a-z]+ River)")
    out[13] = num(find(by_title(docs, river), r"flows (\d+) kilometres"))
    out[14] = cell(d, "2.1.1 Central Office", "Utilities", "FY2024 Adopted")
    out[15] = sum(cell(d, s.heading, "Contracted Services", "FY2025 Proposed")
                  for s in unit_sections(docs, "2.2 Field Operations Division"))
    cur, prior = find(docs[V3], r"revenue of \$([\d.]+) million in the third quarter of 2024, compared with "
                                r"\$([\d.]+) million in the third quarter of 2023")
    out[16] = round(num(cur) - num(prior), 1)
    hq = find(by_title(docs, "Elvane Ropeworks"), r"headquarters are in " + NAME)
    out[17] = num(find(by_title(docs, hq), r"2021 census the town had a population of ([\d,]+)"))
    out[18] = [s.heading for s in d.sections if any(r[0] == "Crestline Trail Extension" for t in s.tables for r in t)][0]
    out[19] = num(cite(docs, "docs/paper_parrell_2021_radar_ice_off.md", 1, r"Across the (\d+) lakes")[0])
    plan_fig, aud_fig = auditor_row(docs, "Heron Marsh Boardwalk", "Capital Projects")
    assert plan_fig == cell(d, "3.1.1 Projects by Site", "Heron Marsh Boardwalk", "FY2025 Proposed")
    out[20] = abs(plan_fig - aud_fig)
    ch = {strip_number(s.heading): cell(d, s.heading, "Total", "Change")
          for s in unit_sections(docs, "2.2 Field Operations Division")}
    out[21] = max(ch, key=ch.get)
    out[22] = cell(d, "3.2 Funding Sources", "State Grants", "FY2025 Proposed")
    river2 = find(by_title(docs, "Port Elvane"), r"mouth of the ([A-Z][a-z]+ River)")
    out[23] = find(by_title(docs, river2), r"rises in " + NAME)
    out[24] = None
    out[25] = (cell(d, "3.1.1 Projects by Site", "Heron Marsh Boardwalk", "FY2025 Proposed")
               + cell(d, "3.1.1 Projects by Site", "Crestline Trail Extension", "FY2025 Proposed"))
    largest = find(by_title(docs, "Carrow Isle"), r"largest settlement on the island is " + NAME)
    company = find(by_title(docs, largest), r"headquarters of ([A-Z][a-z]+ [A-Z][a-z]+)")
    out[26] = find(by_title(docs, company), r"founded in \d{4} by " + NAME)
    return out


def check_unanswerable(docs):
    # 10: no segment guidance for Q4 Field Services
    outlook = docs[V3].section("Outlook").text
    if "Field Services" in outlook or "do not give guidance by segment" not in outlook:
        fail("q10: Outlook unexpectedly gives segment guidance")
    for p, doc in docs.items():
        for sent in re.split(r"(?<=[.!?])\s+|\n", doc.text):
            if "Field Services" in sent and re.search(r"fourth quarter|Q4", sent):
                fail(f"q10: {p} mentions Q4 Field Services: {sent}")
    # 24: no 2011 population for Port Elvane
    for p, doc in docs.items():
        if "Port Elvane" in doc.text and "2011" in doc.text:
            fail(f"q24: {p} mentions 2011 alongside Port Elvane")


# ---------------------------------------------------------------- table arithmetic
def check_tables(docs):
    for p in [B, V1, V2, V3]:
        doc = docs[p]
        for s in doc.sections:
            for t in s.tables:
                header, rows = t[0], t[1:]
                if rows[-1][0] != "Total":
                    fail(f"{p} {s.heading}: table has no Total row")
                    continue
                for c in range(1, len(header)):
                    body = sum(num(r[c]) for r in rows[:-1])
                    if abs(body - num(rows[-1][c])) > 1e-6:
                        fail(f"{p} {s.heading}: column {header[c]!r} sums to {body}, Total says {rows[-1][c]}")
                if "change" in header[-1].lower():
                    fwd = all(abs(num(r[2]) - num(r[1]) - num(r[3])) < 1e-6 for r in rows)
                    back = all(abs(num(r[1]) - num(r[2]) - num(r[3])) < 1e-6 for r in rows)
                    if not (fwd or back):
                        fail(f"{p} {s.heading}: Change column inconsistent")
    d = docs[B]
    summary = {r[0]: r for r in table(d, "2.3 Operating Summary")[1:]}
    for div in ["2.1 Administration Division", "2.2 Field Operations Division"]:
        for c, col in [(1, "FY2024 Adopted"), (2, "FY2025 Proposed")]:
            tot = sum(cell(d, s.heading, "Total", col) for s in unit_sections(docs, div))
            if tot != num(summary[strip_number(div)][c]):
                fail(f"operating summary {div} {col}: units give {tot}")
    for col in ["FY2024 Adopted", "FY2025 Proposed"]:
        ops = cell(d, "2.3 Operating Summary", "Total", col)
        cap = cell(d, "3.1.1 Projects by Site", "Total", col)
        fund = cell(d, "3.2 Funding Sources", "Total", col)
        if ops + cap != fund:
            fail(f"funding {col}: {fund} != operating {ops} + capital {cap}")
    # Velmora: restatement and totals in prose agree with tables
    if cell(docs[V2], "Segment Results", "Imaging Sensors", "Q2 2024") == \
            cell(docs[V3], "Segment Results", "Imaging Sensors", "Q2 2024 (restated)"):
        fail("Velmora Q2 restatement missing")
    for p in [V1, V2, V3]:
        meta = docs[p].meta
        if not {"company", "quarter", "year"} <= set(meta):
            fail(f"{p}: front matter lacks company/quarter/year")


# ---------------------------------------------------------------- question checks
TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
          "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}


def first_number(s):
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", s)
    return float(m.group(0).replace(",", "")) if m else None


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def occurs(ans, text):
    a = norm(ans)
    return re.search(r"(?<![\w.])" + re.escape(a) + r"(?![\w]|\.\d)", norm(text)) is not None


def main():
    docs = load_docs()
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]
    print(f"{len(docs)} documents, {len(qs)} questions")
    kinds = [q["kind"] for q in qs]
    for k, n in TARGET.items():
        if kinds.count(k) != n:
            fail(f"kind {k}: {kinds.count(k)} questions, expected {n}")
    half = len(qs) // 2
    for k in TARGET:
        a, b = kinds[:half].count(k), kinds[half:].count(k)
        if abs(a - b) > 1:
            fail(f"kind {k} unbalanced across halves: {a} vs {b}")
    ids = [q["id"] for q in qs]
    if len(set(ids)) != len(ids) or any(not i.startswith("fresh_j-") for i in ids):
        fail("ids not unique or wrong prefix")

    check_tables(docs)
    check_unanswerable(docs)
    derived = derive(docs)

    for i, q in enumerate(qs, 1):
        qid = q["id"]
        for gd in q["gold_docs"]:
            if gd not in docs:
                fail(f"{qid}: gold doc {gd} missing")
        gold = [docs[g] for g in q["gold_docs"] if g in docs]
        for gs in q["gold_sections"]:
            if not any(gs in g.headings for g in gold):
                fail(f"{qid}: gold section {gs!r} is not a heading of a gold document")
        if q["kind"] == "unanswerable":
            if q["answers"] or q["gold_docs"] or q["answer_type"] != "not_found":
                fail(f"{qid}: unanswerable must have empty answers/gold_docs and answer_type not_found")
            print(f"{qid} unanswerable      derived=(not stated in any document)")
            continue
        if q["answer_type"] not in ("span", "computed"):
            fail(f"{qid}: bad answer_type")
        canon = q["answers"][0]
        val = derived[i]
        if isinstance(val, float) or isinstance(val, int):
            got = first_number(canon)
            ok = got is not None and abs(got - val) < 1e-6
        else:
            ok = norm(canon) == norm(val)
        shown = f"{val:g}" if isinstance(val, (int, float)) else val
        print(f"{qid} {q['kind']:<17} derived={shown!s:<30} answer={canon!r:<28} {'ok' if ok else 'MISMATCH'}")
        if not ok:
            fail(f"{qid}: derived {val!r} but canonical answer is {canon!r}")
        if q["answer_type"] == "span":
            if not any(occurs(a, g.text) for a in q["answers"] for g in gold):
                fail(f"{qid}: no answer form occurs in a gold document")

    if FAIL:
        print(f"\n{len(FAIL)} failure(s)")
        sys.exit(1)
    print("\nall checks passed")


if __name__ == "__main__":
    main()

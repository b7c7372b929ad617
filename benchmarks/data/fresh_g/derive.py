#!/usr/bin/env python3
"""Re-derive every answer of the fresh_g set from the documents (standard library only).

Parses Markdown (YAML front matter, ATX headings, pipe tables), HTML (h1-h6, tables, paragraphs) and
plain text (underlined headings) into sections; re-computes each canonical answer from table cells,
sentences and reference lists; checks spans, gold sections, table arithmetic and kind balance.
Exits non-zero on any failure.
"""
import json, os, re, sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
SET = "fresh_g"
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg)


# ---------------------------------------------------------------- parsing
class Doc:
    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.sections = []  # dicts: level, heading, lines, tables
        self.title = None

    def new_section(self, level, heading):
        sec = {"level": level, "heading": heading.strip(), "lines": [], "tables": []}
        self.sections.append(sec)
        if level == 1 and self.title is None:
            self.title = heading.strip()
        return sec

    @property
    def headings(self):
        return [s["heading"] for s in self.sections]

    def section(self, heading):
        for s in self.sections:
            if s["heading"] == heading:
                return s
        raise KeyError("%s: no section %r" % (self.path, heading))

    def text(self, sec=None):
        secs = [sec] if sec else self.sections
        out = []
        for s in secs:
            out.append(s["heading"])
            out.extend(s["lines"])
            for t in s["tables"]:
                for row in t:
                    out.append(" | ".join(row))
        return "\n".join(out)

    def sentences(self, sec=None):
        txt = " ".join(l for l in self.text(sec).split("\n"))
        return [x.strip() for x in re.split(r"(?<=[.!?])\s+(?=[A-Z\[])", txt) if x.strip()]

    def parent_of(self, heading):
        idx = self.headings.index(heading)
        lvl = self.sections[idx]["level"]
        for s in reversed(self.sections[:idx]):
            if s["level"] < lvl:
                return s["heading"]
        return None


def split_row(line):
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]


def parse_md(path, raw):
    d = Doc(path)
    lines = raw.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        for l in lines[1:end]:
            if ":" in l:
                k, v = l.split(":", 1)
                d.meta[k.strip()] = v.strip()
        lines = lines[end + 1:]
    sec = d.new_section(0, "")
    table = None
    for l in lines:
        m = re.match(r"^(#{1,6})\s+(.*)$", l)
        if m:
            sec = d.new_section(len(m.group(1)), m.group(2))
            table = None
            continue
        if l.strip().startswith("|"):
            row = split_row(l)
            if all(re.fullmatch(r":?-{3,}:?", c) for c in row):
                continue
            if table is None:
                table = []
                sec["tables"].append(table)
            table.append(row)
            continue
        table = None
        if l.strip():
            sec["lines"].append(l.strip())
    return d


class _H(HTMLParser):
    def __init__(self, doc):
        super().__init__()
        self.doc = doc
        self.sec = doc.new_section(0, "")
        self.buf = None
        self.mode = None
        self.table = None
        self.row = None

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.mode, self.buf = tag, ""
        elif tag == "table":
            self.table = []
            self.sec["tables"].append(self.table)
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th", "p", "li"):
            self.buf = ""
        elif tag == "title":
            self.mode = "title"

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag):
            self.sec = self.doc.new_section(int(tag[1]), self.buf)
            self.mode, self.buf = None, None
        elif tag in ("td", "th") and self.row is not None:
            self.row.append(self.buf.strip())
            self.buf = None
        elif tag == "tr" and self.table is not None:
            self.table.append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None
        elif tag in ("p", "li") and self.buf is not None:
            if self.buf.strip():
                self.sec["lines"].append(re.sub(r"\s+", " ", self.buf.strip()))
            self.buf = None
        elif tag == "title":
            self.mode = None

    def handle_data(self, data):
        if self.mode == "title":
            return
        if self.buf is not None:
            self.buf += data


def parse_html(path, raw):
    d = Doc(path)
    _H(d).feed(raw)
    return d


def parse_txt(path, raw):
    d = Doc(path)
    sec = d.new_section(0, "")
    lines = raw.split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if l.strip() and re.fullmatch(r"(=+|-+)", nxt.strip() or "x") and len(nxt.strip()) >= 3:
            sec = d.new_section(1 if nxt.strip()[0] == "=" else 2, l.strip())
            i += 2
            continue
        if l.strip():
            sec["lines"].append(l.strip())
        i += 1
    return d


def load_docs():
    docs = {}
    ddir = os.path.join(HERE, "docs")
    for fn in sorted(os.listdir(ddir)):
        p = "docs/" + fn
        raw = open(os.path.join(ddir, fn), encoding="utf-8").read()
        if fn.endswith(".md"):
            docs[p] = parse_md(p, raw)
        elif fn.endswith(".html"):
            docs[p] = parse_html(p, raw)
        elif fn.endswith(".txt"):
            docs[p] = parse_txt(p, raw)
        docs[p].raw = raw
    return docs


# ---------------------------------------------------------------- numbers
def num(s):
    """Parse '1,905', '(150)', '-€150 thousand', '$18.4 million', '12.4%' -> float (first number)."""
    s = s.replace("\u2212", "-")
    m = re.search(r"(\()?\s*(-)?\s*[€$]?\s*(-)?(\d[\d,]*(?:\.\d+)?)", s)
    if not m:
        return None
    v = float(m.group(4).replace(",", ""))
    if m.group(1) or m.group(2) or m.group(3):
        v = -v
    return v


def cell(doc, heading, row_label, col_label):
    sec = doc.section(heading)
    for t in sec["tables"]:
        hdr = t[0]
        if col_label in hdr:
            ci = hdr.index(col_label)
            for r in t[1:]:
                if r[0] == row_label:
                    return num(r[ci])
    raise KeyError("%s / %s / %s / %s" % (doc.path, heading, row_label, col_label))


def find(pattern, text, group=1):
    m = re.search(pattern, text)
    if not m:
        raise KeyError("pattern not found: %s" % pattern)
    return m.group(group)


def by_title(docs, title):
    for d in docs.values():
        if d.title == title:
            return d
    raise KeyError("no document titled %r" % title)


def references(doc):
    """Return list of dicts (marker, authors, year, title) from the References section."""
    refs = []
    for l in doc.section("References")["lines"]:
        m = re.match(r"^(?:-\s*)?(?:\[(\d+)\]\s*)?(.+?)\s*\((\d{4})\)\.\s*(.+?)\.\s", l)
        if m:
            refs.append({"marker": m.group(1), "authors": m.group(2), "year": m.group(3), "title": m.group(4)})
    return refs


def ref_by_marker(doc, n):
    for r in references(doc):
        if r["marker"] == str(n):
            return r
    raise KeyError("%s: no reference [%s]" % (doc.path, n))


def ref_by_author_year(doc, surname, year):
    for r in references(doc):
        if r["authors"].startswith(surname) and r["year"] == str(year):
            return r
    raise KeyError("%s: no reference %s %s" % (doc.path, surname, year))


def page_link(docs, text, exclude=None):
    """Titles of other encyclopedia pages mentioned in text, in order of appearance."""
    hits = []
    for d in docs.values():
        if d.title and d.title != exclude and d.title in text:
            hits.append((text.index(d.title), d.title))
    return [t for _, t in sorted(hits)]


# ---------------------------------------------------------------- derivations
B = "docs/hbwa_financial_plan_2026.md"; A = "docs/hbwa_audit_committee_review.txt"
BT = "docs/brannock_tide_q%d_2025.md"


def derive_all(docs):
    b, a = docs[B], docs[A]
    P26, P25 = "FY2026 Plan", "FY2025 Actual"
    q = lambda n: docs[BT % n]
    D = {}
    D[1] = cell(b, "1.1.2 Sallow Reach Treatment Works", "Energy", P26)
    D[2] = sum(cell(b, h, "Personnel", P26) for h in
               [x for x in b.headings if b.parent_of(x) == "1.1 Treatment Division"])

    def chain_engine_river():
        eh = by_title(docs, "Tallow Lane Engine House")
        river = find(r"drew its water from the ([A-Z][\w ]+?) through", eh.text())
        rv = by_title(docs, river)
        return num(find(r"It is (\d+) km long", rv.text()))
    D[3] = chain_engine_river()
    D[4] = cell(b, "1.1.1 Northgate Treatment Works", "Energy", P26) - cell(b, "1.1.1 Northgate Treatment Works", "Energy", P25)
    assert D[4] == cell(b, "1.1.1 Northgate Treatment Works", "Energy", "Change")

    def cite_mae():
        p = by_title(docs, "Coupled Turbidity Forecasting and Pump Control in the Kestle Catchment")
        marker = find(r"forecasting component is the [\w\- ]+ of \[(\d+)\]", p.text(p.section("Method")))
        cited = by_title(docs, ref_by_marker(p, marker)["title"])
        return num(find(r"mean absolute error of ([\d.]+) NTU", cited.text(cited.section("Results"))))
    D[5] = cite_mae()
    D[6] = num(find(r"contract was awarded on [\w ]+ at EUR ([\d,]+) thousand", a.text(a.section("3. Capital programme findings"))))
    assert cell(b, "2.1.1 Kestle Reservoir Spillway", "Construction", P26) != D[6]
    D[7] = re.sub(r"^[\d.]+\s+", "", b.parent_of([h for h in b.headings if h.endswith("Metering and Customer Connections")][0]))
    D[8] = num(find(r"Operating income was \$([\d.]+) million", q(1).text(q(1).section("Financial Highlights"))))
    assert q(1).meta["quarter"] == "Q1" and q(1).meta["year"] == "2025"

    def chain_chair():
        eh = by_title(docs, "Tallow Lane Engine House")
        person = find(r"designed by ([A-Z]\w+ [A-Z]\w+)", eh.text())
        pp = by_title(docs, person)
        company = find(r"co-founded (.+?) with", pp.text())
        cp = by_title(docs, company)
        return find(r"chairman is ([A-Z]\w+ [A-Z]\w+)", cp.text())
    D[9] = chain_chair()
    D[10] = cell(q(3), "Segment Results", "Container Liner", "Q3 2025") - cell(q(3), "Segment Results", "Bulk Charter", "Q3 2025")
    D[11] = None  # unanswerable, checked below
    D[12] = cell(q(3), "Segment Results", "Port Services", "Q3 2025") - \
        cell(q(3), "Restatement of Q2 2025 Segment Revenue", "Port Services", "Q2 2025 restated")

    def chain_population():
        pp = by_title(docs, "Wenna Corrick")
        town = find(r"was born in ([A-Z]\w+)", pp.text())
        return num(find(r"population of ([\d,]+)", by_title(docs, town).text()))
    D[13] = chain_population()
    D[14] = cell(b, "2.1.1 Kestle Reservoir Spillway", "Contingency", P26)

    def cite_baseline():
        p = by_title(docs, "Forecasting Inflow Turbidity with Gradient-Boosted Ensembles")
        m = re.search(r"baseline scheduler is [\w\- ]+ of ([A-Z]\w+) and [A-Z]\w+ \((\d{4})\)", p.text(p.section("Introduction")))
        cited = by_title(docs, ref_by_author_year(p, m.group(1), m.group(2))["title"])
        return num(find(r"reduced pump energy by ([\d.]+)%", cited.text(cited.section("Results"))))
    D[15] = cite_baseline()
    units = [h for h in b.headings if re.match(r"1\.\d+\.\d+ ", h)]
    D[16] = sum(cell(b, h, "Maintenance", P26) for h in units)

    def chain_sea():
        cp = by_title(docs, "Corrick & Hale Hydraulics")
        town = find(r"headquartered in ([A-Z]\w+)", cp.text())
        river = find(r"market town on the ([A-Z][\w ]+?)\.", by_title(docs, town).text())
        rv = by_title(docs, river)
        mouth = None
        for t in rv.section(river)["tables"]:
            for r in t:
                if r[0] == "Mouth":
                    mouth = r[1]
        assert mouth == find(r"enters the sea at ([A-Z]\w+ [A-Z]\w+)", rv.text())
        return mouth
    D[17] = chain_sea()
    D[18] = [re.sub(r"^[\d.]+\s+", "", s["heading"]) for s in b.sections
             if any(r[0] == "Leak detection" for t in s["tables"] for r in t)]
    assert len(D[18]) == 1
    D[18] = D[18][0]
    D[19] = cell(b, "3.1 Revenue Sources", "Regional grant", P26) - \
        num(find(r"confirms a regional grant of EUR ([\d,]+) thousand", a.text(a.section("4. Funding findings"))))
    D[20] = cell(q(3), "Segment Results", "Container Liner", "Change")
    assert abs(D[20] - (cell(q(3), "Segment Results", "Container Liner", "Q3 2025") - cell(q(3), "Segment Results", "Container Liner", "Q3 2024"))) < 1e-9

    def chain_employees():
        pp = by_title(docs, "Wenna Corrick")
        cp = by_title(docs, find(r"co-founded (.+?) with", pp.text()))
        return num(find(r"employs ([\d,]+) people", cp.text()))
    D[21] = chain_employees()
    p4 = by_title(docs, "A Benchmark of Sediment Sensors for Raw-Water Intakes")
    D[22] = num(find(r"at (\d+) raw-water intakes", p4.text(p4.section("Method"))))

    def cite_sensor():
        p = by_title(docs, "Limits of Turbidity-Based Scheduling under Flash Floods")
        marker = find(r"following the benchmark in \[(\d+)\]", p.text(p.section("Method")))
        cited = by_title(docs, ref_by_marker(p, marker)["title"])
        return num(find(r"optical backscatter sensor had the shortest median response time, ([\d.]+) seconds",
                        cited.text(cited.section("Results"))))
    D[23] = cite_sensor()
    D[24] = cell(b, "2.1.1 Kestle Reservoir Spillway", "Total", P26) + cell(b, "2.2.1 Trunk Main Replacement", "Total", P26)
    D[25] = None

    def chain_year():
        cp = by_title(docs, "Corrick & Hale Hydraulics")
        founders = find(r"founded in \d{4} by (.+?)\.", cp.text())
        people = [t for t in page_link(docs, founders)]
        assert people, "no founder page"
        pp = by_title(docs, people[0])
        building = find(r"best-known work is the (.+?),", pp.text())
        return num(find(r"completed in (\d{4})", by_title(docs, building).text()))
    D[26] = chain_year()
    return D


def check_unanswerable(docs):
    # 11: no Q4 2025 report and no Q4 figure
    for p, d in docs.items():
        if d.meta.get("company", "").startswith("Brannock"):
            if d.meta.get("quarter") == "Q4":
                fail("11: a Q4 report exists: " + p)
            if re.search(r"Q4 2025|fourth quarter of 2025", d.raw):
                fail("11: Q4 2025 figure mentioned in " + p)
    # 25: no FY2027 anywhere in the Harrowmere documents
    for p in (B, A):
        if "2027" in docs[p].raw:
            fail("25: 2027 mentioned in " + p)


def check_tables(docs):
    n = 0
    for p, d in docs.items():
        for s in d.sections:
            for t in s["tables"]:
                labels = [r[0] for r in t]
                if "Total" not in labels or len(t[0]) != 4:
                    continue
                n += 1
                body = [r for r in t[1:] if r[0] != "Total"]
                tot = t[labels.index("Total")]
                for ci in (1, 2, 3):
                    ssum = round(sum(num(r[ci]) for r in body), 6)
                    if abs(ssum - num(tot[ci])) > 1e-6:
                        fail("%s %s column %s: rows sum %s != Total %s" % (p, s["heading"], t[0][ci], ssum, tot[ci]))
                fwd = all(abs(num(r[2]) - num(r[1]) - num(r[3])) < 1e-6 for r in t[1:])
                back = all(abs(num(r[1]) - num(r[2]) - num(r[3])) < 1e-6 for r in t[1:])
                if not (fwd or back):
                    fail("%s %s: change column inconsistent" % (p, s["heading"]))
    return n


EXPECTED = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
            "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def main():
    docs = load_docs()
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]
    try:
        D = derive_all(docs)
    except Exception as e:  # noqa
        fail("derivation error: %r" % e)
        D = {}
    check_unanswerable(docs)
    ntab = check_tables(docs)
    ok = 0
    for i, qq in enumerate(qs, 1):
        qid = qq["id"]
        if qid != "%s-%02d" % (SET, i):
            fail("bad id %s" % qid)
        if qq["kind"] not in EXPECTED:
            fail("%s bad kind" % qid)
        t = qq["answer_type"]
        if (qq["kind"] == "unanswerable") != (t == "not_found"):
            fail("%s kind/answer_type mismatch" % qid)
        if t == "not_found":
            if qq["answers"] or qq["gold_docs"]:
                fail("%s not_found must have empty answers and gold_docs" % qid)
            ok += 1
            print("%s %-17s not_found (absence checked)" % (qid, qq["kind"]))
            continue
        for g in qq["gold_docs"]:
            if g not in docs:
                fail("%s gold doc missing %s" % (qid, g))
        heads = set(h for g in qq["gold_docs"] if g in docs for h in docs[g].headings)
        for s in qq["gold_sections"]:
            if s not in heads:
                fail("%s gold section %r not a heading of its gold docs" % (qid, s))
        if t == "span":
            texts = [norm(docs[g].text()) for g in qq["gold_docs"] if g in docs]
            if not any(norm(a) in tx for a in qq["answers"] for tx in texts):
                fail("%s no answer form occurs in a gold document" % qid)
        want = D.get(i)
        canon = qq["answers"][0]
        if isinstance(want, (int, float)):
            got = num(canon)
            good = got is not None and abs(got - want) < 1e-6
        else:
            good = want is not None and norm(str(want)) == norm(canon)
        if not good:
            fail("%s derived %r but canonical answer is %r" % (qid, want, canon))
        else:
            ok += 1
        print("%s %-17s derived %-14s canonical %s" % (qid, qq["kind"], (("%g" % want) if isinstance(want, float) else want), canon))
    # kind balance
    half = len(qs) // 2
    for k, n in EXPECTED.items():
        tot = sum(1 for x in qs if x["kind"] == k)
        h1 = sum(1 for x in qs[:half] if x["kind"] == k)
        if tot != n:
            fail("kind %s: %d questions, expected %d" % (k, tot, n))
        if abs(h1 - (tot - h1)) > 1:
            fail("kind %s unbalanced across halves (%d vs %d)" % (k, h1, tot - h1))
    structural = sum(1 for x in qs if x["kind"] in ("sum_difference", "period_comparison", "hierarchy", "discrepancy")
                     or any(re.match(r"\d+(\.\d+)+ ", s) for s in x["gold_sections"]) or "Segment Results" in x["gold_sections"])
    if structural * 2 < len(qs):
        fail("fewer than half of the questions are about tables/sums/comparisons/sections (%d)" % structural)
    print("\n%d documents, %d questions, %d checked tables, %d answers re-derived/verified, %d table/sections-type questions"
          % (len(docs), len(qs), ntab, ok, structural))
    print("kinds:", ", ".join("%s %d" % (k, sum(1 for x in qs if x["kind"] == k)) for k in EXPECTED))
    if FAILS:
        print("\n%d FAILURE(S)" % len(FAILS))
        sys.exit(1)
    print("ALL CHECKS PASSED")


if __name__ == "__main__":
    main()

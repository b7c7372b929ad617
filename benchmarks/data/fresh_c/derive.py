#!/usr/bin/env python3
"""Re-derive every canonical answer of the fresh_c set from the documents.

Standard library only. Parses Markdown (front matter, ATX headings, pipe tables),
HTML (headings, paragraphs, tables) and plain text (setext-style underlined headings),
then recomputes each answer by code and compares it with questions.jsonl.
Exit status is non-zero on any failure.
"""
import json
import os
import re
import sys
from collections import Counter
from html.parser import HTMLParser

BASE = os.path.dirname(os.path.abspath(__file__))
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


# ----------------------------------------------------------------- parsing
class Section:
    def __init__(self, level, heading):
        self.level = level
        self.heading = heading
        self.text = []      # paragraphs / lines of prose
        self.tables = []    # list of tables; a table is a list of rows (lists of cells)
        self.parent = None

    @property
    def body(self):
        return " ".join(self.text)


class Doc:
    def __init__(self, rel):
        self.rel = rel
        self.front = {}
        self.sections = []
        self.raw = ""

    @property
    def title(self):
        return self.sections[0].heading if self.sections else ""

    def section(self, heading):
        hits = [s for s in self.sections if s.heading == heading]
        if not hits:
            raise KeyError(f"{self.rel}: no section {heading!r}")
        return hits[0]

    def headings(self):
        return [s.heading for s in self.sections]

    def all_text(self):
        parts = []
        for s in self.sections:
            parts.append(s.heading)
            parts.extend(s.text)
            for t in s.tables:
                for r in t:
                    parts.append(" | ".join(r))
        return norm_ws(" ".join(parts))


def norm_ws(s):
    return re.sub(r"\s+", " ", s).strip()


def link_parents(doc):
    stack = []
    for s in doc.sections:
        while stack and stack[-1].level >= s.level:
            stack.pop()
        s.parent = stack[-1] if stack else None
        stack.append(s)


def parse_markdown(rel, text):
    doc = Doc(rel)
    doc.raw = text
    lines = text.split("\n")
    i = 0
    if lines and lines[0].strip() == "---":
        j = 1
        while lines[j].strip() != "---":
            if ":" in lines[j]:
                k, v = lines[j].split(":", 1)
                doc.front[k.strip()] = v.strip()
            j += 1
        i = j + 1
    cur = None
    table = None
    for line in lines[i:]:
        st = line.strip()
        m = re.match(r"^(#{1,6})\s+(.*)$", st)
        if st.startswith("|"):
            cells = [c.strip() for c in st.strip("|").split("|")]
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue
            if table is None:
                table = []
                cur.tables.append(table)
            table.append(cells)
            continue
        table = None
        if m:
            cur = Section(len(m.group(1)), m.group(2).strip())
            doc.sections.append(cur)
        elif st and cur is not None:
            cur.text.append(st)
    link_parents(doc)
    return doc


class _HTMLDoc(HTMLParser):
    def __init__(self, doc):
        super().__init__()
        self.doc = doc
        self.cur = None
        self.buf = None
        self.in_heading = None
        self.table = None
        self.row = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.in_heading = int(tag[1])
            self.buf = []
        elif tag in ("p", "li"):
            self.buf = []
        elif tag == "table":
            self.table = []
            self.cur.tables.append(self.table)
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self.in_heading:
            self.cur = Section(self.in_heading, norm_ws("".join(self.buf)))
            self.doc.sections.append(self.cur)
            self.in_heading = None
            self.buf = None
        elif tag in ("p", "li") and self.buf is not None:
            t = norm_ws("".join(self.buf))
            if t and self.cur is not None:
                self.cur.text.append(t)
            self.buf = None
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(norm_ws("".join(self.cell)))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.table.append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        elif self.buf is not None:
            self.buf.append(data)


def parse_html(rel, text):
    doc = Doc(rel)
    doc.raw = text
    p = _HTMLDoc(doc)
    p.feed(text)
    link_parents(doc)
    return doc


def parse_txt(rel, text):
    doc = Doc(rel)
    doc.raw = text
    lines = text.split("\n")
    cur = None
    i = 0
    while i < len(lines):
        st = lines[i].strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if st and re.fullmatch(r"={3,}", nxt):
            cur = Section(1, st)
            doc.sections.append(cur)
            i += 2
            continue
        if st and re.fullmatch(r"-{3,}", nxt):
            cur = Section(2, st)
            doc.sections.append(cur)
            i += 2
            continue
        if st and cur is not None:
            cur.text.append(st)
        i += 1
    link_parents(doc)
    return doc


def load_docs():
    docs = {}
    ddir = os.path.join(BASE, "docs")
    for name in sorted(os.listdir(ddir)):
        rel = "docs/" + name
        with open(os.path.join(ddir, name), encoding="utf-8") as f:
            text = f.read()
        if name.endswith(".md"):
            docs[rel] = parse_markdown(rel, text)
        elif name.endswith(".html"):
            docs[rel] = parse_html(rel, text)
        elif name.endswith(".txt"):
            docs[rel] = parse_txt(rel, text)
    return docs


def sentences(text):
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\[(\"])", text) if s.strip()]


# ----------------------------------------------------------------- numbers
def num(s):
    s = s.strip()
    m = re.search(r"(\()?([-\u2212])?\$?(\d[\d,]*(?:\.\d+)?)", s)
    if not m:
        raise ValueError(f"no number in {s!r}")
    v = float(m.group(3).replace(",", ""))
    if m.group(1) or m.group(2):
        v = -v
    return v


def table_cell(table, row_label, col_label):
    header = table[0]
    ci = header.index(col_label)
    for r in table[1:]:
        if r[0] == row_label:
            return num(r[ci])
    raise KeyError(f"row {row_label!r} not in table")


def table_rows(table):
    return [r[0] for r in table[1:]]


def close(a, b):
    return abs(a - b) < 1e-6


# ----------------------------------------------------------------- structural checks
def check_budget(docs):
    b = docs["docs/harrow_creek_library_budget_fy2025.md"]
    totals = {}
    for s in b.sections:
        for t in s.tables:
            hdr = t[0]
            if hdr[1:] != ["FY2024 Adopted", "FY2025 Adopted", "Change"]:
                fail(f"budget table under {s.heading} has unexpected header {hdr}")
                continue
            rows = t[1:]
            for r in rows:
                a, c, d = num(r[1]), num(r[2]), num(r[3])
                if not close(c - a, d):
                    fail(f"budget {s.heading} / {r[0]}: change {d} != {c} - {a}")
            tot = [r for r in rows if r[0] == "Total"]
            if len(tot) != 1:
                fail(f"budget {s.heading}: no single Total row")
                continue
            for ci in (1, 2, 3):
                sm = sum(num(r[ci]) for r in rows if r[0] != "Total")
                if not close(sm, num(tot[0][ci])):
                    fail(f"budget {s.heading}: column {t[0][ci]} sums to {sm}, Total says {tot[0][ci]}")
            totals[s.heading] = [num(tot[0][ci]) for ci in (1, 2, 3)]

    def children_total(parent_heading):
        kids = [s for s in b.sections if s.parent and s.parent.heading == parent_heading and s.heading in totals]
        return [sum(totals[k.heading][i] for k in kids) for i in range(3)], kids

    # roll-ups: division summaries must equal the totals of their units
    summ = b.section("2.3 Operating Summary").tables[0]
    for div in ("2.1 Branch Services", "2.2 Support Services"):
        tot, kids = children_total(div)
        label = div.split(" ", 1)[1]
        row = [table_cell(summ, label, c) for c in ("FY2024 Adopted", "FY2025 Adopted", "Change")]
        if len(kids) != 3 or any(not close(x, y) for x, y in zip(tot, row)):
            fail(f"operating summary row {label} {row} != units {tot}")
    cap = b.section("3.3 Capital Summary").tables[0]
    for h in ("3.1 Facility Projects", "3.2 Technology Projects"):
        label = h.split(" ", 1)[1]
        row = [table_cell(cap, label, c) for c in ("FY2024 Adopted", "FY2025 Adopted", "Change")]
        if any(not close(x, y) for x, y in zip(totals[h], row)):
            fail(f"capital summary row {label} mismatch")
    rev = b.section("5.3 Revenue Summary").tables[0]
    for h, label in (("5.1 Tax Revenues", "Tax Revenues"), ("5.2 Other Revenues", "Other Revenues")):
        row = [table_cell(rev, label, c) for c in ("FY2024 Adopted", "FY2025 Adopted", "Change")]
        if any(not close(x, y) for x, y in zip(totals[h], row)):
            fail(f"revenue summary row {label} mismatch")
    fund = b.section("1.1 Budget Summary by Fund").tables[0]
    for label, src in (("General Fund", "2.3 Operating Summary"), ("Capital Projects Fund", "3.3 Capital Summary"),
                       ("Debt Service Fund", "4.1 2016 Library Facilities Bonds")):
        row = [table_cell(fund, label, c) for c in ("FY2024 Adopted", "FY2025 Adopted", "Change")]
        if any(not close(x, y) for x, y in zip(totals[src], row)):
            fail(f"fund summary row {label} != {src} total")
    if any(not close(x, y) for x, y in zip(totals["1.1 Budget Summary by Fund"], totals["5.3 Revenue Summary"])):
        fail("total revenues differ from total appropriations")
    # repeated line-item names under several units (a trap the set relies on)
    units = [s for s in b.sections if re.match(r"2\.\d\.\d ", s.heading)]
    for item in ("Personnel", "Technology"):
        n = sum(item in table_rows(s.tables[0]) for s in units)
        if n != 6:
            fail(f"line item {item} appears in {n} units, expected 6")
    if "thousands of dollars" not in b.all_text():
        fail("budget does not state its scale")
    print(f"budget: {sum(len(s.tables) for s in b.sections)} tables add up, roll-ups consistent")


def check_quarterlies(docs):
    n = 0
    for rel, d in docs.items():
        if not rel.startswith("docs/skyfurrow_"):
            continue
        for k in ("company", "quarter", "year"):
            if k not in d.front:
                fail(f"{rel}: front matter lacks {k}")
        for s in d.sections:
            for t in s.tables:
                rows = t[1:]
                tot = [r for r in rows if r[0] == "Total"][0]
                for ci in range(1, len(t[0])):
                    sm = round(sum(num(r[ci]) for r in rows if r[0] != "Total"), 6)
                    if not close(sm, num(tot[ci])):
                        fail(f"{rel}: column {t[0][ci]} sums to {sm}, Total {tot[ci]}")
                n += 1
    print(f"quarterlies: {n} segment tables add up")


# ----------------------------------------------------------------- helpers for derivations
def qtable(docs, quarter):
    d = [x for x in docs.values() if x.front.get("quarter") == quarter and x.front.get("year") == "2024"]
    assert len(d) == 1, quarter
    d = d[0]
    t = [t for s in d.sections for t in s.tables][0]
    return d, t


def unit_value(docs, unit_heading, item, col="FY2025 Adopted"):
    b = docs["docs/harrow_creek_library_budget_fy2025.md"]
    return table_cell(b.section(unit_heading).tables[0], item, col)


def section_holding_row(doc, row_label):
    hits = [s for s in doc.sections for t in s.tables if row_label in table_rows(t)]
    assert len(hits) == 1, (row_label, [h.heading for h in hits])
    return hits[0]


def memo_estimate(docs, item):
    m = docs["docs/grand_jury_memo_library_fy2025.html"]
    t = [t for s in m.sections for t in s.tables][0]
    return table_cell(t, item, "Grand Jury Estimate FY2025")


def references(doc):
    sec = doc.section("References")
    refs = []
    for line in sec.text:
        m = re.match(r"^(?:\[(\d+)\]\s*)?(.+?)\s\((\d{4})\)\.\s(.+?)\.\s", line)
        if m:
            refs.append({"marker": m.group(1), "authors": m.group(2), "year": m.group(3), "title": m.group(4)})
    return refs


def body_text(doc):
    return " ".join(s.body for s in doc.sections if s.heading != "References")


def cited_doc(docs, citing_rel, title_contains=None, first_author=None):
    """Follow a reference of the citing paper to the paper in the collection with that exact title."""
    citing = docs[citing_rel]
    refs = references(citing)
    cand = [r for r in refs if (title_contains is None or title_contains in r["title"])
            and (first_author is None or r["authors"].startswith(first_author))]
    assert len(cand) == 1, (citing_rel, cand)
    ref = cand[0]
    body = body_text(citing)
    if ref["marker"]:
        assert f"[{ref['marker']}]" in body, "numeric marker not used in text"
    else:
        surname = ref["authors"].split(",")[0]
        assert re.search(re.escape(surname) + r"[^()]*?(\(|, )" + ref["year"], body), "author-year marker not used"
    target = [d for d in docs.values() if d.title == ref["title"]]
    assert len(target) == 1, f"cited title not in collection: {ref['title']}"
    return target[0]


def results_value(doc, pattern):
    m = re.search(pattern, doc.section("Results").body)
    assert m, (doc.rel, pattern)
    return float(m.group(1))


def wiki_pages(docs):
    return {d.title: d for rel, d in docs.items() if rel.startswith("docs/wiki_")}


def hop(pages, page_name, pattern):
    """Find a sentence on a page matching pattern and return the page named by its capture group."""
    d = pages[page_name]
    for s in d.sections:
        for sent in sentences(s.body):
            m = re.search(pattern, sent)
            if m:
                name = m.group(1).strip()
                name = re.sub(r"^the ", "", name)
                assert name in pages, f"{name!r} (from {page_name}) is not a page"
                return name
    raise AssertionError(f"no sentence on {page_name} matches {pattern}")


def wiki_fact(pages, page_name, pattern):
    d = pages[page_name]
    for s in d.sections:
        m = re.search(pattern, s.body)
        if m:
            return m.group(1)
    raise AssertionError(f"{page_name}: {pattern} not found")


# ----------------------------------------------------------------- derivations
def derivations(docs):
    B = "docs/harrow_creek_library_budget_fy2025.md"
    b = docs[B]
    P = wiki_pages(docs)
    _, t1 = qtable(docs, "Q1")
    _, t2 = qtable(docs, "Q2")
    _, t3 = qtable(docs, "Q3")
    d = {}
    d["fresh_c-01"] = unit_value(docs, "2.1.3 Mobile Services", "Materials and Collections")
    lindry = hop(P, "Ember Hall", r"former glass furnace hall in ([A-Z]\w+)")
    d["fresh_c-02"] = num(wiki_fact(P, lindry, r"population of ([\d,]+) at the 2020 census"))
    branch_units = [s.heading for s in b.sections if s.parent and s.parent.heading == "2.1 Branch Services"]
    assert len(branch_units) == 3
    d["fresh_c-03"] = sum(unit_value(docs, u, "Personnel") for u in branch_units)
    field = cited_doc(docs, "docs/paper_ishida_brenner_vaast_2021.md", title_contains="Field Calibration")
    d["fresh_c-04"] = results_value(field, r"detection rate of ([\d.]+)%")
    d["fresh_c-05"] = table_cell(t3, "Spray Drones", "Q3 2024") - table_cell(t3, "Spray Drones", "Q2 2024 (restated)")
    d["fresh_c-06"] = section_holding_row(b, "Eastgate Branch HVAC").heading
    d["fresh_c-07"] = memo_estimate(docs, "Neighborhood Branches Personnel") - unit_value(docs, "2.1.2 Neighborhood Branches", "Personnel")
    company = hop(P, "Ember Hall", r"for ([A-Z][\w ]+?), which used it as its headquarters")
    founder = hop(P, company, r"founded in \d{4} by ([A-Z][\w ]+?) in")
    d["fresh_c-08"] = num(wiki_fact(P, founder, r"was born in (\d{4})"))
    d["fresh_c-09"] = table_cell(t3, "Software and Services", "Q3 2024")
    d["fresh_c-10"] = None
    d["fresh_c-11"] = unit_value(docs, "2.2.2 Information Technology", "Technology") - unit_value(docs, "2.2.1 Technical Services", "Technology")
    lab = cited_doc(docs, "docs/paper_vaast_pilecki_2022.md", first_author="Halvorsen-Oduya")
    d["fresh_c-12"] = results_value(lab, r"threshold of ([\d.]+)%")
    d["fresh_c-13"] = table_cell(t3, "Mapping Drones", "Q3 2024") - table_cell(t3, "Mapping Drones", "Q3 2023")
    d["fresh_c-14"] = num(wiki_fact(P, company, r"founded in (\d{4}) by"))
    d["fresh_c-15"] = table_cell(section_holding_row(b, "Network Refresh").tables[0], "Network Refresh", "FY2024 Adopted")
    d["fresh_c-16"] = (table_cell(t1, "Mapping Drones", "Q1 2024") + table_cell(t2, "Mapping Drones", "Q2 2024")
                       + table_cell(t3, "Mapping Drones", "Q3 2024"))
    d["fresh_c-17"] = memo_estimate(docs, "Fines and Fees")
    town = hop(P, "Quellhorn Glassworks", r"in the town of ([A-Z]\w+)")
    river = hop(P, town, r"on the left bank of the ([A-Z][\w ]+?)\.")
    d["fresh_c-18"] = num(wiki_fact(P, river, r"river (\d+) kilometres long"))
    d["fresh_c-19"] = b.section("2.2.1 Technical Services").parent.heading
    comp = cited_doc(docs, "docs/paper_bracewell_demissie_korth_2023.txt", title_contains="Temperature Compensation")
    d["fresh_c-20"] = results_value(comp, r"from [\d.]+% to ([\d.]+)%")
    d["fresh_c-21"] = table_cell(t1, "Total", "Q1 2024") - table_cell(t1, "Total", "Q1 2023")
    d["fresh_c-22"] = None
    river2 = hop(P, "Lindry", r"on the left bank of the ([A-Z][\w ]+?)\.")
    d["fresh_c-23"] = wiki_fact(P, river2, r"rises on the ([A-Z]\w+ Plateau)")
    d["fresh_c-24"] = table_cell(t3, "Total", "Q2 2024 (restated)")
    all_units = [s.heading for s in b.sections if re.match(r"2\.\d\.\d ", s.heading)]
    assert len(all_units) == 6
    d["fresh_c-25"] = sum(unit_value(docs, u, "Technology") for u in all_units)
    comp2 = hop(P, "Mathis Quellhorn", r"founded ([A-Z][\w ]+?) with")
    bldg = hop(P, comp2, r"headquarters and main furnace into the ([A-Z][\w ]+?),")
    d["fresh_c-26"] = wiki_fact(P, bldg, r"designed by the architect ([A-Z]\w+ [A-Z]\w+)")
    return d


def unanswerable_checks(docs):
    # fresh_c-10: no Q4 2023 figure anywhere
    for d in docs.values():
        for s in d.sections:
            for t in s.tables:
                if any("Q4" in h for h in t[0]):
                    fail(f"{d.rel}: table has a Q4 column")
        txt = d.all_text()
        if re.search(r"Q4 2023|fourth quarter of 2023", txt):
            fail(f"{d.rel}: mentions Q4 2023")
    # fresh_c-22: Tessmouth never has a population
    for d in docs.values():
        for sent in sentences(d.all_text()):
            if "Tessmouth" in sent and re.search(r"population|inhabitants|residents", sent):
                fail(f"{d.rel}: gives a population for Tessmouth")


# ----------------------------------------------------------------- comparison
def norm_text(s):
    s = s.lower().strip()
    s = re.sub(r"^the ", "", s)
    return s


def occurs(answer, text):
    if re.fullmatch(r"[\d,.]+", answer):
        return re.search(r"(?<![\d.,])" + re.escape(answer) + r"(?![\d,]|\.\d)", text) is not None
    return answer.lower() in text.lower()


def main():
    docs = load_docs()
    with open(os.path.join(BASE, "questions.jsonl"), encoding="utf-8") as f:
        qs = [json.loads(line) for line in f if line.strip()]

    check_budget(docs)
    check_quarterlies(docs)
    unanswerable_checks(docs)

    # document mix
    exts = Counter(os.path.splitext(r)[1] for r in docs)
    if exts[".html"] < 1 or exts[".txt"] < 1 or exts[".md"] < len(docs) / 2:
        fail(f"format mix {dict(exts)}")
    titles = [d.title for d in docs.values()]
    if len(set(titles)) != len(titles):
        fail("duplicate document titles")

    try:
        derived = derivations(docs)
    except Exception as e:  # noqa: BLE001
        fail(f"derivation error: {e!r}")
        derived = {}

    required = {"id", "question", "kind", "answers", "answer_type", "gold_docs", "gold_sections", "note"}
    ok = 0
    for q in qs:
        qid = q["id"]
        if set(q) != required:
            fail(f"{qid}: keys {sorted(q)}")
            continue
        for g in q["gold_docs"]:
            if g not in docs:
                fail(f"{qid}: gold doc {g} missing")
        gold = [docs[g] for g in q["gold_docs"] if g in docs]
        for gs in q["gold_sections"]:
            if not any(gs in d.headings() for d in gold):
                fail(f"{qid}: gold section {gs!r} is not a heading of a gold doc")
        if q["kind"] == "unanswerable":
            if q["answers"] or q["gold_docs"] or q["answer_type"] != "not_found":
                fail(f"{qid}: unanswerable must have empty answers/gold_docs and not_found")
            else:
                ok += 1
            continue
        if q["answer_type"] not in ("span", "computed") or not q["answers"]:
            fail(f"{qid}: bad answer_type/answers")
            continue
        if qid not in derived:
            fail(f"{qid}: no derivation")
            continue
        want, canon = derived[qid], q["answers"][0]
        if isinstance(want, str):
            good = norm_text(want) == norm_text(canon)
        else:
            try:
                good = close(num(canon), round(want, 6))
            except ValueError:
                good = False
            # every numeric alternative must denote the same value (allowing scale words)
            for alt in q["answers"][1:]:
                try:
                    v = num(alt)
                except ValueError:
                    continue
                if "million" in alt and "thousand" in canon:
                    v *= 1000
                elif "," in alt and "000" in alt and alt.rstrip().endswith("000") and "thousand" in canon:
                    v /= 1000
                if not close(abs(v), abs(round(want, 6))):
                    fail(f"{qid}: alternative {alt!r} -> {v} != {want}")
        if not good:
            fail(f"{qid}: derived {want!r} but canonical answer is {canon!r}")
            continue
        if q["answer_type"] == "span":
            texts = [d.all_text() for d in gold]
            if not any(occurs(a, t) for a in q["answers"] for t in texts):
                fail(f"{qid}: no answer form occurs in a gold document")
                continue
        if q["kind"] == "discrepancy":
            pass
        print(f"ok {qid} [{q['kind']}] {canon}  (derived {want if isinstance(want, str) else round(want, 6)})")
        ok += 1

    # discrepancy questions really involve two documents that disagree
    bud = lambda u, i: unit_value(docs, u, i)  # noqa: E731
    if close(memo_estimate(docs, "Neighborhood Branches Personnel"), bud("2.1.2 Neighborhood Branches", "Personnel")):
        fail("memo and budget agree on Neighborhood Branches Personnel")
    if close(memo_estimate(docs, "Fines and Fees"), bud("5.2 Other Revenues", "Fines and Fees")):
        fail("memo and budget agree on Fines and Fees")
    # the restatement trap: the Q2 call's originally reported figures differ from the restated ones
    _, t2 = qtable(docs, "Q2")
    _, t3 = qtable(docs, "Q3")
    if close(table_cell(t2, "Total", "Q2 2024"), table_cell(t3, "Total", "Q2 2024 (restated)")):
        fail("no restatement between Q2 and Q3 calls")

    # kinds and balance
    expected = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
                "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}
    counts = Counter(q["kind"] for q in qs)
    if dict(counts) != expected:
        fail(f"kind counts {dict(counts)} != {expected}")
    half = len(qs) // 2
    h1 = Counter(q["kind"] for q in qs[:half])
    h2 = Counter(q["kind"] for q in qs[half:])
    for k in expected:
        if abs(h1[k] - h2[k]) > 1:
            fail(f"kind {k} unbalanced across halves: {h1[k]} vs {h2[k]}")
    ids = [q["id"] for q in qs]
    if ids != [f"fresh_c-{i:02d}" for i in range(1, len(qs) + 1)]:
        fail("ids are not fresh_c-01..NN in order")
    table_q = sum(q["kind"] in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy")
                  for q in qs)
    if table_q * 2 < len(qs):
        fail("fewer than half of the questions are about tables/sums/comparisons/sections")

    print(f"\ndocuments: {len(docs)} ({dict(exts)}); questions: {len(qs)}")
    print("kinds:", ", ".join(f"{k} {counts[k]} ({h1[k]}+{h2[k]})" for k in expected))
    print(f"{ok}/{len(qs)} questions verified; {len(FAILURES)} failure(s)")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

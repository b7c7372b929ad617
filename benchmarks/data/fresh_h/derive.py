#!/usr/bin/env python3
"""Re-derive every answer of the fresh_h set from the documents (standard library only).

Parses Markdown (ATX headings, pipe tables, YAML front matter), HTML (h1-h6, tables, paragraphs)
and plain text (setext headings), then recomputes each canonical answer and checks the question file.
Exits non-zero on any failure.
"""
import json, os, re, sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def fail(msg):
    FAILS.append(msg)


# ---------------------------------------------------------------- parsing
class Doc:
    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.sections = []  # dicts: heading, level, lines (list of str), tables (list of list of rows)
        self.title = None

    def new_section(self, level, heading):
        sec = {"heading": heading.strip(), "level": level, "lines": [], "tables": []}
        self.sections.append(sec)
        if self.title is None and level == 1:
            self.title = heading.strip()
        return sec

    @property
    def headings(self):
        return [s["heading"] for s in self.sections]

    def text(self):
        parts = []
        for s in self.sections:
            parts.append(s["heading"])
            parts.extend(s["lines"])
            for t in s["tables"]:
                for r in t:
                    parts.append(" | ".join(r))
        return norm_ws("\n".join(parts))

    def section(self, heading):
        for s in self.sections:
            if s["heading"] == heading:
                return s
        raise KeyError(f"{self.path}: no section {heading!r}")

    def section_text(self, heading):
        return norm_ws(" ".join(self.section(heading)["lines"]))


def norm_ws(s):
    return re.sub(r"\s+", " ", s).strip()


def split_row(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def parse_md(path):
    doc = Doc(path)
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        for l in lines[1:end]:
            if ":" in l:
                k, v = l.split(":", 1)
                doc.meta[k.strip()] = v.strip()
        lines = lines[end + 1:]
    sec = doc.new_section(0, "")
    table = None
    for l in lines:
        m = re.match(r"^(#{1,6})\s+(.*)$", l)
        if l.strip().startswith("|"):
            cells = split_row(l)
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue
            if table is None:
                table = []
                sec["tables"].append(table)
            table.append(cells)
            continue
        table = None
        if m:
            sec = doc.new_section(len(m.group(1)), m.group(2))
        elif l.strip():
            sec["lines"].append(l.strip())
    return doc


def parse_txt(path):
    doc = Doc(path)
    lines = open(path, encoding="utf-8").read().split("\n")
    sec = doc.new_section(0, "")
    i = 0
    while i < len(lines):
        l = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if l.strip() and re.fullmatch(r"=+", nxt.strip() or "x"):
            sec = doc.new_section(1, l)
            i += 2
            continue
        if l.strip() and re.fullmatch(r"-+", nxt.strip() or "x"):
            sec = doc.new_section(2, l)
            i += 2
            continue
        if l.strip():
            sec["lines"].append(l.strip())
        i += 1
    return doc


class _HP(HTMLParser):
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
            self.mode, self.buf = tag, []
        elif tag == "table":
            self.table = []
            self.sec["tables"].append(self.table)
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.mode, self.buf = "cell", []
        elif tag in ("p", "li") and self.mode is None:
            self.mode, self.buf = "p", []

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self.mode == tag:
            self.sec = self.doc.new_section(int(tag[1]), norm_ws("".join(self.buf)))
            self.mode = None
        elif tag in ("td", "th") and self.mode == "cell":
            self.row.append(norm_ws("".join(self.buf)))
            self.mode = None
        elif tag == "tr" and self.row is not None:
            self.table.append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None
        elif tag in ("p", "li") and self.mode == "p":
            self.sec["lines"].append(norm_ws("".join(self.buf)))
            self.mode = None

    def handle_data(self, data):
        if self.mode is not None:
            self.buf.append(data)


def parse_html(path):
    doc = Doc(path)
    _HP(doc).feed(open(path, encoding="utf-8").read())
    return doc


def load_docs():
    docs = {}
    for name in sorted(os.listdir(os.path.join(HERE, "docs"))):
        rel = "docs/" + name
        p = os.path.join(HERE, rel)
        if name.endswith(".md"):
            docs[rel] = parse_md(p)
        elif name.endswith(".html"):
            docs[rel] = parse_html(p)
        elif name.endswith(".txt"):
            docs[rel] = parse_txt(p)
    return docs


# ---------------------------------------------------------------- numbers and tables
def num(cell):
    s = cell.strip().replace("\u2212", "-").replace(",", "")
    neg = s.startswith("(") and s.endswith(")")
    s = s.strip("()")
    v = float(re.sub(r"[^\d.\-]", "", s))
    return -v if neg else v


def answer_number(ans):
    s = ans.replace("\u2212", "-").replace("±", "")
    m = re.search(r"(-)?\s*[$€£]?\s*\(?(\d[\d,]*(?:\.\d+)?)\)?", s)
    if not m:
        return None
    v = float(m.group(2).replace(",", ""))
    return -v if m.group(1) else v


def only_table(doc, heading):
    ts = doc.section(heading)["tables"]
    if len(ts) != 1:
        raise ValueError(f"{doc.path} {heading}: expected one table, found {len(ts)}")
    return ts[0]


def cell(doc, heading, row_label, col_label):
    t = only_table(doc, heading)
    ci = t[0].index(col_label)
    rows = [r for r in t[1:] if r[0] == row_label]
    if len(rows) != 1:
        raise ValueError(f"{doc.path} {heading}: row {row_label!r} found {len(rows)} times")
    return num(rows[0][ci])


def heading_number(h):
    m = re.match(r"^(\d+(?:\.\d+)*)\s+(.*)$", h)
    return (m.group(1), m.group(2)) if m else (None, h)


def ancestor(doc, heading, level):
    idx = doc.headings.index(heading)
    for s in reversed(doc.sections[: idx + 1]):
        if s["level"] == level:
            return s["heading"]
    raise ValueError("no ancestor")


# ---------------------------------------------------------------- documents
D = load_docs()
BUD = D["docs/tarnmoor_health_board_financial_plan_2025.md"]
AUD = D["docs/tarnmoor_audit_office_memo.html"]
OUT, PLAN, CHG = "2024 Outturn", "2025 Plan", "Change"


def kelvane(q):
    hits = [d for d in D.values() if d.meta.get("company") == "Kelvane Biologics" and d.meta.get("quarter") == q
            and d.meta.get("year") == "2025"]
    return hits[0] if len(hits) == 1 else None


def seg(q, segment):
    d = kelvane(q)
    return cell(d, "Segment Results", segment, f"{q} 2025")


def restated(pattern):
    d = kelvane("Q2")
    m = re.search(pattern, d.section_text("Restatement of First Quarter 2025"))
    return float(m.group(1))


def unit_tables():
    out = []
    for s in BUD.sections:
        for t in s["tables"]:
            if t[0][:4] == ["Line item", OUT, PLAN, CHG]:
                out.append((s["heading"], t))
    return out


def audit_row(unit, line):
    t = AUD.section("2.1 Figures that differ from the plan")["tables"][0]
    hdr = t[0]
    for r in t[1:]:
        if r[0] == unit and r[1] == line:
            return {h: r[i] for i, h in enumerate(hdr)}
    raise KeyError((unit, line))


def table_of_unit(unit_heading):
    """Unit heading like '3.1 Kessock General Hospital' -> the heading of its line-item table."""
    n, _ = heading_number(unit_heading)
    for h, _t in unit_tables():
        if h.startswith(n + "."):
            return h
    raise KeyError(unit_heading)


def unit_heading(name):
    hs = [h for h in BUD.headings if heading_number(h)[1] == name]
    assert len(hs) == 1, name
    return hs[0]


# papers
def by_title(title):
    hits = [p for p, d in D.items() if d.title == title]
    return hits[0] if len(hits) == 1 else None


def ref_title(ref):
    m = re.search(r"\(\d{4}\)\.\s+(.*?)\.\s", ref)
    return m.group(1)


def numeric_ref(doc_path, n):
    for l in D[doc_path].section("References")["lines"]:
        m = re.match(r"^\[(\d+)\]\s+(.*)$", l)
        if m and int(m.group(1)) == n:
            return by_title(ref_title(m.group(2)))
    return None


def author_year_ref(doc_path, marker):
    m = re.match(r"\((\S+)(?: and \S+)?, (\d{4})\)", marker)
    first, year = m.group(1), m.group(2)
    doc = D[doc_path]
    assert marker in doc.text(), marker
    for l in doc.section("References")["lines"]:
        if l.startswith(first + ",") and f"({year})" in l:
            return by_title(ref_title(l))
    return None


def results(doc_path):
    return D[doc_path].section_text("Results")


# encyclopedia
def page(title):
    p = by_title(title)
    if p is None:
        raise KeyError(f"no page titled {title!r}")
    return D[p]


def grab(doc, pattern):
    m = re.search(pattern, doc.text())
    if not m:
        raise ValueError(f"{doc.path}: pattern {pattern!r} not found")
    return m.group(1)


def born_in(person):
    return grab(page(person), r"born in ([A-Z][\w-]+(?: [A-Z][\w-]+)*)")


def founded(person):
    return grab(page(person), r"founded the ([A-Z][\w ]+? Company)")


def founder(company):
    return grab(page(company), r"founded in \d{4} by ([A-Z][\w-]+(?: [A-Z][\w-]+)*)")


def hq_building(company):
    return grab(page(company), r"headquarters have been in ([A-Z][\w ]+?)\.")


def housed_company(building):
    return grab(page(building), r"housed the headquarters of the ([A-Z][\w ]+?)\.")


def river_at_mouth(town):
    return grab(page(town), r"at the mouth of the (River [A-Z]\w+)")


def town_where_based(company):
    hits = [d.title for d in D.values() if d.title and re.search(re.escape(company) + r" is based in " + re.escape(d.title), d.text())]
    assert len(hits) == 1, hits
    return hits[0]


# ---------------------------------------------------------------- derivations
def d01(): return cell(BUD, table_of_unit(unit_heading("Kessock General Hospital")), "Staff costs", PLAN)
def d02(): return sum(cell(BUD, h, "Staff costs", PLAN) for h, _ in unit_tables())
def d03():
    cited = numeric_ref("docs/paper_oyelaran_2020_temperature.md", 1)
    return float(re.search(r"mean Q factor was (\d+)", results(cited)).group(1))
def d04(): return founder(housed_company("Saltmere Tide Hall"))
def d05(): return round(seg("Q3", "Enzymes") - seg("Q2", "Enzymes"), 6)
def d06(): return heading_number(ancestor(BUD, unit_heading("Vaccination Programme"), 2))[1]
def d07():
    r = audit_row("Kessock General Hospital", "Equipment")
    plan = cell(BUD, table_of_unit(unit_heading("Kessock General Hospital")), "Equipment", PLAN)
    assert num(r["Plan figure"]) == plan and num(r["Audited figure"]) != plan
    return num(r["Audited figure"])
def d08(): return float(grab(page(river_at_mouth(born_in("Orlen Vasquith"))), r"length of (\d+) km"))
def d09(): return seg("Q2", "Diagnostics")
def d10():
    assert kelvane("Q4") is None
    assert not any("Q4 2025" in " ".join(t[0]) for d in D.values() for s in d.sections for t in s["tables"])
    return None
def d11(): return sum(cell(BUD, table_of_unit(unit_heading(u)), "Medical supplies", PLAN) for u in ("Primary Care", "Vaccination Programme"))
def d12(): return num(grab(page(born_in("Orlen Vasquith")), r"population of ([\d,]+)"))
def d13():
    t = only_table(BUD, table_of_unit(unit_heading("Emergency Transport")))
    rows = [r for r in t[1:] if r[0] != "Total"]
    return min(rows, key=lambda r: num(r[3]))[0]
def d14(): return cell(BUD, table_of_unit(unit_heading("Vaccination Programme")), "Contracted services", OUT)
def d15():
    cited = numeric_ref("docs/paper_quent_2023_fatigue.txt", 1)
    return float(re.search(r"accuracy of ±([\d.]+) K", results(cited)).group(1))
def d16():
    return round(restated(r"Contract Research revenue is restated to \$([\d.]+) million") + seg("Q2", "Contract Research") + seg("Q3", "Contract Research"), 6)
def d17(): return float(grab(page(hq_building(founded("Orlen Vasquith"))), r"completed in (\d{4})"))
def d18():
    h = [h for h, t in unit_tables() if any(r[0] == "Vehicle fuel and maintenance" for r in t)]
    assert len(h) == 1
    return heading_number(ancestor(BUD, h[0], 2))[1]
def d19():
    r = audit_row("Vaccination Programme", "Medical supplies")
    plan = cell(BUD, table_of_unit(unit_heading("Vaccination Programme")), "Medical supplies", OUT)
    assert num(r["Plan figure"]) == plan
    return num(r["Audited figure"]) - plan
def d20(): return round(seg("Q2", "Total revenue") - restated(r"total revenue is restated to \$([\d.]+) million"), 6)
def d21():
    assert not any("Mental Health" in h for h in BUD.headings)
    assert "Mental Health" not in BUD.text()
    return None
def d22(): return float(grab(page(hq_building("Brannock Ferry Company")), r"height of (\d+) metres"))
def d23(): return cell(BUD, table_of_unit(unit_heading("Emergency Transport")), "Vehicle fuel and maintenance", PLAN)
def d24():
    cited = author_year_ref("docs/paper_sandoval_2022_thermometer.md", "(Halvorsen and Mbeki-Stroud, 2021)")
    return float(re.search(r"smallest at a gallium concentration of ([\d.]+)%", results(cited)).group(1))
def d25():
    k = cell(BUD, table_of_unit(unit_heading("Kessock General Hospital")), "Fees and charges income", PLAN)
    p = cell(BUD, table_of_unit(unit_heading("Primary Care")), "Fees and charges income", PLAN)
    return abs(k) - abs(p)
def d26():
    town = town_where_based(founded("Orlen Vasquith"))
    return grab(page(river_at_mouth(town)), r"rises on ([A-Z][\w ]+?) at")


# ---------------------------------------------------------------- structural checks
def check_tables():
    n = 0
    for h, t in unit_tables():
        body = [r for r in t[1:] if r[0] != "Total"]
        tot = [r for r in t[1:] if r[0] == "Total"]
        if len(tot) != 1:
            fail(f"budget {h}: no single Total row"); continue
        for ci, col in ((1, OUT), (2, PLAN), (3, CHG)):
            s = sum(num(r[ci]) for r in body)
            if abs(s - num(tot[0][ci])) > 1e-9:
                fail(f"budget {h}: {col} rows sum to {s}, Total says {tot[0][ci]}")
        for r in t[1:]:
            if abs(num(r[2]) - num(r[1]) - num(r[3])) > 1e-9:
                fail(f"budget {h}: row {r[0]} change {r[3]} != plan - outturn")
        n += 1
    # summary table: directorate totals = sum of their units' totals
    summ = only_table(BUD, "5.1 Summary by Directorate")
    for r in summ[1:]:
        if r[0] == "Total":
            continue
        dh = [h for h in BUD.headings if heading_number(h)[1] == r[0]][0]
        dn = heading_number(dh)[0]
        units = [(h, t) for h, t in unit_tables() if h.startswith(dn + ".")]
        for ci in (1, 2, 3):
            s = sum(num([x for x in t if x[0] == "Total"][0][ci]) for _, t in units)
            if abs(s - num(r[ci])) > 1e-9:
                fail(f"summary {r[0]} col {ci}: units total {s} != {r[ci]}")
    body = [r for r in summ[1:] if r[0] != "Total"]
    tot = [r for r in summ[1:] if r[0] == "Total"][0]
    for ci in (1, 2, 3):
        if abs(sum(num(r[ci]) for r in body) - num(tot[ci])) > 1e-9:
            fail(f"summary Total col {ci} does not add up")
    n += 1
    # Kelvane segment tables
    for q in ("Q1", "Q2", "Q3"):
        t = only_table(kelvane(q), "Segment Results")
        body = [r for r in t[1:] if r[0] != "Total revenue"]
        tot = [r for r in t[1:] if r[0] == "Total revenue"][0]
        for ci in (1, 2, 3):
            if abs(sum(num(r[ci]) for r in body) - num(tot[ci])) > 1e-6:
                fail(f"Kelvane {q}: column {ci} does not add up")
        for r in t[1:]:
            if abs(num(r[1]) - num(r[2]) - num(r[3])) > 1e-6:
                fail(f"Kelvane {q}: change wrong in {r[0]}")
        n += 1
    # restatement consistency
    r_cr = restated(r"Contract Research revenue is restated to \$([\d.]+) million")
    r_tot = restated(r"total revenue is restated to \$([\d.]+) million")
    if abs((seg("Q1", "Total revenue") - seg("Q1", "Contract Research") + r_cr) - r_tot) > 1e-6:
        fail("Kelvane restated Q1 total inconsistent with restated Contract Research")
    return n


TARGET = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2, "discrepancy": 2,
          "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}


def main():
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]
    ntab = check_tables()
    ok = 0
    for q in qs:
        qid = q["id"]
        n = int(qid.rsplit("-", 1)[1])
        fn = globals().get(f"d{n:02d}")
        if fn is None:
            fail(f"{qid}: no derivation"); continue
        for g in q["gold_docs"]:
            if g not in D:
                fail(f"{qid}: gold doc {g} missing")
        heads = {h for g in q["gold_docs"] if g in D for h in D[g].headings}
        for s in q["gold_sections"]:
            if s not in heads:
                fail(f"{qid}: gold section {s!r} is not a heading of its gold docs")
        try:
            got = fn()
        except Exception as e:  # noqa
            fail(f"{qid}: derivation error {type(e).__name__}: {e}"); continue
        if q["answer_type"] == "not_found" or q["kind"] == "unanswerable":
            if q["answers"] or q["gold_docs"] or q["gold_sections"] or q["answer_type"] != "not_found" or q["kind"] != "unanswerable":
                fail(f"{qid}: unanswerable must have kind unanswerable, type not_found and empty answers/gold")
            else:
                ok += 1
                print(f"  {qid:12s} {q['kind']:18s} not_found (verified absent)")
            continue
        canon = q["answers"][0]
        if isinstance(got, str):
            good = got.lower() == canon.lower()
        else:
            a = answer_number(canon)
            good = a is not None and abs(a - got) < 1e-6
        if not good:
            fail(f"{qid}: derived {got!r} but canonical answer is {canon!r}")
            continue
        if q["answer_type"] == "span":
            texts = [D[g].text().lower() for g in q["gold_docs"] if g in D]
            if not any(norm_ws(a).lower() in t for a in q["answers"] for t in texts):
                fail(f"{qid}: no answer form occurs in a gold document")
                continue
        elif q["answer_type"] != "computed":
            fail(f"{qid}: bad answer_type {q['answer_type']}")
            continue
        ok += 1
        print(f"  {qid:12s} {q['kind']:18s} {q['answer_type']:9s} derived={got!r:14} canonical={canon!r}")
    # kinds
    counts, half = {}, len(qs) // 2
    first, second = {}, {}
    for i, q in enumerate(qs):
        counts[q["kind"]] = counts.get(q["kind"], 0) + 1
        (first if i < half else second)[q["kind"]] = (first if i < half else second).get(q["kind"], 0) + 1
    for k, v in TARGET.items():
        if counts.get(k, 0) != v:
            fail(f"kind {k}: {counts.get(k, 0)} questions, expected {v}")
        if abs(first.get(k, 0) - second.get(k, 0)) > 1:
            fail(f"kind {k}: halves {first.get(k, 0)} vs {second.get(k, 0)}")
    for k in counts:
        if k not in TARGET:
            fail(f"unknown kind {k}")
    ids = [q["id"] for q in qs]
    if len(set(ids)) != len(ids) or not all(i.startswith("fresh_h-") for i in ids):
        fail("ids not unique or wrong prefix")
    tabq = sum(1 for q in qs if q["kind"] in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy"))
    if tabq * 2 < len(qs):
        fail("fewer than half of the questions are about tables, sums, comparisons and sections")
    print(f"documents: {len(D)}  questions: {len(qs)}  derived ok: {ok}  tables checked: {ntab}")
    print("kinds: " + ", ".join(f"{k} {counts.get(k, 0)} ({first.get(k, 0)}+{second.get(k, 0)})" for k in TARGET))
    if FAILS:
        print(f"FAIL ({len(FAILS)}):")
        for f in FAILS:
            print("  - " + f)
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()

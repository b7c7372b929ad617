#!/usr/bin/env python3
"""Re-derive every answer of the fresh_i set from the documents and check questions.jsonl.

Standard library only. Parses Markdown (YAML front matter, ATX headings, pipe tables), HTML (h1-h6, tables,
paragraphs) and plain text (setext headings). Exits non-zero on any failure.
"""
import html
import json
import os
import re
import sys
from collections import Counter
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
PREFIX = "fresh_i"
EXPECTED_KINDS = {"number_lookup": 4, "sum_difference": 4, "period_comparison": 3, "hierarchy": 2,
                  "discrepancy": 2, "citation_hop": 3, "chain_2hop": 3, "chain_3hop": 3, "unanswerable": 2}
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg)


# ---------------------------------------------------------------- parsing
class Doc:
    def __init__(self, path):
        self.path = path
        self.sections = []   # dicts: heading, level, path (list of ancestor headings incl. self), text, tables
        self.meta = {}
        self.plain = ""

    def add_section(self, heading, level):
        stack = [s for s in (self.sections[-1]["path_objs"] if self.sections else [])]
        stack = [s for s in stack if s["level"] < level]
        sec = {"heading": heading, "level": level, "text": [], "tables": []}
        sec["path_objs"] = stack + [sec]
        self.sections.append(sec)
        return sec

    @property
    def title(self):
        for s in self.sections:
            if s["level"] == 1:
                return s["heading"]
        return None

    def headings(self):
        return [s["heading"] for s in self.sections]

    def section(self, heading):
        hits = [s for s in self.sections if norm(s["heading"]) == norm(heading)]
        if len(hits) != 1:
            raise KeyError(f"{self.path}: heading {heading!r} found {len(hits)} times")
        return hits[0]

    def section_text(self, heading):
        return " ".join(self.section(heading)["text"])

    def all_tables(self):
        for s in self.sections:
            for t in s["tables"]:
                yield s, t

    def sentences(self):
        out = []
        for s in self.sections:
            for para in s["text"]:
                out += [x.strip() for x in re.split(r"(?<=[.!?])\s+", para) if x.strip()]
        return out


def norm(s):
    return re.sub(r"\s+", " ", s).strip().lower()


def split_row(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def parse_md(path, text):
    d = Doc(path)
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        for l in lines[1:end]:
            k, _, v = l.partition(":")
            d.meta[k.strip()] = v.strip()
        lines = lines[end + 1:]
    cur = d.add_section("", 0)
    para, table = [], None

    def flush():
        nonlocal para
        if para:
            cur["text"].append(" ".join(para))
            para = []

    for l in lines:
        m = re.match(r"^(#{1,6})\s+(.*)$", l)
        if l.strip().startswith("|"):
            flush()
            cells = split_row(l)
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                continue
            if table is None:
                table = {"header": cells, "rows": []}
                cur["tables"].append(table)
            else:
                table["rows"].append(cells)
            continue
        table = None
        if m:
            flush()
            cur = d.add_section(m.group(2).strip(), len(m.group(1)))
        elif not l.strip():
            flush()
        else:
            para.append(l.strip())
    flush()
    d.plain = "\n".join(lines)
    return d


def parse_txt(path, text):
    d = Doc(path)
    lines = text.splitlines()
    cur = d.add_section("", 0)
    para = []
    i = 0
    while i < len(lines):
        l = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if l.strip() and re.fullmatch(r"(=+|-+)", nxt.strip() or "x"):
            if para:
                cur["text"].append(" ".join(para)); para = []
            cur = d.add_section(l.strip(), 1 if nxt.strip()[0] == "=" else 2)
            i += 2
            continue
        if not l.strip():
            if para:
                cur["text"].append(" ".join(para)); para = []
        else:
            para.append(l.strip())
        i += 1
    if para:
        cur["text"].append(" ".join(para))
    d.plain = text
    return d


class HTMLDoc(HTMLParser):
    def __init__(self, doc):
        super().__init__(convert_charrefs=True)
        self.doc = doc
        self.cur = doc.add_section("", 0)
        self.buf = None
        self.mode = None
        self.table = None
        self.row = None
        self.skip = False

    def handle_starttag(self, tag, attrs):
        if tag in ("title", "style", "script"):
            self.skip = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.mode, self.buf = tag, []
        elif tag == "p":
            self.mode, self.buf = "p", []
        elif tag == "table":
            self.table = {"header": None, "rows": []}
            self.cur["tables"].append(self.table)
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.mode, self.buf = "cell", []

    def handle_endtag(self, tag):
        if tag in ("title", "style", "script"):
            self.skip = False
        elif re.fullmatch(r"h[1-6]", tag) and self.mode == tag:
            self.cur = self.doc.add_section(" ".join("".join(self.buf).split()), int(tag[1]))
            self.mode = None
        elif tag == "p" and self.mode == "p":
            self.cur["text"].append(" ".join("".join(self.buf).split()))
            self.mode = None
        elif tag in ("td", "th") and self.mode == "cell":
            self.row.append(" ".join("".join(self.buf).split()))
            self.mode = None
        elif tag == "tr" and self.table is not None:
            if self.table["header"] is None:
                self.table["header"] = self.row
            else:
                self.table["rows"].append(self.row)
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if not self.skip and self.mode:
            self.buf.append(data)


def parse_html(path, text):
    d = Doc(path)
    p = HTMLDoc(d)
    p.feed(text)
    d.plain = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<title>.*?</title>", " ", text, flags=re.S)))
    return d


def load_docs():
    docs = {}
    for name in sorted(os.listdir(DOCS)):
        p = os.path.join(DOCS, name)
        text = open(p, encoding="utf-8").read()
        rel = "docs/" + name
        if name.endswith(".md"):
            docs[rel] = parse_md(rel, text)
        elif name.endswith(".html"):
            docs[rel] = parse_html(rel, text)
        elif name.endswith(".txt"):
            docs[rel] = parse_txt(rel, text)
    return docs


# ---------------------------------------------------------------- numbers
def num(s):
    s = s.strip().replace("$", "").replace(",", "")
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


NUM_RE = re.compile(r"\(?-?\$?\d[\d,]*(?:\.\d+)?\)?")


def answer_number(ans):
    """Number stated by an answer string, with sign and scale word."""
    m = NUM_RE.search(ans)
    if not m:
        return None
    v = num(m.group(0).replace("-", "")) * (-1 if "-" in m.group(0) else 1)
    if re.search(r"\b(down|decrease|decreased|fell|lower)\b", ans, re.I) and v > 0:
        v = -v
    scale = 1e6 if re.search(r"\bmillion\b", ans, re.I) else 1e3 if re.search(r"\bthousand\b", ans, re.I) else None
    return v, scale


def close(a, b):
    return abs(a - b) < 1e-6 * max(1.0, abs(a), abs(b))


# ---------------------------------------------------------------- table helpers
def table_of(doc, heading):
    ts = doc.section(heading)["tables"]
    if len(ts) != 1:
        raise KeyError(f"{doc.path}: {heading!r} has {len(ts)} tables")
    return ts[0]


def cell(doc, heading, row_label, col_label, t=None):
    t = t or table_of(doc, heading)
    ci = [norm(h) for h in t["header"]].index(norm(col_label))
    rows = [r for r in t["rows"] if norm(r[0]) == norm(row_label)]
    if len(rows) != 1:
        raise KeyError(f"{doc.path}/{heading}: row {row_label!r} found {len(rows)} times")
    return num(rows[0][ci])


def row_sections(doc, label):
    """Headings (with ancestor path) of sections whose tables contain a row labelled `label`."""
    out = []
    for s, t in doc.all_tables():
        if any(norm(r[0]) == norm(label) for r in t["rows"]):
            out.append([p["heading"] for p in s["path_objs"] if p["level"] > 0])
    return out


def strip_number(h):
    return re.sub(r"^\d+(\.\d+)*\s+", "", h)


def check_table_sums(doc, tol=1e-6):
    """Every table with a Total row: columns sum; a Change column equals last period minus first period."""
    n = 0
    for s, t in doc.all_tables():
        hdr = [norm(h) for h in t["header"]]
        body = [r for r in t["rows"] if norm(r[0]) != "total"]
        tot = [r for r in t["rows"] if norm(r[0]) == "total"]
        for ci in range(1, len(hdr)):
            if tot and all(is_num(r[ci]) for r in body):
                ssum = sum(num(r[ci]) for r in body)
                if not abs(ssum - num(tot[0][ci])) < 1e-6 + tol:
                    fail(f"{doc.path} / {s['heading']}: column {t['header'][ci]!r} sums to {ssum}, Total says {tot[0][ci]}")
                n += 1
        if "change" in hdr:
            ci = hdr.index("change")
            yr = [int(re.search(r"(\d{4})", h).group(1)) for h in t["header"][1:3]]
            late, early = (2, 1) if yr[1] > yr[0] else (1, 2)
            for r in t["rows"]:
                d = num(r[late]) - num(r[early])
                if not abs(d - num(r[ci])) < 1e-6 + tol:
                    fail(f"{doc.path} / {s['heading']}: row {r[0]!r} change {r[ci]} != {d}")
                n += 1
    return n


# ---------------------------------------------------------------- papers and pages
def doc_by_title(docs, title):
    hits = [d for d in docs.values() if d.title and norm(d.title) == norm(title)]
    if len(hits) != 1:
        raise KeyError(f"title {title!r} matched {len(hits)} documents")
    return hits[0]


def references(doc):
    sec = doc.section("References")
    entries = []
    for para in sec["text"]:
        entries += [e.strip() for e in re.split(r"(?=\[\d+\] )|(?<=\.)\s+(?=[A-Z][a-z]+, [A-Z]\.)", para) if e.strip()]
    return entries


def ref_title(entry):
    m = re.search(r"\(\d{4}\)\.\s*(.+?)\.\s", entry)
    return m.group(1)


def cite_numeric(docs, citing_title, cue):
    """Follow the [n] marker in the sentence of the citing paper that mentions `cue`."""
    d = doc_by_title(docs, citing_title)
    sents = [s for s in d.sentences() if cue.lower() in s.lower()]
    n = None
    for s in sents:
        # marker closest after the cue
        idx = s.lower().index(cue.lower())
        m = re.search(r"\[(\d+)\]", s[idx:])
        if m:
            n = m.group(1)
            break
    entry = [e for e in references(d) if e.startswith(f"[{n}]")][0]
    return doc_by_title(docs, ref_title(entry))


def cite_author_year(docs, citing_title, cue):
    d = doc_by_title(docs, citing_title)
    for s in d.sentences():
        if cue.lower() in s.lower():
            m = re.search(r"\(([A-Z][a-z]+)(?: and [A-Z][a-z]+| et al\.)?, (\d{4})\)", s)
            if m:
                surname, year = m.groups()
                entry = [e for e in references(d) if e.startswith(surname + ",") and f"({year})" in e]
                return doc_by_title(docs, ref_title(entry[0]))
    raise KeyError(f"no author-year citation near {cue!r}")


def results_figure(doc, pattern):
    m = re.search(pattern, doc.section_text("Results"))
    return float(m.group(1))


def wiki_pages(docs):
    names = ["vellmark.md", "tamsin_orrell.md", "saltry_river.md", "cairnholt_ironworks.md", "brannock_hall.html"]
    return {docs["docs/" + n].title: docs["docs/" + n] for n in names}


def link(pages, title, cue):
    """Title of another page named in a sentence of `title`'s page that contains `cue`."""
    found = []
    for s in pages[title].sentences():
        if cue.lower() in s.lower():
            found += [t for t in pages if t != title and t in s]
    found = list(dict.fromkeys(found))
    if len(found) != 1:
        raise KeyError(f"link from {title!r} via {cue!r}: {found}")
    return found[0]


def fact(pages, title, pattern):
    for s in pages[title].sentences():
        m = re.search(pattern, s)
        if m:
            return m.group(1)
    raise KeyError(f"{title}: no match for {pattern!r}")


# ---------------------------------------------------------------- derivations
def derive_all(docs):
    B = docs["docs/ridgeway_water_fy2026_budget.md"]
    A = docs["docs/basin_auditor_memo.html"]
    K1, K2, K3 = (docs[f"docs/kestrel_q{i}_2026_{k}.md"] for i, k in ((1, "report"), (2, "report"), (3, "call")))
    W = wiki_pages(docs)
    FUS = "Fusing Satellite Radar and In-Situ Probes for Field-Scale Moisture Maps"
    REV = "Calibration Transfer Between Soil Moisture Sensors: A Review"
    audit_t = table_of(A, "2.1 Figures That Differ from the Budget Document")

    def audit(row_start, col):
        ci = [norm(h) for h in audit_t["header"]].index(norm(col))
        r = [r for r in audit_t["rows"] if r[0].lower().startswith(row_start.lower())]
        return num(r[0][ci])

    # budget vs audit consistency: the audit's "Budget document" column must be what the budget says
    if audit("Water Treatment Division electricity", "Budget document") != cell(B, "2.1.2 Materials and Energy", "Electricity", "FY2025 Actual"):
        fail("audit memo misquotes budget electricity")
    if audit("Smart meter rollout", "Budget document") != cell(B, "3.1 Projects", "Smart meter rollout", "FY2026 Budget"):
        fail("audit memo misquotes budget smart meter")
    for r in audit_t["rows"]:
        if not close(num(r[2]) - num(r[1]), num(r[3])):
            fail(f"audit difference wrong in row {r[0]}")

    d = {}
    d[1] = cell(B, "2.2.1 Personnel", "Overtime", "FY2026 Budget")
    d[2] = sum(cell(B, h, "Electricity", "FY2026 Budget") for h in ("2.1.2 Materials and Energy", "2.2.2 Materials and Energy"))
    d[3] = cell(B, "2.2.2 Materials and Energy", "Maintenance contracts", "Change")
    assert close(d[3], cell(B, "2.2.2 Materials and Energy", "Maintenance contracts", "FY2026 Budget")
                 - cell(B, "2.2.2 Materials and Energy", "Maintenance contracts", "FY2025 Actual"))
    paths = row_sections(B, "Harlow Reservoir spillway upgrade")
    assert len(paths) == 1
    d[4] = paths[0][-1]
    b_el = cell(B, "2.1.2 Materials and Energy", "Electricity", "FY2025 Actual")
    d[5] = audit("Water Treatment Division electricity", "Audit finding")
    assert d[5] != b_el
    d[6] = results_figure(cite_numeric(docs, FUS, "TDR network"), r"RMSE of (\d\.\d+) m3/m3")
    own = results_figure(doc_by_title(docs, FUS), r"RMSE of (\d\.\d+) m3/m3")
    assert own != d[6]
    founder = link(W, "Cairnholt Ironworks", "founded")
    d[7] = int(fact(W, founder, r"born in (\d{4})"))
    town = link(W, "Tamsin Orrell", "born")
    river = link(W, town, "flows through")
    d[8] = int(fact(W, river, r"(\d+) km long"))
    d[9] = None
    d[10] = float(re.search(r"Operating income was \$(\d+\.\d) million", K1.section_text("Highlights")).group(1))
    d[11] = cell(K1, "Segment Results", "Total", "Q1 2026") + cell(K2, "Segment Results", "Total", "Q2 2026")
    assert close(cell(K3, "Segment Results", "Total", "Q2 2026 (restated)"), cell(K2, "Segment Results", "Total", "Q2 2026"))
    d[12] = results_figure(cite_author_year(docs, REV, "drift"), r"drift reached (\d\.\d+) m3/m3 after 90 days")
    d[13] = link(W, link(W, "Tamsin Orrell", "born"), "flows through")
    d[14] = cell(K3, "Segment Results", "Warehousing", "Q3 2026") - cell(K3, "Segment Results", "Warehousing", "Q2 2026 (restated)")
    d[15] = cell(B, "2.3.2 Billing and Outreach", "Conservation rebates", "FY2025 Actual")
    paths = row_sections(B, "Postage and printing")
    assert len(paths) == 1
    d[16] = strip_number([h for h in paths[0] if re.match(r"^\d+\.\d+ ", h)][0])
    d[17] = cell(B, "2.1.1 Personnel", "Salaries and wages", "FY2026 Budget") - cell(B, "2.2.1 Personnel", "Salaries and wages", "FY2026 Budget")
    d[18] = cell(K3, "Segment Results", "Warehousing", "Q2 2026 (restated)")
    orig = cell(K2, "Segment Results", "Warehousing", "Q2 2026")
    assert orig != d[18] and f"${orig} million" in K3.plain
    company = link(W, "Tamsin Orrell", "founded")
    hq = link(W, company, "headquarters")
    d[19] = int(fact(W, hq, r"completed in (\d{4})"))
    cited = cite_numeric(docs, FUS, "cosmic-ray")
    d[20] = results_figure(cited, r"footprint radius was (\d+) m")
    assert cited.path.endswith(".txt")
    d[21] = cell(K3, "Segment Results", "Total", "Q3 2026") - cell(K3, "Segment Results", "Total", "Q3 2025")
    d[22] = cell(K2, "Segment Results", "Last-Mile Delivery", "Q2 2026")
    assert close(d[22], cell(K3, "Segment Results", "Last-Mile Delivery", "Q2 2026 (restated)"))
    d[23] = fact(W, link(W, "Cairnholt Ironworks", "headquarters"), r"architect ([A-Z][a-z]+ [A-Z][a-z]+)")
    d[24] = (cell(B, "3.1 Projects", "Total", "FY2026 Budget") - cell(B, "3.1 Projects", "Smart meter rollout", "FY2026 Budget")
             + audit("Smart meter rollout", "Audit finding"))
    hq = link(W, "Cairnholt Ironworks", "headquarters")
    d[25] = fact(W, link(W, hq, "bank of"), r"rises at (Lake [A-Z][a-z]+)")
    d[26] = None
    # unanswerable checks: the asked-for periods must not be stated anywhere
    if re.search(r"FY\s?2027|2027", " ".join(x.plain for x in docs.values())):
        fail("FY2027 appears in the documents (q09 should be unanswerable)")
    kall = " ".join(x.plain for x in (K1, K2, K3))
    if re.search(r"Q4 2026|fourth quarter", kall, re.I):
        fail("Q4 2026 appears in Kestrel documents (q26 should be unanswerable)")
    return d


# ---------------------------------------------------------------- main
def main():
    docs = load_docs()
    print(f"documents: {len(docs)} ({Counter(os.path.splitext(p)[1] for p in docs)})")
    B = docs["docs/ridgeway_water_fy2026_budget.md"]
    n = check_table_sums(B)
    # division summary equals the sum of each division's sub-tables
    summ = table_of(B, "4.1 Operating Totals by Division")
    for r in summ["rows"]:
        if norm(r[0]) == "total":
            continue
        div = [s for s in B.sections if strip_number(s["heading"]) == r[0] and s["level"] == 3][0]
        subs = [s for s in B.sections if len(s["path_objs"]) > 1 and s["path_objs"][-2] is div]
        for ci, col in ((1, "FY2025 Actual"), (2, "FY2026 Budget")):
            tot = sum(cell(B, s["heading"], "Total", col) for s in subs)
            if not close(tot, num(r[ci])):
                fail(f"summary {r[0]} {col}: {r[ci]} vs sub-table totals {tot}")
            n += 1
    for k in ("kestrel_q1_2026_report.md", "kestrel_q2_2026_report.md", "kestrel_q3_2026_call.md"):
        kd = docs["docs/" + k]
        n += check_table_sums(kd, tol=0.05)
        for key in ("company", "quarter", "year"):
            if key not in kd.meta:
                fail(f"{k}: front matter lacks {key}")
    print(f"table arithmetic checks: {n}")

    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") if l.strip()]
    derived = derive_all(docs)
    ids = [q["id"] for q in qs]
    if len(set(ids)) != len(ids) or any(not i.startswith(PREFIX + "-") for i in ids):
        fail("ids not unique or wrong prefix")
    kinds = Counter(q["kind"] for q in qs)
    if dict(kinds) != EXPECTED_KINDS:
        fail(f"kind counts {dict(kinds)} != {EXPECTED_KINDS}")
    half = len(qs) // 2
    for k in EXPECTED_KINDS:
        a = sum(1 for q in qs[:half] if q["kind"] == k)
        b = sum(1 for q in qs[half:] if q["kind"] == k)
        if abs(a - b) > 1:
            fail(f"kind {k} unbalanced across halves: {a} vs {b}")

    for q in qs:
        i = int(q["id"].split("-")[1])
        tag = q["id"]
        exp = derived[i]
        if q["answer_type"] == "not_found":
            if q["answers"] or q["gold_docs"] or q["kind"] != "unanswerable" or exp is not None:
                fail(f"{tag}: not_found must have empty answers/gold_docs")
            print(f"{tag} {q['kind']:<17} not_found OK")
            continue
        if q["answer_type"] not in ("span", "computed"):
            fail(f"{tag}: bad answer_type")
        gds = [docs.get(g) for g in q["gold_docs"]]
        if not q["gold_docs"] or None in gds:
            fail(f"{tag}: unknown gold doc {q['gold_docs']}")
            continue
        heads = {norm(h) for g in gds for h in g.headings()}
        for gs in q["gold_sections"]:
            if norm(gs) not in heads:
                fail(f"{tag}: gold section {gs!r} is not a heading of its gold docs")
        canon = q["answers"][0]
        if isinstance(exp, (int, float)):
            got = answer_number(canon)
            if got is None or not close(got[0], exp):
                fail(f"{tag}: canonical {canon!r} != derived {exp}")
            else:
                full = got[0] * (got[1] or 1)
                for alt in q["answers"][1:]:
                    an = answer_number(alt)
                    if an is None:
                        fail(f"{tag}: alternative {alt!r} has no number"); continue
                    ok = (close(abs(an[0] * an[1]), abs(full)) if an[1] else
                          close(abs(an[0]), abs(got[0])) or close(abs(an[0]), abs(full)) or close(abs(an[0]) * 1e3, abs(full)))
                    if not ok:
                        fail(f"{tag}: alternative {alt!r} inconsistent with {canon!r}")
        else:
            if norm(canon) != norm(str(exp)):
                fail(f"{tag}: canonical {canon!r} != derived {exp!r}")
        if q["answer_type"] == "span":
            text = norm(" ".join(g.plain for g in gds))
            if not any(norm(a) in text for a in q["answers"]):
                fail(f"{tag}: no answer form occurs in gold docs")
        print(f"{tag} {q['kind']:<17} {q['answer_type']:<8} derived={(round(exp, 6) if isinstance(exp, float) else exp)!r:<28} canonical={canon!r}")

    print(f"questions: {len(qs)}; kinds: {dict(sorted(kinds.items()))}")
    if FAILURES:
        print(f"{len(FAILURES)} FAILURE(S)")
        sys.exit(1)
    print("ALL CHECKS PASSED")


if __name__ == "__main__":
    main()

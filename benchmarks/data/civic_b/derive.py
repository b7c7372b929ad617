#!/usr/bin/env python3
"""Re-derive every answer of the civic_b set from the documents in docs/.

Standard library only. For each question in questions.jsonl a small recipe
reads the documents (pipe and HTML tables, "Key facts" lists, sentences,
reference lists), computes the canonical answer and compares it with the
file. It also checks that span answers occur in a gold document, that gold
sections are headings of gold documents, that the documents a recipe read
are exactly the gold documents, that Total rows add up, and that the kinds
are spread evenly over the two halves of the file.

Prints one line per question (OK / MISMATCH) and exits 1 on any failure.
"""
import html
import json
import os
import re
import sys
from collections import Counter
from html.parser import HTMLParser

BASE = os.path.dirname(os.path.abspath(__file__))
DOCS_DIR = os.path.join(BASE, "docs")


# ---------------------------------------------------------------- helpers

def norm(s):
    s = s.replace("**", "")
    return re.sub(r"\s+", " ", s).strip().lower()


def num(s):
    """'(7.9)' -> -7.9, '3,450' -> 3450.0, '€19.1' -> 19.1, '89.2%' -> 89.2"""
    t = s.replace("**", "").strip()
    neg = t.startswith("(") and t.endswith(")")
    t = re.sub(r"[^\d.\-]", "", t)
    if t in ("", "-", "."):
        raise ValueError("not a number: %r" % s)
    v = float(t)
    return -v if neg else v


def first_number(s):
    m = re.search(r"-?\d[\d,]*(?:\.\d+)?", s)
    if not m:
        return None
    return float(m.group(0).replace(",", ""))


class Failure(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Failure(msg)


# ---------------------------------------------------------------- document model

class Section:
    def __init__(self, level, title, doc):
        self.level, self.title, self.doc = level, title, doc
        self.own_lines = []
        self.tables = []
        self.parent = None

    @property
    def own(self):
        return "\n".join(self.own_lines)

    def ancestors(self):
        s = self.parent
        while s is not None:
            yield s
            s = s.parent

    def context(self):
        """own text plus the own text of all enclosing sections (units are
        often stated once at chapter level)."""
        return "\n".join([self.own] + [a.own for a in self.ancestors()])


class Table:
    def __init__(self, header, rows):
        self.header = [norm(h) for h in header]
        self.rows = rows

    def col(self, pattern):
        idx = [i for i, h in enumerate(self.header) if pattern.lower() in h]
        need(len(idx) == 1, "column %r ambiguous/missing in %r" % (pattern, self.header))
        return idx[0]

    def row(self, label):
        hit = [r for r in self.rows if norm(r[0]) == norm(label)]
        need(len(hit) == 1, "row %r ambiguous/missing" % label)
        return hit[0]

    def value(self, label, col_pattern):
        return num(self.row(label)[self.col(col_pattern)])


def pipe_tables(lines):
    tables, cur = [], []
    for ln in lines + [""]:
        if ln.strip().startswith("|"):
            cur.append([c.strip() for c in ln.strip().strip("|").split("|")])
        else:
            if cur:
                header = cur[0]
                body = [r for r in cur[1:] if not all(re.fullmatch(r":?-{3,}:?", c) for c in r)]
                tables.append(Table(header, [[c.replace("**", "").strip() for c in r] for r in body]))
            cur = []
    return tables


class Doc:
    def __init__(self, rel, raw):
        self.rel, self.raw = rel, raw
        self.meta = {}
        self.sections = []
        self.plain = raw
        ext = rel.rsplit(".", 1)[-1]
        if ext == "md":
            self._parse_md()
        elif ext == "txt":
            self._parse_txt()
        elif ext == "html":
            self._parse_html()
        else:
            raise Failure("bad extension " + rel)
        self.title = self.sections[0].title if self.sections else ""

    # -- markdown
    def _parse_md(self):
        lines = self.raw.split("\n")
        if lines and lines[0].strip() == "---":
            end = lines.index("---", 1)
            for ln in lines[1:end]:
                if ":" in ln:
                    k, v = ln.split(":", 1)
                    self.meta[k.strip()] = v.strip()
            lines = lines[end + 1:]
        stack, cur = [], None
        for ln in lines:
            m = re.match(r"^(#{1,6})\s+(.*?)\s*$", ln)
            if m:
                cur = Section(len(m.group(1)), m.group(2), self)
                while stack and stack[-1].level >= cur.level:
                    stack.pop()
                cur.parent = stack[-1] if stack else None
                stack.append(cur)
                self.sections.append(cur)
            elif cur is not None:
                cur.own_lines.append(ln)
        for s in self.sections:
            s.tables = pipe_tables(s.own_lines)

    # -- plain text: first line is the title, headings are underlined
    def _parse_txt(self):
        lines = self.raw.split("\n")
        i = 0
        while not lines[i].strip():
            i += 1
        top = Section(1, lines[i].strip(), self)
        self.sections.append(top)
        cur = top
        i += 1
        while i < len(lines):
            ln = lines[i]
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if ln.strip() and re.fullmatch(r"[-=]{3,}", nxt.strip()):
                cur = Section(2, ln.strip(), self)
                cur.parent = top
                self.sections.append(cur)
                i += 2
                continue
            cur.own_lines.append(ln)
            i += 1

    # -- html
    def _parse_html(self):
        doc = self

        class P(HTMLParser):
            def __init__(self):
                super().__init__(convert_charrefs=True)
                self.cur = None
                self.stack = []
                self.in_head = None
                self.head_text = []
                self.texts = []
                self.table = None
                self.row = None
                self.cell = None
                self.skip = 0

            def handle_starttag(self, tag, attrs):
                if tag in ("title", "style", "script"):
                    self.skip += 1
                if re.fullmatch(r"h[1-6]", tag):
                    self.in_head = int(tag[1])
                    self.head_text = []
                elif tag == "table":
                    self.table = []
                elif tag == "tr":
                    self.row = []
                elif tag in ("td", "th"):
                    self.cell = []
                elif tag in ("p", "br", "li", "tr"):
                    self.texts.append("\n")

            def handle_endtag(self, tag):
                if tag in ("title", "style", "script"):
                    self.skip -= 1
                if re.fullmatch(r"h[1-6]", tag) and self.in_head:
                    sec = Section(self.in_head, re.sub(r"\s+", " ", "".join(self.head_text)).strip(), doc)
                    while self.stack and self.stack[-1].level >= sec.level:
                        self.stack.pop()
                    sec.parent = self.stack[-1] if self.stack else None
                    self.stack.append(sec)
                    doc.sections.append(sec)
                    self.cur = sec
                    self.in_head = None
                elif tag in ("td", "th") and self.cell is not None:
                    self.row.append(re.sub(r"\s+", " ", "".join(self.cell)).strip())
                    self.cell = None
                elif tag == "tr" and self.row is not None:
                    self.table.append(self.row)
                    self.row = None
                elif tag == "table" and self.table is not None:
                    if self.cur is not None and self.table:
                        self.cur.tables.append(Table(self.table[0], self.table[1:]))
                    self.table = None

            def handle_data(self, data):
                if self.skip:
                    return
                self.texts.append(data)
                if self.in_head:
                    self.head_text.append(data)
                elif self.cell is not None:
                    self.cell.append(data)
                elif self.cur is not None:
                    self.cur.own_lines.append(data)

        p = P()
        p.feed(self.raw)
        self.plain = " ".join(p.texts)

    # -- access
    def section(self, title):
        hit = [s for s in self.sections if norm(s.title) == norm(title)]
        need(len(hit) == 1, "%s: section %r ambiguous/missing" % (self.rel, title))
        return hit[0]

    def facts(self):
        """'Key facts' section as a dict: '- **Key:** value' (md) or 'Key: value' (txt)."""
        out = {}
        for ln in self.section("Key facts").own_lines:
            m = re.match(r"^\s*-\s*\*\*(.+?):\*\*\s*(.+)$", ln) or re.match(r"^([A-Z][^:]{0,40}):\s*(.+)$", ln)
            if m:
                out[m.group(1).strip()] = m.group(2).strip()
        return out


def load_docs():
    docs = {}
    for fn in sorted(os.listdir(DOCS_DIR)):
        rel = "docs/" + fn
        with open(os.path.join(DOCS_DIR, fn), encoding="utf-8") as f:
            docs[rel] = Doc(rel, f.read())
    return docs


DOCS = load_docs()
TOUCHED = set()      # documents a recipe actually read
USED_SECTIONS = set()


def use(doc, *sections):
    TOUCHED.add(doc.rel)
    for s in sections:
        USED_SECTIONS.add(s.title)
    return doc


# ---------------------------------------------------------------- finders

def doc_where(**meta):
    hit = [d for d in DOCS.values() if all(d.meta.get(k, "").lower() == str(v).lower() for k, v in meta.items())]
    need(len(hit) == 1, "doc_where%r: %d hits" % (meta, len(hit)))
    return hit[0]


def find_row(doc, label, unit_hint, col=None):
    """The unique table row labelled `label` in a section whose context
    (own text + enclosing sections) states `unit_hint`; optionally only in
    tables having a column matching `col`. Returns (section, table, row)."""
    hits = []
    for s in doc.sections:
        if unit_hint.lower() not in s.context().lower():
            continue
        for t in s.tables:
            if col and not any(col.lower() in h for h in t.header):
                continue
            for r in t.rows:
                if norm(r[0]) == norm(label):
                    hits.append((s, t, r))
    need(len(hits) == 1, "%s: row %r with unit %r: %d hits" % (doc.rel, label, unit_hint, len(hits)))
    s, t, r = hits[0]
    use(doc, s)
    return s, t, r


def cell(doc, label, unit_hint, col):
    s, t, r = find_row(doc, label, unit_hint, col)
    return num(r[t.col(col)])


def sections_mentioning(doc, phrase):
    return [s for s in doc.sections if phrase.lower() in s.own.lower()]


def entity(name):
    """Encyclopedia page whose title (H1 / first line) is exactly `name`."""
    hit = [d for d in DOCS.values() if norm(d.title) == norm(name) and any(norm(s.title) == "key facts" for s in d.sections)]
    need(len(hit) == 1, "entity %r: %d pages" % (name, len(hit)))
    d = hit[0]
    use(d, d.section("Key facts"))
    return d


def entity_with_fact(key, value):
    hit = []
    for d in DOCS.values():
        if any(norm(s.title) == "key facts" for s in d.sections):
            if norm(d.facts().get(key, "")) == norm(value):
                hit.append(d)
    need(len(hit) == 1, "entity with %s=%s: %d" % (key, value, len(hit)))
    use(hit[0], hit[0].section("Key facts"))
    return hit[0]


def place_of(fact_value):
    """'14 February 1931, Pellham Cross' -> 'Pellham Cross'"""
    return fact_value.split(",")[-1].strip()


def year_of(fact_value):
    m = re.search(r"\b(1[89]\d\d|20\d\d)\b", fact_value)
    need(m, "no year in %r" % fact_value)
    return int(m.group(1))


def is_paper(d):
    return any(norm(s.title) == "references" for s in d.sections)


def paper_by_first_author(surname):
    hit = []
    for d in DOCS.values():
        if not is_paper(d):
            continue
        first = [ln for ln in d.sections[0].own_lines if ln.strip()][0]
        authors = re.split(r",| and ", first)
        if authors and authors[0].strip().split()[-1] == surname:
            hit.append(d)
    need(len(hit) == 1, "paper by %s: %d" % (surname, len(hit)))
    return hit[0]


def references(d):
    """list of (marker, text) from the References section; marker is the
    number for numbered lists, None for author-year lists."""
    out = []
    for ln in d.section("References").own_lines:
        ln = ln.strip()
        if not ln:
            continue
        m = re.match(r"^\[(\d+)\]\s*(.+)$", ln)
        out.append((int(m.group(1)), m.group(2)) if m else (None, ln))
    return out


def ref_title(text):
    m = re.search(r"\(\d{4}\)\.\s+(.+?)\.\s", text + " ")
    need(m, "no title in reference %r" % text)
    return m.group(1).strip()


def paper_by_title(title):
    hit = [d for d in DOCS.values() if is_paper(d) and norm(d.title) == norm(title)]
    return hit[0] if hit else None


def cited_after(d, section_title, cue):
    """Resolve the first citation after `cue` in a section of paper d to the
    cited paper in the collection (numbered or author-year style)."""
    sec = d.section(section_title)
    use(d, sec, d.section("References"))
    text = re.sub(r"\s+", " ", sec.own)
    i = text.lower().find(cue.lower())
    need(i >= 0, "%s: cue %r not found" % (d.rel, cue))
    tail = text[i:i + 250]
    refs = references(d)
    m_num = re.search(r"\[(\d+(?:,\s*\d+)*)\]", tail)
    m_ay = re.search(r"([A-Z][A-Za-z\-]+)(?: and [A-Z][A-Za-z\-]+| et al\.)? \((\d{4})\)", tail)
    if m_num and (not m_ay or m_num.start() < m_ay.start()):
        markers = [int(x) for x in m_num.group(1).split(",")]
        need(len(markers) == 1, "several markers after cue")
        entry = [t for k, t in refs if k == markers[0]]
    else:
        need(m_ay, "%s: no citation after cue %r" % (d.rel, cue))
        surname, year = m_ay.group(1), m_ay.group(2)
        entry = [t for k, t in refs if t.startswith(surname + ",") and "(%s)" % year in t]
    need(len(entry) == 1, "reference not resolved")
    title = ref_title(entry[0])
    target = paper_by_title(title)
    need(target is not None, "cited work %r is outside the collection" % title)
    return target


def headline_accuracy(d):
    sec = d.section("Results")
    use(d, sec)
    m = re.search(r"overall accuracy of (\d+(?:\.\d+)?)%", sec.own)
    need(m, "%s: no overall accuracy in Results" % d.rel)
    return float(m.group(1))


def top_chapter(sec):
    chain = [sec] + list(sec.ancestors())
    numbered = [s for s in chain if s.level == 1 and re.match(r"^\d+\.\s", s.title)]
    need(len(numbered) == 1, "no numbered chapter above %r" % sec.title)
    return numbered[0]


REPORT = doc_where(organization="Calderwick Estuary Port Authority", document_type="annual report")
LETTER = [d for d in DOCS.values() if d.rel.endswith(".html")][0]
M_EUR = "millions of euros"
K_EUR = "thousands of euros"
K_USD = "thousands of US dollars"


def velmora(q):
    return doc_where(company="Velmora Cold Chain Ltd", year=2025, quarter=q)


def letter_row(item):
    sec = [s for s in LETTER.sections if s.tables]
    need(len(sec) == 1, "letter tables")
    use(LETTER, sec[0])
    t = sec[0].tables[0]
    return t, t.row(item)


# ---------------------------------------------------------------- recipes

def q01():
    return cell(REPORT, "Pilotage charges", M_EUR, "FY2026")


def q02():
    bridge = entity("Saltmere Bridge")
    arch = entity(bridge.facts()["Designer"])
    return place_of(arch.facts()["Born"])


def q03():
    a = cell(REPORT, "Quay 4 resurfacing", K_EUR, "FY2026")
    b = cell(REPORT, "Shore power installation", K_EUR, "FY2026")
    return (a + b) / 1000.0          # millions of euros


def q04():
    s, t, r = find_row(REPORT, "Vessel berthing fees", M_EUR, "FY2025")
    reported = num(r[t.col("FY2025")])
    total = num(t.row("Total")[t.col("FY2025")])
    lt, lr = letter_row("Vessel berthing fees")
    need(num(lr[lt.col("annual report")]) == reported, "letter quotes a different reported figure")
    need("fy2025" in norm(lr[lt.col("period")]), "letter row is not FY2025")
    audited = num(lr[lt.col("audited")])
    rev = LETTER.section("2.1 Revenue")
    need("all other fy2025 revenue lines agree" in norm(rev.own), "other lines not confirmed")
    use(LETTER, rev)
    return round(total - reported + audited, 6)


def q05():
    okafor = paper_by_first_author("Okafor")
    return headline_accuracy(cited_after(okafor, "Methods", "builds on"))


def q06():
    hits = sections_mentioning(REPORT, "Kestrel Sound")
    need(len(hits) == 1, "Kestrel Sound in %d sections" % len(hits))
    use(REPORT, hits[0])
    return hits[0].title


def q07():
    s, t, r = find_row(REPORT, "Cargo dues", M_EUR, "FY2024")
    c24, c26 = t.col("FY2024"), t.col("FY2026")
    growth = {row[0]: num(row[c26]) / num(row[c24]) - 1 for row in t.rows if norm(row[0]) != "total"}
    ranked = sorted(growth, key=growth.get, reverse=True)
    need(growth[ranked[0]] > growth[ranked[1]], "tie")
    return ranked[0]


def q08():
    bridge = entity_with_fact("Carries", "Route 17")
    need("river dunn" in norm(bridge.facts()["Crosses"]), "bridge does not cross the Dunn")
    arch = entity(bridge.facts()["Designer"])
    town = entity(place_of(arch.facts()["Born"]))
    pop = town.facts()["Population"]
    need("2021" in pop, "population not from 2021 census")
    return first_number(pop)


def q09():
    return cell(REPORT, "Marine operations", "full-time equivalents", "FY2026")


def q10():
    # absent: no Velmora update for Q4 2025 and no 'Q4 2025' column anywhere
    for d in DOCS.values():
        need(not (d.meta.get("company", "").startswith("Velmora") and d.meta.get("quarter") == "Q4"
                  and d.meta.get("year") == "2025"), "a Q4 2025 update exists")
        for s in d.sections:
            for t in s.tables:
                need(not any("q4 2025" in h for h in t.header), "Q4 2025 column in " + d.rel)
        need("fourth quarter of 2025" not in norm(d.plain), "Q4 2025 mentioned in " + d.rel)
    return None


def q11():
    q1 = cell(velmora("Q3"), "Total revenue", K_USD, "restated")
    q2 = cell(velmora("Q2"), "Total", K_USD, "Q2 2025")
    q3 = cell(velmora("Q3"), "Total", K_USD, "Q3 2025")
    return (q1 + q2 + q3) / 1000.0       # millions of dollars


def q12():
    bridge = entity("Saltmere Bridge")
    firm = entity(bridge.facts()["Deck fabricator"])
    return year_of(firm.facts()["Founded"])


def q13():
    in_report = cell(REPORT, "Environmental programmes", M_EUR, "FY2026")
    lt, lr = letter_row("Environmental programmes")
    need("fy2026" in norm(lr[lt.col("period")]), "letter row is not FY2026")
    need(num(lr[lt.col("annual report")]) == in_report, "letter quotes a different reported figure")
    adopted = num(lr[lt.col("adopted")])
    amend = LETTER.section("2.3 Board Amendment to the FY2026 Budget")
    need(re.search(r"board adopted €%s million" % re.escape("%.1f" % adopted), norm(amend.own)), "adoption sentence")
    use(LETTER, amend)
    need(adopted != in_report, "no discrepancy")
    return adopted


def q14():
    trial = paper_by_first_author("Mbeki")
    return headline_accuracy(cited_after(trial, "Methods", "baseline"))


def q15():
    d = velmora("Q2")
    sec = d.section("Summary")
    use(d, sec)
    m = re.search(r"Operating profit[^.$]*?\$(\d+(?:\.\d+)?) million", sec.own)
    need(m, "no operating profit sentence")
    return float(m.group(1))


def q16():
    bridge = entity("Saltmere Bridge")
    arch = entity(bridge.facts()["Designer"])
    school = entity(arch.facts()["Education"])
    return school.facts()["First principal"]


def q17():
    _, t2, _ = find_row(velmora("Q2"), "Total", K_USD, "Q2 2025")
    _, t3, _ = find_row(velmora("Q3"), "Total", K_USD, "Q3 2025")
    gain = {}
    for r in t3.rows:
        if norm(r[0]) == "total":
            continue
        gain[r[0]] = num(r[t3.col("Q3 2025")]) - t2.value(r[0], "Q2 2025")
    ranked = sorted(gain, key=gain.get, reverse=True)
    need(gain[ranked[0]] > gain[ranked[1]], "tie")
    return ranked[0]


def q18():
    hits = sections_mentioning(REPORT, "over 25 years old")
    need(len(hits) == 1, "ageing pilot boats in %d sections" % len(hits))
    need("pilot boats" in norm(hits[0].own), "not about pilot boats")
    ch = top_chapter(hits[0])
    use(REPORT, hits[0], ch)
    return ch.title


def q19():
    part = cell(REPORT, "Cargo dues", M_EUR, "FY2026")
    s, t, r = find_row(REPORT, "Cargo dues", M_EUR, "FY2026")
    total = t.value("Total", "FY2026")
    return 100.0 * part / total


def q20():
    arch = entity("Idris Vantongeren")
    school = entity(arch.facts()["Education"])
    return year_of(school.facts()["Founded"])


def q21():
    edge = paper_by_first_author("Halvorsen")
    src = cited_after(edge, "Abstract", "We compress")
    sec = src.section("Methods")
    use(src, sec)
    m = re.search(r"(\d[\d,]*) PVC recordings", sec.own)
    need(m, "no PVC recordings count")
    return float(m.group(1).replace(",", ""))


def q22():
    orig = cell(velmora("Q1"), "Temperature-controlled transport", K_USD, "Q1 2025")
    rest = cell(velmora("Q3"), "Temperature-controlled transport", K_USD, "restated")
    need(rest != orig, "no restatement")
    return abs(orig - rest) / 1000.0     # millions of dollars


def q23():
    s, t, r = find_row(REPORT, "Total", "full-time equivalents", "FY2025")
    need(not any("fy2024" in h for h in t.header), "staff table has FY2024")
    for sec in REPORT.sections:
        for sent in re.split(r"(?<=[.;])\s+", sec.own):
            low = sent.lower()
            if "fy2024" in low:
                need(not re.search(r"\b(fte|full-time|staff|employees|headcount)\b", low),
                     "FY2024 staff figure found: " + sent)
    return None


def q24():
    d = velmora("Q3")
    a = cell(d, "Total", K_USD, "Q3 2024")
    b = cell(d, "Total", K_USD, "Q3 2025")
    return 100.0 * (b - a) / a


def q25():
    d = paper_by_first_author("Halvorsen")
    sec = d.section("Results")
    use(d, sec)
    m = re.search(r"battery life (?:is|of) (\d+) months", sec.own)
    need(m, "no battery life")
    return float(m.group(1))


def q26():
    bridge = entity("Saltmere Bridge")
    firm = entity(bridge.facts()["Deck fabricator"])
    town = entity(place_of(firm.facts()["Founded"]))
    return town.facts()["River"]


RECIPES = {"civic_b-%02d" % i: globals()["q%02d" % i] for i in range(1, 27)}


# ---------------------------------------------------------------- comparison

SCALE = {"million": 1e6, "thousand": 1e3}


def base_value(ans):
    """value in base units for answers with an explicit scale or currency;
    None for bare numbers / text."""
    s = ans.lower()
    n = first_number(s)
    if n is None:
        return None
    for w, f in SCALE.items():
        if w in s:
            return n * f
    if re.search(r"[€$]", s):
        return n
    return None


def matches(derived, canonical):
    if derived is None:
        return canonical is None
    if isinstance(derived, (int, float)):
        c = first_number(canonical)
        if c is None:
            return False
        m = re.search(r"\d[\d,]*(?:\.(\d+))?", canonical)
        dec = len(m.group(1)) if m.group(1) else 0
        return abs(round(derived, dec) - c) < 1e-9
    return norm(str(derived)) == norm(canonical)


def check_totals():
    problems = []
    for d in DOCS.values():
        for s in d.sections:
            for t in s.tables:
                last = norm(t.rows[-1][0]) if t.rows else ""
                if last not in ("total", "net result"):
                    continue
                for ci in range(1, len(t.header)):
                    vals = [num(r[ci]) for r in t.rows[:-1]]
                    if abs(sum(vals) - num(t.rows[-1][ci])) > 1e-6:
                        problems.append("%s / %s / %s" % (d.rel, s.title, t.header[ci]))
    return problems


def main():
    with open(os.path.join(BASE, "questions.jsonl"), encoding="utf-8") as f:
        qs = [json.loads(ln) for ln in f if ln.strip()]
    bad = 0
    for q in qs:
        errs = []
        TOUCHED.clear()
        USED_SECTIONS.clear()
        try:
            derived = RECIPES[q["id"]]()
        except Failure as e:
            derived, errs = "<error>", ["derivation failed: %s" % e]
        canonical = q["answers"][0] if q["answers"] else None
        if not errs and not matches(derived, canonical):
            errs.append("derived %r != canonical %r" % (derived, canonical))
        # documents and sections
        if not errs and q["kind"] != "unanswerable" and set(q["gold_docs"]) != TOUCHED:
            errs.append("gold_docs %s != docs read %s" % (sorted(q["gold_docs"]), sorted(TOUCHED)))
        gold_docs = [DOCS[p] for p in q["gold_docs"] if p in DOCS]
        if len(gold_docs) != len(q["gold_docs"]):
            errs.append("unknown gold doc")
        heads = {norm(s.title) for d in gold_docs for s in d.sections}
        for gs in q["gold_sections"]:
            if norm(gs) not in heads:
                errs.append("gold_section %r is not a heading of a gold doc" % gs)
        if q["gold_sections"]:
            missing = {t for t in USED_SECTIONS if norm(t) not in {norm(g) for g in q["gold_sections"]}}
            if missing:
                errs.append("sections used but not in gold_sections: %s" % sorted(missing))
        # answer type
        at = q["answer_type"]
        if q["kind"] == "unanswerable":
            if at != "not_found" or q["answers"] or q["gold_docs"]:
                errs.append("unanswerable must be not_found with empty answers/gold_docs")
        elif at == "span":
            texts = [norm(d.plain) for d in gold_docs]
            if not any(norm(a) in t for a in q["answers"] for t in texts):
                errs.append("span answer not found verbatim in gold docs")
        elif at == "computed":
            if any(norm(canonical) in norm(d.plain) for d in gold_docs):
                errs.append("canonical answer appears verbatim; should it be span?")
        else:
            errs.append("bad answer_type " + at)
        # equivalent forms must agree with the canonical one
        if canonical:
            cb = base_value(canonical)
            for a in q["answers"][1:]:
                ab = base_value(a)
                if cb is not None and ab is not None and abs(ab - cb) > 1e-6 * max(1, abs(cb)):
                    errs.append("answer form %r disagrees with %r" % (a, canonical))
        status = "OK" if not errs else "MISMATCH"
        bad += bool(errs)
        if isinstance(derived, float):
            shown = str(int(derived)) if derived.is_integer() else "%.4g" % derived
        else:
            shown = derived
        print("%s %-12s %-17s derived=%-32s canonical=%s%s" % (
            status, q["id"], q["kind"], shown, canonical,
            "" if not errs else "  <-- " + "; ".join(errs)))

    # set-level checks
    set_errs = []
    ids = [q["id"] for q in qs]
    if ids != ["civic_b-%02d" % i for i in range(1, len(qs) + 1)]:
        set_errs.append("ids not sequential")
    kinds = Counter(q["kind"] for q in qs)
    half = len(qs) // 2
    h1, h2 = Counter(q["kind"] for q in qs[:half]), Counter(q["kind"] for q in qs[half:])
    for k in kinds:
        if abs(h1[k] - h2[k]) > 1:
            set_errs.append("kind %s unevenly split %d/%d" % (k, h1[k], h2[k]))
    table_kinds = sum(kinds[k] for k in ("number_lookup", "sum_difference", "period_comparison", "hierarchy", "discrepancy"))
    if table_kinds < 14:
        set_errs.append("only %d table/section questions" % table_kinds)
    for k in ("chain_2hop", "chain_3hop", "citation_hop"):
        if kinds[k] < 3:
            set_errs.append("fewer than 3 %s" % k)
    if kinds["unanswerable"] != 2:
        set_errs.append("need 2 unanswerable")
    for p in check_totals():
        set_errs.append("Total row does not add up: " + p)
    for fn in os.listdir(DOCS_DIR):
        if not fn.endswith((".md", ".html", ".txt")):
            set_errs.append("bad doc extension: " + fn)
    print("kinds:", dict(sorted(kinds.items())), "| halves:", dict(sorted(h1.items())), "/", dict(sorted(h2.items())))
    for e in set_errs:
        print("SET MISMATCH", e)
    print("%d questions, %d mismatches, %d set-level problems" % (len(qs), bad, len(set_errs)))
    return 1 if (bad or set_errs) else 0


if __name__ == "__main__":
    sys.exit(main())

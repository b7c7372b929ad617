"""Heading numbers ("3.2", "IV", "Chapter 2", "Part I") and plain-text blocks: numbered headings told apart
from numbered lists by layout cues. Used for ``.txt``, PDF text and Markdown without heading markup."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stratagraph.ingest.structure import STYLE_CHAPTER, STYLE_DECIMAL, STYLE_PART, STYLE_ROMAN
from stratagraph.schema import Block
from stratagraph.text.lexicon import SECTION_NAMES

# --------------------------------------------------------------------------------------------------
# Heading numbers
# --------------------------------------------------------------------------------------------------

_ROMAN_VALID = re.compile(r"^(?=[IVXLCDM])M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_PART_CHAPTER_RE = re.compile(
    rf"^(Part|PART|Chapter|CHAPTER)[ \t]+(\d{{1,3}}|[IVXLCDM]{{1,7}}|[A-Z]|(?i:{_NUMBER_WORDS}))\b"
    r"(?:[ \t]*[.:\-\u2013\u2014][ \t]*|[ \t]+|$)(.*)$"
)
_MD_DECIMAL_RE = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)\.?(?:\)|(?=\s)|$)")
_MD_ROMAN_RE = re.compile(r"^([IVXLCDM]{1,7})[.):](?=\s|$)")


def heading_number(text: str) -> str | None:
    """The numbering written at the start of a heading ("3.2", "IV", "Chapter 2", "Part I"), if any."""
    s = text.strip()
    m = _PART_CHAPTER_RE.match(s)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    m = _MD_DECIMAL_RE.match(s)
    if m:
        return m.group(1)
    m = _MD_ROMAN_RE.match(s)
    if m and _ROMAN_VALID.match(m.group(1)):
        return m.group(1)
    return None


# --------------------------------------------------------------------------------------------------
# Plain text: numbered headings with layout cues
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Cand:
    style: int
    depth: int
    number: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.style, self.depth)


_PLAIN_DECIMAL_RE = re.compile(r"^(\d{1,2}(?:\.\d{1,3})*)(\.?)[ \t]+(\S.*)$")
_PLAIN_ROMAN_RE = re.compile(r"^([IVX]{1,6})\.[ \t]+(\S.*)$")
_LIST_MARKER_RE = re.compile(
    r"^\s*(?:(\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}[.)])"  # 1.2 / 1. / 1)
    r"|([IVXLCDMivxlcdm]{1,7})[.)]|[A-Za-z][.)]|\([0-9A-Za-z]{1,4}\)"  # iv. / a) / (a)
    r"|[-*+\u2022\u2023\u25e6\u2043\u2013])(?:\s|$)"  # bullets
)
_SENTENCE_INSIDE_RE = re.compile(r"[a-z]{2}[.!?;]\s")
_TOC_LEADER_RE = re.compile(r"(?:\.{3,}|\u2026|\s{3,}|\t)\s*\d+\s*$")
_RULE_RE = re.compile(r"^\s*([-=_*~#])\1{2,}\s*$")
_HEADING_MAX_WORDS = 12
_HEADING_MAX_CHARS = 100


def _title_like(rest: str) -> bool:
    """Heading text after the number: starts with a capital, short, no sentence punctuation at the end."""
    rest = rest.strip()
    if not rest:
        return False
    ch = rest[0]
    if not (ch.isupper() or (ch.isalpha() and not ch.islower())):
        return False
    if len(rest.split()) > _HEADING_MAX_WORDS or rest[-1] in ".;,:":
        return False
    if _SENTENCE_INSIDE_RE.search(rest) or _TOC_LEADER_RE.search(rest):
        return False
    return True


def _plain_candidate(line: str, allow_bare: bool) -> _Cand | None:
    """A heading candidate from the line alone (context cues are checked by the caller): a numbered heading,
    or a part's conventional name alone on its line ("Abstract", "References:"), ranked as a top-level
    numbered heading."""
    if len(line) - len(line.lstrip()) > 3:
        return None
    s = line.strip()
    if len(s) > _HEADING_MAX_CHARS:
        return None
    if " ".join(s.rstrip(":").split()).casefold() in SECTION_NAMES:
        return _Cand(STYLE_DECIMAL, 1, "")
    m = _PART_CHAPTER_RE.match(s)
    if m:
        rest = m.group(3)
        if rest and not _title_like(rest):
            return None
        style = STYLE_PART if m.group(1).lower() == "part" else STYLE_CHAPTER
        return _Cand(style, 1, f"{m.group(1)} {m.group(2)}")
    m = _PLAIN_ROMAN_RE.match(s)
    if m and _ROMAN_VALID.match(m.group(1)) and _title_like(m.group(2)):
        return _Cand(STYLE_ROMAN, 1, m.group(1))
    m = _PLAIN_DECIMAL_RE.match(s)
    if m and _title_like(m.group(3)):
        number, dot = m.group(1), m.group(2)
        if "." not in number and not dot and not allow_bare:
            return None
        return _Cand(STYLE_DECIMAL, number.count(".") + 1, number)
    return None


_BULLET = (-2, 0)


def _marker_key(line: str) -> tuple[int, int] | None:
    """(style, depth) of the list marker / numbering at the start of ``line``: (-1, 0) for letters like "a)",
    ``_BULLET`` for bullets, ``None`` for none."""
    m = _LIST_MARKER_RE.match(line)
    if not m:
        return None
    if m.group(1):
        return (STYLE_DECIMAL, m.group(1).rstrip(".)").count(".") + 1)
    if m.group(2) and _ROMAN_VALID.match(m.group(2).upper()):
        return (STYLE_ROMAN, 1)
    if m.group(0).strip()[0] in "-*+\u2022\u2023\u25e6\u2043\u2013":
        return _BULLET
    return (-1, 0)


def _is_child(parent: _Cand, line: str) -> bool:
    """True if ``line`` starts with a deeper number of ``parent`` ("3" -> "3.1"), or any deeper style."""
    s = line.strip()
    if parent.style == STYLE_DECIMAL:
        return s.startswith(parent.number.rstrip(".") + ".") and bool(re.match(r"^\d", s[len(parent.number) + 1 :]))
    cand = _plain_candidate(s, allow_bare=True)
    return cand is not None and cand.key > parent.key


def _ordinal(number: str) -> tuple[str, int] | None:
    """(prefix, last ordinal) of a number as written: "3.2" -> ("3.", 2), "IV" -> ("", 4), "Part 2" -> ("Part ", 2)."""
    head, _, last = number.rstrip(".").rpartition(" ") if " " in number else ("", "", number.rstrip("."))
    prefix = head + " " if head else ""
    if "." in last:
        pre, _, tail = last.rpartition(".")
        prefix, last = prefix + pre + ".", tail
    if last.isdigit():
        return prefix, int(last)
    if _ROMAN_VALID.match(last):
        values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
        total = 0
        for ch, nxt in zip(last, [*last[1:], ""], strict=True):
            v = values[ch]
            total += -v if nxt and values[nxt] > v else v
        return prefix, total
    return None


def _continues(a: str, b: str) -> bool:
    """True if numbering ``b`` is the one right after ``a`` ("1." -> "2.", "3.1" -> "3.2", "II" -> "III")."""
    oa, ob = _ordinal(a), _ordinal(b)
    return oa is not None and ob is not None and oa[0] == ob[0] and ob[1] == oa[1] + 1


def plain_blocks(lines: list[tuple[int, str]], pdf: bool) -> list[Block]:
    """Blocks of plain text: numbered headings and blank-line separated paragraphs.

    A numbered line is a heading only when it reads like one and stands alone: short (at most 12 words,
    100 characters), no sentence punctuation at the end, a capital letter after the number, preceded by a
    blank line (in PDF text, which has no blank lines, by the end of a sentence or another heading), and not
    followed by another numbered line. Numbered lines that run on (consecutive lines, items of one
    paragraph, a run introduced by ':' or siblings with nothing between them, like a table of contents) are
    list items, not headings. A part's conventional name alone on its line
    (:data:`~stratagraph.text.lexicon.SECTION_NAMES`: "Abstract", "References") is a heading of the top
    numbered level, under the same cues. Heading ``level`` here is the rank code ``16 * style + depth`` (the caller
    compresses it into 1..k).
    """
    n = len(lines)
    blank = [not text.strip() or bool(_RULE_RE.match(text)) for _, text in lines]
    cands: dict[int, _Cand] = {}
    for i, (_, text) in enumerate(lines):
        if blank[i]:
            continue
        cand = _plain_candidate(text, allow_bare=pdf)
        if cand is None:
            continue
        prev_ok = i == 0 or blank[i - 1] or (i - 1) in cands
        if not prev_ok and pdf:
            prev = lines[i - 1][1].rstrip()
            prev_ok = prev.endswith((".", "!", "?"))
        if not prev_ok:
            continue
        if i + 1 < n and not blank[i + 1]:
            nxt = lines[i + 1][1]
            marker = _marker_key(nxt)
            if marker is not None and marker != _BULLET and not _is_child(cand, nxt):
                continue
            if not pdf and nxt[:1].isspace() and not text[:1].isspace():
                continue  # an indented continuation: a wrapped list item
        cands[i] = cand

    demoted: set[int] = set()
    order = sorted(cands)
    for i in order:
        cand = cands[i]
        # a paragraph whose lines include a sibling number is a list (not in PDF text: no blank lines there)
        if not pdf:
            j = i + 1
            while j < n and not blank[j]:
                if _marker_key(lines[j][1]) == cand.key:
                    demoted.add(i)
                    break
                j += 1
        # introduced by "...:" -> a list
        j = i - 1
        while j >= 0 and blank[j]:
            j -= 1
        if j >= 0 and j not in cands and lines[j][1].rstrip().endswith(":"):
            demoted.add(i)
    # Runs of candidates with nothing but blank lines between them. A heading is followed by its content or by
    # a deeper heading (Part > Chapter > 1.1); one followed directly by a sibling or an uncle is an empty
    # entry: a list item or a table-of-contents line. Everything up to the last such step is demoted, and
    # the next one too when it merely continues the same numbering ("2." after "1.").
    run: list[int] = []

    def close_run() -> None:
        last = max((k for k in range(len(run) - 1) if cands[run[k + 1]].key <= cands[run[k]].key), default=None)
        if last is None:
            return
        demoted.update(run[: last + 1])
        a, b = cands[run[last]], cands[run[last + 1]]
        if a.key == b.key and _continues(a.number, b.number):
            demoted.add(run[last + 1])

    for i in order:
        if run and all(blank[j] for j in range(run[-1] + 1, i)):
            run.append(i)
        else:
            close_run()
            run = [i]
    close_run()

    blocks: list[Block] = []
    para: list[tuple[int, str]] = []

    def flush() -> None:
        if para:
            text = "\n".join(t.strip() for _, t in para).strip()
            if text:
                blocks.append(Block(kind="paragraph", text=text, line=para[0][0]))
            para.clear()

    for i, (lineno, text) in enumerate(lines):
        if i in cands and i not in demoted:
            flush()
            cand = cands[i]
            blocks.append(
                Block(
                    kind="heading",
                    text=" ".join(text.split()).rstrip(":"),
                    level=16 * cand.style + cand.depth,
                    number=cand.number or None,
                    line=lineno,
                )
            )
        elif blank[i]:
            flush()
        else:
            para.append((lineno, text))
    flush()
    return blocks


def compress_levels(blocks: list[Block]) -> None:
    """Map the rank codes of plain-text headings onto 1..k (keeping their order)."""
    levels = sorted({b.level for b in blocks if b.kind == "heading" and b.level is not None})
    rank = {lvl: i + 1 for i, lvl in enumerate(levels)}
    for b in blocks:
        if b.kind == "heading" and b.level is not None:
            b.level = rank[b.level]


def opening_title(lines: list[str]) -> str | None:
    """A plain-text document's title: its first non-blank line when that line stands alone (a blank line, a
    rule such as "=====" or the end after it), reads like a title (a capital first, at most 20 words and 200 characters, no sentence
    punctuation at its end) and is no heading."""
    for i, line in enumerate(lines):
        s = " ".join(line.split())
        if not s:
            continue
        alone = i + 1 >= len(lines) or not lines[i + 1].strip() or bool(_RULE_RE.match(lines[i + 1]))
        if (alone and s[0].isupper() and len(s) <= 200 and len(s.split()) <= 20 and s[-1] not in ".;,:!"
                and _plain_candidate(line, allow_bare=True) is None and not _RULE_RE.match(line)):  # fmt: skip
            return s
        return None
    return None

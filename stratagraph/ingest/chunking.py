"""Hierarchy-aware chunking (BAG-RAG §3.1 "Document Splitting", BiG-RAG §4.1.1 Algorithm 1).

The document is first divided by its headings: each section's own blocks are chunked on their own, so a
chunk never crosses a heading. Within a section, sentences are packed greedily while the chunk stays within
``settings.chunk_tokens`` (BiG-RAG Alg. 1, tau); a sentence longer than the budget is cut at line breaks, then
at word boundaries (and a single over-long "word" at token boundaries), so no chunk exceeds the budget.
Each chunk carries the last ``settings.carry_over_sentences`` sentences of the previous chunk of its section
as ``context`` (BAG-RAG eq. 2, sen(i-1); after a table chunk, its last rows). A table becomes its own
chunk(s): caption, a header line, one line per row (``Table.row_text``), split by rows with the header
repeated when over budget.

Token count: ``len(re.findall(r"\\w+|[^\\w\\s]", text))`` -- every run of word characters and every other
non-space character is one token. It is deterministic, model-free and close to (a little below) subword
tokenizer counts for English prose. Sentences come from spaCy's rule-based ``sentencizer`` on a blank
English pipeline (no model download), created once per process; sections that fit the budget whole are not
sentence-split at all (their chunk is the same either way).

Chunk ids are ``doc#para#n`` (KAG §2.2.1): para = the section path, n = 0, 1, ... within the section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from stratagraph import ids
from stratagraph.config import Settings
from stratagraph.schema import Block, ChunkRecord, Outline, SourceDocument, Table

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = ["chunk_outline", "chunk_documents", "count_tokens", "sentence_spans", "sentence_splitter"]

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_WORD_RE = re.compile(r"\S+")
_LINE_RE = re.compile(r"[^\n]+")
_SPACY_SEGMENT = 100_000  # characters per spaCy call (spaCy refuses texts over nlp.max_length)


def count_tokens(text: str) -> int:
    """Number of tokens of ``text``: runs of word characters and single other non-space characters."""
    return len(_TOKEN_RE.findall(text))


@lru_cache(maxsize=1)
def sentence_splitter() -> Language:
    """A blank English spaCy pipeline with the rule-based ``sentencizer`` (built once, no model files)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def _segments(text: str, limit: int = _SPACY_SEGMENT) -> Iterable[tuple[int, str]]:
    """``(offset, piece)`` cuts of ``text`` at most ``limit`` long, cut at a line break or space if possible."""
    start = 0
    while len(text) - start > limit:
        end = start + limit
        cut = max(text.rfind("\n", start + limit // 2, end), text.rfind(" ", start + limit // 2, end))
        cut = cut + 1 if cut > start else end
        yield start, text[start:cut]
        start = cut
    yield start, text[start:]


def sentence_spans(texts: Sequence[str]) -> list[list[tuple[int, int]]]:
    """Character spans ``(start, end)`` of the sentences of each text (whitespace trimmed), via ``nlp.pipe``."""
    nlp = sentence_splitter()
    pieces = [(i, off, seg) for i, text in enumerate(texts) for off, seg in _segments(text)]
    out: list[list[tuple[int, int]]] = [[] for _ in texts]
    docs = nlp.pipe((seg for _, _, seg in pieces), batch_size=256)
    for (i, off, seg), doc in zip(pieces, docs, strict=True):
        for sent in doc.sents:
            a, b = sent.start_char, sent.end_char
            while a < b and seg[a].isspace():
                a += 1
            while b > a and seg[b - 1].isspace():
                b -= 1
            if a < b:
                out[i].append((off + a, off + b))
    return out


# --------------------------------------------------------------------------------------------------
# Units and packing
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Unit:
    """A sentence (or a piece of an over-long one): a span of paragraph ``para`` of a text run."""

    para: int
    start: int
    end: int
    tokens: int


@dataclass(slots=True)
class _Piece:
    """One chunk before it becomes a record: its text, the units carried over from it, table data."""

    text: str
    carry: list[str]
    kind: str = "text"
    table: Table | None = None


def _word_units(text: str, para: int, start: int, end: int, budget: int) -> list[_Unit]:
    """Cut ``text[start:end]`` into pieces of at most ``budget`` tokens at word (else token) boundaries."""
    out: list[_Unit] = []
    cur_start = cur_end = -1
    cur_tok = 0
    for m in _WORD_RE.finditer(text, start, end):
        tok = count_tokens(m.group())
        if tok > budget:  # one "word" over budget (a long URL, a formula): cut at token boundaries
            if cur_tok:
                out.append(_Unit(para, cur_start, cur_end, cur_tok))
                cur_tok = 0
            toks = list(_TOKEN_RE.finditer(text, m.start(), m.end()))
            for k in range(0, len(toks), budget):
                part = toks[k : k + budget]
                out.append(_Unit(para, part[0].start(), part[-1].end(), len(part)))
            continue
        if cur_tok and cur_tok + tok > budget:
            out.append(_Unit(para, cur_start, cur_end, cur_tok))
            cur_tok = 0
        if not cur_tok:
            cur_start = m.start()
        cur_end = m.end()
        cur_tok += tok
    if cur_tok:
        out.append(_Unit(para, cur_start, cur_end, cur_tok))
    return out


def _units(text: str, para: int, spans: list[tuple[int, int]], budget: int) -> list[_Unit]:
    """Sentence units of one paragraph; sentences over budget cut at line breaks, then words."""
    out: list[_Unit] = []
    for a, b in spans:
        tok = count_tokens(text[a:b])
        if tok <= budget:
            out.append(_Unit(para, a, b, tok))
            continue
        for m in _LINE_RE.finditer(text, a, b):
            la, lb = m.start(), m.end()
            while la < lb and text[la].isspace():
                la += 1
            while lb > la and text[lb - 1].isspace():
                lb -= 1
            if la == lb:
                continue
            ltok = count_tokens(text[la:lb])
            if ltok <= budget:
                out.append(_Unit(para, la, lb, ltok))
            else:
                out.extend(_word_units(text, para, la, lb, budget))
    return out


def _join_units(paras: list[str], units: list[_Unit]) -> str:
    """Text of consecutive units: each paragraph's span kept as written, paragraphs separated by a blank line."""
    parts: list[str] = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and units[j + 1].para == units[i].para:
            j += 1
        parts.append(paras[units[i].para][units[i].start : units[j].end])
        i = j + 1
    return "\n\n".join(parts)


def _pack(paras: list[str], units: list[_Unit], budget: int) -> list[_Piece]:
    """BiG-RAG Alg. 1: append units while the chunk stays within the budget, else start a new chunk."""
    pieces: list[_Piece] = []
    cur: list[_Unit] = []
    cur_tok = 0

    def emit() -> None:
        if cur:
            carry = [" ".join(paras[u.para][u.start : u.end].split()) for u in cur]
            pieces.append(_Piece(text=_join_units(paras, cur), carry=carry))

    for unit in units:
        if cur and cur_tok + unit.tokens > budget:
            emit()
            cur, cur_tok = [], 0
        cur.append(unit)
        cur_tok += unit.tokens
    emit()
    return pieces


def _table_pieces(table: Table, budget: int) -> list[_Piece]:
    """Chunks of one table: caption and header line, then rows; split by rows with the header repeated."""
    caption = " ".join((table.caption or "").split())
    header_line = " | ".join(h.strip() for h in table.header) if any(h.strip() for h in table.header) else ""
    rows = [(row, table.row_text(row)) for row in table.rows]
    rows = [(row, line) for row, line in rows if line.strip()]
    prefix = [x for x in (caption, header_line) if x]
    if sum(count_tokens(x) for x in prefix) > budget // 2:  # keep room for rows: drop the caption, then the header
        prefix = [header_line] if header_line and count_tokens(header_line) <= budget // 2 else []
    avail = budget - sum(count_tokens(x) for x in prefix)

    def piece(rows_in: list[list[str]], lines: list[str]) -> _Piece:
        return _Piece(
            text="\n".join(prefix + lines),
            carry=lines,
            kind="table",
            table=Table(header=list(table.header), rows=[list(r) for r in rows_in], caption=table.caption),
        )

    if not rows:  # a header-only table: its caption and header are the content
        whole = "\n".join(x for x in (caption, header_line) if x)
        spans = [(0, len(whole))] if count_tokens(whole) <= budget else [
            (u.start, u.end) for u in _word_units(whole, 0, 0, len(whole), budget)
        ]
        empty = Table(header=list(table.header), rows=[], caption=table.caption)
        return [_Piece(text=whole[a:b], carry=[], kind="table", table=empty) for a, b in spans if whole[a:b].strip()]

    out: list[_Piece] = []
    cur_rows: list[list[str]] = []
    cur_lines: list[str] = []
    cur_tok = 0
    for row, line in rows:
        tok = count_tokens(line)
        if tok > avail:  # one row over budget: its own chunks, cut at words
            if cur_rows:
                out.append(piece(cur_rows, cur_lines))
                cur_rows, cur_lines, cur_tok = [], [], 0
            for u in _word_units(line, 0, 0, len(line), avail):
                out.append(piece([row], [line[u.start : u.end]]))
            continue
        if cur_rows and cur_tok + tok > avail:
            out.append(piece(cur_rows, cur_lines))
            cur_rows, cur_lines, cur_tok = [], [], 0
        cur_rows.append(row)
        cur_lines.append(line)
        cur_tok += tok
    if cur_rows:
        out.append(piece(cur_rows, cur_lines))
    return out


# --------------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    """Consecutive text blocks of one section (a table ends a run)."""

    paras: list[str]
    tokens: list[int]
    split: bool = False  # needs sentence units (over budget, or a chunk follows that wants carry-over)
    spans: list[list[tuple[int, int]]] = field(default_factory=list)


def _section_parts(blocks: list[Block]) -> list[_Run | Table]:
    parts: list[_Run | Table] = []
    for block in blocks:
        if block.kind == "table" and block.table is not None:
            parts.append(block.table)
            continue
        text = block.text.strip()
        if not text or block.kind == "heading":
            continue
        if not parts or not isinstance(parts[-1], _Run):
            parts.append(_Run(paras=[], tokens=[]))
        run = parts[-1]
        assert isinstance(run, _Run)
        run.paras.append(text)
        run.tokens.append(count_tokens(text))
    return parts


def chunk_documents(
    items: Sequence[tuple[SourceDocument, Outline]], settings: Settings
) -> list[list[ChunkRecord]]:
    """:func:`chunk_outline` for many documents at once (one spaCy pass over everything that needs splitting)."""
    budget = settings.chunk_tokens
    carry_n = settings.carry_over_sentences
    plans: list[list[tuple[str, list[_Run | Table]]]] = []
    todo: list[tuple[_Run, int]] = []
    texts: list[str] = []
    for _doc, outline in items:
        plan = []
        for section in outline.sections:
            parts = _section_parts(outline.blocks.get(section.id, []))
            for k, part in enumerate(parts):
                if isinstance(part, _Run):
                    followed = k + 1 < len(parts)
                    part.split = sum(part.tokens) > budget or (carry_n > 0 and followed)
                    if part.split:
                        part.spans = [[] for _ in part.paras]
                        for p, text in enumerate(part.paras):
                            todo.append((part, p))
                            texts.append(text)
            plan.append((section.id, parts))
        plans.append(plan)
    if texts:
        for (run, p), spans in zip(todo, sentence_spans(texts), strict=True):
            run.spans[p] = spans

    results: list[list[ChunkRecord]] = []
    for (doc, outline), plan in zip(items, plans, strict=True):
        sections = {s.id: s for s in outline.sections}
        records: list[ChunkRecord] = []
        for section_id, parts in plan:
            section = sections[section_id]
            n = 0
            prev_carry: list[str] = []
            for part in parts:
                if isinstance(part, Table):
                    pieces = _table_pieces(part, budget)
                elif part.split:
                    units = [u for p, text in enumerate(part.paras) for u in _units(text, p, part.spans[p], budget)]
                    pieces = _pack(part.paras, units, budget)
                else:
                    pieces = [_Piece(text="\n\n".join(part.paras), carry=[])]
                for piece in pieces:
                    text = piece.text.strip()
                    if not text:
                        continue
                    context = " ".join(prev_carry[-carry_n:]) if (carry_n > 0 and n > 0) else ""
                    records.append(
                        ChunkRecord(
                            id=ids.chunk_id(doc.doc_id, section.path, n),
                            doc_id=doc.doc_id,
                            section_id=section.id,
                            para=section.path,
                            n=n,
                            order=len(records),
                            text=text,
                            context=context,
                            tokens=count_tokens(text),
                            kind="table" if piece.kind == "table" else "text",
                            table=piece.table,
                            metadata=dict(doc.metadata),
                        )
                    )
                    prev_carry = piece.carry
                    n += 1
        results.append(records)
    return results


def chunk_outline(doc: SourceDocument, outline: Outline, settings: Settings) -> list[ChunkRecord]:
    """Chunks of one document in reading order (BAG-RAG "Document Splitting" + BiG-RAG Alg. 1, eq. 2 context)."""
    return chunk_documents([(doc, outline)], settings)[0]

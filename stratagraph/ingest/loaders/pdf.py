"""PDF (pypdf): page text without running headers / footers, read with the plain-text heading rules."""

from __future__ import annotations

import io
import re
from pathlib import Path

from stratagraph.config import Settings
from stratagraph.ingest.loaders.plaintext import compress_levels, plain_blocks
from stratagraph.ingest.loaders.text import LoadError, Parsed, document, filename_metadata, one_line


def _drop_running_lines(pages: list[str], edge: int = 2) -> list[str]:
    """Pages without their running headers and footers: lines among the first / last ``edge`` lines of a page
    that recur (digits ignored, so page numbers do not matter) on at least half of the pages (3 or more)."""
    if len(pages) < 3:
        return pages
    lines = [p.split("\n") for p in pages]

    def norm(line: str) -> str:
        return re.sub(r"\d+", "#", " ".join(line.split()))

    def edges(page: list[str]) -> set[int]:
        filled = [i for i, ln in enumerate(page) if ln.strip()]
        k = edge if len(filled) >= 2 * edge + 2 else 1
        return set(filled[:k] + filled[-k:])

    page_edges = [edges(page) for page in lines]
    counts: dict[str, int] = {}
    for page, at in zip(lines, page_edges, strict=True):
        for key in {norm(page[i]) for i in at}:
            counts[key] = counts.get(key, 0) + 1
    running = {k for k, c in counts.items() if c >= max(3, (len(pages) + 1) // 2)}
    if not running:
        return pages
    return [
        "\n".join(ln for i, ln in enumerate(page) if not (i in at and norm(ln) in running))
        for page, at in zip(lines, page_edges, strict=True)
    ]


def parse_pdf(file: Path, key: str, data: bytes, settings: Settings) -> Parsed:
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError("encrypted PDF (password required)")
        pages = [(page.extract_text() or "") for page in reader.pages]
    except LoadError:
        raise
    except Exception as exc:
        raise LoadError(f"cannot parse PDF: {one_line(exc) or type(exc).__name__}") from exc
    pages = [p.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n") for p in pages]
    text = "\n\n".join(_drop_running_lines(pages))
    if not text.strip():
        raise LoadError("no extractable text in PDF (scanned images?)")
    blocks = plain_blocks([(i + 1, ln) for i, ln in enumerate(text.split("\n"))], pdf=True)
    compress_levels(blocks)
    for b in blocks:
        b.line = None  # lines of extracted text are not lines of the file
    return [document(key, "pdf", file.stem, blocks, filename_metadata(file.name), [])], []

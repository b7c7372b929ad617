"""Document loaders: files and directories to :class:`SourceDocument` blocks in reading order.

The blocks (headings, paragraphs, tables) are what the heading tree (BAG-RAG §3.1 "Structural Node
Extraction", :mod:`stratagraph.ingest.structure`) and the hierarchy-aware chunker are built from.

Formats: ``.txt``, ``.md``/``.markdown``, ``.html``/``.htm``, ``.pdf`` (pypdf), ``.json`` and ``.jsonl``
(one document per record). Headings come from the markup (Markdown ATX / setext, HTML ``h1``-``h6``); in
plain text, PDF text and Markdown without any heading markup, from numbering ("1.2", "IV.", "Chapter 3",
"Part I") with layout cues that keep numbered lists out (see :func:`.plaintext.plain_blocks`).

Nothing here raises for a bad input: every problem becomes a one-line :class:`LoadIssue` naming the file.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from stratagraph import ids
from stratagraph.config import Settings
from stratagraph.ingest.loaders.html import parse_html
from stratagraph.ingest.loaders.markdown import parse_md, parse_txt
from stratagraph.ingest.loaders.pdf import parse_pdf
from stratagraph.ingest.loaders.records import parse_json, parse_jsonl
from stratagraph.ingest.loaders.text import LoadError, Parsed, filename_metadata, one_line, read
from stratagraph.schema import LoadIssue, LoadResult, SourceDocument

__all__ = ["FORMATS", "load_paths", "load_file", "filename_metadata"]

#: file extension -> ``SourceDocument.format``
FORMATS: dict[str, str] = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".json": "json",
    ".jsonl": "jsonl",
}


# --------------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------------


def load_paths(
    paths: Sequence[Path | str],
    settings: Settings,
    base: Path | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> LoadResult:
    """Load files and directories (recursively, in sorted order) into documents and issues.

    Inside directories, hidden entries (names starting with '.') and unsupported extensions are skipped, and
    ``include`` / ``exclude`` glob patterns are matched (fnmatch) against the path relative to the directory
    argument and against the file name. A file given explicitly is always loaded (an unsupported extension
    is then an error). Document ids come from the path relative to ``base`` (default: the working directory),
    see :func:`stratagraph.ids.source_key`.
    """
    base_dir = Path(base) if base is not None else Path.cwd()
    result = LoadResult()
    seen: set[Path] = set()
    for given in paths:
        arg = Path(given)
        label = str(given)
        try:
            exists, is_dir = arg.exists(), arg.is_dir()
        except OSError as exc:
            result.issues.append(LoadIssue(source=label, message=f"cannot access path: {one_line(exc)}"))
            continue
        if not exists:
            result.issues.append(LoadIssue(source=label, message="no such file or directory"))
            continue
        if is_dir:
            files = _walk(arg, include, exclude, result.issues, label)
            if not files:
                result.issues.append(
                    LoadIssue(source=label, message="no supported files found in directory", severity="warning")
                )
            for file in files:
                _load_into(file, arg, base_dir, settings, result, seen)
        else:
            _load_into(arg, arg, base_dir, settings, result, seen)
    return result


def _matches(rel: str, name: str, patterns: Sequence[str]) -> bool:
    for pat in patterns:
        cands = [pat]
        if pat.startswith("**/"):
            cands.append(pat[3:])
        if any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in cands):
            return True
    return False


def _walk(
    root: Path, include: Sequence[str], exclude: Sequence[str], issues: list[LoadIssue], label: str
) -> list[Path]:
    """Supported, non-hidden files under ``root`` that pass the filters, sorted by relative path."""
    found: list[tuple[tuple[str, ...], Path]] = []

    def on_error(exc: OSError) -> None:
        where = exc.filename or label
        issues.append(LoadIssue(source=str(where), message=f"cannot read directory: {exc.strerror or exc}"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
        here = Path(dirpath)
        rel_dir = here.relative_to(root)
        keep = []
        for d in sorted(dirnames):
            rel = (rel_dir / d).as_posix()
            if d.startswith(".") or (exclude and _matches(rel, d, exclude)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            if name.startswith(".") or Path(name).suffix.lower() not in FORMATS:
                continue
            rel_path = rel_dir / name
            rel = rel_path.as_posix()
            if include and not _matches(rel, name, include):
                continue
            if exclude and _matches(rel, name, exclude):
                continue
            found.append((rel_path.parts, here / name))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found]


def _load_into(
    file: Path,
    root: Path,
    base: Path,
    settings: Settings,
    result: LoadResult,
    seen: set[Path],
) -> None:
    """Load ``file`` once per run (a file reached twice, e.g. given and inside a given folder, counts once)."""
    try:
        resolved = file.resolve()
    except OSError:
        resolved = file.absolute()
    if resolved in seen:
        return
    seen.add(resolved)
    docs, issues = load_file(file, ids.source_key(file, root=root, base=base), settings)
    result.documents.extend(docs)
    result.issues.extend(issues)


def load_file(
    file: Path, key: str, settings: Settings, fmt: str | None = None
) -> tuple[list[SourceDocument], list[LoadIssue]]:
    """Load one file under the source key ``key`` (its relative path); never raises for bad content."""
    fmt = fmt or FORMATS.get(file.suffix.lower())
    if fmt is None:
        supported = ", ".join(sorted(FORMATS))
        message = f"unsupported file type '{file.suffix or '(none)'}' (supported: {supported})"
        return [], [LoadIssue(source=key, message=message)]
    try:
        data = read(file, settings.max_file_bytes)
        return _PARSERS[fmt](file, key, data, settings)
    except LoadError as exc:
        return [], [LoadIssue(source=key, message=one_line(str(exc)))]
    except Exception as exc:  # a parser bug or an exotic input must not stop the other files
        return [], [LoadIssue(source=key, message=one_line(f"cannot load: {type(exc).__name__}: {exc}"))]


_PARSERS: dict[str, Callable[[Path, str, bytes, Settings], Parsed]] = {
    "txt": parse_txt,
    "md": parse_md,
    "html": parse_html,
    "pdf": parse_pdf,
    "json": parse_json,
    "jsonl": parse_jsonl,
}

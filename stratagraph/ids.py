"""Deterministic identifiers (DESIGN.md "Identity, determinism, concurrency").

* Document: the source path relative to the ingest base (POSIX separators), plus ``:record`` for JSON/JSONL
  records. Stable for its source; content decides added / unchanged / updated, not the id.
* Section: ``<doc_id>::s<path>`` where path is its ordinal position in the heading tree ("2.1").
* Chunk: ``<doc_id>#<para>#<n>`` (KAG §2.2.1 ``articleID#paraCode#idInPara``): para is the section path,
  n the chunk's position inside that section. These are the only ids that contain ``#``.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath


def _clean(part: str) -> str:
    # '#' is reserved for chunk ids; percent-encode it (and the escape itself) so ids stay reversible.
    return part.replace("%", "%25").replace("#", "%23")


def document_id(source: str | PurePosixPath, record: str | int | None = None) -> str:
    base = _clean(str(PurePosixPath(source)))
    if record is None:
        return base
    return f"{base}:{_clean(str(record))}"


def source_key(path: Path, root: Path, base: Path) -> str:
    """The path used in a document id. ``root`` is the path given to ``ingest``; ``base`` the ingest base
    (default: the working directory). Under ``base``: relative to it, so ``ingest docs`` and
    ``ingest docs/a.md`` name ``docs/a.md`` alike. Elsewhere: relative to the parent of ``root``, so
    ``/tmp/a/x.md`` ingested as ``/tmp/a`` is ``a/x.md`` whatever the working directory. Paths are compared
    as given (made absolute), then with symlinks resolved; the file name is the last resort."""
    for norm in (lambda p: Path(os.path.abspath(p)), lambda p: Path(p).resolve()):
        file = norm(path)
        for anchor in (norm(base), norm(root).parent):
            try:
                return file.relative_to(anchor).as_posix()
            except ValueError:
                continue
    return Path(path).name


def section_id(doc_id: str, path: str) -> str:
    return f"{doc_id}::s{path}"


def chunk_id(doc_id: str, para: str, n: int) -> str:
    return f"{doc_id}#{para}#{n}"


def split_chunk_id(cid: str) -> tuple[str, str, int]:
    """``(doc_id, para, n)`` of a chunk id (the inverse of :func:`chunk_id`)."""
    doc, para, n = cid.rsplit("#", 2)
    return doc, para, int(n)


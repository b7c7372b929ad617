"""JSON and JSONL records: one document per record (title / text / id fields from the settings)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from stratagraph.config import Settings
from stratagraph.ingest.loaders.text import (
    LoadError,
    Parsed,
    decode_with_warning,
    document,
    filename_metadata,
    str_title,
)
from stratagraph.schema import Block, LoadIssue, SourceDocument

_RECORD_LIST_KEYS = ("records", "data", "documents")


def _record_docs(
    file: Path,
    key: str,
    fmt: str,
    records: list[tuple[str, int, Any]],
    settings: Settings,
    warnings: list[str],
) -> Parsed:
    """One document per record; ``records`` holds (label for issues, index, value)."""
    docs: list[SourceDocument] = []
    issues: list[LoadIssue] = []
    file_meta = filename_metadata(file.name)
    tf, xf, idf = settings.json_title_field, settings.json_text_field, settings.json_id_field
    used: set[str] = set()
    for label, index, rec in records:
        if not isinstance(rec, dict):
            issues.append(LoadIssue(source=label, message=f"record is not a JSON object (got {type(rec).__name__})"))
            continue
        raw_text = rec.get(xf)
        if isinstance(raw_text, list) and all(isinstance(x, str) for x in raw_text):
            raw_text = "\n\n".join(raw_text)
        if not isinstance(raw_text, str) or not raw_text.strip():
            problem = "has no" if raw_text is None else "has an empty or non-text"
            issues.append(LoadIssue(source=label, message=f"record {problem} '{xf}' field"))
            continue
        rid_value = rec.get(idf)
        if isinstance(rid_value, (str, int)) and not isinstance(rid_value, bool) and str(rid_value).strip():
            rid = str(rid_value).strip()
        else:
            rid = str(index)
        if rid in used:
            issues.append(LoadIssue(source=label, message=f"duplicate record id '{rid}' (record skipped)"))
            continue
        used.add(rid)
        meta = dict(file_meta)
        for k, v in rec.items():
            if k in (tf, xf, idf) or v is None or not isinstance(v, (str, int, float, bool)):
                continue
            meta[str(k)] = v
        title = str_title(rec.get(tf)) or f"{file.stem} {rid}"
        text = raw_text.replace("\r\n", "\n").replace("\r", "\n")
        blocks = [Block(kind="paragraph", text=p.strip()) for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
        docs.append(document(key, fmt, title, blocks, meta, warnings, record=rid))
    if not docs and not issues:
        issues.append(LoadIssue(source=key, message="no records found"))
    return docs, issues


def parse_json(file: Path, key: str, data: bytes, settings: Settings) -> Parsed:
    text, warnings, issues = decode_with_warning(key, data)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    if isinstance(value, dict):
        for k in _RECORD_LIST_KEYS:
            if isinstance(value.get(k), list):
                value = value[k]
                break
        else:
            value = [value]
    if not isinstance(value, list):
        kind = type(value).__name__
        raise LoadError(f"unsupported JSON structure: expected records (a list or an object), got {kind}")
    records = [(f"{key}[{i}]", i, rec) for i, rec in enumerate(value)]
    docs, rec_issues = _record_docs(file, key, "json", records, settings, warnings)
    return docs, issues + rec_issues


def parse_jsonl(file: Path, key: str, data: bytes, settings: Settings) -> Parsed:
    text, warnings, issues = decode_with_warning(key, data)
    records: list[tuple[str, int, Any]] = []
    index = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        label = f"{key}:line {lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            issues.append(LoadIssue(source=label, message=f"invalid JSON: {exc.msg} (column {exc.colno})"))
            index += 1
            continue
        records.append((label, index, rec))
        index += 1
    docs, rec_issues = _record_docs(file, key, "jsonl", records, settings, warnings)
    return docs, issues + rec_issues

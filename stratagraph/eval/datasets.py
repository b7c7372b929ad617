"""Benchmark datasets: where they are, how they load, and the cached store each corpus is ingested into.
Only ``eval/`` reads gold titles, gold documents, answers or dataset names.

A dataset is a folder in one of two layouts:

* passages (``../shared/data``): ``corpus.jsonl`` (``title``, ``text``; a passage is identified by its title)
  and ``questions.jsonl`` (``id``, ``question``, ``answers``, ``gold_titles``);
* store (``eval generate``): ``questions.jsonl`` only (with ``gold_chunks`` and ``derivation``); its questions
  run against the current store, whose documents they were generated from;
* documents (``benchmarks/data``): ``docs/`` (files of any supported type, ingested with the dataset folder as
  the base, so a document's id is its path there, ``docs/report.md``) and ``questions.jsonl`` (``id``,
  ``question``, ``kind``, ``answers``, ``answer_type``, ``gold_docs`` as such paths, ``gold_sections`` as
  heading text).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from stratagraph.config import Settings
from stratagraph.schema import canonical_json


class DatasetError(ValueError):
    """A dataset that cannot be found or read (the message names it and the problem)."""


class Question(BaseModel):
    id: str
    question: str
    answers: list[str] = Field(default_factory=list)
    gold_titles: list[str] = Field(default_factory=list)
    gold_docs: list[str] = Field(default_factory=list)
    gold_sections: list[str] = Field(default_factory=list)
    gold_chunks: list[str] = Field(default_factory=list)  # generated sets: the chunks the answer is read from
    derivation: dict[str, Any] | None = None  # generated sets: where in the documents the answer stands
    type: str | None = None
    kind: str | None = None
    answer_type: str | None = None

    @property
    def gold(self) -> list[str]:
        """What a retrieved passage is matched against: gold document ids, else gold passage titles."""
        return self.gold_docs or self.gold_titles


class Dataset(BaseModel):
    name: str
    path: Path
    questions: list[Question]

    @property
    def documents(self) -> bool:
        """True for the documents layout (``docs/``) and for a set run on the current store, False for
        passages (``corpus.jsonl``)."""
        return not (self.path / "corpus.jsonl").is_file()

    @property
    def on_store(self) -> bool:
        """A folder with questions only (``eval generate``): its questions run against the current store."""
        return not (self.path / "corpus.jsonl").is_file() and not (self.path / "docs").is_dir()

    @property
    def corpus(self) -> Path:
        return self.path / "docs" if self.documents else self.path / "corpus.jsonl"


def data_dir() -> Path | None:
    """``$STRATAGRAPH_DATA_DIR``, else ``../shared/data`` (from the working directory) when it exists."""
    env = os.environ.get("STRATAGRAPH_DATA_DIR")
    if env:
        return Path(env)
    default = Path.cwd().parent / "shared" / "data"
    return default if default.is_dir() else None


def resolve(name_or_path: str) -> Path:
    """A dataset folder by name (under :func:`data_dir`) or by path."""
    direct = Path(name_or_path).expanduser()
    if direct.is_dir():
        return direct
    root = data_dir()
    if root is not None and (root / name_or_path).is_dir():
        return root / name_or_path
    where = f"under {root}" if root is not None else "($STRATAGRAPH_DATA_DIR is not set and ../shared/data is absent)"
    raise DatasetError(f"dataset {name_or_path!r} not found: not a folder, and not a dataset {where}")


def load_dataset(name_or_path: str, limit: int | None = None) -> Dataset:
    path = resolve(name_or_path)
    qfile = path / "questions.jsonl"
    if not qfile.is_file():
        raise DatasetError(f"{qfile}: missing (a dataset folder holds questions.jsonl)")
    questions: list[Question] = []
    with qfile.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                questions.append(Question.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValueError) as exc:
                raise DatasetError(f"{qfile}:line {n}: {exc}") from exc
            if limit is not None and len(questions) >= limit:
                break
    if not questions:
        raise DatasetError(f"{qfile}: no questions")
    return Dataset(name=path.name, path=path, questions=questions)


def corpus_hash(corpus: Path) -> str:
    """The sha256 of a corpus file, or of a folder's files (their relative paths and contents, in order)."""
    digest = hashlib.sha256()
    files = sorted(p for p in corpus.rglob("*") if p.is_file()) if corpus.is_dir() else [corpus]
    for f in files:
        if corpus.is_dir():
            digest.update(f.relative_to(corpus).as_posix().encode() + b"\0")
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def store_settings(dataset: Dataset, settings: Settings) -> Settings:
    """Settings of the store the corpus is ingested into: under ``<store>/eval/``, keyed by the corpus
    hash and every setting that changes what ingestion produces."""
    key = hashlib.sha256(canonical_json(settings.settings_fingerprint()).encode()).hexdigest()[:10]
    home = Path(settings.home) / "eval" / f"{dataset.name}-{corpus_hash(dataset.corpus)[:12]}-{key}"
    return settings.model_copy(update={"home": home, "json_title_field": "title", "json_text_field": "text"})

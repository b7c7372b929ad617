"""Fixtures of the web page tests: a private copy of the examples store (the page writes threads into it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def page_store(examples_home: Path, tmp_path: Path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(examples_home, store, ignore=shutil.ignore_patterns("checkpoints.sqlite*"))
    return store

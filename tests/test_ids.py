"""Deterministic ids: '#' only in chunk ids, paths relative to the base or to the argument's parent."""

from __future__ import annotations

from pathlib import Path

from stratagraph import ids


def test_hash_sign_in_a_path_is_escaped_so_only_chunk_ids_hold_it() -> None:
    doc = ids.document_id("notes/c#-tips%.md", record=7)
    assert doc == "notes/c%23-tips%25.md:7" and "#" not in doc
    assert "#" not in ids.section_id(doc, "1.2")
    cid = ids.chunk_id(doc, "1.2", 3)
    assert cid.count("#") == 2 and ids.split_chunk_id(cid) == (doc, "1.2", 3)


def test_source_key_under_base_and_outside(tmp_path: Path) -> None:
    base = tmp_path / "project"
    (base / "docs").mkdir(parents=True)
    inside = base / "docs" / "a.md"
    outside_root = tmp_path / "elsewhere" / "batch"
    outside_root.mkdir(parents=True)
    outside = outside_root / "sub" / "b.md"
    assert ids.source_key(inside, root=base / "docs", base=base) == "docs/a.md"
    assert ids.source_key(inside, root=inside, base=base) == "docs/a.md"  # same id, file or folder given
    assert ids.source_key(outside, root=outside_root, base=base) == "batch/sub/b.md"
    assert ids.source_key(outside, root=outside, base=base) == "b.md"


def test_source_key_through_a_symlinked_folder(tmp_path: Path) -> None:
    real = tmp_path / "real" / "docs"
    real.mkdir(parents=True)
    (real / "a.md").write_text("x", "utf-8")
    base = tmp_path / "project"
    base.mkdir()
    link = base / "docs"
    link.symlink_to(real, target_is_directory=True)
    # under the base by the path as given, although the file really lies elsewhere
    assert ids.source_key(link / "a.md", root=link, base=base) == "docs/a.md"
    # a symlinked file given on its own is named by its link
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "b.md").symlink_to(real / "a.md")
    assert ids.source_key(other / "b.md", root=other / "b.md", base=base) == "b.md"

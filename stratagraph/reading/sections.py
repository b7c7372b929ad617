"""Questions answered by a heading (BAG-RAG's section tree): "which section explains ...", "under which
program is ... budgeted", "which division's part of the plan covers ...".

1. The sentence (or table row) that answers: the best-scored one about the question's names that holds most
   of its relation words other than the kind of section asked for; a sentence of a summary section
   (abstract, introduction, conclusion) weighs less, since it restates the section that explains, and a
   negated one much less ("X is not funded here"); of a question of several sentences, the words of the one
   that asks (the others set the scene: "Snow clearing isn't paid for out of the police budget. Which division
   carries the snow and ice removal line?").
2. The heading on its section path at the level the question asks for:

   * "section", "part", "chapter"...: its own section's heading;
   * a kind of unit ("program", "division", "facility"): the subsection of a heading that groups by that noun
     ("Expenditure by Division"), else the heading of its path whose last word is that noun;
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
from decimal import Decimal

from stratagraph.answers import Computation
from stratagraph.reading.frame import Frame, frame_of
from stratagraph.reading.result import Reading, not_found
from stratagraph.reading.sentences import Sentence
from stratagraph.reading.spans import MIN_ABOUT, about, relation
from stratagraph.reading.tables import TableCell, best_cell, cells_of, derived_columns, heading_text, period_pair
from stratagraph.reading.words import content_forms, forms, word_forms
from stratagraph.text.amounts import is_total_label
from stratagraph.text.lexicon import STRUCTURAL_NOUNS, SUMMARY_HEADINGS, SUPERLATIVE_MAX, SUPERLATIVE_MIN, UNIT_NOUNS
from stratagraph.text.question import AnswerType, last_sentence

__all__ = ["names_headings", "read_document", "read_section", "section_superlative", "unit_of_line"]

#: the least share of the question's relation words the answering sentence must hold (ours)
MIN_SECTION_RELATION = 0.5
#: what a sentence of a summary section (abstract, introduction...) weighs against the body's (ours)
SUMMARY_WEIGHT = 0.7
#: what a negated sentence weighs: it says where the thing is not (ours)
NEGATED_WEIGHT = 0.3


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
    for i, h in enumerate(path[:-1]):  # "Expenditure by Division": its subsections are the divisions
        words = heading_text(h).casefold().split()
        if len(words) >= 2 and words[-2] == "by" and forms(words[-1]) & noun:
            return path[i + 1]
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
    asking = last_sentence(frame.question)  # "X isn't paid for out of the police budget. Which division carries X?":
    said = set(frame_of(asking).relation) if asking.strip() != frame.question.strip() else set(frame.relation)  # the ask
    own = [w for w in frame.relation if not (forms(w) & kind) and w not in STRUCTURAL_NOUNS and w in said]
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
        if s.parse is not None and any(t.dep_ == "neg" for t in s.parse):
            score *= NEGATED_WEIGHT  # "X is not funded here; it is carried in ...": not where X is
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


def unit_of_line(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """"Which department pays for contracted security?", "which operating unit's budget holds a leak detection
    line?" (an organisational unit asked, :data:`UNIT_NOUNS`, whose headings need not say the noun): when the
    sentence that holds the question is a budget line (a table row), the unit is its heading at the depth where
    a heading of the evidence ends with the noun ("1.1 Police Department": the departments are that level),
    else the innermost heading over the line (its table's own section); None when no row answers."""
    words = {w.lower() for w in frame.question.split()}
    if frame.focus not in UNIT_NOUNS or frame.type not in (AnswerType.THING, AnswerType.ORG) or frame.superlative or (
            words & (SUPERLATIVE_MAX | SUPERLATIVE_MIN)):  # fmt: skip
        return None  # "which program gets the largest share": a comparison of units, not where a line is
    best = _answering(frame, sents, under_heading=True)
    if best is None or not best[1].is_row:
        return None
    s = best[1]
    path = s.passage.section_path
    noun = forms(frame.focus)
    depths = {d for x in sents for d, h in enumerate(x.passage.section_path) if _last_word(h) & noun}
    depth = min(depths) if len(depths) == 1 and min(depths) < len(path) else len(path) - 1
    heading = path[depth]
    return Reading(kind="section", answer=heading_text(heading), citations=[s.quote()], type="section",
                   score=round(best[0], 4), reason=f"the {frame.focus} heading {heading!r} over the line that holds the question")  # fmt: skip


def read_document(frame: Frame, sents: Sequence[Sentence]) -> Reading:
    """"Which study / paper / report ...": the title of the document whose sentence answers (module
    docstring, rule 1), cited with that sentence."""
    best = _answering(frame, sents, under_heading=False)
    if best is None or not best[1].passage.title:
        return not_found(f"no sentence of a {frame.focus or 'document'} holds the question's words")
    s = best[1]
    return Reading(kind="section", answer=s.passage.title, citations=[s.quote()], type="document", score=round(best[0], 4),
                   reason=f"the title of the {frame.focus} whose sentence holds the question")  # fmt: skip


def section_superlative(frame: Frame, sents: Sequence[Sentence]) -> Reading | None:
    """"Which part of the Water Utility grows fastest", "which division gets the largest budget" (BAG-RAG
    §3.2's bottom-up aggregation: a section stands for its total row): over the sections with a total row
    under the heading the question names (every such section of the evidence when it names none), each
    section's total in the column asked, or its change between the two periods asked (as a share of the
    earlier amount when the question asks in percentage terms, "grows fastest in percentage terms"); the answer
    is the heading of the largest (smallest), cited with its total row. None when the question asks for no
    section, or fewer than two sections have a total."""
    if not frame.superlative or not (frame.type == AnswerType.SECTION or (
            frame.type in (AnswerType.THING, AnswerType.ORG) and names_headings(frame, sents))):  # fmt: skip
        return None
    cells = cells_of([s for s in sents if s.is_row and is_total_label(s.label) and s.passage.section_path])
    derived = derived_columns(cells)
    by_section: dict[tuple[str, ...], list[TableCell]] = {}
    for c in cells:
        by_section.setdefault(tuple(c.row.passage.section_path), []).append(c)
    under = _named_parent(frame, list(by_section))
    values: list[tuple[Decimal, tuple[str, ...], TableCell, str]] = []
    for path, row in by_section.items():
        if under is not None and not (len(path) > len(under) and path[: len(under)] == under):
            continue
        pair = period_pair(row, frame) if frame.change or frame.percent else None
        if pair is not None:
            old, new = pair
            if frame.percent:
                if old.figure.value == 0:
                    continue
                value = (new.figure.value - old.figure.value) / abs(old.figure.value) * 100
                how = f"({new.figure.quantity.raw} - {old.figure.quantity.raw}) / {old.figure.quantity.raw}"
            else:
                value, how = new.figure.value - old.figure.value, f"{new.figure.quantity.raw} - {old.figure.quantity.raw}"
            values.append((value, path, new, how))
            continue
        cell = best_cell(row, frame, derived)
        if cell is not None:
            values.append((cell.figure.value, path, cell, cell.figure.quantity.raw))
    if len(values) < 2:
        return None
    pick = max if frame.superlative == "max" else min
    value, path, cell, _ = pick(values, key=lambda v: v[0])
    label = heading_text(path[-1])
    comp = Computation(operation=frame.superlative, expression=f"{frame.superlative}(" + ", ".join(
        f"{heading_text(p[-1])}: {how}" for _, p, _, how in values) + ")",
        operands=[c.figure.operand() for _, _, c, _ in values], result=label)  # fmt: skip
    return Reading(kind="section", answer=label, citations=[cell.figure.citation], computed=comp, type="section", score=1.0,
                   reason=f"the {frame.superlative} of the totals of {len(values)} sections: {label}")  # fmt: skip


def _named_parent(frame: Frame, paths: Sequence[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The deepest heading path prefix whose last heading holds every word of one of the question's names
    ("the Water Utility": "2.2 Water Utility"), among the given paths; None when no heading holds a name."""
    best: tuple[str, ...] | None = None
    for path in paths:
        for depth in range(len(path)):
            words = word_forms(heading_text(path[depth]))
            if any(n.forms and all(w & words for w in n.forms) for n in frame.names):
                if best is None or depth + 1 > len(best):
                    best = path[: depth + 1]
    return best

"""BAG-RAG's bottom-up generation (§3.2, eq. 4) inside the sections the top-down screening kept, and the
arithmetic over the quantities it aggregates, done exactly in code.

``aggregate`` (eq. 4). The instance nodes ``F^i`` are the entities and facts of the kept sections' chunks
(:func:`stratagraph.retrieval.bottom_up.instance_graph`); Leiden communities partition them; a community's
relevance ``Rel(C, Q)`` is the cosine of the question and its facts' mean vector, and the communities
reaching ``tau_Q`` (relative to the best, floored) are gathered layer by layer up the kept section tree into
``Context(Q)``. Evidence: the kept chunks supporting the relevant communities' facts, fused by reciprocal
rank fusion with the kept sections' chunks and the dense list (as the ``bottom_up`` retriever does, but
inside the sections *this run's* screening kept, the chat model's when there is one).

``calculate``. Questions that ask for a sum, a difference, a ratio, a percentage change or a comparison
are answered by :func:`stratagraph.agents.compute.calculate` over typed quantities (Decimal values, scale
and unit normalised at ingestion), never by a model. The operands are quantities of the facts the
aggregation reaches (those of the kept sections' chunks and of the evidence chunks), each cited by a
verbatim quote: the row line of the chunk text for a table row ("Overtime; FY2024 Actual: 1,320; ..."),
else the sentence stating it.

* With a chat model (only when the question has an arithmetic cue, below): the model reads a numbered list
  of the candidate quantities (label, value as written, section) and answers ``{operation, operands}``
  (prompts ``calculate.system`` / ``calculate.user``); the code computes. "none" means no arithmetic is
  needed; an unusable reply (twice), or operands that do not fit the operation, fall back to the rule.
* Without one, a documented rule (:func:`plan_arithmetic`, :func:`choose_operands`, and rule 4):

  1. *The operation* from the question's wording: "difference between A and B" (the larger minus the
     smaller), "how much more / higher / larger ... A than B" (A - B; "less / lower / smaller / fewer":
     B - A), "by how much does A exceed B" (A - B), "change / increase / fall ... from A to B" (B - A;
     "percent change ... from A to B": the percentage change), "ratio of A to B" and "how many times ... A
     than B" (A / B), "total / combined / sum / together / altogether ... A and B (and C)" (the sum), and a
     choice "which is larger / smaller ..., A or B?" (the larger or smaller of the two: the option is the
     answer).
  2. *The slots* A, B, ...: the noun phrases the coordinator ("and", "or", "than", "to", "exceed", "plus",
     "minus", "versus") joins. The phrase after it is the one right after; the phrase before it is, among
     the noun phrases before it, the one sharing most words with the phrase after (nearest on a tie), so
     "the Fire Department spend on overtime than the Police Department" contrasts the two departments. A
     slot's *own words* are its content words that no other slot has (a slot with none: no plan).
  3. *The operands*: each quantity's context is the words of its document title, its section's heading
     path, its table row label and column header (a quantity stated in prose: the words around it). Slot
     i is filled by a quantity whose context holds at least :data:`SLOT_FIT` of slot i's own words (weighted,
     proper nouns and numbers count double); among the tuples so filled, the best is, in this order: the
     best mean slot fit, then operands that are *parallel* (table quantities that differ in exactly one of
     section, row and column: the same line item of two departments, two columns of one row, two rows of
     one table), then the most question words every operand's context holds, then the most question words
     some operand's context holds, then operands whose own row label (or words around them) the question
     names most, then table rows over prose, then non-total rows, then the latest period, then the facts'
     cosine to the question. Operands must share their unit. No tuple: rule 4, else no computation (the
     answer step extracts).
  4. *Without slots*, over the tables the aggregation reaches: a sum over a set of rows ("every electricity
     line", "the two plants' electricity": :func:`set_sum`), a superlative over one table's rows ("which
     line item grows the most": :func:`table_superlative`, the answer the row label) or one table cell the
     question names (a number lookup, :func:`table_lookup`, the answer the cell as written). A column that
     restates two others of its row (a "Change" column, found from the values: :func:`mark_derived`) is an
     operand only for a question about a change; a question that names no period asks about the latest
     column.

Hierarchy questions (with and without a chat model): "which section / part / chapter ... ?", or "which
<noun> ... ?" where the noun is the last word of headings of the section tree ("which program": "Main
Replacement Program"; :func:`hierarchy_question`). The answer is the heading (its numbering left out) of
the section holding the evidence sentence that holds most of the question's other content words (at least
:data:`~stratagraph.agents.extract.MIN_RELEVANCE` of them), at the depth of the headings that name the noun,
cited with that sentence (:func:`locate`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.answer import answer_from_evidence, number_text
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.compute import Amount, calculate
from stratagraph.agents.extract import (
    MIN_RELEVANCE,
    RANK_DISCOUNT,
    AnswerType,
    citation,
    question_shape,
    relevance,
    sentences,
)
from stratagraph.agents.spans import extractive_answer
from stratagraph.answers import Answer, Citation, Computation
from stratagraph.prompts import load_prompt
from stratagraph.retrieval import bottom_up, top_down
from stratagraph.retrieval.base import Evidence, Scored, rrf
from stratagraph.retrieval.bottom_up import BottomUpParams, Community, ScoredFact
from stratagraph.retrieval.calibration import cosine_floors
from stratagraph.text.nlp import load_nlp
from stratagraph.text.question import QUESTION_WORDS

__all__ = [
    "SLOT_FIT",
    "ArithmeticReply",
    "Plan",
    "Quantity",
    "aggregate",
    "calculate_node",
    "choose_operands",
    "hierarchy_question",
    "locate",
    "plan_arithmetic",
]

#: the least weighted share of a slot's own words a quantity's context must hold to fill the slot (ours)
SLOT_FIT = 0.66
#: candidate quantities per slot tried in combination (ours: bounds the search at 12^n tuples)
PER_SLOT = 12
#: candidate quantities the chat model is shown (ours: bounds the prompt)
LLM_QUANTITIES = 40
#: chunks of the fused ranking whose quantities join the kept sections' as candidate operands (ours)
POOL_DEPTH = 30
#: communities and facts written into Context(Q) for the chat model (ours)
CONTEXT_COMMUNITIES, CONTEXT_FACTS = 8, 8


# ------------------------------------------------------------------------------------------ aggregate (eq. 4)
@agent_node("aggregate")
def aggregate(state: dict, step: Step) -> dict:
    """BAG-RAG eq. 4: communities of the instance nodes under the kept sections, the relevant ones gathered
    layer by layer up the section tree; the chunks supporting them as evidence."""
    ctx = step.ctx
    question = step.question
    index = top_down.section_index(ctx)
    kept_ids = [s for s in state.get("kept_sections") or [] if s in index.pos]
    kept = {index.pos[s] for s in kept_ids}
    chunks = [index.chunk_ids[j] for s in sorted(kept) for j in index.own_chunks[s]]
    params = BottomUpParams(tau_q_floor=cosine_floors(ctx).community)
    qvec = ctx.query_vector(question)

    def communities_of(**_: Any) -> tuple[Any, list[Any], list[bottom_up.ScoredCommunity], float]:
        graph = bottom_up.instance_graph(bottom_up.instance_index(ctx), chunks)
        found = bottom_up.detect_communities(graph, params.seed, params.resolution)
        vectors = bottom_up.fact_vectors(ctx, sorted(graph.facts))
        survivors, tau = bottom_up.relevant(bottom_up.score_communities(found, graph.facts, vectors, qvec), params)
        return graph, found, survivors, tau

    graph, found, survivors, tau = step.call(
        "bottom_up.communities",
        communities_of,
        summary=lambda r: f"{len(r[0].nodes)} instance nodes, {len(r[1])} communities, {len(r[2])} relevant",
        kept_sections=len(kept_ids),
    )
    facts = _fact_texts(step, [f for c in survivors for f in c.facts])
    communities = [_community(index, graph, c, kept, facts) for c in survivors]
    layers = bottom_up.aggregate(index, communities, kept)

    qs = top_down.query_scores(index, qvec, ctx.allowed_docs(step.filters))
    depth = max(params.depth, step.k)
    structural = top_down.structural_ranking(index, qs, kept_ids, depth)
    dense = ctx.chunk_scores(question, depth, step.filters)
    ranking = bottom_up.evidence_ranking(graph, survivors, depth)
    screened = rrf([[h.id for h in structural], [h.id for h in dense]])
    fused = rrf([[h.id for h in ranking], [h.id for h in screened]])
    evidence = ctx.evidence(fused, step.k, step.filters)

    step.decide(
        f"{len(graph.nodes)} instance nodes under {len(kept_ids)} kept sections, {len(found)} communities, "
        f"{len(communities)} reach tau_Q {tau:.3f}; {len(evidence)} evidence chunks"
    )
    return {
        "evidence": evidence,
        "communities": [c.model_dump() for c in communities],
        "layers": [lv.model_dump() for lv in layers],
        "instance_chunks": list(dict.fromkeys([*chunks, *(h.id for h in fused[:POOL_DEPTH])])),
        "aggregated": context_text(communities),
    }


def _fact_texts(step: Step, fact_ids: Sequence[str]) -> dict[str, str]:
    from stratagraph.tools.knowledge import fact_details

    details = fact_details(step.ctx, list(dict.fromkeys(fact_ids)))
    return {f: str(info.node.props.get("description") or "") for f, info in details.items()}


def _community(index: Any, graph: Any, c: Any, kept: set[int], facts: dict[str, str]) -> Community:
    home = bottom_up.home_section(index, sorted({ch for m in c.members for ch in graph.chunks_of.get(m, [])}), kept)
    ordered = sorted(c.facts, key=lambda f: (-round(c.facts[f], 12), f))
    return Community(
        id=bottom_up.community_id(c.members),
        section=index.ids[home] if home is not None else None,
        title=index.titles[home] if home is not None else "",
        doc_id=index.doc_ids[home] if home is not None else None,
        depth=int(index.depth[home]) if home is not None else 0,
        score=round(c.score, 6),
        size=len(c.members),
        members=[],
        facts=[ScoredFact(id=f, description=facts.get(f, ""), score=round(c.facts[f], 6)) for f in ordered],
    )


def context_text(communities: Sequence[Community]) -> str:
    """``Context(Q)`` as the chat model reads it: the relevant communities' facts, by community."""
    if not communities:
        return ""
    lines = ["Aggregated context (communities of related facts in the relevant sections, most relevant first):"]
    for c in list(communities)[:CONTEXT_COMMUNITIES]:
        lines.append(f"- {c.title or 'across sections'} (relevance {c.score:.2f}):")
        lines += [f"    {f.description}" for f in c.facts[:CONTEXT_FACTS] if f.description]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ words
_OP_WORDS = frozenset(
    """total combined combine sum together altogether aggregate add difference differ more less fewer
    higher lower larger smaller bigger greater exceed gap minus plus change increase decrease grow rise
    fall drop decline ratio percent percentage time times much many amount value figure number between
    versus vs compare compared than""".split()
)  # fmt: skip
_BOUNDARY_POS = frozenset({"VERB", "AUX", "ADP", "SCONJ", "CCONJ", "PRON", "PUNCT", "SYM", "INTJ"})
_NOUNISH = frozenset({"NOUN", "PROPN", "NUM"})


@dataclass(frozen=True)
class Word:
    """A content word: its lowercase form and lemma (either may match), and its weight."""

    forms: frozenset[str]
    weight: float


_FISCAL = re.compile(r"^fy\s?'?(\d{2}|\d{4})$")
#: ordinals are stop words to spaCy, but tell quarters, years and items apart
_ORDINALS = frozenset("first second third fourth fifth sixth seventh eighth ninth tenth".split())


def _forms(tok: Any) -> frozenset[str]:
    """A token's lowercase form and lemma ("FY2025" also gives the year "2025"; "FY25" too)."""
    forms = {tok.lower_, tok.lemma_.lower()}
    m = _FISCAL.match(tok.lower_)
    if m:
        forms.add(m.group(1) if len(m.group(1)) == 4 else "20" + m.group(1))
    return frozenset(forms)


def _content(tokens: Iterable[Any], ops: bool = True, keep: frozenset[str] = frozenset()) -> list[Word]:
    """Content words (no stop words, question words, nor with ``ops`` the words of arithmetic, but ``keep``)."""
    out: dict[frozenset[str], Word] = {}
    for t in tokens:
        if t.is_punct or t.is_space or not any(ch.isalnum() for ch in t.text):
            continue
        low = t.lower_
        if (t.is_stop and low not in _ORDINALS) or low in QUESTION_WORDS:
            continue
        if ops and (t.lemma_.lower() in _OP_WORDS or low in _OP_WORDS) and not _forms(t) & keep:
            continue
        w = Word(_forms(t), 2.0 if t.pos_ in ("PROPN", "NUM") or t.like_num else 1.0)
        out[w.forms] = w
    return list(out.values())


@lru_cache(maxsize=8192)
def local_words(text: str) -> tuple[frozenset[str], ...]:
    """The content words of a text (stop words, punctuation and numbers left out), each as its forms."""
    if not text:
        return ()
    return tuple(_forms(t) for t in load_nlp()(text) if not (t.is_stop or t.is_punct or t.like_num or t.is_space)
                 and any(ch.isalpha() for ch in t.text))  # fmt: skip


@lru_cache(maxsize=8192)
def word_forms(text: str) -> frozenset[str]:
    """Every lowercase form and lemma of a text's words (what a quantity's context is matched on)."""
    if not text:
        return frozenset()
    return frozenset(f for t in load_nlp()(text) if not t.is_punct for f in _forms(t))


def _holds(words: Sequence[Word], forms: frozenset[str]) -> float:
    """Weighted share of ``words`` whose forms meet ``forms``."""
    total = sum(w.weight for w in words)
    return sum(w.weight for w in words if w.forms & forms) / total if total else 0.0


# ------------------------------------------------------------------------------------------ the plan
Operation = Literal["sum", "difference", "ratio", "percent_change", "max", "min"]


@dataclass
class Slot:
    text: str
    words: list[Word]
    own: list[Word] = field(default_factory=list)


@dataclass
class Plan:
    """What arithmetic a question asks for, over which slots."""

    operation: Operation
    slots: list[Slot]
    shared: list[Word]  # the question's content words that are no slot's own
    absolute: bool = False  # a difference "between": the larger minus the smaller
    choice: bool = False  # the answer is the option chosen, not a number

    def describe(self) -> str:
        return f"{self.operation} of " + " | ".join(s.text for s in self.slots)


_CUE = re.compile(
    r"\b(total|combined|sum|together|altogether|in all|add(?:ed)? up|difference|differ|how (?:much|many) "
    r"(?:more|less|fewer|higher|lower|larger|smaller|bigger|greater)|exceed\w*|more than|less than|change|"
    r"increase|decrease|grow|grew|rise|rose|fall|fell|drop|decline|ratio|times|percent|percentage|larger|"
    r"smaller|higher|lower|bigger|greater|more|less|fewer)\b",
    re.IGNORECASE,
)
_MORE = frozenset("more higher larger bigger greater longer taller most highest largest biggest greatest".split())
_LESS = frozenset("less lower smaller fewer shorter least lowest smallest fewest".split())


def has_arithmetic_cue(question: str) -> bool:
    """Whether the question's wording may ask for arithmetic or a comparison (when the chat model is asked)."""
    return bool(_CUE.search(question))


def plan_arithmetic(question: str) -> Plan | None:
    """The operation and slots the question asks for (module docstring, rule 1-2); None for a question that
    asks for no arithmetic, or whose slots cannot be told apart."""
    low = question.lower()
    shape = question_shape(question)
    doc = load_nlp()(question)
    words = {t.lower_ for t in doc}
    if shape.type == AnswerType.CHOICE and len(shape.options) == 2:
        direction = "max" if words & _MORE else "min" if words & _LESS else None
        if direction is None:
            return None
        slots = [_slot_of_text(o) for o in shape.options]
        return _plan(doc, direction, slots, choice=True)  # type: ignore[arg-type]
    if shape.type not in (AnswerType.NUMBER, AnswerType.THING):
        return None
    m_from = re.search(r"\bfrom\b", low) and re.search(r"\bto\b", low)
    if (
        re.search(r"\bpercent(?:age)? (?:change|increase|decrease|growth|rise|fall|drop)\b|\bby what percent", low)
        and m_from
    ):
        return _plan(doc, "percent_change", _pair(doc, "to"))
    if re.search(r"\bratio of\b", low):
        return _plan(doc, "ratio", _pair(doc, "to", opener="of") or _pair(doc, "and"))
    if re.search(r"\bhow many times\b", low):
        return _plan(doc, "ratio", _pair(doc, "than"))
    if re.search(r"\bdifference\b|\bdiffer\b", low):
        return _plan(doc, "difference", _pair(doc, "and"), absolute=True)
    more = re.search(r"\bhow (?:much|many) (more|less|fewer|higher|lower|larger|smaller|bigger|greater)\b", low)
    if more and re.search(r"\bthan\b", low):
        pair = _pair(doc, "than")
        if pair is not None and more.group(1) in _LESS:
            pair = [pair[1], pair[0]]
        return _plan(doc, "difference", pair)
    if re.search(r"\bexceed", low):
        return _plan(doc, "difference", _pair(doc, "exceed"))
    if (
        re.search(
            r"\b(change|changed|increase|increased|decrease|decreased|grow|grew|rise|rose|fall|fell|drop|dropped|decline|declined)\b",
            low,
        )
        and m_from
    ):
        pair = _pair(doc, "to")
        return _plan(doc, "difference", [pair[1], pair[0]] if pair else None)  # to minus from
    if re.search(r"\b(total|combined|sum|together|altogether|in all|add(?:ed)? up|aggregate)\b", low):
        return _plan(doc, "sum", _conjuncts(doc))
    return None


def _plan(
    doc: Any, operation: Operation, slots: list[Slot] | None, absolute: bool = False, choice: bool = False
) -> Plan | None:
    if not slots or len(slots) < 2:
        return None
    for s in slots:
        others = {f for o in slots if o is not s for w in o.words for f in w.forms}
        s.own = [w for w in s.words if not (w.forms & others)]
        if not s.own:
            return None
    own = {w.forms for s in slots for w in s.own}
    shared = [w for w in _content(doc) if w.forms not in own and not any(w.forms & o for o in own)]
    return Plan(operation=operation, slots=slots, shared=shared, absolute=absolute, choice=choice)


def _slot_of_text(text: str) -> Slot:
    return Slot(text=text, words=_content(load_nlp()(text), keep=_SLOT_KEEP))


def _spans(doc: Any, start: int, end: int) -> list[tuple[int, int]]:
    """Maximal runs of non-boundary tokens in ``doc[start:end]`` holding a noun, proper noun or number."""
    out: list[tuple[int, int]] = []
    i = start
    while i < end:
        if _is_boundary(doc[i]):
            i += 1
            continue
        j = i
        while j < end and not _is_boundary(doc[j]):
            j += 1
        if any(doc[t].pos_ in _NOUNISH for t in range(i, j)):
            out.append((i, j))
        i = j
    return out


def _is_boundary(tok: Any) -> bool:
    if tok.pos_ == "VERB" and (tok.dep_ in ("amod", "compound", "nmod") or tok.tag_ == "VBN"):
        return False  # "the adopted budget", "FY2025 Adopted"
    if tok.pos_ == "PART" and tok.lower_ in ("'s", "’s"):
        return False
    return tok.pos_ in _BOUNDARY_POS or tok.lower_ in QUESTION_WORDS


_SLOT_KEEP = frozenset({"total"})  # a word of arithmetic that names a line item when a slot holds it


def _slot(doc: Any, span: tuple[int, int]) -> Slot:
    return Slot(text=doc[span[0] : span[1]].text, words=_content(doc[span[0] : span[1]], keep=_SLOT_KEEP))


def _coordinators(doc: Any, word: str) -> list[int]:
    return [t.i for t in doc if t.lower_ == word or (word == "exceed" and t.lemma_.lower() == "exceed")]


def _pair(doc: Any, word: str, opener: str = "from") -> list[Slot] | None:
    """The two phrases a coordinator joins (module docstring, rule 2); for "to", the phrase after a
    preceding ``opener`` ("from A to B", "the ratio of A to B") is the first."""
    for c in _coordinators(doc, word):
        after = _spans(doc, c + 1, len(doc))
        if not after:
            continue
        right = after[0]
        if word == "to":
            froms = [t.i for t in doc if t.lower_ == opener and t.i < c]
            if not froms:
                continue
            before = _spans(doc, froms[-1] + 1, c)
            if not before:
                continue
            left = before[0]
        else:
            before = _spans(doc, 0, c)
            if not before:
                continue
            left = _most_alike(doc, before, right)
        return [_slot(doc, left), _slot(doc, right)]
    return None


def _most_alike(doc: Any, spans: list[tuple[int, int]], other: tuple[int, int]) -> tuple[int, int]:
    """Among ``spans``, the one sharing the most words with ``other`` (the nearest on a tie)."""
    theirs = {f for t in doc[other[0] : other[1]] if not t.is_stop for f in _forms(t)}

    def shared(span: tuple[int, int]) -> int:
        return sum(1 for t in doc[span[0] : span[1]] if not t.is_stop and _forms(t) & theirs)

    return max(reversed(spans), key=shared)


def _conjuncts(doc: Any) -> list[Slot] | None:
    """The phrases joined by "and" / "plus" (with a list "A, B and C" before them)."""
    for word in ("and", "plus"):
        for c in _coordinators(doc, word):
            pair = _pair(doc, word)
            if pair is None:
                continue
            after = _spans(doc, c + 1, len(doc))
            before = _spans(doc, 0, c)
            left = _most_alike(doc, before, after[0])
            slots = [_slot(doc, left), _slot(doc, after[0])]
            k = before.index(left)
            while k > 0 and doc[before[k][0] - 1].text == "," and before[k - 1][1] == before[k][0] - 1:
                k -= 1
                slots.insert(0, _slot(doc, before[k]))
            return slots
    return None


# ------------------------------------------------------------------------------------------ quantities
@dataclass
class Quantity:
    """A typed quantity of a fact, with what it measures and where it is stated."""

    fact_id: str
    value: Decimal
    raw: str
    unit: str | None
    scale: int
    currency: str | None
    row: str  # a table row's label; a prose quantity's fact description
    column: str  # a table column's header ("" in prose)
    is_total: bool
    evidence: Evidence
    quote: str
    forms: frozenset[str]  # its context's words (document title, heading path, row label, column)
    local: tuple[frozenset[str], ...] = ()  # what it measures: its row label's words, or the words around it
    score: float = 0.0  # the fact's cosine to the question
    section_score: float = 0.0  # the best cosine to the question of its section's own chunks
    derived: bool = False  # a table column computed from two others of its row (a change, a difference)

    def precision(self, asked: frozenset[str]) -> float:
        """The share of what it measures that the question names."""
        return sum(1 for w in self.local if w & asked) / len(self.local) if self.local else 0.0

    @property
    def table(self) -> bool:
        return bool(self.column)

    @property
    def label(self) -> str:
        where = self.evidence.section_path[-1] if self.evidence.section_path else self.evidence.title
        what = f"{self.row} | {self.column}" if self.table else self.row
        return f"{where}: {what}"

    def amount(self) -> Amount:
        cite = Citation(doc_id=self.evidence.doc_id, source=self.evidence.source, section=self.evidence.section,
                        chunk_id=self.evidence.chunk_id, quote=self.quote)  # fmt: skip
        return Amount(value=self.value, label=self.label, raw=self.raw, citation=cite, unit=self.unit)


def quantities(step: Step, chunk_ids: Sequence[str]) -> list[Quantity]:
    """The typed quantities of the facts the given chunks support, each with its quote (module docstring)."""
    from stratagraph.tools.knowledge import fact_details

    ctx = step.ctx
    inst = bottom_up.instance_index(ctx)
    fact_ids = list(dict.fromkeys(f for c in dict.fromkeys(chunk_ids) for f in inst.chunk_facts(c)))
    details = fact_details(ctx, fact_ids)
    with_numbers = {f: d for f, d in details.items() if d.node.props.get("quantities")}
    wanted = set(chunk_ids)
    home = {f: next((c for c in d.chunk_ids if c in wanted), d.chunk_ids[0] if d.chunk_ids else None)
            for f, d in with_numbers.items()}  # fmt: skip
    chunk_list = sorted({c for c in home.values() if c})
    evidence = {e.chunk_id: e for e in ctx.evidence([Scored(id=c, score=1.0) for c in chunk_list])}
    vectors = bottom_up.fact_vectors(ctx, sorted(with_numbers))
    q = ctx.query_vector(step.question)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    index = top_down.section_index(ctx)
    cosines = top_down.query_scores(index, q, None).chunk
    section_cos = {s: max((float(cosines[j]) for j in index.own_chunks[index.pos[s]]), default=0.0)
                   for s in {e.section_id for e in evidence.values()} if s in index.pos}  # fmt: skip
    out: list[Quantity] = []
    for f in sorted(with_numbers):
        e = evidence.get(home[f] or "")
        if e is None:
            continue
        props = with_numbers[f].node.props
        description = str(props.get("description") or "")
        cos = float(vectors[f] @ q) if f in vectors else 0.0
        for qty in props.get("quantities") or []:
            made = _quantity(f, qty, description, e, cos)
            if made is not None:
                made.section_score = section_cos.get(e.section_id, 0.0)
                out.append(made)
    mark_derived(out)
    return out


def mark_derived(pool: Sequence[Quantity]) -> None:
    """Flag the table columns whose every value is the difference, or the percentage change, of two columns
    before it in its row (a "Change" column): they restate other cells, and are operands only for a
    question about a change."""
    tables: dict[str, dict[str, dict[str, Quantity]]] = {}
    for q in pool:
        if q.table:
            tables.setdefault(q.evidence.chunk_id, {}).setdefault(q.row, {})[q.column] = q
    for rows in tables.values():
        columns = list(dict.fromkeys(c for cells in rows.values() for c in cells))
        for c in columns:
            full = [cells for cells in rows.values() if c in cells and len(cells) > 2]
            if len(full) < 2:
                continue
            for a, b in itertools.permutations(columns[: columns.index(c)], 2):
                if all(a in cells and b in cells and _derives(cells[c], cells[a], cells[b]) for cells in full):
                    for cells in full:
                        cells[c].derived = True
                    break


def _derives(c: Quantity, a: Quantity, b: Quantity) -> bool:
    """Whether ``c`` states ``a - b`` as written ("560" from "15,420" and "14,860"; "1.5 pts" from "68.4%" and
    "66.9%"), or the percentage change from ``b`` to ``a`` as rounded as written ("9%")."""
    rc, ra, rb = parse_plain(c.raw), parse_plain(a.raw), parse_plain(b.raw)
    if rc is None or ra is None or rb is None:
        return False
    if rc == ra - rb:
        return True
    if c.raw.strip().endswith("%") and not a.raw.strip().endswith("%") and rb != 0:
        places = len(c.raw.split(".")[1].rstrip("%").strip()) if "." in c.raw else 0
        change = (ra - rb) / abs(rb) * 100
        return abs(change - rc) <= Decimal(5) / Decimal(10) ** (places + 1) + Decimal("0.0001")
    return False


def parse_plain(raw: str) -> Decimal | None:
    """A number as written ("8%", "(150)", "1.5 pts") as a Decimal, or None."""
    m = re.search(r"-?\(?\d[\d,]*(?:\.\d+)?\)?", raw)
    if not m:
        return None
    text = m.group(0)
    negative = text.startswith(("-", "("))
    try:
        value = Decimal(text.strip("-()").replace(",", ""))
    except InvalidOperation:
        return None
    return -value if negative else value


def _quantity(fact_id: str, qty: dict[str, Any], description: str, e: Evidence, cos: float) -> Quantity | None:
    try:
        value = Decimal(str(qty.get("value")))
    except (InvalidOperation, ValueError):
        return None
    raw = str(qty.get("raw") or "")
    label = str(qty.get("label") or "")
    context = [e.title, *e.section_path]
    if label:
        row, _, column = label.partition(" | ")
        quote = _row_line(e.text, row, raw)
        context += [row, column]
        local = local_words(row)
    else:
        row, column = description, ""
        quote = _sentence_with(e, raw, description)
        context.append(_around(description, raw))
        local = local_words(_around(description, raw))
    if not quote:
        return None
    forms = frozenset().union(*(word_forms(t) for t in context if t))
    return Quantity(fact_id=fact_id, value=value, raw=raw, unit=qty.get("unit"), scale=int(qty.get("scale") or 1),
                    currency=qty.get("currency"), row=row.strip(), column=column.strip(),
                    is_total=bool(qty.get("is_total")) or row.strip().lower().startswith("total"), evidence=e,
                    quote=quote, forms=forms, local=local, score=cos)  # fmt: skip


def _row_line(text: str, row: str, raw: str) -> str:
    """The stored table row line ("Label; Header: value; ...") of the chunk text that holds the value."""
    for line in text.split("\n"):
        if line.split(";", 1)[0].strip() == row.strip() and raw in line:
            return line.rstrip()
    return ""


def _sentence_with(e: Evidence, raw: str, description: str) -> str:
    """The sentence of the chunk that states the value (the one sharing most words with the fact)."""
    holding = [s for s in sentences([e]) if raw and raw in s.text]
    if not holding:
        return ""
    want = set(re.findall(r"\w+", description.lower()))
    return max(holding, key=lambda s: (len(want & set(re.findall(r"\w+", s.text.lower()))), -s.start)).text


def _around(description: str, raw: str, before: int = 8, after: int = 4) -> str:
    """The words of a prose fact near its value (what that value measures)."""
    at = description.find(raw) if raw else -1
    if at < 0:
        return description
    head = description[:at].split()[-before:]
    tail = description[at + len(raw) :].split()[:after]
    return " ".join([*head, *tail])


# ------------------------------------------------------------------------------------------ choosing operands
def choose_operands(plan: Plan, pool: Sequence[Quantity], question: str) -> list[Quantity] | None:
    """The best tuple of quantities for the plan's slots (module docstring, rule 3); None when a slot has no
    quantity that fits."""
    asked = word_forms(question)
    per_slot: list[list[tuple[float, Quantity]]] = []
    if not (_CHANGE_WORDS & word_forms(" ".join(s.text for s in plan.slots))):
        pool = [q for q in pool if not q.derived]
    for s in plan.slots:
        fits = [(_holds(s.own, q.forms), q) for q in pool]
        fits = [(f, q) for f, q in fits if f >= SLOT_FIT]
        if not fits:
            return None
        fits.sort(
            key=lambda p: (
                -p[0],
                -_holds(plan.shared, p[1].forms),
                not p[1].table,
                p[1].is_total,
                -recency(p[1]),
                -p[1].score,
            )
        )
        per_slot.append(fits[:PER_SLOT])
    best: tuple[tuple[float, ...], list[Quantity]] | None = None
    for combo in itertools.product(*per_slot):
        qs = [q for _, q in combo]
        if len({id(q) for q in qs}) < len(qs) or len({q.fact_id + q.raw for q in qs}) < len(qs):
            continue
        if len({q.unit for q in qs}) > 1:
            continue
        fit = sum(f for f, _ in combo) / len(combo)
        common = _holds(plan.shared, frozenset.intersection(*(q.forms for q in qs))) if plan.shared else 0.0
        anywhere = _holds(plan.shared, frozenset.union(*(q.forms for q in qs))) if plan.shared else 0.0
        named = sum(q.precision(asked) for q in qs) / len(qs)
        key = (round(fit, 6), float(_parallel(qs)), round(common, 6), round(anywhere, 6), round(named, 6),
               float(sum(q.table for q in qs)), -float(sum(q.is_total for q in qs)), float(sum(recency(q) for q in qs)),
               round(sum(q.score for q in qs), 6))  # fmt: skip
        if best is None or key > best[0]:
            best = (key, qs)
    return best[1] if best else None


def _parallel(qs: Sequence[Quantity]) -> bool:
    """Table quantities that differ in exactly one of section, row and column."""
    if not all(q.table for q in qs):
        return False
    dims = [
        len({q.evidence.section_id for q in qs}) > 1,
        len({q.row.lower() for q in qs}) > 1,
        len({q.column.lower() for q in qs}) > 1,
    ]
    return sum(dims) == 1


def compute(plan: Plan, operands: Sequence[Quantity]) -> tuple[Computation, str]:
    """The computation over the chosen operands and the answer text."""
    amounts = [q.amount() for q in operands]
    if plan.operation == "difference" and plan.absolute and amounts[0].value < amounts[1].value:
        amounts = [amounts[1], amounts[0]]
    if plan.operation in ("max", "min"):
        comp = calculate(plan.operation, amounts)
        pick = next(i for i, a in enumerate(amounts) if a.value == comp.result)
        chosen = plan.slots[pick].text.strip() if plan.choice else operands[pick].row
        chosen = re.sub(r"^(?:the|a|an)\s+", "", chosen, flags=re.IGNORECASE) if plan.choice else chosen
        comp = comp.model_copy(update={"operation": f"compare ({plan.operation})", "result": chosen})
        return comp, chosen
    comp = calculate(plan.operation, amounts)
    return comp, render(comp, operands)


_SCALE_WORDS = {1000: "thousand", 1_000_000: "million", 1_000_000_000: "billion"}
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def render(comp: Computation, operands: Sequence[Quantity]) -> str:
    """The result as the documents state their numbers: in their common scale ("$2,820 thousand" for tables
    in thousands of dollars), else in full with its unit."""
    result = comp.result
    if not isinstance(result, Decimal):
        return str(result)
    if comp.operation in ("ratio",):
        return number_text(result.quantize(Decimal("0.0001")).normalize())
    if comp.operation == "percent_change":
        return number_text(result.quantize(Decimal("0.01")), "%")
    scales = {q.scale for q in operands}
    currencies = {q.currency for q in operands}
    scale = scales.pop() if len(scales) == 1 else 1
    currency = currencies.pop() if len(currencies) == 1 else None
    shown = result / scale if scale in _SCALE_WORDS else result
    text = number_text(shown.normalize() if shown != shown.to_integral_value() else shown.quantize(Decimal(1)))
    if scale in _SCALE_WORDS:
        text = f"{text} {_SCALE_WORDS[scale]}"
    if currency in _SYMBOLS:
        return f"{'-' if text.startswith('-') else ''}{_SYMBOLS[currency]}{text.lstrip('-')}"
    unit = comp.unit if comp.unit and comp.unit != currency else None
    return f"{text}%" if unit == "%" else f"{text} {unit}" if unit else text


# ------------------------------------------------------------------------------------------ tables
_YEAR = re.compile(r"(?:19|20)(\d\d)\b|\bFY\s?(\d\d)\b", re.IGNORECASE)
_QUANTIFIER = re.compile(r"\b(all|every|each|both|two|three|four|five|six|seven|eight|nine|ten|\d+)\b", re.IGNORECASE)
_COUNTS = {
    "both": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_SUPERLATIVE_MAX = frozenset("most largest highest biggest greatest".split())
_SUPERLATIVE_MIN = frozenset("least smallest lowest fewest".split())
_FALLING = frozenset(
    """fall falls fell drop drops dropped decrease decreases decreased decline declines declined shrink
    shrinks shrank cut cuts reduce reduced""".split()
)
_CHANGE_WORDS = frozenset(
    """change changed changes difference differ increase increased decrease decreased grow grew growth rise
    rose fall fell drop dropped decline declined gain lost loss""".split()
)


def _asked_noun(doc: Any) -> str:
    """The noun a "what / which <noun>" question asks for ("what revenue range" -> "range"), else ""."""
    for chunk in doc.noun_chunks:
        if chunk[0].lower_ in ("what", "which") and chunk.root.pos_ in ("NOUN", "PROPN") and len(chunk) > 1:
            return chunk.root.lemma_.lower()
    return ""


#: the least weighted share of the question's content words a table cell's context must hold to be looked up (ours)
LOOKUP_FIT = 0.4
#: the least share of a row label's words the question must name for the row to be looked up (ours)
ROW_NAMED = 0.5


def recency(q: Quantity) -> int:
    """The latest year a column header names (FY25, 2025, FY2025: 2025), -1 when none: a question that
    names no period asks about the latest one."""
    years = [int(a or b) for a, b in _YEAR.findall(q.column)]
    return 2000 + max(years) if years else -1


def _named(words: Sequence[frozenset[str]], asked: frozenset[str]) -> float:
    return sum(1 for w in words if w & asked) / len(words) if words else 0.0


def table_lookup(question: str, pool: Sequence[Quantity]) -> Quantity | None:
    """A table cell the question names: its row label mostly (:data:`ROW_NAMED`), its context (document,
    headings, row, column) at least :data:`LOOKUP_FIT` of the question's content words; the best by that
    share, then row, then column named, then a count for "how many" (an amount otherwise), then the section
    whose text is most similar to the question, then the latest period. The noun the question asks for ("what salary ...") must be in the cell's context. None when two
    cells of different values tie."""
    doc = load_nlp()(question)
    words = _content(doc, ops=False)
    asked = word_forms(question)
    focus = _asked_noun(doc)
    count = question_shape(question).focus == "many"
    change = bool(_CHANGE_WORDS & asked)
    scored = []
    for q in pool:
        if not q.table or (focus and focus not in q.forms) or (q.derived and not change):
            continue
        row = _named(q.local, asked)
        fit = _holds(words, q.forms)
        if row < ROW_NAMED or fit < LOOKUP_FIT:
            continue
        kind = float(count == (q.currency is None and q.unit != "%"))
        key = (round(fit, 6), round(row, 6), round(_named(local_words(q.column), asked), 6), kind,
               round(q.section_score, 4), recency(q))  # fmt: skip
        scored.append((key, q))
    if not scored:
        return None
    scored.sort(key=lambda p: p[0], reverse=True)
    key, best = scored[0]
    if any(k == key and q.value != best.value for k, q in scored[1:]):
        return None
    return best


@dataclass
class Ranked:
    """A superlative over the rows of one table: the row chosen, and the computation behind it."""

    answer: str
    computation: Computation
    citations: list[Citation]


def _superlative(question: str) -> Literal["max", "min"] | None:
    lows = {t.lower_ for t in load_nlp()(question)}
    if lows & _SUPERLATIVE_MAX:
        return "min" if lows & _FALLING else "max"
    return "min" if lows & _SUPERLATIVE_MIN else None


def table_superlative(question: str, pool: Sequence[Quantity]) -> Ranked | None:
    """ "Which line item grows the most ...?" over one table: the rows (no totals) of the table whose document
    and headings hold most of the question's words (not the noun it asks for: "which program"), then whose
    headings hold fewest words the question does not, valued in the column the question names (two columns
    named: the later minus the earlier, as the question orders them; none: the latest period), the largest
    (most, largest, highest...) or smallest (least, lowest...; "falls the most": the smallest change)."""
    pick = _superlative(question)
    if pick is None:
        return None
    asked = word_forms(question)
    tables: dict[str, list[Quantity]] = {}
    for q in pool:
        if q.table and not q.is_total:
            tables.setdefault(q.evidence.chunk_id, []).append(q)
    doc = load_nlp()(question)
    asks = {chunk.root.i for chunk in doc.noun_chunks if chunk[0].lower_ in ("which", "what")}
    words = _content([t for t in doc if t.i not in asks], ops=False)
    best: tuple[tuple[float, ...], list[Quantity]] | None = None
    for cells in tables.values():
        if len({q.row for q in cells}) < 2:
            continue
        heads = [cells[0].evidence.title, *cells[0].evidence.section_path]
        where = frozenset().union(*(word_forms(t) for t in heads))
        extra = [w for t in heads for w in local_words(t)]
        key = (
            round(_holds(words, where), 6),
            round(_named(extra, asked), 6),
            round(sum(q.score for q in cells) / len(cells), 6),
        )
        if best is None or key > best[0]:
            best = (key, cells)
    if best is None:
        return None
    cells = best[1]
    columns = list(dict.fromkeys(q.column for q in cells))
    named = [c for c in columns if _named(local_words(c), asked) == 1.0 and local_words(c)]
    if len(named) > 2:
        return None
    if not named:
        latest = max(columns, key=lambda c: recency(next(q for q in cells if q.column == c)))
        named = [latest] if recency(next(q for q in cells if q.column == latest)) >= 0 else []
    if not named:
        return None
    if len(named) == 2:
        named.sort(key=lambda c: _first_mention(question, c))
    rows: dict[str, dict[str, Quantity]] = {}
    for q in cells:
        rows.setdefault(q.row, {})[q.column] = q
    operands, names = [], []
    for row, by_col in rows.items():
        if not all(c in by_col for c in named):
            continue
        b = by_col[named[-1]]
        op = b.amount().operand().model_copy(update={"label": row})
        if len(named) == 2:
            a = by_col[named[0]]
            op = op.model_copy(update={"value": b.value - a.value, "raw": f"{b.raw} - {a.raw}"})
        operands.append(op)
        names.append(row)
    if len(operands) < 2:
        return None
    values = [o.value for o in operands]
    target = max(values) if pick == "max" else min(values)
    if values.count(target) > 1:
        return None
    row = names[values.index(target)]
    expression = f"{pick}(" + ", ".join(f"{n}: {o.raw}" for n, o in zip(names, operands, strict=True)) + ")"
    comp = Computation(operation=f"compare ({pick})", expression=expression, operands=operands, result=row)
    cites = list({(o.citation.chunk_id, o.citation.quote): o.citation for o in operands}.values())
    return Ranked(answer=row, computation=comp, citations=cites)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _first_mention(question: str, column: str) -> int:
    """Where the question first names a column (by any of its words)."""
    low = question.lower()
    spots = [
        m.start() for forms in local_words(column) for w in forms for m in [re.search(rf"\b{re.escape(w)}\b", low)] if m
    ]
    years = [m.start() for y in re.findall(r"\d{2,4}", column) for m in [re.search(rf"{y}\b", low)] if m]
    return min([*years, *spots], default=len(low))


def set_sum(question: str, pool: Sequence[Quantity]) -> list[Quantity] | None:
    """ "The two plants' electricity", "every electricity line": the rows of the line item the question names
    (of the row labels whose words the question all holds, the longest; two as long: no set), in the column
    it names (none: the latest period), no totals, one per section; of the sections holding them, those whose document and
    headings hold most of the question's other words: all of the best ("all", "every", "each"), or the best
    N ("both", "two", ..., "N"; when the N-th is strictly better than the next)."""
    m = _QUANTIFIER.search(question)
    if m is None:
        return None
    word = m.group(1).lower()
    want = _COUNTS.get(word) or (int(word) if word.isdigit() else None)
    if want is None and word not in ("all", "every", "each"):
        return None
    asked = word_forms(question)
    words = _content(load_nlp()(question))
    table = [q for q in pool if q.table and not q.is_total and not q.derived]
    labels: dict[str, tuple[frozenset[str], ...]] = {}
    for q in table:
        labels.setdefault(_norm(q.row), q.local)
    named = {label: local for label, local in labels.items() if local and _named(local, asked) == 1.0}
    for label in sorted(named, key=lambda lb: (-len(named[lb]), lb)):
        picked = _set_of(label, named[label], question, words, table, want)
        if picked is not None:
            return picked
    return None


def _set_of(label: str, local: tuple[frozenset[str], ...], question: str, words: list[Word], table: Sequence[Quantity],
            want: int | None) -> list[Quantity] | None:  # fmt: skip
    label_forms = frozenset().union(*local)
    rows = [q for q in table if _norm(q.row) == label]
    row_words = [w for w in words if w.forms & label_forms]
    col_words = [w for w in words if w not in row_words and any(w.forms & word_forms(q.column) for q in rows)]
    rest = [w for w in words if w not in row_words and w not in col_words]
    by_section: dict[str, list[Quantity]] = {}
    for q in rows:
        by_section.setdefault(q.evidence.section_id, []).append(q)
    chosen: list[tuple[float, Quantity]] = []
    for cells in by_section.values():
        if col_words:
            cells = [
                q
                for q in cells
                if _holds(col_words, word_forms(q.column))
                == max(_holds(col_words, word_forms(c.column)) for c in cells)
            ]
        else:
            top = max(recency(q) for q in cells)
            cells = [q for q in cells if recency(q) == top] if top >= 0 else []
        if len({q.row for q in cells}) != 1 or len(cells) != 1:
            continue
        q = cells[0]
        where = frozenset().union(*(word_forms(t) for t in [q.evidence.title, *q.evidence.section_path]))
        chosen.append((round(_holds(rest, where), 6) if rest else 1.0, q))
    chosen.sort(key=lambda p: -p[0])
    if want is None:
        if not chosen:
            return None
        top = chosen[0][0]
        picked = [q for f, q in chosen if f == top]
    else:
        if len(chosen) < want or (len(chosen) > want and chosen[want - 1][0] == chosen[want][0]):
            return None
        picked = [q for _, q in chosen[:want]]
    if len(picked) < 2 or len({q.unit for q in picked}) > 1:
        return None
    return picked


# ------------------------------------------------------------------------------------------ the model's choice
class ArithmeticReply(BaseModel):
    """What the chat model picks: an operation and the numbers of its operands, in order."""

    operation: Literal["none", "sum", "difference", "ratio", "percent_change", "max", "min"] = Field(
        description="the arithmetic the question needs, or none"
    )
    operands: list[int] = Field(default_factory=list, description="bracketed indexes of the listed quantities (never their values), in order")


def _llm_choice(step: Step, pool: Sequence[Quantity]) -> tuple[str, list[Quantity]] | None:
    """The model's operation and operands (None: no usable reply; ("none", []) when it needs no arithmetic)."""
    shown = sorted(pool, key=lambda q: (-_holds(_content(load_nlp()(step.question)), q.forms), -q.score, q.fact_id))
    shown = shown[:LLM_QUANTITIES]
    lines = [f"[{i}] {q.label} = {q.raw} ({q.unit or 'no unit'}{', in ' + _SCALE_WORDS[q.scale] + 's' if q.scale in _SCALE_WORDS else ''})"
             for i, q in enumerate(shown, start=1)]  # fmt: skip
    messages = [
        SystemMessage(content=load_prompt("calculate.system")),
        HumanMessage(content=load_prompt("calculate.user").format(question=step.question, quantities="\n".join(lines))),
    ]
    reply = step.ask(ArithmeticReply, messages, "calculate")
    if reply is None:
        return None
    if reply.operation == "none":
        return "none", []
    picked = [shown[i - 1] for i in reply.operands if 1 <= i <= len(shown)]
    needs = 2 if reply.operation in ("difference", "ratio", "percent_change", "max", "min") else 1
    if len(picked) < needs or len(picked) != len(reply.operands) or len({q.unit for q in picked}) > 1:
        step.fallbacks.append(f"calculate: the model's operands {reply.operands} do not fit {reply.operation}")
        return None
    return reply.operation, picked


# ------------------------------------------------------------------------------------------ hierarchy questions
_STRUCTURAL = frozenset("section subsection part chapter heading paragraph".split())
_NUMBERING = re.compile(
    r"^\s*(?:(?:section|chapter|part)\s+)?(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\.|[a-z]\))\s+", re.IGNORECASE
)


@dataclass
class Hierarchy:
    """A question answered by a heading: the noun it asks for and the depth of the headings that name it."""

    noun: str
    start: int  # where the "which <noun>" phrase ends in the question
    depth: int | None  # None: the deepest section of the answering chunk (section, part, chapter...)


def hierarchy_question(question: str, index: Any, doc_titles: set[str]) -> Hierarchy | None:
    """ "Which section / part / chapter ... ?", or "which <noun> ... ?" where the noun (the head of the phrase
    "which" opens) is the last word of headings of the store's section tree (not document titles: "Main
    Replacement Program", "Police Department"): those headings sit mostly at one depth, and the answer is
    the answering chunk's section at that depth."""
    doc = load_nlp()(question)
    for chunk in doc.noun_chunks:
        first = chunk[0].lower_
        if first not in ("which", "what"):
            continue
        lemma = chunk.root.lemma_.lower()
        if lemma in _STRUCTURAL:
            return Hierarchy(lemma, chunk.end_char, None)
        if first != "which":
            continue
        depths = [int(index.depth[i]) for i, t in enumerate(index.titles)
                  if t and t not in doc_titles and _last_word(t) == lemma]  # fmt: skip
        if depths:
            counts = {d: depths.count(d) for d in set(depths)}
            return Hierarchy(lemma, chunk.end_char, max(counts, key=lambda d: (counts[d], d)))
    return None


@lru_cache(maxsize=8192)
def _last_word(heading: str) -> str:
    words = [t for t in load_nlp()(heading) if t.is_alpha]
    return words[-1].lemma_.lower() if words else ""


def locate(question: str, evidence: Sequence[Evidence], h: Hierarchy, index: Any) -> tuple[str, Citation] | None:
    """The heading (its numbering left out) of the section holding the evidence sentence that holds most of
    the question's other content words, at the depth the question asks for, and that sentence (module
    docstring); None when no sentence holds enough of them."""
    doc = load_nlp()(question)
    words = [w for w in _content(doc, ops=False) if h.noun not in w.forms]
    if not words:
        return None
    best: tuple[bool, float, int, Any] | None = None
    for rank, sent in enumerate(sentences(evidence)):
        if not sent.evidence.section_path or sent.evidence.section_id not in index.pos:
            continue
        share = _holds(words, word_forms(sent.text) | word_forms(" ".join(sent.evidence.section_path[-1:])))
        deep = h.depth is None or int(index.depth[index.pos[sent.evidence.section_id]]) >= h.depth
        if share >= MIN_RELEVANCE and (best is None or (deep, share, -rank) > best[:3]):
            best = (deep, share, -rank, sent)
    if best is None:
        return None
    sent = best[3]
    node = index.pos[sent.evidence.section_id]
    if h.depth is not None:
        while int(index.depth[node]) > h.depth and int(index.parent[node]) >= 0:
            node = int(index.parent[node])
    heading = index.titles[node]
    return _NUMBERING.sub("", heading).strip() or heading, citation(sent)


# ------------------------------------------------------------------------------------------ the node
@agent_node("calculate")
def calculate_node(state: dict, step: Step) -> dict:
    """Arithmetic and comparisons over the aggregated quantities, exactly in code with every operand cited
    (the chat model picks the operands when there is one, else the rule of the module docstring); a
    hierarchy question is answered with the heading of the section that holds its answer."""
    question = step.question
    evidence: list[Evidence] = list(state.get("evidence") or [])
    index = top_down.section_index(step.ctx)
    ix = step.ctx.index()
    h = None if _superlative(question) else hierarchy_question(question, index, set(ix.doc_title))
    if h is not None:
        found = locate(question, evidence, h, index)
        if found is not None:
            heading, cite = found
            step.decide(
                f"hierarchy question (which {h.noun}): the section {heading!r} holds the sentence that answers it"
            )
            return {"answer": Answer(question=question, answer=heading, found=True, citations=[cite], strategy="bag")}
        step.decide(f"hierarchy question (which {h.noun}): no evidence sentence holds enough of it")
    plan = plan_arithmetic(question)
    if plan is None and step.llm is not None and not has_arithmetic_cue(question):
        step.decide("no arithmetic asked")
        return {}
    pool = step.call(
        "quantities",
        lambda **a: quantities(step, a["chunks"]),
        summary=lambda r: f"{len(r)} quantities",
        chunks=list(dict.fromkeys([*(state.get("instance_chunks") or []), *(e.chunk_id for e in evidence)])),
    )
    if not pool:
        step.decide("no typed quantity in the kept sections")
        return {}
    if step.llm is not None and has_arithmetic_cue(question):
        chosen = _llm_choice(step, pool)
        if chosen is not None:
            operation, operands = chosen
            if operation == "none":
                step.decide("the model: no arithmetic needed")
                return {}
            llm_plan = Plan(operation=operation, slots=[Slot(q.row, []) for q in operands], shared=[],  # type: ignore[arg-type]
                            absolute=operation == "difference" and plan is not None and plan.absolute)  # fmt: skip
            try:
                comp, text = compute(llm_plan, operands)
            except ValueError as exc:  # a ratio over zero...
                step.fallbacks.append(f"calculate: the model's {operation} cannot be computed ({exc})")
            else:
                step.decide(f"the model's {operation} over {len(operands)} cited quantities: {comp.expression} = {text}")
                return {"computed": comp, "computed_answer": text}
    if plan is not None:
        operands = choose_operands(plan, pool, question)
        if operands is not None:
            try:
                comp, text = compute(plan, operands)
            except ValueError as exc:
                step.decide(f"{plan.describe()}: cannot be computed ({exc})")
                return {}
            step.decide(f"{plan.describe()}: {comp.expression} = {text} ({'; '.join(q.label for q in operands)})")
            return {"computed": comp, "computed_answer": text}
        step.decide(f"{plan.describe()}: no quantity fits every slot")
    if step.llm is not None:
        return {}
    return _over_tables(step, question, pool)


def _over_tables(step: Step, question: str, pool: Sequence[Quantity]) -> dict:
    """Without a chat model: a sum over the rows a question names as a set, a superlative over one table's
    rows, or one table cell the question names."""
    if _SUM_CUE.search(question):
        rows = set_sum(question, pool)
        if rows is not None:
            comp = calculate("sum", [q.amount() for q in rows])
            text = render(comp, rows)
            step.decide(
                f"sum over the rows named as a set: {comp.expression} = {text} ({'; '.join(q.label for q in rows)})"
            )
            return {"computed": comp, "computed_answer": text}
    ranked_ = table_superlative(question, pool)
    if ranked_ is not None:
        step.decide(f"superlative over a table's rows: {ranked_.computation.expression} -> {ranked_.answer}")
        answer = Answer(question=question, answer=ranked_.answer, found=True, citations=ranked_.citations,
                        computed=ranked_.computation, strategy="bag")  # fmt: skip
        return {"answer": answer}
    shape = question_shape(question)
    if shape.type in (AnswerType.NUMBER, AnswerType.DATE, AnswerType.THING):
        cell = table_lookup(question, pool)
        if cell is not None:
            cite = cell.amount().citation
            step.decide(f"table lookup: {cell.label} = {cell.raw}")
            return {"answer": Answer(question=question, answer=cell.raw, found=True, citations=[cite], strategy="bag")}
    step.decide("no computation, superlative or table cell fits the question")
    return {}


_SUM_CUE = re.compile(
    r"\b(total|combined|sum|together|altogether|in all|add(?:ing|ed|s)? up|aggregate)\b", re.IGNORECASE
)


# ------------------------------------------------------------------------------------------ eq. 5
@agent_node("answer")
def answer(state: dict, step: Step) -> dict:
    """BAG-RAG eq. 5: the answer from the evidence and Context(Q): the computation when one was made; else
    the chat model over the passages and the aggregated communities (agents/answer.py); else the span of the
    best evidence sentence (agents/spans.py: by its share of the question's words, discounted by its chunk's
    rank), one hop on through a named bridge when it leaves part of the question open."""
    evidence: list[Evidence] = list(state.get("evidence") or [])
    computed = state.get("computed")
    if computed is not None or step.llm is not None or not evidence:
        return {
            "answer": answer_from_evidence(
                step,
                evidence,
                "bag",
                computed=computed,
                computed_answer=state.get("computed_answer"),
                context=str(state.get("aggregated") or ""),
            )  # fmt: skip
        }
    shape = question_shape(step.question)
    rank_of = {e.chunk_id: i for i, e in enumerate(evidence)}
    scored = [
        (relevance(s, shape) / (1.0 + RANK_DISCOUNT * rank_of[s.evidence.chunk_id]), s) for s in sentences(evidence)
    ]
    return {"answer": extractive_answer(step, evidence, scored, evidence, "bag")}

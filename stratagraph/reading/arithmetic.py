"""Arithmetic over cited amounts: one planner (what a question asks to compute, over which operands), the
computation done by the ``calculate`` tool's evaluator (:func:`stratagraph.tools.calculate.apply`: exact
``Decimal``), and one renderer of amounts (:func:`stratagraph.text.amounts.render_amount`). KAG §2.3's ``Math``
operator; BAG-RAG's sums over aggregated line items.

**The planner** (:func:`plan`) reads the question's wording and parse, first match wins:

1. a percentage change ("by what percentage did X grow from A to B", "percent change ... between A and B"):
   ``percent_change`` from A to B;
2. a change ("how much did X grow / fall / change from A to B", "what was the change in X from A to B",
   "between A and B"): ``difference`` B - A;
3. a ratio ("ratio of A to B", "how many times ... A than B"): A / B;
4. a difference ("how much more / less / higher ... A than B", "difference between A and B", "by how much
   does A exceed B"): A - B ("less" turns it round; "between" gives the larger minus the smaller);
5. a sum ("combined", "total", "sum", "together", "altogether", "in all", "add up") over two or more
   coordinated names ("the Police and Fire departments", "A, B and C");
6. a yes/no comparison ("Is A's overtime greater than B's?"): ``greater`` or ``less``, answered "yes" or
   "no" from the two amounts.

Each operand is a sub-question: a change's operands ask the changed thing's level at each end ("What is X's
revenue in Q2 2024?"); the others are the question with the coordination (or the "than" pair) replaced by
that one member, so every word the members share ("the FY2025 overtime budget of") stays in each
("How many more people live in Corvel than in Ennisford?" -> "How many people live in Corvel?" and
"... in Ennisford?"). The reader answers each as a number lookup; the computation needs every operand.

**Computing** (:func:`compute`): the operands must be amounts of one unit (a percentage is not added to
dollars); the result is exact, cited operand by operand, and rendered with the operands' unit and currency.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from stratagraph.answers import Citation, Computation, Operand
from stratagraph.text.amounts import Quantity, parse_quantities, render_amount
from stratagraph.text.lexicon import AUXILIARIES, CHANGE_WORDS, COMPARE_LESS, COMPARE_MORE, NUMBER_NOUNS, ONLY_ADDING, SUM_WORDS
from stratagraph.text.nlp import load_nlp
from stratagraph.text.periods import find_periods, phrase_start, quarter_run, spelled_change

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

__all__ = ["Figure", "asks_which_way", "Plan", "compute", "over_quarters", "plan", "render"]

_PCT = re.compile(
    r"\bby what (?:percent|percentage)\b|\bpercent(?:age)? (?:change|increase|decrease|growth|rise|decline|drop|fall)\b|"
    r"\bwhat (?:percent|percentage) (?:did|does|was|is|has)\b.*\b(?:increase|decrease|grow|rise|fall|decline|drop|change)",
    re.IGNORECASE,
)
_PCT_WORDS = re.compile(r"\bby what (?:percentage|percent)\b|\bwhat (?:percentage|percent)\b", re.IGNORECASE)
_PCT_PHRASE = re.compile(r"\b(?:the )?(?:percentage|percent) (?:change|increase|decrease|growth|rise|decline|drop|fall) "
                         r"(?:in|of)\s+", re.IGNORECASE)
_HOW_CHANGE = re.compile(r"\bhow (?:much |many \w+ )?(?:did|does|do|has|have|had|will|would|is|was)\b|"
                         r"\bwhat (?:is|was|were|are) the (?:[\w-]+ )?(?:change|increase|decrease|growth|rise|decline|drop|fall|"
                         r"gain|reduction) (?:in|of)\b", re.IGNORECASE)  # "what was the (net) change in X from A to B"
#: a question asking how an amount of one period compared with another's ("how did X in Q3 *compare with* Q2", "how
#: did X in Q3 compare with the previous quarter", "how did X from A to B compare"; the period before spelled out by
#: :func:`stratagraph.text.periods.spelled_change`): a change from A to B, its sign saying which way
_COMPARE_PARTS = re.compile(r"^\s*how\s+(?:did|does|do|has|have)\s+(?P<subject>.+?)(?:\s+(?P<rest>(?:from|between)\s.+?))?"
                            r"\s+compare(?:\s+(?:with|to|against)\s+(?P<other>.+?))?\s*\??\s*$", re.IGNORECASE)
#: the same once spelled out ("how did X from Q2 2026 to Q3 2026")
_SPELLED_PARTS = re.compile(r"^\s*how\s+(?:did|does|do|has|have)\s+(?P<subject>.+?)\s+(?P<rest>from\s.+?)\s*\??\s*$", re.IGNORECASE)


def asks_which_way(question: str) -> bool:
    """Whether the question asks which way an amount moved and by how much (:data:`_COMPARE_PARTS`), a clause
    on how to read the figures aside (:data:`_HOW_TO_READ`)."""
    return bool(_COMPARE_PARTS.match(_without_how_to_read(question)))


_RATIO = re.compile(r"\bratio of\b|\bhow many times\b", re.IGNORECASE)
_DIFF = re.compile(
    r"\bhow (?:much|many)(?: \w+)? (?:more|less|fewer|higher|lower|larger|smaller|greater|bigger|longer|shorter|"
    r"earlier|later|older|younger)\b|\bdifference\b|\bby how much\b|\bgap between\b|\bexceed",
    re.IGNORECASE,
)
_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ", "X"})


@dataclass(frozen=True)
class Plan:
    """What a question asks to compute: the operation and one sub-question per operand (module docstring)."""

    operation: str  # sum, difference, ratio, percent_change
    operands: tuple[str, ...]
    absolute: bool = False  # a difference "between": the larger minus the smaller
    reason: str = ""
    joined: str = ""  # a sum's coordination as written ("the Streets and Bridges"): it may be one name
    spelled: str = ""  # set when planned from the question's periods (a run of quarters, a change "year over year")
    which_way: bool = False  # "how did X in Q3 compare with Q2": the change written as its direction and size ("down by $38")


@dataclass(frozen=True)
class Figure:
    """A typed amount as the evidence states it: the quantity (value with its scale, unit, currency, as
    written), what it measures (a table row and column, or the words before it in a sentence) and its
    verbatim citation."""

    quantity: Quantity
    citation: Citation
    label: str  # "Overtime | FY2025 Adopted", or the words the sentence says it of
    row: str = ""  # a table cell's row label
    column: str = ""  # a table cell's column header

    @property
    def value(self) -> Decimal:
        return self.quantity.value

    @property
    def unit(self) -> str | None:
        return self.quantity.unit

    @property
    def table(self) -> bool:
        return bool(self.column)

    def operand(self) -> Operand:
        return Operand(label=self.label, value=self.value, unit=self.unit, raw=self.quantity.raw, citation=self.citation)

    def at_scale(self) -> Computation | None:
        """The amount at the scale its table states, as a computation of one operand ("240" in thousands ->
        240 × 1,000), when its answer text is not the text as written; None when it is."""
        if self.text() == self.quantity.raw:
            return None
        return Computation(operation="value", expression=f"{self.quantity.raw} × {self.quantity.scale:,}",
                           operands=[self.operand()], result=self.value, unit=self.unit)  # fmt: skip

    def text(self) -> str:
        """The amount as an answer: as written when that says it all ("$1.2 million", "48,300"), else exact
        with the scale and currency its table states ("1,320" in thousands of dollars -> "$1,320,000")."""
        q = self.quantity
        alone = parse_quantities(q.raw)
        if len(alone) == 1 and alone[0].value == q.value and alone[0].currency == q.currency:
            return q.raw
        return render_amount(q.value, q.unit, q.currency, q.scale)


# ------------------------------------------------------------------------------------------ the planner
def plan(doc: Doc) -> Plan | None:
    """The computation a parsed question asks for (module docstring), or None; a quarter or half one
    operand names without a year takes the year another names ("in Q3 than in Q2 2024": Q3 2024)."""
    found = _plan(doc)
    if found is None:
        return None
    return replace(found, operands=_share_year(tuple(_without_how_to_read(o) for o in found.operands)))


#: a participial clause set off by a comma that says how to read the figures ("Using the corrected second-quarter
#: figure, what was ...", "..., based on the restated first-quarter figure?", "..., taking the restatement into
#: account"): said of one operand at most, and the reader already takes the latest report's figure for each
_HOW_TO_READ = re.compile(r"(?:^|,)\s*(?:using|based on|taking|on the basis of)\b[^,?]*(?:,\s*|(?=\?)|$)", re.IGNORECASE)


def _without_how_to_read(operand: str) -> str:
    """An operand's question without a clause on how to read the figures (:data:`_HOW_TO_READ`)."""
    text = re.sub(r"\s+([?.!])", r"\1", re.sub(r"\s{2,}", " ", _HOW_TO_READ.sub(" ", operand))).strip()
    return text[:1].upper() + text[1:] if text else operand


def over_quarters(question: str) -> Plan | None:
    """A sum over a run of quarters ("what was X's revenue *for the first half of 2025*", "across the first
    three quarters", "the first nine months"): one operand per quarter, the run replaced by "in <quarter>" and
    the words that only say the members are added dropped; None when the question names no run. Reports state
    quarters: the run's figure is their sum (the reader falls back to a figure stated for the whole run when a
    quarter has none)."""
    run = quarter_run(question)
    if run is None:
        return None
    start, end, quarters = run
    head, rest = question[:start].rstrip(), question[end:]
    rest = re.sub(rf"\s+(?:{'|'.join(sorted(ONLY_ADDING))})\b", "", rest, flags=re.IGNORECASE)
    operands = tuple(_without_how_to_read(f"{head} in {q.text}{rest}") for q in quarters)
    return Plan("sum", operands, reason=f"sum over {len(quarters)} quarters", spelled=question)


def _share_year(operands: Sequence[str]) -> tuple[str, ...]:
    named = [find_periods(o) for o in operands]
    years = {p.year for ps in named for p in ps if p.unit and p.year is not None}
    if len(years) != 1:
        return tuple(operands)
    year = years.pop()
    out = []
    for text, ps in zip(operands, named, strict=True):
        bare = [p for p in ps if p.unit and p.year is None]
        if bare and not any(p.year is not None for p in ps):
            end = bare[-1].end
            text = f"{text[:end]} {year}{text[end:]}"
        out.append(text)
    return tuple(out)


def _either_way(question: str) -> Plan | None:
    """A question asking how an amount of one period compared with another's ("How did X's revenue in Q3 2026
    compare with Q2 2026?") as the change it asks, B - A, whose sign says which way: one level question per
    period ("What is X's revenue in Q2 2026?"); None unless two periods are named ("in B ... with A", "from A
    to B", "with the previous quarter")."""
    question = _without_how_to_read(question)  # "..., using the restated first-quarter figure?"
    m = _COMPARE_PARTS.match(question)
    relative = spelled_change(question) if m is not None else None
    if relative is not None:  # "compare with the previous quarter": "how did X from Q2 to Q3"
        m = _SPELLED_PARTS.match(relative)
    if m is None:
        return None
    subject, rest = m.group("subject").strip(), (m.group("rest") or "").rstrip(" ,")
    other = m.groupdict().get("other")
    if other:  # "X in B compare with A": B is the subject's period
        named = find_periods(subject)
        if not named or not find_periods(other):
            return None
        last = named[-1]
        head = subject[: phrase_start(subject, last)].rstrip()
        subject, rest = head + subject[last.end :], f" from {other} to {subject[last.start : last.end]}"
    spelled = f"How much did {subject} change {rest.strip()}?"
    doc = load_nlp()(spelled)
    ranged = _from_to(doc)
    if ranged is not None:
        members = _elliptical(doc, ranged[2])
    else:  # the small parser does not always hang "from A to B" on the verb: two periods as written
        pair = re.fullmatch(r"\s*(?:from|between)\s+(.+?)\s+(?:to|and)\s+(.+?)\s*", rest)
        members = [pair.group(1), pair.group(2)] if pair else []
    if len(members) != 2 or not all(find_periods(m) for m in members):
        return None
    operands = tuple(f"What is {subject} in {member}?" for member in reversed(members))
    return Plan("difference", operands, reason="change from A to B (B - A), asked as which way", spelled=spelled, which_way=True)


def _plan(doc: Doc) -> Plan | None:
    q = doc.text
    if asks_which_way(q):
        return _either_way(q)
    words = {t.lower_ for t in doc} | {t.lemma_.lower() for t in doc}
    coord = coordination(doc)
    ranged = _from_to(doc)
    if _PCT.search(q):
        operands = _levels(doc, ranged, coord) or _ranged(doc, ranged) or (coordinated(doc, coord) if len(coord) == 2 else None)
        if operands:
            return Plan("percent_change", tuple(operands), reason="percentage change from A to B")
    if words & CHANGE_WORDS and _HOW_CHANGE.search(q) and not re.search(r"\bthan\b", q, re.IGNORECASE):
        operands = _levels(doc, ranged, coord) or _ranged(doc, ranged) or (coordinated(doc, coord) if len(coord) == 2 else None)
        if operands:
            return Plan("difference", tuple(reversed(operands)), reason="change from A to B (B - A)")
    if _RATIO.search(q):
        sides = than(doc) if "than" in words else None
        sides = sides or (tuple(coordinated(doc, coord)) if len(coord) == 2 else None) or _ratio_to(doc)
        if sides:
            return Plan("ratio", tuple(sides), reason="ratio of A to B")
    if _DIFF.search(q):
        sides = than(doc) if "than" in words else None
        if sides:
            at = next(t.i for t in doc if t.lower_ == "than")
            less = any(t.lower_ in COMPARE_LESS and "or" not in (doc[t.i - 1].lower_, doc[min(t.i + 1, len(doc) - 1)].lower_)
                       for t in doc[:at])  # "more or less ... than" asks which way, not "less"  # fmt: skip
            return Plan("difference", tuple(reversed(sides)) if less else tuple(sides), reason="difference (A than B)")
        if len(coord) == 2:
            return Plan("difference", tuple(coordinated(doc, coord)), absolute=True, reason="difference between two")
        sides = _exceed(doc)
        if sides:
            return Plan("difference", tuple(sides), reason="difference (A exceeds B)")
    if words & SUM_WORDS and len(coord) >= 2:
        joined = doc[coord[0][0] : coord[-1][1]].text
        return Plan("sum", tuple(coordinated(doc, coord)), reason=f"sum of {len(coord)}", joined=joined)
    return _compared(doc)


def _compared(doc: Doc) -> Plan | None:
    """A yes/no question comparing two amounts ("Is A's overtime *greater than* B's?", "Did A have *more*
    residents than B?"): ``greater`` or ``less``, each side's sub-question asking its amount ("How much is
    A's overtime?")."""
    if len(doc) < 3 or doc[0].pos_ != "AUX" or not any(t.lower_ == "than" for t in doc):
        return None
    at = next(t.i for t in doc if t.lower_ == "than")
    word = next((t for t in reversed(doc[:at]) if t.lower_ in COMPARE_MORE | COMPARE_LESS), None)
    if word is None:
        return None
    sides = than(doc)
    if sides is None:
        return None
    asked = doc[0].lower_
    operands = []
    for side in sides:
        words = side.split()
        rest = [w for w in words[1:] if w.strip("?,.").lower() != word.lower_]
        operands.append(f"How much {asked} " + " ".join(rest).rstrip("?") + "?")
    operation = "less" if word.lower_ in COMPARE_LESS else "greater"
    return Plan(operation, tuple(operands), reason=f"comparison (is A {word.lower_} than B)")


def _span(tok: Token, skip: Sequence[str] = ("conj", "cc", "punct", "preconj")) -> tuple[int, int]:
    """A token's subtree without the children of the kinds in ``skip`` (and their subtrees); a "prep" in
    ``skip`` keeps "of" ("the Department of Parks"), and what an ampersand joins is kept ("Parks & Recreation")."""
    drop: set[int] = set()
    for child in tok.children:
        if child.dep_ in skip and not (child.dep_ == "prep" and child.lower_ == "of") and not _ampersand(child):
            drop.update(t.i for t in child.subtree)
    idx = [t.i for t in tok.subtree if t.i not in drop]
    return min(idx), max(idx) + 1


def _ampersand(tok: Token) -> bool:
    """Whether the token is an ampersand or what one joins to the word before it: one name ("Halloran &
    Pike"), not two members of a coordination."""
    return tok.text == "&" or (tok.dep_ == "conj" and tok.left_edge.i > 0 and tok.doc[tok.left_edge.i - 1].text == "&")


def coordination(doc: Doc) -> list[tuple[int, int]]:
    """The members of the question's coordination of names ("the Police and Fire departments", "A, B and
    C"), as token spans; [] when there is none. When there are several, one whose members are all names (or
    periods) wins over one of common nouns, then the last. An ampersand joins the words of one name
    ("Halloran & Pike's revenue", "Parks & Recreation"), not two things to add."""
    found: list[list[tuple[int, int]]] = []
    for tok in doc:
        if tok.dep_ == "conj" or tok.pos_ not in _NOMINAL:
            continue
        chain, frontier = [tok], [tok]
        while frontier:
            cur = frontier.pop()
            for c in cur.children:
                if c.dep_ == "conj" and c.pos_ in _NOMINAL and c not in chain and not _ampersand(c):
                    chain.append(c)
                    frontier.append(c)
        if len(chain) >= 2:
            chain.sort(key=lambda t: t.i)
            chain = _adjacent(doc, chain)
            found.append([_span(t, skip=("conj", "cc", "punct", "preconj", "prep", "relcl", "acl")) for t in chain])
    if not found:
        return []

    def named(spans: list[tuple[int, int]]) -> bool:
        return all(any(t.pos_ == "PROPN" or t.text[:1].isupper() or t.like_num for t in doc[a:b]) for a, b in spans)

    return max(found, key=lambda spans: (named(spans), spans[0][0]))


def _adjacent(doc: Doc, chain: list[Token]) -> list[Token]:
    """A coordination spaCy attached to a far head ("the revenue of Tessel in Q1 and *Q2*" with "Q2" the
    conjunct of "revenue"): when the word just before the conjunction is of the second member's kind
    (part of speech) and the head is not, that word is the first member."""
    first, second = chain[0], chain[1]
    cc = next((t for t in doc[first.i + 1 : second.i] if t.dep_ == "cc" or t.lower_ == ","), None)
    if cc is None or cc.i < 1:
        return chain
    left = doc[cc.i - 1]
    if left.i != first.i and left.pos_ == second.pos_ != first.pos_ and left.i > first.i:
        return [left, *chain[1:]]
    return chain


def _render(doc: Doc, drop: set[int], subs: Mapping[int, tuple[int, str]] | None = None) -> str:
    subs = subs or {}
    out, i = [], 0
    while i < len(doc):
        if i in subs:
            end, text = subs[i]
            out.append(text + doc[end - 1].whitespace_)
            i = end
            continue
        if i not in drop:
            out.append(doc[i].text_with_ws)
        i += 1
    return re.sub(r"\s+([?,.!])", r"\1", re.sub(r"\s{2,}", " ", "".join(out))).strip()


def coordinated(doc: Doc, spans: Sequence[tuple[int, int]]) -> list[str]:
    """One sub-question per member: the question with the whole coordination replaced by that member (an
    elliptical member completed: "the second and third quarters")."""
    start, end = spans[0][0], spans[-1][1]
    drop = {t.i for t in doc if t.lower_ in ONLY_ADDING and not start <= t.i < end}
    return [_render(doc, drop, {start: (end, text)}) for text in _elliptical(doc, spans)]


def than(doc: Doc) -> tuple[str, str] | None:
    """The two sides of "A ... than B": the question without "than B" (A's), and with A replaced by B. An
    elliptical "than in Q2" replaces the phrase with the same preposition before it ("in Q3")."""
    word = next((t for t in doc if t.lower_ == "than"), None)
    if word is None:
        return None
    skip = ("prep", "relcl", "acl", "punct")  # a name may hold "and" ("than for Roads and Bridges")
    obj = next((c for c in word.children if c.dep_ == "pobj"), None)
    prep = next((c for c in word.children if c.dep_ == "prep"), None)
    left: tuple[int, int] | None = None
    if obj is not None:
        r_start, r_end = _span(obj, skip=skip)
        r_start = max(r_start, word.i + 1)
    elif prep is not None:
        pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
        r_start = prep.i
        r_end = _span(pobj, skip=skip)[1] if pobj is not None else prep.i + 1
        twin = [t for t in doc[: word.i] if t.lower_ == prep.lower_ and t.dep_ == "prep"]
        if twin:
            left = min(t.i for t in twin[-1].subtree), max(t.i for t in twin[-1].subtree) + 1
    else:
        return None
    if r_end <= r_start:
        return None
    left = left or _left_side(doc, word.i)
    if left is None:
        return None
    if doc[r_end - 1].tag_ == "POS":  # "X's budget than Y's": Y stands for X only, the rest is shared
        owner = next((t for t in doc[left[0] : left[1]] if t.dep_ == "poss"), None)
        if owner is not None:
            left = (min(t.i for t in owner.subtree), max(t.i for t in owner.subtree) + 1)
    drop, plain = _comparative(doc, word.i)
    drop |= set(range(word.i, r_end))
    subs = {left[0]: (left[1], doc[r_start:r_end].text)}
    return _render(doc, drop, plain), _render(doc, drop, {**plain, **subs} if not set(plain) & set(subs) else subs)


def _comparative(doc: Doc, before: int) -> tuple[set[int], dict[int, tuple[int, str]]]:
    """An operand asks for the amount itself: "how many *more* people" -> "how many people" (the word
    dropped), "how much *higher* does A lie" -> "how *high* does A lie" (the comparative's measure kept),
    unless the question names an amount ("how much *higher* were the net bookings": "how much were ...");
    "more or less money" -> "money"."""
    drop: set[int] = set()
    plain: dict[int, tuple[int, str]] = {}
    amount = any((t.lemma_.lower() in NUMBER_NOUNS or t.lower_ in NUMBER_NOUNS) and t.pos_ == "NOUN" for t in doc[:before])
    for t in doc[1:before]:
        if t.lower_ in ("more", "less") and t.i + 2 < len(doc) and doc[t.i + 1].lower_ == "or" and doc[t.i + 2].lower_ in ("more", "less"):
            drop.update((t.i, t.i + 1, t.i + 2))  # "bring in more or less money": the amount itself
            continue
        if doc[t.i - 1].lower_ not in ("much", "many") or not (t.tag_ in ("JJR", "RBR") or t.lower_ in ("more", "less", "fewer")):
            continue
        if t.lower_ in ("more", "less", "fewer") or amount:
            drop.add(t.i)  # "how much higher were net bookings": an amount, not a height
        elif doc[t.i - 1].lower_ == "much":
            plain[t.i - 1] = (t.i + 1, t.lemma_.lower())
    return drop, plain


_LEAD = frozenset({"WRB", "WDT", "WP", "JJR", "RBR", "RB"})


def _left_side(doc: Doc, before: int) -> tuple[int, int] | None:
    """The compared thing before "than": the clause's subject, else the nearest noun phrase before it (without
    the wh-words and auxiliaries it may open with), cut before the comparative word."""
    comparative = next((t.i for t in doc[:before] if t.tag_ in ("JJR", "RBR") or t.lower_ in ("more", "less")), None)
    subjects = [t for t in doc[:before] if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ in ("NOUN", "PROPN")]
    if subjects:
        start, end = _span(subjects[-1], skip=("prep", "relcl", "acl", "punct", "conj", "cc"))
        root = next((t for t in doc if t.dep_ == "ROOT"), None)
        if root is not None and root.lemma_ == "do" and end - start >= 2 and doc[end - 1].is_lower and not doc[end - 2].is_lower:
            end -= 1  # "does Corvane Hollow lie": the parser took the verb for the name's noun
    else:
        spans = []
        for c in doc.noun_chunks:
            if c.end > before:
                continue
            lead = [t.i for t in c if t.tag_ in _LEAD or t.pos_ in ("AUX", "VERB")]
            start = (max(lead) + 1) if lead else c.start
            # a chunk spaCy ran on into the clause's verb ("the Police Department request" with "request" the
            # root) ends before it
            end = next((t.i for t in doc[start : c.end] if t.dep_ == "ROOT"), c.end)
            if start < end and any(doc[i].pos_ in ("NOUN", "PROPN") for i in range(start, end)):
                spans.append((start, end))
        if not spans and comparative is not None:  # a noun run spaCy left out of its chunks ("ferry fares")
            run = comparative
            while run > 0 and doc[run - 1].pos_ in ("NOUN", "PROPN", "PART") and doc[run - 1].tag_ not in _LEAD:
                run -= 1
            if run < comparative:
                spans.append((run, comparative))
        if not spans:
            return None
        start, end = spans[-1]
    if comparative is not None and start < comparative < end:
        end = comparative
    return (start, end) if end > start else None


def _to_pair(doc: Doc, first: Token | None) -> tuple[Token, tuple[int, int], tuple[int, int]] | None:
    """The "to" after ``first`` ("from A *to* B", "ratio of A *to* B"), and the spans of A (``first``'s
    object) and B (the object of "to"), without their own prepositional phrases."""
    to = next((t for t in doc if t.lower_ == "to" and first is not None and t.i > first.i), None)
    if first is None or to is None:
        return None
    a = next((c for c in first.children if c.dep_ == "pobj"), None)
    b = next((c for c in to.children if c.dep_ == "pobj"), None)
    if a is None or b is None:
        return None
    skip = ("prep", "punct", "conj", "cc")
    return to, _span(a, skip=skip), _span(b, skip=skip)


def _from_to(doc: Doc) -> tuple[int, int, list[tuple[int, int]]] | None:
    """"from A to B": where the phrase starts and ends, and A's and B's spans."""
    frm = next((t for t in doc if t.lower_ == "from" and t.dep_ == "prep"), None)
    pair = _to_pair(doc, frm)
    if pair is None or frm is None:
        return None
    _, sa, sb = pair
    return frm.i, sb[1], [sa, sb]


def _ranged(doc: Doc, ranged: tuple[int, int, list[tuple[int, int]]] | None) -> list[str] | None:
    """One sub-question per end of "from A to B": the phrase replaced by "in A" ("grow in FY2024"), and a
    percentage's wording by the amount's ("by what percentage did X grow" -> "how much did X grow")."""
    if ranged is None:
        return None
    start, end, spans = ranged
    out = []
    for text in _elliptical(doc, spans):
        q = _render(doc, set(), {start: (end, f"in {text}")})
        out.append(_PCT_PHRASE.sub("", _PCT_WORDS.sub("how much", q, count=1), count=1))
    return out


def _levels(doc: Doc, ranged: tuple[int, int, list[tuple[int, int]]] | None, coord: list[tuple[int, int]]) -> list[str] | None:
    """A change's operands as level questions, one per end: "By how much did X's revenue increase from Q2 to
    Q3?" -> "What is X's revenue in Q2?", "... in Q3?". The changed thing is the subject of the change verb
    ("X's revenue *increased*") or what a change noun is of ("the *growth in* X's revenue"), without the
    "from A to B" / "between A and B" phrase. A sub-question that kept the change's wording would ask for a
    change in each period, which a report's change column answers. None when no such subject is found."""
    if ranged is not None:
        start, end, spans = ranged
    elif len(coord) == 2:
        spans = list(coord)
        start = spans[0][0] - 1 if spans[0][0] > 0 and doc[spans[0][0] - 1].pos_ == "ADP" else spans[0][0]
        end = spans[-1][1]
    else:
        return None
    skip = set(range(start, end))
    for t in doc:
        if t.lemma_.lower() not in CHANGE_WORDS and t.lower_ not in CHANGE_WORDS:
            continue
        words = _changed(t, skip)
        while words and words[-1].pos_ in ("ADP", "PUNCT", "CCONJ", "DET"):
            words.pop()
        thing = "".join(w.text_with_ws for w in words).strip()
        if not thing or not any(w.pos_ in ("NOUN", "PROPN") for w in words):
            continue
        tail = doc[end:].text.strip().rstrip("?.!").strip()
        after = ("" if tail.startswith(",") else " ") + tail if tail else ""
        wh = next((w.i for w in doc if w.lower_ in ("how", "what", "by", "which")), 0)
        lead = doc[:wh].text.strip()
        lead = f"{lead} " if lead.endswith(",") else ""
        return [f"{lead}{'W' if lead == '' else 'w'}hat is {thing} in {member}{after}?" for member in _elliptical(doc, spans)]
    return None


_THING_POS = frozenset({"NOUN", "PROPN", "ADJ", "DET", "PART", "CCONJ", "NUM", "ADP"})


def _nominal(words: Sequence[Token]) -> bool:
    return any(w.pos_ in ("NOUN", "PROPN") for w in words)


def _changed(t: Token, skip: set[int]) -> list[Token]:
    """The words of what a change word says changed: the words between a question's auxiliary and the change
    word ("did [X's revenue] *increase*"), the subject of a change verb ("X's revenue *increased*"), what a change noun is of ("the *growth in* X's revenue"), or the nominal words before a
    change word the parser took for a noun ("did [X's wholesale revenue] *increase*")."""
    aux = next((w for w in reversed(t.doc[: t.i]) if w.lower_ in AUXILIARIES), None)
    if aux is not None and aux.lemma_.lower() == "be":
        aux = None  # "what *is* the percent change in X": a copula, not "did X change"
    between = list(t.doc[aux.i + 1 : t.i]) if aux is not None else []
    if between and all(w.pos_ in _THING_POS and w.lower_ != "to" for w in between) and _nominal(between):
        return [w for w in between if w.i not in skip]  # "how much did [X's revenue] increase": the question's subject
    subj = next((c for c in t.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None and t.pos_ not in ("VERB", "AUX"):
        prep = next((c for c in t.children if c.dep_ == "prep" and c.lower_ in ("in", "of")), None)
        subj = next((c for c in prep.children if c.dep_ == "pobj"), None) if prep is not None else None
    if subj is not None and subj.pos_ != "PRON" and subj.i not in skip:
        return [w for w in subj.subtree if w.i not in skip]
    mods = [c for c in t.lefts if c.dep_ in ("poss", "compound", "amod", "nmod", "nsubj")]
    if not mods:
        return []
    first = min(w.i for c in mods for w in c.subtree)
    return [w for w in t.doc[first : t.i] if w.i not in skip]


def _elliptical(doc: Doc, spans: Sequence[tuple[int, int]]) -> list[str]:
    """The members' texts, a member that holds no noun completed with the last member's words after its own
    modifier ("from the *third* to the fourth quarter of 2025": "the third quarter of 2025")."""
    last_a, last_b = spans[-1]
    words = [t for t in doc[last_a:last_b]]
    cut = next((i for i, t in enumerate(words) if t.pos_ not in ("DET",)), 0)
    tail = " ".join(t.text for t in words[cut + 1 :]) if cut + 1 < len(words) and words[cut].pos_ in ("ADJ", "NUM") else ""
    out = []
    for a, b in spans:
        text = doc[a:b].text
        if tail and not any(t.pos_ in ("NOUN", "PROPN") for t in doc[a:b]):
            text = f"{text} {tail}"
        out.append(text)
    return out


def _ratio_to(doc: Doc) -> tuple[str, str] | None:
    """"ratio of A to B": A's and B's sub-questions."""
    pair = _to_pair(doc, next((t for t in doc if t.lower_ == "of" and t.head.lower_ == "ratio"), None))
    if pair is None:
        return None
    to, sa, sb = pair
    drop_b = set(range(to.i, sb[1]))
    return _render(doc, drop_b), _render(doc, drop_b, {sa[0]: (sa[1], doc[sb[0] : sb[1]].text)})


def _exceed(doc: Doc) -> tuple[str, str] | None:
    """"does A exceed B": the subject's and the object's sub-questions."""
    verb = next((t for t in doc if t.lemma_.lower() == "exceed"), None)
    if verb is None:
        return None
    subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    obj = next((c for c in verb.children if c.dep_ == "dobj"), None)
    if subj is None or obj is None:
        return None
    # the object with its modifiers ("the figure *in the operating plan*"): they are its own, not the subject's
    sa, sb = _span(subj, skip=("prep", "punct", "conj", "cc")), _span(obj, skip=("punct", "conj", "cc"))
    drop_b = set(range(sb[0], sb[1]))
    return _render(doc, drop_b), _render(doc, drop_b, {sa[0]: (sa[1], doc[sb[0] : sb[1]].text)})


# ------------------------------------------------------------------------------------------ computing
_APPLY = {"sum": "sum", "difference": "difference", "ratio": "ratio", "percent_change": "pct_change",
          "max": "max", "min": "min", "count": "count"}  # fmt: skip
_SHOWN = {"sum": " + ", "difference": " - ", "ratio": " / "}


def compute(operation: str, figures: Sequence[Figure], *, absolute: bool = False) -> Computation:
    """``operation`` over cited figures, exactly (module docstring); ValueError when the figures do not fit
    (fewer than the operation needs, different units, a division by zero)."""
    from stratagraph.tools.calculate import CalculationError, apply

    if operation in ("greater", "less", "equal"):
        return _compare(operation, figures)
    needs = {"difference": 2, "ratio": 2, "percent_change": 2}.get(operation, 1)
    if len(figures) < needs:
        raise ValueError(f"{operation} needs {needs} amounts, got {len(figures)}")
    kinds = {_kind(f.quantity) for f in figures}
    if operation != "count" and len(kinds) > 1:
        raise ValueError(f"the amounts are of different kinds ({', '.join(sorted(kinds))})")
    figs = list(figures)
    if operation in ("difference", "ratio", "percent_change") and figs[0].value == figs[1].value:
        raise ValueError(f"both amounts are {figs[0].quantity.raw}: the evidence gives one figure for both")
    if operation == "difference" and absolute and figs[0].value < figs[1].value:
        figs = [figs[1], figs[0]]
    values = [f.value for f in figs]
    try:
        result = apply(_APPLY[operation], values)
    except CalculationError as exc:
        raise ValueError(str(exc)) from None
    raw = [f.quantity.raw for f in figs]
    if operation in _SHOWN:
        expression = _SHOWN[operation].join(raw)
    elif operation == "percent_change":
        expression = f"({raw[1]} - {raw[0]}) / |{raw[0]}| × 100"
    else:
        expression = f"{operation}({', '.join(raw)})"
    unit = "%" if operation == "percent_change" else None if operation in ("ratio", "count") else (
        figs[0].unit if len({f.unit for f in figs}) == 1 else figs[0].quantity.currency)  # fmt: skip
    if operation == "difference" and unit == "%":
        unit = "pp"  # 42.2% - 41.3%: 0.9 percentage points, not 0.9%
    return Computation(operation=operation, expression=expression, operands=[f.operand() for f in figs],
                       result=result, unit=unit)  # fmt: skip


def _compare(operation: str, figures: Sequence[Figure]) -> Computation:
    """Whether the first amount is greater than (less than, equal to) the second: "yes" or "no"."""
    if len(figures) < 2:
        raise ValueError(f"{operation} needs two amounts, got {len(figures)}")
    a, b = figures[0], figures[1]
    if _kind(a.quantity) != _kind(b.quantity):
        raise ValueError(f"the amounts are of different kinds ({_kind(a.quantity)}, {_kind(b.quantity)})")
    holds = {"greater": a.value > b.value, "less": a.value < b.value, "equal": a.value == b.value}[operation]
    return Computation(operation=f"deduce ({operation})", expression=f"{a.quantity.raw} {operation} {b.quantity.raw}",
                       operands=[a.operand(), b.operand()], result="yes" if holds else "no")  # fmt: skip


def _kind(q: Quantity) -> str:
    """What an amount is for arithmetic: a percentage, an amount of one currency, or a plain number (a count or
    a measure: its counted noun is how the sentence words it, not a unit to convert)."""
    if q.unit in ("%", "pp", "bp"):
        return q.unit
    return q.currency or "number"


def _percent_places(value: Decimal) -> Decimal:
    """A computed percentage as reports write one: to one decimal place (32.64 -> 32.6, 12.5 -> 12.5), two
    below one percent (0.483 -> 0.48), without trailing zeros."""
    if value == value.to_integral_value():
        return value
    rounded = value.quantize(Decimal("0.1") if abs(value) >= 1 else Decimal("0.01"))
    return rounded.to_integral_value() if rounded == rounded.to_integral_value() else rounded.normalize()


def render(computation: Computation, figures: Sequence[Figure] = (), which_way: bool = False) -> str:
    """A computed result as text, with the operands' currency and unit ("$2,980,000", "12.5%", "1.43"); a
    change asked as which way it went (:attr:`Plan.which_way`) as its direction and size ("down by $38
    thousand")."""
    result = computation.result
    if not isinstance(result, Decimal):
        return str(result)
    if which_way and result:
        size = render(computation.model_copy(update={"result": abs(result)}), figures)
        return f"{'up' if result > 0 else 'down'} by {size}"
    if computation.operation == "percent_change":
        return render_amount(_percent_places(result), "%")
    if computation.operation == "count":
        return str(result)
    if computation.operation == "ratio":
        return render_amount(result.quantize(Decimal("0.01")) if result != result.to_integral_value() else result)
    currency = next((f.quantity.currency for f in figures if f.quantity.currency), None)
    scales = {f.quantity.scale for f in figures}
    return render_amount(result, computation.unit, currency, scales.pop() if len(scales) == 1 else 1)


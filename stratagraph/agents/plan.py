"""KAG's logical-form planner (KAG §2.3.1, Table 1; Alg. 1 line 4: ``lf_list <- LFPlanner(query_cur)``).

A plan is a list of :class:`LogicalForm` steps, each an executable function of Table 1 that binds a variable
later steps refer to by name:

* ``o1 = Retrieval(s=..., p=..., o=..., constraints)``: what the knowledge says about ``s`` through ``p``; its
  target is a text span, one typed quantity (``amount``), a quantity else a text span (``number``), or the set
  of quantities of one table column (``amounts``);
* ``sort1 = Sort(o1, direction=min|max, limit=n)``;
* ``math1 = Math(sum|difference|ratio|percent_change|count|min|max of o1, o2, ...)`` (count may keep only the
  members above or below a threshold);
* ``deduce1 = Deduce(left=o1, right=o2, op=entailment|greater|less|equal|choice)``;
* ``Output(x)``: the answer.

With a chat model the plan is the model's (prompts ``kag_plan.system`` / ``kag_plan.user``, structured
output :class:`KagPlan`), checked before it runs (:func:`from_planned`): unknown actions and operations are
dropped, a step reading a variable no earlier step (or earlier round) binds is dropped with the steps that
need it (steps beyond :data:`MAX_STEPS` too), a Retrieval whose result feeds Math, Sort or a numeric Deduce is
made numeric, an earlier variable a Retrieval names in words ("Who directed o1?", ``subject=o1``) is read, and a
missing Output is added for the last variable. A plan with no step left, or no usable reply, falls back to the
rules below (in a later round: the rules' plan of the question itself, every retrieval widened) and the trace
says so.

Without one, the rule-based planner (:func:`rule_plan`) reads the question's form, in this order:

1. ``how many <things> ... more than / over / under N``: the set of a table column's rows (Retrieval
   ``amounts``), counted with the threshold (Math count);
2. a superlative (largest, highest, lowest, most, least...) asked with which/what: the set, then Sort with
   its direction and limit 1; the Output is the row's label, or its value when a number is asked for;
3. a percentage change ("by what percentage did X grow from A to B", "percent change ... between A and
   B"): two amounts (A's, B's), Math percent_change from the first to the second;
4. a ratio ("ratio of A to B", "how many times ... A than B"): Math ratio A / B;
5. a difference ("how much more / less / higher ... A than B", "difference between A and B", "by how much
   does A exceed B"): Math difference A - B ("between" gives the larger first, so the difference is the
   gap); a change ("how much did X grow from A to B"): Math difference B - A;
6. a sum ("combined", "total", "sum", "together", "altogether", "in all") over two or more coordinated
   names ("the Police and Fire departments", "A, B and C"): Math sum;
7. a yes/no comparison ("is A more / greater / less than B?"): two amounts and Deduce greater or less;
8. a choice ("which is larger / came first, A or B?"): one Retrieval per option and Deduce choice (typed
   quantities when both have one, else the dates or numbers the evidence states for each, in code);
9. anything else: the question decomposed (BiG-RAG Alg. 5, :func:`stratagraph.retrieval.decompose`) into
   sub-questions, one Retrieval each, a later one referring to an earlier answer by variable; a yes/no
   question over coordinated names ends with Deduce entailment; a last sub-question asking for a number (its
   answer type is a number, or it asks what / which ... of an amount noun such as budget, revenue, cost)
   retrieves a typed quantity first. When decomposition leaves the wh-phrase inside the one reference it
   resolves first and ends with a statement, the order is turned around (:func:`_invert`).

An operand of 3-7 is the question with the coordination replaced by that one name (or, around "than", the
name on that side): every word the names share ("the FY2025 overtime budget of") stays in each operand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, field_validator

from stratagraph.agents.common import Step, agent_node
from stratagraph.prompts import load_prompt

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

__all__ = [
    "KagPlan",
    "LogicalForm",
    "PlannedStep",
    "from_planned",
    "plan",
    "render_plan",
    "rule_plan",
]

Action = Literal["retrieval", "sort", "math", "deduce", "output"]
Target = Literal["text", "number", "amount", "amounts"]
MAX_STEPS = 12  # a plan longer than this is cut (a small model may ramble)
MATH_OPS = ("sum", "difference", "ratio", "percent_change", "count", "min", "max")
DEDUCE_OPS = ("entailment", "greater", "less", "equal", "choice")
VAR = re.compile(r"\{(\w+)\}")


class LogicalForm(BaseModel):
    """One step of a plan (KAG Table 1)."""

    action: Action
    var: str  # the variable the step binds
    question: str = ""  # lf_subquery: the step in plain words, "{o1}" where an earlier answer goes
    subject: str = ""
    predicate: str = ""
    object: str = ""
    constraints: dict[str, str] = Field(default_factory=dict)
    target: Target = "text"
    inputs: list[str] = Field(default_factory=list)  # Sort / Math / Deduce / Output operands
    operation: str = ""  # Math: MATH_OPS; Deduce: DEDUCE_OPS; Sort: min | max
    limit: int = 1
    output: Literal["label", "value"] = "label"  # Sort: what the sorted members give
    phrase: str = ""  # Retrieval: how the question names what this step binds ("the recording of "Dear Brother"")
    level: bool = False  # Retrieval of an amount that is a level (not a change, not a percentage)
    broad: bool = False  # widen retrieval at once (a reflection round's supplementary question)

    def needs(self) -> list[str]:
        """The variables the step reads."""
        return list(dict.fromkeys([*self.inputs, *VAR.findall(self.question)]))

    def render(self) -> str:
        """The step in Table 1's notation."""
        if self.action == "retrieval":
            parts = [f"s={self.subject}"] if self.subject else []
            parts += [f"p={self.predicate}"] if self.predicate else []
            if not parts:
                parts = [f"q={self.question!r}"]
            parts.append(f"o={self.object or self.target}")
            parts += [f"{k}={v}" for k, v in self.constraints.items()]
            return f"{self.var} = Retrieval({', '.join(parts)})"
        if self.action == "sort":
            return f"{self.var} = Sort({', '.join(self.inputs)}, direction={self.operation}, limit={self.limit})"
        if self.action == "math":
            extra = "".join(f", {k}={v}" for k, v in self.constraints.items())
            return f"{self.var} = Math({self.operation}({', '.join(self.inputs)}){extra})"
        if self.action == "deduce":
            left, right = (self.inputs + ["?", "?"])[:2]
            return f"{self.var} = Deduce(left={left}, right={right}, op={self.operation})"
        return f"Output({', '.join(self.inputs)})"


def render_plan(steps: Sequence[LogicalForm]) -> str:
    return "; ".join(s.render() for s in steps)


# ------------------------------------------------------------------------------------------ the LLM's plan
class PlannedStep(BaseModel):
    """One step as the chat model writes it."""

    action: str = Field(description="Retrieval, Sort, Math, Deduce or Output")
    var: str = Field(description="the variable this step binds, e.g. o1, math1; Output binds none (write out)")
    question: str = Field("", description="Retrieval: the sub-question in plain words; {o1} refers to an earlier answer")
    subject: str = Field("", description="Retrieval: s, a name or an earlier variable")
    predicate: str = Field("", description="Retrieval: p, the relation or attribute asked for")
    object: str = Field("", description="Retrieval: o, the kind of answer (Person, Amount, Date...)")
    constraints: list[str] = Field(default_factory=list, description="Retrieval: conditions as key=value, e.g. period=FY2025")
    numeric: bool = Field(False, description="Retrieval: true when the answer is an amount or count to compute with")
    inputs: list[str] = Field(default_factory=list, description="Sort/Math/Deduce/Output: the variables used")
    operation: str = Field("", description="Math: sum, difference, ratio, percent_change, count, min, max; "
                           "Deduce: greater, less, equal, entailment; Sort: max or min")  # fmt: skip
    limit: int = Field(1, description="Sort: how many to keep")

    @field_validator("inputs", mode="before")
    @classmethod
    def _inputs(cls, v: Any) -> Any:  # "o1, o2" as a small model may write it
        return [x for x in re.split(r"[,\s]+", v) if x] if isinstance(v, str) else v

    @field_validator("constraints", mode="before")
    @classmethod
    def _constraints(cls, v: Any) -> Any:  # {"period": "FY2025"} or "period=FY2025"
        if isinstance(v, dict):
            return [f"{k}={val}" for k, val in v.items()]
        return [v] if isinstance(v, str) and v else ([] if v in (None, "") else v)

    @field_validator("question", "subject", "predicate", "object", "operation", "var", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:  # null where text is expected
        return "" if v is None else v


class KagPlan(BaseModel):
    """The chat model's plan: logical-form steps in execution order."""

    steps: list[PlannedStep] = Field(description="the steps, in order; the last one is Output")


_ACTIONS = {"retrieval": "retrieval", "retrieve": "retrieval", "sort": "sort", "math": "math", "deduce": "deduce",
            "output": "output", "count": "math"}  # fmt: skip
_MATH_SYNONYMS = {"add": "sum", "add_up": "sum", "addition": "sum", "plus": "sum", "total": "sum", "sum_of": "sum",
                  "subtraction": "difference", "subtract": "difference", "minus": "difference",
                  "diff": "difference", "divide": "ratio", "division": "ratio", "percent": "percent_change",
                  "percentage_change": "percent_change", "pct_change": "percent_change", "maximum": "max",
                  "minimum": "min", "largest": "max", "smallest": "min"}  # fmt: skip
_DEDUCE_SYNONYMS = {"greater_than": "greater", "more": "greater", "larger": "greater", "less_than": "less",
                    "smaller": "less", "fewer": "less", "equals": "equal", "same": "equal", "entails": "entailment",
                    "compare": "choice"}  # fmt: skip


def from_planned(planned: KagPlan, known: Iterable[str] = (), question: str = "") -> tuple[list[LogicalForm], list[str]]:
    """The model's plan as logical forms, checked (module docstring); and what was dropped, and why."""
    bound = set(known)
    steps: list[LogicalForm] = []
    dropped: list[str] = []
    if len(planned.steps) > MAX_STEPS:
        dropped.append(f"steps after the first {MAX_STEPS}")
    for n, p in enumerate(planned.steps[:MAX_STEPS], start=1):
        action = _ACTIONS.get(p.action.strip().lower().split("(")[0].strip())
        if action is None:
            dropped.append(f"step {n}: unknown action {p.action!r}")
            continue
        var = re.sub(r"\W", "", p.var or "") or f"{action[:4]}{n}"
        inputs = [re.sub(r"[{}\s]", "", i) for i in p.inputs if i and i.strip()]
        op = re.sub(r"[\s-]+", "_", p.operation.strip().lower())
        if action == "math":
            op = _MATH_SYNONYMS.get(op, op) if p.action.strip().lower() != "count" else "count"
            if op not in MATH_OPS:
                dropped.append(f"step {n}: unknown Math operation {p.operation!r}")
                continue
        elif action == "deduce":
            op = _DEDUCE_SYNONYMS.get(op, op)
            if op not in DEDUCE_OPS:
                dropped.append(f"step {n}: unknown Deduce operation {p.operation!r}")
                continue
        elif action == "sort":
            op = "min" if op in ("min", "asc", "ascending", "minimum", "smallest") else "max"
        constraints = {}
        for c in p.constraints:
            key, sep, value = c.partition("=")
            if sep and key.strip() and value.strip():
                constraints[key.strip()] = value.strip()
        form = LogicalForm(
            action=action,  # type: ignore[arg-type]
            var=var,
            question=p.question.strip(),
            subject=p.subject.strip(),
            predicate=p.predicate.strip(),
            object=p.object.strip(),
            constraints=constraints,
            target="number" if (action == "retrieval" and p.numeric) else "text",
            inputs=inputs,
            operation=op,
            limit=max(1, p.limit),
        )
        if action == "retrieval" and not form.question:
            form.question = " ".join(x for x in (form.subject, form.predicate, *constraints.values()) if x) or question
        if action == "retrieval":  # "Who directed o1?" / subject o1: the earlier answer goes into the question
            for v in sorted(bound, key=len, reverse=True):
                form.question = re.sub(rf"(?<![{{\w]){re.escape(v)}(?![}}\w])", "{" + v + "}", form.question)
            if form.subject in bound and "{" + form.subject + "}" not in form.question:
                form.question = f"{form.question} {{{form.subject}}}"
        missing = [v for v in form.needs() if v not in bound]
        if missing:
            dropped.append(f"step {n}: reads {', '.join(missing)}, which no earlier step binds")
            continue
        if action in ("sort", "math", "deduce", "output") and not inputs:
            dropped.append(f"step {n}: {action} without inputs")
            continue
        steps.append(form)
        if action != "output":
            bound.add(var)
    _type_operands(steps)
    if steps and not any(s.action == "retrieval" for s in steps):
        dropped.append("no Retrieval step")
        return [], dropped
    if steps and steps[-1].action != "output":
        last = next((s.var for s in reversed(steps) if s.action != "output"), None)
        if last:
            steps.append(LogicalForm(action="output", var="out", inputs=[last]))
    return steps, dropped


def _type_operands(steps: list[LogicalForm]) -> None:
    """A Retrieval read by Math, by Sort or by a numeric Deduce must bind quantities."""
    by_var = {s.var: s for s in steps}
    for s in steps:
        numeric = s.action in ("math", "sort") or (s.action == "deduce" and s.operation in ("greater", "less", "equal"))
        if not numeric:
            continue
        many = s.action == "sort" or (s.action == "math" and s.operation in ("count", "min", "max") and len(s.inputs) == 1)
        for v in s.inputs:
            src = by_var.get(v)
            if src is not None and src.action == "retrieval":
                src.target = "amounts" if many else "amount"


# ------------------------------------------------------------------------------------------ rules
_SUM = re.compile(r"\b(?:combined|total|sum|together|altogether|in all|aggregate|add up|added up)\b", re.IGNORECASE)
_DIFF = re.compile(
    r"\bhow (?:much|many) (?:more|less|fewer|higher|lower|larger|smaller|greater|bigger)\b|\bdifference between\b|"
    r"\bby how much\b|\bgap between\b|\bhow much (?:did|does|do|will|would)\b.*\bexceed",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"\bhow much (?:did|does|do|has|have|had|will|would)\b.*\b(?:grow|increase|rise|fall|decrease|decline|drop|change|"
    r"shrink|go up|go down)\b",
    re.IGNORECASE,
)
#: nouns that ask for an amount ("what is the FY2025 overtime *budget*")
MEASURE_NOUNS = frozenset(
    ["budget", "budgets", "revenue", "revenues", "cost", "costs", "amount", "spending", "expenditure", "expenditures", "appropriation", "income", "price", "salary", "population", "margin", "rate", "share", "percentage", "count", "number", "value", "profit", "loss", "sales", "headcount", "balance", "debt", "funding", "allocation", "total", "sum", "figure", "fee", "fees", "tax", "taxes", "capacity", "attendance", "enrollment", "payroll"]
)
_RATIO = re.compile(r"\bratio of\b|\bhow many times\b", re.IGNORECASE)
_PCT = re.compile(
    r"\bby what (?:percent|percentage)\b|\bpercent(?:age)? (?:change|increase|decrease|growth|rise|decline|drop|fall)\b|"
    r"\bwhat (?:percent|percentage) (?:did|does|was|is)\b.*\b(?:increase|decrease|grow|rise|fall|decline|drop|change)",
    re.IGNORECASE,
)
_SUPERLATIVE = re.compile(r"\b(largest|highest|biggest|greatest|most|smallest|lowest|least|fewest)\b", re.IGNORECASE)
_MIN_WORDS = frozenset({"smallest", "lowest", "least", "fewest"})
_THRESHOLD = re.compile(
    r"\b(more than|over|above|exceed(?:s|ing|ed)?|greater than|at least|less than|under|below|fewer than|at most)\s+"
    r"(\$|€|£)?\s?(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|k|m|bn)?\b",
    re.IGNORECASE,
)
_SCALES = {"thousand": 1000, "k": 1000, "million": 10**6, "m": 10**6, "billion": 10**9, "bn": 10**9}
_COMPARE_YN = re.compile(r"\b(more|greater|larger|higher|bigger|less|smaller|lower|fewer)\b.*\bthan\b", re.IGNORECASE)
_GREATER_WORDS = frozenset({"more", "greater", "larger", "higher", "bigger"})
_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ", "X"})


def _span_tokens(tok: Token, skip: Iterable[str] = ("conj", "cc", "punct", "preconj")) -> tuple[int, int]:
    """A token's subtree without the children of the kinds in ``skip`` (and their subtrees); a "prep" in
    ``skip`` keeps "of" ("the Department of Parks")."""
    drop: set[int] = set()
    for child in tok.children:
        if child.dep_ in skip and not (child.dep_ == "prep" and child.lower_ == "of"):
            drop.update(t.i for t in child.subtree)
    idx = [t.i for t in tok.subtree if t.i not in drop]
    return min(idx), max(idx) + 1


def coordination(doc: Doc) -> list[tuple[int, int]]:
    """The members of the coordination of names in the question ("the Police and Fire departments", "A, B and
    C", "between FY2024 and FY2025"), as token spans; [] when there is none. When there are several, the one
    whose members are all proper names (or periods) wins over one of common nouns ("the salaries and benefits
    of *Branch Operations and Outreach*"), then the last."""
    found = _coordinations(doc)
    if not found:
        return []

    def named(spans: list[tuple[int, int]]) -> bool:
        return all(any(t.pos_ == "PROPN" or t.text[:1].isupper() or t.like_num for t in doc[a:b]) for a, b in spans)

    return max(found, key=lambda spans: (named(spans), spans[0][0]))


def _coordinations(doc: Doc) -> list[list[tuple[int, int]]]:
    out: list[list[tuple[int, int]]] = []
    for tok in doc:
        if tok.dep_ == "conj" or tok.pos_ not in _NOMINAL:
            continue
        chain, frontier = [tok], [tok]
        while frontier:
            cur = frontier.pop()
            for c in cur.children:
                if c.dep_ == "conj" and c.pos_ in _NOMINAL and c not in chain:
                    chain.append(c)
                    frontier.append(c)
        if len(chain) < 2:
            continue
        chain.sort(key=lambda t: t.i)
        out.append([_span_tokens(t, skip=("conj", "cc", "punct", "preconj", "prep", "relcl", "acl")) for t in chain])
    return out


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


def coordinated_operands(doc: Doc, spans: Sequence[tuple[int, int]]) -> list[str]:
    """One sub-question per member: the question with the whole coordination replaced by that member."""
    start, end = spans[0][0], spans[-1][1]
    return [_render(doc, set(), {start: (end, doc[a:b].text)}) for a, b in spans]


def than_operands(doc: Doc) -> tuple[str, str] | None:
    """The two sides of "A ... than B": the question without "than B" (A's), and with A replaced by B. An
    elliptical "than in Q2" replaces the phrase with the same preposition before it ("in Q3")."""
    than = next((t for t in doc if t.lower_ == "than"), None)
    if than is None:
        return None
    skip = ("prep", "relcl", "acl", "punct")  # a name may hold "and" ("than for Roads and Bridges")
    obj = next((c for c in than.children if c.dep_ == "pobj"), None)
    prep = next((c for c in than.children if c.dep_ == "prep"), None)
    left: tuple[int, int] | None = None
    if obj is not None:
        r_start, r_end = _span_tokens(obj, skip=skip)
        r_start = max(r_start, than.i + 1)
    elif prep is not None:
        pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
        r_start = prep.i
        r_end = _span_tokens(pobj, skip=skip)[1] if pobj is not None else prep.i + 1
        twin = [t for t in doc[: than.i] if t.lower_ == prep.lower_ and t.dep_ == "prep"]
        if twin:
            left = min(t.i for t in twin[-1].subtree), max(t.i for t in twin[-1].subtree) + 1
    else:
        return None
    if r_end <= r_start:
        return None
    left = left or _left_side(doc, than.i)
    if left is None:
        return None
    l_start, l_end = left
    drop = set(range(than.i, r_end))
    a = _render(doc, drop)
    b = _render(doc, drop, {l_start: (l_end, doc[r_start:r_end].text)})
    return a, b


_LEAD = frozenset({"WRB", "WDT", "WP", "JJR", "RBR", "RB"})


def _left_side(doc: Doc, before: int) -> tuple[int, int] | None:
    """The compared thing before "than": the clause's subject, else the nearest noun phrase before it (without
    the wh-words and auxiliaries it may open with), cut before the comparative word."""
    comparative = next((t.i for t in doc[:before] if t.tag_ in ("JJR", "RBR") or t.lower_ in ("more", "less")), None)
    subjects = [t for t in doc[:before] if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ in ("NOUN", "PROPN")]
    if subjects:
        start, end = _span_tokens(subjects[-1], skip=("prep", "relcl", "acl", "punct", "conj", "cc"))
    else:
        spans = []
        for c in doc.noun_chunks:
            if c.end > before:
                continue
            lead = [t.i for t in c if t.tag_ in _LEAD or t.pos_ in ("AUX", "VERB")]
            start = (max(lead) + 1) if lead else c.start
            if start < c.end and any(doc[i].pos_ in ("NOUN", "PROPN") for i in range(start, c.end)):
                spans.append((start, c.end))
        if not spans:
            return None
        start, end = spans[-1]
    if comparative is not None and start < comparative < end:
        end = comparative
    return (start, end) if end > start else None


def _from_to(doc: Doc) -> tuple[int, int, list[tuple[int, int]]] | None:
    """"from A to B": where the phrase starts and ends, and the spans of A and B."""
    frm = next((t for t in doc if t.lower_ == "from" and t.dep_ == "prep"), None)
    to = next((t for t in doc if t.lower_ == "to" and frm is not None and t.i > frm.i), None)
    if frm is None or to is None:
        return None
    a = next((c for c in frm.children if c.dep_ == "pobj"), None)
    b = next((c for c in to.children if c.dep_ == "pobj"), None)
    if a is None or b is None:
        return None
    sa = _span_tokens(a, skip=("prep", "punct", "conj", "cc"))
    sb = _span_tokens(b, skip=("prep", "punct", "conj", "cc"))
    return frm.i, sb[1], [sa, sb]


def _threshold(question: str) -> dict[str, str] | None:
    m = _THRESHOLD.search(question)
    if not m:
        return None
    word = m.group(1).lower()
    number = m.group(3).replace(",", "")
    scale = _SCALES.get((m.group(4) or "").lower(), 1)
    from decimal import Decimal

    value = Decimal(number) * scale
    relation = "below" if word in ("less than", "under", "below", "fewer than", "at most") else "above"
    if word in ("at least", "at most"):
        relation += "_or_equal"
    return {relation: format(value, "f")}


def _retrieval(var: str, question: str, target: Target, **extra: Any) -> LogicalForm:
    return LogicalForm(action="retrieval", var=var, question=question, target=target, object=target, **extra)


def _arith(question: str, operation: str, operands: Sequence[str], reason: str, level: bool = False) -> tuple[list[LogicalForm], str]:
    level = level or operation in ("percent_change", "ratio")  # the operands are levels, whatever the question's verb
    steps = [_retrieval(f"o{i}", q, "amount", level=level) for i, q in enumerate(operands, start=1)]
    steps.append(LogicalForm(action="math", var="math1", operation=operation, inputs=[s.var for s in steps]))
    steps.append(LogicalForm(action="output", var="out", inputs=["math1"]))
    return steps, reason


def rule_plan(nlp: Any, question: str) -> tuple[list[LogicalForm], str]:
    """The rule-based plan of ``question`` (module docstring) and the rule that made it."""
    from stratagraph.agents.extract import AnswerType, question_shape
    from stratagraph.retrieval.decompose import decompose, parse

    q = question.strip()
    doc = parse(nlp, q)
    lower = q.lower()
    shape = question_shape(q)
    coord = coordination(doc)

    threshold = _threshold(q) if lower.startswith("how many") else None
    if threshold:
        steps = [
            _retrieval("o1", _THRESHOLD.sub(" ", q), "amounts"),
            LogicalForm(action="math", var="math1", operation="count", inputs=["o1"], constraints=threshold),
            LogicalForm(action="output", var="out", inputs=["math1"]),
        ]
        return steps, "count with a threshold"
    sup = _SUPERLATIVE.search(q)
    if sup and re.match(r"^\s*(?:which|what)\b", lower) and not coord and shape.type != AnswerType.CHOICE:
        direction = "min" if sup.group(1).lower() in _MIN_WORDS else "max"
        output = "value" if shape.type == AnswerType.NUMBER else "label"
        steps = [
            _retrieval("o1", q, "amounts"),
            LogicalForm(action="sort", var="sort1", inputs=["o1"], operation=direction, limit=1, output=output),
            LogicalForm(action="output", var="out", inputs=["sort1"]),
        ]
        return steps, f"superlative ({sup.group(1).lower()})"
    if _PCT.search(q):
        ranged = _from_to(doc)
        if ranged is not None:
            start, end, spans = ranged
            operands = [_render(doc, set(), {start: (end, doc[a:b].text)}) for a, b in spans]
            return _arith(q, "percent_change", operands, "percentage change (from A to B)")
        if len(coord) == 2:
            return _arith(q, "percent_change", coordinated_operands(doc, coord), "percentage change (between A and B)")
    if _CHANGE.search(q):
        ranged = _from_to(doc)
        if ranged is not None or len(coord) == 2:
            if ranged is not None:
                start, end, spans = ranged
                operands = [_render(doc, set(), {start: (end, doc[a:b].text)}) for a, b in spans]
            else:
                operands = coordinated_operands(doc, coord)
            return _arith(q, "difference", operands[::-1], "change from A to B (B - A)", level=True)
    if _RATIO.search(q):
        sides = than_operands(doc) if "than" in lower else None
        if sides is None and len(coord) == 2:
            sides = tuple(coordinated_operands(doc, coord))  # type: ignore[assignment]
        if sides is None and " to " in lower and len(coord) < 2:
            sides = _ratio_to(doc)
        if sides:
            return _arith(q, "ratio", list(sides), "ratio")
    if _DIFF.search(q):
        sides = than_operands(doc) if re.search(r"\bthan\b", lower) else None
        if sides:
            return _arith(q, "difference", list(sides), "difference (A than B)")
        if len(coord) == 2:
            steps, reason = _arith(q, "difference", coordinated_operands(doc, coord), "difference between two")
            steps[-2].constraints["order"] = "larger_first"
            return steps, reason
        if re.search(r"\bexceed", lower):
            sides = _exceed_operands(doc)
            if sides:
                return _arith(q, "difference", list(sides), "difference (A exceeds B)")
    if _SUM.search(q) and len(coord) >= 2:
        return _arith(q, "sum", coordinated_operands(doc, coord), f"sum of {len(coord)}")
    if shape.type == AnswerType.YES_NO and _COMPARE_YN.search(q):
        sides = than_operands(doc)
        if sides:
            word = _COMPARE_YN.search(q).group(1).lower()  # type: ignore[union-attr]
            op = "greater" if word in _GREATER_WORDS else "less"
            steps = [_retrieval("o1", sides[0], "amount"), _retrieval("o2", sides[1], "amount"),
                     LogicalForm(action="deduce", var="deduce1", operation=op, inputs=["o1", "o2"]),
                     LogicalForm(action="output", var="out", inputs=["deduce1"])]  # fmt: skip
            return steps, f"yes/no comparison ({op})"
    options = _options(doc, q, shape)
    if options:
        opening = re.split(r"[,:;]", q.rstrip("?"))[0]
        for opt in options:
            opening = opening.replace(opt, " ")
        stem_text = " ".join(re.sub(r"\bor\b", " ", opening).split())
        tail = re.search(r"\s((?:in|for|during|at|as of|by)\s.+)$", options[-1], re.IGNORECASE)
        shared = tail.group(1) if tail and not re.search(r"\s(?:in|for|during|at|as of|by)\s", options[0], re.IGNORECASE) else ""
        if shared:
            options[-1] = options[-1][: tail.start()].strip()  # type: ignore[union-attr]
        words = set(re.findall(r"[a-z]+", lower))
        target: Target = "number" if words & (_GREATER_WORDS | {"less", "smaller", "lower", "fewer", "most", "least"}) else "text"
        steps = [_retrieval(f"o{i}", f"{opt} {shared} {stem_text}".strip(), target, subject=opt)
                 for i, opt in enumerate(options, start=1)]  # fmt: skip
        steps.append(LogicalForm(action="deduce", var="deduce1", operation="choice", inputs=["o1", "o2"],
                                 constraints={"options": " | ".join(options)}))  # fmt: skip
        steps.append(LogicalForm(action="output", var="out", inputs=["deduce1"]))
        return steps, "choice between two"
    subs = decompose(nlp, q)
    inverted = _invert(nlp, subs)
    subs = inverted or subs
    names = {sq.target: f"o{i}" for i, sq in enumerate(subs, start=1)}
    steps = []
    for sq in subs:
        text = VAR.sub(lambda m: "{" + names.get(m.group(1), m.group(1)) + "}", sq.text)
        target: Target = "text"
        if sq.kind == "final" and _asks_amount(doc, shape):
            target = "number"
        phrase = "" if sq.kind == "final" else _phrase(text)
        steps.append(_retrieval(names[sq.target], text, target, phrase=phrase))
    conjuncts = [s for s, sq in zip(steps, subs, strict=True) if sq.kind == "conjunct"]
    if shape.type == AnswerType.YES_NO and len(conjuncts) == 2:
        steps = [s for s, sq in zip(steps, subs, strict=True) if sq.kind != "final"]
        steps.append(LogicalForm(action="deduce", var="deduce1", operation="entailment", inputs=[s.var for s in conjuncts]))
        steps.append(LogicalForm(action="output", var="out", inputs=["deduce1"]))
        return steps, "yes/no over coordinated names"
    steps.append(LogicalForm(action="output", var="out", inputs=[steps[-1].var]))
    return steps, f"decomposed into {len(subs)} sub-question{'s' if len(subs) > 1 else ''}" + (
        " (the asked-for reference last)" if inverted else "")


_WH = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "how"})


def _phrase(sub_question: str) -> str:
    """What a sub-question asks for, in the question's words: without its opening "What is" / "Which" and
    without the variables it reads ("What is the recording of "Dear Brother"?" -> "the recording of "Dear
    Brother""); the retrieval of a later step that reads its answer searches with these words too."""
    text = VAR.sub(" ", sub_question)
    text = re.sub(r"^\s*(?:what|which|who|whom)\s+(?:is|are|was|were)?\s*", "", text, flags=re.IGNORECASE)
    return " ".join(text.rstrip("?. ").split())


def _options(doc: Doc, question: str, shape: Any) -> list[str]:
    """A choice's two options: the answer-type rule's ("..., A or B?") when both are short names, else the two
    names coordinated by "or" in a question opening with which / who / what."""
    from stratagraph.agents.extract import AnswerType

    if shape.type == AnswerType.CHOICE and len(shape.options) == 2 and all(len(o.split()) <= 6 for o in shape.options):
        return list(shape.options)
    if not re.match(r"^\s*(?:which|who|what)\b", question, re.IGNORECASE) or not re.search(r"\bor\b", question, re.IGNORECASE):
        return []
    spans = coordination(doc)
    if len(spans) != 2 or not any(t.lower_ == "or" for t in doc[spans[0][1] : spans[1][0]]):
        return []
    trimmed = []
    for a, b in spans:  # "first The Exies": the name starts at its first capitalised word
        while a < b - 1 and not doc[a].text[:1].isupper():
            a += 1
        trimmed.append((a, b))
    names = [doc[a:b].text for a, b in trimmed]
    return names if all(any(t.pos_ == "PROPN" for t in doc[a:b]) for a, b in trimmed) else []


def _invert(nlp: Any, subs: Sequence[Any]) -> list[Any] | None:
    """Decomposition puts a reference that holds the question's wh-phrase first ("an NFL team based in *what
    state*" -> "Which NFL team based in what state?") and ends with a statement that asks nothing ("Dick
    Humbert played for {var1}?"). The thing asked for is then in the reference, so the order is turned
    around: first the statement, asking for the reference's noun ("... played for which NFL team?"), then
    the reference's question about that answer ("{o1} based in what state?"). Only for one reference."""
    from stratagraph.retrieval.decompose import FINAL, SubQuery, parse

    if len(subs) != 2 or subs[0].kind not in ("relative", "of") or subs[1].kind != "final":
        return None
    ref, final = subs
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", final.text)]
    if any(w in _WH for w in words) or "{" + ref.target + "}" not in final.text:
        return None
    doc = parse(nlp, ref.text)
    if not any(t.lower_ in _WH for t in doc[1:]):
        return None
    opening = 1 if doc[0].lower_ in ("which", "what") else 0
    if opening and len(doc) > 2 and doc[1].lemma_ == "be":
        opening = 2
    chunk = next((c for c in doc.noun_chunks if c.start <= opening < c.end), None)
    if chunk is None or any(t.lower_ in _WH for t in chunk if t.i >= opening):
        return None
    noun = " ".join(t.text for t in chunk if t.i >= opening and t.dep_ not in ("det", "poss"))
    if not noun:
        return None
    bridge = final.text.replace("{" + ref.target + "}", f"which {noun}").rstrip("?. ") + "?"
    rest = ("{" + ref.target + "} " + doc[chunk.end :].text).strip()
    return [
        SubQuery(text=bridge, target=ref.target, depends_on=[], kind="relative"),
        SubQuery(text=rest, target=FINAL, depends_on=[ref.target], kind="final"),
    ]


def _asks_amount(doc: Doc, shape: Any) -> bool:
    """A question asking for a number: its answer type is a number, or it asks what / which ... of an amount
    ("What is the FY2025 overtime budget of the Fire Department?")."""
    from stratagraph.agents.extract import AnswerType

    if shape.type == AnswerType.NUMBER:
        return True
    if shape.type != AnswerType.THING or not doc or doc[0].lower_ not in ("what", "which"):
        return False
    return any(t.lower_ in MEASURE_NOUNS and t.pos_ == "NOUN" for t in doc)


def _ratio_to(doc: Doc) -> tuple[str, str] | None:
    """"ratio of A to B": A's and B's sub-questions."""
    of = next((t for t in doc if t.lower_ == "of" and t.head.lower_ == "ratio"), None)
    to = next((t for t in doc if t.lower_ == "to" and of is not None and t.i > of.i), None)
    if of is None or to is None:
        return None
    a = next((c for c in of.children if c.dep_ == "pobj"), None)
    b = next((c for c in to.children if c.dep_ == "pobj"), None)
    if a is None or b is None:
        return None
    sa = _span_tokens(a, skip=("prep", "punct", "conj", "cc"))
    sb = _span_tokens(b, skip=("prep", "punct", "conj", "cc"))
    drop_b = set(range(to.i, sb[1]))
    return _render(doc, drop_b), _render(doc, drop_b, {sa[0]: (sa[1], doc[sb[0]:sb[1]].text)})


def _exceed_operands(doc: Doc) -> tuple[str, str] | None:
    """"does A exceed B": the subject and the object of "exceed"."""
    verb = next((t for t in doc if t.lemma_.lower() == "exceed"), None)
    if verb is None:
        return None
    subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    obj = next((c for c in verb.children if c.dep_ == "dobj"), None)
    if subj is None or obj is None:
        return None
    sa = _span_tokens(subj, skip=("prep", "punct", "conj", "cc"))
    sb = _span_tokens(obj, skip=("prep", "punct", "conj", "cc"))
    drop_b = set(range(sb[0], sb[1]))
    return _render(doc, drop_b), _render(doc, drop_b, {sa[0]: (sa[1], doc[sb[0]:sb[1]].text)})


# ------------------------------------------------------------------------------------------ the node
def _llm_plan(step: Step, query: str, memory: str, known: Sequence[str]) -> tuple[list[LogicalForm], list[str]] | None:
    messages = [
        SystemMessage(content=load_prompt("kag_plan.system")),
        HumanMessage(
            content=load_prompt("kag_plan.user").format(
                question=step.question,
                query=query,
                memory=memory.strip() or "(nothing yet)",
                variables=", ".join(known) or "(none)",
            )
        ),
    ]
    reply = step.ask(KagPlan, messages, "plan")
    if reply is None:
        return None
    return from_planned(reply, known, query)


@agent_node("plan")
def plan(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 4, ``lf_list <- LFPlanner(query_cur)``: the chat model's logical-form plan, else the
    rule-based one (module docstring). From the second round on, ``query_cur`` is the reflection's
    supplementary question, planned as one widened retrieval rebinding the variable left unresolved, followed
    by the earlier steps that depend on it."""
    from stratagraph.agents.memory import memory_text

    round_no = int(state.get("round") or 0) + 1
    query = str(state.get("query_cur") or step.question)
    bindings = state.get("bindings") or {}
    previous: list[LogicalForm] = list(state.get("plan") or [])
    rebind = str(state.get("rebind") or "")
    steps: list[LogicalForm] = []
    if step.llm is not None:
        planned = _llm_plan(step, query, memory_text(state.get("memory") or []), sorted(bindings))
        if planned is not None:
            steps, dropped = planned
            if dropped:
                step.decide("dropped from the model's plan: " + "; ".join(dropped))
            if not steps:
                step.fallbacks.append("plan: the model's plan has no executable step")
    if not steps:
        if round_no > 1 and rebind:
            steps = _replan(step, query, previous, rebind)
        elif round_no > 1:  # the model's supplementary question, but no usable plan for it: the question, widened
            steps, reason = rule_plan(step.ctx, step.question)
            steps = [s.model_copy(update={"broad": True}) if s.action == "retrieval" else s for s in steps]
            step.decide(f"rule: {reason}, every retrieval widened")
        else:
            steps, reason = rule_plan(step.ctx, query)
            step.decide(f"rule: {reason}")
    step.decide(f"round {round_no}: {render_plan(steps)}")
    return {"plan": steps, "cursor": 0, "round": round_no, "query_cur": query}


def _replan(step: Step, query: str, previous: Sequence[LogicalForm], rebind: str) -> list[LogicalForm]:
    """A reflection round without a chat model: the supplementary question as one widened Retrieval that
    rebinds ``rebind`` (with the target the earlier step had), then the earlier steps that read it."""
    old = next((s for s in previous if s.var == rebind), None)
    target: Target = old.target if old is not None and old.action == "retrieval" else "text"
    first = _retrieval(rebind, query, target, broad=True)
    if old is not None and old.action == "retrieval":
        first = first.model_copy(update={"constraints": dict(old.constraints), "subject": old.subject, "level": old.level})
    decider = next((s for s in previous if s.action == "deduce"), None)
    if rebind == "evidence" and decider is not None:  # a Deduce that could not decide, with more evidence
        step.decide("rule: the whole question's evidence added to the Deduce")
        extra = _retrieval("w1", query, "text", broad=True)
        again = decider.model_copy(update={"inputs": [*decider.inputs, "w1"]})
        return [extra, again, LogicalForm(action="output", var="out", inputs=[again.var])]
    if rebind == "lookup":  # the coordination named one thing: the question is a lookup of one amount
        step.decide("rule: the whole question as one amount")
        return [_retrieval("o1", query, "number", broad=True), LogicalForm(action="output", var="out", inputs=["o1"])]
    if query == step.question and target in ("text", "number"):  # the whole question answers itself
        step.decide(f"rule: the whole question as one widened retrieval binding {rebind}")
        return [first, LogicalForm(action="output", var="out", inputs=[rebind])]
    after: list[LogicalForm] = []
    need = {rebind}
    start = next((i for i, s in enumerate(previous) if s.var == rebind), len(previous))
    for s in previous[start + 1 :]:
        if s.action == "output" or set(s.needs()) & need:
            after.append(s)
            need.add(s.var)
    if not after or after[-1].action != "output":
        after.append(LogicalForm(action="output", var="out", inputs=[rebind]))
    step.decide(f"rule: supplementary question rebinding {rebind}")
    return [first, *after]

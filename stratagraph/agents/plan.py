"""KAG's logical-form planner (KAG §2.3.1, Table 1; Alg. 1 line 4: ``lf_list <- LFPlanner(query_cur)``).

A plan is a list of :class:`LogicalForm` steps, each an executable function of Table 1 that binds a variable
later steps refer to by name:

* ``o1 = Retrieval(s=..., p=..., o=..., constraints)``: what the knowledge says about ``s`` through ``p``; its
  target is an entity (``text``: bound into a later step), one cited amount (``number``), the amounts of one
  table column (``set``), or the reader's whole answer to the step's question (``answer``);
* ``sort1 = Sort(o1, direction=min|max, limit=n)``;
* ``math1 = Math(sum|difference|ratio|percent_change|count|min|max of o1, o2, ...)`` (count may keep only the
  members above or below a threshold);
* ``deduce1 = Deduce(left=o1, right=o2, op=greater|less|equal|choice)``;
* ``Output(x)``: the answer.

With a chat model the plan is the model's (prompt ``kag_plan``, structured output :class:`KagPlan`), checked
before it runs (:func:`from_planned`): unknown actions and operations are dropped, a step reading a variable
no earlier step (or earlier round) binds is dropped with the steps that need it (steps beyond
:data:`MAX_STEPS` too), a Retrieval whose result feeds Math, Sort or a numeric Deduce is made numeric, an
earlier variable a Retrieval names in words ("Who directed o1?", ``subject=o1``) is read, and a missing Output
is added for the last variable. A plan with no step left, or no usable reply, falls back to the rules below
and the trace says so.

Without one, the rule planner (:func:`rule_plan`) reads the question's frame
(:func:`stratagraph.reading.frame_of`):

1. a computation (the frame's arithmetic plan: a sum, a difference, a change, a ratio, a percentage change):
   one ``number`` Retrieval per operand sub-question, then ``Math``;
2. a choice between two named things compared by a date or a number ("which came first, A or B?"): one
   Retrieval of the value per option, then ``Deduce(choice)``;
3. a count past a threshold ("how many line items exceed $500 thousand"): the ``set`` of a table's rows,
   then ``Math(count)`` keeping the rows past it; a superlative ("which line item grows the most"): the set,
   then ``Sort`` with its
   direction, the row's label (or value, when a number is asked) the answer;
4. a question the reader answers over one gathering of evidence (a sum over a set of rows, a section, a
   yes/no, "more or less ... than"): one ``answer`` Retrieval of the whole question;
5. anything else: BiG-RAG's decomposition (Alg. 5), kept only when honest
   (:func:`stratagraph.agents.decompose.honest`: every reference a later step reads asks for an entity), one
   Retrieval per sub-question, a later one reading an earlier answer by variable (the last one ``answer``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from stratagraph.agents.common import Step, agent_node

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
Target = Literal["text", "number", "set", "value", "answer"]
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
                src.target = "set" if many else "number"


# ------------------------------------------------------------------------------------------ rules
def _retrieval(var: str, question: str, target: Target, **extra: Any) -> LogicalForm:
    return LogicalForm(action="retrieval", var=var, question=question, target=target, object=target, **extra)


def rule_plan(nlp: Any, question: str, headings: Sequence[str] = ()) -> tuple[list[LogicalForm], str]:
    """The rule-based plan of ``question`` (module docstring) and the rule that made it; ``headings``: the
    graph's section headings (a coordination that is one of them is one name, not a sum)."""
    from stratagraph.agents.decompose import honest
    from stratagraph.reading import frame_of
    from stratagraph.reading.reader import MAGNITUDES
    from stratagraph.retrieval.decompose import decompose
    from stratagraph.text.question import AnswerType

    from stratagraph.reading.reader import names_one

    frame = frame_of(question)
    out = LogicalForm(action="output", var="out", inputs=[])
    if frame.plan is not None and names_one(frame.plan.joined, headings):
        whole = [_retrieval("o1", question, "answer"), out.model_copy(update={"inputs": ["o1"]})]
        return whole, f"{frame.plan.joined!r} is one heading, not {len(frame.plan.operands)} operands: one reading"
    if frame.type == AnswerType.CHOICE and frame.options and not set(frame.options) <= MAGNITUDES:
        options = list(frame.options) if not set(frame.options) <= {"before", "after", "earlier", "later"} else [
            n.text for n in frame.names][:2]  # fmt: skip
        if len(options) == 2:
            steps = [_retrieval(f"o{i}", question, "value", subject=o) for i, o in enumerate(options, start=1)]
            steps.append(LogicalForm(action="deduce", var="deduce1", operation="choice", inputs=["o1", "o2"],
                                     constraints={"options": " | ".join(frame.options)}))  # fmt: skip
            return [*steps, out.model_copy(update={"inputs": ["deduce1"]})], "choice between two"
    if frame.plan is not None and frame.type != AnswerType.CHOICE:
        p = frame.plan
        steps = [_retrieval(f"o{i}", q, "number") for i, q in enumerate(p.operands, start=1)]
        if p.operation in ("greater", "less"):
            deduce = LogicalForm(action="deduce", var="deduce1", operation=p.operation, inputs=[s.var for s in steps])
            return [*steps, deduce, out.model_copy(update={"inputs": ["deduce1"]})], p.reason
        math = LogicalForm(action="math", var="math1", operation=p.operation, inputs=[s.var for s in steps],
                           constraints={"order": "larger_first"} if p.absolute else {})  # fmt: skip
        return [*steps, math, out.model_copy(update={"inputs": ["math1"]})], p.reason
    whole = [_retrieval("o1", question, "answer"), out.model_copy(update={"inputs": ["o1"]})]
    if frame.threshold is not None:
        side, bound = frame.threshold
        count = LogicalForm(action="math", var="math1", operation="count", inputs=["o1"], constraints={side: format(bound, "f")})
        return [_retrieval("o1", question, "set"), count, out.model_copy(update={"inputs": ["math1"]})], "count past a threshold"
    if frame.superlative and frame.type in (AnswerType.THING, AnswerType.NUMBER, AnswerType.ORG, AnswerType.PLACE,
                                            AnswerType.PERSON):  # fmt: skip
        sort = LogicalForm(action="sort", var="sort1", inputs=["o1"], operation=frame.superlative, limit=1,
                           output="value" if frame.type == AnswerType.NUMBER else "label")  # fmt: skip
        return [_retrieval("o1", question, "set"), sort, out.model_copy(update={"inputs": ["sort1"]})], (
            f"superlative ({frame.superlative}) over a set")
    if frame.quantifier is not None or frame.type in (
        AnswerType.SECTION, AnswerType.YES_NO, AnswerType.CHOICE, AnswerType.REASON
    ):  # fmt: skip
        return whole, "one reading of the whole question"
    subs, why = honest(decompose(nlp, question), question)
    if len(subs) <= 1:
        return whole, why or "one question, no decomposition"
    names = {sq.target: f"o{i}" for i, sq in enumerate(subs, start=1)}
    steps = []
    for sq in subs:
        text = VAR.sub(lambda m: "{" + names.get(m.group(1), m.group(1)) + "}", sq.text)
        target: Target = "answer" if sq.kind == "final" else "text"
        steps.append(_retrieval(names[sq.target], text, target))
    return [*steps, out.model_copy(update={"inputs": [steps[-1].var]})], f"decomposed into {len(subs)} sub-questions"


# ------------------------------------------------------------------------------------------ the node
def _llm_plan(step: Step, query: str, memory: str, known: Sequence[str]) -> tuple[list[LogicalForm], list[str]] | None:
    reply = step.ask_prompt("kag_plan", KagPlan, question=step.question, query=query,
                            memory=memory.strip() or "(nothing yet)", variables=", ".join(known) or "(none)")  # fmt: skip
    return from_planned(reply, known, query) if reply is not None else None


@agent_node("plan")
def plan(state: dict, step: Step) -> dict:
    """KAG Alg. 1 line 4, ``lf_list <- LFPlanner(query_cur)``: the chat model's logical-form plan, else the
    rule-based one (module docstring). From the second round on, ``query_cur`` is the reflection's
    supplementary question: the rules plan it as one widened retrieval that binds again the variable left
    unresolved, then the earlier steps that read it."""
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
        else:
            steps, reason = rule_plan(step.ctx, query, _headings(step))
            if round_no > 1:
                steps = [s.model_copy(update={"broad": True}) if s.action == "retrieval" else s for s in steps]
            step.decide(f"rule: {reason}" + (", every retrieval widened" if round_no > 1 else ""))
    step.decide(f"round {round_no}: {render_plan(steps)}")
    return {"plan": steps, "cursor": 0, "round": round_no, "query_cur": query}


def _headings(step: Step) -> list[str]:
    """The titles of the graph's sections (KAG's mutual index of the documents' structure)."""
    from stratagraph.tools.sections import structure_index

    return [str(n.props.get("title") or "") for n in structure_index(step.ctx).sections.values()]


def _replan(step: Step, query: str, previous: Sequence[LogicalForm], rebind: str) -> list[LogicalForm]:
    """A reflection round without a chat model: the supplementary question as one widened Retrieval that
    binds ``rebind`` again (with the target the earlier step had), then the earlier steps that read it."""
    old = next((s for s in previous if s.var == rebind), None)
    target: Target = old.target if old is not None and old.action == "retrieval" else "answer"
    first = _retrieval(rebind, query, target, broad=True, subject=old.subject if old is not None else "")
    after: list[LogicalForm] = []
    need = {rebind}
    start = next((i for i, s in enumerate(previous) if s.var == rebind), len(previous))
    for s in previous[start + 1 :]:
        if s.action == "output" or set(s.needs()) & need:
            after.append(s)
            need.add(s.var)
    if not after or after[-1].action != "output":
        after.append(LogicalForm(action="output", var="out", inputs=[rebind]))
    step.decide(f"rule: supplementary question binding {rebind} again")
    return [first, *after]

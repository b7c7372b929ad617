"""KAG's logical-form reasoner (KAG §2.3.2, Alg. 2; Alg. 1 lines 6-9): runs one step of the plan per node
run and binds its variable in the memory.

``Retrieval`` (Alg. 2): graph retrieval first, ``retri_kg <- GraphRetrieval(lf_subquery, lf_func)``: the
chunks supporting the facts ``search_facts`` finds for the sub-question (with its variables bound) and the
chunks around the entities it reads (``expand_entity`` on each bound entity); when the reader finds no answer
there, or only weakly (its sentence fits the sub-question under :data:`STRONG`), or the step is widened by a
reflection round, hybrid retrieval over the chunks,
``retri_doc <- HybridRetrieval(...)``: the ``default`` retriever's chunks first, the graph's after. Then
``answer_sub <- Generator(lf_subquery, retri_sub)``: with a chat model, its grounded answer
(:func:`stratagraph.agents.answer.grounded`); else, and as the fallback, the reader
(:mod:`stratagraph.reading`), by the step's target:

* ``text``: an entity to bind into a later step: only a span the reader reads as a person, a place, an
  organisation or a thing is bound (a typed binding);
* ``number``: one cited amount of what the sub-question asks (:func:`stratagraph.reading.reader.read_number`);
* ``value``: the date or number a choice compares its option by
  (:func:`stratagraph.reading.choice.option_figure`);
* ``set``: the amounts of the best-fitting table column (:func:`stratagraph.reading.tables.column_figures`);
* ``answer``: the reader's answer to the step's question, whatever its kind.

``Math``, ``Sort`` and ``Deduce`` run in code over the cited amounts, exactly
(:func:`stratagraph.reading.arithmetic.compute`; amounts of different kinds are never combined); ``Deduce``
``choice`` is :func:`stratagraph.reading.choice.choose`; ``greater`` / ``less`` / ``equal`` compare two
amounts. ``Output`` binds the answer's variable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.agents.answer import GeneratedAnswer, format_passages, grounded
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.decompose import ENTITY_TYPES
from stratagraph.agents.memory import Binding, MemoryEntry, bind, memory_text
from stratagraph.agents.plan import LogicalForm
from stratagraph.answers import Computation
from stratagraph.reading import frame_of, read
from stratagraph.reading.arithmetic import Figure, compute, render
from stratagraph.reading.choice import choose, option_figure
from stratagraph.reading.reader import from_source, named_by_structure, of_member, own_words, scored_number
from stratagraph.reading.sentences import sentences
from stratagraph.reading.tables import column_figures, exact_cell, one_row, rounded
from stratagraph.retrieval.base import Evidence, metadata_matches

__all__ = ["execute"]

FACTS_K = 10  # facts search_facts returns for a step
ENTITY_K = 8  # facts and passages expand_entity returns per entity
STRONG = 0.8  # a graph result the reader fits at least this well stands without hybrid retrieval (ours)
SET_FACTS = 5  # a question about a set ("every", "all", "the two") reads this many times more facts
MAX_SECTIONS = 60  # sections of one document a set with nothing to narrow it reads


# ------------------------------------------------------------------------------------------ the node
@agent_node("execute")
def execute(state: dict, step: Step) -> dict:
    """KAG Alg. 1 lines 7-9 / Alg. 2: run the next logical-form step, bind its variable, remember it."""
    plan: list[LogicalForm] = list(state.get("plan") or [])
    cursor = int(state.get("cursor") or 0)
    if cursor >= len(plan):
        step.decide("no step left")
        return {"cursor": cursor}
    lf = plan[cursor]
    bindings: dict[str, Binding] = dict(state.get("bindings") or {})
    runner = {"retrieval": _retrieval, "sort": _sort, "math": _math, "deduce": _deduce, "output": _output}[lf.action]
    binding, evidence = runner(step, lf, bindings, state)
    prev = bindings.get(lf.var)
    kept = prev is not None and prev.found and not binding.found
    step.decide(
        f"{lf.render()}: " + (f"{binding.text!r}" if binding.found else "not found")
        + (f" [{binding.source}]" if binding.source else "") + (f" ({binding.note})" if binding.note else "")
        + (f"; kept the earlier {lf.var} = {prev.text!r}" if kept else "")  # type: ignore[union-attr]
    )  # fmt: skip
    entry = MemoryEntry(round=int(state.get("round") or 1), var=lf.var, function=lf.render(), question=binding.question,
                        answer=binding.text, found=binding.found, source=binding.source)  # fmt: skip
    update: dict[str, Any] = {"bindings": {lf.var: binding}, "memory": [entry], "cursor": cursor + 1}
    if evidence:
        update["evidence"] = evidence
    if lf.action == "output":
        update["output"] = lf.var
    return update


# ------------------------------------------------------------------------------------------ Retrieval
def _graph_evidence(step: Step, lf: LogicalForm, query: str, bindings: Mapping[str, Binding]) -> list[Evidence]:
    """Alg. 2's GraphRetrieval: the chunks supporting the facts nearest the sub-question, and the chunks around
    the entities it reads."""
    out: dict[str, Evidence] = {}
    asked = frame_of(query)
    many = asked.quantifier is not None or bool(asked.superlative) or lf.target == "set"
    k = FACTS_K * (SET_FACTS if many else 1)  # "every X line", a superlative's set: all the rows
    _, docs = step.tool("search_facts", query=query, k=k, **({"filters": step.filters} if step.filters else {}))
    names = [bindings[v].text for v in lf.needs() if v in bindings and bindings[v].found and bindings[v].kind == "text"]
    for name in dict.fromkeys(names):
        _, more = step.tool("expand_entity", entity=name, k=ENTITY_K)
        docs = [*(docs or []), *(more or [])]
    for d in docs or []:
        ev = Evidence.from_document(d)
        if ev is not None and ev.chunk_id not in out and metadata_matches(ev.metadata, step.filters):
            out[ev.chunk_id] = ev
    return list(out.values())


def _feeds_math(lf: LogicalForm, state: Mapping[str, Any]) -> bool:
    """Whether a later Math step reads the step's amount (then it is a level, not a change)."""
    return any(s.action == "math" and lf.var in s.inputs for s in state.get("plan") or [])


def _operands_with(lf: LogicalForm, state: Mapping[str, Any]) -> list[str]:
    """The questions of the steps a Math step computes over with this one (this one's included), or []."""
    steps = state.get("plan") or []
    math = next((s for s in steps if s.action == "math" and lf.var in s.inputs), None)
    return [s.question for s in steps if math is not None and s.var in math.inputs and s.question]


def _read(step: Step, lf: LogicalForm, evidence: Sequence[Evidence], query: str, state: Mapping[str, Any]) -> Binding:
    """The reader's binding for the step's target (module docstring), over the given evidence."""
    ids = [e.chunk_id for e in evidence]
    base = Binding(var=lf.var, question=query, evidence=ids)
    if not evidence:
        return Binding(**{**base.__dict__, "note": "no evidence"})
    facts = step.facts(evidence)
    if lf.target in ("number", "value", "set"):
        sents = sentences(evidence, facts)
        frame = named_by_structure(frame_of(query if lf.target != "value" else step.question), sents)
        sents = from_source(frame, sents)
        score = 1.0
        if lf.target == "number":
            siblings = _operands_with(lf, state)
            if siblings:  # an operand told apart from the others by a name is read where that name is
                sents = of_member(sents, own_words(lf.question, siblings))
            fig, score = scored_number(frame, sents, level=_feeds_math(lf, state))
            if fig is not None and rounded(fig):
                around = _section_passages(step, fig, evidence)
                fig = exact_cell(fig, sentences(around, step.facts(around)))
            figs = [fig] if fig is not None else []
        elif lf.target == "value":
            fig = option_figure(frame, lf.subject, sents)
            figs = [fig] if fig is not None else []
        else:
            figs = column_figures(frame, sents)
        if not figs:
            return Binding(**{**base.__dict__, "kind": "number", "note": f"no {lf.target} for it"})
        text = figs[0].text() if len(figs) == 1 else f"{len(figs)} amounts"
        scaled = figs[0].at_scale() if len(figs) == 1 else None  # "240" in thousands answers "$240 thousand"
        return Binding(**{**base.__dict__, "kind": "set" if lf.target == "set" else "number", "found": True,
                          "text": text, "type": "number", "answer_kind": "computed" if scaled else "span",
                          "computation": scaled, "figures": figs, "score": score,
                          "citations": list({(f.citation.chunk_id, f.citation.quote): f.citation for f in figs}.values())})  # fmt: skip
    reading = read(step.kinds(query), evidence, facts, hop=lf.target == "text")
    if not reading.found:
        return Binding(**{**base.__dict__, "kind": lf.target if lf.target == "text" else "answer", "note": reading.reason})
    if lf.target == "text" and not (reading.kind == "span" and reading.type in {t.value for t in ENTITY_TYPES}):
        return Binding(**{**base.__dict__, "kind": "text", "note": f"a {reading.kind} {reading.answer[:60]!r} is no entity to bind"})
    return Binding(**{**base.__dict__, "kind": "text" if lf.target == "text" else "answer", "found": True,
                      "text": reading.answer, "type": reading.type, "answer_kind": reading.kind, "score": reading.score,
                      "citations": reading.citations, "computation": reading.computed, "note": reading.reason})  # fmt: skip


def _section_passages(step: Step, fig: Figure, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The passages of the section a rounded figure is stated in (``browse_sections``): the table whose
    exact cell it rounds is often beside the sentence, not in the retrieved evidence (mutual indexing, KAG
    §2.1: a text's figures and its section's tables are one knowledge)."""
    home = next((e for e in evidence if e.chunk_id == fig.citation.chunk_id), None)
    if home is None or not home.section_id:
        return list(evidence)
    _, docs = step.tool("browse_sections", node_id=home.section_id, show_text=True)
    more = [ev for d in docs or [] if (ev := Evidence.from_document(d)) is not None]
    return [*evidence, *(e for e in more if e.chunk_id not in {x.chunk_id for x in evidence})]


def _whole_document(step: Step, evidence: Sequence[Evidence]) -> list[Evidence]:
    """A set nothing in the question narrows ("the largest amount in the budget"): the passages of every
    section of the document the evidence ranks first (``browse_sections``, at most :data:`MAX_SECTIONS`), so
    its sort or count runs over all the document's tables, not the ones the search happened to find."""
    from stratagraph.tools.sections import structure_index

    doc = evidence[0].doc_id
    index = structure_index(step.ctx)
    out = {e.chunk_id: e for e in evidence}
    for sid in [s for s, n in index.sections.items() if n.props.get("doc_id") == doc][:MAX_SECTIONS]:
        _, docs = step.tool("browse_sections", node_id=sid, show_text=True)
        for d in docs or []:
            ev = Evidence.from_document(d)
            if ev is not None and ev.chunk_id not in out and metadata_matches(ev.metadata, step.filters):
                out[ev.chunk_id] = ev
    return list(out.values())


def _by_model(step: Step, lf: LogicalForm, evidence: Sequence[Evidence], query: str, state: Mapping[str, Any]) -> Binding | None:
    """Alg. 2 line 10 with a chat model, for a text or answer step: its grounded sub-answer (prompt ``answer``,
    the memory as context); None when no usable reply or no passage states it."""
    memory = memory_text([m for m in state.get("memory") or [] if m.found])
    reply = step.ask_prompt("answer", GeneratedAnswer, question=query, context=f"What is known so far:\n{memory}" if memory else "",
                            passages=format_passages(evidence))  # fmt: skip
    if reply is None:
        return None
    answer = grounded(step, reply, list(evidence), query)
    if answer is None:
        return None
    return Binding(var=lf.var, kind="text" if lf.target == "text" else "answer", found=answer.found, text=answer.answer if answer.found else "",
                   type="thing", answer_kind=answer.kind or "span", citations=answer.citations, question=query,
                   evidence=[e.chunk_id for e in evidence], source="model",
                   score=1.0 if answer.found else 0.0)  # fmt: skip  # a grounded model answer stands


def phrases_of(plan: Sequence[LogicalForm]) -> dict[str, str]:
    """Each Retrieval's reference phrase ("What is the design team of X?" -> "the design team of X"): the
    words an unresolved hop leaves in the steps that read it."""
    from stratagraph.agents.decompose import reference_phrase
    from stratagraph.retrieval.decompose import SubQuery

    return {s.var: reference_phrase(SubQuery(text=s.question)) for s in plan if s.action == "retrieval" and s.question}


def _retrieval(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:
    query = bind(lf.question, bindings, phrases_of(state.get("plan") or [])) or step.question
    evidence: list[Evidence] = []
    binding: Binding | None = None
    source = "graph"
    if not lf.broad:
        evidence = _graph_evidence(step, lf, query, bindings)
        if lf.target == "set" and evidence and not frame_of(query).names:
            evidence = _whole_document(step, evidence)
        binding = _answer(step, lf, evidence, query, state)
    if binding is None or not binding.found or binding.score < STRONG:  # Alg. 2: empty or weak, hybrid
        source = "hybrid"
        docs = step.retrieve("default", query, k=step.k * (2 if lf.broad else 1))
        seen = {e.chunk_id for e in docs}
        merged = [*docs, *(e for e in evidence if e.chunk_id not in seen)]
        again = _answer(step, lf, merged, query, state)
        if binding is None or not binding.found or (again.found and again.score > binding.score):
            binding, evidence = again, merged
        else:
            source = "graph"
    binding.source = binding.source or source
    return binding, evidence


def _answer(step: Step, lf: LogicalForm, evidence: Sequence[Evidence], query: str, state: Mapping[str, Any]) -> Binding:
    if step.llm is not None and evidence and lf.target in ("text", "answer"):
        by_model = _by_model(step, lf, evidence, query, state)
        if by_model is not None:
            return by_model
    return _read(step, lf, evidence, query, state)


# ------------------------------------------------------------------------------------------ Sort, Math, Deduce
def _inputs(lf: LogicalForm, bindings: Mapping[str, Binding]) -> tuple[list[Binding], str]:
    got = [bindings.get(v) for v in lf.inputs]
    missing = [v for v, b in zip(lf.inputs, got, strict=True) if b is None or not b.found]
    return [b for b in got if b is not None], (f"{', '.join(missing)} not found" if missing else "")


def _figures(bs: Sequence[Binding]) -> list[Figure]:
    return [f for b in bs for f in b.figures]


def _computed(lf: LogicalForm, comp: Computation, text: str, figs: Sequence[Figure]) -> Binding:
    cites = list({(f.citation.chunk_id, f.citation.quote): f.citation for f in figs}.values())
    return Binding(var=lf.var, kind="computed", found=True, text=text, type="number", answer_kind="computed",
                   citations=cites, figures=[], computation=comp, source="code", note=comp.expression)  # fmt: skip


def _math(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:
    got, missing = _inputs(lf, bindings)
    if missing:
        return Binding(var=lf.var, kind="computed", note=missing, source="code"), []
    figs = _figures(got)
    if lf.operation == "count" and lf.constraints:
        figs = [f for f in figs if _keeps(f, lf.constraints)]
    elif len(got) == 2 and len(figs) == 2:
        figs = _one_row(step, got, figs, state)
    if len({(f.citation.chunk_id, f.quantity.raw, f.label) for f in figs}) < len(figs):
        return Binding(var=lf.var, kind="computed", note="the operands are one and the same amount", source="code"), []
    try:
        comp = compute(lf.operation, figs, absolute=lf.constraints.get("order") == "larger_first")
    except ValueError as exc:
        return Binding(var=lf.var, kind="computed", note=str(exc), source="code"), []
    asked = frame_of(step.question).plan  # "how did X in Q3 compare with Q2": the question says it, whoever planned
    which_way = lf.operation == "difference" and asked is not None and asked.which_way
    return _computed(lf, comp, render(comp, figs, which_way=which_way), figs), []


def _one_row(step: Step, got: Sequence[Binding], figs: list[Figure], state: Mapping[str, Any]) -> list[Figure]:
    """Two operands of one line item in two periods read from one table row
    (:func:`stratagraph.reading.tables.one_row`), over the evidence their steps read."""
    evidence = [e for e in state.get("evidence") or [] if e.chunk_id in {f.citation.chunk_id for f in figs}]
    if not evidence:
        return figs
    out = one_row(figs, [frame_of(b.question) for b in got], sentences(evidence, step.facts(evidence)))
    for b, old, new in zip(got, figs, out, strict=True):
        if new is not old:
            step.decide(f"{b.var} from {new.row!r}'s row: {new.quantity.raw} ({new.column})")
    return out


def _keeps(fig: Figure, constraints: Mapping[str, str]) -> bool:
    from decimal import Decimal, InvalidOperation

    for key, raw in constraints.items():
        try:
            bound = Decimal(raw)
        except InvalidOperation:
            continue
        if (key == "above" and not fig.value > bound) or (key == "below" and not fig.value < bound):
            return False
        if (key == "above_or_equal" and not fig.value >= bound) or (key == "below_or_equal" and not fig.value <= bound):
            return False
    return True


def _sort(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:
    got, missing = _inputs(lf, bindings)
    figs = _figures(got)
    if missing or not figs:
        return Binding(var=lf.var, kind="computed", note=missing or "nothing to sort", source="code"), []
    ranked = sorted(figs, key=lambda f: f.value, reverse=lf.operation != "min")[: max(1, lf.limit)]
    labels = "; ".join(f.row or f.label for f in ranked)
    comp = Computation(operation=f"sort ({lf.operation})", expression=f"{lf.operation}(" + ", ".join(
        f"{f.row or f.label}: {f.quantity.raw}" for f in figs) + ")", operands=[f.operand() for f in figs],
        result=labels)  # fmt: skip
    if lf.output == "value":  # the amount, and what it is the amount of
        return _computed(lf, comp, "; ".join(f"{f.text()} ({f.label.rsplit(' | ', 1)[0]})" for f in ranked), ranked), []
    bound = _computed(lf, comp, labels, ranked)
    bound.answer_kind, bound.type = "choice", "thing"
    return bound, []


def _deduce(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:
    got = [bindings.get(v) for v in lf.inputs]
    if lf.operation == "choice":
        frame = frame_of(step.question)
        plan: Sequence[LogicalForm] = state.get("plan") or []
        options = [next((s.subject for s in plan if s.var == v), v) for v in lf.inputs]
        figs = [b.figures[0] if b is not None and b.found and b.figures else None for b in got]
        reading = choose(frame, options, figs)
        if not reading.found:
            return Binding(var=lf.var, kind="computed", note=reading.reason, source="code"), []
        return Binding(var=lf.var, kind="computed", found=True, text=reading.answer, type="choice", answer_kind="choice",
                       citations=reading.citations, computation=reading.computed, source="code", note=reading.reason), []  # fmt: skip
    found, missing = _inputs(lf, bindings)
    figs = _figures(found)
    if missing or lf.operation not in ("greater", "less", "equal"):
        return Binding(var=lf.var, kind="computed", note=missing or f"no {lf.operation} in code", source="code"), []
    try:
        comp = compute(lf.operation, figs)
    except ValueError as exc:
        return Binding(var=lf.var, kind="computed", note=str(exc), source="code"), []
    cites = [f.citation for f in figs[:2]]
    return Binding(var=lf.var, kind="computed", found=True, text=str(comp.result), type="yes/no", answer_kind="choice",
                   citations=cites, computation=comp, source="code"), []  # fmt: skip


def _output(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:
    src = bindings.get(lf.inputs[0]) if lf.inputs else None
    if src is None:
        return Binding(var=lf.var, note="nothing to output"), []
    return Binding(**{**src.__dict__, "var": lf.var}), []

"""KAG's logical-form reasoner (KAG §2.3.2, Alg. 2; Alg. 1 lines 6-9): runs one step of the plan per node
run and binds its variable in the memory.

``Retrieval`` (Alg. 2): graph retrieval first, ``retri_kg <- GraphRetrieval(lf_subquery, lf_func)``, then,
when its result is empty or weak, hybrid retrieval over the chunks, ``retri_doc <- HybridRetrieval(...)``,
and ``answer_sub <- Generator(lf_subquery, retri_sub)``:

* a typed quantity (targets ``amount``, ``number``, ``amounts``): the graph result is the facts
  ``search_facts`` finds for the sub-question, with their typed quantities and supporting chunks, matched in
  code (:mod:`stratagraph.agents.operands`); it is weak when no quantity covers the sub-question's key terms
  (or too few of its terms). The hybrid step then ranks chunks with the ``default`` retriever and reads the
  facts of the sections those chunks sit in (the mutual index: chunk -> section -> facts, through
  ``search_facts`` filtered by section and ``browse_sections``). A set (``amounts``) is the rows of the best
  quantity's table in its column. A ``number`` that neither finds is looked up as text;
* a text answer: the graph result is the chunks supporting the facts ``search_facts`` finds, and the chunks
  around the entity the step is about (``expand_entity`` on a variable bound earlier or the step's subject);
  it answers when the no-LLM extraction finds a span whose sentence holds :data:`GRAPH_ANSWERS` of the
  sub-question's content words. Otherwise the ``default`` retriever's chunks come first and the graph's
  after. The sub-answer is the chat model's (prompts ``answer.system`` / ``answer.user``, quotes taken
  verbatim from the passages it names), else the extracted span (:func:`stratagraph.agents.extract.extract_answer`);
  without a model, "what do A and B have in common?" reads the default retriever's chunks too and is decided
  in code (:func:`stratagraph.agents.compute.in_common`).

``Math``, ``Sort`` and the numeric ``Deduce`` run in code over the cited quantities, exactly
(:func:`stratagraph.agents.compute.calculate`; amounts are compared and added with their scale applied and
only when their units agree). ``Deduce`` ``choice`` compares two quantities when both were found, else the
dates or numbers the evidence states for each option (:func:`stratagraph.agents.compute.choose`);
``entailment`` is :func:`stratagraph.agents.compute.yes_no` over both operands' evidence. ``Output`` binds
the answer's variable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from stratagraph.agents.answer import GeneratedAnswer, format_passages, quote_for
from stratagraph.agents.common import Step, agent_node
from stratagraph.agents.compute import calculate, choose, in_common, in_common_question, yes_no
from stratagraph.agents.extract import extract_answer
from stratagraph.agents.memory import Binding, MemoryEntry, bind, memory_text
from stratagraph.agents.operands import (
    Quantity,
    Terms,
    candidates,
    evidence_of,
    members,
    operand_terms,
    peers,
    rank,
    refine,
    render_amount,
    weak,
)
from stratagraph.agents.plan import LogicalForm
from stratagraph.answers import Citation, Computation, Operand
from stratagraph.prompts import load_prompt
from stratagraph.retrieval.base import Evidence

__all__ = ["GRAPH_ANSWERS", "execute"]

#: the share of a sub-question's content words the graph evidence's answering sentence must hold for the graph
#: result to stand without hybrid retrieval (KAG Alg. 2's threshold; ours)
GRAPH_ANSWERS = 0.67
FACTS_K = 20  # facts a quantity retrieval reads
#: why Math refuses operands that are one amount (a coordination that names one thing: "Streets and Bridges")
SAME_AMOUNT = "the operands are one and the same amount"
SECTION_FACTS_K = 50  # facts read from one section
SECTIONS_WIDENED = 3  # sections whose facts a widened quantity retrieval reads
ENTITY_K = 8  # facts and passages expand_entity returns per entity


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
    evidence_pool = {e.chunk_id: e for e in state.get("evidence") or []}
    runner = {"retrieval": _retrieval, "sort": _sort, "math": _math, "deduce": _deduce, "output": _output}[lf.action]
    binding, evidence = runner(step, lf, bindings, evidence_pool, state)
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
def _proper_nouns(step: Step) -> list[str]:
    from stratagraph.retrieval.decompose import parse

    return [t.text for t in parse(step.ctx, step.question) if t.pos_ == "PROPN"]


def _terms(step: Step, lf: LogicalForm, query: str) -> Terms:
    extra = [v for k, v in lf.constraints.items() if k not in ("order",)]
    t = operand_terms(query, _proper_nouns(step), extra)
    return replace(t, wants_change=False, wants_percent=False) if lf.level else t


def _retrieval(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], pool: Mapping[str, Evidence],
               state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:  # fmt: skip
    query = bind(lf.question, bindings) or step.question
    search = _search_text(lf, query, state)
    if lf.target in ("amount", "number", "amounts"):
        binding, evidence = _quantity(step, lf, query)
        if binding.found or lf.target != "number":
            return binding, evidence
        text_binding, text_evidence = _text(step, lf, query, bindings, state, search)
        return text_binding, [*evidence, *text_evidence]
    return _text(step, lf, query, bindings, state, search)


def _search_text(lf: LogicalForm, query: str, state: Mapping[str, Any]) -> str:
    """What a text retrieval searches with: the sub-question with its variables bound, and the question's own
    words for each variable it reads (an answer bound by mistake does not lose the words it replaced)."""
    phrases = {s.var: s.phrase for s in state.get("plan") or [] if s.phrase}
    extra = [phrases[v] for v in lf.needs() if v in phrases]
    return " ".join([query, *extra]) if extra else query


def _filters(step: Step, **more: Any) -> dict[str, Any]:
    return {**(step.filters or {}), **more}


def _section_scope(step: Step, section_id: str, query: str, chunks: dict[str, Evidence]) -> list[Any]:
    """The facts of one section (``search_facts`` filtered by section) and, when needed, its chunks
    (``browse_sections``) so their quantities can be cited."""
    _, docs = step.tool("search_facts", query=query, k=SECTION_FACTS_K, filters=_filters(step, section_id=section_id))
    docs = list(docs or [])
    wanted = {c for d in docs for c in (getattr(d, "metadata", {}) or {}).get("chunk_ids") or []}
    if wanted - set(chunks):
        _, section_docs = step.tool("browse_sections", node_id=section_id, show_text=True, limit=50)
        for d in section_docs or []:
            ev = evidence_of(d)
            if ev is not None:
                chunks.setdefault(ev.chunk_id, ev)
    return docs


def _quantity(step: Step, lf: LogicalForm, query: str) -> tuple[Binding, list[Evidence]]:
    """A typed quantity (or a table column's set of them) for the step (module docstring)."""
    terms = _terms(step, lf, query)
    chunks: dict[str, Evidence] = {}
    _, docs = step.tool("search_facts", query=query, k=FACTS_K, filters=_filters(step))
    docs = list(docs or [])
    cells = lf.target == "amounts"  # a set is a table column: only table cells can found one
    pool = [q for q in candidates(docs, chunks) if q.table or not cells]
    for d in docs:
        ev = evidence_of(d)
        if ev is not None:
            chunks.setdefault(ev.chunk_id, ev)
    ranked = rank(pool, terms)
    best = ranked[0] if ranked else None
    source = "graph"
    scoped: set[str] = set()
    if weak(best, terms) or lf.broad:
        source = "hybrid"
        found = step.retrieve("default", query, k=step.k * (2 if lf.broad else 1))
        for e in found:
            chunks.setdefault(e.chunk_id, e)
        sections = list(dict.fromkeys([*(e.section_id for e in found[:SECTIONS_WIDENED]), *([best.section_id] if best else [])]))
        for sid in sections[: SECTIONS_WIDENED + 1]:
            docs += _section_scope(step, sid, query, chunks)
            scoped.add(sid)
        pool = [q for q in candidates(docs, chunks) if q.table or not cells]
        ranked = rank(pool, terms)
        best = ranked[0] if ranked else None
    evidence = [chunks[c] for c in dict.fromkeys(q.chunk_id for q in ranked[:5]) if c in chunks]
    if best is None or weak(best, terms):
        note = "no typed quantity" if best is None else f"best candidate {best.label!r} misses " + ", ".join(
            sorted(terms.keys - (best.own | best.context)) or [f"terms (coverage {best.coverage:.2f})"])  # fmt: skip
        return Binding(var=lf.var, kind="amount", found=False, question=query, source=source, note=note,
                       quantities=[best] if best else [], evidence=[e.chunk_id for e in evidence]), evidence  # fmt: skip
    wanted = peers(best, ranked, terms) if lf.target == "amounts" else [best.section_id] if not best.table else []
    for sid in wanted:
        if sid not in scoped:
            docs += _section_scope(step, sid, query, chunks)
            scoped.add(sid)
    if wanted:
        pool = [q for q in candidates(docs, chunks) if q.table or not cells]
    if lf.target == "amounts":
        rows = members(best, rank(pool, terms), terms)
        if not rows:
            return Binding(var=lf.var, kind="amounts", found=False, question=query, source=source,
                           note=f"{best.label!r} is not a table cell", quantities=[best]), evidence  # fmt: skip
        ev = [chunks[c] for c in dict.fromkeys(q.chunk_id for q in rows) if c in chunks]
        return Binding(var=lf.var, kind="amounts", found=True, strong=True, question=query, source=source,
                       text=f"{len(rows)} rows of {best.section_title or best.citation.section} ({best.column})",
                       quantities=rows, citations=[q.citation for q in rows],
                       evidence=list(dict.fromkeys(q.chunk_id for q in rows)),
                       note=f"column {best.column!r}"), ev  # fmt: skip
    exact = refine(best, pool, terms)
    note = f"{best.label}: {best.raw}, coverage {best.coverage:.2f}"
    if exact is not best:
        note += f"; exact figure {exact.label}: {exact.raw}"
    ev = [chunks[exact.chunk_id]] if exact.chunk_id in chunks else []
    return Binding(var=lf.var, kind="amount", found=True, strong=True, text=exact.raw, citations=[exact.citation],
                   quantities=[exact], question=query, source=source, note=note,
                   evidence=[exact.chunk_id]), [*ev, *evidence]  # fmt: skip


def _subjects(lf: LogicalForm, bindings: Mapping[str, Binding]) -> list[str]:
    """The entities a text retrieval is about: the answers bound to the variables it reads, else its subject."""
    names = [bindings[v].text for v in lf.needs() if v in bindings and bindings[v].found and bindings[v].kind == "text"]
    subject = lf.subject.strip()
    if subject in bindings:
        b = bindings[subject]
        if b.found and b.kind == "text":
            names.append(b.text)
    elif subject and subject != "?":
        names.append(subject)
    return list(dict.fromkeys(n for n in names if n))[:2]


def _graph_evidence(step: Step, lf: LogicalForm, query: str, bindings: Mapping[str, Binding]) -> list[Evidence]:
    """Alg. 2's GraphRetrieval for a text answer: the chunks supporting the facts nearest the sub-question, and
    the chunks around the entities it is about."""
    out: dict[str, Evidence] = {}
    _, docs = step.tool("search_facts", query=query, k=10, filters=_filters(step))
    for name in _subjects(lf, bindings):
        _, more = step.tool("expand_entity", entity=name, k=ENTITY_K)
        docs = [*(docs or []), *(more or [])]
    for d in docs or []:
        ev = evidence_of(d)
        if ev is not None and ev.chunk_id not in out:
            out[ev.chunk_id] = ev
    if step.filters:
        from stratagraph.retrieval.base import metadata_matches

        out = {k: e for k, e in out.items() if metadata_matches(e.metadata, step.filters)}
    return list(out.values())


def _text(step: Step, lf: LogicalForm, query: str, bindings: Mapping[str, Binding],
          state: Mapping[str, Any], search: str | None = None) -> tuple[Binding, list[Evidence]]:  # fmt: skip
    """A text answer for the step (module docstring); ``search``: the text retrieval searches with (default
    ``query``); the answer is extracted for ``query``."""
    search = search or query
    graph = _graph_evidence(step, lf, search, bindings)
    extraction = extract_answer(step.question, graph, focus=query) if graph else None
    source = "graph"
    evidence = graph
    shared = step.llm is None and in_common_question(query)  # "what do A and B have in common": decided in code
    if shared or lf.broad or extraction is None or not extraction.found or extraction.score < GRAPH_ANSWERS:
        source = "hybrid"
        docs = step.retrieve("default", search, k=step.k * (2 if lf.broad else 1))
        seen = {e.chunk_id for e in docs}
        evidence = [*docs, *(e for e in graph if e.chunk_id not in seen)]
        extraction = extract_answer(step.question, evidence, focus=query) if evidence else None
    ids = [e.chunk_id for e in evidence]
    decided = in_common(query, evidence) if shared else None
    if decided is not None:
        return Binding(var=lf.var, kind="computed", found=True, strong=True, text=decided.answer, citations=decided.citations,
                       computation=decided.computation, question=query, source="code", note=decided.computation.expression,
                       evidence=ids), evidence  # fmt: skip
    if step.llm is not None and evidence:
        generated = _generate(step, query, evidence, state)
        if generated is not None:
            text, cites = generated
            if not text:
                return Binding(var=lf.var, kind="text", question=query, source="model", evidence=ids,
                               note="the model finds no answer in the passages"), evidence  # fmt: skip
            return Binding(var=lf.var, kind="text", found=True, strong=True, text=text, citations=cites, question=query,
                           source=f"model over {source}", evidence=ids), evidence  # fmt: skip
    if extraction is None or not extraction.found:
        reason = extraction.reason if extraction is not None else "no evidence"
        return Binding(var=lf.var, kind="text", question=query, source=source, note=reason, evidence=ids), evidence
    return Binding(var=lf.var, kind="text", found=True, strong=True, text=extraction.answer, citations=extraction.citations,
                   question=query, source=source, note=f"{extraction.type.value}, score {extraction.score:.2f}",
                   evidence=ids), evidence  # fmt: skip


def _generate(step: Step, query: str, evidence: Sequence[Evidence], state: Mapping[str, Any]) -> tuple[str, list[Citation]] | None:
    """Alg. 2 line 10 with a chat model: the sub-answer from the passages (quotes taken verbatim from the
    passages it names); ("", []) when the model says they do not answer; None without a usable reply."""
    messages = [
        SystemMessage(content=load_prompt("answer.system")),
        HumanMessage(
            content=load_prompt("answer.user").format(
                question=query, context=_memory_context(state), passages=format_passages(evidence)
            )
        ),
    ]
    reply = step.ask(GeneratedAnswer, messages, "sub-answer")
    if reply is None:
        return None
    answer = reply.answer.strip()
    if not reply.found or not answer:
        return "", []
    chosen = [evidence[i - 1] for i in dict.fromkeys(reply.evidence) if 1 <= i <= len(evidence)]
    chosen = chosen or [e for e in evidence if answer.lower() in e.text.lower()][:2]
    if not chosen:
        step.fallbacks.append("sub-answer: the model's answer names no passage and none contains it")
        return None
    span = _span_in(answer, chosen)
    holding = [e for e in chosen if span.lower() in e.text.lower()]
    return span, [quote_for(e, span, query) for e in holding or chosen]  # the passages that state it, when some do


def _span_in(answer: str, evidence: Sequence[Evidence]) -> str:
    """The model's answer as the passages write it, when one holds it (case aside); else as the model wrote it."""
    for e in evidence:
        at = e.text.lower().find(answer.lower())
        if at >= 0:
            return e.text[at : at + len(answer)]
    return answer


def _memory_context(state: Mapping[str, Any]) -> str:
    text = memory_text([m for m in state.get("memory") or [] if m.found])
    return f"What is known so far:\n{text}" if text else ""


# ------------------------------------------------------------------------------------------ Sort, Math, Deduce
def _inputs(lf: LogicalForm, bindings: Mapping[str, Binding]) -> tuple[list[Binding], str]:
    got = [bindings.get(v) for v in lf.inputs]
    missing = [v for v, b in zip(lf.inputs, got, strict=True) if b is None or not b.found]
    return [b for b in got if b is not None], (f"{', '.join(missing)} not found" if missing else "")


def _amounts(bs: Sequence[Binding]) -> list[Quantity]:
    return [q for b in bs for q in b.quantities] if all(b.kind in ("amount", "amounts") for b in bs) else []


def _evidence_of(bs: Sequence[Binding], pool: Mapping[str, Evidence]) -> list[Evidence]:
    ids = list(dict.fromkeys(c for b in bs for c in b.evidence))
    return [pool[c] for c in ids if c in pool]


def _show(q: Quantity) -> str:
    return render_amount(q.value, q.unit, q.currency)


def _display(result: Decimal, operation: str, unit: str | None, currency: str | None) -> str:
    if operation == "percent_change":
        return render_amount(result.quantize(Decimal("0.01")), "%")
    if operation == "ratio":
        return render_amount(result.quantize(Decimal("0.0001")).normalize(), None)
    if operation == "count":
        return render_amount(result, None)
    return render_amount(result, unit, currency)


def _same_unit(qs: Sequence[Quantity]) -> bool:
    return len({(q.unit, q.currency) for q in qs}) == 1


def _math(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], pool: Mapping[str, Evidence],
          state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:  # fmt: skip
    ins, missing = _inputs(lf, bindings)
    if missing:
        return Binding(var=lf.var, kind="computed", source="code", note=missing), []
    qs = _amounts(ins)
    if not qs:
        return Binding(var=lf.var, kind="computed", source="code", note="an operand is not an amount"), []
    if lf.operation == "count":
        return _count(lf, qs), []
    if not _same_unit(qs):
        units = ", ".join(sorted({f"{q.raw} ({q.currency or q.unit or 'no unit'})" for q in qs}))
        return Binding(var=lf.var, kind="computed", source="code", note=f"units differ: {units}"), []
    same = {(q.fact_id, q.position) for q in qs}
    if len(same) < len(qs):
        return Binding(var=lf.var, kind="computed", source="code",
                       note=f"{SAME_AMOUNT}: {qs[0].label} ({qs[0].raw})"), []  # fmt: skip
    if lf.constraints.get("order") == "larger_first" and len(qs) == 2 and qs[1].value > qs[0].value:
        qs = [qs[1], qs[0]]
    try:
        comp = calculate(lf.operation, [q.amount() for q in qs])  # type: ignore[arg-type]
    except ValueError as exc:
        return Binding(var=lf.var, kind="computed", source="code", note=str(exc)), []
    shown = [_show(q) for q in qs]
    expression = {
        "sum": " + ".join(shown),
        "difference": " - ".join(shown[:2]),
        "ratio": " / ".join(shown[:2]),
        "percent_change": f"({shown[1] if len(shown) > 1 else '?'} - {shown[0]}) / |{shown[0]}| * 100",
    }.get(lf.operation, f"{lf.operation}({', '.join(shown)})")
    unit, currency = qs[0].unit, qs[0].currency
    if lf.operation == "difference" and unit == "%":  # a difference of percentages is in percentage points
        unit = "pp"
    text = _display(comp.result, lf.operation, unit, currency)  # type: ignore[arg-type]
    result_unit = None if lf.operation == "ratio" else ("pp" if unit == "pp" else comp.unit)
    comp = comp.model_copy(update={"expression": expression, "unit": result_unit})
    return Binding(var=lf.var, kind="computed", found=True, strong=True, text=text, computation=comp,
                   citations=[q.citation for q in qs], source="code", quantities=[],
                   note=f"{expression} = {text}"), []  # fmt: skip


_THRESHOLDS = {
    "above": lambda v, t: v > t,
    "above_or_equal": lambda v, t: v >= t,
    "below": lambda v, t: v < t,
    "below_or_equal": lambda v, t: v <= t,
}


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except (ArithmeticError, ValueError):
        return None


def _count(lf: LogicalForm, qs: Sequence[Quantity]) -> Binding:
    """Math count over a set, keeping the members above / below a threshold when the step has one."""
    kept = list(qs)
    cond = ""
    for key, value in lf.constraints.items():
        test = _THRESHOLDS.get(key)
        limit = _number(value)
        if test is None or limit is None:
            continue
        kept = [q for q in kept if test(q.value, limit)]
        cond = f" {key.replace('_or_equal', ' or equal to')} {render_amount(limit, qs[0].unit, qs[0].currency)}"
    expression = f"count({', '.join(f'{q.row or q.label}: {_show(q)}' for q in qs)}{' where' + cond if cond else ''})"
    result = Decimal(len(kept))
    comp = Computation(operation="count", expression=expression,
                       operands=[Operand(label=q.label, value=q.value, unit=q.unit, raw=q.raw, citation=q.citation) for q in qs],
                       result=result)  # fmt: skip
    return Binding(var=lf.var, kind="computed", found=True, strong=True, text=render_amount(result, None),
                   computation=comp, citations=[q.citation for q in qs], source="code",
                   note=f"{len(kept)} of {len(qs)}{cond}")  # fmt: skip


def _sort(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], pool: Mapping[str, Evidence],
          state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:  # fmt: skip
    ins, missing = _inputs(lf, bindings)
    if missing:
        return Binding(var=lf.var, kind="computed", source="code", note=missing), []
    qs = _amounts(ins)
    if not qs or not _same_unit(qs):
        return Binding(var=lf.var, kind="computed", source="code", note="no set of amounts in one unit"), []
    ordered = sorted(qs, key=lambda q: (q.value, q.row), reverse=lf.operation != "min")
    top = ordered[: max(1, lf.limit)]
    if len(ordered) > len(top) and ordered[len(top)].value == top[-1].value:
        return Binding(var=lf.var, kind="computed", source="code",
                       note=f"a tie at {_show(top[-1])}: {top[-1].row} and {ordered[len(top)].row}"), []  # fmt: skip
    if lf.output == "value":
        text = "; ".join(q.raw for q in top)
        result: Decimal | str = top[0].value if len(top) == 1 else text
    else:
        text = "; ".join(q.row or q.label for q in top)
        result = text
    comp = Computation(
        operation=f"sort ({lf.operation}, limit {len(top)})",
        expression=f"{lf.operation}({', '.join(f'{q.row or q.label}: {_show(q)}' for q in ordered)})",
        operands=[Operand(label=q.label, value=q.value, unit=q.unit, raw=q.raw, citation=q.citation) for q in ordered],
        result=result,
        unit=top[0].unit if lf.output == "value" else None,
    )
    if lf.output == "value" and len(top) == 1:
        text = render_amount(top[0].value, top[0].unit, top[0].currency)
    return Binding(var=lf.var, kind="computed", found=True, strong=True, text=text, computation=comp,
                   citations=[q.citation for q in top], source="code", note=comp.expression), []  # fmt: skip


def _deduce(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], pool: Mapping[str, Evidence],
            state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:  # fmt: skip
    ins = [bindings[v] for v in lf.inputs if v in bindings]
    if lf.operation in ("greater", "less", "equal"):
        ins_found, missing = _inputs(lf, bindings)
        qs = _amounts(ins_found)
        if missing or len(qs) != 2:
            return Binding(var=lf.var, kind="computed", source="code", note=missing or "needs two amounts"), []
        if not _same_unit(qs):
            return Binding(var=lf.var, kind="computed", source="code", note="units differ"), []
        a, b = qs
        holds = {"greater": a.value > b.value, "less": a.value < b.value, "equal": a.value == b.value}[lf.operation]
        symbol = {"greater": ">", "less": "<", "equal": "="}[lf.operation]
        answer = "yes" if holds else "no"
        comp = Computation(operation=f"deduce ({lf.operation})", expression=f"{_show(a)} {symbol} {_show(b)}",
                           operands=[Operand(label=q.label, value=q.value, unit=q.unit, raw=q.raw, citation=q.citation) for q in qs],
                           result=answer)  # fmt: skip
        return Binding(var=lf.var, kind="computed", found=True, strong=True, text=answer, computation=comp,
                       citations=[a.citation, b.citation], source="code", note=comp.expression), []  # fmt: skip
    evidence = _evidence_of(ins, pool)
    if lf.operation == "choice":
        qs = _amounts([b for b in ins if b.found])
        options = [_option_name(steps_var, bindings, state) for steps_var in lf.inputs]
        if len(qs) == 2 and all(b.found for b in ins) and _same_unit(qs) and all(options) and qs[0].value != qs[1].value:
            pick_max = _wants_max(step.question)
            if pick_max is not None:
                first = (qs[0].value > qs[1].value) == pick_max
                chosen = options[0] if first else options[1]
                comp = Computation(
                    operation=f"compare ({'max' if pick_max else 'min'})",
                    expression=f"{'max' if pick_max else 'min'}({options[0]}: {_show(qs[0])}, {options[1]}: {_show(qs[1])})",
                    operands=[Operand(label=o, value=q.value, unit=q.unit, raw=q.raw, citation=q.citation)
                              for o, q in zip(options, qs, strict=True)],
                    result=chosen,
                )  # fmt: skip
                return Binding(var=lf.var, kind="computed", found=True, strong=True, text=chosen, computation=comp,
                               citations=[q.citation for q in qs], source="code", note=comp.expression), []  # fmt: skip
        shape = _choice_shape(step.question, lf)
        decided = choose(step.question, evidence, shape)  # without an order word: by the property the question names
    else:
        decided = yes_no(step.question, evidence)
    if decided is None:
        return Binding(var=lf.var, kind="computed", source="code",
                       note=f"the evidence does not settle {lf.operation}"), []  # fmt: skip
    return Binding(var=lf.var, kind="computed", found=True, strong=True, text=decided.answer, citations=decided.citations,
                   computation=decided.computation, source="code", note=decided.computation.expression), []  # fmt: skip


def _choice_shape(question: str, lf: LogicalForm) -> Any:
    """The question's shape as a choice between the plan's options (when the plan names them)."""
    from stratagraph.agents.extract import AnswerType, QuestionShape, question_shape

    shape = question_shape(question)
    options = [o.strip() for o in lf.constraints.get("options", "").split(" | ") if o.strip()]
    return QuestionShape(AnswerType.CHOICE, shape.content, options, shape.focus) if len(options) == 2 else shape


def _option_name(var: str, bindings: Mapping[str, Binding], state: Mapping[str, Any]) -> str:
    lf = next((s for s in state.get("plan") or [] if s.var == var), None)
    return lf.subject if lf is not None and lf.subject else ""


_ORDER_WORDS = frozenset(["first", "earlier", "earliest", "older", "oldest", "before", "later", "latest", "younger", "youngest", "newer", "newest", "last"])


def _wants_max(question: str) -> bool | None:
    words = set(re.findall(r"[a-z]+", question.lower()))
    if words & {"more", "most", "larger", "largest", "bigger", "biggest", "higher", "highest", "greater", "greatest"}:
        return True
    if words & {"less", "least", "fewer", "fewest", "smaller", "smallest", "lower", "lowest"}:
        return False
    return None


def _output(step: Step, lf: LogicalForm, bindings: Mapping[str, Binding], pool: Mapping[str, Evidence],
            state: Mapping[str, Any]) -> tuple[Binding, list[Evidence]]:  # fmt: skip
    ins = [bindings[v] for v in lf.inputs if v in bindings]
    found = [b for b in ins if b.found]
    if not found:
        return Binding(var=lf.var, kind="none", source="code", note=f"{', '.join(lf.inputs)} not found",
                       question=ins[0].question if ins else ""), []  # fmt: skip
    if len(found) == 1:
        return replace(found[0], var=lf.var), []
    return Binding(var=lf.var, kind="text", found=True, strong=all(b.strong for b in found),
                   text="; ".join(b.text for b in found), citations=[c for b in found for c in b.citations],
                   evidence=[c for b in found for c in b.evidence], source="code", note="several outputs"), []  # fmt: skip


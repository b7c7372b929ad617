"""BiG-RAG §4.3.1 and §4.3.3 as the first node of ``think_query_retrieve``: classify the question (Algorithm 3)
and decompose it into sub-questions with variable bindings (Algorithm 5), with spaCy, in both modes.

The node calls the retrieval layer's implementations (:func:`stratagraph.retrieval.classify.classify`,
:func:`stratagraph.retrieval.decompose.decompose`) through ``step.call``, so the trace shows the class, the
rule that fired, the complexity-adaptive parameters (§4.3.4 table: SIMPLE H=3 K=5, MODERATE H=10 K=15,
COMPLEX H=5 K=10 per sub-query) and every sub-question with its target variable and dependencies.

The sub-questions drive the algorithmic mode's turns (:mod:`stratagraph.agents.think`); with a chat model
they are the no-LLM policy a turn falls back to when the model's reply is unusable. What Algorithm 5 leaves
open about binding answers into text is fixed here (the helpers below):

* :func:`bind`: a sub-question's text with each ``{varN}`` replaced by the answer bound to it, or, when the
  sub-question that should have bound it found no answer, by the *reference phrase* that sub-question asked
  about (:func:`reference_phrase`: "Which film was shot in Leland?" -> "the film was shot in Leland"), so
  an unresolved hop degrades to the words of the original question instead of an empty slot;
* :func:`needed_later`: a sub-answer is extracted only when a later sub-question's text uses its variable
  (conjunct sub-questions of a comparison, whose final question names both conjuncts itself, only gather
  evidence);
* :func:`is_question`: the bound final sub-question is the one the extractive answer reads only when it is
  still a question (opens with an auxiliary or holds a wh-word); otherwise the original question is read.

Algorithm 5 splits off every reference, including one that holds the question's own wh-phrase, which is
frequent in declarative questions ("From 1945-1949 Dick Humbert played for an NFL team based in what
state?" -> 1. "Which NFL team based in what state?", final "From 1945-1949 Dick Humbert played for
{var1}?"): answering sub-question 1 first would answer the wrong thing. :func:`repair` rewrites two such
shapes, until the final sub-question is a question again (at most :data:`MAX_REPAIRS` rewrites):

* *predication*: a final "X is {v}" whose ``v`` is "Which N VP?" says "X VP" ("Scott Howell is {var2}",
  var2 "Which consultant has worked with {var1}?" -> final "Scott Howell has worked with {var1}?");
* *wh inside a reference*: a final that is no question, using a ``v`` whose sub-question holds a wh-word of
  its own ("Which N VP-with-wh?" or "What is NP-with-wh?"), becomes two sub-questions: the final with ``v``
  asked for ("From 1945-1949 Dick Humbert played for which NFL team?" -> v), then the reference's own
  question about it ("{v} based in what state?" -> final_answer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.agents.common import Step, agent_node
from stratagraph.retrieval.classify import Classification, classify
from stratagraph.retrieval.decompose import FINAL, SubQuery, decompose

__all__ = ["bind", "decompose_question", "is_question", "needed_later", "reference_phrase"]

_WH = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
_AUX = frozenset(
    {"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will", "would",
     "should", "may", "might", "shall"}
)  # fmt: skip
_PLACEHOLDER = re.compile(r"\{(var\d+)\}")


def reference_phrase(sub: SubQuery) -> str:
    """The noun phrase a sub-question asks about, as words for the question that depends on it:
    "Which film was shot in X?" -> "the film was shot in X"; "What is the director of Y?" -> "the director
    of Y" (placeholders kept, for :func:`bind` to fill)."""
    text = sub.text.strip().rstrip("?").strip()
    m = re.match(r"(?i)^which\s+(.*)$", text)
    if m:
        return "the " + m.group(1)
    m = re.match(r"(?i)^what\s+(?:is|are|was|were)\s+(.*)$", text)
    if m:
        return m.group(1)
    return text


def bind(sub: SubQuery, bound: Mapping[str, str], subs: Sequence[SubQuery]) -> str:
    """The sub-question's text with its variables bound (module docstring): the bound answer, else the
    reference phrase of the sub-question that targets the variable (itself bound, recursively)."""
    by_target = {s.target: s for s in subs}

    def fill(text: str, depth: int) -> str:
        def one(m: re.Match[str]) -> str:
            var = m.group(1)
            if var in bound:
                return bound[var]
            source = by_target.get(var)
            if source is None or depth > len(subs):
                return ""
            return fill(reference_phrase(source), depth + 1)

        return _PLACEHOLDER.sub(one, text)

    return re.sub(r"\s+([?,.!])", r"\1", re.sub(r"\s{2,}", " ", fill(sub.text, 0))).strip()


def needed_later(subs: Sequence[SubQuery], index: int) -> bool:
    """Whether a later sub-question's text uses the variable sub-question ``index`` binds."""
    target = subs[index].target
    return target != FINAL and any(target in s.variables() for s in subs[index + 1 :])


def is_question(text: str) -> bool:
    """Opens with an auxiliary verb or holds a wh-word."""
    words = re.findall(r"[A-Za-z']+", text)
    return bool(words) and (words[0].lower() in _AUX or bool(_WH.search(text)))


MAX_REPAIRS = 3
_COPULA_FINAL = re.compile(r"^(?P<x>.+?)\s+(?:is|was|are|were)\s+\{(?P<v>var\d+)\}\s*[?.!]?$", re.IGNORECASE)


def _split_which(nlp: Any, text: str) -> tuple[str, str] | None:
    """"Which type of plane was held on X?" -> ("type of plane", "was held on X"); "What is the mayor of
    what city?" -> ("mayor", "the mayor of what city") as (head noun, the rest to ask about it)."""
    from stratagraph.retrieval.decompose import parse

    body = text.strip().rstrip("?").strip()
    m = re.match(r"(?i)^what\s+(?:is|are|was|were)\s+(.+)$", body)
    if m:
        doc = parse(nlp, m.group(1))
        chunk = next(iter(doc.noun_chunks), None)
        return (chunk.root.text, m.group(1)) if chunk is not None and chunk.start == 0 else None
    if not re.match(r"(?i)^which\s", body):
        return None
    doc = parse(nlp, body)
    chunk = next(iter(doc.noun_chunks), None)
    if chunk is None or chunk.start > 1 or chunk.end < 2:  # "Which X" is the chunk, or "X" right after "Which"
        return None
    end = chunk.end
    while end + 1 < len(doc) and doc[end].lower_ == "of":  # "type of plane"
        nxt = next((c for c in doc.noun_chunks if c.start == end + 1), None)
        if nxt is None:
            break
        end = nxt.end
    head = doc[1:end].text
    rest = body[doc[end - 1].idx + len(doc[end - 1].text) :].strip()
    return (head, rest) if head and rest else None


def _embedded_wh(text: str) -> bool:
    """A wh-word after the opening one ("Which NFL team based in *what* state?")."""
    return bool(_WH.search(re.sub(r"(?i)^\s*(?:which|what)\b", "", text.strip(), count=1)))


def _deps(text: str, first: Sequence[str] = ()) -> list[str]:
    return list(dict.fromkeys([*first, *_PLACEHOLDER.findall(text)]))


def _used_elsewhere(subs: Sequence[SubQuery], var: str) -> bool:
    """Whether a sub-question other than the final one uses ``var``."""
    return any(var in s.variables() for s in subs[:-1])


def _only_inside(subs: Sequence[SubQuery], sub: SubQuery) -> set[str]:
    """The variables ``sub`` depends on, directly or not, that no other sub-question uses: the references
    nested inside it (their words go back into its text when it is rewritten)."""
    by_target = {s.target: s for s in subs}
    inside: set[str] = set()
    todo = list(sub.variables())
    while todo:
        var = todo.pop()
        if var in inside or var not in by_target:
            continue
        inside.add(var)
        todo.extend(by_target[var].variables())
    users = {s.target: set(s.variables()) for s in subs}
    outside = {v for t, vs in users.items() if t != sub.target and t not in inside for v in vs}
    return inside - outside


def repair(nlp: Any, subs: Sequence[SubQuery]) -> tuple[list[SubQuery], list[str]]:
    """The rewrites of the module docstring; returns the sub-questions and what was rewritten."""
    out = list(subs)
    notes: list[str] = []
    for _ in range(MAX_REPAIRS):
        final = out[-1]
        if len(out) < 2 or final.target != FINAL:
            break
        by_target = {s.target: s for s in out}
        m = None if is_question(_PLACEHOLDER.sub("it", final.text)) else _COPULA_FINAL.match(final.text)
        sub = by_target.get(m.group("v")) if m else None
        if sub is not None and _used_elsewhere(out, sub.target):
            sub = None
        if m and sub is not None and sub.kind == "relative" and (split := _split_which(nlp, sub.text)):
            text = f"{m.group('x')} {split[1]}?"
            out = [s for s in out[:-1] if s is not sub] + [SubQuery(text=text, depends_on=_deps(text), kind="final")]
            notes.append(f"{final.text!r} with {sub.target} = {sub.text!r} -> {text!r}")
            continue
        if is_question(_PLACEHOLDER.sub("it", final.text)):
            break
        used = [by_target[v] for v in final.variables() if v in by_target]
        carriers = [x for x in used if x.kind in ("relative", "of", "possessive") and _embedded_wh(bind(x, {}, out))
                    and not _used_elsewhere(out, x.target)]  # fmt: skip
        if len(carriers) != 1:
            break
        sub = carriers[0]
        inner = _only_inside(out, sub)
        split = _split_which(nlp, bind(sub, {}, out) if inner else sub.text)
        if split is None:
            break
        out = [x for x in out if x.target not in inner]
        head, rest = split
        asked_for = f"which {head}"
        ask = final.text.replace("{" + sub.target + "}", asked_for)
        ask = ask.rstrip(" ?.!") + "?"
        then = f"{{{sub.target}}} {rest}?" if sub.text.lower().startswith("which") else f"{{{sub.target}}} is {rest}?"
        first = SubQuery(text=ask, target=sub.target, depends_on=_deps(ask), kind="relative")
        last = SubQuery(text=then, depends_on=_deps(then), kind="final")
        out = [x for x in out[:-1] if x is not sub] + [first, last]
        notes.append(f"{sub.text!r} holds the question's wh-phrase: {ask!r} -> {sub.target}, then {then!r}")
    return out, notes


def _summary(c: Classification) -> str:
    return f"{c.label.value} (H={c.params.max_hops}, K={c.params.target_relations})"


@agent_node("decompose")
def decompose_question(state: Mapping[str, Any], step: Step) -> dict[str, Any]:
    """BiG-RAG Alg. 3 (complexity class and its traversal parameters) and Alg. 5 (sub-questions with
    variable bindings), with spaCy; the same in both modes."""
    question = step.question
    if not question:
        step.decide("empty question: nothing to decompose")
        return {"sub_queries": [], "classification": {}, "max_turns": _max_turns(step), "turns": [], "bound": {}}
    cls: Classification = step.call("classify", lambda **a: classify(step.ctx, a["query"]), _summary, query=question)
    subs: list[SubQuery] = step.call(
        "decompose",
        lambda **a: decompose(step.ctx, a["query"]),
        lambda r: f"{len(r)} sub-question(s)",
        query=question,
    )
    if not subs:
        subs = [SubQuery(text=question)]
    subs, notes = repair(step.ctx, subs)
    for note in notes:
        step.decide(f"rewritten: {note}")
    step.decide(f"{cls.label.value}: {cls.reason}; walk with H={cls.params.max_hops}, K={cls.params.target_relations}")
    if len(subs) > 1:
        step.decide(
            "sub-questions: "
            + "; ".join(
                f"{i}. {s.text} -> {s.target}" + (f" (needs {', '.join(s.depends_on)})" if s.depends_on else "")
                for i, s in enumerate(subs, start=1)
            )
        )
    else:
        step.decide("one question, no decomposition")
    return {
        "classification": {
            "label": cls.label.value,
            "reason": cls.reason,
            "max_hops": cls.params.max_hops,
            "target_relations": cls.params.target_relations,
        },
        "sub_queries": subs,
        "max_turns": _max_turns(step),
        "turns": [],
        "bound": {},
    }


def _max_turns(step: Step) -> int:
    return int(getattr(step.svc.settings, "tqr_max_turns", 4) or 4)

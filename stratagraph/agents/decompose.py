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

A decomposition is kept only when it is honest (:func:`honest`): every reference a later sub-question reads
must ask for an entity (a person, a place, an organisation, a thing) the rest of the question is about. A
possessive on an organisation's or a document's name ("In the Town of X's 2026 budget, how much ...") is no
hop: its reference asks for an amount, so the question is asked whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stratagraph.agents.common import Step, agent_node
from stratagraph.retrieval.classify import Classification, classify
from stratagraph.retrieval.decompose import FINAL, SubQuery, decompose
from stratagraph.text.question import AnswerType, asked

__all__ = ["ENTITY_TYPES", "bind", "decompose_question", "honest", "is_question", "needed_later", "reference_phrase"]

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


#: the answer types a sub-question's variable may be bound with: an entity the later sub-question is about
ENTITY_TYPES = frozenset({AnswerType.PERSON, AnswerType.PLACE, AnswerType.ORG, AnswerType.THING})


def honest(subs: Sequence[SubQuery], question: str) -> tuple[list[SubQuery], str]:
    """The decomposition, kept only where every reference a later sub-question reads asks for an entity (a
    person, a place, an organisation, a thing): "the director of F" is a hop; "the 2026 budget of the Town of
    X" asks for an amount, so a later "In {var1}, how much ..." would read a number as a place, and the
    question is asked whole instead. Returns the sub-questions and why (for the trace)."""
    if len(subs) <= 1:
        return list(subs), ""
    for i, sub in enumerate(subs):
        if not needed_later(subs, i):
            continue
        phrase = reference_phrase(sub)
        if re.search(rf"(?i)\bas\s+(?:the\s+|a\s+|an\s+)?{re.escape(phrase)}", question):
            return [SubQuery(text=question)], f"{phrase!r} is a role (\"as ...\"), not a reference: asked whole"
        inner = asked(phrase + "?").type if re.match(r"(?i)(?:how|what|which|who|when|where)\b", phrase) else None
        kind = inner or asked(sub.text).type  # "What is How many hours of audio?": the phrase asks a number
        if kind not in ENTITY_TYPES:
            return [SubQuery(text=question)], f"{sub.text!r} asks for a {kind.value}, not an entity: asked whole"
    return list(subs), ""


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
    subs, why = honest(subs, question)
    if why:
        step.decide(why)
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

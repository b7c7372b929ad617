"""``rewrite``: the latest message of a conversation as a question that stands on its own.

With a chat model: prompt ``rewrite`` with the last turns, structured output ``{question, why}``. Without
one (and when the model's reply is unusable), rules over the last turns (:func:`rewrite_by_rules`):

* "why?" (alone, or "why is that?") asks about the last answer: the question becomes "Why: <last question>"
  and its evidence is the last answer's cited chunks (``evidence_from``);
* an ellipsis ("and in Q3?", "what about the Fire Department?", "and for 2023?"): the last question with the
  corresponding part swapped: a period (Q1-Q4, FY2025, a year) for the last question's period, anything
  else for the last question's subject (its first named entity or proper-noun phrase);
* "the previous quarter" / "the next quarter" / "the prior year": the period one step from the last turn's;
* "compare that with X" / "how does that compare to X": the last question asked again for X (its period or
  subject swapped); the answer compares the two answers (a difference when both are numbers);
* pronouns ("it", "its", "they", "their", "that", "this", "he", "she", "his", "her"...) stand for the last
  turn's subject;
* anything else is already a question on its own.

The trace records the rewritten question (and the rule that made it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.prompts import load_prompt
from stratagraph.text.nlp import load_nlp

__all__ = ["Rewritten", "Turn", "latest_message", "rewrite", "rewrite_by_rules", "subject_of"]

_PERIOD = re.compile(r"\b(Q[1-4])(?:\s+(?:FY)?(\d{4}))?\b|\bFY\s?(\d{2,4})\b|\b((?:19|20)\d{2})\b", re.IGNORECASE)
_WHY = re.compile(r"^\s*(?:and\s+)?why\b[^a-z]*(?:(?:is|was|did|does)\s+(?:that|it|this)\b)?\s*\??\s*$", re.IGNORECASE)
_ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about|and what about|same for|and for)\b\s*(.*?)\s*\??\s*$", re.IGNORECASE)
_COMPARE = re.compile(r"^\s*(?:compare\s+(?:that|this|it)\s+(?:with|to|against)|how\s+does\s+(?:that|this|it)\s+compare\s+(?:with|to))\s+(.*?)\s*\??\s*$", re.IGNORECASE)  # fmt: skip
_RELATIVE = re.compile(r"\bthe\s+(previous|prior|preceding|last|next|following)\s+(quarter|year)\b", re.IGNORECASE)
_PRONOUNS = re.compile(r"\b(its|it|their|they|them|his|he|her|she|this|that|these|those)\b", re.IGNORECASE)
_POSSESSIVE = {"its", "their", "his", "her"}


class Turn(BaseModel):
    """What a conversation remembers of one turn."""

    message: str
    question: str  # as rewritten
    answer: str
    found: bool
    workflow: str = ""
    subject: str = ""  # the entity the question was about
    chunks: list[str] = Field(default_factory=list)  # the chunks the answer cited
    filters: dict[str, str] = Field(default_factory=dict)


class Rewritten(BaseModel):
    """A message rewritten into a standalone question."""

    question: str = Field(description="the latest message as a question that can be understood without the conversation")
    why: str = Field(default="", description="what was resolved (a pronoun, an ellipsis, a relative period)")


def latest_message(messages: Sequence[BaseMessage]) -> str:
    """The text of the last human message."""
    for m in reversed(messages):
        if isinstance(m, HumanMessage) or getattr(m, "type", "") == "human":
            return str(m.text if hasattr(m, "text") else m.content).strip()
    return ""


def subject_of(question: str) -> str:
    """The entity a question is about: its first named entity (not a date, number or period such as "Q3") or
    proper-noun phrase."""
    doc = load_nlp()(question)
    for ent in doc.ents:
        if ent.label_ not in ("DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL") and not _is_period(ent.text):
            return ent.text
    for nc in doc.noun_chunks:
        if any(t.pos_ == "PROPN" for t in nc) and not _is_period(nc.text):
            return re.sub(r"^(?:the|a|an)\s+", "", nc.text, flags=re.IGNORECASE)
    return ""


def _is_period(text: str) -> bool:
    m = _period(text.strip())
    return m is not None and m.group(0).strip().lower() == re.sub(r"^(?:the|in)\s+", "", text.strip().lower())


def _period(text: str) -> re.Match[str] | None:
    return _PERIOD.search(text)


def _shift(period: str, step: int) -> str:
    """Q3 -> Q2 (step -1), Q1 2024 -> Q4 2023, 2024 -> 2023, FY2025 -> FY2024."""
    m = re.fullmatch(r"Q([1-4])(?:\s+(?:FY)?(\d{4}))?", period.strip(), re.IGNORECASE)
    if m:
        q, year = int(m.group(1)) + step, int(m.group(2)) if m.group(2) else None
        if q < 1:
            q, year = 4, (year - 1 if year else None)
        elif q > 4:
            q, year = 1, (year + 1 if year else None)
        return f"Q{q}" + (f" {year}" if year else "")
    m = re.fullmatch(r"(FY\s?)?(\d{4})", period.strip(), re.IGNORECASE)
    if m:
        return f"{m.group(1) or ''}{int(m.group(2)) + step}"
    return period


def rewrite_by_rules(message: str, turns: Sequence[Turn]) -> tuple[str, str, list[str], list[str]]:
    """``(question, rule, evidence_from, compare)`` for ``message`` given the last turns (module docstring):
    ``evidence_from`` the chunks a "why?" asks about, ``compare`` the two questions a "compare that with X"
    asks (the answer compares their answers)."""
    last = turns[-1] if turns else None
    if last is None:
        return message, "first message", [], []
    if _WHY.match(message):
        return f"Why: {last.question}", "why: the last answer's evidence", list(last.chunks), []
    msg, rule = message, ""
    relative = _RELATIVE.search(msg)
    period_old = _period(last.question)
    if relative and period_old:
        step = -1 if relative.group(1).lower() in ("previous", "prior", "preceding", "last") else 1
        msg = _RELATIVE.sub(_shift(period_old.group(0), step), msg, count=1)
        rule = f"{relative.group(0)} of {period_old.group(0)}; "
    compare = _COMPARE.match(msg)
    if compare:
        other = compare.group(1).strip()
        swapped = _swap(last, other)
        if swapped is not None:
            return f"{last.question.rstrip('?')}, compared with {other}?", rule + "compare: both answers", [], [last.question, swapped]
        return f"{last.question.rstrip('?')}, compared with {other}?", rule + "compare", [], []
    ellipsis = _ELLIPSIS.match(msg)
    bare = msg.strip().rstrip("?").strip()
    if (ellipsis and ellipsis.group(1)) or (_period(bare) and _period(bare).group(0) == bare):  # type: ignore[union-attr]
        part = re.sub(r"^(?:in|for|at|during)\s+", "", (ellipsis.group(1) if ellipsis else bare).strip(), flags=re.IGNORECASE)
        subject = last.subject or subject_of(last.question)
        if subject and _PRONOUNS.search(part):  # "what about its CFO?": the same subject, another attribute
            first = last.question.split()[0]
            wh = first if first.lower() in ("who", "what", "where", "when", "which", "how") else "What"
            return f"{wh} is {_resolve_pronouns(part, subject)}?", rule + f"ellipsis: another attribute of {subject}", [], []
        swapped = _swap(last, part)
        if swapped is not None:
            return swapped, rule + "ellipsis: another " + ("period" if _period(part) else "subject"), [], []
        return f"{last.question.rstrip('?')} for {part}?", rule + "ellipsis", [], []
    subject = last.subject or subject_of(last.question)
    pronoun = _PRONOUNS.search(msg)
    if subject and pronoun and (pronoun.group(1).lower() in _POSSESSIVE or not subject_of(msg)):
        return _resolve_pronouns(msg, subject), rule + f"pronoun: {subject}", [], []
    return msg, (rule + "already standalone") if rule else "already standalone", [], []


def _swap(last: Turn, part: str) -> str | None:
    """The last question with its period (when ``part`` is a period) or its subject replaced by ``part``."""
    period_new, period_old = _period(part), _period(last.question)
    if period_new and period_old:
        return last.question.replace(period_old.group(0), period_new.group(0))
    if period_new:
        return f"{last.question.rstrip('?')} in {period_new.group(0)}?"
    subject = last.subject or subject_of(last.question)
    if subject and subject in last.question:
        return last.question.replace(subject, part)
    return None


def _resolve_pronouns(text: str, subject: str) -> str:
    """The first pronoun of ``text`` replaced by ``subject`` (its possessive for "its", "their", ...)."""

    def swap(m: re.Match[str]) -> str:
        if m.group(1).lower() in _POSSESSIVE:
            return f"{subject}'" if subject.endswith("s") else f"{subject}'s"
        return subject

    return _PRONOUNS.sub(swap, text, count=1)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text and not text[:2].isupper() else text


@agent_node("rewrite", starts_turn=True)
def rewrite(state: dict, step: Step) -> dict:
    """The latest message as a standalone question: the chat model when configured, else the rules."""
    message = latest_message(state.get("messages") or [])
    turns: list[Turn] = list(state.get("turns") or [])
    question, rule, evidence_from, compare = rewrite_by_rules(message, turns)
    if step.llm is not None and turns:
        history = "\n".join(f"Q: {t.question}\nA: {t.answer}" for t in turns[-4:])
        reply = step.ask(
            Rewritten,
            [SystemMessage(content=load_prompt("rewrite.system")),
             HumanMessage(content=load_prompt("rewrite.user").format(history=history, message=message))],  # fmt: skip
            "rewrite",
        )
        if reply is not None and reply.question.strip():
            question, rule = reply.question.strip(), f"model: {reply.why or 'rewritten'}"
    step.decide(f"{question!r} ({rule})")
    return {"question": question, "evidence_from": evidence_from, "compare": compare, "filters": {}}

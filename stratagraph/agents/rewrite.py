"""``rewrite``: the latest message of a conversation as a question that stands on its own.

With a chat model: prompt ``rewrite`` with the last turns, structured output ``{question, why}``, except for a
"why?" or a "compare that with X", which the conversation's own steps answer (the rules read them). Without
one (and when the model's reply is unusable), rules over the last turns (:func:`rewrite_by_rules`):

* "why?" (alone, or "why is that?") asks about the last answer: the question becomes "Why: <last question>"
  and its evidence is the last answer's cited chunks (``evidence_from``); the rules below read the question
  a "why?" was about, not the "why?" turn itself;
* an ellipsis ("and in Q3?", "what about the Fire Department?", "and for 2023?"): the last question with the
  corresponding part swapped: a period (Q1-Q4, FY2025, a year) for the last question's period, anything
  else for the last question's subject (its first named entity or proper-noun phrase);
* "the previous quarter" / "the next quarter" / "the prior year": the period one step from the last turn's;
* "compare that with X" / "how does that compare to X": the last question asked again for X (its period or
  subject swapped); the answer compares the two answers (a difference when both are numbers);
* pronouns ("it", "its", "they", "their", "that", "this", "he", "she", "his", "her"...) stand for the last
  turn's subject, unless the message names something before the pronoun for it to stand for ("what is the
  largest amount ..., and which item is it for");
* anything else is already a question on its own.

The trace records the rewritten question (and the rule that made it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel, Field

from stratagraph.agents.common import Step, agent_node
from stratagraph.answers import Citation
from stratagraph.text.nlp import load_nlp
from stratagraph.text.periods import Period, find_period

__all__ = ["Rewritten", "Turn", "latest_message", "rewrite", "rewrite_by_rules", "same_question", "subject_of"]

_WHY = re.compile(r"^\s*(?:and\s+)?why\b[^a-z]*(?:(?:is|was|did|does)\s+(?:that|it|this)\b)?\s*\??\s*$", re.IGNORECASE)
_ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about|and what about|same for|and for)\b\s*(.*?)\s*\??\s*$", re.IGNORECASE)
_COMPARE = re.compile(r"^\s*(?:compare\s+(?:that|this|it)\s+(?:with|to|against)|how\s+does\s+(?:that|this|it)\s+compare\s+(?:with|to))\s+(.*?)\s*\??\s*$", re.IGNORECASE)  # fmt: skip
_RELATIVE = re.compile(r"\bthe\s+(previous|prior|preceding|last|next|following)\s+(quarter|year)\b", re.IGNORECASE)
_PRONOUNS = re.compile(r"\b(its|it|their|they|them|his|he|her|she|this|that|these|those)\b", re.IGNORECASE)
_POSSESSIVE = {"its", "their", "his", "her"}
WHY_PREFIX = "Why: "


class Turn(BaseModel):
    """What a conversation remembers of one turn."""

    message: str
    question: str  # as rewritten
    answer: str
    found: bool
    workflow: str = ""
    subject: str = ""  # the entity the question was about
    chunks: list[str] = Field(default_factory=list)  # the chunks the answer cited
    citations: list[Citation] = Field(default_factory=list)
    filters: dict[str, str] = Field(default_factory=dict)


def same_question(a: str, b: str) -> bool:
    """Whether two questions ask the same thing, periods compared as periods ("in the second quarter of
    2024" and "in Q2 2024"), case and punctuation aside."""

    def key(q: str) -> str:
        p = find_period(q)
        if p is not None:
            q = q[: p.start] + p.text + q[p.end :]
        return " ".join(re.findall(r"\w+", q.casefold()))

    return key(a) == key(b)


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
    proper-noun phrase, without a possessive ending ("Northwind Robotics'" -> "Northwind Robotics")."""
    doc = load_nlp()(question)
    for ent in doc.ents:
        if ent.label_ not in ("DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL") and not _is_period(ent.text):
            return _bare(ent.text)
    for nc in doc.noun_chunks:
        if any(t.pos_ == "PROPN" for t in nc) and not _is_period(nc.text):
            return _bare(re.sub(r"^(?:a|an)\s+", "", nc.text, flags=re.IGNORECASE))
    return ""


def _bare(name: str) -> str:
    return re.sub(r"(?:'s|’s|'|’)$", "", name.strip())


def _is_period(text: str) -> bool:
    """Whether ``text`` is a period phrase and nothing else ("Q3", "the second quarter of 2024")."""
    p = find_period(text)
    rest = (text[: p.start] + text[p.end :]) if p else text
    return p is not None and not re.sub(r"\b(?:the|in|of|for)\b", "", rest, flags=re.IGNORECASE).strip(" ,.?")


def _replace_period(question: str, new: Period) -> str | None:
    """``question`` with its period phrase replaced by ``new`` (taking the old one's year when ``new`` has
    none), or None when it names no period."""
    old = find_period(question)
    if old is None:
        return None
    return question[: old.start] + new.with_year_of(old).text + question[old.end :]


def _structural(message: str) -> bool:
    """A "why?" about the last answer, or "compare that with X": the conversation's own steps answer it."""
    return bool(_WHY.match(message) or _COMPARE.match(message))


def rewrite_by_rules(message: str, turns: Sequence[Turn]) -> tuple[str, str, list[str], list[str]]:
    """``(question, rule, evidence_from, compare)`` for ``message`` given the last turns (module docstring):
    ``evidence_from`` the chunks a "why?" asks about, ``compare`` the two questions a "compare that with X"
    asks (the answer compares their answers)."""
    last = turns[-1] if turns else None
    if last is None:
        return message, "first message", [], []
    if _WHY.match(message):
        return f"{WHY_PREFIX}{last.question}", "why: the last answer's evidence", list(last.chunks), []
    # a follow-up after a "why?" turn continues the question the "why?" was about
    last = next((t for t in reversed(turns) if not t.question.startswith(WHY_PREFIX)), last)
    msg, rule = message, ""
    relative = _RELATIVE.search(msg)
    # the period the conversation is in: the latest one a question named
    period_old = next((p for t in reversed(turns) if (p := find_period(t.question)) is not None), None)
    if relative and period_old:
        step = -1 if relative.group(1).lower() in ("previous", "prior", "preceding", "last") else 1
        shifted = period_old.shift(step).text
        msg = msg[: relative.start()] + shifted + msg[relative.end() :]
        rule = f"{relative.group(0)} of {period_old.text}: {shifted}; "
    compare = _COMPARE.match(msg)
    if compare:
        other = compare.group(1).strip().rstrip(" .!?")
        swapped = _swap(last, other)
        if swapped is not None:
            return f"{last.question.rstrip('?')}, compared with {other}?", rule + "compare: both answers", [], [last.question, swapped]
        return f"{last.question.rstrip('?')}, compared with {other}?", rule + "compare", [], []
    ellipsis = _ELLIPSIS.match(msg)
    bare = msg.strip().rstrip("?").strip()
    if (ellipsis and ellipsis.group(1)) or _is_period(bare):
        part = re.sub(r"^(?:in|for|at|during)\s+", "", (ellipsis.group(1) if ellipsis else bare).strip(), flags=re.IGNORECASE)
        part = part.rstrip(" .!?")
        subject = last.subject or subject_of(last.question)
        if subject and _PRONOUNS.search(part):  # "what about its CFO?": the same subject, another attribute
            first = last.question.split()[0]
            wh = first if first.lower() in ("who", "what", "where", "when", "which", "how") else "What"
            return f"{wh} is {_resolve_pronouns(part, subject)}?", rule + f"ellipsis: another attribute of {subject}", [], []
        swapped = _swap(last, part)
        if swapped is not None:
            return swapped, rule + "ellipsis: another " + ("period" if _is_period(part) else "subject"), [], []
        return f"{last.question.rstrip('?')} for {part}?", rule + "ellipsis", [], []
    subject = last.subject or subject_of(last.question)
    pronoun = _PRONOUNS.search(msg)
    if subject and pronoun and (pronoun.group(1).lower() in _POSSESSIVE or not (subject_of(msg) or _antecedent(msg, pronoun.start()))):
        return _resolve_pronouns(msg, subject), rule + f"pronoun: {subject}", [], []
    return msg, (rule + "already standalone") if rule else "already standalone", [], []


def _swap(last: Turn, part: str) -> str | None:
    """The last question with its period (when ``part`` is a period) or its subject replaced by ``part``."""
    if _is_period(part):
        new = find_period(part)
        assert new is not None
        replaced = _replace_period(last.question, new)
        return replaced if replaced is not None else f"{last.question.rstrip('?')} in {new.text}?"
    subject = last.subject or subject_of(last.question)
    if subject and subject in last.question:
        before = last.question[: last.question.index(subject)]
        if re.search(r"\b(?:the|a|an)\s+$", before, re.IGNORECASE):  # "the Police Department" -> "the Fire ..."
            part = re.sub(r"^(?:the|a|an)\s+", "", part, flags=re.IGNORECASE)
        return last.question.replace(subject, part, 1)
    return None


def _antecedent(text: str, at: int) -> bool:
    """Whether the message itself names what a pronoun at ``at`` stands for: a noun phrase before it that is not
    the question's own wh-phrase ("what is *the largest amount* in the budget, and which item is *it* for")."""
    from stratagraph.text.nlp import load_nlp

    for chunk in load_nlp()(text[:at]).noun_chunks:
        if chunk.root.pos_ in ("NOUN", "PROPN") and not any(t.tag_ in ("WDT", "WP", "WRB") for t in chunk):
            return True
    return False


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
    reply = None
    if step.llm is not None and turns and not _structural(message):  # a why / compare is the rules' alone
        history = "\n".join(f"Q: {t.question}\nA: {t.answer}" for t in turns[-4:])
        reply = step.ask_prompt("rewrite", Rewritten, history=history, message=message)
    if reply is not None and reply.question.strip():
        question, rule, evidence_from, compare = reply.question.strip(), f"model: {reply.why or 'rewritten'}", [], []
    else:
        question, rule, evidence_from, compare = rewrite_by_rules(message, turns)
    step.decide(f"{question!r} ({rule})")
    return {"question": question, "evidence_from": evidence_from, "compare": compare, "filters": {}}

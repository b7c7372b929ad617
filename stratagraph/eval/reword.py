"""Generated questions reworded by a chat model (issue 25, ``eval generate --reword``): the graph's templates
("What is the Revenue of Q2 (restated) in "<title>", section "<heading>"?") said as a user would ask them.

A rewording stands only when it keeps what pins the answer, checked in code (:func:`keeps`): every number the
template writes (years, quarters, amounts; a heading's numbering aside), the content words of every row and
column label it reads (``derivation``), no figure of the answer (a choice may name it among its options), one
question of at most :data:`MAX_WORDS` words. Otherwise the
template stays, and the question says so (``derivation["reworded"]`` is false). The template is kept in
``derivation["template"]`` either way, so a set can be checked against the documents as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from stratagraph.eval.accuracy import amounts
from stratagraph.eval.datasets import Question
from stratagraph.prompts import load_prompt
from stratagraph.reading.words import content_forms, word_forms

__all__ = ["MAX_WORDS", "Reworded", "keeps", "reword"]

#: the longest reworded question (words)
MAX_WORDS = 45

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_NUMBERING = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s+")


class Reworded(BaseModel):
    question: str


def _labels(q: Question) -> list[str]:
    d = q.derivation or {}
    out = [str(d[k]) for k in ("row", "column") if d.get(k)]
    out += [str(r) for r in d.get("rows") or []]
    return out


def keeps(template: Question, text: str) -> str:
    """Why a rewording does not stand ("" when it does: module docstring)."""
    text = " ".join(text.split())
    if not text.endswith("?") or text.count("?") != 1:
        return "not one question"
    if len(text.split()) > MAX_WORDS:
        return f"longer than {MAX_WORDS} words"
    have = {m.replace(",", "") for m in _DIGITS.findall(text)}
    # a heading's numbering may go ("the Police Department" for "1.1.1 Police Department")
    numbering = _NUMBERING.match(str((template.derivation or {}).get("section") or ""))
    asked = template.question.replace(numbering.group(0), " ", 1) if numbering else template.question
    missing = [m for m in _DIGITS.findall(asked) if m.replace(",", "") not in have]
    if missing:
        return f"drops {', '.join(missing)}"
    words = word_forms(text)
    for label in _labels(template):
        lost = [w for w in content_forms(label) if not (w & words)]
        if lost:
            return f"drops the label {label!r}"
    said = {v for v, _ in amounts(template.question)}
    if any(v not in said and (v in {a for a, _ in amounts(text)}) for answer in template.answers[:1] for v, _ in amounts(answer)):
        return "states the answer"
    answer = template.answers[0].casefold() if template.answers else ""
    if answer and not amounts(answer) and answer in text.casefold() and answer not in template.question.casefold():
        return "states the answer"
    return ""


def reword(questions: Sequence[Question], chat_model: Any, usage: Any = None) -> tuple[list[Question], dict[str, Any]]:
    """The questions, each reworded by ``chat_model`` where the rewording keeps the question (module
    docstring), and a summary ``{"reworded": n, "kept": n, "reasons": {...}}``. An endpoint that cannot be
    reached raises :class:`~stratagraph.llm.LLMUnavailable`."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from stratagraph.llm import ask_structured

    out: list[Question] = []
    reasons: dict[str, int] = {}
    system = load_prompt("reword_question.system").format()
    for q in questions:
        messages = [SystemMessage(content=system),
                    HumanMessage(content=load_prompt("reword_question.user").format(kind=q.kind or "", question=q.question))]  # fmt: skip
        try:
            got = ask_structured(chat_model, Reworded, messages, usage=usage, what="eval reword").value
        except ValueError:  # a prompt too long for the model: the template stays
            got = None
        why = keeps(q, got.question) if got is not None else "no usable reply"
        text = got.question if got is not None else q.question
        derivation = dict(q.derivation or {}) | {"template": q.question, "reworded": not why}
        if why:
            reasons[why.split(" '")[0]] = reasons.get(why.split(" '")[0], 0) + 1
            out.append(q.model_copy(update={"derivation": derivation}))
        else:
            out.append(q.model_copy(update={"question": " ".join(text.split()), "derivation": derivation}))
    done = sum(1 for q in out if (q.derivation or {}).get("reworded"))
    return out, {"reworded": done, "kept": len(out) - done, "reasons": reasons}

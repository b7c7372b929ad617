"""Prompt texts, one Markdown file per prompt, shipped as package data (``stratagraph/prompts/*.md``).

A prompt's name is its file name without ``.md``: ``load_prompt("extract_facts.system")`` reads
``extract_facts.system.md``. Prompts that take values use ``str.format`` placeholders (``{text}``); prompts
that are sent verbatim (system prompts with JSON examples) are never formatted, so their braces need no
escaping. Which prompt is formatted is stated at the top of the code that uses it.
"""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["DATA_CLOSE", "DATA_OPEN", "Prompt", "available_prompts", "defuse", "load_prompt"]

#: the delimiters around document text in every user prompt; the system prompt says what is between them is data
DATA_OPEN, DATA_CLOSE = "<<<", ">>>"
_DEFUSED = {DATA_OPEN: "\u2039\u2039\u2039", DATA_CLOSE: "\u203a\u203a\u203a"}


def defuse(value: object) -> object:
    """A value to format into a prompt with the data delimiters in it replaced (a passage cannot close the
    data block it is quoted in and speak outside it); non-strings as they are."""
    if not isinstance(value, str):
        return value
    for token, safe in _DEFUSED.items():
        value = value.replace(token, safe)
    return value


class Prompt(str):
    """A prompt's text; :meth:`format` defuses the data delimiters in every value it fills in."""

    __slots__ = ()

    def format(self, *args: object, **kwargs: object) -> str:  # type: ignore[override]
        return str.format(str(self), *(defuse(a) for a in args), **{k: defuse(v) for k, v in kwargs.items()})

_SUFFIX = ".md"


def available_prompts() -> list[str]:
    """The names of all prompts in this package, sorted."""
    return sorted(
        entry.name[: -len(_SUFFIX)]
        for entry in resources.files(__name__).iterdir()
        if entry.is_file() and entry.name.endswith(_SUFFIX)
    )


@functools.cache
def load_prompt(name: str) -> Prompt:
    """The text of prompt ``name`` (``stratagraph/prompts/<name>.md``), read once per process.

    Raises :class:`FileNotFoundError` naming the prompt and listing the available ones when there is no such
    file (names with a path separator are refused the same way: prompts live directly in the package).
    """
    resource = resources.files(__name__).joinpath(name + _SUFFIX)
    if "/" in name or "\\" in name or not name or not resource.is_file():
        raise FileNotFoundError(
            f"no prompt named {name!r} in stratagraph/prompts; available: {', '.join(available_prompts()) or '(none)'}"
        )
    return Prompt(resource.read_text(encoding="utf-8"))

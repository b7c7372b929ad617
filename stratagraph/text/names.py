"""Entity-name keys: the normalised spelling under which ingestion stores an entity (its node id is
``ent:<key>``, its row in the ``entities`` collection is keyed by it) and under which retrieval and the tools
look a name up."""

from __future__ import annotations

import re

from stratagraph.text.titles import fold

__all__ = ["clean_name", "entity_key"]

_SUFFIX = re.compile(r"(?:,?\s+(?:inc|incorporated|corp|corporation|ltd|limited|llc|plc|co|gmbh|ag|sa|nv))+\.?$", re.I)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_POSSESSIVE = re.compile(r"['’]s$", re.I)
_NON_WORD = re.compile(r"[^\w]+")


def clean_name(name: str) -> str:
    """A mention without the unbalanced bracket a tagger's span can catch ("C (Okafor and Lindqvist"
    -> "Okafor and Lindqvist"), trimmed."""
    name = " ".join(name.split())
    opened, closed = name.rfind("("), name.rfind(")")
    if opened > closed:
        name = name[opened + 1 :]
    elif closed >= 0 and "(" not in name[:closed]:
        name = name[:closed]
    return name.strip()


def entity_key(name: str) -> str:
    """The normalised key of an entity name: '' when nothing is left."""
    name = clean_name(name).strip("\"'“”‘’()[]{}.,;:")
    name = _POSSESSIVE.sub("", name)
    name = _ARTICLE.sub("", name)
    stripped = _SUFFIX.sub("", name)
    name = stripped if stripped.strip() else name
    return " ".join(_NON_WORD.sub(" ", fold(name)).split())

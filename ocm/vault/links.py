"""Obsidian wikilinks between notes: written as quoted `"[[stem]]"` properties, read back as ids.

Link targets are file stems (Obsidian resolves `[[stem]]` by basename). Every reader of a
linking property (`session`, `supersedes`, `superseded_by`) goes through `unlink`, so a bare
id (notes written before links existed, or by a person) and `[[stem]]`, `[[stem|alias]]`,
`[[folder/stem]]`, `[[stem#heading]]` or `[[stem.md]]` all mean the same note.
"""

from __future__ import annotations

import re
from typing import Any

_LINK_RE = re.compile(r"^\s*!?\[\[([^\]|#^]*)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]\s*$")


def link(stem: str) -> str:
    """`stem` -> `[[stem]]` (already a link: unchanged)."""
    text = str(stem).strip()
    return text if is_link(text) else f"[[{text}]]"


def is_link(value: Any) -> bool:
    return isinstance(value, str) and bool(_LINK_RE.match(value))


def unlink(value: Any) -> str:
    """The note id/stem a property names: `[[a/b|x]]` -> `b`; a bare id is returned stripped.
    YAML may also have read an unquoted `[[x]]` as a nested list: that is accepted too."""
    if value is None:
        return ""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list):
        return ""
    text = str(value).strip()
    match = _LINK_RE.match(text)
    if not match:
        return text
    target = match.group(1).strip().rsplit("/", 1)[-1]
    return target[:-3] if target.lower().endswith(".md") else target



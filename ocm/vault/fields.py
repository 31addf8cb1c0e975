"""The types of the frontmatter keys ocm reads: a note whose YAML parses but holds a value
no reader can use (`created: 2024-02-30`, a date that is a list, `importance: "high"`, a
title that is a mapping, tags as a dict) is a broken note, named with the field, like one
whose YAML does not parse. Checked once, where frontmatter is parsed (`Frontmatter.parse`),
so no reader has to guard its own reads. Keys ocm does not know are a person's own and are
left alone; a value ocm does not set (`None`, "") is always allowed.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from .clock import parse_timestamp

# Text: a number is accepted (YAML types an unquoted `key: 2024` as one; readers use str()).
TEXT_KEYS = frozenset({
    "id", "type", "title", "status", "scope", "key", "author", "origin_type", "git_sha",
    "resolution", "agent_session_id", "tool", "project", "trigger", "git_sha_start",
    "git_sha_end", "slug", "summary", "kind", "source",
})
# Links: a `[[id]]` written without quotes is read by YAML as a nested list (links.unlink).
LINK_KEYS = frozenset({"session", "supersedes", "superseded_by", "transcript"})
DATE_KEYS = frozenset({"created", "updated", "started_at", "started_at_utc", "ended_at",
                       "updated_at", "created_utc", "updated_utc"})
LIST_KEYS = frozenset({"tags", "files"})
COUNT_KEYS = frozenset({"reads", "edits", "turns", "chars", "cut_turns", "offset"})
IMPORTANCE_RANGE = (1, 10)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, date):
        return "a date"
    return type(value).__name__


def _text(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, int | float) and not isinstance(value, bool))


def _link(value: Any) -> bool:
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return _text(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def problem(key: str, value: Any) -> str | None:
    """Why `value` cannot be `key`'s value ("created: … is not a date"), or None."""
    if value is None or value == "":
        return None
    if key in TEXT_KEYS and not _text(value):
        return f"{key} must be text, not {_kind(value)}"
    if key in LINK_KEYS and not _link(value):
        return f"{key} must be a note id or [[link]], not {_kind(value)}"
    if key in DATE_KEYS and (isinstance(value, list | dict | bool)
                             or parse_timestamp(value) is None):
        shown = _kind(value) if isinstance(value, list | dict | bool) else repr(value)
        return f"{key} must be a date such as 2024-02-28T10:00:00, not {shown}"
    if key in LIST_KEYS and not (_text(value) or (
            isinstance(value, list) and all(_text(item) or item is None for item in value))):
        return f"{key} must be a list of text items, not {_kind(value)}"
    if key in COUNT_KEYS and not _count(value):
        return f"{key} must be a whole number >= 0, not {value!r}"
    if key == "importance":
        low, high = IMPORTANCE_RANGE
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"importance must be a whole number from {low} to {high}, not {value!r}"
    return None


def first_problem(data: dict[Any, Any]) -> str | None:
    """The first key of `data` holding an impossible value, described; None if all fit."""
    for key, value in data.items():
        found = problem(str(key), value)
        if found:
            return found
    return None

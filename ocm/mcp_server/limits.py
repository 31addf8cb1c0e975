"""Size limits on every MCP tool argument, checked before a tool does any work.

A tool's arguments are validated by pydantic before the tool runs; the check here runs first
in that validation (a `before` validator on each tool's argument model), so a 10 MB query or
a million-item list is refused in time linear in its size, with an `isError` result naming
the field and its limit, and nothing is written. The facade has its own, tighter limits for
some fields (a memory's content, a checkpoint's items); these are the outer bound for all.
"""

from __future__ import annotations

from typing import Any

from ocm.vault.limits import MAX_QUERY_CHARS

MAX_TEXT_CHARS = 100_000  # any other string: larger than the facade's own content limits
MAX_ID_CHARS = 1_000  # ids, keys, names, paths, enum-like strings
MAX_LIST_ITEMS = 1_000
# Fields whose values are prose or code an agent writes; the others are short by nature.
_TEXT_FIELDS = frozenset({"content", "goal", "diff_summary", "work_completed", "work_pending",
                          "work_summary", "decisions", "header", "reason", "supersede_reason"})
_QUERY_FIELDS = frozenset({"query"})


def _limit(field: str) -> int:
    if field in _QUERY_FIELDS:
        return MAX_QUERY_CHARS
    return MAX_TEXT_CHARS if field in _TEXT_FIELDS else MAX_ID_CHARS


def _check(field: str, path: str, value: Any) -> None:
    if isinstance(value, str):
        limit = _limit(field)
        if len(value) > limit:
            raise ValueError(f"{path}: {len(value):,} characters, at most {limit:,}")
    elif isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            raise ValueError(f"{path}: {len(value):,} items, at most {MAX_LIST_ITEMS:,}")
        for i, item in enumerate(value):
            _check(field, f"{path}[{i}]", item)
    elif isinstance(value, dict):
        if len(value) > MAX_LIST_ITEMS:
            raise ValueError(f"{path}: {len(value):,} keys, at most {MAX_LIST_ITEMS:,}")
        for key, item in value.items():
            _check(str(key), f"{path}.{key}", item)


def check_arguments(data: Any) -> Any:
    """`data` unchanged, or ValueError naming the first argument over its limit."""
    if isinstance(data, dict):
        for name, value in data.items():
            _check(str(name), str(name), value)
    return data

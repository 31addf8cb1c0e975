"""Input size limits shared by every entry point (CLI, MCP, hooks)."""

from __future__ import annotations

from .errors import InvalidInput

# A search query: words, identifiers, a pasted error line or stack frame fit many times over.
MAX_QUERY_CHARS = 10_000


def check_query(query: str | None) -> None:
    """InvalidInput naming `query` when it is longer than MAX_QUERY_CHARS."""
    if query is not None and len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query: {len(query):,} characters, at most {MAX_QUERY_CHARS:,}")

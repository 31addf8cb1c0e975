"""Memory records: typed facts with a lifecycle, one Markdown file each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .clock import instant, parse_timestamp, utc_timestamp
from .errors import InvalidInput
from .links import unlink
from .markdown import Block, Document
from .note import NoteView

MEMORY_TYPES: tuple[str, ...] = (
    "gotcha", "decision", "bug_fix", "discovery", "trade_off", "procedure", "principle",
    "preference", "lesson", "context", "reference", "identity", "historical", "session_summary",
)
# Union of the seeds' vocabularies, mapped onto the canonical types above.
TYPE_ALIASES: dict[str, str] = {
    "warning": "gotcha", "pitfall": "gotcha", "caveat": "gotcha", "gotchas": "gotcha",
    "incident": "bug_fix", "incidents": "bug_fix", "bug": "bug_fix", "bugfix": "bug_fix",
    "fix": "bug_fix", "rule": "principle", "principles": "principle", "standard": "principle",
    "convention": "principle", "insight": "lesson", "learning": "lesson", "lessons": "lesson",
    "experience": "lesson", "commitment": "decision", "choice": "decision",
    "decisions": "decision", "procedures": "procedure", "workflow": "procedure",
    "howto": "procedure", "how_to": "procedure", "tradeoff": "trade_off",
    "fact": "discovery", "finding": "discovery", "knowledge": "discovery",
    "discoveries": "discovery", "active": "context", "background": "context",
    "pointer": "reference", "link": "reference", "references": "reference",
    "archive": "historical", "past": "historical", "core": "identity", "self": "identity",
    "preferences": "preference", "summary": "session_summary",
}
MEMORY_STATUSES = ("active", "resolved", "superseded", "archived")
HIDDEN_STATUSES = ("resolved", "archived")
SCOPES = ("project", "user")
# Facts that stay true until someone says otherwise: exempt from temporal decay.
EVERGREEN_TYPES = frozenset({"identity", "principle", "preference", "lesson", "procedure"})
# Recall brief order (seed 003 injection order, extended with the coding types).
RECALL_ORDER = ("identity", "principle", "preference", "lesson", "gotcha", "decision",
                "procedure", "context")
FRONTMATTER_ORDER = [
    "id", "type", "title", "status", "scope", "key", "importance", "files", "tags", "session",
    "author", "origin_type", "created", "created_utc", "updated", "updated_utc", "git_sha",
    "supersedes", "superseded_by", "resolution",
]
# Stamps written as local time with the same moment in UTC beside (`<key>_utc`): the local
# time is what Obsidian shows, the UTC one orders records across time-zone changes.
STAMPS = ("created", "updated")
DEFAULT_IMPORTANCE = 5
CAPPED_ORIGINS = {"planning": 5, "investigation": 5}
MAX_CONTENT_CHARS = 64_000
MAX_TITLE_CHARS = 200


def canonical_type(value: str) -> str:
    """'Warning' -> 'gotcha'; an unknown type is an error listing the valid ones."""
    key = (value or "").strip().lower().replace("-", "_").replace(" ", "_")
    if key in MEMORY_TYPES:
        return key
    if key in TYPE_ALIASES:
        return TYPE_ALIASES[key]
    raise InvalidInput(
        f"unknown memory type {value!r}: expected one of {', '.join(MEMORY_TYPES)} "
        f"(aliases: {', '.join(sorted(TYPE_ALIASES))})"
    )


def validate_memory_status(status: str) -> str:
    if status not in MEMORY_STATUSES:
        raise InvalidInput(
            f"unknown memory status {status!r}: expected one of {', '.join(MEMORY_STATUSES)}"
        )
    return status


def validate_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise InvalidInput(f"unknown scope {scope!r}: expected one of {', '.join(SCOPES)}")
    return scope


def validate_importance(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10:
        raise InvalidInput(f"importance must be a whole number from 1 to 10, not {value!r}")
    return value


def validate_content(content: Any) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("memory content must be a non-empty string")
    if "\x00" in content:
        raise InvalidInput("memory content contains a NUL byte")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(
            f"memory content is {len(content):,} characters (max {MAX_CONTENT_CHARS:,}); "
            "store a summary and point to a file instead"
        )
    return content.strip()


def default_title(content: str) -> str:
    first = next((line.strip(" #-*>\t") for line in content.splitlines() if line.strip()), "")
    return first if len(first) <= 80 else first[:77].rstrip() + "…"


def capped_importance(importance: int, origin: str | None) -> int:
    cap = CAPPED_ORIGINS.get(origin or "")
    return min(importance, cap) if cap else importance


@dataclass
class ListEdit:
    """A change to a list property (`tags`, `files`): a new list, or items to add and
    remove. Removing an item the list does not hold is an error (a typo would otherwise
    pass silently)."""

    what: str
    replace: list[str] | None = None
    add: list[str] | None = None
    remove: list[str] | None = None

    def __post_init__(self) -> None:
        if self.replace is not None and (self.add or self.remove):
            raise InvalidInput(f"a new {self.what} list replaces the old one: give it alone, "
                               f"or {self.what}s to add and remove")

    @property
    def given(self) -> bool:
        return self.replace is not None or bool(self.add) or bool(self.remove)

    def apply(self, note_id: str, current: list[str]) -> list[str]:
        if self.replace is not None:
            return list(dict.fromkeys(self.replace))
        missing = [item for item in self.remove or [] if item not in current]
        if missing:
            raise InvalidInput(f"memory {note_id} has no {self.what} {missing[0]!r} "
                               f"(it has: {', '.join(current) or 'none'})")
        dropped = set(self.remove or [])
        kept = [item for item in current if item not in dropped]
        return list(dict.fromkeys(kept + list(self.add or [])))


class MemoryNote(NoteView):
    @property
    def type(self) -> str:
        return self.prop("type", "context")

    @property
    def status(self) -> str:
        return self.prop("status", "active")

    @property
    def title(self) -> str:
        return self.prop("title")

    @property
    def scope(self) -> str:
        return self.prop("scope", "project")

    @property
    def key(self) -> str | None:
        return self.prop("key") or None

    @property
    def session(self) -> str:
        """The session that made it: an id or stem, from a bare id or a `[[link]]`."""
        return unlink(self.fm.get("session"))

    @property
    def supersedes(self) -> str:
        return unlink(self.fm.get("supersedes"))

    @property
    def superseded_by(self) -> str:
        return unlink(self.fm.get("superseded_by"))

    @property
    def importance(self) -> int:
        value = self.fm.get("importance")
        return value if isinstance(value, int) and not isinstance(value, bool) else (
            DEFAULT_IMPORTANCE)

    @property
    def created(self) -> datetime | None:
        return parse_timestamp(self.fm.get("created"))

    @property
    def updated(self) -> datetime | None:
        return parse_timestamp(self.fm.get("updated")) or self.created

    @property
    def created_at(self) -> datetime | None:
        """When it was made, the true instant (aware, UTC): what orders records."""
        return instant(self.fm.get("created_utc"), self.fm.get("created"))

    @property
    def updated_at(self) -> datetime | None:
        """When it last changed, the true instant (aware, UTC), else `created_at`."""
        return instant(self.fm.get("updated_utc"), self.fm.get("updated")) or self.created_at

    def str_list(self, key: str) -> list[str]:
        value = self.fm.get(key)
        if value is None:
            return []
        if isinstance(value, list | tuple):
            return [str(item) for item in value if item is not None]
        return [str(value)]

    @property
    def content(self) -> str:
        lines: list[str] = []
        for block in self.doc.blocks:
            lines += ([block.heading] if block.level else []) + block.lines
        return "\n".join(lines).strip()

    def set(self, key: str, value: Any) -> None:
        """Set `key`; a stamp (`created`, `updated`) set to a local time also sets its UTC
        twin, read in the zone this process runs in (`None` clears both)."""
        self.doc.frontmatter.set(key, value, FRONTMATTER_ORDER)
        if key in STAMPS and (value is None or isinstance(value, datetime)):
            self.doc.frontmatter.set(f"{key}_utc", value and utc_timestamp(value),
                                     FRONTMATTER_ORDER)

    def set_content(self, content: str) -> None:
        self.doc.blocks = [Block(0, "", ["", *content.strip().split("\n"), ""])]


def new_memory_document(fields: dict[str, Any], content: str) -> Document:
    doc = Document.new()
    fields = {**{f"{key}_utc": utc_timestamp(fields[key]) for key in STAMPS
                 if isinstance(fields.get(key), datetime)}, **fields}
    for key in FRONTMATTER_ORDER:
        if fields.get(key) not in (None, "", [], ()):
            doc.frontmatter.set(key, fields[key])
    MemoryNote(doc).set_content(content)
    return doc

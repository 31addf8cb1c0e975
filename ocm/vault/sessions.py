"""Session notes: seed 004 §5 format, §7 checkpoint semantics, files touched by net effect."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from .clock import parse_timestamp
from .errors import Conflict, InvalidInput
from .markdown import Block, Document
from .note import NoteView

SESSION_STATUSES = ("open", "frozen", "closed")
_TRANSITIONS = {
    "open": {"open", "frozen", "closed"},
    "frozen": {"open", "frozen", "closed"},
    "closed": {"closed"},
}
CHANGE_TYPES = ("created", "modified", "deleted")

SECTION_ORDER = [
    "goal", "todos", "files touched", "git diff summary", "work done", "left off", "plan files",
    "architecture decisions", "references", "prompts", "memories", "failed commands",
]
SUB_ORDER = ["work completed", "work to be completed", "created", "modified", "deleted"]
_TITLES = {
    "goal": "Goal", "todos": "Todos", "files touched": "Files Touched",
    "git diff summary": "Git Diff Summary", "work done": "Work Done", "left off": "Left Off",
    "plan files": "Plan Files",
    "architecture decisions": "Architecture Decisions", "references": "References",
    "prompts": "Prompts", "memories": "Memories", "failed commands": "Failed Commands",
    "work completed": "✅ Work Completed",
    "work to be completed": "🔲 Work To Be Completed", "created": "Created",
    "modified": "Modified", "deleted": "Deleted",
}
FRONTMATTER_ORDER = [
    "id", "agent_session_id", "tool", "project", "author", "started_at", "started_at_utc",
    "ended_at", "status", "trigger", "git_sha_start", "git_sha_end", "slug", "tags", "reads",
    "edits",
]
_TOOL_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_TRIGGER_RE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_STAT_RE = re.compile(r"^\d+ files? changed")
MAX_ITEM_CHARS = 4000
MAX_ITEMS = 200

# Net effect of a second change on a file already recorded with the first.
_NET = {
    ("created", "modified"): "created",
    ("created", "deleted"): None,
    ("modified", "deleted"): "deleted",
    ("deleted", "created"): "modified",
    ("deleted", "modified"): "modified",
    ("modified", "created"): "modified",
}


def validate_tool(tool: str) -> str:
    value = (tool or "").strip().lower()
    if not _TOOL_RE.match(value):
        raise InvalidInput(f"invalid tool {tool!r}: use a lowercase name like 'claude-code'")
    return value


def validate_status(status: str) -> str:
    if status not in SESSION_STATUSES:
        raise InvalidInput(
            f"unknown session status {status!r}: expected one of {', '.join(SESSION_STATUSES)}"
        )
    return status


@dataclass
class PlanFile:
    path: str
    header: str = ""


@dataclass
class Reference:
    url: str
    title: str = ""


@dataclass
class CheckpointInput:
    """The fields of `ocm__checkpoint`; None means 'not given this time'."""

    slug: str | None = None
    goal: str | None = None
    work_completed: list[str] | None = None
    work_pending: list[str] | None = None
    work_summary: list[str] | None = None
    decisions: list[str] | None = None
    plan_files: list[PlanFile] | None = None
    references: list[Reference] | None = None
    diff_summary: str | None = None
    status: str | None = None
    trigger: str | None = None
    tags: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> CheckpointInput:
        """Build from the MCP tool's JSON fields, with clear errors for wrong shapes."""
        known = {
            "slug", "goal", "work_completed", "work_pending", "work_summary", "decisions",
            "plan_files", "references", "diff_summary", "status", "trigger", "tags",
        }
        unknown = sorted(set(data) - known - {"session_id", "tool", "agent_session_id"})
        if unknown:
            raise InvalidInput(f"unknown checkpoint field(s): {', '.join(unknown)}")
        out = cls()
        for name in ("slug", "goal", "diff_summary", "status", "trigger"):
            if data.get(name) is not None:
                if not isinstance(data[name], str):
                    raise InvalidInput(f"checkpoint field {name!r} must be a string")
                setattr(out, name, data[name])
        for name in ("work_completed", "work_pending", "work_summary", "decisions", "tags"):
            if data.get(name) is not None:
                setattr(out, name, _string_list(data[name], name))
        if data.get("plan_files") is not None:
            out.plan_files = [_plan_file(item) for item in _list(data["plan_files"], "plan_files")]
        if data.get("references") is not None:
            out.references = [_reference(item) for item in _list(data["references"], "references")]
        return out

    def validate(self) -> None:
        """Refuse bad input before anything is written (or a session created for it)."""
        from .ids import validate_slug

        for text in self.text_fields():
            if "\x00" in text:
                raise InvalidInput("checkpoint text contains a NUL byte")
            if not text.isascii() and text.encode("utf-8", "replace").decode() != text:
                raise InvalidInput("checkpoint text is not valid Unicode (a lone surrogate)")
            if len(text) > MAX_ITEM_CHARS:
                raise InvalidInput(
                    f"a checkpoint item is {len(text):,} characters (max {MAX_ITEM_CHARS:,}); "
                    "write bullets, not file contents")
        if self.slug:
            validate_slug(self.slug)
        SessionNote(Document.new()).apply(self)  # a dry run: bad trigger or status

    def text_fields(self) -> list[str]:
        """Every free-text value, for size checks."""
        out = [v for v in (self.slug, self.goal, self.diff_summary) if v]
        for items in (self.work_completed, self.work_pending, self.work_summary, self.decisions,
                      self.tags):
            out += items or []
        out += [f"{p.path} {p.header}" for p in self.plan_files or []]
        out += [f"{r.url} {r.title}" for r in self.references or []]
        return out


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidInput(f"checkpoint field {name!r} must be a list")
    if len(value) > MAX_ITEMS:
        raise InvalidInput(f"checkpoint field {name!r} has {len(value)} items (max {MAX_ITEMS})")
    return value


def _string_list(value: Any, name: str) -> list[str]:
    items = _list(value, name)
    if not all(isinstance(item, str) for item in items):
        raise InvalidInput(f"checkpoint field {name!r} must be a list of strings")
    return [item for item in items if item.strip()]


def _plan_file(item: Any) -> PlanFile:
    if isinstance(item, str):
        return PlanFile(item)
    if isinstance(item, dict) and isinstance(item.get("path"), str):
        return PlanFile(item["path"], str(item.get("header") or item.get("heading") or ""))
    raise InvalidInput("each plan_files item needs a 'path' (and optional 'header')")


def _reference(item: Any) -> Reference:
    if isinstance(item, str):
        return Reference(item)
    if isinstance(item, dict) and isinstance(item.get("url"), str):
        return Reference(item["url"], str(item.get("title") or ""))
    raise InvalidInput("each references item needs a 'url' (and optional 'title')")


# --------------------------------------------------------------------------- the note


class SessionNote(NoteView):
    """A session note document with typed accessors over its frontmatter and sections."""

    @property
    def status(self) -> str:
        return self.prop("status", "open")

    @property
    def tool(self) -> str:
        return self.prop("tool")

    @property
    def started_at(self) -> datetime | None:
        return parse_timestamp(self.fm.get("started_at"))

    @property
    def ended_at(self) -> datetime | None:
        return parse_timestamp(self.fm.get("ended_at"))

    def _section(self, key: str) -> Block | None:
        if key in ("work completed", "work to be completed"):
            return self.doc.find(key, "todos")
        if key in CHANGE_TYPES:
            return self.doc.find(key, "files touched")
        return self.doc.find(key)

    def ensure_section(self, key: str) -> Block:
        if key in ("work completed", "work to be completed"):
            return self.doc.ensure(key, _TITLES[key], SUB_ORDER, "todos", _TITLES["todos"],
                                   SECTION_ORDER)
        if key in CHANGE_TYPES:
            return self.doc.ensure(key, _TITLES[key], SUB_ORDER, "files touched",
                                   _TITLES["files touched"], SECTION_ORDER)
        return self.doc.ensure(key, _TITLES[key], SECTION_ORDER)

    def items(self, key: str) -> list[str]:
        block = self._section(key)
        return block.items() if block else []

    def text(self, key: str) -> str:
        block = self._section(key)
        return block.text() if block else ""

    @property
    def goal(self) -> str:
        return self.text("goal")

    def files(self) -> dict[str, str]:
        """path -> change type, created first (the order the sections list them)."""
        out: dict[str, str] = {}
        for change in CHANGE_TYPES:
            for item in self.items(change):
                out[item.strip().strip("`").strip()] = change
        return out

    def plan_files(self) -> list[PlanFile]:
        block = self._section("plan files")
        rows = block.table_rows() if block else []
        return [PlanFile(row[0].strip("`"), row[1] if len(row) > 1 else "") for row in rows]

    def diff_summary(self) -> str:
        return self.text("git diff summary")

    # -- mutation -----------------------------------------------------------------
    def set_frontmatter(self, key: str, value: Any) -> None:
        self.doc.frontmatter.set(key, value, FRONTMATTER_ORDER)

    def set_status(self, status: str) -> None:
        validate_status(status)
        current = self.status
        if status not in _TRANSITIONS.get(current, set(SESSION_STATUSES)):
            raise Conflict(f"session {self.id} is {current}; it cannot become {status}")
        self.set_frontmatter("status", status)

    def apply(self, inp: CheckpointInput) -> None:
        """Seed 004 §7: append completed/summary/decisions/plans/refs; replace pending/diff."""
        if inp.goal is not None and inp.goal.strip():
            self.ensure_section("goal").set_text(inp.goal.strip())
        if inp.work_completed:
            self.ensure_section("work completed").append_items(inp.work_completed)
            done = {" ".join(x.lower().split()) for x in inp.work_completed}
            pending = self._section("work to be completed")
            if pending is not None and inp.work_pending is None:
                left = [x for x in pending.items() if " ".join(x.lower().split()) not in done]
                if len(left) != len(pending.items()):
                    pending.replace_items(left)
        if inp.work_pending is not None:
            block = self._section("work to be completed")
            if block is not None or inp.work_pending:
                block = block or self.ensure_section("work to be completed")
                block.replace_items(inp.work_pending)
        if inp.diff_summary is not None and inp.diff_summary.strip():
            self.ensure_section("git diff summary").set_text(inp.diff_summary.strip())
        if inp.work_summary:
            self.add_items("work done", inp.work_summary)
        if inp.plan_files:
            rows = [[f"`{p.path}`", p.header] for p in inp.plan_files]
            self.ensure_section("plan files").append_table_rows(["File", "Description"], rows)
        if inp.decisions:
            self.add_items("architecture decisions", inp.decisions)
        if inp.references:
            items = [f"[{r.title}]({r.url})" if r.title else r.url for r in inp.references]
            self.add_items("references", items)
        if inp.tags:
            tags = list(self.fm.get("tags") or [])
            self.set_frontmatter("tags", tags + [t for t in inp.tags if t not in tags])
        if inp.trigger is not None:
            if not _TRIGGER_RE.match(inp.trigger):
                raise InvalidInput(f"invalid trigger {inp.trigger!r}: use a word like 'manual'")
            self.set_frontmatter("trigger", inp.trigger)
        if inp.status is not None:
            self.set_status(inp.status)

    def add_items(self, key: str, items: list[str], renew: bool = False) -> list[str]:
        """Append bullets to a list section (Prompts, Memories, Failed Commands…), skipping
        ones already there (`renew`: moving them to the end instead); returns those added."""
        if not items:
            return []
        return self.ensure_section(key).append_items(items, blank_after_heading=True,
                                                     renew=renew)

    def count_activity(self, reads: int = 0, edits: int = 0) -> None:
        """Add to the read/edit counters that decide the session's origin type."""
        for key, inc in (("reads", reads), ("edits", edits)):
            if inc:
                current = self.fm.get(key)
                self.set_frontmatter(key, (current if isinstance(current, int) else 0) + inc)

    def record_file(self, path: str, change: str) -> bool:
        """Record a touched file by its net effect; True if the note changed."""
        if change not in CHANGE_TYPES:
            raise InvalidInput(
                f"unknown change type {change!r}: expected one of {', '.join(CHANGE_TYPES)}"
            )
        files = self.files()
        before = files.get(path)
        after = change if before is None or before == change else _NET.get((before, change))
        if before == after:
            return False
        if after is None:
            files.pop(path)
        else:
            files[path] = after
        self._write_files(files, touched={before, after} - {None})
        return True

    def _write_files(self, files: dict[str, str], touched: set[str | None]) -> None:
        for change in CHANGE_TYPES:
            if change not in touched:
                continue
            wanted = [f"`{p}`" for p, c in files.items() if c == change]
            block = self._section(change)
            if wanted:
                (block or self.ensure_section(change)).replace_items(wanted)
            elif block is not None:
                block.replace_items([])
                if not block.text():
                    self.doc.remove(block)

    def set_diff_stat(self, stat: str) -> None:
        """Put the `git diff --stat` line first, keeping any prose the agent wrote below it."""
        prose = [line for line in self.diff_summary().splitlines() if not _STAT_RE.match(line)]
        self.ensure_section("git diff summary").set_text("\n".join([stat, *prose]).strip())


def normalise_file_path(path: str, root: str | None) -> str:
    """Project-relative POSIX path when inside the root; absolute paths elsewhere stay."""
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput("file path must be a non-empty string")
    if "\x00" in path:
        raise InvalidInput("file path contains a NUL byte")
    text = path.strip().replace("\\", "/")
    if root:
        root_posix = root.replace("\\", "/").rstrip("/") + "/"
        if text.startswith(root_posix):
            text = text[len(root_posix):]
    pure = PurePosixPath(text)
    if pure.is_absolute():
        return str(pure)
    parts: list[str] = []
    for part in pure.parts:
        if part == "..":
            if not parts:
                raise InvalidInput(f"file path {path!r} escapes the project root")
            parts.pop()
        elif part != ".":
            parts.append(part)
    if not parts:
        raise InvalidInput(f"file path {path!r} names no file")
    return "/".join(parts)


def origin_type(reads: int, edits: int) -> str | None:
    """Seed 000's session origin from read/edit counts, deterministically (no LLM)."""
    if reads + edits == 0:
        return None
    if edits == 0 or (edits <= 1 and reads >= 3):
        return "investigation" if reads >= 10 else "planning"
    if edits >= 3 and edits / (reads + edits) >= 0.3:
        return "implementation"
    return "mixed"

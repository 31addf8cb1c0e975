"""Pydantic models: the input shapes and the structured output of every `ocm__*` tool.

Each tool's return annotation is its MCP output schema; the SDK validates what a tool
returns against it and sends both the object (`structuredContent`) and its JSON text.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# ----------------------------------------------------------------------------- inputs


class PlanFileIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Project-relative path of the plan/design file.")
    header: str = Field("", description="The file's first heading, copied exactly.")


class ReferenceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="URL or internal document path.")
    title: str = Field("", description="Short (3-5 word) descriptive title.")


# ----------------------------------------------------------------------------- outputs


class WriteOutcome(BaseModel):
    """What a write changed: the note's id, its status and where its Markdown lives."""

    id: str = Field(description="The note id (memory id or ocm session id).")
    kind: str = Field(description="'session' or 'memory'.")
    status: str = Field(description="Status after the write (active, resolved, deleted, …).")
    markdown_path: str = Field(description="Absolute path of the note's Markdown file.")
    changed: bool = Field(True, description="False when nothing was written: the note "
                                            "already said exactly this, or (remember) a "
                                            "retired record says it (see notice).")
    notice: str | None = Field(None, description="Side effect worth knowing, e.g. "
                                                 "'superseded <id>'.")


class CheckpointOutcome(BaseModel):
    session_id: str = Field(description="The ocm session id: pass it to later checkpoints.")
    markdown_path: str = Field(description="Absolute path of the session note.")
    status: str = Field(description="open, frozen or closed.")
    changed: bool = Field(description="False when nothing new was given.")


class SessionHit(BaseModel):
    rank: int
    score: float = Field(description="Relevance (higher is better).")
    session_id: str
    goal: str = Field(description="The session goal (first line).")
    date: str | None = Field(description="When the session started (ISO 8601).")
    tool: str | None
    status: str
    top_files: list[str] = Field(description="Up to 3 files the session touched.")
    markdown_path: str = Field(description="Read this file for the full session.")
    matched: str | None = Field(None, description="'words', 'meaning' (no query word) or "
                                "'both'.")
    confidence: float | None = Field(None, description="0-1: the share of hits like this "
                                     "one that were relevant on the evaluation sets.")


class SessionSearchOutcome(BaseModel):
    query: str
    results: list[SessionHit]
    message: str = Field(description="One line for the user; says so when nothing matched.")


class SessionItem(BaseModel):
    session_id: str
    goal: str
    date: str | None
    tool: str | None
    status: str
    markdown_path: str


class SessionList(BaseModel):
    sessions: list[SessionItem]
    message: str


class SessionFile(BaseModel):
    path: str
    change_type: str = Field(description="created, modified or deleted.")


class SessionFiles(BaseModel):
    session_id: str
    files: list[SessionFile] = Field(description="Created first, then modified, then deleted.")


class NoteHit(BaseModel):
    """A search or list result: metadata and the note's path, never its whole text."""

    rank: int
    score: float
    id: str
    kind: str = Field(description="'session' or 'memory'.")
    type: str = Field(description="Memory type, or 'session'.")
    title: str = Field(description="Memory title, or the session goal.")
    status: str
    date: str | None
    tool: str | None = None
    scope: str = Field(description="project or user.")
    project: str = ""
    top_files: list[str] = Field(default_factory=list)
    markdown_path: str
    importance: int | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    tags: list[str] = Field(default_factory=list)
    author: str | None = Field(None, description="Who wrote it (git name and email), in a "
                                                 "team vault.")
    stale: bool = Field(False, description="A file this memory is about changed in git "
                                           "since it was written: verify before relying on it.")
    anchor: str | None = Field(None, description="The best matching section as an Obsidian "
                                                 "link, `path/in/vault.md#Heading`.")
    line: int | None = Field(None, description="That section's first line in the file.")
    section: str | None = Field(None, description="That section's heading (none when the "
                                                  "note is one chunk).")
    snippet: str | None = Field(None, description="Up to 200 characters of that section "
                                                  "around the query's words.")
    changed_files: list[str] = Field(default_factory=list,
                                     description="The memory's files changed since it was written.")
    matched: str | None = Field(None, description="Why it is a hit: 'words' (holds the "
                                "query's words), 'meaning' (close in meaning, no query word) "
                                "or 'both'.")
    confidence: float | None = Field(None, description="0-1: the share of hits like this "
                                     "one that were relevant on the evaluation sets.")


class Indexing(BaseModel):
    indexed: int = Field(description="Notes indexed so far.")
    total: int = Field(description="Notes in the vaults searched.")


class SearchOutcome(BaseModel):
    query: str
    results: list[NoteHit]
    message: str = Field(description="One line for the user; says so when nothing matched.")
    indexing: Indexing | None = Field(
        default=None, description="Set while the index is still being built (a fresh "
        "clone): the results match the words of the notes indexed so far only; a later "
        "search is complete.")


class MemoryList(BaseModel):
    memories: list[NoteHit]
    message: str


class RecallItem(BaseModel):
    section: str
    id: str
    kind: str
    type: str
    status: str = Field(default="", description="A memory's status (always active in a "
                                                  "brief); a session's open/frozen/closed.")
    title: str
    snippet: str = ""
    files: list[str] = Field(default_factory=list)
    score: float = 0.0
    date: str | None = None
    scope: str = ""
    markdown_path: str
    changed_files: list[str] = Field(default_factory=list,
                                     description="Files changed since it was written: verify.")


class LastSession(BaseModel):
    id: str
    goal: str
    tool: str | None = None
    status: str
    pending: list[str] = Field(default_factory=list)
    date: str | None = None
    markdown_path: str
    ago: str = Field("", description="How long ago it last acted ('3 hours ago').")
    done: list[str] = Field(default_factory=list)
    left_off: str = Field("", description="What its last message said is left.")
    failing: list[str] = Field(default_factory=list,
                               description="Commands that failed and never passed after.")
    decisions: list[str] = Field(default_factory=list)
    files: list[dict[str, str]] = Field(default_factory=list,
                                        description="{path, change_type}, most edited first.")
    transcript: str = Field("", description="Its transcript note's id and #Turn anchor.")


class RecallOutcome(BaseModel):
    text: str = Field(description="The brief, ready to read (prompt, snippets or JSON text).")
    items: list[RecallItem] = Field(description="The memories the brief kept, in order.")
    dropped: int = Field(description="How many did not fit the character budget.")
    left_out: int = Field(default=0, description="Relevant memories left out because they "
                                                 "no longer hold (resolved, superseded).")
    warning: str | None = Field(default=None,
                                description="Set when the brief fills 80 % of its budget.")
    last_session: LastSession | None = None


class NoteOutcome(BaseModel):
    id: str
    kind: str
    scope: str
    markdown_path: str
    frontmatter: dict[str, Any]
    markdown: str = Field(description="The note's full Markdown, frontmatter included; "
                                      "with `section`, that section's Markdown only.")
    section: str | None = Field(None, description="The section's heading, when one was asked.")
    line: int | None = Field(None, description="The section's first line in the file.")

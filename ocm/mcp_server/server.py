"""The `ocm` MCP server: thin tools over `ocm.project.Project`, served on stdio.

Every tool calls the facade and converts its answer to a pydantic model (the tool's output
schema); an `OcmError` becomes a `ToolError`, i.e. an `is_error` result whose text names
the problem, and the facade guarantees a refused call wrote nothing.

The project is found once, on the first tool call, from `OCM_PROJECT_DIR`,
`CLAUDE_PROJECT_DIR`, the client's MCP roots, or the working directory, in that order,
and the opened `Project` is kept: its `NoteIndex` objects reuse their Whoosh searcher
between calls, and every read first re-syncs the index from file signatures, so notes
written by hooks, the CLI or an editor are seen on the next call.

MCP roots: the SDK exposes them from a tool `Context` as `ctx.session.list_roots()`, a
server-to-client request that only exists on handshake-era connections (protocol
<= 2025-11-25, what hosts such as Claude Code speak today); it is asked once, with a short
timeout, and any failure falls back to the working directory. Protocol 2026-07-28
deprecates roots (SEP-2577) and has no server-initiated requests: the only way there is
an `InputRequiredResult` round trip (`Resolve(ListRoots)`), which turns a client that
cannot answer into a failed tool call, so on such connections ocm does not ask.

Sync facade calls run in worker threads, one at a time (a lock around the `Project`), so
concurrent tool calls never share a Whoosh searcher or a half-written note.
"""

import contextlib
import inspect
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import unquote, urlparse

import anyio
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, Field, model_validator

import ocm
from ocm.vault.errors import OcmError

from .limits import check_arguments
from .models import (
    CheckpointOutcome,
    Indexing,
    LastSession,
    MemoryList,
    NoteHit,
    NoteOutcome,
    PlanFileIn,
    RecallItem,
    RecallOutcome,
    ReferenceIn,
    SearchOutcome,
    SessionFile,
    SessionFiles,
    SessionHit,
    SessionItem,
    SessionList,
    SessionSearchOutcome,
    WriteOutcome,
)
from .wire import serve

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("ocm.mcp")

SERVER_NAME = "ocm"
MAX_SESSION_RESULTS = 5
ROOTS_TIMEOUT_S = 5.0
INSTRUCTIONS = (
    "Local project memory (openCodeMemory). At task start call ocm__recall; before "
    "re-deriving past work call ocm__search and read the markdown_path of a hit. Call "
    "ocm__checkpoint at ~70% context, before a git commit, at the end of a task or when "
    "asked to save: append new items, send the full work_pending list. Call ocm__remember "
    "for durable facts (gotcha, decision, bug_fix, lesson, preference); when one changes, "
    "reuse its key with a supersede_reason or call ocm__resolve_memory."
)
MEMORY_TYPES_HELP = (
    "gotcha, decision, bug_fix, discovery, trade_off, procedure, principle, preference, "
    "lesson, context, reference (aliases such as warning, incident, rule, insight work too)"
)

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _writes(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


# ----------------------------------------------------------------------------- the project


def _root_from_uri(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    return path if path.is_dir() else None


async def _client_root(ctx: Context) -> Path | None:
    """The client's first `file://` root, asked once on handshake-era connections."""
    try:
        caps = ctx.client_capabilities
    except ValueError:  # no request context (should not happen inside a tool)
        return None
    if caps is None or caps.roots is None:
        return None
    try:
        with anyio.move_on_after(ROOTS_TIMEOUT_S), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots are deprecated as of 2026-07-28
            result = await ctx.session.list_roots()
            for root in result.roots:
                found = _root_from_uri(str(root.uri))
                if found is not None:
                    return found
    except Exception as exc:  # noqa: BLE001 - no roots is not an error: fall back to cwd
        log.debug("ocm: client roots unavailable (%s)", type(exc).__name__)
    return None


def _client_tool(ctx: Context) -> str | None:
    """The host's tool id from the client's name ('claude-code', 'Visual Studio Code')."""
    from ocm.indexer.query import canonical_tool

    try:
        params = ctx.session.client_params
    except (ValueError, AttributeError):
        return None
    name = getattr(getattr(params, "client_info", None), "name", None)
    if not isinstance(name, str) or not name.strip():
        return None
    first = name.strip().replace("_", "-").replace(" ", "-").split("-")[0]
    return canonical_tool(name) or canonical_tool(first)


class Backend:
    """Finds and opens the project once, then runs facade calls one at a time."""

    def __init__(self, project_dir: Path | None = None) -> None:
        self.fixed = Path(project_dir) if project_dir is not None else None
        self.project_source: str | None = None
        self._project: Any = None  # ocm.project.Project, imported lazily
        self._lock = threading.Lock()

    def _from_env(self) -> tuple[Path | None, str | None]:
        if self.fixed is not None:
            return self.fixed, "argument"
        for name in ("OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR"):
            value = os.environ.get(name, "").strip()
            if value and "${" not in value:  # a variable the client did not expand: unset
                return Path(value).expanduser(), name
        return None, None

    async def project(self, ctx: Context) -> Any:
        if self._project is not None:
            return self._project
        folder, source = self._from_env()
        if folder is None:
            folder = await _client_root(ctx)
            source = "roots" if folder is not None else None
        if folder is None:
            folder, source = Path.cwd(), "cwd"
        return await anyio.to_thread.run_sync(self._open, folder, source)

    def _open(self, folder: Path, source: str | None) -> Any:
        with self._lock:
            if self._project is None:
                from ocm.project import Project

                self._project = _guard(lambda: Project.open(cwd=folder, strict=True))
                self.project_source = source
                log.info("ocm: project %s (from %s), vault %s", self._project.root, source,
                         self._project.vault.root)
            return self._project

    async def run(self, ctx: Context, fn: Callable[[Any], T]) -> T:
        project = await self.project(ctx)
        return await anyio.to_thread.run_sync(self._call, project, fn)

    def _call(self, project: Any, fn: Callable[[Any], T]) -> T:
        with self._lock:
            try:
                return _guard(lambda: fn(project))
            finally:
                for notice in project.notices:
                    log.warning("%s", notice)
                project.notices.clear()


def _guard(fn: Callable[[], T]) -> T:
    """Our errors become ToolErrors whose text the agent reads."""
    try:
        return fn()
    except OcmError as exc:
        raise ToolError(str(exc)) from exc
    except OSError as exc:
        raise ToolError(f"file system error: {exc}") from exc
    except Exception as exc:
        # Anything else would reach the agent as a bare "Error executing tool …": say what.
        log.exception("unexpected error")
        raise ToolError(f"unexpected error ({type(exc).__name__}: {exc})") from exc


# ----------------------------------------------------------------------------- conversion


def _write(result: Any) -> WriteOutcome:
    return WriteOutcome(id=result.id, kind=result.kind, status=result.status,
                        markdown_path=str(result.path.resolve()), changed=result.changed,
                        notice=result.notice)


def _note_hit(hit: Any) -> NoteHit:
    return NoteHit.model_validate(hit.to_json())


def _session_hit(hit: Any) -> SessionHit:
    data = hit.to_json()
    return SessionHit(rank=data["rank"], score=data["score"], session_id=data["id"],
                      goal=data["title"], date=data["date"], tool=data["tool"],
                      status=data["status"], top_files=data["top_files"],
                      markdown_path=data["markdown_path"], matched=data.get("matched"),
                      confidence=data.get("confidence"))


def _session_item(hit: Any) -> SessionItem:
    data = hit.to_json()
    return SessionItem(session_id=data["id"], goal=data["title"], date=data["date"],
                       tool=data["tool"], status=data["status"],
                       markdown_path=data["markdown_path"])


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


# ----------------------------------------------------------------------------- the server


def build_server(project_dir: Path | None = None) -> MCPServer:
    """The `ocm` server; the project is `project_dir`, or found on the first call."""
    backend = Backend(project_dir)
    server = MCPServer(SERVER_NAME, title="openCodeMemory", instructions=INSTRUCTIONS,
                       version=ocm.__version__, log_level=_log_level())
    server.ocm_backend = backend  # type: ignore[attr-defined]  # for tests and debugging

    def tool(name: str, title: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        """`server.tool` with the docstring dedented into the description agents read."""

        def register(fn: F) -> F:
            return server.tool(name=name, title=title, annotations=annotations,
                               description=inspect.cleandoc(fn.__doc__ or ""))(fn)

        return register

    # -- sessions ---------------------------------------------------------------------

    @tool(name="ocm__checkpoint", title="Save session checkpoint",
                 annotations=_writes(destructive=False, idempotent=False))
    async def checkpoint(
        ctx: Context,
        session_id: Annotated[str | None, Field(
            description="Your host's session id, the ocm session id, or omit for this "
                        "project's current open session (created if there is none).")] = None,
        slug: Annotated[str | None, Field(
            description="3-4 hyphenated words naming the session, e.g. 'tei-migration'. "
                        "First checkpoint only.")] = None,
        goal: Annotated[str | None, Field(
            description="1-2 sentences: what this session is trying to accomplish.")] = None,
        work_completed: Annotated[list[str] | None, Field(
            description="New completed items; APPENDED (matching pending items are "
                        "removed).")] = None,
        work_pending: Annotated[list[str] | None, Field(
            description="The FULL current list of remaining items; REPLACES the old "
                        "list.")] = None,
        work_summary: Annotated[list[str] | None, Field(
            description="Bullets on what was done since the last checkpoint; "
                        "APPENDED.")] = None,
        decisions: Annotated[list[str] | None, Field(
            description="New decisions as '**Label:** rationale.'; APPENDED.")] = None,
        plan_files: Annotated[list[PlanFileIn] | None, Field(
            description="Plan/design files: {path, header}; APPENDED.")] = None,
        references: Annotated[list[ReferenceIn] | None, Field(
            description="Links used: {url, title}; APPENDED.")] = None,
        diff_summary: Annotated[str | None, Field(
            description="Short note on the git diff; REPLACES the previous one.")] = None,
        status: Annotated[Literal["open", "frozen", "closed"] | None, Field(
            description="'frozen' when the context limit is hit, 'closed' at session end; "
                        "omit otherwise.")] = None,
        trigger: Annotated[str | None, Field(
            description="Why now: manual, context_limit, git_commit, session_end, …")] = None,
        tool: Annotated[str | None, Field(
            description="Tool running the session, e.g. claude-code (default: guessed "
                        "from the MCP client).")] = None,
        tags: Annotated[list[str] | None, Field(description="Tags to add.")] = None,
    ) -> CheckpointOutcome:
        """Save or update this coding session's note (created on the first call).

        Give only what is new since the last checkpoint: work_completed, work_summary,
        decisions, plan_files and references are appended; work_pending and diff_summary
        replace. Returns the session id to reuse and the note's markdown_path.
        """
        from ocm.vault.sessions import CheckpointInput

        given: dict[str, Any] = {
            "slug": slug, "goal": goal, "work_completed": work_completed,
            "work_pending": work_pending, "work_summary": work_summary, "decisions": decisions,
            "diff_summary": diff_summary, "status": status, "trigger": trigger, "tags": tags,
            "plan_files": None if plan_files is None else [p.model_dump() for p in plan_files],
            "references": None if references is None else [r.model_dump() for r in references],
        }
        data = {k: v for k, v in given.items() if v is not None}
        host_tool = tool or _client_tool(ctx)

        def call(project: Any) -> CheckpointOutcome:
            result = project.checkpoint(CheckpointInput.from_mapping(data),
                                        session_id=session_id, tool=host_tool)
            return CheckpointOutcome(session_id=result.id,
                                     markdown_path=str(result.path.resolve()),
                                     status=result.status, changed=result.changed)

        return await backend.run(ctx, call)

    @tool(name="ocm__search_sessions", title="Search past sessions",
                 annotations=READ_ONLY)
    async def search_sessions(
        ctx: Context,
        query: Annotated[str, Field(
            description="Natural language, e.g. 'tei migration embedding latency' or "
                        "'cursor session about kv cache last week'.")],
        limit: Annotated[int, Field(ge=1, description="At most 5 results (hard cap); weak "
                                                      "matches are left out.")] = 5,
        scope: Annotated[Literal["project", "global"], Field(
            description="'project' (this project) or 'global' (every registered "
                        "project).")] = "project",
        tool_filter: Annotated[str | None, Field(
            description="Only sessions from this tool: claude-code, cursor, codex, gemini, "
                        "vscode, …")] = None,
    ) -> SessionSearchOutcome:
        """Find past coding sessions; returns each session's markdown_path, not its content.

        Read the file at markdown_path to continue that work, or call
        ocm__get_session_files for just its file list.
        """
        from ocm.project import SearchRequest

        req = SearchRequest(query=query, kind="session", limit=min(limit, MAX_SESSION_RESULTS),
                            tool=tool_filter, scope=scope, include_resolved=True)
        hits = await backend.run(ctx, lambda project: project.search(req))
        results = [_session_hit(h) for h in hits]
        message = ("No sessions found matching your query." if not results else
                   f"{_count(len(results), 'session')} found; read the one you need at its "
                   "markdown_path.")
        return SessionSearchOutcome(query=query, results=results, message=message)

    @tool(name="ocm__list_sessions", title="List recent sessions", annotations=READ_ONLY)
    async def list_sessions(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100, description="How many, newest first.")] = 10,
        tool_filter: Annotated[str | None, Field(
            description="Only sessions from this tool (claude-code, cursor, …).")] = None,
        status: Annotated[Literal["open", "frozen", "closed"] | None, Field(
            description="Only sessions with this status.")] = None,
    ) -> SessionList:
        """Recent sessions of this project, newest first (no search)."""
        hits = await backend.run(ctx, lambda project: project.list_sessions(
            limit=limit, tool=tool_filter, status=status))
        sessions = [_session_item(h) for h in hits]
        message = _count(len(sessions), "session") if sessions else "No sessions recorded yet."
        return SessionList(sessions=sessions, message=message)

    @tool(name="ocm__get_session_files", title="Files a session touched",
                 annotations=READ_ONLY)
    async def get_session_files(
        ctx: Context,
        session_id: Annotated[str, Field(
            description="The ocm session id or your host's session id.")],
    ) -> SessionFiles:
        """The files a session created, modified or deleted, without its full note."""

        def call(project: Any) -> SessionFiles:
            sid = project.resolve_session(session_id, create=False)
            rows = project.session_files(sid)
            return SessionFiles(session_id=sid, files=[SessionFile(**row) for row in rows])

        return await backend.run(ctx, call)

    # -- memories ---------------------------------------------------------------------

    @tool(name="ocm__remember", title="Store a memory",
                 annotations=_writes(destructive=False, idempotent=False))
    async def remember(
        ctx: Context,
        content: Annotated[str, Field(description="The fact, in a few sentences.")],
        type: Annotated[str, Field(description=f"Memory type: {MEMORY_TYPES_HELP}.")],
        title: Annotated[str | None, Field(
            description="Short title (default: the first line).")] = None,
        files: Annotated[list[str] | None, Field(
            description="Project files the fact is about.")] = None,
        tags: Annotated[list[str] | None, Field(description="Tags.")] = None,
        key: Annotated[str | None, Field(
            description="Stable key: one active memory per key (e.g. 'db.pool-size').")] = None,
        supersede_reason: Annotated[str | None, Field(
            description="Required to replace the active memory that holds this key.")] = None,
        scope: Annotated[Literal["project", "user"], Field(
            description="'project', or 'user' for facts that follow you across "
                        "projects.")] = "project",
        importance: Annotated[int | None, Field(ge=1, le=10,
                                                description="1-10 (default 5).")] = None,
        session_id: Annotated[str | None, Field(
            description="Session that produced it (ocm or host id).")] = None,
        auto_supersede: Annotated[bool, Field(
            description="Retire an older active memory of this type that says nearly the "
                        "same thing (the notice names it).")] = True,
        force: Annotated[bool, Field(
            description="Store it even though it nearly copies a superseded, resolved or "
                        "archived memory (only for a fact that record does not cover).")
        ] = False,
    ) -> WriteOutcome:
        """Store a typed memory record that outlives this session.

        With a key that already has an active memory, pass supersede_reason: the old
        record is marked superseded and linked to the new one. Without a key, an older
        active record of the same type that this one restates is superseded automatically.
        A record that nearly copies an active one of its type is stored too, and the notice
        names the older one. One that nearly copies a superseded, resolved or archived
        record is not stored unless force is true: the result names that record (changed
        false) and the notice says what replaced or resolved it. A gotcha or bug_fix about a
        failure ocm recorded automatically absorbs that automatic bug_fix.
        """
        return await backend.run(ctx, lambda project: _write(project.remember(
            content, type, title=title, files=files, tags=tags, key=key,
            supersede_reason=supersede_reason, scope=scope, importance=importance,
            session=session_id, auto_supersede=auto_supersede, force=force)))

    @tool(name="ocm__search", title="Search sessions and memories",
                 annotations=READ_ONLY)
    async def search(
        ctx: Context,
        query: Annotated[str, Field(
            description="Words, identifiers or paths; phrases like 'last week' or 'in "
                        "cursor' become filters. Empty lists newest first.")] = "",
        kind: Annotated[Literal["session", "memory", "transcript"] | None, Field(
            description="Only sessions or only memories.")] = None,
        type: Annotated[str | list[str] | None, Field(
            description="Memory type(s) to keep, e.g. 'gotcha'.")] = None,
        status: Annotated[str | None, Field(
            description="Only this status: active, resolved, superseded, archived, open, "
                        "frozen, closed.")] = None,
        include_resolved: Annotated[bool, Field(
            description="Also show resolved and archived memories.")] = False,
        scope: Annotated[Literal["project", "user", "global"], Field(
            description="'project' (+ your user memories), 'user', or 'global' (every "
                        "registered project).")] = "project",
        tool: Annotated[str | None, Field(description="Only sessions from this tool.")] = None,
        file: Annotated[str | None, Field(
            description="Only notes about a path containing this.")] = None,
        tag: Annotated[str | None, Field(description="Only notes with this tag.")] = None,
        author: Annotated[str | None, Field(
            description="Only notes written by this person: any part of the git name or "
                        "email recorded when a team vault's note was written.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 10,
        group: Annotated[bool, Field(
            description="One result per note, with its best section (default; a "
                        "transcript lists up to 3 matching turns); false lists the "
                        "matching sections themselves.")] = True,
    ) -> SearchOutcome:
        """Search session notes and memory records (BM25F, newest-weighted).

        Results carry metadata, markdown_path and the best matching section (anchor,
        line, a short snippet), never the whole note: read the file, or call
        ocm__get_note with the id (and `section` for one section). Superseded results
        say what replaced them.
        """
        from ocm.project import SearchRequest

        types = (type,) if isinstance(type, str) else tuple(type or ())
        req = SearchRequest(query=query, limit=limit, kind=kind, types=types, status=status,
                            tool=tool, file=file, tag=tag, scope=scope, author=author,
                            include_resolved=include_resolved, group=group)

        def call(project: Any) -> tuple[list[Any], str, tuple[dict[str, int] | None, str]]:
            from ocm.project import filters_line, indexing_line

            found = project.search(req)
            applied = project.applied_filters
            indexing = project.indexing
            return found, f" {filters_line(applied)}." if applied.get("filters") else "", (
                indexing, f" {indexing_line(indexing).removeprefix('ocm: ')}." if indexing
                else "")

        hits, applied, (indexing, partial) = await backend.run(ctx, call)
        results = [_note_hit(h) for h in hits]
        message = (f"No sessions or memories matched.{applied}" if not results else
                   f"{_count(len(results), 'result')}; read a note at its markdown_path or "
                   "with ocm__get_note.") + partial
        return SearchOutcome(query=query, results=results, message=message,
                             indexing=Indexing(**indexing) if indexing else None)

    @tool(name="ocm__recall", title="Context brief", annotations=READ_ONLY)
    async def recall(
        ctx: Context,
        query: Annotated[str | None, Field(
            description="What the task is about, to add relevant notes (optional).")] = None,
        format: Annotated[Literal["prompt", "snippets", "json"], Field(
            description="Layout of `text`.")] = "prompt",
        budget: Annotated[int, Field(ge=200, le=100_000,
                                     description="Characters at most.")] = 6000,
        session_id: Annotated[str | None, Field(
            description="The session the brief is for (ocm or host id).")] = None,
    ) -> RecallOutcome:
        """The budgeted context brief for a session start: pinned memories (principles,
        preferences, gotchas, decisions…), the last session and its pending work, and notes
        relevant to `query`. Ids are included; what did not fit is counted."""
        from ocm.vault.errors import NotFound

        def call(project: Any) -> RecallOutcome:
            sid = session_id
            # A host id before its first checkpoint is not a session yet: named as given.
            with contextlib.suppress(NotFound):
                sid = project.resolve_session(sid, create=False) if sid else sid
            brief = project.recall(query or None, budget=budget, fmt=format, session_id=sid)
            return RecallOutcome(
                text=brief.text, items=[RecallItem(**item) for item in brief.items],
                dropped=brief.dropped, left_out=brief.left_out, warning=brief.warning,
                last_session=LastSession(**brief.last_session) if brief.last_session else None)

        return await backend.run(ctx, call)

    @tool(name="ocm__resolve_memory", title="Resolve or supersede a memory",
                 annotations=_writes(destructive=False, idempotent=True))
    async def resolve_memory(
        ctx: Context,
        id: Annotated[str, Field(description="The memory id.")],
        status: Annotated[Literal["resolved", "superseded"] | None, Field(
            description="'resolved' (no longer applies) or 'superseded' (replaced); default: "
                        "superseded when superseded_by is given, else resolved.")] = None,
        superseded_by: Annotated[str | None, Field(
            description="Id of the active memory that replaces this one.")] = None,
        reason: Annotated[str | None, Field(description="Why, in one line.")] = None,
    ) -> WriteOutcome:
        """Mark a memory resolved (it no longer applies: hidden from recall and default
        search) or superseded by another memory (left out of recall, ranked below its
        replacement and marked in search)."""
        chosen = status or ("superseded" if superseded_by else "resolved")
        return await backend.run(ctx, lambda project: _write(project.set_memory_status(
            id, chosen, superseded_by=superseded_by, reason=reason)))

    @tool(name="ocm__list_memories", title="List memories", annotations=READ_ONLY)
    async def list_memories(
        ctx: Context,
        type: Annotated[str | list[str] | None, Field(
            description="Memory type(s), e.g. 'gotcha'.")] = None,
        status: Annotated[Literal["active", "resolved", "superseded", "archived", "all"],
                          Field(description="Lifecycle status to list.")] = "active",
        tag: Annotated[str | None, Field(description="Only with this tag.")] = None,
        file: Annotated[str | None, Field(
            description="Only about a path containing this.")] = None,
        author: Annotated[str | None, Field(
            description="Only written by this person: any part of the git name or email "
                        "recorded when a team vault's memory was written.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 50,
        scope: Annotated[Literal["project", "user", "global"], Field(
            description="'project' (+ user memories), 'user' or 'global'.")] = "project",
    ) -> MemoryList:
        """Memory records, newest first, filtered by type, status, tag, file or author."""
        types = (type,) if isinstance(type, str) else tuple(type or ())
        hits = await backend.run(ctx, lambda project: project.list_memories(
            types=types, status=None if status == "all" else status, limit=limit,
            scope=scope, tag=tag, file=file, author=author))
        memories = [_note_hit(h) for h in hits]
        message = _count(len(memories), "memory", "memories") if memories else (
            "No memories matched.")
        return MemoryList(memories=memories, message=message)

    @tool(name="ocm__update_memory", title="Edit a memory",
                 annotations=_writes(destructive=True, idempotent=False))
    async def update_memory(
        ctx: Context,
        id: Annotated[str, Field(description="The memory id.")],
        content: Annotated[str | None, Field(description="New text (replaces).")] = None,
        title: Annotated[str | None, Field(description="New title.")] = None,
        files: Annotated[list[str] | None, Field(description="New file list (replaces).")] = None,
        tags: Annotated[list[str] | None, Field(description="New tag list (replaces).")] = None,
        importance: Annotated[int | None, Field(ge=1, le=10, description="1-10.")] = None,
        type: Annotated[str | None, Field(
            description=f"Reclassify (moves the file): {MEMORY_TYPES_HELP}.")] = None,
        key: Annotated[str | None, Field(description="New key ('' clears it).")] = None,
        add_tags: Annotated[list[str] | None, Field(description="Tags to add.")] = None,
        remove_tags: Annotated[list[str] | None, Field(description="Tags to remove.")] = None,
        add_files: Annotated[list[str] | None, Field(description="Files to add.")] = None,
        remove_files: Annotated[list[str] | None, Field(
            description="Files to remove.")] = None,
    ) -> WriteOutcome:
        """Change a memory's text or metadata in place (use ocm__remember with its key and
        a supersede_reason instead when the fact itself changed). A change of content or
        files re-stamps it against HEAD; `changed` is false when it already said that."""
        changes = {"content": content, "title": title, "files": files, "tags": tags,
                   "importance": importance, "memory_type": type, "key": key,
                   "add_tags": add_tags, "remove_tags": remove_tags, "add_files": add_files,
                   "remove_files": remove_files}
        if all(v is None for v in changes.values()):
            raise ToolError("nothing to change: give content, title, files, tags, importance, "
                            "type, key, add_tags, remove_tags, add_files or remove_files")
        for name in ("tags", "files"):
            if changes[name] is not None and (changes[f"add_{name}"] or
                                              changes[f"remove_{name}"]):
                raise ToolError(f"{name} replaces the list: give it alone, or add_{name} / "
                                f"remove_{name}")
        return await backend.run(ctx, lambda project: _write(
            project.update_memory(id, **changes)))

    @tool(name="ocm__forget", title="Archive or delete a memory",
                 annotations=_writes(destructive=True, idempotent=True))
    async def forget(
        ctx: Context,
        id: Annotated[str, Field(description="The memory id.")],
        mode: Annotated[Literal["archive", "delete"], Field(
            description="'archive' hides it (reversible, the file stays); 'delete' removes "
                        "the file.")] = "archive",
    ) -> WriteOutcome:
        """Archive a memory (hidden from recall and default search) or delete its file."""
        return await backend.run(ctx, lambda project: _write(
            project.forget(id, delete=mode == "delete")))

    @tool(name="ocm__reactivate_memory", title="Reactivate a memory",
          annotations=_writes(destructive=False, idempotent=True))
    async def reactivate_memory(
        ctx: Context,
        id: Annotated[str, Field(description="The memory id.")],
    ) -> WriteOutcome:
        """Make a resolved, superseded or archived memory active again (its replacement
        stays active and no longer claims to supersede it). Refused when another active
        memory holds its key; already active: a no-op (`changed` false)."""
        return await backend.run(ctx, lambda project: _write(project.reactivate(id)))

    @tool(name="ocm__get_note", title="Read a note", annotations=READ_ONLY)
    async def get_note(
        ctx: Context,
        id: Annotated[str, Field(description="A memory id or a session id (ocm or host).")],
        section: Annotated[str | None, Field(
            description="Only this `##`/`###` section: its heading as written or as in a "
                        "search result's anchor (`Parent#Child` for a nested one).")] = None,
    ) -> NoteOutcome:
        """A session or memory note's full Markdown (or one section of it), for clients
        that cannot read files."""

        def call(project: Any) -> NoteOutcome:
            note = project.get(id, section=section)
            return NoteOutcome(id=str(note["id"]), kind=note["kind"], scope=note["scope"],
                               markdown_path=note["markdown_path"],
                               frontmatter=_json_safe(note["frontmatter"]),
                               markdown=note["markdown"], section=note.get("section"),
                               line=note.get("line"))

        return await backend.run(ctx, call)

    _strict_arguments(server)
    return server


def _strict_arguments(server: MCPServer) -> None:
    """Unknown arguments and wrong types are refused, naming the field, instead of being
    dropped (`plan_file` for `plan_files`) or coerced (`importance: true` stored as 1,
    `"7"` as 7): every tool validates its arguments with `extra="forbid"` and strict types,
    and its published input schema says `additionalProperties: false`."""
    for tool in server._tool_manager.list_tools():  # the SDK has no public setter for this
        base = tool.fn_metadata.arg_model
        tool.fn_metadata.arg_model = type(base.__name__, (base,), {
            "__module__": base.__module__,
            "model_config": ConfigDict(extra="forbid", strict=True,
                                       arbitrary_types_allowed=True),
            # Sizes first (limits.py): a huge argument is refused before any other work.
            "_sizes": model_validator(mode="before")(check_arguments)})
        tool.parameters["additionalProperties"] = False


def _log_level() -> Any:
    level = os.environ.get("OCM_LOG_LEVEL", "WARNING").strip().upper()
    return level if level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") else "WARNING"


def main() -> None:
    """Serve on stdio: the protocol owns stdout, logs go to stderr (`OCM_LOG_LEVEL`)."""
    logging.basicConfig(stream=sys.stderr, level=_log_level(), format="ocm-mcp: %(message)s")
    server = build_server()
    with contextlib.suppress(KeyboardInterrupt):
        serve(server)


if __name__ == "__main__":
    main()

"""The one facade the CLI, the MCP server and the hooks call.

It routes each operation to the right vault (the project's, the user's, or every registered
one), keeps their indexes fresh before reads, and never holds behaviour of its own that a
front end would have to repeat. Whoosh is imported only when something is searched.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ocm.indexer import likeness
from ocm.indexer.hits import Filters
from ocm.vault import paths as vault_paths
from ocm.vault import projects as registry
from ocm.vault.atomic import sweep_temp_files
from ocm.vault.boundary import check_written_folders
from ocm.vault.clock import now as clock_now
from ocm.vault.errors import InvalidInput, NotFound, OcmError
from ocm.vault.folder import WriteResult, read_document, read_note_text
from ocm.vault.freshness.scan import MEMORIES_DIR
from ocm.vault.freshness.settle import settled_document
from ocm.vault.ids import validate_id
from ocm.vault.limits import check_query
from ocm.vault.memories import (
    MEMORY_STATUSES,
    RECALL_ORDER,
    canonical_type,
    default_title,
    validate_memory_status,
    validate_scope,
)
from ocm.vault.sessions import SESSION_STATUSES, CheckpointInput, SessionNote, validate_tool
from ocm.vault.store import Vault

if TYPE_CHECKING:
    import subprocess

    from ocm.indexer.index import NoteIndex, SyncReport
    from ocm.indexer.recall import Brief
    from ocm.indexer.search import Hit

SEARCH_SCOPES = ("project", "user", "global")
KINDS = ("session", "memory", "transcript")
_OCM_SESSION_ID = re.compile(r"^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}_")
MAX_LIMIT = 100
# The bound on a first search's wait for an index build (bench/clone.py measures it).
FIRST_ANSWER_S = 0.5
FIRST_ANSWER_MIN_NOTES = 1000  # a smaller build is done whole (about a second)
SUPERSEDE_CANDIDATES = 8
SUPERSEDE_SCAN_MAX = 300
SUPERSEDE_QUERY_WORDS = 24
# Asked for beyond SUPERSEDE_CANDIDATES when the candidates come from the embeddings, which
# do not know a record's status: the raw look drops the inactive ones.
SUPERSEDE_MEANING_EXTRA = 4


@dataclass
class SearchRequest(Filters):
    """A search as a front end asks for it: free text (which may itself name filters such as
    'last week' or 'in cursor'), explicit filters, scope and limit."""

    query: str = ""
    limit: int = 10
    scope: str = "project"
    explain: bool = False
    now: datetime | None = None
    # One result per note (with its best chunk), or False: the chunks themselves.
    group: bool = True

    def __post_init__(self) -> None:
        check_query(self.query)  # before any work: a long query costs time in its length


def _project_name(root: Path) -> str:
    return root.name or "project"


def filters_line(applied: dict[str, Any]) -> str:
    """'Filters: tool=cursor, since=… (from the query: tool=cursor)' for people."""
    def pairs(found: dict[str, Any]) -> str:
        return ", ".join(f"{k}={v}" for k, v in found.items()) or "none"

    line = f"Filters: {pairs(applied.get('filters') or {})}"
    if applied.get("from_query"):
        line += f" (from the query: {pairs(applied['from_query'])})"
    return line


def indexing_line(indexing: dict[str, int]) -> str:
    """What a search answered from part of a build says about it."""
    return (f"ocm: indexing under way: {indexing['indexed']:,} of {indexing['total']:,} notes "
            "indexed so far; these results match the words of those only (`ocm "
            "rebuild-index` finishes it now)")


def _first_answer() -> tuple[float, int]:
    """(FIRST_ANSWER_S, FIRST_ANSWER_MIN_NOTES), or what OCM_FIRST_ANSWER_S and
    OCM_FIRST_ANSWER_MIN_NOTES say where they are numbers (tests: 0 and 0, a first search
    then indexes one note and answers)."""
    found: list[float] = []
    for name, default in (("OCM_FIRST_ANSWER_S", FIRST_ANSWER_S),
                          ("OCM_FIRST_ANSWER_MIN_NOTES", FIRST_ANSWER_MIN_NOTES)):
        try:
            found.append(max(0.0, float(os.environ.get(name, default))))
        except ValueError:
            found.append(default)
    return found[0], int(found[1])


def _existing_texts(vault: Vault) -> set[tuple[str, str]]:
    """(type, whitespace-normalised text) of every memory already in the vault."""
    return {(note.type, " ".join(note.content.split())) for _, note in vault.memory_notes()}


def _json_safe(value: Any) -> Any:
    from datetime import date

    from ocm.vault.clock import format_timestamp

    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


class Project:
    def __init__(self, vault_dir: Path, root: Path, explicit: bool = False,
                 strict: bool = False) -> None:
        self.root = root
        self.explicit = explicit  # the vault was named (--vault, OCM_VAULT), not found
        # The CLI and the MCP server: no vault is an error (only `init` makes one).
        # Library callers (benchmarks, fixtures) get the folders made on first write.
        self.strict = strict
        self.vault = Vault(vault_dir, _project_name(root), root, scope="project")
        home = vault_paths.user_home()
        self.user_vault = Vault(home, "user", None, scope="user")
        self._indexes: dict[Path, NoteIndex] = {}
        self.notices: list[str] = []
        # What the last search filtered on, by name, and which of it the query's own words
        # said ("in cursor", "last week"): for --explain and for an empty result.
        self.applied_filters: dict[str, Any] = {}
        # (seconds, notes): a search may spend those seconds building an index of at least
        # those notes that has no usable build before it answers from the notes built so
        # far (None: it waits for the whole build); and
        # how far that build got ({indexed, total}) when the last search did so.
        self.first_answer: tuple[float, int] | None = _first_answer()
        self.indexing: dict[str, int] | None = None
        self._builders: dict[Path, subprocess.Popen] = {}

    @classmethod
    def open(cls, vault: str | Path | None = None, cwd: str | Path | None = None,
             strict: bool = False,
             location: tuple[Path, Path, bool] | None = None) -> Project:
        """Find the project from `cwd` (git common dir) and its vault (`--vault`/`OCM_VAULT`),
        or take them as `vault_paths.locate` found them (`location`)."""
        vault_dir, root, explicit = location or vault_paths.locate(vault, cwd)
        return cls(vault_dir, root, explicit=explicit, strict=strict)

    # -- set-up -------------------------------------------------------------------
    def init(self, team: bool = False, share_sessions: bool = False,
             ocm_command: str = "ocm") -> dict[str, Any]:
        """Create the vault (git-ignored), register it; `team` (or a vault a teammate
        committed) shares it through git instead (`ocm.vault.team.mode`)."""
        from ocm.vault.team import mode as team_mode

        self.vault.ensure_layout()
        gitignore = self.root / ".gitignore"
        entry = f"{vault_paths.VAULT_DIRNAME}/"
        added_ignore = False
        inside_root = self.vault.root.parent == self.root
        shared = None
        if team or team_mode.is_team(self.vault.root):
            shared = self.team_on(share_sessions or team_mode.shares_sessions(
                self.vault.root), ocm_command)
        elif inside_root:
            existing = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
            if not any(line.strip() in (entry, entry.rstrip("/"), "/" + entry)
                       for line in existing.splitlines()):
                sep = "" if not existing or existing.endswith("\n") else "\n"
                gitignore.write_text(existing + sep + entry + "\n", encoding="utf-8")
                added_ignore = True
        registered = registry.register_vault(self.vault.project, self.root, self.vault.root)
        self.sweep_temp_files()
        self.refresh(self.vault)  # from now on a missing index means a lost one
        from ocm.vault.obsidian import write_base

        return {"vault": str(self.vault.root), "project": self.vault.project,
                "gitignore_updated": added_ignore, "registered": registered,
                "obsidian_base": write_base(self.vault.root), "team": shared}

    def team_on(self, share_sessions: bool = False, ocm_command: str = "ocm") -> dict[str, Any]:
        """Share the vault through the project's git repository (see `ocm.vault.team.mode`)."""
        from ocm.vault.team import mode as team_mode

        self.vault.ensure_layout()
        return team_mode.enable(self.vault.root, self.root, ocm_command, share_sessions)

    def team_off(self) -> dict[str, Any]:
        from ocm.vault.team import mode as team_mode

        return team_mode.disable(self.vault.root, self.root)

    def resolve_conflicts(self, paths: list[Path]) -> list[dict[str, Any]]:
        """Merge notes git left with conflict markers (`ocm.vault.team.merge.resolve_file`):
        the ones named, else every one in the vault."""
        from ocm.vault.team.merge import conflicted_notes, resolve_file

        base = self.vault.root.resolve()
        targets = [Path(p).expanduser().resolve() for p in paths] or [
            base / rel for rel in conflicted_notes(base, list(self.vault.note_paths()))]
        for target in targets:
            if not target.is_relative_to(base) or not target.is_file():
                raise InvalidInput(f"{target} is not a note in the vault {base}")
        rows = []
        for target in targets:
            result = resolve_file(target, self.root)
            rows.append({"path": target.relative_to(base).as_posix(), "merged": result.clean,
                         "problem": "; ".join(result.conflicts)})
        return rows

    # -- vault routing ------------------------------------------------------------
    def require_vault(self) -> Vault:
        """The project's vault, or an error saying there is none and how to make one:
        nothing creates `.openCodeMemory/` but `ocm init` (ignored in git, registered)."""
        if self.strict and not self.vault.exists:
            how = (f"`ocm init --vault {self.vault.root}` creates it, or point --vault "
                   "(OCM_VAULT) at an existing one") if self.explicit else (
                f"run `ocm init` in {self.root} to create one")
            raise NotFound(f"no ocm vault at {self.vault.root}: {how}")
        if self.vault.exists:
            check_written_folders(self.vault.root)
        return self.vault

    def _vault_for_scope(self, scope: str) -> Vault:
        return self.user_vault if validate_scope(scope) == "user" else self.require_vault()

    def _vaults(self, scope: str) -> list[Vault]:
        if scope not in SEARCH_SCOPES:
            raise InvalidInput(
                f"unknown scope {scope!r}: expected one of {', '.join(SEARCH_SCOPES)}")
        if scope == "user":
            found = [self.user_vault]
        elif scope == "project":
            found = [self.require_vault(), self.user_vault]
        else:
            found = [self.vault, self.user_vault]
            for entry in registry.read_registry():
                path = Path(entry["vault"])
                if path.is_dir():
                    found.append(Vault(path, entry.get("project") or path.parent.name,
                                       Path(entry.get("project_root") or path.parent)))
        found = [vault for vault in found if vault.exists]
        if len(found) < 2:  # nothing to tell apart (no user vault yet): no `resolve`
            return found
        unique: dict[Path, Vault] = {}
        for vault in found:
            unique.setdefault(vault.root.resolve(), vault)
        return list(unique.values())

    def _locate(self, note_id: str) -> tuple[Vault, str, Path]:
        """(vault, kind, path) of a note id: project memories and sessions, then the user's."""
        from ocm.vault.links import unlink

        note_id = validate_id(unlink(note_id) if isinstance(note_id, str) else note_id, "note id")
        for vault in (self.vault, self.user_vault):
            if not vault.exists:
                continue
            with contextlib.suppress(NotFound):
                return vault, "memory", vault.find_memory(note_id)
            if vault is self.vault:
                with contextlib.suppress(NotFound):
                    return vault, "session", vault.find_session(note_id)
        self.require_vault()
        raise NotFound(f"no session or memory with id {note_id!r}")

    # -- index ----------------------------------------------------------------------
    def index_for(self, vault: Vault) -> NoteIndex:
        from ocm.indexer.index import NoteIndex

        key = vault.root.resolve()
        if key not in self._indexes:
            self._indexes[key] = NoteIndex(vault)
        return self._indexes[key]

    def fold_journal(self) -> None:
        """Apply what hooks journaled (files, prompts, commands) to the session notes."""
        from ocm.vault.freshness import journal

        if not journal.pending(self.vault.root):
            return
        from ocm.vault.freshness import scanahead

        # The notes change now: a listing of them taken ahead may hold them as they were.
        scanahead.discard(str(self.vault.root))
        try:
            report = journal.fold(self.vault)
        except Exception as exc:  # noqa: BLE001 - a hook buffer must never break a read
            self.notices.append(f"ocm: could not apply hook records: {exc}")
            return
        self.notices += [f"ocm: hook records not applied: {e}" for e in report.errors]

    def refresh(self, vault: Vault) -> NoteIndex:
        if vault.exists:
            check_written_folders(vault.root)
        if vault is self.vault:
            self.fold_journal()
        index = self.index_for(vault)
        report = index.sync()
        if report.notice:
            self.notices.append(report.notice)
        if report.paths:  # a pull, a merge or an editor changed notes: one key, no cycles
            from ocm.vault.team.invariants import restore

            repairs = restore(vault, report.paths)
            if repairs:
                self.notices += repairs
                index.sync()
        return index

    def sweep_temp_files(self) -> int:
        return sweep_temp_files([self.vault.sessions_dir, self.vault.memories_dir])

    def rebuild_index(self, progress: Callable[[int, int], None] | None = None,
                      procs: int = 1, embedding: Callable[[], None] | None = None,
                      resume: bool = False) -> SyncReport:
        """Rebuild the project's index from its notes, and the notes' embeddings where they
        are missing or stale (a fresh clone has none: without this its first search would
        embed every note). `procs>1` indexes in that many forked processes (one segment
        each): only for single-threaded callers such as the CLI. `embedding()` is called
        when the indexing is done and the embeddings start. `resume`: finish a build cut
        short (a first search's, a killed one's) instead of starting over."""
        self.require_vault().ensure_layout()
        self.sweep_temp_files()
        index = self.index_for(self.vault)
        index.build_procs = procs
        try:
            with _gc_paused():
                report = index.sync(progress=progress, force_rebuild=not resume)
                if embedding is not None:
                    embedding()
                store = index.vectors()
                if store is not None:
                    store.flush()
                return report
        finally:
            index.build_procs = 1

    # -- sessions -----------------------------------------------------------------
    def start_session(self, tool: str, agent_session_id: str | None = None,
                      slug: str | None = None, trigger: str | None = None) -> WriteResult:
        if agent_session_id:
            try:
                path = self.vault.find_session(agent_session_id)
                note = SessionNote(read_document(path))
                return WriteResult(note.id, path, note.status, "session", changed=False)
            except (NotFound, InvalidInput):
                pass
        return self.vault.create_session(tool, agent_session_id=agent_session_id, slug=slug,
                                         trigger=trigger)

    def resolve_session(self, session_id: str | None, tool: str | None = None,
                        create: bool = True, slug: str | None = None) -> str:
        """Our id, the host's id, or none: the open session of `tool`, created if absent.
        Without a tool, open sessions of several tools are ambiguous and refused (a
        checkpoint must not land in another agent's session)."""
        tool = self.known_tool(tool)
        if session_id:
            try:
                path = self.vault.find_session(session_id)
                # An editor may be saving it in place: an empty note has no id to act on.
                return SessionNote(settled_document(path, read_note_text)).id
            except NotFound:
                if _OCM_SESSION_ID.match(session_id.strip()) or not create:
                    raise
                return self.start_session(tool or "unknown", agent_session_id=session_id,
                                          slug=slug).id
        if tool is None:
            open_tools = sorted({str(data.get("tool") or "unknown")
                                 for _, data in self.vault.session_headers()
                                 if (data.get("status") or "open") == "open"})
            if len(open_tools) > 1:
                raise InvalidInput(
                    f"sessions of {len(open_tools)} tools are open ({', '.join(open_tools)}): "
                    "say which with a session id, or with the tool whose open session it is")
        current = self.vault.current_session(tool)
        if current is not None:
            return SessionNote(settled_document(current, read_note_text)).id
        if not create:
            raise NotFound("no open session in this project")
        return self.start_session(tool or "unknown", slug=slug).id

    def known_tool(self, tool: str | None) -> str | None:
        """A tool name or alias as its id ('Claude Code' -> 'claude-code'); a name that is
        neither a known tool nor one this vault's sessions already carry is refused, so a
        typo never files a session under a new tool or filters everything away."""
        if tool is None:
            return None
        from ocm.indexer.query import TOOLS, canonical_tool

        found = canonical_tool(tool)
        if found:
            return found
        value = validate_tool(tool)
        if value == "unknown" or any(str(data.get("tool")) == value
                                     for _, data in self.vault.session_headers()):
            return value
        raise InvalidInput(f"unknown tool {tool!r}: expected one of {', '.join(TOOLS)}")

    def checkpoint(self, inp: CheckpointInput, session_id: str | None = None,
                   tool: str | None = None) -> WriteResult:
        if inp.status is not None and inp.status not in SESSION_STATUSES:
            raise InvalidInput(f"unknown session status {inp.status!r}: expected one of "
                               f"{', '.join(SESSION_STATUSES)}")
        inp.validate()  # before resolve_session may create a note for it
        self.require_vault()
        self.fold_journal()
        if all(value is None for name, value in inp.__dict__.items() if name != "extra"):
            # Nothing given: nothing to save, and no session created for it.
            sid = self.resolve_session(session_id, tool, create=False)
            path = self.vault.find_session(sid)
            return WriteResult(sid, path, SessionNote(read_document(path)).status, "session",
                               changed=False, notice="nothing to change")
        sid = self.resolve_session(session_id, tool, slug=inp.slug)
        if inp.status in ("closed", "frozen"):
            self.vault.checkpoint(sid, CheckpointInput(**{**inp.__dict__, "status": None}))
            return self.vault.close_session(sid, inp.status, inp.trigger)
        return self.vault.checkpoint(sid, inp)

    def close_session(self, session_id: str | None, status: str = "closed",
                      trigger: str | None = None) -> WriteResult:
        self.fold_journal()
        sid = self.resolve_session(session_id, create=False)
        return self.vault.close_session(sid, status, trigger)

    def session_files(self, session_id: str) -> list[dict[str, str]]:
        self.fold_journal()
        note = SessionNote(read_document(self.require_vault().find_session(session_id)))
        return [{"path": p, "change_type": c} for p, c in note.files().items()]

    def list_sessions(self, limit: int = 10, tool: str | None = None,
                      status: str | None = None) -> list[Hit]:
        req = SearchRequest(kind="session", limit=limit, tool=tool, status=status,
                            include_resolved=True)
        return self.search(req)

    # -- memories -----------------------------------------------------------------
    def remember(self, content: str, memory_type: str, *, title: str | None = None,
                 files: list[str] | None = None, tags: list[str] | None = None,
                 key: str | None = None, supersede_reason: str | None = None,
                 scope: str = "project", importance: int | None = None,
                 session: str | None = None, created: datetime | None = None,
                 auto_supersede: bool = True, check_copies: bool = True,
                 force: bool = False) -> WriteResult:
        """Store a memory. Unless `auto_supersede=False` or the record is backdated
        (`created` given), an older active record of the same type and scope saying nearly
        the same thing is marked superseded (seed 000; see `ocm.vault.alike.supersede`); the
        result's `notice` says so. Otherwise, unless `check_copies=False` or the record is
        backdated, the notice names an active record of the type that this one nearly copies
        (`ocm.vault.alike.nearcopies`). A near-copy of a superseded, resolved or archived
        record is not written unless `force`: the result is that record, `changed` False,
        and its notice says why (`ocm.vault.alike.tombstones`)."""
        if not isinstance(force, bool):
            raise InvalidInput(f"force must be true or false, not {force!r}")
        vault = self._vault_for_scope(scope)
        self.fold_journal()  # the session's read/edit counts decide the importance cap
        if session:
            session = self.resolve_session(session, create=False)
        if created is not None:
            # A backdated record fills in history (imports, backfills) in no particular
            # order: which of two records arrived last says nothing about which is true.
            # Bulk writers check near-copies themselves (import_notes).
            auto_supersede = check_copies = False
        candidates = self._supersede_candidates(vault, memory_type, title, content) if (
            (auto_supersede and not key) or check_copies) else None
        return vault.remember(content, memory_type, title=title, files=files, tags=tags,
                              key=key, supersede_reason=supersede_reason,
                              importance=importance, session=session, created=created,
                              auto_supersede=auto_supersede, supersede_candidates=candidates,
                              meaning=likeness.for_vault(vault), near_copies=check_copies,
                              force=force)

    def _supersede_candidates(self, vault: Vault, memory_type: str, title: str | None,
                              content: str) -> list[Path] | None:
        """The few active records of this type the index ranks closest to a new memory (seed
        000 compares with a top 5 too), so a write does not read every record of its type.
        None — compare with the whole folder — when the folder is small or the index cannot
        answer.

        A process whose index watches the vault (the MCP server, after two reads) asks the
        index as last committed and adds the notes of this type changed since, as the watch
        reported them (this process's own earlier writes among them): no commit, no folder
        listing, so a write costs the same at 100k notes as at 1k. It asks the notes'
        embeddings when it keeps them (meaning on), else the postings of the rarest words.
        Other processes sync first, as a search would, and ask the postings."""
        from ocm.indexer.neighbours import closest_by_meaning, closest_records
        from ocm.vault.memories import canonical_type

        words = f"{title or ''} {content if isinstance(content, str) else ''}".split()
        memory_type = canonical_type(memory_type)
        if not words:
            return None
        try:
            index = self.index_for(vault)
            pending = index.unindexed()
            watched = pending is not None
            if pending is None:
                folder = vault.memories_dir / memory_type
                if not folder.is_dir() or sum(1 for _ in os.scandir(folder)) <= (
                        SUPERSEDE_SCAN_MAX):
                    return None  # a small folder is cheaper to read than one index search
                index = self.refresh(vault)
                pending = set()
            prefix = f"{MEMORIES_DIR}/{memory_type}/"
            fresh = [index.resolved_root / rel for rel in sorted(pending)
                     if rel.startswith(prefix)]
            count = index.live_count("type", memory_type) + len(fresh)
            query = " ".join(words[:SUPERSEDE_QUERY_WORDS])
            wanted = SUPERSEDE_CANDIDATES + SUPERSEDE_MEANING_EXTRA
            # The embeddings answer in well under a millisecond whatever the type's size:
            # asked as soon as it holds more records than they would return (or than the
            # small-folder shortcut reads), not only past that shortcut.
            found = closest_by_meaning(index, query, prefix, wanted + len(fresh)) if (
                watched and count > min(wanted, SUPERSEDE_SCAN_MAX)) else None
            if found is None:
                if count <= SUPERSEDE_SCAN_MAX:
                    return None  # a small folder is cheaper to read than one index search
                # The postings know a record's status: the retired records a near-copy must
                # not bring back (tombstones) are asked apart, so they take no active place.
                active = closest_records(index, query, memory_type,
                                         SUPERSEDE_CANDIDATES + len(fresh))
                found = [rel for rel in active if rel not in pending][:SUPERSEDE_CANDIDATES]
                found += closest_records(index, query, memory_type, SUPERSEDE_CANDIDATES,
                                         retired=True)
                wanted = 2 * SUPERSEDE_CANDIDATES
        except Exception:  # noqa: BLE001 - the folder scan is the always-correct fallback
            return None
        kept = [index.resolved_root / rel for rel in found if rel not in pending]
        return kept[:wanted] + fresh

    def get(self, note_id: str, section: str | None = None) -> dict[str, Any]:
        """A note's frontmatter and Markdown; with `section` (or `ID#Heading`), only that
        `##`/`###` section's Markdown, with its title and first line."""
        from ocm.vault.sections import find_section

        if section is None and isinstance(note_id, str) and "#" in note_id:
            note_id, _, section = note_id.partition("#")
        self.fold_journal()
        vault, kind, path = self._locate(note_id)
        text = read_note_text(path)
        doc = read_document(path)
        note = {"id": doc.frontmatter.get("id") or path.stem, "kind": kind,
                "markdown_path": str(path.resolve()), "frontmatter": doc.frontmatter.data,
                "markdown": text, "scope": vault.scope}
        if section is not None:
            found, markdown = find_section(doc, section, where=f"note {note['id']}")
            note.update(markdown=markdown, section=found.title, line=found.line)
        return note

    def update_memory(self, memory_id: str, **changes: Any) -> WriteResult:
        self.fold_journal()
        vault, kind, _ = self._locate(memory_id)
        if kind != "memory":
            raise InvalidInput(f"{memory_id} is a session; use checkpoint to change it")
        return vault.update_memory(memory_id, **changes)

    def set_memory_status(self, memory_id: str, status: str, superseded_by: str | None = None,
                          reason: str | None = None) -> WriteResult:
        validate_memory_status(status)
        self.fold_journal()
        vault, kind, _ = self._locate(memory_id)
        if kind != "memory":
            raise InvalidInput(f"{memory_id} is a session, not a memory")
        return vault.set_memory_status(memory_id, status, superseded_by=superseded_by,
                                       reason=reason)

    def reactivate(self, memory_id: str) -> WriteResult:
        """A resolved, superseded or archived memory made active again (links kept honest:
        see `ocm.vault.lifecycle.reactivate`); an active one is a no-op."""
        return self.set_memory_status(memory_id, "active")

    def verify_memory(self, memory_id: str) -> WriteResult:
        """Re-stamp a memory against HEAD: checked, so no longer stale."""
        from ocm.vault.lifecycle import verify

        self.fold_journal()
        vault, kind, _ = self._locate(memory_id)
        if kind != "memory":
            raise InvalidInput(f"{memory_id} is a session, not a memory")
        return verify(vault, memory_id)

    def resolve_by_session(self, session_id: str, reason: str | None = None) -> list[WriteResult]:
        sid = self.resolve_session(session_id, create=False)
        return [self.vault.set_memory_status(mid, "resolved", reason=reason)
                for mid in self.vault.memories_of_session(sid)]

    def forget(self, memory_id: str, delete: bool = False) -> WriteResult:
        self.fold_journal()
        vault, kind, _ = self._locate(memory_id)
        if kind != "memory":
            raise InvalidInput(f"{memory_id} is a session; only memories can be forgotten")
        if delete:
            return vault.delete_memory(memory_id)
        return vault.set_memory_status(memory_id, "archived")

    def list_memories(self, types: tuple[str, ...] = (), status: str | None = "active",
                      limit: int = 50, scope: str = "project", tag: str | None = None,
                      file: str | None = None, author: str | None = None) -> list[Hit]:
        req = SearchRequest(kind="memory", types=tuple(canonical_type(t) for t in types),
                            status=status, limit=limit, scope=scope, tag=tag, file=file,
                            author=author,
                            include_resolved=status is None)
        return self.search(req)

    def browse(self, kind: str, offset: int = 0, limit: int | None = 50, *,
               types: tuple[str, ...] = (), status: str | None = None,
               tool: str | None = None, scope: str = "project",
               stale: bool = True) -> tuple[list[Hit], int]:
        """A page of a listing, newest first, for a dashboard: the hits from `offset` (all
        of them when `limit` is None) and how many match in all. A listing through `search`
        stops at MAX_LIMIT; this one pages through every note. `stale` marks the page's
        memories whose files changed since (a git call per page)."""
        from ocm.indexer import listing

        if kind not in KINDS:
            raise InvalidInput(f"unknown kind {kind!r}: expected session, memory or transcript")
        if status is not None and status not in (*MEMORY_STATUSES, *SESSION_STATUSES):
            raise InvalidInput(f"unknown status {status!r}: expected one of "
                               f"{', '.join((*MEMORY_STATUSES, *SESSION_STATUSES))}")
        if not isinstance(offset, int) or offset < 0:
            raise InvalidInput("offset must be a whole number, 0 or more")
        filters = Filters(kind=kind, types=tuple(canonical_type(t) for t in types),
                          status=status, tool=self.known_tool(tool) if tool else None,
                          include_resolved=status is None)
        vaults = self._vaults(scope)
        page, total = listing.page([self.refresh(vault) for vault in vaults], filters,
                                   offset, limit)
        if stale:
            from ocm.indexer.searcher import mark_stale

            mark_stale(page, vaults)
        return page, total

    def lookup(self, kind: str, ids: list[str]) -> list[Hit]:
        """The project's indexed notes of `kind` with these ids (no others are read)."""
        from ocm.indexer import listing

        return listing.by_ids([self.refresh(self.require_vault())], kind, ids)

    def transcript_turns(self, session_ids: list[str]) -> dict[str, int]:
        """How many turns the transcript note of each of these sessions holds (those that
        have one), from the index: the transcripts themselves are not read."""
        from ocm.vault.transcripts import SUFFIX

        found = self.lookup("transcript", [f"{sid}{SUFFIX}" for sid in session_ids])
        return {str(hit.meta.get("session")): int(hit.meta.get("turns") or 0) for hit in found
                if hit.meta.get("session")}

    def daily(self, kind: str, field: str, scope: str = "project") -> dict[tuple[date, str], int]:
        """How many notes of `kind` each day holds per value of `field` (tool, type, status)."""
        from ocm.indexer import listing

        if kind not in KINDS:
            raise InvalidInput(f"unknown kind {kind!r}: expected session, memory or transcript")
        if field not in ("tool", "type", "status"):
            raise InvalidInput(f"cannot count by {field!r}: expected tool, type or status")
        indexes = [self.refresh(vault) for vault in self._vaults(scope)]
        return dict(listing.daily(indexes, Filters(kind=kind, include_resolved=True), field))

    def tally(self, kind: str, scope: str = "project") -> dict[tuple[str, str], int]:
        """How many notes of `kind` there are of each (type, status), every status counted."""
        from ocm.indexer import listing

        if kind not in KINDS:
            raise InvalidInput(f"unknown kind {kind!r}: expected session, memory or transcript")
        indexes = [self.refresh(vault) for vault in self._vaults(scope)]
        return dict(listing.tally(indexes, Filters(kind=kind, include_resolved=True)))

    def note_changes(self) -> set[str] | None:
        """Vault-relative paths of the project vault's notes created, changed or deleted
        since the previous call (a watching front end: the dashboard's live view); None on
        the first call, which only starts looking. Kernel events where the platform has
        them (`ocm.vault.freshness.watch`), else a comparison of two listings."""
        from ocm.vault.freshness.scan import NOTE_DIRS
        from ocm.vault.freshness.watch import NoteWatch

        watch: NoteWatch | None = getattr(self, "_note_watch", None)
        last: dict[str, list[int]] | None = getattr(self, "_note_listing", None)
        if watch is not None and last is not None:
            changed = watch.changes()
            if changed is not None:
                return changed
            watch.close()  # the watch lost track: compare listings, then watch anew
        folders: list[str] = []
        listing = self.vault.note_signatures(folders) if self.vault.exists else {}
        self._note_watch = NoteWatch.start(str(self.vault.root), NOTE_DIRS, folders) if (
            self.vault.exists) else None
        self._note_listing = listing
        if last is None:
            return None
        return {rel for rel in listing.keys() | last.keys() if listing.get(rel) != last.get(rel)}

    # -- search -------------------------------------------------------------------
    def search(self, req: SearchRequest | str, **kwargs: Any) -> list[Hit]:
        from ocm.indexer import searcher

        if isinstance(req, str):
            req = SearchRequest(query=req, **kwargs)
        if not isinstance(req.limit, int) or not 1 <= req.limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}")
        if req.kind is not None and req.kind not in KINDS:
            raise InvalidInput(f"unknown kind {req.kind!r}: expected session, memory or transcript")
        if req.status is not None and req.status not in (*MEMORY_STATUSES, *SESSION_STATUSES):
            raise InvalidInput(f"unknown status {req.status!r}: expected one of "
                               f"{', '.join((*MEMORY_STATUSES, *SESSION_STATUSES))}")
        planned = searcher.plan(req, when=req.now or clock_now(),
                                tool=self.known_tool(req.tool) if req.tool else None,
                                types=tuple(canonical_type(t) for t in req.types))
        self.applied_filters = planned.applied
        search = searcher.VaultSearch(self._vaults(req.scope), self.vault, self.index_for,
                                      self.refresh, self.notices, self.first_answer)
        hits = search.run(planned)
        self.indexing = search.indexing
        if self.indexing:
            self.notices.append(indexing_line(self.indexing))
        for vault in search.unbuilt:
            self._finish_index_in_background(vault)
        return hits

    def _finish_index_in_background(self, vault: Vault) -> None:
        """Start `ocm rebuild-index --resume` for `vault` in a process of its own, which
        uses every core (sub-writers) and ends when the build is whole; a search meanwhile
        answers from the notes it committed so far. Not from the hook path."""
        import subprocess
        import sys

        key = vault.root.resolve()
        running = self._builders.get(key)
        if running is not None and running.poll() is None:
            return
        self._builders[key] = subprocess.Popen(
            [sys.executable, "-m", "ocm.cli.main", "rebuild-index", "--resume", "--json",
             "--vault", str(vault.root)], cwd=vault.project_root, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def import_notes(self, source: str | Path, fmt: str = "auto", dry_run: bool = False,
                     scope: str = "project", keep_duplicates: bool = False) -> dict[str, Any]:
        """Import another tool's memories as typed records (or restore an `ocm export`).
        Everything is parsed first: a bad input refuses the whole import, writing nothing.
        Records whose type and text already exist in the vault are skipped (re-import), and
        so are near-copies of an active record of their type, or of one imported before
        them (`ocm.vault.alike.nearcopies`), unless `keep_duplicates`."""
        from ocm import importers
        from ocm.vault.alike import nearcopies

        if fmt not in importers.FORMATS:
            raise InvalidInput(f"unknown import format {fmt!r}: expected one of "
                               f"{', '.join(importers.FORMATS)}")
        src = Path(source).expanduser()
        if not src.exists():
            raise InvalidInput(f"nothing to import at {src}: no such file or folder")
        fmt = importers.detect(src) if fmt == "auto" else fmt
        vault = self._vault_for_scope(scope)
        if fmt == "ocm":
            return self._restore(importers.plan_ocm_backup(src), vault, dry_run)
        plan = importers.PLANNERS[fmt](src)
        known = _existing_texts(vault)
        copies = nearcopies.in_vault(vault, likeness.for_vault(vault)) if (
            plan and not keep_duplicates) else None
        out: dict[str, Any] = {"format": fmt, "source": str(src.resolve()), "dry_run": dry_run,
                               "planned": len(plan), "created": [], "skipped": 0,
                               "near_copies": 0, "by_type": {}, "items": []}
        from ocm.vault.secrets.redact import redact

        for item in plan:
            # Compared as stored: a record that held a secret was stored redacted.
            text = redact(item.content)
            ident = (canonical_type(item.type), " ".join(text.split()))
            title = redact(item.title or default_title(item.content))
            row = item.to_json()
            copy = None if copies is None or ident in known else copies.copy_of(
                ident[0], title, text)
            if ident in known:
                out["skipped"] += 1
                row["action"] = "skip (already in the vault)"
            elif copy is not None:
                out["near_copies"] += 1
                row["action"] = f"skip (nearly the same as {copy.id})"
                row["same_as"] = copy.id
            else:
                known.add(ident)
                out["by_type"][ident[0]] = out["by_type"].get(ident[0], 0) + 1
                row["action"] = "create"
                record_id = f"(import #{len(out['items']) + 1})"
                if not dry_run:
                    tags = list(dict.fromkeys([*item.tags, "imported", f"from-{fmt}"]))
                    result = self.remember(item.content, item.type, title=item.title,
                                           tags=tags, scope=scope, auto_supersede=False,
                                           check_copies=False)
                    out["created"].append(result.id)
                    row["id"] = record_id = result.id
                if copies is not None:
                    copies.add(ident[0], record_id, title, text)
            out["items"].append(row)
        return out

    def _restore(self, notes: list[dict[str, str]], vault: Vault,
                 dry_run: bool) -> dict[str, Any]:
        from ocm.vault.atomic import atomic_write_text
        from ocm.vault.boundary import check_inside
        from ocm.vault.secrets.redact import redact

        out: dict[str, Any] = {"format": "ocm", "dry_run": dry_run, "planned": len(notes),
                               "created": [], "skipped": 0, "by_type": {}, "items": []}
        for note in notes:  # all checked before anything is written
            check_inside(vault.root, vault.root / note["path"])
        for note in notes:
            target = vault.root / note["path"]
            kind = note["path"].split("/", 1)[0]
            if target.exists():
                out["skipped"] += 1
                out["items"].append({"path": note["path"], "action": "skip (exists)"})
                continue
            out["by_type"][kind] = out["by_type"].get(kind, 0) + 1
            out["items"].append({"path": note["path"], "action": "restore"})
            if not dry_run:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(target, redact(note["markdown"]))
                out["created"].append(note["path"])
        return out

    def export_vault(self, scope: str = "project") -> dict[str, Any]:
        """The whole vault as one JSON-able object (`ocm export --format json`): every
        note's relative path, frontmatter and exact Markdown, for backup and restore."""
        from ocm.vault.clock import format_timestamp

        vault = self._vault_for_scope(scope)
        notes: list[dict[str, Any]] = []
        broken: dict[str, str] = {}
        for path in sorted(vault.note_paths()):
            rel = vault.relpath(path)
            try:
                text = read_note_text(path)
                doc = read_document(path)
            except OcmError as exc:
                broken[rel] = str(exc)
                continue
            fm = doc.frontmatter.data
            notes.append({"kind": vault.kind_of(path), "id": str(fm.get("id") or path.stem),
                          "path": rel, "frontmatter": _json_safe(fm), "markdown": text})
        return {"format": "ocm-export", "version": 1, "project": vault.project,
                "scope": vault.scope, "vault": str(vault.root),
                "exported_at": format_timestamp(clock_now()),
                "counts": {k: sum(1 for n in notes if n["kind"] == k) for k in KINDS},
                "notes": notes, "broken": broken}

    def supersede_scan(self, dry_run: bool = True, scope: str = "project") -> list[dict[str, Any]]:
        """Auto-supersede over the records already stored (`ocm supersede [--dry-run]`):
        each active record against the older active ones of its type; applied unless
        `dry_run`. Returns one row per (older -> newer) pair."""
        from ocm.vault.alike.supersede import plan_vault

        vault = self._vault_for_scope(scope)
        rows: list[dict[str, Any]] = []
        for new, match in plan_vault(vault, likeness.for_vault(vault)):
            row = {"old_id": match.old_id, "old_title": match.old_title, "new_id": new["id"],
                   "new_title": new["title"], "type": new["type"],
                   "similarity": round(match.score, 3), "shared_file": match.shared_file,
                   "meaning": None if match.meaning is None else round(match.meaning, 3),
                   "done": match.done or None, "why": match.why,
                   "reason": match.reason(new["id"]), "applied": False}
            if not dry_run:
                try:
                    vault.set_memory_status(match.old_id, "superseded",
                                            superseded_by=new["id"], reason=row["reason"])
                    row["applied"] = True
                except OcmError as exc:
                    row["error"] = str(exc)
            rows.append(row)
        return rows

    def projects(self, prune: bool = False, dry_run: bool = False) -> dict[str, Any]:
        """The registry of project vaults; `prune` drops missing or repeated entries."""
        removed = registry.prune(dry_run=dry_run) if prune else []
        return {"projects": registry.list_projects(self.vault.root), "removed": removed,
                "dry_run": dry_run}

    def stale_memories(self, scope: str = "project") -> list[dict[str, Any]]:
        """Every active memory whose files changed since its `git_sha`, newest first; read
        from the notes themselves (complete, no index limit)."""
        from ocm.vault.git.staleness import memory_staleness
        from ocm.vault.memories import MemoryNote

        out: list[tuple[float, dict[str, Any]]] = []  # (when it changed, the true instant; row)
        for vault in self._vaults(scope):
            if vault.scope != "project":
                continue
            for path in vault.note_paths():
                if vault.kind_of(path) != "memory":
                    continue
                try:
                    doc = read_document(path)
                except OcmError:
                    continue
                fm = doc.frontmatter.data
                changed = memory_staleness(vault.project_root, fm)
                if changed:
                    at = MemoryNote(doc).updated_at
                    out.append((at.timestamp() if at else 0.0, {
                                "id": str(fm.get("id") or path.stem),
                                "type": str(fm.get("type") or ""),
                                "title": str(fm.get("title") or ""),
                                "project": vault.project,
                                "git_sha": str(fm.get("git_sha") or ""),
                                "updated": _json_safe(fm.get("updated") or fm.get("created")
                                                      or ""),
                                "files": [str(f) for f in fm.get("files") or []],
                                "changed_files": changed,
                                "markdown_path": str(path.resolve())}))
        out.sort(key=lambda pair: pair[0], reverse=True)
        return [row for _, row in out]

    # -- recall -------------------------------------------------------------------
    def recall(self, query: str | None = None, budget: int = 6000, fmt: str = "prompt",
               session_id: str | None = None, now: datetime | None = None) -> Brief:
        from ocm.indexer.recall import build_brief
        from ocm.vault.handover import last_with_content

        if fmt not in ("prompt", "snippets", "json"):
            raise InvalidInput(f"unknown recall format {fmt!r}: expected prompt, snippets or json")
        if not isinstance(budget, int) or budget < 200:
            raise InvalidInput("budget must be a whole number of characters, at least 200")
        pinned = self._pinned_memories()
        relevant = self.search(SearchRequest(query=query, limit=8, now=now)) if query else []
        last = last_with_content(self.vault, exclude=session_id) if self.vault.exists else None
        brief = build_brief(self.vault.project, pinned, relevant, last, budget, fmt, session_id,
                            now=now)
        if brief.warning:
            self.notices.append(brief.warning)
        return brief

    def _pinned_memories(self) -> list[Hit]:
        """Every active memory of a pinned type in the project and user vaults: all of
        them, however many (a listing stops at MAX_LIMIT; recall must not)."""
        from ocm.indexer import search as engine
        from ocm.indexer.searcher import mark_stale, one_copy

        filters = Filters(kind="memory", types=RECALL_ORDER, status="active")
        vaults = self._vaults("project")
        hits = [hit for vault in vaults
                for hit in one_copy(engine.candidates(self.refresh(vault), "", (), filters))]
        mark_stale(hits, vaults)
        return hits

    def semantic_status(self) -> dict[str, Any]:
        """Whether search fuses meaning with words: on, off (OCM_SEMANTIC or the vault's
        config.json) or failed; `switch` says what decided it."""
        from ocm.indexer.embed import MODEL, embedder, enabled, switch

        model, why = embedder(self.vault.root)
        return {"enabled": enabled(self.vault.root), "available": model is not None,
                "model": f"wordllama {MODEL}" if model is not None else None,
                "detail": why, "switch": switch(self.vault.root)}

    # -- status -------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        from ocm.vault.duplicates import duplicate_ids
        from ocm.vault.team.merge import conflicted_notes

        swept = self.sweep_temp_files()
        if swept:
            self.notices.append(f"ocm: removed {swept} temp files left by interrupted writes")
        counts: dict[str, int] = {"sessions": 0, "memories": 0, "transcripts": 0}
        plural = {"session": "sessions", "memory": "memories", "transcript": "transcripts"}
        for path in self.vault.note_paths():
            counts[plural[self.vault.kind_of(path)]] += 1
        index = self.refresh(self.vault) if self.vault.exists else None
        size = sum(p.stat().st_size for p in self.vault.index_dir.rglob("*") if p.is_file()) if (
            self.vault.index_dir.is_dir()) else 0
        return {
            "project": self.vault.project, "project_root": str(self.root),
            "vault": str(self.vault.root), "user_vault": str(self.user_vault.root),
            "initialised": self.vault.exists, **counts,
            "broken_notes": dict(index.broken) if index else {},
            "duplicate_ids": duplicate_ids(self.vault),
            "conflicted_notes": conflicted_notes(self.vault.root, list(self.vault.note_paths())),
            "index_bytes": size, "search": self._search_mode(),
        }

    def _search_mode(self) -> str:
        semantic = self.semantic_status()
        if semantic["available"]:
            return f"keywords + meaning ({semantic['model']}; {semantic['switch']})"
        return f"keywords only ({semantic['detail']})"


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Holds off Python's cyclic garbage collector for a full index build (and the
    sub-writers it forks, which inherit the setting). A build keeps millions of posting
    tuples alive and makes no reference cycles, so each collection only re-traverses them:
    ~10 % of a 10k-note build's CPU. Restores the previous state afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

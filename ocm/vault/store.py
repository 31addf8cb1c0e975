"""One vault's sessions and memory records: what ocm does with its notes.

Built on `ocm.vault.folder.NoteFolder` (finding, reading and safely editing notes).
Validation happens before any byte is written, so a refused call leaves the vault as it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import locks
from .atomic import atomic_write_text, locked
from .boundary import check_inside, check_size
from .clock import now, utc_timestamp
from .errors import Conflict, InvalidInput, OcmError
from .folder import NoteFolder, WriteResult, read_document
from .git import info as gitinfo
from .git import snapshot as gitsnapshot
from .ids import new_memory_id, new_session_id, random_suffix, validate_slug
from .links import link, unlink
from .markdown import Document
from .memories import (
    DEFAULT_IMPORTANCE,
    MAX_TITLE_CHARS,
    ListEdit,
    MemoryNote,
    canonical_type,
    capped_importance,
    default_title,
    new_memory_document,
    validate_content,
    validate_importance,
    validate_memory_status,
    validate_scope,
)
from .rename import rename_session
from .secrets.clean import clean, clean_checkpoint
from .sessions import (
    FRONTMATTER_ORDER as SESSION_KEYS,
)
from .sessions import (
    CheckpointInput,
    SessionNote,
    normalise_file_path,
    origin_type,
    validate_tool,
)
from .team.mode import is_team

if TYPE_CHECKING:
    from .alike.autofix import Failure
    from .alike.supersede import Meaning

T = TypeVar("T")


def _notices(*parts: str | None) -> str | None:
    """What a write says, its notices joined; None when it has none."""
    return "; ".join(p for p in parts if p) or None


class Vault(NoteFolder):
    """A vault's notes and what ocm does with them: sessions (open, checkpoint, close) and
    memory records (remember, update, lifecycle, delete)."""

    # -- sessions -----------------------------------------------------------------

    def current_session(self, tool: str | None = None) -> Path | None:
        for path, data in self.session_headers():
            if (data.get("status") or "open") == "open" and (
                    tool is None or data.get("tool") == tool):
                return path
        return None

    def create_session(self, tool: str, *, agent_session_id: str | None = None,
                       slug: str | None = None, started_at: datetime | None = None,
                       trigger: str | None = None) -> WriteResult:
        tool = validate_tool(tool)
        slug = validate_slug(clean(slug)) if slug else None
        if agent_session_id is not None:
            agent_session_id = clean(str(agent_session_id)).strip()[:200] or None
        started = started_at or now()
        team = is_team(self.root)
        # A shared vault: two machines in one minute must not pick one file name.
        base = f"{started:%Y-%m-%d_%H-%M}_{tool}" + (f"_{random_suffix()}" if team else "") + (
            f"_{slug}" if slug else "")
        self.ensure_layout()
        with locked(self.locks_dir, locks.SESSIONS_CREATE):
            if agent_session_id:  # another process may have created it since we looked
                for found, data in self.session_headers():
                    if str(data.get("agent_session_id")) == agent_session_id:
                        return WriteResult(str(data.get("id") or found.stem), found,
                                           str(data.get("status") or "open"), "session",
                                           changed=False)
            session_id = new_session_id(self.sessions_dir, base)
            doc = Document.new()
            note = SessionNote(doc)
            fields = {
                "id": session_id, "agent_session_id": agent_session_id, "tool": tool,
                "project": self.project, "started_at": started,
                "started_at_utc": utc_timestamp(started), "status": "open",
                "trigger": trigger, "git_sha_start": gitinfo.head_sha(self.project_root),
                "slug": slug, "author": gitinfo.author(self.project_root) if team else None,
            }
            for key in SESSION_KEYS:
                if fields.get(key) is not None:
                    note.set_frontmatter(key, fields[key])
            path = self.sessions_dir / f"{session_id}.md"
            check_inside(self.root, path)
            atomic_write_text(path, doc.render())
        # On every path (hook, CLI, MCP): what was already dirty is never credited to it.
        with contextlib.suppress(OSError):
            gitsnapshot.take(self.root, self.project_root, session_id)
        return WriteResult(session_id, path, "open", "session")

    def checkpoint(self, session_id: str, inp: CheckpointInput) -> WriteResult:
        inp.validate()
        inp = clean_checkpoint(inp)
        slug = validate_slug(inp.slug) if inp.slug else None
        path = self.find_session(session_id)
        sid = path.stem

        # Imported here: its redaction and hand-over rules are not on the search path.
        from . import autosummary

        def mutate(doc: Document) -> str:
            note = SessionNote(doc)
            autosummary.hand_over(note, inp)
            note.apply(inp)
            if slug and not note.fm.get("slug"):
                note.set_frontmatter("slug", slug)
            if inp.status in ("closed", "frozen") and not note.fm.get("ended_at"):
                note.set_frontmatter("ended_at", now())
            return note.status

        with locked(self.locks_dir, locks.session(sid)):
            status, changed = self._edit(path, locks.note(path), mutate)
            path = rename_session(self, path, slug)
        note_id = str((self._frontmatter_only(path) or {}).get("id") or sid)
        return WriteResult(note_id, path, status, "session", changed)

    def session_edit(self, session_id: str, mutate: Callable[[SessionNote], T]) -> tuple[T, Path]:
        path = self.find_session(session_id)
        with locked(self.locks_dir, locks.session(path.stem)):
            result, _ = self._edit(path, locks.note(path), lambda doc: mutate(SessionNote(doc)))
        return result, path

    def record_file(self, session_id: str, file_path: str, change: str) -> bool:
        rel = normalise_file_path(clean(file_path), str(self.project_root))
        changed, _ = self.session_edit(session_id, lambda note: note.record_file(rel, change))
        return changed

    def count_activity(self, session_id: str, reads: int = 0, edits: int = 0) -> None:
        self.session_edit(session_id, lambda note: note.count_activity(reads, edits))

    def close_session(self, session_id: str, status: str = "closed",
                      trigger: str | None = None) -> WriteResult:
        if status not in ("closed", "frozen"):
            raise InvalidInput(f"a session is closed or frozen, not {status!r}")
        root = self.project_root

        ours = self._own_files()

        def mutate(note: SessionNote) -> tuple[str, bool]:
            sha_start = note.fm.get("git_sha_start")
            sha_end = gitinfo.head_sha(root)
            if sha_end:
                note.set_frontmatter("git_sha_end", sha_end)
            if sha_start:
                # Only the session's own changes: not what was dirty at its start and is
                # untouched since (ocm init's files among it), never the vault's notes.
                before = gitsnapshot.unchanged(self.root, root, note.id or session_id)
                diff = gitinfo.diff_since(root, str(sha_start),
                                          skip=lambda rel: rel in before or ours(rel))
                if diff is not None:
                    stat, changes = diff
                    note.set_diff_stat(stat.line())
                    if not note.files():
                        for path, change in changes.items():
                            note.record_file(path, change)
            note.apply(CheckpointInput(status=status, trigger=trigger))
            if not note.fm.get("ended_at"):
                note.set_frontmatter("ended_at", now())
            from .handover import removable  # its patterns compile on import: not for reads

            return note.status, removable(note)

        (status_out, empty), path = self.session_edit(session_id, mutate)
        note_id = SessionNote(read_document(path)).id or path.stem
        if empty and self._remove_empty(path):
            return WriteResult(note_id, path, status_out, "session",
                               notice="nothing was recorded in it: removed")
        return WriteResult(note_id, path, status_out, "session")

    def _own_files(self) -> Callable[[str], bool]:
        """Whether a project-relative path is ocm's own: inside the vault."""
        try:
            rel = self.root.resolve().relative_to(self.project_root.resolve()).as_posix()
        except ValueError:
            return lambda path: False
        return lambda path: path == rel or path.startswith(rel + "/")

    def _remove_empty(self, path: Path) -> bool:
        """A hook-opened session that ended with nothing recorded leaves no note behind."""
        from .handover import removable

        with locked(self.locks_dir, locks.session(path.stem)):
            try:
                if not removable(SessionNote(read_document(path))):
                    return False
                path.unlink()
            except (OcmError, OSError):
                return False
        gitsnapshot.drop(self.root, path.stem)
        return True

    def session_origin(self, session_id: str | None) -> str | None:
        if not session_id:
            return None
        try:
            data = self._frontmatter_only(self.find_session(session_id)) or {}
        except OcmError:
            return None
        reads, edits = data.get("reads"), data.get("edits")
        return origin_type(reads if isinstance(reads, int) else 0,
                           edits if isinstance(edits, int) else 0)

    # -- memories -----------------------------------------------------------------

    def active_with_key(self, key: str) -> tuple[Path, MemoryNote] | None:
        """The active record of `key`; two of them (a supersede cut short, a git merge) are
        settled into one first (`ocm.vault.team.invariants`)."""
        from .team.invariants import active_with_key

        return active_with_key(self, key)

    def remember(self, content: str, memory_type: str, *, title: str | None = None,
                 files: list[str] | None = None, tags: list[str] | None = None,
                 key: str | None = None, supersede_reason: str | None = None,
                 importance: int | None = None, session: str | None = None,
                 created: datetime | None = None, git_sha: str | None = None,
                 auto_supersede: bool = True,
                 supersede_candidates: list[Path] | None = None,
                 meaning: Meaning | None = None, near_copies: bool = True,
                 force: bool = False) -> WriteResult:
        """Write a memory record; `meaning` (a cosine of two texts) lets auto-supersede and
        the near-copy check (ocm/vault/alike/nearcopies.py) use meaning as well as words.
        A near-copy of a retired record is not written unless `force`
        (ocm/vault/alike/tombstones.py); a record of a failure merges with its automatic or
        agent-written twin (ocm/vault/alike/autofix.py)."""
        memory_type = canonical_type(memory_type)
        content = clean(validate_content(content))
        title = clean(" ".join((title or default_title(content)).split()))[:MAX_TITLE_CHARS]
        if not title:
            raise InvalidInput("memory title must not be empty")
        importance = DEFAULT_IMPORTANCE if importance is None else validate_importance(importance)
        file_list = [normalise_file_path(clean(f), str(self.project_root)) for f in files or []]
        tag_list = [clean(t).strip() for t in tags or [] if t and t.strip()]
        if key is not None:
            key = clean(key.strip())
            if not key or "\n" in key or len(key) > 200:
                raise InvalidInput("memory key must be one non-empty line of at most 200 chars")
        origin = self.session_origin(session)
        importance = capped_importance(importance, origin)
        session_path = self._session_path(session)
        stamp = created or now()
        self.ensure_layout()
        notice = None
        with locked(self.locks_dir, locks.MEMORIES):
            previous = self.active_with_key(key) if key else None
            if previous is not None and not (supersede_reason and supersede_reason.strip()):
                old_path, old = previous
                raise Conflict(
                    f"key {key!r} already belongs to active memory {old.id} ({old.title!r}); "
                    "pass a supersede_reason to replace it"
                )
            memory_id = new_memory_id(self.memories_dir / memory_type, memory_type, title)
            fields: dict[str, Any] = {
                "id": memory_id, "type": memory_type, "title": title, "status": "active",
                "scope": self.scope, "key": key, "importance": importance, "files": file_list,
                "tags": tag_list, "origin_type": origin, "created": stamp,
                "session": link(session_path.stem) if session_path else session,
                "updated": stamp, "git_sha": git_sha or gitinfo.head_sha(self.project_root)
                if self.scope == "project" else git_sha,
                "supersedes": link(previous[0].stem) if previous else None,
                "author": gitinfo.author(self.project_root) if (
                    self.scope == "project" and is_team(self.root)) else None,
            }
            path = self.memory_path(memory_type, memory_id)
            match = copy = twin = None
            skipped = ""
            if previous is None:  # seed 000: a similar older record, else a near-copy
                from .alike.newrecord import compare

                verdict = compare(self, fields, title, content, supersede_candidates,
                                  meaning, auto_supersede, near_copies, force)
                skipped = verdict.skipped()
                if verdict.tombstone is not None:
                    t = verdict.tombstone
                    return WriteResult(t.id, t.path, t.status, "memory", changed=False,
                                       notice=_notices(t.notice(), skipped))
                if verdict.agent is not None and verdict.failure is not None:
                    return self._merge_failure(*verdict.agent, verdict.failure, skipped)
                match, copy, twin = verdict.match, verdict.copy, verdict.automatic
                if match is not None:
                    fields["supersedes"] = link(Path(match.old_path).stem)
                if twin is not None:
                    from .alike.autofix import with_evidence

                    content = with_evidence(content, twin[2])
                    fields["files"] = list(dict.fromkeys([*file_list, *twin[2].files]))
                    fields["supersedes"] = fields["supersedes"] or link(twin[0].stem)
            check_inside(self.root, path)
            rendered = new_memory_document(fields, content).render()
            check_size(path, rendered)
            atomic_write_text(path, rendered)
            if match is not None:
                self._mark_superseded(Path(match.old_path), memory_id,
                                      match.reason(memory_id))
                notice = f"superseded {match.old_id} (auto: {match.why})"
            if copy is not None:
                notice = f"nearly the same as active {copy.id} ({copy.title!r}); kept both"
            if twin is not None:
                self._mark_superseded(twin[0], memory_id, f"merged into {memory_id}, the "
                                      "agent's record of the same failure")
                notice = _notices(notice, (
                    f"merged the automatic bug_fix {twin[1].id} (same failure: "
                    f"{twin[2].command}) into this record; it is superseded"))
            notice = _notices(notice, skipped)
            if previous is not None:
                reason = clean(" ".join((supersede_reason or "").split()))
                self._mark_superseded(previous[0], memory_id, reason)
                notice = f"superseded {previous[1].id}"
        if session_path is not None:
            self._list_in_session(session_path, memory_id, title)
        return WriteResult(memory_id, path, "active", "memory", notice=notice)

    def _merge_failure(self, path: Path, note: MemoryNote, fail: Failure, skipped: str
                       ) -> WriteResult:
        """A new automatic bug_fix of a failure the agent already recorded: its evidence
        goes into the agent's record (once), and no record is written."""
        from .alike.autofix import with_evidence

        def mutate(doc: Document) -> None:
            memo = MemoryNote(doc)
            text = with_evidence(memo.content, fail)
            files = list(dict.fromkeys([*memo.str_list("files"), *fail.files]))
            if text != memo.content or files != memo.str_list("files"):
                memo.set_content(text)
                memo.set("files", files)
                memo.set("updated", now())

        _, changed = self._edit(path, locks.note(path), mutate)
        notice = (f"the agent's record {note.id} ({note.title!r}) already says this; the "
                  "automatic evidence is kept in it" + ("" if changed else " (already there)"))
        return WriteResult(note.id, path, note.status, "memory", changed=changed,
                           notice=_notices(notice, skipped))

    def _session_path(self, session: str | None) -> Path | None:
        if not session:
            return None
        try:
            return self.find_session(session)
        except OcmError:
            return None

    def _list_in_session(self, session_path: Path, memory_id: str, title: str) -> None:
        """Append `- [[memory]] — title` to the session's `## Memories` (its backlinks)."""
        item = f"{link(memory_id)} — {title}"

        def mutate(note: SessionNote) -> None:
            if not any(unlink(i.split(" ", 1)[0]) == memory_id for i in note.items("memories")):
                note.add_items("memories", [item])

        with contextlib.suppress(OcmError):  # the memory is written; this is a convenience
            self.session_edit(session_path.stem, mutate)

    def _mark_superseded(self, path: Path, new_id: str, reason: str) -> None:
        def mutate(doc: Document) -> None:
            note = MemoryNote(doc)
            note.set("status", "superseded")
            note.set("superseded_by", link(new_id))
            if reason:
                note.set("resolution", reason)
            note.set("updated", now())

        self._edit(path, locks.note(path), mutate)

    def update_memory(self, memory_id: str, *, content: str | None = None,
                      title: str | None = None, files: list[str] | None = None,
                      tags: list[str] | None = None, importance: int | None = None,
                      memory_type: str | None = None, key: str | None = None,
                      scope: str | None = None, add_tags: list[str] | None = None,
                      remove_tags: list[str] | None = None,
                      add_files: list[str] | None = None,
                      remove_files: list[str] | None = None) -> WriteResult:
        """Change what is given; `tags`/`files` replace the list, `add_*`/`remove_*` edit
        it. Nothing different from the note: nothing written (`changed` False). A change of
        text or files re-stamps `git_sha` with HEAD (the record was re-read against it)."""
        new_type = canonical_type(memory_type) if memory_type else None
        if content is not None:
            content = clean(validate_content(content))
        if title is not None:
            title = clean(" ".join(title.split()))[:MAX_TITLE_CHARS]
            if not title:
                raise InvalidInput("memory title must not be empty")
        if importance is not None:
            validate_importance(importance)
        if scope is not None:
            validate_scope(scope)
            if scope != self.scope:
                raise InvalidInput(
                    f"memory {memory_id} lives in the {self.scope} vault; "
                    f"store a new memory with scope {scope!r} instead"
                )

        def paths(items: list[str] | None) -> list[str] | None:
            return None if items is None else [
                normalise_file_path(clean(f), str(self.project_root)) for f in items]

        def words(items: list[str] | None) -> list[str] | None:
            return None if items is None else [clean(t).strip() for t in items if t.strip()]

        tag_edit = ListEdit("tag", words(tags), words(add_tags), words(remove_tags))
        file_edit = ListEdit("file", paths(files), paths(add_files), paths(remove_files))
        with locked(self.locks_dir, locks.MEMORIES):
            path = self.find_memory(memory_id)

            def mutate(doc: Document) -> str:
                note = MemoryNote(doc)
                before = doc.render()
                if content is not None:
                    note.set_content(content)
                if title is not None:
                    note.set("title", title)
                if file_edit.given:
                    note.set("files", file_edit.apply(note.id, note.str_list("files")))
                if tag_edit.given:
                    note.set("tags", tag_edit.apply(note.id, note.str_list("tags")))
                if importance is not None:
                    note.set("importance", importance)
                if key is not None:
                    note.set("key", clean(key) or None)
                if new_type:
                    note.set("type", new_type)
                if doc.render() != before:
                    note.set("updated", now())
                    reread = content is not None or file_edit.given
                    sha = gitinfo.head_sha(self.project_root) if (
                        reread and self.scope == "project") else None
                    if sha:
                        note.set("git_sha", sha)
                return note.status

            status, changed = self._edit(path, locks.note(path), mutate)
            if new_type and path.parent.name != new_type:
                target = self.memory_path(new_type, path.stem)
                check_inside(self.root, target)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
                path = target
                changed = True
        return WriteResult(memory_id, path, status, "memory", changed=changed,
                           notice=None if changed else "nothing to change")

    def set_memory_status(self, memory_id: str, status: str, *, superseded_by: str | None = None,
                          reason: str | None = None) -> WriteResult:
        validate_memory_status(status)
        superseded_by = unlink(superseded_by) or None  # an id or an Obsidian [[link]]
        if status == "superseded" and not superseded_by:
            raise InvalidInput("status 'superseded' needs superseded_by (the replacing memory id)")
        if superseded_by and status != "superseded":
            raise InvalidInput("superseded_by is only valid with status 'superseded'")
        reason = clean(" ".join(reason.split())) if reason else None
        if status == "active":
            from .lifecycle import reactivate

            return reactivate(self, memory_id)
        with locked(self.locks_dir, locks.MEMORIES):
            path, note = self.read_memory(memory_id)
            if note.status == status:  # the same state again: done, nothing to write
                if superseded_by and note.superseded_by not in (
                        superseded_by, self.find_memory(superseded_by).stem):
                    raise Conflict(f"memory {note.id} is already superseded by "
                                   f"{note.superseded_by}; reactivate it first")
                return WriteResult(note.id, path, status, "memory", changed=False,
                                   notice=f"already {status}")
            if note.status != "active":
                raise Conflict(f"memory {note.id} is {note.status}; reactivate it first")
            if superseded_by:
                if superseded_by == note.id:
                    raise InvalidInput("a memory cannot supersede itself")
                new_path, new = self.read_memory(superseded_by)
                if new.status != "active":
                    raise Conflict(f"replacement {new.id} is {new.status}, not active")

            def mutate(doc: Document) -> None:
                memo = MemoryNote(doc)
                memo.set("status", status)
                memo.set("superseded_by", link(new_path.stem) if status == "superseded" else None)
                if reason:
                    memo.set("resolution", reason)
                memo.set("updated", now())

            self._edit(path, locks.note(path), mutate)
            if superseded_by:
                def link_back(doc: Document) -> None:
                    memo = MemoryNote(doc)
                    if not memo.fm.get("supersedes"):
                        memo.set("supersedes", link(path.stem))

                self._edit(new_path, locks.note(new_path), link_back)
        return WriteResult(note.id, path, status, "memory")

    def delete_memory(self, memory_id: str) -> WriteResult:
        from .lifecycle import drop_links_to

        with locked(self.locks_dir, locks.MEMORIES):
            path, note = self.read_memory(memory_id)
            os.unlink(path)
            edited = drop_links_to(self, note, path)  # no link left pointing at nothing
        notice = f"removed links to it from {', '.join(edited)}" if edited else None
        return WriteResult(note.id, path, "deleted", "memory", notice=notice)

    def memories_of_session(self, session_id: str) -> list[str]:
        wanted = {session_id}
        found = self._session_path(session_id)
        if found is not None:
            wanted |= {found.stem, str((self._frontmatter_only(found) or {}).get("id") or "")}
        ids = []
        for path in self.note_paths():
            if self.kind_of(path) == "memory":
                data = self._frontmatter_only(path) or {}
                if unlink(data.get("session")) in wanted and (
                        data.get("status") or "active") == "active":
                    ids.append(str(data.get("id")))
        return ids


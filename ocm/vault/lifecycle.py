"""The ways back in a memory's lifecycle, and keeping chain links honest when a record
leaves it: reactivate a resolved, superseded or archived record; re-stamp a stale one as
verified against HEAD; drop the links that pointed at a deleted record.

Every change runs under the vault's memories lock, through `NoteFolder._edit` (read-modify-write,
re-applied if an editor saved meanwhile), and touches nothing when there is nothing to do.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from . import locks
from .atomic import locked
from .clock import now
from .errors import Conflict, InvalidInput, OcmError
from .folder import NoteFolder, WriteResult
from .git import info as gitinfo
from .links import unlink
from .markdown import Document
from .memories import MemoryNote
from .sessions import SessionNote
from .team.invariants import active_with_key


def _result(note_id: str, path: Path, status: str, changed: bool,
            notice: str | None = None) -> WriteResult:
    return WriteResult(note_id, path, status, "memory", changed=changed, notice=notice)


def reactivate(vault: NoteFolder, memory_id: str) -> WriteResult:
    """Make a resolved, superseded or archived memory active again. Its `superseded_by`
    and `resolution` go (they no longer hold), and so does its replacement's `supersedes`
    link to it: the replacement stays active and no longer claims to replace it. A record
    whose `key` another active record now holds is refused (one active record per key)."""
    with locked(vault.locks_dir, locks.MEMORIES):
        path, note = vault.read_memory(memory_id)
        if note.status == "active":
            return _result(note.id, path, "active", False, f"{note.id} is already active")
        if note.key:
            held = active_with_key(vault, note.key)
            if held is not None and held[1].id != note.id:
                raise Conflict(
                    f"key {note.key!r} belongs to active memory {held[1].id} "
                    f"({held[1].title!r}); resolve or archive it first, or clear this "
                    "memory's key")
        replacement = note.superseded_by

        def mutate(doc: Document) -> None:
            memo = MemoryNote(doc)
            memo.set("status", "active")
            memo.set("superseded_by", None)
            memo.set("resolution", None)
            memo.set("updated", now())

        vault._edit(path, locks.note(path), mutate)
        notice = f"reactivated (was {note.status})"
        if replacement:
            with contextlib.suppress(OcmError):
                new_path, new = vault.read_memory(replacement)
                if unlink(new.fm.get("supersedes")) in (note.id, path.stem):
                    vault._edit(new_path, locks.note(new_path),
                                lambda doc: MemoryNote(doc).set("supersedes", None))
                notice += f"; {new.id} no longer supersedes it and stays {new.status}"
    return _result(note.id, path, "active", True, notice)


def verify(vault: NoteFolder, memory_id: str) -> WriteResult:
    """Re-stamp a memory's `git_sha` with HEAD: a person or agent checked it against the
    code as it is now, so `ocm stale` stops flagging it for changes made before."""
    sha = gitinfo.head_sha(vault.project_root) if vault.scope == "project" else None
    if not sha:
        raise InvalidInput(f"cannot verify against git: {vault.project_root} has no commit "
                           "(user-scope memories are not tied to a repository)")
    with locked(vault.locks_dir, locks.MEMORIES):
        path = vault.find_memory(memory_id)

        def mutate(doc: Document) -> MemoryNote:
            memo = MemoryNote(doc)
            if unlink(memo.fm.get("git_sha")) != sha:
                memo.set("git_sha", sha)
                memo.set("updated", now())
            return memo

        memo, changed = vault._edit(path, locks.note(path), mutate)
    from .git.staleness import checker

    still = checker(vault.project_root).changed_files(sha, memo.str_list("files"))
    notice = f"verified against {sha}" if changed else f"already verified against {sha}"
    if still:
        notice += (f"; {', '.join(still)} also differ from HEAD in the work tree (uncommitted):"
                   " verify again after committing")
    return _result(memo.id, path, memo.status, changed, notice)


def drop_links_to(vault: NoteFolder, deleted: MemoryNote, deleted_path: Path) -> list[str]:
    """After a memory file was deleted: remove `supersedes`/`superseded_by` links to it from
    other memories, and its line from its session's `## Memories`. Returns the notes edited.
    A record it had superseded stays superseded (that judgement still holds); its
    `resolution` says the replacement was deleted."""
    names = {deleted.id, deleted_path.stem}
    edited: list[str] = []

    def retarget(doc: Document) -> None:
        memo = MemoryNote(doc)
        if unlink(memo.fm.get("supersedes")) in names:
            memo.set("supersedes", None)
        if unlink(memo.fm.get("superseded_by")) in names:
            memo.set("superseded_by", None)
            memo.set("resolution", " ".join(filter(None, [
                str(memo.fm.get("resolution") or "").strip(),
                f"(its replacement {deleted.id} was deleted)"])))

    def unlist(doc: Document) -> None:
        block = SessionNote(doc)._section("memories")
        if block is not None:
            items = block.items()
            left = [i for i in items if unlink(i.split(" ", 1)[0]) not in names]
            if len(left) != len(items):
                block.replace_items(left)

    targets: list[tuple[Path, object]] = []
    for path in vault.note_paths():
        if vault.kind_of(path) == "memory":
            data = vault._frontmatter_only(path) or {}
            if {unlink(data.get("supersedes")), unlink(data.get("superseded_by"))} & names:
                targets.append((path, retarget))
    if deleted.session:
        with contextlib.suppress(OcmError):
            targets.append((vault.find_session(deleted.session), unlist))
    for path, mutate in targets:
        with contextlib.suppress(OcmError):
            if vault._edit(path, locks.note(path), mutate)[1]:  # type: ignore[arg-type]
                edited.append(vault.relpath(path))
    return edited

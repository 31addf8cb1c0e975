"""What must hold in a vault whatever git did to it, restored on the next read.

A merge or a pull can bring in states no single ocm process would write:

* two active records holding one `key` (two people replaced the same fact): the older
  (by `created` as a true instant, `created_utc` where the note has it, then id) is
  superseded by the newer, resolution "merged", linked both ways; with a shared
  predecessor the chain becomes old -> older -> newer;
* a supersede cycle (each side retired the other): the newest record of the cycle is
  active again, and the chain ends with it.

Repairs are deterministic (they depend only on the notes, and stamp `updated` and
`updated_utc` with the latest stamp already in them, as written there), so clones that
repair the same merged state write the same bytes and git merges them without a conflict.
Callers hold nothing: each repair takes the vault's memories lock and edits through
`NoteFolder._edit` (read-modify-write).

DESIGN: reads that repair (issue #31). The repair runs on the first read after the notes
changed (`Project.refresh`: a search, a listing, a brief), so a read can write. That is kept,
deliberately, over "reads stay reads, the merge step repairs":

* a read is the one place every merged state passes through. A pull from an IDE, a rebase, a
  cherry-pick, a merge in a clone where `ocm init` never ran (no driver, no git hook: both
  live in `.git/`, which git never shares) all reach the notes without any ocm step. A repair
  left to a post-merge hook or to `ocm team resolve` would leave two active records of one
  key in front of the agent until a person ran something; the agent would read both facts;
* the repair is deterministic (above), so every clone that reads the merged state writes the
  same bytes and the next sync merges cleanly;
* what made a read that writes dangerous was *how* it wrote, and that holds for every write:
  temp files are new files with random names (`atomic.open_new`: O_EXCL, no-follow), notes
  are read with O_NOFOLLOW (a linked note is never read, so never repaired), every folder
  between the vault and the note is checked (`boundary.check_inside`), and the folders ocm
  writes its own files into refuse to be links (`boundary.check_written_folders`). A
  hostile commit (links at every temp name, two active records of one key) then makes a
  plain `ocm search` repair the key and write nothing outside the vault
  (tests/test_fs_links.py). Each repair is reported as a notice on that read.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import locks
from ..atomic import locked
from ..clock import NEVER
from ..errors import NotFound, OcmError
from ..folder import NoteFolder, read_document
from ..links import link
from ..markdown import Document
from ..memories import MemoryNote

MERGED = "merged"
MAX_CHAIN = 10_000

Item = tuple[Path, MemoryNote]


# The latest `updated` of some records, as written in the one that holds it: (local, utc).
Stamp = tuple[datetime, Any]


def _order(item: Item) -> tuple[datetime, str]:
    return item[1].created_at or NEVER, item[1].id


def _latest(items: Iterable[Item]) -> Stamp | None:
    """The latest `updated` by its true instant, with its UTC twin as that record holds it
    (none for a record written before the twin): every clone copies the same text."""
    stamps = [(note.updated_at, note.updated, note.fm.get("updated_utc")
               if note.fm.get("updated") else note.fm.get("created_utc"))
              for _, note in items if note.updated is not None and note.updated_at is not None]
    if not stamps:
        return None
    _, local, utc = max(stamps, key=lambda s: (s[0], s[1]))
    return local, utc


def _stamp(memo: MemoryNote, stamp: Stamp | None) -> None:
    if stamp is not None:
        memo.set("updated", stamp[0])
        memo.set("updated_utc", stamp[1])


def _names(item: Item) -> set[str]:
    return {item[1].id, item[0].stem}


def active_with_keys(vault: NoteFolder, keys: set[str]) -> dict[str, list[Item]]:
    """key -> every active record holding it (a cheap look at each file's head first)."""
    out: dict[str, list[Item]] = {}
    if not keys:
        return out
    needles = [(key, f"key: {key}", f'"{key}"') for key in keys]
    for path in vault.note_paths():
        if vault.kind_of(path) != "memory":
            continue
        try:
            head = path.read_text(encoding="utf-8")[:4096]
        except (OSError, UnicodeDecodeError):
            continue
        if "key:" not in head or not any(a in head or b in head for _, a, b in needles):
            continue
        try:
            note = MemoryNote(read_document(path))
        except OcmError:
            continue
        if note.key in keys and note.status == "active":
            out.setdefault(note.key, []).append((path, note))
    return out


def settle_key(vault: NoteFolder, found: list[Item]) -> Item:
    """Several active records for one key: each older one is superseded by the next newer
    one. Returns the record that stays active. The caller holds the memories lock."""
    found = sorted(found, key=_order)
    stamp = _latest(found)
    for older, newer in zip(found, found[1:], strict=False):
        _retire(vault, older, newer, stamp)
    return found[-1]


def _retire(vault: NoteFolder, older: Item, newer: Item, stamp: Stamp | None) -> None:
    (old_path, old), (new_path, new) = older, newer
    completing = new.supersedes in _names(older)  # a supersede cut short, not a merge

    def mark(doc: Document) -> None:
        memo = MemoryNote(doc)
        memo.set("status", "superseded")
        memo.set("superseded_by", link(new_path.stem))
        if not completing:
            memo.set("resolution", MERGED)
        _stamp(memo, stamp)

    vault._edit(old_path, locks.note(old_path), mark)
    if completing:
        return
    shared = new.supersedes and new.supersedes == old.supersedes
    if new.supersedes and not shared:
        return  # the newer one already replaces another record: that link stays
    vault._edit(new_path, locks.note(new_path),
                lambda doc: MemoryNote(doc).set("supersedes", link(old_path.stem)))
    if shared:  # both replaced the same record: it is now replaced by the older of them
        try:
            first_path, first = vault.read_memory(new.supersedes)
        except (NotFound, OcmError):
            return
        if first.superseded_by in _names(newer):
            vault._edit(first_path, locks.note(first_path), lambda doc: MemoryNote(
                doc).set("superseded_by", link(old_path.stem)))


def _cycle(vault: NoteFolder, start: Item) -> list[Item]:
    """The supersede cycle `start` leads into, or []."""
    chain = [start]
    seen = {start[1].id: 0, start[0].stem: 0}
    while len(chain) < MAX_CHAIN:
        nxt = chain[-1][1].superseded_by
        if not nxt:
            return []
        if nxt in seen:
            return chain[seen[nxt]:]
        try:
            item = vault.read_memory(nxt)
        except (NotFound, OcmError):
            return []
        for name in _names(item):
            seen[name] = len(chain)
        chain.append(item)
    return []


def _break_cycle(vault: NoteFolder, cycle: list[Item]) -> MemoryNote:
    newest = max(cycle, key=_order)
    at = cycle.index(newest)
    before, after = cycle[at - 1], cycle[(at + 1) % len(cycle)]
    stamp = _latest(cycle)

    def revive(doc: Document) -> None:
        memo = MemoryNote(doc)
        memo.set("status", "active")
        memo.set("superseded_by", None)
        memo.set("resolution", None)
        memo.set("supersedes", link(before[0].stem) if before is not newest else None)
        _stamp(memo, stamp)

    vault._edit(newest[0], locks.note(newest[0]), revive)
    if after is not newest and after[1].supersedes in _names(newest):
        vault._edit(after[0], locks.note(after[0]),
                    lambda doc: MemoryNote(doc).set("supersedes", None))
    return newest[1]


def restore(vault: NoteFolder, changed: Iterable[str]) -> list[str]:
    """Check the memories a sync saw change (vault-relative paths) and repair what a merge
    broke; returns one line per repair (nothing when all holds)."""
    items: list[Item] = []
    for rel in changed:
        if not rel.startswith("memories/"):
            continue
        path = vault.root / rel
        try:
            items.append((path, MemoryNote(read_document(path))))
        except (OcmError, OSError):
            continue
    keys = {note.key for _, note in items if note.key and note.status == "active"}
    linked = [item for item in items if item[1].superseded_by]
    if not keys and not linked:
        return []
    notices: list[str] = []
    with locked(vault.locks_dir, locks.MEMORIES):
        done: set[str] = set()
        for item in linked:
            if item[1].id in done:
                continue
            try:
                fresh = vault.read_memory(item[1].id)
            except (NotFound, OcmError):
                continue
            cycle = _cycle(vault, fresh)
            done |= {n.id for _, n in cycle}
            if cycle:
                revived = _break_cycle(vault, cycle)
                notices.append(f"ocm: supersede cycle {' -> '.join(n.id for _, n in cycle)} "
                               f"broken: {revived.id} is active again")
                if revived.key:
                    keys.add(revived.key)
        for key, found in sorted(active_with_keys(vault, keys).items()):
            if len(found) > 1:
                kept = settle_key(vault, found)
                retired = [n.id for _, n in sorted(found, key=_order)[:-1]]
                notices.append(f"ocm: key {key!r} had {len(found)} active memories after a "
                               f"merge: {', '.join(retired)} superseded by the newer, "
                               f"{kept[1].id} stays")
    return notices


def active_with_key(vault: NoteFolder, key: str) -> Item | None:
    """The one active record of `key`, settling several into one first."""
    found = active_with_keys(vault, {key}).get(key, [])
    if len(found) > 1:
        return settle_key(vault, found)
    return found[0] if found else None


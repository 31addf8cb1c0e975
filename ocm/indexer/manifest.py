"""The index's manifest: relpath -> (mtime_ns, size) of every indexed note, and the notes
that could not be indexed, as of one index generation.

Stored as a whole file (`manifest.json`) plus a journal (`manifest.log`) of what each later
commit changed, one JSON line per commit, so a commit of 10 notes writes 10 entries instead
of every note's (at 50k notes the whole file is ~4 MB: ~0.1 s to encode and write). Once the
journal has grown to an eighth of the whole file it is folded into a new whole file: the
cost per commit stays proportional to what it changed.

Derived data, written without fsync, and safe against crashes and concurrent readers: the
whole file is replaced atomically and carries a random `journal` id that each journal line
repeats, so lines written for an older whole file are ignored; a line cut short by a crash
ends the journal (what follows is ignored and the next save rewrites the whole file). A
manifest that reads back as some other generation than the index's is replaced by one read
from the index's stored signatures (`NoteIndex._sync_locked`).

Each save also records the checksum of every new segment file (ocm/indexer/checksums.py),
which `NoteIndex.sync` checks before the index is read.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ocm.vault.atomic import atomic_write_text

from .checksums import MANIFEST, Checksums
from .schema import SCHEMA_VERSION

JOURNAL = "manifest.log"
# The journal is folded into the whole file once it is this fraction of its size.
JOURNAL_FRACTION = 8


@dataclass
class _Loaded:
    key: tuple[int, ...]
    data: dict
    journal_id: str
    base_size: int
    journal_size: int
    clean: bool  # the journal ends with its last valid line: safe to append to


def _stat_key(st: os.stat_result | None) -> tuple[int, ...]:
    return (st.st_ino, st.st_mtime_ns, st.st_size) if st is not None else (0, 0, -1)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


class Manifest:
    """One index folder's manifest, parsed again only when its files changed."""

    def __init__(self, folder: Path) -> None:
        self._base = str(folder / MANIFEST)
        self._journal = str(folder / JOURNAL)
        self._loaded: _Loaded | None = None
        # The segment files' checksums, recorded after each commit (ocm/indexer/checksums.py).
        self.sums = Checksums(folder)

    def load(self) -> dict | None:
        """{"schema", "generation", "notes", "broken"} or None when missing or unreadable.
        The same object while the files stay as they were: callers must not modify it."""
        try:
            base_st = os.stat(self._base)
            journal_st = _stat(self._journal)
            key = (*_stat_key(base_st), *_stat_key(journal_st))
            if self._loaded is not None and self._loaded.key == key:
                return self._loaded.data
            with open(self._base, "rb") as handle:
                data = json.loads(handle.read())
            journal = b""
            if journal_st is not None:
                with open(self._journal, "rb") as handle:
                    journal = handle.read()
        except (FileNotFoundError, ValueError, OSError):
            self._loaded = None
            return None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION or not (
                isinstance(data.get("notes"), dict) and isinstance(data.get("broken"), dict)):
            self._loaded = None
            return None
        journal_id = str(data.get("journal") or "")
        valid = _replay(data, journal, journal_id)
        self._loaded = _Loaded(key, data, journal_id, base_st.st_size, len(journal),
                               valid == len(journal))
        return data

    def key(self) -> tuple[int, ...] | None:
        """The files' (inode, mtime, size), both of them, as last loaded or saved."""
        return self._loaded.key if self._loaded is not None else None

    def files_key(self) -> tuple[int, ...] | None:
        """The same of the files as they are now, without reading them."""
        try:
            return (*_stat_key(_stat(self._base)), *_stat_key(_stat(self._journal)))
        except OSError:
            return None

    def token(self) -> tuple[str, int] | None:
        """What tells the state last loaded or saved apart from any other of this index
        (its whole file's random journal id and its generation), for data derived from
        the notes it lists (ocm/indexer/vectors.py); None when unknown."""
        loaded = self._loaded
        if loaded is None or not loaded.journal_id:
            return None
        return (loaded.journal_id, loaded.data["generation"])

    def save(self, generation: int, notes: dict[str, list[int]], broken: dict[str, list],
             changed: list[str] | None = None) -> None:
        """Record the state after a commit. `changed`: the notes it touched, when `notes`
        and `broken` are the loaded manifest's with only those changed (then only they are
        written, while the journal is small); None rewrites the whole file."""
        loaded = self._loaded
        state = {"schema": SCHEMA_VERSION, "generation": generation, "notes": notes,
                 "broken": broken}
        if changed is not None and loaded is not None and loaded.clean and loaded.key == (
                *_stat_key(_stat(self._base)), *_stat_key(_stat(self._journal))):
            line = json.dumps({"journal": loaded.journal_id, "generation": generation,
                               "notes": {rel: notes.get(rel) for rel in changed},
                               "broken": {rel: broken.get(rel) for rel in changed}},
                              separators=(",", ":")).encode() + b"\n"
            if (loaded.journal_size + len(line)) * JOURNAL_FRACTION <= loaded.base_size:
                with open(self._journal, "ab") as handle:
                    handle.write(line)
                self._remember(state, loaded.journal_id)
                self.sums.record()
                return
        journal_id = os.urandom(8).hex()  # as secrets.token_hex(8), without importing it
        atomic_write_text(Path(self._base), json.dumps({**state, "journal": journal_id},
                                                       separators=(",", ":")), durable=False)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._journal)
        self._remember(state, journal_id)
        self.sums.record()

    def _remember(self, state: dict, journal_id: str) -> None:
        """What was just written is what the next check would parse again."""
        base_st, journal_st = _stat(self._base), _stat(self._journal)
        if base_st is None:
            self._loaded = None
            return
        self._loaded = _Loaded((*_stat_key(base_st), *_stat_key(journal_st)), state,
                               journal_id, base_st.st_size,
                               journal_st.st_size if journal_st is not None else 0, True)


def _replay(data: dict, journal: bytes, journal_id: str) -> int:
    """Apply the journal's lines for this whole file to `data`; returns how many bytes of
    the journal were valid lines (the rest: a line cut short, or garbage)."""
    notes, broken = data["notes"], data["broken"]
    position = 0
    while True:
        end = journal.find(b"\n", position)
        if end < 0:
            return position
        try:
            entry = json.loads(journal[position:end])
        except ValueError:
            return position
        if not (isinstance(entry, dict) and isinstance(entry.get("generation"), int)
                and isinstance(entry.get("notes"), dict)
                and isinstance(entry.get("broken"), dict)):
            return position
        if journal_id and entry.get("journal") == journal_id:
            for table, changes in ((notes, entry["notes"]), (broken, entry["broken"])):
                for rel, value in changes.items():
                    if value is None:
                        table.pop(rel, None)
                    else:
                        table[rel] = value
            data["generation"] = entry["generation"]
        position = end + 1

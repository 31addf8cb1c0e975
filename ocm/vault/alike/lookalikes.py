"""The records a new memory is compared with, each read and parsed at most once.

Auto-supersede (`supersede.best_match`) and the near-copy check (`nearcopies.copy_of`) look
at the same record files: the index's closest records of the new memory's type when the
caller found them, else the type's folder (at most MAX_SCAN most recently changed files).
Each file is read once and looked at raw once (status, key, and the cosine of its words with
the new record's, no YAML), and parsed only when one of the two checks could still use it,
once for both. Keeps a `remember` to one read of each of its few candidates.

A process that writes many records (the MCP server, a script) keeps the raw look of each file
it read (`_SEEN`, at most MAX_SCAN files), keyed on the file's inode, size, mtime and ctime:
a later `remember` reads only the files changed since (an editor's atomic replace changes
the inode, an in-place write the ctime), not every record of the type again, and parses
each at most once (its own earlier writes, compared with every later one, among them). As
git does for its index, a file changed within racy.RACY_NS of the read is not kept: a second
change in the same tick of the file system's clock could leave all four the same.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OcmError
from ..folder import read_note_text
from ..markdown import Document
from ..memories import MemoryNote
from ..racy import settled
from .words import cosine, record_counts

if TYPE_CHECKING:
    from ..folder import NoteFolder

MAX_SCAN = 5000
# The raw look counts words a little differently from the parsed record (the title line as
# written, the body with its headings): room for that before a file is skipped.
PREFILTER_MARGIN = 0.05
_FM_LINE = {name: re.compile(rf"^{name}:[ \t]*(.*)$", re.M) for name in ("status", "key",
                                                                            "title")}


def record_paths(vault: NoteFolder, memory_type: str, candidates: list[Path] | None
                 ) -> list[Path] | None:
    """The record files a new record of `memory_type` is compared with: `candidates` when
    the caller found them (the index's best matches), else the type's folder, at most
    MAX_SCAN most recently changed files; None when there is no such folder."""
    folder = vault.memories_dir / memory_type
    if candidates is not None:
        paths = [p for p in candidates if p.is_file()]
    elif not folder.is_dir():
        return None
    else:
        paths = [p for p in folder.glob("*.md") if not p.name.startswith(".")]
    if len(paths) > MAX_SCAN:
        paths = sorted(paths, key=lambda p: p.stat().st_mtime_ns, reverse=True)[:MAX_SCAN]
    return paths


@dataclass
class Raw:
    """A record file seen raw: its text, whether it is active and has a key, and its words
    (None for a file without the usual frontmatter: the real parser decides)."""
    text: str
    active: bool
    keyed: bool
    words: Counter[str] | None
    head: str = ""  # the frontmatter, lower-cased

    def score(self, new_words: Counter[str]) -> float:
        """The cosine of these words with a new record's (1.0 for a file without the usual
        frontmatter)."""
        return 1.0 if self.words is None else cosine(new_words, self.words)


def raw(text: str) -> Raw:
    if not text.startswith("---"):
        return Raw(text, True, False, None)  # unusual note: let the real parser decide
    end = text.find("\n---", 3)
    if end < 0:
        return Raw(text, True, False, None)
    head, body = text[:end], text[end + 4:]
    found = _FM_LINE["status"].search(head)
    status = (found.group(1).strip().strip("'\"") if found else "") or "active"
    active = status == "active"
    key = _FM_LINE["key"].search(head)
    keyed = bool(key and key.group(1).strip() not in ("", "null", "~", "''", '""'))
    title = _FM_LINE["title"].search(head)
    return Raw(text, active, keyed, record_counts(title.group(1) if title else "", body),
               head.lower())


# path -> ((inode, size, mtime, ctime), its raw look): what this process last read of it.
_SEEN: dict[Path, tuple[tuple[int, int, int, int], Raw]] = {}


def read_raw(path: Path) -> Raw:
    """The raw look of `path`, read again only when the file changed since this process
    last read it. Raises what `read_note_text` raises."""
    try:
        found = os.stat(path, follow_symlinks=False)
        stamp = (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    except OSError:
        stamp = None  # read_note_text says why
    kept = _SEEN.get(path)
    if stamp is not None and kept is not None and kept[0] == stamp:
        return kept[1]
    read_at = time.time_ns()
    seen = raw(read_note_text(path))
    _SEEN.pop(path, None)
    if stamp is not None and settled(max(stamp[2], stamp[3]), read_at):
        if len(_SEEN) >= MAX_SCAN:
            del _SEEN[next(iter(_SEEN))]  # the one read longest ago
        _SEEN[path] = (stamp, seen)
    return seen


# path -> (the raw look it was parsed from, the record or why it could not be parsed): the
# last PARSED_KEPT records parsed, valid while `read_raw` gives that same raw look (the file
# unchanged). Bounded apart from _SEEN: a parsed record weighs ~10x its raw look.
PARSED_KEPT = 256
_PARSED: dict[Path, tuple[Raw, MemoryNote | str]] = {}


def parsed(path: Path, seen: Raw) -> MemoryNote | str:
    """The record `seen` (the raw look of `path`) holds, parsed once while the file is
    unchanged (callers read it and never change it), or why it could not be parsed."""
    kept = _PARSED.get(path)
    if kept is not None and kept[0] is seen:
        return kept[1]
    try:
        note: MemoryNote | str = MemoryNote(Document.parse(seen.text, path))
    except (OcmError, OSError) as exc:
        note = str(exc)
    _PARSED.pop(path, None)
    if len(_PARSED) >= PARSED_KEPT:
        del _PARSED[next(iter(_PARSED))]  # the one parsed longest ago
    _PARSED[path] = (seen, note)
    return note


class Lookalikes:
    """The records of one type a new record (`title`, `content`) is compared with."""

    def __init__(self, vault: NoteFolder, memory_type: str, title: str, content: str,
                 candidates: list[Path] | None = None) -> None:
        self.vault = vault
        self.memory_type = memory_type
        self.candidates = candidates
        self.words = record_counts(title, content)
        self._paths: list[Path] | None = None
        self._looks: dict[Path, tuple[Raw, float] | None] = {}  # raw look, its score
        self._notes: dict[Path, MemoryNote | None] = {}
        self.broken: dict[Path, str] = {}  # record files that could not be read or parsed

    def paths(self) -> list[Path] | None:
        """`record_paths`, listed once; None when the type has no folder."""
        if self._paths is None:
            self._paths = record_paths(self.vault, self.memory_type, self.candidates)
        return self._paths

    def notes(self, floor: float, keyless: bool = True, names: tuple[str, ...] = (),
              retired: bool = False) -> Iterator[tuple[Path, MemoryNote]]:
        """The parsed records whose raw look is active (with `retired`: resolved,
        superseded or archived), keyless (unless `keyless` is False) and similar enough that
        a rule whose lowest score is `floor` could be reached, or whose frontmatter names
        one of `names` (the files of a new record that reports a change done: an older plan
        about one of them may be answered by few shared words)."""
        for path in self.paths() or ():
            found = self._look(path)
            if found is None:
                continue
            seen, score = found
            if seen.active == retired or (keyless and seen.keyed):
                continue
            if score < floor - PREFILTER_MARGIN and not any(
                    name in seen.head for name in names):
                continue
            note = self._note(path, seen)
            if note is not None:
                yield path, note

    def _look(self, path: Path) -> tuple[Raw, float] | None:
        if path not in self._looks:
            try:
                seen = read_raw(path)
                self._looks[path] = seen, seen.score(self.words)
            except (OcmError, OSError) as exc:
                self._looks[path] = None
                self.broken[path] = str(exc)
        return self._looks[path]

    def _note(self, path: Path, seen: Raw) -> MemoryNote | None:
        if path not in self._notes:
            note = parsed(path, seen)
            self._notes[path] = None if isinstance(note, str) else note
            if isinstance(note, str):
                self.broken[path] = note
        return self._notes[path]

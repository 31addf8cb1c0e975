"""The records a new memory is compared with, each read and parsed at most once.

Auto-supersede (`supersede.best_match`) and the near-copy check (`nearcopies.copy_of`) look
at the same record files: the index's closest records of the new memory's type when the
caller found them, else the type's folder (at most MAX_SCAN most recently changed files).
Each file is read once and looked at raw once (status, key, and the cosine of its words with
the new record's, no YAML), and parsed only when one of the two checks could still use it,
once for both. Keeps a `remember` to one read of each of its few candidates.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OcmError
from ..folder import read_note_text
from ..markdown import Document
from ..memories import MemoryNote
from .words import cosine, tokens

if TYPE_CHECKING:
    from ..folder import NoteFolder

MAX_SCAN = 5000
# The raw look counts words a little differently from the parsed record (the title line as
# written, the body with its headings): room for that before a file is skipped.
PREFILTER_MARGIN = 0.05
_FM_LINE = {name: re.compile(rf"^{name}:[ \t]*(.*)$", re.M) for name in ("status", "key",
                                                                            "title")}


def words(title: str, text: str) -> Counter[str]:
    """A record's words as auto-supersede counts them (the title twice)."""
    return Counter(tokens(f"{title}\n{title}\n{text}"))


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
class Look:
    """A record file seen raw: its text, whether it is active and has a key, and the cosine
    of its words with the new record's (1.0 for a file without the usual frontmatter: the
    real parser decides)."""
    text: str
    active: bool
    keyed: bool
    score: float
    head: str = ""  # the frontmatter, lower-cased
    status: str = "active"


def look(text: str, new_words: Counter[str]) -> Look:
    if not text.startswith("---"):
        return Look(text, True, False, 1.0)  # unusual note: let the real parser decide
    end = text.find("\n---", 3)
    if end < 0:
        return Look(text, True, False, 1.0)
    head, body = text[:end], text[end + 4:]
    found = _FM_LINE["status"].search(head)
    status = (found.group(1).strip().strip("'\"") if found else "") or "active"
    active = status == "active"
    key = _FM_LINE["key"].search(head)
    keyed = bool(key and key.group(1).strip() not in ("", "null", "~", "''", '""'))
    title = _FM_LINE["title"].search(head)
    score = cosine(new_words, words(title.group(1) if title else "", body))
    return Look(text, active, keyed, score, head.lower(), status)


class Lookalikes:
    """The records of one type a new record (`title`, `content`) is compared with."""

    def __init__(self, vault: NoteFolder, memory_type: str, title: str, content: str,
                 candidates: list[Path] | None = None) -> None:
        self.vault = vault
        self.memory_type = memory_type
        self.candidates = candidates
        self.words = words(title, content)
        self._paths: list[Path] | None = None
        self._looks: dict[Path, Look | None] = {}
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
            seen = self._look(path)
            if seen is None or seen.active == retired or (keyless and seen.keyed):
                continue
            if seen.score < floor - PREFILTER_MARGIN and not any(
                    name in seen.head for name in names):
                continue
            note = self._note(path, seen.text)
            if note is not None:
                yield path, note

    def _look(self, path: Path) -> Look | None:
        if path not in self._looks:
            try:
                self._looks[path] = look(read_note_text(path), self.words)
            except (OcmError, OSError) as exc:
                self._looks[path] = None
                self.broken[path] = str(exc)
        return self._looks[path]

    def _note(self, path: Path, text: str) -> MemoryNote | None:
        if path not in self._notes:
            try:
                self._notes[path] = MemoryNote(Document.parse(text, path))
            except (OcmError, OSError) as exc:
                self._notes[path] = None
                self.broken[path] = str(exc)
        return self._notes[path]

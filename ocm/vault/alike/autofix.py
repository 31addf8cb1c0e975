"""The agent's record of a failure and the automatic `bug_fix` of the same failure are one
record, whichever came first.

A failed command followed by edits and the same command passing leaves an automatic
`bug_fix` (ocm/vault/freshness/journal.py: key `auto-fix-…`, tag `auto-captured`, low
importance): the command, its error line and the files edited, in words no model chose.
When the agent remembers a `gotcha` or `bug_fix` about the same failure, its text wins (it
says why, which the automatic one cannot), and the automatic record's text is kept in it as
evidence under `## Evidence (<key>)`:

* agent record second: it is stored with the evidence appended and the automatic record is
  marked superseded by it;
* automatic record second: nothing new is stored; the evidence is appended to the agent's
  record (once per key, so a journal folded twice adds nothing).

"The same failure": the agent's title and text hold at least ERROR_COVER of the error
line's distinct words (of the command's, when the failure had no error line), and the two
are tied by a shared file, the same session, or the agent naming one of the edited files.
Only the RECENT most recently changed records of each folder are looked at: the two are
written within one session. An automatic record's id starts with AUTO_NAME (its title starts
with AUTO_TITLE), so the search for one stats only those files of its folder, not every
agent bug_fix beside them (3k stat calls, ~30 ms, in a 100k-note vault).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OcmError
from ..folder import read_note_text
from ..ids import slugify
from ..markdown import Document
from ..memories import MemoryNote
from ..racy import settled
from .supersede import common_files
from .words import tokens

if TYPE_CHECKING:
    from ..folder import NoteFolder

AUTO_KEY_PREFIX = "auto-fix-"
AUTO_TITLE = "Fixed failing"
AUTO_NAME = f"{slugify(AUTO_TITLE)}-"
AUTO_TYPE = "bug_fix"
AGENT_TYPES = ("gotcha", "bug_fix")
RECENT = 50
# Share of the error line's distinct words the agent's record must hold (bench/tombstones.py).
ERROR_COVER = 0.5
MIN_EVIDENCE_WORDS = 2
EVIDENCE_HEADING = "## Evidence"
_FAILED = re.compile(r"^(`+) ?(.+?) ?\1 failed with:\s*\n\s*\n {4}(.*)$", re.M)
_AUTO_KEY_LINE = re.compile(rf"^key:[ \t]*['\"]?{AUTO_KEY_PREFIX}", re.M)


def is_auto(memory_type: str, key: str | None) -> bool:
    """Whether a record is the automatic bug_fix of a failure."""
    return memory_type == AUTO_TYPE and bool(key) and str(key).startswith(AUTO_KEY_PREFIX)


@dataclass
class Failure:
    """What an automatic bug_fix holds: the command, its error line, the files edited."""
    key: str
    command: str
    error: str
    files: list[str]
    session: str
    text: str

    def evidence(self) -> str:
        """The section the agent's record keeps of the automatic one."""
        return f"{EVIDENCE_HEADING} ({self.key})\n\n{self.text.strip()}"


def failure(key: str, text: str, files: list[str], session: str) -> Failure | None:
    """The failure an automatic bug_fix's text records; None when it is not one."""
    found = _FAILED.search(text)
    if found is None:
        return None
    error = found.group(3).strip()
    return Failure(key, found.group(2), "" if error == "a non-zero exit status" else error,
                   files, session, text)


def same_failure(fail: Failure, title: str, text: str, files: list[str], session: str) -> bool:
    """Whether a record (`title`, `text`, `files`, `session`) is about `fail`."""
    said = set(tokens(f"{title}\n{text}"))
    evidence = set(tokens(fail.error)) or set(tokens(fail.command))
    if len(evidence) < MIN_EVIDENCE_WORDS:
        return False
    if len(evidence & said) / len(evidence) < ERROR_COVER:
        return False
    named = {Path(f).stem.lower() for f in fail.files if len(Path(f).stem) >= 4}
    return bool(common_files(fail.files, files) or (session and session == fail.session)
                or named & {word.lower() for word in re.findall(r"[A-Za-z0-9_]+", text)})


def _recent(folder: Path, start: str = "") -> list[Path]:
    """The RECENT most recently changed records of `folder` whose file name starts with
    `start`."""
    try:
        names = _names(folder, start)
    except OSError:
        return []
    changed = []
    for name in names:
        with contextlib.suppress(FileNotFoundError):  # removed since the listing
            changed.append((os.stat(folder / name, follow_symlinks=False).st_mtime_ns, name))
    changed.sort(key=lambda item: item[0], reverse=True)  # ties keep the listing's order
    return [folder / name for _, name in changed[:RECENT]]


# (folder, start) -> (the folder's inode, mtime and ctime, the names `_names` listed): a
# process that writes many records (the MCP server) lists a folder again only after a name
# in it was added, removed or renamed, which changes the folder's mtime, not at every write
# (the agents' bug_fixes beside the few automatic ones grow with the vault). As for the
# records' raw looks (ocm/vault/racy.py), a folder changed just before its listing is not
# kept.
_LISTED: dict[tuple[Path, str], tuple[tuple[int, int, int], list[str]]] = {}


def _names(folder: Path, start: str) -> list[str]:
    """The names of the record files in `folder` that start with `start`."""
    found = os.stat(folder)
    stamp = (found.st_ino, found.st_mtime_ns, found.st_ctime_ns)
    kept = _LISTED.get((folder, start))
    if kept is not None and kept[0] == stamp:
        return kept[1]
    read_at = time.time_ns()
    names = [e.name for e in os.scandir(folder) if e.name.endswith(".md")
             and e.name.startswith(start) and not e.name.startswith(".")
             and e.is_file(follow_symlinks=False)]
    if settled(max(stamp[1], stamp[2]), read_at):
        _LISTED[(folder, start)] = (stamp, names)
    return names


def _active(paths: list[Path], broken: dict[Path, str], auto: bool
            ) -> list[tuple[Path, MemoryNote]]:
    out = []
    for path in paths:
        try:
            text = read_note_text(path)
            if bool(_AUTO_KEY_LINE.search(text.split("\n---", 1)[0])) != auto:
                continue
            note = MemoryNote(Document.parse(text, path))
        except (OcmError, OSError) as exc:
            broken[path] = str(exc)
            continue
        if note.status == "active" and is_auto(note.type, note.key) == auto:
            out.append((path, note))
    return out


def automatic_twin(vault: NoteFolder, memory_type: str, key: str | None, title: str,
                   text: str, files: list[str], session: str, broken: dict[Path, str]
                   ) -> tuple[Path, MemoryNote, Failure] | None:
    """The active automatic bug_fix a new agent record (gotcha or bug_fix) is about."""
    if memory_type not in AGENT_TYPES or is_auto(memory_type, key):
        return None
    for path, note in _active(_recent(vault.memories_dir / AUTO_TYPE, AUTO_NAME), broken,
                                     auto=True):
        fail = failure(str(note.key), note.content, note.str_list("files"), note.session)
        if fail is not None and same_failure(fail, title, text, files, session):
            return path, note, fail
    return None


def agent_twin(vault: NoteFolder, fail: Failure, broken: dict[Path, str]
               ) -> tuple[Path, MemoryNote] | None:
    """The active agent record (gotcha or bug_fix) about the failure a new automatic
    bug_fix records."""
    for memory_type in AGENT_TYPES:
        for path, note in _active(_recent(vault.memories_dir / memory_type), broken,
                                  auto=False):
            if note.type in AGENT_TYPES and same_failure(
                    fail, note.title, note.content, note.str_list("files"), note.session):
                return path, note
    return None


def with_evidence(text: str, fail: Failure) -> str:
    """`text` with `fail`'s evidence appended, unless it already holds it."""
    if f"{EVIDENCE_HEADING} ({fail.key})" in text:
        return text
    return f"{text.rstrip()}\n\n{fail.evidence()}"

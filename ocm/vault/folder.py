"""A vault's folder of notes: its layout, finding and reading notes, and the one safe edit.

Every change is read-modify-write under a cross-process lock; the note is re-read and the
change re-applied if the file moved under us (an editor saving mid-write). The vault's
operations (`ocm.vault.store.Vault`) and the modules they delegate to (lifecycle, rename,
invariants, the look-alike checks) build on this class and never on each other.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from stat import S_ISREG
from typing import Any, TypeVar

from . import locks
from .atomic import atomic_write_text, file_bytes, file_signature, locked
from .boundary import MAX_NOTE_BYTES, check_inside, check_size, is_real_dir, is_real_file
from .clock import instant
from .errors import Conflict, InvalidInput, NoteFormatError, NotFound, OcmError
from .freshness.scan import MEMORIES_DIR, NOFOLLOW, SESSIONS_DIR, TRANSCRIPTS_DIR, signatures
from .freshness.settle import settled_text
from .ids import validate_id
from .links import unlink
from .markdown import Document
from .memories import MemoryNote
from .paths import INDEX_DIRNAME

T = TypeVar("T")
_WRITE_ATTEMPTS = 5


@dataclass
class WriteResult:
    id: str
    path: Path
    status: str
    kind: str
    changed: bool = True
    notice: str | None = None


def read_note_text(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NotFound(f"note file {path} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NoteFormatError(path, "is a symbolic link; ocm never reads through links"
                                  ) from None
        raise
    try:
        # Asked for the file's size (+1, to see it grew), not MAX_NOTE_BYTES: a buffered
        # `read(n)` allocates n bytes first, 2 MB for every note a build reads.
        size = os.fstat(fd).st_size
        raw = os.read(fd, min(size, MAX_NOTE_BYTES) + 1)
        while len(raw) <= MAX_NOTE_BYTES and (
                more := os.read(fd, MAX_NOTE_BYTES + 1 - len(raw))):
            raw += more
    finally:
        os.close(fd)
    if len(raw) > MAX_NOTE_BYTES:
        raise NoteFormatError(path, f"note is {max(size, len(raw)):,} bytes "
                                    f"(max {MAX_NOTE_BYTES:,})")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteFormatError(path, f"not UTF-8 (byte {exc.start})") from None


def read_document(path: Path) -> Document:
    return Document.parse(read_note_text(path), path)


class NoteFolder:
    def __init__(self, root: Path, project: str = "", project_root: Path | None = None,
                 scope: str = "project") -> None:
        self.root = root
        self.project = project or root.parent.name
        self.project_root = project_root or root.parent
        self.scope = scope

    # The folders' paths made once (`root` never changes): a warm search asks for them
    # a dozen times (`exists`, the index's checks), each a `Path` join (~5 us).
    @cached_property
    def sessions_dir(self) -> Path:
        return self.root / SESSIONS_DIR

    @cached_property
    def memories_dir(self) -> Path:
        return self.root / MEMORIES_DIR

    @cached_property
    def transcripts_dir(self) -> Path:
        return self.root / TRANSCRIPTS_DIR

    @property
    def locks_dir(self) -> Path:
        return locks.folder(self.root)

    @cached_property
    def index_dir(self) -> Path:
        return self.root / INDEX_DIRNAME

    @property
    def exists(self) -> bool:
        """An ocm vault is here: its folder holds what `ocm init` made (sessions/ or
        memories/), transcripts or an index. Any other folder is not one, and reading it
        must create nothing. The root itself may be a link (where a person keeps it)."""
        return self.root.is_dir() and any(is_real_dir(folder) for folder in (
            self.sessions_dir, self.memories_dir, self.transcripts_dir, self.index_dir))

    def ensure_layout(self) -> None:
        self.sessions_dir.mkdir(parents=True, exist_ok=True)
        self.memories_dir.mkdir(parents=True, exist_ok=True)

    def relpath(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def note_paths(self) -> Iterator[Path]:
        """Every note file (dot-files, temp files and dot-folders skipped)."""
        for rel in self.note_signatures():
            yield self.root / rel

    def note_signatures(self, folders: list[str] | None = None) -> dict[str, list[int]]:
        """relpath -> [mtime_ns, size] for every note (ocm/vault/freshness/scan.py)."""
        return signatures(str(self.root), folders)

    def note_signature(self, rel: str) -> list[int] | None:
        """[mtime_ns, size] of one note by its vault-relative path; None if it is gone."""
        try:
            st = os.lstat(os.path.join(self.root, rel))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return [st.st_mtime_ns, st.st_size] if S_ISREG(st.st_mode) else None

    def kind_of(self, path: Path) -> str:
        rel = self.relpath(path)
        if rel.startswith(TRANSCRIPTS_DIR + "/"):
            return "transcript"
        return "session" if rel.startswith(SESSIONS_DIR + "/") else "memory"

    def _edit(self, path: Path, lock: str, mutate: Callable[[Document], T]) -> tuple[T, bool]:
        check_inside(self.root, path)
        with locked(self.locks_dir, lock):
            for _ in range(_WRITE_ATTEMPTS):
                signature = file_signature(path)
                text = settled_text(path, read_note_text)
                doc = Document.parse(text, path)
                result = mutate(doc)
                new_text = doc.render()
                if new_text == text:
                    return result, False
                check_size(path, new_text)
                # edited under us (checked again after our fsync): re-read and re-apply.
                # The bytes too: where times are coarse (a clock tick, 1-10 ms; Linux before
                # 6.13), a save can leave them and the size as they were, the empty file an
                # in-place save starts with above all (tests/test_races.py).
                def unchanged(at: Path, sig: tuple[int, int] | None = signature,
                              raw: bytes = text.encode("utf-8")) -> bool:
                    return file_signature(at) == sig and file_bytes(at) == raw

                if atomic_write_text(path, new_text, unchanged=unchanged):
                    return result, True
        raise Conflict(f"{path} kept changing while ocm was writing it; nothing was written")

    def _frontmatter_only(self, path: Path) -> dict[str, Any] | None:
        try:
            with path.open("r", encoding="utf-8") as handle:
                head = handle.read(8192)
            if not head.startswith("---"):
                return None
            end = head.find("\n---", 3)
            if end < 0:
                return read_document(path).frontmatter.data
            return Document.parse(head[: end + 4] + "\n", path).frontmatter.data
        except (OcmError, OSError, UnicodeDecodeError):
            return None

    def session_headers(self) -> list[tuple[Path, dict[str, Any]]]:
        """(path, frontmatter) of every readable session note, newest first: by the true
        instant it started (`clock.instant`: right across time-zone changes), then by file
        name; a note with no start time comes last."""
        if not self.sessions_dir.is_dir():
            return []
        # Recursive: a person may file sessions into sub-folders in Obsidian.
        paths = (p for p in self.sessions_dir.rglob("*.md")
                 if not any(part.startswith(".") for part in
                            p.relative_to(self.sessions_dir).parts))
        found = []
        for path in paths:
            data = self._frontmatter_only(path)
            if data is not None:
                started = instant(data.get("started_at_utc"), data.get("started_at"))
                found.append((started.timestamp() if started else float("-inf"), path.name,
                               path, data))
        found.sort(key=lambda row: (row[0], row[1]), reverse=True)
        return [(path, data) for _, _, path, data in found]

    def find_session(self, session_id: str) -> Path:
        """By ocm id, file stem, or the host's agent_session_id."""
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInput("session id must be a non-empty string")
        sid = unlink(session_id)
        if "/" in sid or "\\" in sid or "\x00" in sid or ".." in sid:
            raise InvalidInput(f"invalid session id {sid!r}: no path separators or '..'")
        direct = self.sessions_dir / f"{sid}.md"
        if is_real_file(direct) and is_real_dir(self.sessions_dir):
            return direct
        for path, data in self.session_headers():
            if sid in (str(data.get("id") or ""), path.stem, str(data.get("agent_session_id"))):
                return path
        raise NotFound(f"no session with id {sid!r} in {self.root}")

    def memory_path(self, memory_type: str, memory_id: str) -> Path:
        return self.memories_dir / memory_type / f"{memory_id}.md"

    def find_memory(self, memory_id: str) -> Path:
        mid = validate_id(unlink(memory_id), "memory id")
        if is_real_dir(self.memories_dir):
            # The copy that counts when a file was duplicated (ocm.vault.duplicates).
            for folder in sorted(self.memories_dir.iterdir()):
                candidate = folder / f"{mid}.md"
                if is_real_dir(folder) and is_real_file(candidate):
                    return candidate
            # Renamed or moved by a person: identity is the frontmatter id, not the path.
            for path in sorted(self.note_paths()):
                if self.kind_of(path) == "memory" and (
                        (self._frontmatter_only(path) or {}).get("id") == mid):
                    return path
        raise NotFound(f"no memory with id {mid!r} in {self.root}")

    def read_memory(self, memory_id: str) -> tuple[Path, MemoryNote]:
        path = self.find_memory(memory_id)
        return path, MemoryNote(read_document(path))

    def memory_notes(self) -> Iterator[tuple[Path, MemoryNote]]:
        """Every readable memory note (broken ones are `ocm status`'s business)."""
        for path in self.note_paths():
            if self.kind_of(path) != "memory":
                continue
            try:
                yield path, MemoryNote(read_document(path))
            except OcmError:
                continue

"""The vault is a boundary: nothing is read, indexed, shown, exported or written through a
symbolic link inside it. A vault committed to git can carry links (`memories/x.md ->
/etc/passwd`, a type folder linked to `~/.ssh`), so a link is never followed: the scans skip
links (`scan._scan_folder`), reads open notes with `O_NOFOLLOW`, writes check every folder
between the vault root and the file, and `ocm doctor` lists what it found.

The vault root itself may be a link (a person's choice for where the vault lives).

The folders ocm writes its own files into (`WRITTEN_FOLDERS`: transcripts, the hook journal
and its state, locks, the index) are checked not to be links before anything is written:
`check_written_folders` (the CLI, the MCP server: one line naming the link) and
`linked_written_folders` (the hooks: one log line on stderr, nothing written).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from stat import S_ISDIR, S_ISLNK

from .errors import InvalidInput
from .freshness.scan import NOTE_DIRS

# Reads refuse a larger note (a broken note), so writes refuse to make one.
MAX_NOTE_BYTES = 2_000_000


def check_inside(root: Path, path: Path) -> None:
    """Refuse a write to `path` unless every folder from `root` down to it is a real folder
    (or missing, to be created) and `path` is not a link; raises InvalidInput naming it."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        raise InvalidInput(f"{path} is outside the vault {root}") from None
    current = root
    for part in rel.parts:
        if part in ("", ".", ".."):
            raise InvalidInput(f"{path}: no '..' in a note's path")
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return  # the rest is created by the write, as real folders
        if S_ISLNK(st.st_mode):
            raise InvalidInput(f"{current} is a symbolic link; ocm never writes through links "
                               "(see `ocm doctor`)")
        if current != path and not S_ISDIR(st.st_mode):
            raise InvalidInput(f"{current} is not a folder")


# Folders under a vault that ocm writes its own files into (journal.HOOKS_DIR, locks.DIRNAME,
# the index; the hooks' state folders under .hooks are all checked, whatever their name).
WRITTEN_FOLDERS = ("transcripts", ".hooks", ".locks", ".index", "sessions", "memories")


def linked_written_folders(root: str | os.PathLike[str]) -> list[str]:
    """Vault-relative names of the written folders (and `.hooks/*` folders) that are links."""
    found = []
    for name in WRITTEN_FOLDERS:
        full = os.path.join(root, name)
        if os.path.islink(full):
            found.append(name)
        elif name == ".hooks" and os.path.isdir(full):
            try:
                inside = os.listdir(full)
            except OSError:
                continue
            found += [f"{name}/{sub}" for sub in sorted(inside)
                      if os.path.islink(os.path.join(full, sub))]
    return found


def check_written_folders(root: Path) -> None:
    """Refuse to work in a vault whose written folders are links (InvalidInput, one line)."""
    linked = linked_written_folders(root)
    if linked:
        raise InvalidInput(f"{root / linked[0]} is a symbolic link; ocm never writes through "
                           "links: replace it with a real folder (or delete it: ocm "
                           "recreates what it needs)")


def is_real_file(path: Path) -> bool:
    """A regular file that is not a link (its folders are checked by the scans)."""
    try:
        return (os.lstat(path).st_mode & 0o170000) == 0o100000
    except OSError as exc:
        return _absent(exc)


def is_real_dir(path: Path) -> bool:
    try:
        return S_ISDIR(os.lstat(path).st_mode)
    except OSError as exc:
        return _absent(exc)


def _absent(exc: OSError) -> bool:
    """False for a path that does not or cannot exist (a name longer than the file system
    allows, e.g. a 300-character id); any other error is raised."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
        return False
    raise exc


def links_in(root: Path) -> list[str]:
    """Vault-relative paths of every link under the note folders, not followed."""
    found = [name for name in linked_written_folders(root) if name not in NOTE_DIRS]
    for top in NOTE_DIRS:
        start = root / top
        if not start.exists() and not start.is_symlink():
            continue
        if start.is_symlink():
            found.append(top)
            continue
        for folder, dirs, files in os.walk(start, followlinks=False):
            for name in dirs + files:
                full = Path(folder) / name
                if full.is_symlink():
                    found.append(full.relative_to(root).as_posix())
    return sorted(found)


def check_size(path: Path, text: str) -> None:
    """Refuse a write that would make a note larger than reads accept (it would vanish from
    every listing)."""
    size = len(text.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        raise InvalidInput(
            f"{path.name} would be {size:,} bytes, over the {MAX_NOTE_BYTES:,} a note may hold; "
            "nothing was written (close this session and start a new one, or shorten the text)")

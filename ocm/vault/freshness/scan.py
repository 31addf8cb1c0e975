"""Listing a vault's notes: the folders that hold them, and every note's [mtime_ns, size]
(the freshness check before every search; `Vault.note_signatures`). ocm/vault/freshness/scanahead.py
takes the same listing ahead in a child process; ocm/vault/freshness/watch.py keeps it from the
kernel in a long-lived one."""

from __future__ import annotations

import errno
import os
from stat import S_ISDIR, S_ISREG

SESSIONS_DIR = "sessions"
MEMORIES_DIR = "memories"
TRANSCRIPTS_DIR = "transcripts"
NOTE_DIRS = (SESSIONS_DIR, MEMORIES_DIR, TRANSCRIPTS_DIR)

_DIR_FD_STAT = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # links are never followed (vault/boundary.py)


def _scan_folder(fd: int, prefix: str, out: dict[str, list[int]]) -> list[str]:
    """Record the notes of one open folder in `out`; return its subfolders' names.
    Names come from `listdir` (no DirEntry objects); a `.md` name costs one `stat`, any
    other name one `lstat` to tell a real subfolder (links are never followed: see
    vault/boundary.py)."""
    stat, is_reg, is_dir = os.stat, S_ISREG, S_ISDIR
    subfolders = []
    for name in os.listdir(fd):
        if name[0] == ".":  # dot-folders, `.ocm-tmp-*` temp files
            continue
        try:
            if name.endswith(".md"):
                st = stat(name, dir_fd=fd, follow_symlinks=False)  # a link is never a note
                if is_reg(st.st_mode):
                    out[prefix + name] = [st.st_mtime_ns, st.st_size]
                    continue
            if is_dir(stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                subfolders.append(name)
        except FileNotFoundError:  # deleted since the listing
            continue
    return subfolders


def _signatures_by_path(root: str, cut: int,
                        folders: list[str] | None) -> dict[str, list[int]]:
    """The portable walk (no `dir_fd`, e.g. Windows)."""
    out: dict[str, list[int]] = {}
    stack = [os.path.join(root, folder) for folder in NOTE_DIRS]
    while stack:
        folder = stack.pop()
        if os.path.islink(folder):
            continue
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        if folders is not None:
            folders.append(folder)
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    out[entry.path[cut:].replace(os.sep, "/")] = [st.st_mtime_ns, st.st_size]
            except FileNotFoundError:
                continue
    return out


def signatures(root: str, folders: list[str] | None = None) -> dict[str, list[int]]:
    """relpath -> [mtime_ns, size] for every note under the vault folder `root` (lists, as
    the index manifest's JSON holds them, so the two compare as whole dicts): the freshness
    check before every search, so it is lean. One `stat` per note is the floor (an editor's
    in-place save changes nothing else), so each is made relative to an open folder
    descriptor (no path walk from `/`); no Path objects. (Two threads sharing the `stat`s
    were slower on an idle 2-core machine: 100 against 72 ms at 10k notes.)
    `folders`, if given, receives the absolute path of every note folder walked."""
    cut = len(root) + 1
    if not _DIR_FD_STAT:
        return _signatures_by_path(root, cut, folders)
    out: dict[str, list[int]] = {}
    stack = [os.path.join(root, folder) for folder in NOTE_DIRS]
    while stack:
        folder = stack.pop()
        try:
            fd = os.open(folder, _DIR_FLAGS | NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:  # ELOOP: `sessions/` or `memories/` is a link
            if exc.errno == errno.ELOOP:
                continue
            raise
        try:
            subfolders = _scan_folder(fd, folder[cut:].replace(os.sep, "/") + "/", out)
        finally:
            os.close(fd)
        if folders is not None:
            folders.append(folder)
        stack += [os.path.join(folder, name) for name in subfolders]
    return out


def names(root: str) -> list[str]:
    """The relpath of every `.md` name under the vault folder `root`'s note folders,
    without a `stat` of each (a folder read per folder): what a first search with no index
    lists before it indexes a few notes and answers. A name is taken as a note as it is
    (the one that turns out not to be a regular file is dropped when it is looked at);
    a folder is whatever other name can be listed, links never followed."""
    out: list[str] = []
    stack = list(NOTE_DIRS)
    while stack:
        folder = stack.pop()
        try:
            fd = os.open(os.path.join(root, folder), _DIR_FLAGS | NOFOLLOW)
        except OSError:  # gone, not a folder, or a link (ELOOP)
            continue
        try:
            listed = os.listdir(fd)
        finally:
            os.close(fd)
        prefix = folder + "/"
        notes = [name for name in listed if name.endswith(".md")]
        out += [prefix + name for name in notes if name[0] != "."]
        if len(notes) < len(listed):  # (a month of sessions is 10k+ notes and no folder)
            stack += [prefix + name for name in listed
                      if name[0] != "." and not name.endswith(".md")]
    return out

"""The freshness scan of a one-shot `ocm search`, taken in a forked child while the process
imports what the search needs.

A fresh `ocm search` imports for ~150 ms (Whoosh, numpy) before it checks its notes, and
that check is one `stat` per note (~50 ms at 10k notes). The `stat`s are the floor: an
editor's in-place save changes only the file's own mtime and size, so neither the folders'
mtimes nor the manifest can stand in for them. They need no import, though, so the lean
entry point (ocm/cli/lean.py, through `Project.scan_ahead`) forks a child that takes them
on the other core while this process imports, and `Vault.note_signatures` takes the
child's result instead of scanning again. The scan is then a few milliseconds older than
it would be, as if the search had started earlier: a note changed after it shows a
signature the manifest lacks, so the next search indexes it. Folding hook records changes
notes, so a fold drops the child's scan; without `fork`, or if anything fails, the process
scans as before."""

from __future__ import annotations

import marshal
import os
from typing import TYPE_CHECKING

from . import journal

if TYPE_CHECKING:
    from .store import Vault

# vault root (as `str(vault.root)`) -> (child pid, read end of its pipe)
_children: dict[str, tuple[int, int]] = {}


def start(vault: Vault) -> None:
    root = str(vault.root)
    if (not hasattr(os, "fork") or root in _children or journal.pending(root)
            or not vault.exists):
        return
    try:
        read, write = os.pipe()
    except OSError:
        return
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return
    if pid == 0:  # the child: scan, send, and leave without any of the parent's clean-up
        code = 1
        try:
            os.close(read)
            folders: list[str] = []
            data = marshal.dumps((vault.note_signatures(folders), folders))
            with open(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _children[root] = (pid, read)


def take(root: str, folders: list[str] | None = None) -> dict[str, list[int]] | None:
    """The child's scan of `root` (once), or None: no child, or it failed."""
    child = _children.pop(root, None)
    if child is None:
        return None
    pid, read = child
    with open(read, "rb") as stream:
        data = stream.read()
    try:
        _, status = os.waitpid(pid, 0)
        scan, walked = marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    if folders is not None:
        folders.extend(walked)
    return scan


def discard(root: str) -> None:
    """Drop the child's scan (the notes are about to change); the next check scans."""
    take(root)

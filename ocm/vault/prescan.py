"""The freshness scan of a one-shot `ocm search`, taken in a thread while the process
imports what the search needs.

A fresh `ocm search` imports for ~150 ms (Whoosh, numpy) before it checks its notes, and
that check is one `stat` per note (~50 ms at 10k notes). The `stat`s are the floor: an
editor's in-place save changes only the file's own mtime and size, so neither the folders'
mtimes nor the manifest can stand in for them. Importing reads hundreds of files and each
`stat` releases the GIL, so the lean entry point (ocm/cli/lean.py, through
`Project.scan_ahead`) starts the scan in a thread before the imports, and
`Vault.note_signatures` takes its result instead of scanning again. The scan is then a few
milliseconds older than it would be, as if the search had started earlier: a note changed
after it shows a signature the manifest lacks, so the next search indexes it. Folding hook
records changes notes, so a fold drops the thread's scan; if the scan failed, the process
scans as before."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from . import journal

if TYPE_CHECKING:
    from .store import Vault

# vault root (as `str(vault.root)`) -> (the scanning thread, where it leaves its result)
_pending: dict[str, tuple[threading.Thread, list]] = {}


def start(vault: Vault) -> None:
    from .store import note_signatures

    root = str(vault.root)
    if root in _pending or journal.pending(root) or not vault.exists:
        return
    result: list = []

    def scan() -> None:
        folders: list[str] = []
        with contextlib.suppress(Exception):  # the process scans again, and says why
            result.append((note_signatures(root, folders), folders))

    thread = threading.Thread(target=scan, name="ocm-prescan", daemon=True)
    thread.start()
    _pending[root] = (thread, result)


def take(root: str, folders: list[str] | None = None) -> dict[str, list[int]] | None:
    """The thread's scan of `root` (once), or None: none started, or it failed."""
    entry = _pending.pop(root, None)
    if entry is None:
        return None
    thread, result = entry
    thread.join()
    if not result:
        return None
    scan, walked = result[0]
    if folders is not None:
        folders.extend(walked)
    return scan


def discard(root: str) -> None:
    """Drop the thread's scan (the notes are about to change); the next check scans."""
    take(root)

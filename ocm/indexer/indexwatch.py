"""Which files of an index folder were written, created, removed or renamed since the last
look, from inotify: the check of the segment files before every search of a long-lived
process (ocm/indexer/checksums.py) stats each of them only after the kernel said something
there changed (~100 `stat` calls at 10k notes, ~5 % of a warm search, against one `ioctl`
when nothing did).

inotify reports a write to a file as the writing call returns, an in-place rewrite that puts
the old mtime back included (that one the `stat` check did not see). It does not report a
change made through a shared writable mapping (no tool of ocm writes index files so) nor
bits that rot on the disk, which the `stat` check did not see either. Anything the events
cannot describe (a queue overflow, the folder itself removed or renamed) makes `changed()`
answer None: the caller checks everything and watches anew.

Where inotify is missing (not Linux, `inotify_simple` not installed) `IndexWatch.start`
returns None and the caller stats every file each time, as before.
"""

from __future__ import annotations

import os
from typing import Any

from ocm.vault.freshness.watch import InotifyWatch


class IndexWatch(InotifyWatch):
    """An inotify watch on one folder; names of the files that changed there."""

    def __init__(self, inotify: Any, flags: Any) -> None:
        super().__init__(inotify, flags)
        self._onlydir = flags.ONLYDIR
        # The folder watched, and its (device, inode) once the watch was on.
        self._folder = ""
        self._identity: tuple[int, int] | None = None

    @classmethod
    def start(cls, folder: str | os.PathLike[str]) -> IndexWatch | None:
        """Watch `folder` from now on; None where that is impossible."""
        watch = cls._opened()
        if watch is None:
            return None
        watch._folder = os.fspath(folder)
        try:
            watch._inotify.add_watch(watch._folder, watch._mask | watch._onlydir)
            watch._identity = _identity(watch._folder)
        except OSError:  # the folder is gone, or out of watches
            watch.close()
            return None
        return watch

    def changed(self) -> set[str] | None:
        """Names of the files changed in the folder since the last call (or the start);
        None when only a check of every file can tell (then `close` and start anew)."""
        events = self._events()
        if events is None:
            return None
        # A folder removed while a process still holds it open (a rebuild's rmtree and
        # mkdir under a warm process) gets no DELETE_SELF until it is let go: the watch
        # would go on watching the removed folder, silent, while files change in the new
        # one. One `stat` tells.
        try:
            if _identity(self._folder) != self._identity:
                return None
        except OSError:
            return None
        names: set[str] = set()
        for event in events:
            if event.mask & self._reset_mask:
                return None
            names.add(event.name)
        return names


def _identity(folder: str) -> tuple[int, int]:
    found = os.stat(folder)
    return found.st_dev, found.st_ino

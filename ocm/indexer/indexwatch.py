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

    @classmethod
    def start(cls, folder: str | os.PathLike[str]) -> IndexWatch | None:
        """Watch `folder` from now on; None where that is impossible."""
        watch = cls._opened()
        if watch is None:
            return None
        try:
            watch._inotify.add_watch(os.fspath(folder), watch._mask | watch._onlydir)
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
        names: set[str] = set()
        for event in events:
            if event.mask & self._reset_mask:
                return None
            names.add(event.name)
        return names

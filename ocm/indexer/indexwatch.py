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

import contextlib
import os
from typing import Any

_FILE_EVENTS = ("MODIFY", "ATTRIB", "CLOSE_WRITE", "CREATE", "DELETE", "MOVED_FROM",
                "MOVED_TO")
# Events after which the folder is no longer what was watched.
_RESET_EVENTS = ("DELETE_SELF", "MOVE_SELF", "Q_OVERFLOW", "IGNORED", "UNMOUNT")


class IndexWatch:
    """An inotify watch on one folder; names of the files that changed there."""

    def __init__(self, inotify: Any, flags: Any) -> None:
        self._inotify = inotify
        self._reset = 0
        for name in _RESET_EVENTS:
            self._reset |= getattr(flags, name)

    @classmethod
    def start(cls, folder: str | os.PathLike[str]) -> IndexWatch | None:
        """Watch `folder` from now on; None where that is impossible."""
        try:
            from inotify_simple import INotify, flags
        except ImportError:  # not Linux, or the optional dependency is missing
            return None
        try:
            watch = cls(INotify(), flags)
        except (OSError, AttributeError):  # no inotify, or out of instances
            return None
        mask = flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR
        for name in _FILE_EVENTS:
            mask |= getattr(flags, name)
        try:
            watch._inotify.add_watch(os.fspath(folder), mask)
        except OSError:  # the folder is gone, or out of watches
            watch.close()
            return None
        return watch

    def changed(self) -> set[str] | None:
        """Names of the files changed in the folder since the last call (or the start);
        None when only a check of every file can tell (then `close` and start anew)."""
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            return None
        names: set[str] = set()
        for event in events:
            if event.mask & self._reset:
                return None
            names.add(event.name)
        return names

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._inotify.close()

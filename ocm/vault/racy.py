"""Git's racy rule for what a process keeps by a file's or a folder's stat.

A process that keeps what it read from a file (or a folder's listing) until the stat
changes must not keep it when the stat was taken within a tick of the file system's clock
of the last change: a second change in the same tick could leave inode, size, mtime and
ctime all as they were. Times are coarse (a few ms); RACY_NS is well past one tick.
"""

from __future__ import annotations

RACY_NS = 50_000_000


def settled(changed_ns: int, read_at_ns: int) -> bool:
    """Whether what was read at `read_at_ns` (taken before the read) of a file or folder
    last changed at `changed_ns` (its later of mtime and ctime) may be kept by its stat."""
    return changed_ns < read_at_ns - RACY_NS

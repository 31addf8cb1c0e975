"""Crash-safe writes and cross-process locks.

A note is written to a dot-prefixed temp file in its own folder (invisible to Obsidian and to
the indexer), fsynced, then `os.replace`d over the target, so a reader sees the old bytes or
the new ones, never a torn file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock

LOCK_TIMEOUT_S = 30.0
TEMP_PREFIX = ".ocm-tmp-"


def atomic_write_bytes(path: Path, data: bytes,
                       unchanged: Callable[[], bool] | None = None) -> bool:
    """Write `data` over `path`; with `unchanged`, only if it still says True once the temp
    file is on disk (checked last, so a save during our fsync is not overwritten)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f"{TEMP_PREFIX}{os.getpid()}-{path.name}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if unchanged is not None and not unchanged():
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return True


def atomic_write_text(path: Path, text: str,
                      unchanged: Callable[[], bool] | None = None) -> bool:
    return atomic_write_bytes(path, text.encode("utf-8"), unchanged)


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; not supported on every platform.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(lock_dir: Path, name: str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the named cross-process lock (an OS file lock: it dies with its process)."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_dir / f"{name}.lock"), timeout=timeout):
        yield


def file_signature(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size), the freshness key used everywhere; None if the file is gone."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)

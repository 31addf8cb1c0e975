"""Crash-safe writes and cross-process locks.

A note is written to a dot-prefixed temp file in its own folder (invisible to Obsidian and to
the indexer), fsynced, then `os.replace`d over the target, so a reader sees the old bytes or
the new ones, never a torn file.

A temp file is always a new file: a random name, opened with `O_CREAT|O_EXCL|O_NOFOLLOW`
(`open_new`). A vault can come from a teammate's commit, and git checks out tracked links
even in ignored folders, so any name a writer could predict may already be a link to a file
outside the vault; `O_EXCL` refuses every existing name, a dangling link included, and the
writer draws another. `os.replace` then swaps the directory entry itself, never a link's
target.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

LOCK_TIMEOUT_S = 30.0
TEMP_PREFIX = ".ocm-tmp-"


def atomic_write_bytes(path: Path, data: bytes,
                       unchanged: Callable[[Path], bool] | None = None,
                       durable: bool = True) -> bool:
    """Write `data` over `path`; with `unchanged`, only if `unchanged(path)` still says True
    once the temp file is on disk (checked last, so a save during our fsync is not
    overwritten), and only if the file we displaced still says so afterwards
    (`_swap_checked`: a save landing between that check and the swap is put back, and so
    is a save into ours while it was shown). `durable=False` skips the fsyncs, for derived
    files that are rebuilt when lost."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = open_new(path.parent, path.name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if unchanged is not None and not unchanged(path):
            os.unlink(tmp)
            return False
        if unchanged is None or not _swap_checked(tmp, path, unchanged, data, durable):
            os.replace(tmp, path)
            if durable:
                _fsync_dir(path.parent)
    except _Raced:  # _swap_checked left at the temp name only what must not go
        return False
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return True


class _Raced(Exception):
    """A save landed in the file displaced (or in ours while it was shown); it is at the
    path again."""


_SWAPS = 10  # turns of `_swap_checked` while saves keep landing in the file just hidden


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: Callable[..., int] | None | bool = False  # False: not looked up yet


def _exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically (Linux renameat2 RENAME_EXCHANGE); False where the system
    or the file system cannot."""
    global _renameat2
    if _renameat2 is False:
        _renameat2 = None
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            _renameat2 = libc.renameat2
        except (OSError, AttributeError):
            pass
    if not callable(_renameat2):
        return False
    import ctypes

    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_checked(tmp: Path, path: Path, unchanged: Callable[[Path], bool],
                  data: bytes, durable: bool = True) -> bool:
    """Put `tmp` (holding `data`) at `path` by swapping the two names, then check the file
    displaced (now at `tmp`) is still the one read, and (`durable`) again once the swap is
    on disk (the directory's fsync): an in-place save whose open() looked the name up just
    before the swap empties and writes the old file only after (Linux looks up, then
    truncates), so the first look can come too soon. If so it goes and True is returned.
    False when the system cannot swap (the caller falls back to a plain replace).

    A person's save that landed in the displaced file after `unchanged` said yes (written in
    place into the old file, or renamed over it) is shown again and _Raced raised (the
    caller re-reads and re-applies its change). Ours was shown meanwhile, and a save in
    place into it (an editor saving on its timer, or reloading ours and saving) is the
    newer one: so a file only goes when it holds what it held when it was last shown, and
    the one a save landed in is shown again, in turn (a save into ours is kept at `path`,
    the older one it replaces goes). A file that still changes after _SWAPS turns is left
    at the temp name, not removed here (`sweep_temp_files` takes it once we are gone)."""
    if not _exchange(tmp, path):
        return False
    quiet = unchanged(tmp)
    if quiet and durable:
        _fsync_dir(path.parent)
        quiet = unchanged(tmp)
    if quiet:
        os.unlink(tmp)
        return True
    shown: bytes | None = data  # what the file now at `path` held when it was put there
    for _ in range(_SWAPS):
        showing = file_bytes(tmp)
        try:
            _exchange(tmp, path)  # the hidden one, with a save the shown one lacks, back
        except OSError:
            os.replace(tmp, path)  # never leave theirs at the temp name, which is removed
            raise _Raced from None
        if file_bytes(tmp) == shown:  # nothing saved into it while it was shown
            os.unlink(tmp)
            raise _Raced
        shown = showing
    raise _Raced


_NEW_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))
_NAME_KEEP = 80  # of the target's name in a temp name (a 255-byte name plus more is too long)


def open_new(folder: Path, name: str, prefix: str = TEMP_PREFIX) -> tuple[int, Path]:
    """A new temp file in `folder` for writing `name`: (fd, path). Its name is random
    (`<prefix><pid>-<16 hex>-<name>`), and it is created, never opened: an existing file or
    link at the name is never written through (another name is drawn)."""
    for _ in range(100):
        tmp = folder / f"{prefix}{os.getpid()}-{os.urandom(8).hex()}-{name[:_NAME_KEEP]}"
        try:
            return os.open(tmp, _NEW_FLAGS, 0o644), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def atomic_write_text(path: Path, text: str, unchanged: Callable[[Path], bool] | None = None,
                      durable: bool = True) -> bool:
    return atomic_write_bytes(path, text.encode("utf-8"), unchanged, durable)


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
    from filelock import FileLock  # ~30 ms of imports (logging, inspect): not on read paths

    lock_dir.mkdir(parents=True, exist_ok=True)
    if lock_dir.is_symlink():
        raise OSError(f"{lock_dir} is a symbolic link; ocm never writes through links")
    path = lock_dir / f"{lock_name(name)}.lock"
    if path.is_symlink():  # FileLock opens with O_TRUNC: a planted link would be emptied
        path.unlink()
    with FileLock(str(path), timeout=timeout):
        yield


_MAX_LOCK_NAME = 120  # bytes: a note's 250-byte name plus ".lock" is over NAME_MAX


def lock_name(name: str) -> str:
    """`name`, or for a long one its start and a hash of the whole (one lock per name)."""
    if len(name.encode("utf-8")) <= _MAX_LOCK_NAME:
        return name
    import hashlib

    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return name.encode("utf-8")[:60].decode("utf-8", "ignore") + "-" + digest


def file_signature(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size), the freshness key used everywhere; None if the file is gone."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def file_bytes(at: Path) -> bytes | None:
    """The bytes of the file at `at`, None if it is gone or a link."""
    try:
        fd = os.open(at, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def sweep_temp_files(folders: list[Path], min_age_s: float = 600.0) -> int:
    """Remove temp files left by writers that were killed mid-write (their process is gone,
    or the file is older than `min_age_s`); returns how many went."""
    import time

    removed = 0
    for top in folders:
        if not top.is_dir():
            continue
        for tmp in top.rglob(f"{TEMP_PREFIX}*"):
            pid_text = tmp.name[len(TEMP_PREFIX):].split("-", 1)[0]
            try:
                st = tmp.stat()
            except FileNotFoundError:
                continue
            # ctime too: after a checked swap the temp name holds the note's old file, whose
            # mtime can be hours old while its writer is still comparing it.
            age = time.time() - max(st.st_mtime, st.st_ctime)
            if pid_text.isdigit() and age < min_age_s and _alive(int(pid_text)):
                continue
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

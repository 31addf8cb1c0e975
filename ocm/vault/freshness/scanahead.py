"""The freshness scan of a one-shot command, taken ahead by a child process while the
command is still importing: GNU `find` lists every regular file's path, mtime and size (one
`stat` each; `signatures` keeps the notes `Vault.note_signatures` records, so a vault with no
other files in its note folders lists what it always did) into an anonymous memory file, on the
other core and without Python's per-`stat` overhead (at 100k notes ~1.5 against ~2.7 µs a
note here). Where `find` is not GNU's, or memory files do not exist (not Linux), nothing is
started and the index scans in-process as before.

The listing is raw bytes: an index that knows the listing it last found matching its
manifest compares the two as bytes and builds no dict at all when nothing changed
(ocm/indexer/index.py)."""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import sys

from .scan import NOTE_DIRS

# path NUL mtime (seconds.fraction, ns resolution) NUL size NUL, for each note
_FORMAT = "%p\\0%T@\\0%s\\0"
# `find` run in the vault's folder by a shell (posix_spawn has no working folder of its own;
# an absolute folder, which `cd` finds without $CDPATH and does not print).
_SHELL = "/bin/sh"
_IN_ROOT = 'cd -- "$0" && exec find "$@"'
_SIGKILL = 9  # (POSIX; the `signal` module's enums are not imported for it)


class _Find:
    """A `find` started by `start`, writing to the memory file `fd`: its exit code once it
    ended and was waited for (`subprocess.Popen`'s `poll`, `wait` and `kill`, without
    importing subprocess: a process that starts `find` and waits paid ~11 ms more CPU
    through Popen than through `posix_spawn` and a shell, at load 20)."""

    __slots__ = ("code", "fd", "pid")

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self.code: int | None = None

    def poll(self) -> int | None:
        if self.code is None:
            self._waited(os.WNOHANG)
        return self.code

    def wait(self) -> int:
        while self.code is None:
            self._waited(0)
        return self.code

    def kill(self) -> None:
        if self.poll() is None:  # (a process waited for is never signalled: its pid is free)
            with contextlib.suppress(ProcessLookupError):  # ended meanwhile
                os.kill(self.pid, _SIGKILL)
            self.wait()

    def _waited(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): not known to be whole
            self.code = -1
            return
        if pid:
            self.code = os.waitstatus_to_exitcode(status)


_AHEAD: dict[str, _Find] = {}


def start(root: str) -> None:
    """Start listing the notes under `root` (once; a no-op where unavailable)."""
    if root in _AHEAD or not hasattr(os, "memfd_create"):
        return
    folders = []
    for name in NOTE_DIRS:
        try:
            if stat.S_ISDIR(os.lstat(os.path.join(root, name)).st_mode):  # never a link
                folders.append(name)
        except OSError:
            continue
    if not folders:
        return
    fd = os.memfd_create("ocm-scan", os.MFD_CLOEXEC)
    try:
        # Dot-folders and links are skipped, as in the scan; every regular file is listed
        # and `signatures` keeps the notes: find's `-name` on each of 100k files cost ~3.5k
        # instructions (fnmatch), 40 % of its user time, on the search's critical path
        # (-type f first: `-type d -name .* -prune -o -type f` costs ~1.4k more a file).
        # No `find` (the shell's exit code 127) is a failed listing, as an unreadable folder.
        pid = os.posix_spawn(
            _SHELL, ["sh", "-c", _IN_ROOT, os.path.abspath(root), *folders, "-mindepth", "1",
                     "-type", "f", "-printf", _FORMAT, "-o", "-type", "d", "-name", ".*",
                     "-prune"],
            {**os.environ, "LC_ALL": "C"},
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                          (os.POSIX_SPAWN_DUP2, fd, 1),
                          (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError:  # no shell
        os.close(fd)
        return
    _AHEAD[root] = _Find(pid, fd)


def started(root: str) -> bool:
    """Whether a listing of `root` is under way or done, not failed (a `find` without
    `-printf` stops at once), and not yet taken."""
    got = _AHEAD.get(root)
    return got is not None and got.poll() in (None, 0)


def take(root: str, expected: bytes | None = None) -> bytes | None:
    """The listing started for `root`, once; None when none was started or `find` failed
    (an unreadable folder, a `find` without `-printf`). When it is byte for byte
    `expected`, `expected` itself is returned: compared where `find` wrote it, never copied
    (at 100k notes the listing is 8.7 MB, and a search that waited for it pays each ms)."""
    got = _AHEAD.pop(root, None)
    if got is None:
        return None
    fd = got.fd
    try:
        if got.wait() != 0:
            return None
        if expected is not None and os.fstat(fd).st_size == len(expected) and (
                not expected or _holds(fd, expected)):
            return expected
        with open(fd, "rb", closefd=False) as listing:
            listing.seek(0)
            return listing.read()
    finally:
        os.close(fd)


def _holds(fd: int, expected: bytes) -> bool:
    """Whether the file `fd`, as long as `expected`, holds those bytes (one `memcmp`)."""
    with (mmap.mmap(fd, len(expected), prot=mmap.PROT_READ,
                    flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)) as mapped,
          memoryview(mapped) as view):
        return expected.startswith(view)


def discard(root: str) -> None:
    """Drop a listing started for `root` and not taken."""
    got = _AHEAD.pop(root, None)
    if got is not None:
        got.kill()
        os.close(got.fd)


def signatures(listing: bytes) -> dict[str, list[int]] | None:
    """relpath -> [mtime_ns, size], as `Vault.note_signatures`; None for a listing this
    cannot read exactly (a time before 1970, a fraction not to the nanosecond)."""
    fields = listing.decode(sys.getfilesystemencoding(), "surrogateescape").split("\0")
    if len(fields) % 3 != 1:
        return None
    out: dict[str, list[int]] = {}
    for at in range(0, len(fields) - 1, 3):
        path = fields[at]
        if not path.endswith(".md") or path[path.rfind("/") + 1] == ".":
            continue  # not a note: another file, a dot-file (`.ocm-tmp-*`, an editor's swap)
        seconds, dot, fraction = fields[at + 1].partition(".")
        if not (seconds.isdigit() and dot and len(fraction) >= 9 and fraction.isdigit()):
            return None
        out[path] = [int(seconds) * 1_000_000_000 + int(fraction[:9]), int(fields[at + 2])]
    return out

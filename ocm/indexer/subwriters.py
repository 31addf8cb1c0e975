"""Sub-writers of a multi-process rebuild: forked processes, each indexing its share of
the notes (reading and parsing them too) into a segment of its own, that die with the
process that forked them.

A sub-writer killed with its parent cannot hold the caller's stdout pipe open (`kill -9` of
`ocm rebuild-index --json` must reach EOF for a script reading it): on Linux each process
forked after `bind_forks_to_this_process()` asks the kernel to SIGKILL it when its parent
dies (`prctl(PR_SET_PDEATHSIG)`); where that cannot be promised the caller does not fork.

A :class:`SubWriter` runs one function in a forked child and hands back what it returned
(pickled through a pipe), and counts the ticks the child sends as it goes (progress).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

_PR_SET_PDEATHSIG = 1
# What a sub-writer sends its parent: a tick per step of progress, then one of these
# followed by the pickled result or the text of the error it ended on.
_TICK, _RESULT, _ERROR = b".", b"R", b"E"
# The pid that is about to fork, set in the parent just before each fork.
_forker = 0


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _before_fork() -> None:
    global _forker
    _forker = os.getpid()


def _after_fork_in_child() -> None:
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    # The parent may have died between fork and prctl: then no signal will ever come.
    if os.getppid() != _forker:
        os._exit(1)


@functools.cache
def _register() -> None:
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def bind_forks_to_this_process() -> bool:
    """From now on every process forked from this one is killed when its parent dies.
    False where the platform cannot promise that: the caller must then not fork."""
    if _prctl() is None:
        return False
    _register()
    return True


@functools.cache
def _malloc_trim() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim if sys.platform.startswith("linux") else None
    except (OSError, AttributeError):  # not glibc
        return None


def give_back_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`): what a batch
    of a build freed stays resident otherwise (the heap's free chunks sit among live
    ones), grows the builder by each batch, and is forked into the next sub-writers."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class SubWriterError(RuntimeError):
    """A sub-writer failed (its error's text) or died."""


class SubWriter:
    """`work(tick)` run in a forked child (call only after `bind_forks_to_this_process()`
    said True, from a single-threaded process); `result()` waits for what it returned."""

    def __init__(self, work: Callable[[Callable[[], None]], Any]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read)
            _run_child(work, write)
        os.close(write)
        os.set_blocking(read, False)
        self.pid = pid
        self._pipe = read
        self._data = bytearray()
        self._ticks = 0
        self._ended = False

    def ticks(self) -> int:
        """How many ticks the child sent so far (reads what is there, never waits)."""
        if not self._ended:
            try:
                while chunk := os.read(self._pipe, 65536):
                    self._take(chunk)
                else:
                    self._ended = True
            except BlockingIOError:
                pass
        return self._ticks

    def _take(self, chunk: bytes) -> None:
        if not self._data:  # ticks come first, then the one message
            rest = chunk.lstrip(_TICK)
            self._ticks += len(chunk) - len(rest)
            chunk = rest
        self._data += chunk

    def _close(self) -> None:
        if self._pipe >= 0:
            os.close(self._pipe)
            self._pipe = -1
        self._ended = True

    def result(self) -> Any:
        """Wait for the child to end; what `work` returned, or SubWriterError."""
        try:
            if not self._ended:
                os.set_blocking(self._pipe, True)
                while chunk := os.read(self._pipe, 1 << 20):
                    self._take(chunk)
        finally:
            self._close()
        _, status = os.waitpid(self.pid, 0)
        data, self._data = self._data, bytearray()
        kind = bytes(data[:1])
        if kind == _RESULT and os.waitstatus_to_exitcode(status) == 0:
            with memoryview(data) as view:  # (no copy of a batch's rows)
                return pickle.loads(view[1:])
        if kind == _ERROR:
            raise SubWriterError(data[1:].decode("utf-8", "replace"))
        raise SubWriterError(f"a sub-writer died (exit status "
                             f"{os.waitstatus_to_exitcode(status)})")

    def kill(self) -> None:
        """End the child (when its parent gives up on the build) and reap it."""
        self._close()
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _run_child(work: Callable[[Callable[[], None]], Any], pipe: int) -> NoReturn:
    code = 1
    try:
        result = work(lambda: _write_all(pipe, _TICK))
        _write_all(pipe, _RESULT)
        # Pickled into the pipe a frame at a time: never the whole pickle in memory (a
        # batch's rows, ~1 KB a note), let alone a second copy with _RESULT before it.
        with open(pipe, "wb", buffering=1 << 16, closefd=False) as out:
            pickle.dump(result, out, pickle.HIGHEST_PROTOCOL)
        code = 0
    except BaseException:  # noqa: BLE001 - the parent raises it
        with contextlib.suppress(BaseException):  # else the parent reports a death
            _write_all(pipe, _ERROR + traceback.format_exc().encode("utf-8", "replace"))
    finally:
        os._exit(code)


def _write_all(pipe: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(pipe, view):]

"""Sub-writers of a multi-process rebuild die with the process that forked them.

Whoosh's multi-process writer forks sub-writers that wait on a queue for their next batch.
If the parent is killed (`kill -9` of `ocm rebuild-index`), nothing ever arrives: they wait
forever, holding the caller's stdout pipe open, so a script reading `--json` never sees EOF.
On Linux each process forked after `bind_forks_to_this_process()` asks the kernel to SIGKILL
it when its parent dies (`prctl(PR_SET_PDEATHSIG)`); where that cannot be promised the
caller does not fork at all.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
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

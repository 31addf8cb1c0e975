"""The exit of a one-shot `ocm` process whose answer is out (ocm/cli/lean.py's search,
`ocm rebuild-index`): without the interpreter's teardown."""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def exit_done() -> NoReturn:
    """Exit 0 once a one-shot command has printed its answer (a search, `rebuild-index`),
    without the interpreter's teardown: freeing the project searched (its index's readers
    closed one by one, ~200 files at 100k notes), what a build left, and every module and
    object the imports made (whoosh, numpy) cost ~80 ms of CPU or more, after the answer and
    before the caller sees the process end. The exit
    handlers still run (unsaved embeddings are written, logs flushed) and the output is
    flushed. The full exit is kept where anything else could still be owed: a thread that
    is not a daemon still running, or output streams that are not the process's own (a
    test runs `main` in its process)."""
    import atexit
    import threading

    streams = (sys.stdout, sys.stderr)
    if streams != (sys.__stdout__, sys.__stderr__) or any(
            thread is not threading.main_thread() and not thread.daemon
            for thread in threading.enumerate()):
        sys.exit(0)
    atexit._run_exitfuncs()
    try:
        for stream in streams:
            if stream is not None:
                stream.flush()
    except OSError:  # (a closed pipe) reported as the full exit reports it
        sys.exit(0)
    os._exit(0)

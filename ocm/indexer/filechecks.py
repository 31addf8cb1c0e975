"""Checks on the index folder's own files (issue #31).

* `sweep_partial`: a write that failed (a full disk) can leave Whoosh's temporary table of
  contents (`_MAIN_<gen>.toc.<time>`, renamed into place only once whole) beside the index;
  it is never read, only removed.
"""

from __future__ import annotations

import contextlib
import os
import re

_PARTIAL_TOC = re.compile(r"^_\w+_\d+\.toc\.\d+(\.\d+)?$")


def sweep_partial(folder: str | os.PathLike[str]) -> int:
    """Remove half-written tables of contents left in `folder`; returns how many went.
    The caller holds the index lock (no writer is between its write and its rename)."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if _PARTIAL_TOC.match(name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
                removed += 1
    return removed

"""What was already uncommitted when a session started, so it is not credited to it.

At session start the hook records `git status` (every modified, added, deleted or
untracked path, with its size and mtime). At close, the files-from-git fallback leaves out
each path that is still exactly as it was then: dirty before the session (what `ocm init`
wrote among it) and untouched by it. A path the session changed again is credited.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..atomic import atomic_write_text

FOLDER = "snapshots"


def _path(vault_root: Path, note_id: str) -> Path:
    return vault_root / ".hooks" / FOLDER / f"{note_id}.json"


def _stat(root: Path, rel: str) -> list[int] | None:
    try:
        st = os.stat(root / rel)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def dirty(root: Path) -> list[str] | None:
    """Uncommitted paths (relative, POSIX); None outside a git work tree."""
    import subprocess  # (here: a search, which imports this module, starts no git)

    try:
        out = subprocess.run(
            ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
            cwd=root, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return [entry[3:].decode("utf-8", "replace") for entry in out.stdout.split(b"\0")
            if len(entry) > 3]


def take(vault_root: Path, root: Path, note_id: str) -> bool:
    """Record the session's starting state once (a resumed session keeps its first)."""
    path = _path(vault_root, note_id)
    if path.exists():
        return False
    paths = dirty(root)
    if paths is None:
        return False
    state = {rel: _stat(root, rel) for rel in paths}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(state, ensure_ascii=False))
    return True


def unchanged(vault_root: Path, root: Path, note_id: str) -> set[str]:
    """Paths dirty at the session's start and still exactly as they were."""
    try:
        state = json.loads(_path(vault_root, note_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(state, dict):
        return set()
    return {rel for rel, sig in state.items() if _stat(root, rel) == sig}


def drop(vault_root: Path, note_id: str) -> None:
    with contextlib.suppress(OSError):
        _path(vault_root, note_id).unlink()

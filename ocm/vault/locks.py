"""The names of a vault's cross-process locks: files under `<vault>/.locks`, taken with
`atomic.locked`, each named for the one thing it guards."""

from __future__ import annotations

from pathlib import Path

MEMORIES = "memories"  # the memory records together: new ids, keys, supersede chains
SESSIONS_CREATE = "sessions-create"  # a new session's file name


def session(stem: str) -> str:
    """One session note's changes, held around its read-modify-write and rename."""
    return f"session-{stem}"


def note(path: Path) -> str:
    """One note's read-modify-write (`Vault._edit`)."""
    return f"note-{path.stem}"

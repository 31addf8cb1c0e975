"""The names of a vault's cross-process locks: files under `<vault>/.locks`, taken with
`atomic.locked`, each named for the one thing it guards."""

from __future__ import annotations

from pathlib import Path

DIRNAME = ".locks"  # under a vault, or under the user's ocm home (the registry's)
MEMORIES = "memories"  # the memory records together: new ids, keys, supersede chains
SESSIONS_CREATE = "sessions-create"  # a new session's file name
QUIET = "quiet"  # the hooks' record of what was already said (ocm/agents/quiet.py)
REGISTRY = "registry"  # the user's list of project vaults (ocm/vault/projects.py)


def folder(root: Path) -> Path:
    """Where the locks of the vault (or ocm home) at `root` live."""
    return root / DIRNAME


def session(stem: str) -> str:
    """One session note's changes, held around its read-modify-write and rename."""
    return f"session-{stem}"


def note(path: Path) -> str:
    """One note's read-modify-write (`Vault._edit`)."""
    return f"note-{path.stem}"


def transcript(session_id: str) -> str:
    """One transcript note's fold of what its host's transcript file gained."""
    return f"transcript-{session_id}"

"""Where a project's vault and the user's vault live, and the registry of project vaults."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .atomic import atomic_write_text, locked
from .clock import format_timestamp, now

VAULT_DIRNAME = ".openCodeMemory"


def find_project_root(start: Path) -> Path:
    """The repository's main work tree (via git's *common* dir, so worktrees share one
    vault); without git, `start` itself."""
    start = start.resolve()
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=start, capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return start
    if out.returncode != 0 or not out.stdout.strip():
        return start
    common = Path(out.stdout.strip())
    if common.name == ".git":
        return common.parent
    # A bare repository or a separate git dir: fall back to the current work tree's top.
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True, text=True,
        timeout=10, check=False,
    )
    return Path(top.stdout.strip()) if top.returncode == 0 and top.stdout.strip() else start


def user_home() -> Path:
    """The user-scope vault: `$OCM_HOME`, default `~/.openCodeMemory`."""
    env = os.environ.get("OCM_HOME")
    return Path(env).expanduser() if env else Path.home() / VAULT_DIRNAME


def registry_path() -> Path:
    return user_home() / "registry.json"


def read_registry() -> list[dict[str, str]]:
    try:
        data = json.loads(registry_path().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []
    return [e for e in data if isinstance(e, dict) and isinstance(e.get("vault"), str)] if (
        isinstance(data, list)) else []


def register_vault(project: str, root: Path, vault: Path) -> bool:
    """Add a project vault to the registry; False if it was already there."""
    home = user_home()
    with locked(home / ".locks", "registry"):
        entries = read_registry()
        if any(Path(e["vault"]) == vault for e in entries):
            return False
        entries.append({
            "project": project, "project_root": str(root), "vault": str(vault),
            "registered_at": format_timestamp(now()),
        })
        atomic_write_text(registry_path(), json.dumps(entries, indent=2) + "\n")
    return True


def write_registry(entries: list[dict[str, str]]) -> None:
    with locked(user_home() / ".locks", "registry"):
        atomic_write_text(registry_path(), json.dumps(entries, indent=2) + "\n")

"""Where a project's vault and the user's vault live (their registry: ocm/vault/projects.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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

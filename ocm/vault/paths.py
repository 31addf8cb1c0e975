"""Where a project's vault and the user's vault live (their registry: ocm/vault/projects.py)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InvalidInput

VAULT_DIRNAME = ".openCodeMemory"
# A vault's index folder (`Vault.index_dir`), and the manifest there that says an index is
# in it (ocm/indexer/manifest.py; named here for a fresh search to look for before it
# imports the indexer: ocm/cli/searching.py).
INDEX_DIRNAME = ".index"
INDEX_MANIFEST = "manifest.json"


def locate(vault: str | Path | None = None,
           cwd: str | Path | None = None) -> tuple[Path, Path, bool]:
    """(vault folder, project root, whether the vault was named) for `Project.open`: the
    vault named by `vault` or `$OCM_VAULT`, or the one of the project found from `cwd`
    (`$OCM_PROJECT_DIR`, the working folder) through git."""
    start = Path(cwd or os.environ.get("OCM_PROJECT_DIR") or os.getcwd())
    chosen = vault or os.environ.get("OCM_VAULT")
    if chosen:
        vault_dir = Path(chosen).expanduser().resolve()
        if vault_dir.exists() and not vault_dir.is_dir():
            raise InvalidInput(f"vault {vault_dir} exists and is not a folder")
        root = vault_dir.parent if vault_dir.name == VAULT_DIRNAME else vault_dir
        if not start.is_dir():
            raise InvalidInput(f"project folder {start} does not exist")
        return vault_dir, root, True
    if not start.is_dir():
        raise InvalidInput(f"project folder {start} does not exist")
    root = find_project_root(start)
    return root / VAULT_DIRNAME, root, False


def find_project_root(start: Path) -> Path:
    """The repository's main work tree (via git's *common* dir, so worktrees share one
    vault); without git, `start` itself."""
    # (Imported here: a search of a named vault starts no process through it.)
    import subprocess

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

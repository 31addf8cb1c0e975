"""The install manifest (`.openCodeMemory/.install-manifest.json`: what `ocm init --agents`
wrote on one machine, with its absolute paths) stays out of git in a team vault: in a new
team vault, beside a project `.gitignore` that already exists, and in a team vault that
committed it before its `.gitignore` named it (real git repositories, the real `ocm`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import git

OCM = str(Path(sys.executable).parent / "ocm")
MANIFEST = ".openCodeMemory/.install-manifest.json"


def ocm(cwd: Path, *args: str) -> str:
    env = {**os.environ, "OCM_HOME": str(cwd.parent / "ocm-home")}
    done = subprocess.run([OCM, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def project(path: Path, ignore: str | None) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Ann")
    git(path, "config", "user.email", "ann@example.com")
    (path / "README.md").write_text("# demo\n")
    if ignore is not None:
        (path / ".gitignore").write_text(ignore)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def status(path: Path) -> str:
    return git(path, "status", "--porcelain", "--untracked-files=all")


def test_new_team_vault_beside_an_existing_gitignore(tmp_path: Path) -> None:
    repo = project(tmp_path / "shop", "node_modules/\n*.log\n")
    ocm(repo, "init", "--team", "--agents", "claude-code")
    assert (repo / MANIFEST).is_file()
    assert MANIFEST not in status(repo)
    git(repo, "add", "-A")
    assert MANIFEST not in git(repo, "ls-files")
    assert (repo / ".gitignore").read_text() == "node_modules/\n*.log\n"  # kept as it was


def test_a_committed_manifest_is_taken_out_of_git(tmp_path: Path) -> None:
    """A team vault from before the ignore line, committed with its manifest: the next
    `ocm init` adds the line and untracks the file (kept on disk); an uninstall after that
    commit shows no deleted manifest."""
    repo = project(tmp_path / "shop", "node_modules/\n")
    ocm(repo, "init", "--team", "--agents", "claude-code")
    ignore = repo / ".openCodeMemory" / ".gitignore"
    ignore.write_text("".join(ln for ln in ignore.read_text().splitlines(keepends=True)
                              if ".install-manifest.json" not in ln))
    git(repo, "add", "-A")
    git(repo, "add", "-f", MANIFEST)
    git(repo, "commit", "-q", "-m", "team vault, older ocm")
    assert MANIFEST in git(repo, "ls-files")
    out = ocm(repo, "init", "--agents", "claude-code")
    assert ".install-manifest.json" in ignore.read_text().splitlines()
    assert f"D  {MANIFEST}" in status(repo).splitlines()  # staged: out of the index
    assert (repo / MANIFEST).is_file() and "no longer tracked" in out
    git(repo, "commit", "-q", "-am", "ocm: manifest stays on each machine")
    ocm(repo, "init", "--agents", "claude-code,codex")  # the manifest changes
    assert MANIFEST not in status(repo)
    ocm(repo, "uninstall", "--yes")
    assert MANIFEST not in status(repo)
    ocm(repo, "init", "--agents", "claude-code")  # nothing left to untrack: no change
    assert MANIFEST not in status(repo)

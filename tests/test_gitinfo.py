"""HEAD's commit read from the files of `.git` agrees with GitPython's answer in each layout
git leaves on disk (real repositories in tmp dirs); GitPython answers what the files cannot."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import git
import pytest

from ocm.vault.git import info as gitinfo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def run(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t",
                           *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo: Path, message: str) -> str:
    run(repo, "commit", "-q", "--allow-empty", "-m", message)
    return run(repo, "rev-parse", "HEAD")[:12]


def gitpython_head(root: Path) -> str:
    return git.Repo(root).head.commit.hexsha[:12]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    run(root, "init", "-q", "-b", "main")
    return root


def test_no_commits_yet_is_none(repo: Path) -> None:
    assert gitinfo._head_from_files(repo) is None
    assert gitinfo.head_sha(repo) is None


def test_loose_ref_then_new_commit(repo: Path) -> None:
    first = commit(repo, "one")
    assert gitinfo._head_from_files(repo) == first == gitpython_head(repo)
    second = commit(repo, "two")
    assert second != first
    assert gitinfo.head_sha(repo) == second == gitpython_head(repo)


def test_packed_ref(repo: Path) -> None:
    sha = commit(repo, "one")
    run(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert gitinfo._head_from_files(repo) == sha == gitpython_head(repo)


def test_detached_head(repo: Path) -> None:
    first = commit(repo, "one")
    commit(repo, "two")
    run(repo, "checkout", "-q", "--detach", first)
    assert gitinfo._head_from_files(repo) == first == gitpython_head(repo)


def test_linked_worktree(repo: Path, tmp_path: Path) -> None:
    commit(repo, "one")
    other = tmp_path / "other"
    run(repo, "worktree", "add", "-q", "-b", "side", str(other))
    sha = commit(other, "on side")
    assert (other / ".git").is_file()
    assert gitinfo._head_from_files(other) == sha == gitpython_head(other)
    assert gitinfo._head_from_files(repo) != sha


def test_not_a_repository(tmp_path: Path) -> None:
    assert gitinfo.head_sha(tmp_path) is None

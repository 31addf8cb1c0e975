"""The few git facts a session needs, read with GitPython (imported only when needed)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_SHA_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass
class DiffStat:
    files: int
    insertions: int
    deletions: int
    untracked: int = 0

    def line(self) -> str:
        noun = "file" if self.files == 1 else "files"
        text = f"{self.files} {noun} changed, +{self.insertions} / -{self.deletions} lines"
        if self.untracked:
            text += f"; {self.untracked} new untracked"
        return text + "."


def _repo(root: Path):  # -> git.Repo | None
    try:
        import git  # noqa: PLC0415 - 80 ms import, kept off every path that does not need it
    except ImportError:  # pragma: no cover - gitpython is a dependency
        return None
    try:
        return git.Repo(root, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError):
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _sha(text: str | None) -> str | None:
    return text[:12] if text and _SHA_RE.fullmatch(text) else None


def _head_from_files(root: Path) -> str | None:
    """HEAD's commit read from `root/.git` as git lays it out on disk (a loose or packed
    ref, a detached HEAD, a linked worktree's `gitdir:` file); None when anything else is
    found (no commits yet, another ref storage), for GitPython to answer. ~0.1 ms, where
    opening the repository with GitPython costs ~4 ms on every `remember`."""
    dot_git = root / ".git"
    git_dir = dot_git
    if dot_git.is_file():
        pointer = _read(dot_git) or ""
        if not pointer.startswith("gitdir:"):
            return None
        git_dir = root / pointer.removeprefix("gitdir:").strip()
    head = _read(git_dir / "HEAD")
    if not head or not head.startswith("ref:"):
        return _sha(head)
    ref = head.removeprefix("ref:").strip()
    common = _read(git_dir / "commondir")
    shared = git_dir / common if common else git_dir
    for base in dict.fromkeys((git_dir, shared)):
        if (found := _sha(_read(base / ref))) is not None:
            return found
    for line in (_read(shared / "packed-refs") or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return _sha(sha)
    return None


def head_sha(root: Path) -> str | None:
    fast = _head_from_files(root)
    if fast is not None:
        return fast
    repo = _repo(root)
    if repo is None:
        return None
    try:
        return repo.head.commit.hexsha[:12]
    except ValueError:  # no commits yet
        return None


def diff_since(root: Path, sha: str, skip: Callable[[str], bool] | None = None,
               ) -> tuple[DiffStat, dict[str, str]] | None:
    """Stat and net file changes from `sha` to the work tree (committed or not), leaving
    out the paths `skip` names (not the session's, or ocm's own)."""
    skip = skip or (lambda path: False)
    repo = _repo(root)
    if repo is None:
        return None
    import git  # noqa: PLC0415

    try:
        numstat = repo.git.diff("--numstat", sha)
        name_status = repo.git.diff("--name-status", "--no-renames", sha)
        untracked = repo.untracked_files
    except git.GitCommandError:
        return None
    insertions = deletions = 0
    paths: set[str] = set()
    for row in numstat.splitlines():
        added, removed, path = (row.split("\t", 2) + ["", "", ""])[:3]
        if skip(path):
            continue
        insertions += int(added) if added.isdigit() else 0
        deletions += int(removed) if removed.isdigit() else 0
        paths.add(path)
    changes: dict[str, str] = {}
    for row in name_status.splitlines():
        status, _, path = row.partition("\t")
        if skip(path):
            continue
        changes[path] = {"A": "created", "D": "deleted"}.get(status[:1], "modified")
    # Untracked files count as created, but not in the stat: git's own stat leaves them out.
    fresh = [p for p in untracked if not p.startswith(".openCodeMemory/") and not skip(p)]
    for path in fresh:
        changes.setdefault(path, "created")
    return DiffStat(len(paths), insertions, deletions, len(fresh)), changes


def author(root: Path) -> str | None:
    """Who is writing, as git would record it: `Name <email>` (git's own resolution of
    user.name/user.email and the GIT_AUTHOR_* variables); None outside git or unset."""
    import subprocess

    try:
        out = subprocess.run(["git", "var", "GIT_AUTHOR_IDENT"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    ident = out.stdout.strip()
    if out.returncode != 0 or ">" not in ident:
        return None
    return ident[: ident.rindex(">") + 1]

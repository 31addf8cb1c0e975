"""Git-aware staleness: has a memory's code changed since the memory was written?

A memory records the commit it was written at (`git_sha`) and the files it is about
(`files`). When any of those files differs between that commit and the work tree (committed
or not, deleted included) the memory is *stale*: still shown, but flagged "verify: src/x.py
changed since this was written". Staleness is derived at read time and never written to the
note. Whoosh-free (the hook path may use it); git is asked once per distinct `git_sha` per
HEAD, and the answer is cached for a few seconds within a process. It runs `git` itself
(`rev-parse`, `diff --name-only`: ~5 ms each) rather than through GitPython, as the rest of
ocm does: GitPython's import and repository set-up cost ~150 ms, which every `ocm search`
whose results hold a memory about files would pay.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from ..links import unlink

CACHE_SECONDS = 5.0
GIT_TIMEOUT_S = 10.0
_SHA_CHARS = frozenset("0123456789abcdefABCDEF")


class StalenessChecker:
    """One project root's answers, cached per (HEAD, sha) for `CACHE_SECONDS`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._head: tuple[float, str | None] | None = None
        self._changed: dict[tuple[str | None, str], tuple[float, frozenset[str] | None]] = {}
        self._lock = threading.Lock()
        self.git_calls = 0  # for tests: how many times git was asked

    def _git(self, *args: str) -> str | None:
        """git's output, or None when it fails (no repository, unknown commit, no git)."""
        import subprocess  # (here: most searches ask git nothing)

        self.git_calls += 1
        # The project root itself must be the repository (as GitPython's `Repo(root)` in
        # git/info.py): git must not find one in a folder above it, such as a dotfiles repo.
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(self.root).parent)}
        try:
            done = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True,
                                  text=True, timeout=GIT_TIMEOUT_S, check=False, env=env)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def _current_head(self) -> str | None:
        clock = time.monotonic()
        if self._head is not None and clock - self._head[0] < CACHE_SECONDS:
            return self._head[1]
        out = self._git("rev-parse", "--verify", "--quiet", "HEAD")
        head = (out or "").strip() or None
        self._head = (clock, head)
        return head

    def changed_since(self, sha: str) -> frozenset[str] | None:
        """Repo-relative paths that differ between `sha` and the work tree; None when git
        cannot say (no repository, unknown commit)."""
        sha = str(sha or "").strip()
        if not sha or len(sha) < 4 or not set(sha) <= _SHA_CHARS:
            return None
        with self._lock:
            head = self._current_head()
            if head is None:
                return None
            key = (head, sha)
            clock = time.monotonic()
            cached = self._changed.get(key)
            if cached is not None and clock - cached[0] < CACHE_SECONDS:
                return cached[1]
            out = self._git("diff", "--name-only", "--no-renames", sha, "--")
            found = None if out is None else frozenset(
                line.strip() for line in out.splitlines() if line.strip())
            self._changed[key] = (clock, found)
            return found

    def changed_files(self, sha: object, files: Iterable[object]) -> list[str]:
        """Which of `files` changed since `sha` (in the order given); [] if none or unknown."""
        wanted = [str(f).strip() for f in files or () if f and str(f).strip()]
        if not wanted or not sha:
            return []
        changed = self.changed_since(str(sha))
        if not changed:
            return []
        out: list[str] = []
        for path in wanted:
            clean = path.removeprefix("./").strip("/")
            if clean in changed or any(c.startswith(clean + "/") for c in changed):
                out.append(path)
        return out


_CHECKERS: dict[Path, StalenessChecker] = {}
_CHECKERS_LOCK = threading.Lock()


def checker(root: Path) -> StalenessChecker:
    """The process-wide checker for a project root."""
    key = Path(root).resolve()
    with _CHECKERS_LOCK:
        if key not in _CHECKERS:
            _CHECKERS[key] = StalenessChecker(key)
        return _CHECKERS[key]


def verify_line(changed: list[str], limit: int = 3) -> str:
    """'verify: src/x.py changed since this was written'."""
    shown = ", ".join(changed[:limit]) + (f" (+{len(changed) - limit} more)"
                                          if len(changed) > limit else "")
    return f"verify: {shown} changed since this was written"


def mark_stale(hits: Iterable, root: Path) -> None:
    """Give active memory hits (search results or brief items) whose files changed since
    their `git_sha` a meta with `changed_files`; the notes and the metas the hits had are
    not touched."""
    for hit in hits:
        meta = hit.meta
        if hit.kind != "memory" or hit.status != "active" or not meta.get("files") or (
                not meta.get("git_sha")):
            continue
        changed = checker(root).changed_files(meta["git_sha"], meta["files"])
        if changed:  # a new dict: a search hit's meta is the index cache's own (search._hit)
            hit.meta = {**meta, "changed_files": changed}


def memory_staleness(root: Path, frontmatter: dict) -> list[str]:
    """Changed files of a memory given its frontmatter (active project records only)."""
    if (frontmatter.get("status") or "active") != "active":
        return []
    files = frontmatter.get("files")
    if isinstance(files, str):
        files = [files]
    return checker(root).changed_files(unlink(frontmatter.get("git_sha") or ""), files or [])

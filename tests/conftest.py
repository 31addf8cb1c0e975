"""Shared fixtures: real temp git repos, a private OCM_HOME, vault snapshots."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from ocm.project import Project

VENV_BIN = Path(sys.executable).parent

# No per-example time limit for property tests: speed is measured under bench/, and a busy
# machine made Hypothesis's default 200 ms deadline fail a correct example now and then.
settings.register_profile("ocm", deadline=None)
settings.load_profile("ocm")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("# demo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.fixture(autouse=True)
def ocm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user vault and registry; the real home is never touched."""
    home = tmp_path / "ocm-home"
    monkeypatch.setenv("OCM_HOME", str(home))
    for name in ("OCM_VAULT", "OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "OCM_NOW",
                 "OCM_SEMANTIC"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search without meaning (OCM_SEMANTIC=0), for the tests of BM25F's own scores."""
    monkeypatch.setenv("OCM_SEMANTIC", "0")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj")


@pytest.fixture
def project(repo: Path) -> Project:
    proj = Project.open(cwd=repo)
    proj.init()
    return proj


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every note-bearing file's bytes (derived index and lock files excluded)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and not rel.startswith((".index/", ".locks/")):
            out[rel] = path.read_bytes()
    return out


@pytest.fixture
def run_ocm(repo: Path, ocm_home: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The installed `ocm` console script in a fresh process, inside the repo."""

    def run(*args: str, cwd: Path | None = None, input: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "OCM_HOME": str(ocm_home)}
        done = subprocess.run([str(VENV_BIN / "ocm"), *args], cwd=cwd or repo, env=env,
                              capture_output=True, text=True, input=input, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"ocm {' '.join(args)} failed: {done.stderr}")
        return done

    return run

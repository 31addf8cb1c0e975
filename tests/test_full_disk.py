"""A full disk (a real, small tmpfs): CLI writes answer in one line and exit 1, a search
that must rebuild leaves no half-written index file behind, nothing is lost once space is
freed. Skipped where mounting is refused (not root, a container without CAP_SYS_ADMIN)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(where)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write until the file system has no byte left (large blocks, then single ones)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for block in (1 << 16, 512, 1):
            while True:
                try:
                    os.write(fd, b"\0" * block)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def one_line(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "No space left" in done.stderr


def test_full_disk_one_line_no_leftovers_nothing_lost(tmp_path: Path, disk: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home", HOME=str(tmp_path / "home"))
    repo = h.make_repo(disk / "proj")
    assert h.ocm(["init", "--agents", "none"], env, repo).returncode == 0
    kept = h.ocm(["remember", "Pool size is 10 connections", "--type", "gotcha"], env, repo)
    assert kept.returncode == 0, kept.stderr
    vault = repo / ".openCodeMemory"
    shutil.rmtree(vault / ".index")
    filler = fill(disk)
    one_line(h.ocm(["remember", "Retry with backoff", "--type", "gotcha"], env, repo))
    one_line(h.ocm(["checkpoint", "--tool", "codex", "--goal", "Fill the disk"], env, repo))
    searched = h.ocm(["search", "pool"], env, repo)
    assert "Traceback" not in searched.stderr, searched.stderr
    assert searched.returncode in (0, 1)
    if searched.returncode == 1:
        one_line(searched)
    leftovers = [p.name for p in (vault / ".index").rglob("*")
                 if ".toc." in p.name or p.name.startswith(".")] if (
        vault / ".index").is_dir() else []
    assert leftovers == []
    os.unlink(filler)
    found = h.ocm(["search", "pool", "--json"], env, repo)
    assert found.returncode == 0, found.stderr
    assert "Pool size is 10" in found.stdout
    again = h.ocm(["remember", "Retry with backoff", "--type", "gotcha"], env, repo)
    assert again.returncode == 0, again.stderr

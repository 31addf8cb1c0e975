"""A merge driver that dies before it answers (kill -9, out of memory) or is missing (a stale
`ocm` path after ocm moved) never drops a side silently: the note keeps both sides with
conflict markers, and `ocm status`, `ocm doctor` and `ocm team resolve` (no path) name it
from git's index. Real clones of one bare repository, real `git pull`s."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ocm.vault.markdown import Document
from ocm.vault.team.mode import register_driver

from .conftest import git
from .test_team import ocm, sync, team  # noqa: F401 - `team` is a fixture


@pytest.mark.parametrize("driver", ["killed", "missing"])
def test_a_dead_merge_driver_leaves_both_sides_and_every_command_names_the_note(
        team, tmp_path: Path, driver: str) -> None:  # noqa: F811
    _, ann, bob = team
    ocm(ann, "remember", "Pool size is 10", "--type", "gotcha", "--tag", "db")
    sync(ann)
    sync(bob)
    [path] = (bob / ".openCodeMemory" / "memories").rglob("*.md")
    rel = path.relative_to(bob / ".openCodeMemory").as_posix()
    note_id = path.stem
    ocm(ann, "update", note_id, "--add-tag", "from-ann", OCM_NOW="2026-11-22T09:00:00")
    sync(ann)
    ocm(bob, "update", note_id, "--add-tag", "from-bob", OCM_NOW="2026-11-23T09:00:00")
    git(bob, "commit", "-qam", "bob's tag")
    if driver == "killed":
        command = tmp_path / "dying-ocm"
        command.write_text("#!/bin/sh\nkill -9 $$\n")
        command.chmod(0o755)
    else:
        command = tmp_path / "moved" / "ocm"
    register_driver(bob, str(command))
    pulled = subprocess.run(["git", "pull", "--no-rebase", "origin", "main"], cwd=bob,
                            capture_output=True, text=True, check=False)
    assert pulled.returncode != 0  # git knows the note is not merged
    text = path.read_text()
    assert "from-ann" in text and "from-bob" in text  # neither side dropped
    assert "<<<<<<<" in text
    assert f".openCodeMemory/{rel}" in git(bob, "diff", "--name-only", "--diff-filter=U")
    status = json.loads(ocm(bob, "status", "--json").stdout)
    assert rel in status["conflicted_notes"]
    doctor = ocm(bob, "doctor", "--json", check=False)
    assert f"ocm team resolve .openCodeMemory/{rel}" in doctor.stdout
    done = ocm(bob, "team", "resolve")
    assert f"merged {rel}" in done.stdout
    tags = Document.parse(path.read_text()).frontmatter.data["tags"]
    assert {"db", "from-ann", "from-bob"} <= set(tags)
    assert not git(bob, "diff", "--name-only", "--diff-filter=U")
    assert "No notes with conflict markers" in ocm(bob, "team", "resolve").stdout


def test_unmerged_without_markers_is_named(team) -> None:  # noqa: F811
    """A note git holds unmerged whose file has no markers (what a dead driver left before
    the fallback existed): status and `team resolve` still find it in git's index."""
    _, ann, bob = team
    ocm(ann, "remember", "Pool size is 10", "--type", "gotcha")
    sync(ann)
    sync(bob)
    [path] = (bob / ".openCodeMemory" / "memories").rglob("*.md")
    rel = path.relative_to(bob / ".openCodeMemory").as_posix()
    ocm(ann, "update", path.stem, "--add-tag", "from-ann", OCM_NOW="2026-11-22T09:00:00")
    sync(ann)
    ocm(bob, "update", path.stem, "--add-tag", "from-bob", OCM_NOW="2026-11-23T09:00:00")
    git(bob, "commit", "-qam", "bob's tag")
    git(bob, "config", "merge.ocm-note.driver", "false")  # exits 1, writes nothing
    subprocess.run(["git", "pull", "--no-rebase", "origin", "main"], cwd=bob,
                   capture_output=True, check=False)
    assert "<<<<<<<" not in path.read_text() and "from-ann" not in path.read_text()
    assert rel in json.loads(ocm(bob, "status", "--json").stdout)["conflicted_notes"]
    # A driver line without the fallback (registered before it existed) is flagged.
    assert "driver is not registered" in ocm(bob, "doctor", "--json", check=False).stdout
    assert f"merged {rel}" in ocm(bob, "team", "resolve").stdout
    assert "from-ann" in path.read_text() and "from-bob" in path.read_text()

# ruff: noqa: F811 - the hook harness fixtures `env`/`repo` are parameters, read as redefinitions
"""The vault is a boundary: a linked note or folder is never read, indexed, shown, exported
or written through, `ocm doctor` lists it, imports do not follow links out of their folder,
and a write that would make a note larger than reads accept is refused. The `ocm` commands
run through the entry point in this process (harness.ocm_here): each is checked by its
output, exit code and the disk it leaves."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.boundary import MAX_NOTE_BYTES  # noqa: E402

OUTSIDE_WORD = "outsideword"


def _outside(tmp: Path) -> Path:
    target = tmp / "outside"
    target.mkdir(exist_ok=True)
    (target / "secret.md").write_text(f"---\nid: secret\ntype: gotcha\n---\n{OUTSIDE_WORD}\n\n"
                                      f"## Observations\n- [fact] {OUTSIDE_WORD} here\n")
    return target


def test_linked_notes_and_folders_are_never_read(repo: Path, env: dict[str, str],
                                                 tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    memories = repo / ".openCodeMemory" / "memories"
    (memories / "gotcha").mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "secret.md", memories / "gotcha" / "secret.md")
    os.symlink(outside, memories / "decision")
    assert h.ocm_here(["remember", "a real fact", "--type", "lesson"], env, repo).returncode == 0
    search = h.ocm_here(["search", OUTSIDE_WORD, "--json"], env, repo)
    assert search.returncode == 0 and json.loads(search.stdout) == []
    listed = h.ocm_here(["memories", "--status", "all", "--json"], env, repo)
    assert OUTSIDE_WORD not in listed.stdout and "secret" not in listed.stdout
    got = h.ocm_here(["get", "secret"], env, repo)
    assert got.returncode == 1 and OUTSIDE_WORD not in got.stdout
    exported = h.ocm_here(["export", "--format", "json"], env, repo)
    assert exported.returncode == 0 and OUTSIDE_WORD not in exported.stdout
    index = b"".join(p.read_bytes() for p in (repo / ".openCodeMemory" / ".index").rglob("*")
                     if p.is_file())
    assert OUTSIDE_WORD.encode() not in index
    doctor = h.ocm_here(["doctor", "--json"], env, repo)
    assert "memories/decision" in doctor.stdout and "memories/gotcha/secret.md" in doctor.stdout


def test_writes_never_go_through_a_linked_folder(repo: Path, env: dict[str, str],
                                                 tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    memories = repo / ".openCodeMemory" / "memories"
    memories.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, memories / "decision")
    before = sorted(p.name for p in outside.iterdir())
    out = h.ocm_here(["remember", "use Redis", "--type", "decision"], env, repo)
    assert out.returncode == 1
    assert "symbolic link" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in outside.iterdir()) == before


def test_import_does_not_follow_links_out_of_its_folder(repo: Path, env: dict[str, str],
                                                        tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    src = tmp_path / "notes"
    src.mkdir()
    (src / "real.md").write_text("# Real\n\n## Observations\n- [fact] retry storms need jitter\n")
    os.symlink(outside / "secret.md", src / "linked.md")
    os.symlink(outside, src / "linked-folder")
    out = h.ocm_here(["import", str(src), "--format", "basic-memory"], env, repo)
    assert out.returncode == 0, out.stderr
    notes = "".join(p.read_text() for p in (repo / ".openCodeMemory").rglob("*.md"))
    assert "jitter" in notes and OUTSIDE_WORD not in notes


def test_a_checkpoint_that_would_outgrow_a_note_is_refused(repo: Path, env: dict[str, str],
                                                           monkeypatch) -> None:
    import pytest

    from ocm.project import Project
    from ocm.vault.errors import InvalidInput
    from ocm.vault.sessions import CheckpointInput

    monkeypatch.setenv("OCM_HOME", env["OCM_HOME"])
    project = Project.open(cwd=repo)
    items = [f"step {i} " + "word " * 770 for i in range(190)]  # ~730 KB a call
    sid = project.checkpoint(CheckpointInput(work_completed=items[:1]), tool="claude-code").id
    with pytest.raises(InvalidInput, match="would be .* nothing was written"):
        for n in range(4):
            project.checkpoint(CheckpointInput(
                work_completed=[f"{n}-{x}" for x in items]), session_id=sid)
    [note] = h.sessions(repo)
    assert note.stat().st_size <= MAX_NOTE_BYTES
    listed = json.loads(h.ocm_here(["list", "--json"], env, repo).stdout)
    assert len(listed) == 1  # still readable, still listed

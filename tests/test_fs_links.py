"""Links planted in a vault (a teammate's commit: git checks out tracked links even in
ignored folders) are never written through: temp files are new files with random names
(O_EXCL, no-follow), the folders ocm writes into are checked not to be links, lock files
that are links are never opened. The vault root itself may be a link. `ocm` commands whose
output, exit code and disk are checked run through the entry point in this process
(harness.ocm_here); the hooks, and the search in a PID namespace, are processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ocm.vault.atomic import TEMP_PREFIX, atomic_write_text
from ocm.vault.markdown import Document

from .test_team import OCM, clone, ocm

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402

PIDS = range(1, 65)  # a PID namespace: the command run below is pid 1


def test_a_planted_temp_name_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    note = tmp_path / "vault" / "memories" / "m.md"
    note.parent.mkdir(parents=True)
    note.write_text("old\n")
    # Every name the old writer could pick, and a dangling link too.
    os.symlink(victim, note.parent / f"{TEMP_PREFIX}{os.getpid()}-m.md")
    os.symlink(tmp_path / "nowhere", note.parent / f"{TEMP_PREFIX}{os.getpid()}-x.md")
    assert atomic_write_text(note, "new\n")
    assert note.read_text() == "new\n" and not note.is_symlink()
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "nowhere").exists()


def _unshare_ok() -> bool:
    if not shutil.which("unshare"):
        return False
    done = subprocess.run(["unshare", "-pf", "--mount-proc", "true"], capture_output=True,
                          check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _unshare_ok(), reason="no PID namespaces here (unshare -p refused)")
def test_hostile_team_commit_then_a_plain_search_writes_nothing_outside(tmp_path: Path) -> None:
    """Links at every temp name a pid 1..64 writer would have used, plus two active records
    of one key (the read repairs the key: it writes), then `ocm search` as pid 1."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    ann = clone(origin, tmp_path / "ann", "Ann")
    (ann / "README.md").write_text("# demo\n")
    subprocess.run(["git", "add", "README.md"], cwd=ann, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=ann, check=True)
    ocm(ann, "init", "--team", "--agents", "none")
    ocm(ann, "remember", "Pool size is 10", "--type", "decision", "--key", "db.pool",
        OCM_NOW="2026-11-20T09:00:00")
    ocm(ann, "remember", "Pool size is 20", "--type", "decision", "--no-auto-supersede",
        OCM_NOW="2026-11-21T09:00:00")
    folder = ann / ".openCodeMemory" / "memories"
    second = next(p for p in folder.rglob("*.md") if "is 20" in p.read_text())
    second.write_text(second.read_text().replace("\nstatus: active", "\nkey: db.pool\n"
                                                  "status: active", 1))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for path in folder.rglob("*.md"):
        for pid in PIDS:
            os.symlink(victim, path.parent / f"{TEMP_PREFIX}{pid}-{path.name}")
    subprocess.run(["git", "add", "-Af", ".openCodeMemory"], cwd=ann, check=True)
    subprocess.run(["git", "commit", "-qm", "hostile"], cwd=ann, check=True)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=ann, check=True)
    bob = clone(origin, tmp_path / "bob", "Bob")  # no `ocm init`: the search reads first
    assert any(p.is_symlink() for p in (bob / ".openCodeMemory" / "memories").rglob("*"))
    done = subprocess.run(["unshare", "-pf", "--mount-proc", OCM, "search", "pool"], cwd=bob,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious\n"
    assert "had 2 active memories" in done.stderr  # the read repaired the key: it wrote
    statuses = []
    for path in (bob / ".openCodeMemory" / "memories").rglob("*.md"):
        assert path.is_symlink() == path.name.startswith(TEMP_PREFIX)
        if not path.is_symlink():
            statuses.append(Document.parse(path.read_text()).frontmatter.data["status"])
    assert sorted(statuses) == ["active", "superseded"]
    doctor = ocm(bob, "doctor", "--json", check=False)
    assert "symbolic links" in doctor.stdout


def linked_folder(tmp_path: Path, name: str) -> tuple[dict[str, str], Path, Path, Path]:
    """A project after `ocm init` whose vault folder `name` is a link to an empty folder
    outside it: (env, repo, vault, that folder)."""
    env = h.clean_env(tmp_path / "ocm-home", HOME=str(tmp_path / "home"))
    repo = h.make_repo(tmp_path / "proj")
    assert h.ocm_here(["init", "--agents", "none"], env, repo).returncode == 0
    vault = repo / ".openCodeMemory"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (vault / name).parent.mkdir(parents=True, exist_ok=True)
    if (vault / name).exists():
        shutil.rmtree(vault / name)
    os.symlink(elsewhere, vault / name)
    return env, repo, vault, elsewhere


@pytest.mark.parametrize("name", ["transcripts", ".hooks", ".locks", ".index"])
def test_cli_refuses_a_linked_written_folder_in_one_line(tmp_path: Path, name: str) -> None:
    env, repo, vault, elsewhere = linked_folder(tmp_path, name)
    before = sorted(vault.rglob("*"))
    for args in (["remember", "Pool size is 10", "--type", "gotcha"], ["search", "pool"]):
        done = h.ocm_here(args, env, repo)
        assert done.returncode == 1, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert f"{name} is a symbolic link" in done.stderr
    assert list(elsewhere.iterdir()) == []
    assert sorted(vault.rglob("*")) == before
    doctor = h.ocm_here(["doctor", "--json"], env, repo)
    assert "Traceback" not in doctor.stderr and name in doctor.stdout


@pytest.mark.hook_in_process  # what the hook writes, not its process
@pytest.mark.parametrize("name", [".hooks", ".hooks/seen", ".hooks/transcripts", ".locks"])
def test_hooks_write_nothing_through_a_linked_folder(tmp_path: Path, name: str) -> None:
    env, repo, vault, elsewhere = linked_folder(tmp_path, name)
    for fixture in ("session-start", "user-prompt-submit", "post-tool-use-write"):
        out = h.run_hook(["claude-code"], h.payload("claude-code", fixture, repo, "s-links-1"),
                         env, cwd=repo)
        assert out.returncode == 0
        assert b"is a symbolic link" in out.stderr and b"Traceback" not in out.stderr
    assert list(elsewhere.iterdir()) == []
    assert not list((vault / "sessions").glob("*.md"))


def test_a_vault_root_that_is_a_link_works(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home", HOME=str(tmp_path / "home"))
    repo = h.make_repo(tmp_path / "proj")
    real = tmp_path / "kept-elsewhere"
    real.mkdir()
    os.symlink(real, repo / ".openCodeMemory")
    assert h.ocm_here(["init", "--agents", "none"], env, repo).returncode == 0
    done = h.ocm_here(["remember", "Pool size is 10 connections", "--type", "gotcha"], env, repo)
    assert done.returncode == 0, done.stderr
    found = h.ocm_here(["search", "pool", "--json"], env, repo)
    assert found.returncode == 0, found.stderr
    assert "Pool size is 10" in found.stdout
    assert list((real / "memories").rglob("*.md"))
    status = json.loads(h.ocm_here(["status", "--json"], env, repo).stdout)
    assert status["memories"] == 1


def test_a_250_byte_note_name_can_be_updated(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home", HOME=str(tmp_path / "home"))
    repo = h.make_repo(tmp_path / "proj")
    assert h.ocm_here(["init", "--agents", "none"], env, repo).returncode == 0
    remembered = h.ocm_here(["remember", "Pool size is 10", "--type", "gotcha"], env, repo)
    assert remembered.returncode == 0
    [path] = (repo / ".openCodeMemory" / "memories").rglob("*.md")
    long = path.with_name("p" * 247 + ".md")
    path.rename(long)
    note_id = json.loads(h.ocm_here(["memories", "--json"], env, repo).stdout)[0]["id"]
    done = h.ocm_here(["update", note_id, "--add-tag", "pool"], env, repo)
    assert done.returncode == 0, done.stderr
    assert "pool" in long.read_text()

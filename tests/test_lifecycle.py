"""No one-way doors, no silent no-ops (issue #13): reactivate with honest chain links,
idempotent resolve/archive, `ocm verify` and re-stamping on update, tag/file add and remove
forms, "nothing to change", and `forget --delete` leaving no dangling links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.errors import Conflict, InvalidInput
from ocm.vault.folder import read_document
from ocm.vault.memories import MemoryNote
from ocm.vault.sessions import CheckpointInput

from .conftest import git, snapshot

# run_ocm: what these check is a command's output and exit code, not a process of its own.
pytestmark = pytest.mark.cli_in_process


def memo(path: Path) -> MemoryNote:
    return MemoryNote(read_document(path))


def test_reactivate_a_superseded_memory_keeps_the_chain_honest(project: Project,
                                                               run_ocm) -> None:
    a = project.remember("Use polling for job status", "decision")
    b = project.remember("Use websockets for job status", "decision", auto_supersede=False)
    project.set_memory_status(a.id, "superseded", superseded_by=b.id, reason="latency")
    assert memo(b.path).supersedes == a.id
    out = run_ocm("reactivate", a.id)
    assert out.stdout.startswith(f"{a.id}: active (reactivated (was superseded); {b.id} no "
                                 "longer supersedes it")
    old, new = memo(a.path), memo(b.path)
    assert old.status == "active" and "superseded_by" not in old.fm
    assert "resolution" not in old.fm
    assert new.status == "active" and "supersedes" not in new.fm
    assert {h.id for h in project.search("job status")} == {a.id, b.id}
    # Again: a no-op success that touches nothing.
    before = snapshot(project.vault.root)
    again = run_ocm("reactivate", a.id)
    assert again.returncode == 0 and "already active" in again.stdout
    assert snapshot(project.vault.root) == before


@pytest.mark.parametrize("status", ["resolved", "archived"])
def test_reactivate_resolved_or_archived(project: Project, status: str) -> None:
    r = project.remember("The staging DB is read-only on Sundays", "gotcha")
    project.set_memory_status(r.id, status, reason="maintenance moved")
    assert project.search("staging read-only") == []
    done = project.reactivate(r.id)
    assert done.changed and memo(r.path).status == "active"
    assert "resolution" not in memo(r.path).fm
    assert [h.id for h in project.search("staging read-only")] == [r.id]


def test_reactivate_refuses_a_key_held_by_another_record(project: Project) -> None:
    old = project.remember("Pool size 10", "decision", key="db.pool")
    new = project.remember("Pool size 20", "decision", key="db.pool",
                           supersede_reason="load test")
    before = snapshot(project.vault.root)
    with pytest.raises(Conflict, match=f"key 'db.pool' belongs to active memory {new.id}"):
        project.reactivate(old.id)
    assert snapshot(project.vault.root) == before


def test_resolve_and_archive_are_idempotent(project: Project, run_ocm) -> None:
    r = project.remember("The CI cache key ignores the lockfile", "gotcha")
    first = run_ocm("resolve", r.id, "--reason", "fixed")
    assert first.stdout.strip() == f"{r.id}: resolved"
    before = snapshot(project.vault.root)
    again = run_ocm("resolve", r.id)
    assert again.returncode == 0 and again.stdout.strip() == f"{r.id}: already resolved"
    assert snapshot(project.vault.root) == before
    assert project.set_memory_status(r.id, "resolved").changed is False
    a = project.remember("Old deploy script lives in ops/", "reference")
    run_ocm("archive", a.id)
    before = snapshot(project.vault.root)
    again = run_ocm("archive", a.id, "--json")
    assert json.loads(again.stdout)["changed"] is False
    assert snapshot(project.vault.root) == before
    # Superseded by the same record again: a no-op; by another one: refused.
    b = project.remember("Use uv", "decision")
    c = project.remember("Use pip-tools", "decision", auto_supersede=False)
    d = project.remember("Use poetry", "decision", auto_supersede=False)
    project.set_memory_status(c.id, "superseded", superseded_by=b.id)
    assert project.set_memory_status(c.id, "superseded", superseded_by=b.id).changed is False
    with pytest.raises(Conflict, match="already superseded by"):
        project.set_memory_status(c.id, "superseded", superseded_by=d.id)


@pytest.mark.cli_in_process(False)  # each `ocm verify` sees the repo anew
def test_verify_restamps_and_clears_stale(project: Project, repo: Path, run_ocm) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "pay.py").write_text("RETRIES = 3\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "pay")
    r = project.remember("pay.py retries 3 times", "gotcha", files=["src/pay.py"])
    (repo / "src" / "pay.py").write_text("RETRIES = 5\n")
    git(repo, "commit", "-qam", "five")
    assert [s["id"] for s in project.stale_memories()] == [r.id]
    head = git(repo, "rev-parse", "HEAD")[:12]
    out = run_ocm("verify", r.id)
    assert f"verified against {head}" in out.stdout
    assert memo(r.path).fm["git_sha"] == head
    assert project.stale_memories() == []
    before = snapshot(project.vault.root)
    again = run_ocm("verify", r.id)
    assert "already verified" in again.stdout and snapshot(project.vault.root) == before
    # Uncommitted changes: stamped, and told it is still stale.
    (repo / "src" / "pay.py").write_text("RETRIES = 7\n")
    assert "uncommitted" in run_ocm("verify", r.id).stdout


def test_update_of_text_or_files_restamps(project: Project, repo: Path) -> None:
    (repo / "a.py").write_text("a = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a")
    r = project.remember("a.py sets a to 1", "gotcha", files=["a.py"])
    (repo / "a.py").write_text("a = 2\n")
    git(repo, "commit", "-qam", "a2")
    project.update_memory(r.id, importance=7)  # metadata only: still stale
    assert [s["id"] for s in project.stale_memories()] == [r.id]
    project.update_memory(r.id, content="a.py sets a to 2")
    assert memo(r.path).fm["git_sha"] == git(repo, "rev-parse", "HEAD")[:12]
    assert project.stale_memories() == []


def test_update_tag_and_file_add_and_remove(project: Project, run_ocm) -> None:
    r = project.remember("Retry on 502", "discovery", tags=["http", "retry"],
                         files=["src/a.py"])
    run_ocm("update", r.id, "--add-tag", "gateway", "--remove-tag", "retry",
            "--add-file", "src/b.py")
    m = memo(r.path)
    assert m.str_list("tags") == ["http", "gateway"]
    assert m.str_list("files") == ["src/a.py", "src/b.py"]
    run_ocm("update", r.id, "--remove-file", "src/a.py", "--add-tag", "http")
    m = memo(r.path)
    assert m.str_list("files") == ["src/b.py"] and m.str_list("tags") == ["http", "gateway"]
    run_ocm("update", r.id, "--tag", "only")  # the replace form stays
    assert memo(r.path).str_list("tags") == ["only"]
    bad = run_ocm("update", r.id, "--remove-tag", "nope", check=False)
    assert bad.returncode == 1 and "has no tag 'nope'" in bad.stderr
    both = run_ocm("update", r.id, "--tag", "x", "--add-tag", "y", check=False)
    assert both.returncode == 1 and "--tag replaces" in both.stderr
    helps = run_ocm("update", "--help").stdout
    for option in ("--text", "--title", "--file", "--add-file", "--remove-file", "--tag",
                   "--add-tag", "--remove-tag", "--importance", "--type", "--key"):
        line = next(ln for ln in helps.splitlines() if ln.strip().startswith(option))
        assert len(line.split()) > 2, f"{option} has no help text"


def test_noop_update_and_checkpoint_touch_nothing(project: Project, run_ocm) -> None:
    r = project.remember("Prefer small commits", "preference", tags=["git"])
    before = snapshot(project.vault.root)
    for args in ([], ["--title", "Prefer small commits"], ["--add-tag", "git"],
                 ["--text", "Prefer small commits"]):
        out = run_ocm("update", r.id, *args)
        assert out.stdout.startswith(f"Nothing to change: {r.id}"), args
        assert snapshot(project.vault.root) == before
    s = project.checkpoint(CheckpointInput(goal="Ship it"), tool="codex")
    before = snapshot(project.vault.root)
    out = run_ocm("checkpoint", "--session", s.id)
    assert out.returncode == 0 and out.stdout.startswith(f"Nothing to change: {s.id}")
    out = run_ocm("checkpoint", "--session", s.id, "--goal", "Ship it")
    assert out.stdout.startswith("Nothing to change")
    assert snapshot(project.vault.root) == before
    assert json.loads(run_ocm("checkpoint", "--session", s.id, "--json").stdout)[
        "changed"] is False


def test_forget_delete_leaves_no_dangling_links(project: Project, run_ocm) -> None:
    s = project.checkpoint(CheckpointInput(goal="Pick a queue"), tool="codex")
    a = project.remember("Use Redis lists as the queue", "decision", session=s.id)
    b = project.remember("Use Redis streams as the queue", "decision", session=s.id,
                         auto_supersede=False)
    project.set_memory_status(a.id, "superseded", superseded_by=b.id, reason="acks")
    out = run_ocm("forget", b.id, "--delete")
    assert f"{b.id}: deleted" in out.stdout and "removed links" in out.stdout
    old = memo(a.path)
    assert "superseded_by" not in old.fm and old.status == "superseded"
    assert b.id in old.fm["resolution"] and "deleted" in old.fm["resolution"]
    session_text = s.path.read_text() if s.path.exists() else project.get(s.id)["markdown"]
    assert b.id not in session_text and a.id in session_text
    for path in project.vault.note_paths():
        assert f"[[{b.id}]]" not in path.read_text()
    # Deleting the older end of a chain drops the newer record's `supersedes`.
    c = project.remember("Use Kafka", "decision", auto_supersede=False)
    project.set_memory_status(a.id, "active")
    project.set_memory_status(a.id, "superseded", superseded_by=c.id)
    project.forget(a.id, delete=True)
    assert "supersedes" not in memo(c.path).fm


def test_status_active_needs_no_superseded_by(project: Project) -> None:
    r = project.remember("x is y", "gotcha")
    with pytest.raises(InvalidInput, match="only valid with status 'superseded'"):
        project.set_memory_status(r.id, "active", superseded_by=r.id)

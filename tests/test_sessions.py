"""Session notes: seed 004 §5 format and §7 checkpoint semantics on real files and git."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.errors import Conflict, InvalidInput, NotFound
from ocm.vault.folder import read_document
from ocm.vault.sessions import CheckpointInput, PlanFile, Reference, SessionNote, origin_type

from .conftest import git, snapshot


def first(project: Project, **fields: object) -> tuple[str, Path]:
    result = project.checkpoint(CheckpointInput(**fields), tool="cursor")
    return result.id, result.path


def note(path: Path) -> SessionNote:
    return SessionNote(read_document(path))


def test_first_checkpoint_creates_the_seed_format(project: Project, repo: Path) -> None:
    sid, path = first(
        project, slug="tei-migration", goal="Migrate BGE-M3 to TEI.",
        work_completed=["Replaced vLLM client"], work_pending=["Tune batch size"],
        work_summary=["Profiled vLLM path"], decisions=["**TEI over Infinity:** native"],
        plan_files=[PlanFile("docs/plan.md", "## TEI Migration Plan")],
        references=[Reference("https://example.com/tei", "TEI docs")])
    assert path.name.endswith("_cursor_tei-migration.md")
    assert path.parent == repo / ".openCodeMemory" / "sessions"
    text = path.read_text()
    fm = note(path).fm
    assert fm["tool"] == "cursor" and fm["status"] == "open" and fm["slug"] == "tei-migration"
    assert fm["git_sha_start"] == git(repo, "rev-parse", "HEAD")[:12]
    assert fm["project"] == "proj"
    expected_order = ["## Goal", "## Todos", "### ✅ Work Completed", "### 🔲 Work To Be Completed",
                      "## Work Done", "## Plan Files", "## Architecture Decisions",
                      "## References"]
    positions = [text.index(h) for h in expected_order]
    assert positions == sorted(positions)
    assert "| `docs/plan.md` | ## TEI Migration Plan |" in text
    assert "- [TEI docs](https://example.com/tei)" in text
    assert "\n---\n\n## Todos" in text
    assert sid == fm["id"]


def test_append_and_replace_semantics(project: Project) -> None:
    sid, path = first(project, goal="G", work_completed=["a"], work_pending=["p1", "p2"],
                      work_summary=["s1"], decisions=["**D1:** r"])
    project.checkpoint(CheckpointInput(work_completed=["b"], work_pending=["p3"],
                                       work_summary=["s2"], decisions=["**D2:** r"],
                                       diff_summary="one"), session_id=sid)
    project.checkpoint(CheckpointInput(diff_summary="two", goal="New goal"), session_id=sid)
    n = note(path)
    assert n.items("work completed") == ["a", "b"]
    assert n.items("work to be completed") == ["p3"]
    assert n.items("work done") == ["s1", "s2"]
    assert n.items("architecture decisions") == ["**D1:** r", "**D2:** r"]
    assert n.diff_summary() == "two"
    assert n.goal == "New goal"


def test_completed_item_leaves_pending_when_pending_not_given(project: Project) -> None:
    sid, path = first(project, work_pending=["Tune batch", "Fix OOM"])
    project.checkpoint(CheckpointInput(work_completed=["Fix OOM"]), session_id=sid)
    assert note(path).items("work to be completed") == ["Tune batch"]


def test_repeated_checkpoint_is_idempotent(project: Project) -> None:
    inp = CheckpointInput(work_completed=["a"], work_summary=["s"], decisions=["**D:** r"])
    sid, path = first(project, goal="G")
    project.checkpoint(inp, session_id=sid)
    before = path.read_bytes()
    result = project.checkpoint(inp, session_id=sid)
    assert path.read_bytes() == before
    assert result.changed is False


def test_human_edits_survive_a_checkpoint(project: Project) -> None:
    sid, path = first(project, goal="G", work_completed=["a"])
    text = path.read_text()
    text = text.replace("- a\n", "- a\n- added by hand\n")
    text = text.replace("status: open", "status: open\nreviewer: sam  # my key")
    text += "\n## My Notes\nRemember to ask Sam.\n"
    path.write_text(text)
    project.checkpoint(CheckpointInput(work_completed=["b"], work_summary=["did b"]),
                       session_id=sid)
    out = path.read_text()
    assert "- a\n- added by hand\n- b\n" in out
    assert "reviewer: sam  # my key" in out
    assert "## My Notes\nRemember to ask Sam." in out
    assert "- did b" in out


def test_files_touched_net_effect(project: Project) -> None:
    sid, path = first(project, goal="G")
    vault = project.vault
    vault.record_file(sid, "src/new.py", "created")
    vault.record_file(sid, "src/new.py", "modified")
    vault.record_file(sid, "src/old.py", "modified")
    vault.record_file(sid, "src/old.py", "deleted")
    vault.record_file(sid, "tmp/scratch.py", "created")
    vault.record_file(sid, "tmp/scratch.py", "deleted")
    vault.record_file(sid, str(project.root / "src" / "abs.py"), "modified")
    assert project.session_files(sid) == [
        {"path": "src/new.py", "change_type": "created"},
        {"path": "src/abs.py", "change_type": "modified"},
        {"path": "src/old.py", "change_type": "deleted"},
    ]
    text = path.read_text()
    assert "### Created\n- `src/new.py`" in text
    assert "scratch" not in text


def test_close_records_git_sha_diff_stat_and_git_files(project: Project, repo: Path) -> None:
    sid, path = first(project, goal="G", diff_summary="Key change: swapped the client.")
    (repo / "app.py").write_text("print('hi')\n")
    (repo / "README.md").write_text("# demo\nmore\n")
    git(repo, "add", "app.py", "README.md")
    git(repo, "commit", "-q", "-m", "work")
    (repo / "untracked.txt").write_text("x\n")
    result = project.close_session(sid)
    n = note(path)
    assert result.status == "closed"
    assert n.fm["git_sha_end"] == git(repo, "rev-parse", "HEAD")[:12]
    assert n.fm["ended_at"]
    summary = n.diff_summary().splitlines()
    # `.gitignore`, written by `ocm init` before the session started, is not its change.
    assert summary[0] == "2 files changed, +2 / -0 lines; 1 new untracked."
    assert summary[1] == "Key change: swapped the client."
    assert project.session_files(sid) == [
        {"path": "app.py", "change_type": "created"},
        {"path": "untracked.txt", "change_type": "created"},
        {"path": "README.md", "change_type": "modified"},
    ]


def test_status_transitions(project: Project) -> None:
    sid, path = first(project, goal="G")
    project.checkpoint(CheckpointInput(status="frozen", trigger="context_limit"), session_id=sid)
    assert note(path).status == "frozen" and note(path).fm["trigger"] == "context_limit"
    project.checkpoint(CheckpointInput(status="open"), session_id=sid)
    project.checkpoint(CheckpointInput(status="closed"), session_id=sid)
    with pytest.raises(Conflict, match="is closed; it cannot become open"):
        project.checkpoint(CheckpointInput(status="open"), session_id=sid)


def test_session_ids_host_ids_and_current_session(project: Project) -> None:
    host = "5f3a0c2e-host-session"
    a = project.checkpoint(CheckpointInput(goal="A"), session_id=host, tool="claude-code")
    assert note(a.path).fm["agent_session_id"] == host
    again = project.checkpoint(CheckpointInput(work_completed=["x"]), session_id=host)
    assert again.id == a.id
    # No id at all: the current open session of the project.
    current = project.checkpoint(CheckpointInput(work_completed=["y"]))
    assert current.id == a.id
    with pytest.raises(NotFound):
        project.checkpoint(CheckpointInput(goal="x"), session_id="2020-01-01_00-00_cursor_nope")


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/abs/path", "a\x00b", "..", "x/../../y"])
def test_bad_session_ids_change_nothing(project: Project, bad: str) -> None:
    first(project, goal="G")
    before = snapshot(project.vault.root)
    with pytest.raises((InvalidInput, NotFound)):
        project.checkpoint(CheckpointInput(goal="evil"), session_id=bad)
    assert snapshot(project.vault.root) == before


@pytest.mark.parametrize("fields, message", [
    ({"status": "done"}, "unknown session status 'done'"),
    ({"slug": "../.."}, "invalid slug"),
    ({"trigger": "Bad Trigger!"}, "invalid trigger"),
    ({"goal": "x" * 5000}, "max 4,000"),
    ({"work_completed": ["ok", "bad\x00"]}, "NUL"),
])
def test_invalid_checkpoints_change_nothing(project: Project, fields: dict,
                                            message: str) -> None:
    sid, _ = first(project, goal="G")
    before = snapshot(project.vault.root)
    with pytest.raises((InvalidInput, Conflict), match=message):
        project.checkpoint(CheckpointInput(**fields), session_id=sid)
    assert snapshot(project.vault.root) == before


@pytest.mark.parametrize("data, message", [
    ({"work_completed": "not a list"}, "must be a list"),
    ({"work_completed": [1, 2]}, "list of strings"),
    ({"plan_files": [{"header": "x"}]}, "needs a 'path'"),
    ({"references": [3]}, "needs a 'url'"),
    ({"bogus": 1}, "unknown checkpoint field"),
    ({"goal": 5}, "must be a string"),
])
def test_checkpoint_json_shapes_are_checked(data: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        CheckpointInput.from_mapping(data)


def test_secrets_never_reach_the_session_note(project: Project) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    sid, path = first(project, goal=f"Rotate {key} today",
                      work_completed=["set DB_PASSWORD=hunter2hunter2"])
    text = path.read_text()
    assert key not in text and "hunter2hunter2" not in text
    assert "[REDACTED:aws_access_key]" in text and "Rotate" in text


def test_a_malformed_note_is_never_overwritten(project: Project) -> None:
    sid, path = first(project, goal="G")
    broken = path.read_text().replace("tool: cursor", "tool: [cursor")
    path.write_text(broken)
    with pytest.raises(Exception, match="malformed frontmatter"):
        project.checkpoint(CheckpointInput(work_completed=["x"]), session_id=path.stem)
    assert path.read_text() == broken


def test_origin_type_from_read_and_edit_counts() -> None:
    assert origin_type(0, 0) is None
    assert origin_type(4, 0) == "planning"
    assert origin_type(25, 1) == "investigation"
    assert origin_type(5, 6) == "implementation"
    assert origin_type(20, 3) == "mixed"


def test_worktrees_share_one_vault(project: Project, repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(other))
    from_worktree = Project.open(cwd=other / ".")
    assert from_worktree.vault.root == project.vault.root
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert Project.open(cwd=sub).vault.root == project.vault.root


def test_without_git_the_current_folder_is_the_root(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert Project.open(cwd=plain).vault.root == plain / ".openCodeMemory"

"""Git-aware staleness: a memory about files that changed since its commit is flagged."""

from __future__ import annotations

import json
from pathlib import Path

from ocm.project import Project
from ocm.vault.git.staleness import StalenessChecker, checker

from .conftest import git, snapshot


def commit(repo: Path, rel: str, text: str, message: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)


def test_memory_goes_stale_when_its_file_changes(project: Project, repo: Path) -> None:
    commit(repo, "src/pay.py", "def pay():\n    pass\n", "pay")
    commit(repo, "src/other.py", "x = 1\n", "other")
    about_pay = project.remember("pay() needs the raw body for signature checks", "gotcha",
                                 files=["src/pay.py"])
    about_other = project.remember("other.py holds the retry constant", "discovery",
                                   files=["src/other.py"])
    no_files = project.remember("We deploy on Fridays never", "principle")
    [fresh] = project.search("raw body signature")
    assert fresh.to_json()["stale"] is False and fresh.to_json()["changed_files"] == []

    commit(repo, "src/pay.py", "def pay(raw):\n    pass\n", "pay takes raw")
    before = snapshot(project.vault.root)
    checker(repo)._changed.clear()
    [hit] = project.search("raw body signature")
    assert hit.id == about_pay.id
    assert hit.to_json()["stale"] is True and hit.to_json()["changed_files"] == ["src/pay.py"]
    listed = {h.id: h.to_json()["stale"] for h in project.list_memories()}
    assert listed == {about_pay.id: True, about_other.id: False, no_files.id: False}
    rows = project.stale_memories()
    assert [r["id"] for r in rows] == [about_pay.id]
    assert rows[0]["changed_files"] == ["src/pay.py"]
    brief = project.recall()
    assert "verify: src/pay.py changed since this was written" in brief.text
    assert snapshot(project.vault.root) == before  # derived, never written


def test_staleness_is_not_kept_by_the_index_cache(project: Project, repo: Path) -> None:
    """A hit's meta is the index cache's own dict until it is annotated: the flag set on one
    search's hit must not stay with the note once its file is as it was again."""
    commit(repo, "src/pay.py", "def pay():\n    pass\n", "pay")
    about_pay = project.remember("pay() needs the raw body for signature checks", "gotcha",
                                 files=["src/pay.py"])
    (repo / "src/pay.py").write_text("def pay(raw):\n    pass\n")  # not committed
    checker(repo)._changed.clear()
    [hit] = project.search("raw body signature")
    assert hit.id == about_pay.id and hit.to_json()["changed_files"] == ["src/pay.py"]
    (repo / "src/pay.py").write_text("def pay():\n    pass\n")  # back as it was
    checker(repo)._changed.clear()
    [again] = project.search("raw body signature")
    assert again.to_json()["stale"] is False and again.to_json()["changed_files"] == []
    assert hit.to_json()["changed_files"] == ["src/pay.py"]  # the first hit keeps its own


def test_uncommitted_and_deleted_files_count(project: Project, repo: Path) -> None:
    commit(repo, "a.py", "a\n", "a")
    commit(repo, "b.py", "b\n", "b")
    m = project.remember("a and b are twins", "discovery", files=["a.py", "b.py", "c/"])
    (repo / "a.py").write_text("changed, not committed\n")
    git(repo, "rm", "-q", "b.py")
    checker(repo)._changed.clear()
    [row] = project.stale_memories()
    assert row["id"] == m.id and row["changed_files"] == ["a.py", "b.py"]


def test_one_git_call_per_distinct_sha(project: Project, repo: Path) -> None:
    commit(repo, "x.py", "x\n", "x")
    for i in range(10):
        project.remember(f"note {i} about the x module and its quirks", "gotcha",
                         files=["x.py"], auto_supersede=False)
    commit(repo, "x.py", "y\n", "x2")
    probe = StalenessChecker(repo)
    sha = git(repo, "rev-parse", "HEAD~1")[:12]
    for _ in range(10):
        assert probe.changed_files(sha, ["x.py"]) == ["x.py"]
    assert probe.git_calls == 2  # HEAD once, the diff once
    checker(repo)._changed.clear()
    hits = project.search("quirks x module", limit=10)
    assert len(hits) == 10 and all(h.to_json()["stale"] for h in hits)


def test_unknown_sha_or_no_git_is_not_stale(tmp_path: Path, project: Project) -> None:
    assert StalenessChecker(tmp_path).changed_files("abcdef123456", ["a.py"]) == []
    assert checker(project.root).changed_files("deadbeefdead", ["README.md"]) == []
    assert checker(project.root).changed_files("not a sha", ["README.md"]) == []


def test_a_folder_inside_another_repository_is_not_a_repository(repo: Path) -> None:
    commit(repo, "x.py", "x\n", "x")
    sha = git(repo, "rev-parse", "HEAD")[:12]
    (repo / "x.py").write_text("changed\n")
    inner = repo / "vendor" / "lib"
    inner.mkdir(parents=True)
    assert StalenessChecker(repo).changed_files(sha, ["x.py"]) == ["x.py"]
    assert StalenessChecker(inner).changed_files(sha, ["x.py"]) == []


def test_cli_stale_and_json_flags(project: Project, repo: Path, run_ocm) -> None:
    commit(repo, "src/db.py", "POOL = 20\n", "db")
    m = project.remember("The pool size is 20 connections", "decision", files=["src/db.py"])
    assert "No stale memories" in run_ocm("stale").stdout
    commit(repo, "src/db.py", "POOL = 40\n", "db 40")
    out = run_ocm("stale").stdout
    assert m.id in out and "verify: src/db.py changed since this was written" in out
    [row] = json.loads(run_ocm("stale", "--json").stdout)
    assert row["changed_files"] == ["src/db.py"]
    [hit] = json.loads(run_ocm("memories", "--json").stdout)
    assert hit["stale"] is True
    table = run_ocm("memories").stdout
    assert "stale" in table and "verify: src/db.py changed" in table
    assert "verify: src/db.py changed" in run_ocm("recall").stdout


def test_hook_session_brief_says_verify(project: Project, repo: Path) -> None:
    from ocm.agents.brief import session_brief
    from ocm.vault.sessions import CheckpointInput

    commit(repo, "src/queue.py", "MAX = 3\n", "queue")
    project.remember("The queue retries 3 times before the DLQ", "gotcha",
                     files=["src/queue.py"])
    sid = project.checkpoint(CheckpointInput(goal="Queue work"), tool="claude-code").id
    assert "verify:" not in session_brief(project, sid, 4000, 10000)
    commit(repo, "src/queue.py", "MAX = 5\n", "queue 5")
    checker(repo)._changed.clear()
    text = session_brief(project, sid, 4000, 10000)
    assert "(verify: src/queue.py changed since this was written)" in text

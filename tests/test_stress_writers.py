"""Concurrent writers, scaled down (`bench/stress.py` runs full size).

Real processes write one vault at once; afterwards the Markdown is parsed back and every
item an operation said it wrote must be there exactly once, every supersede chain linear,
every person's edit kept, and the index equal to the files and to a clean rebuild.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_stress():
    if "ocm_stress" not in sys.modules:
        spec = importlib.util.spec_from_file_location("ocm_stress", ROOT / "bench" / "stress.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["ocm_stress"] = module
        spec.loader.exec_module(module)
    return sys.modules["ocm_stress"]


stress = load_stress()
ZERO = ("lost", "duplicated", "torn_files", "index_mismatches", "chain_errors", "failed_ops")


def assert_clean(report) -> None:
    figures = report.summary()
    assert {k: figures[k] for k in ZERO} == dict.fromkeys(ZERO, 0), report.problems[:10]
    assert report.problems == []


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stress, "IN_PROCESS", True)


def test_concurrent_writers_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    report = stress.Report()
    stress.run_writers(tmp_path, writers=4, ops=40, seed=7, report=report)
    assert report.writers == 4
    assert report.operations == 160
    assert_clean(report)


def test_first_checkpoints_racing_on_one_host_session_make_one_note(tmp_path: Path) -> None:
    """Regression: concurrent first checkpoints for one new host session id each created a
    session note (the check-then-create was not under the create lock)."""
    report = stress.Report()
    stress.run_session_race(tmp_path, writers=4, seed=5, report=report)
    assert report.operations == 4
    assert (report.duplicated, report.lost) == (0, 0), report.problems
    assert report.problems == []


def test_checker_counts_a_lost_and_a_duplicated_item(tmp_path: Path) -> None:
    """The checker itself: a bullet removed and one doubled by hand are both reported."""
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    repo = stress.make_repo(tmp_path / "repo")
    home = tmp_path / "home"
    with stress.ocm_home(home):
        project = Project.open(cwd=repo)
        project.init()
        sid = project.checkpoint(CheckpointInput(goal="g"), tool="claude-code").id
        for tok in ("tkaaaa", "tkbbbb", "tkcccc"):
            project.checkpoint(CheckpointInput(work_completed=[f"done {tok}"]), session_id=sid)
    path = next((repo / stress.VAULT / "sessions").glob("*.md"))
    text = path.read_text()
    path.write_text(text.replace("- done tkaaaa\n", "").replace("- done tkbbbb\n",
                                                                "- done tkbbbb\n- done tkbbbb\n"))
    records = [{"op": "cp_shared", "tok": t, "session": sid, "section": "work completed",
                "ok": True} for t in ("tkaaaa", "tkbbbb", "tkcccc")]
    report = stress.Report()
    stress.check_writers(repo, home, records, report)
    assert (report.lost, report.duplicated) == (1, 1)


def test_a_save_during_our_fsync_is_merged_not_overwritten(project, monkeypatch) -> None:
    """Regression: the "changed under us?" check ran before the temp file was written and
    fsynced, so an editor saving during that fsync was silently overwritten."""
    import os

    from ocm.vault.folder import read_document
    from ocm.vault.sessions import CheckpointInput, SessionNote

    note = project.checkpoint(CheckpointInput(goal="Tune the cache."), tool="claude-code")
    real_fsync = os.fsync
    saved = []

    def fsync_while_a_person_saves(fd: int) -> None:
        real_fsync(fd)
        if not saved:  # the person's editor saves the note while ocm flushes its temp file
            saved.append(True)
            text = note.path.read_text(encoding="utf-8")
            note.path.write_text(text + "\n## Person\n\nmy own words\n", encoding="utf-8")

    monkeypatch.setattr(os, "fsync", fsync_while_a_person_saves)
    project.checkpoint(CheckpointInput(work_completed=["measured hit rate"]), session_id=note.id)
    monkeypatch.setattr(os, "fsync", real_fsync)
    text = note.path.read_text(encoding="utf-8")
    assert "my own words" in text
    assert SessionNote(read_document(note.path)).items("work completed") == ["measured hit rate"]


def test_a_person_never_opens_a_writers_temp_file(tmp_path: Path) -> None:
    """Regression (the flake of test_concurrent_writers_lose_and_duplicate_nothing): the
    simulated person picked notes with `rglob("*.md")`, which also lists a writer's temp
    file while it exists; editing it raised FileNotFoundError naming `.ocm-tmp-…` once the
    writer renamed it, and the worker died. Only notes are picked now."""
    from ocm.vault.atomic import open_new

    folder = tmp_path / "memories" / "gotcha"
    folder.mkdir(parents=True)
    note = folder / "cache-key.md"
    note.write_text("---\nid: g1\n---\n\nbody\n")
    fd, temp = open_new(folder, note.name)  # a writer between its write and its rename
    os.close(fd)
    (folder / ".person-1.tmp").write_text("")
    assert temp.name.endswith(".md") and temp in sorted(folder.rglob("*.md"))  # the trap
    assert stress.person_targets(tmp_path) == [note]

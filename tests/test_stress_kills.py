"""kill -9 at random moments, scaled down (`bench/stress.py` runs >= 200 trials): no note is
ever empty, truncated or half-written, no temp file is taken for a note, and a killed index
writer leaves an index the next command repairs, answering like a clean rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_stress_writers import assert_clean, load_stress

stress = load_stress()


def test_kill_9_never_tears_a_note_and_the_index_recovers(tmp_path: Path) -> None:
    report = stress.Report()
    stress.run_kills(tmp_path, trials=20, seed=11, report=report, seed_notes=40)
    assert report.kill_trials == 20
    assert_clean(report)


def test_a_supersede_cut_in_half_is_finished_by_the_next_write(project, monkeypatch) -> None:
    """Regression: killed between writing the new record and marking the old one, a keyed
    supersede left two active records, and the next supersede only retired one of them."""
    from ocm.vault import store
    from ocm.vault.folder import read_document
    from ocm.vault.memories import MemoryNote

    first = project.remember("Pool size 20.", "decision", key="db.pool").id

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("SIGKILL")

    finish = store.Vault._mark_superseded
    monkeypatch.setattr(store.Vault, "_mark_superseded", killed)
    with pytest.raises(KeyboardInterrupt):
        project.remember("Pool size 30.", "decision", key="db.pool", supersede_reason="load")
    monkeypatch.setattr(store.Vault, "_mark_superseded", finish)  # not undo(): keeps OCM_HOME
    third = project.remember("Pool size 40.", "decision", key="db.pool",
                             supersede_reason="more load").id
    notes = {m.id: m for m in (MemoryNote(read_document(p))
                               for p in project.vault.memories_dir.rglob("*.md"))}
    assert [i for i, m in notes.items() if m.status == "active"] == [third]
    assert notes[first].status == "superseded"
    second = notes[third].supersedes
    assert notes[second].supersedes == first
    assert notes[first].superseded_by == second


def test_the_kill_checker_finishes_then_counts_half_supersedes(project, monkeypatch,
                                                               ocm_home) -> None:
    from ocm.vault import store

    project.remember("Queue is SQS.", "decision", key="queue")
    finish = store.Vault._mark_superseded
    monkeypatch.setattr(store.Vault, "_mark_superseded",
                        lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        project.remember("Queue is Kafka.", "decision", key="queue", supersede_reason="scale")
    monkeypatch.setattr(store.Vault, "_mark_superseded", finish)  # not undo(): keeps OCM_HOME
    report = stress.Report()
    stress.finish_half_supersedes(project.vault.root, project.root, ocm_home, report)
    assert (report.supersedes_finished, report.chain_errors) == (1, 0), report.problems

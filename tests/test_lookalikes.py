"""What a `remember` compares a new record with: each candidate file read once for both
auto-supersede and the near-copy check, and the index asked for the new record's rarest
words only (issue #17: write cost flat in N). Real vaults and Whoosh indexes."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

import ocm.vault.alike.lookalikes
from ocm.indexer.analysis import tokens
from ocm.indexer.neighbours import rarest
from ocm.project import Project
from ocm.vault import racy


def test_each_candidate_is_read_once_for_supersede_and_near_copies(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        project.remember(f"The staging deploy runs the blue pipeline number {i} nightly",
                         "decision", auto_supersede=False, check_copies=False)
    reads = count_reads(monkeypatch)
    # Like all four, superseding none: both checks look at every one of them.
    result = project.remember("The staging deploy runs the green pipeline on weekends",
                              "decision")
    assert result.notice is None
    assert len(reads) == 4 and set(reads.values()) == {1}


def test_rarest_keeps_the_fewest_held_words_and_those_none_holds(project: Project) -> None:
    for i in range(5):
        project.remember(f"Deploys go through the release pipeline, step {i}", "decision",
                         auto_supersede=False, check_copies=False)
    project.remember("Deploys go through kubernetes", "decision", auto_supersede=False,
                     check_copies=False)
    searcher = project.refresh(project.vault).searcher()
    deploy, kubernetes, pipeline, zebra = tokens("deploys kubernetes pipeline zebra")
    terms = [deploy, kubernetes, pipeline, zebra]
    assert rarest(searcher, terms, 1) == [kubernetes, zebra]
    assert rarest(searcher, terms, 2) == [kubernetes, pipeline, zebra]
    assert rarest(searcher, terms, 4) == terms


OLD = "The Postgres connection pool size is 20 per web worker."
OLD_AGAIN = "the postgres connection pool size is 20 per web worker"


def count_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    reads: Counter[Path] = Counter()
    real = ocm.vault.alike.lookalikes.read_note_text

    def counted(path: Path) -> str:
        reads[path] += 1
        return real(path)

    monkeypatch.setattr(ocm.vault.alike.lookalikes, "read_note_text", counted)
    return reads


def past_racy_window() -> None:
    time.sleep(racy.RACY_NS / 1e9 + 0.02)


def test_a_later_remember_reads_only_the_records_changed_since(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        project.remember(f"The staging deploy runs the blue pipeline number {i} nightly",
                         "decision", auto_supersede=False, check_copies=False)
    past_racy_window()
    reads = count_reads(monkeypatch)
    kafka = project.remember("Kafka consumer lag alarms fire at ten thousand messages",
                             "decision").path
    assert len(reads) == 4 and set(reads.values()) == {1}
    reads.clear()
    past_racy_window()
    redis = project.remember("Redis eviction uses allkeys-lru on the cache cluster",
                             "decision").path
    assert reads == Counter({kafka: 1})  # the four unchanged ones are not read again
    reads.clear()
    past_racy_window()
    [first] = [p for p in project.vault.memories_dir.glob("decision/*.md")
               if "number 0 " in p.read_text()]
    first.write_text(first.read_text().replace("blue pipeline", "green pipeline"))
    project.remember("Grafana dashboards live in the ops repository", "decision")
    assert reads == Counter({first: 1, redis: 1})  # the one edited, the one new


def retired_on_disk(project: Project) -> Path:
    """OLD written, then read by a `remember` (kept in the process), then resolved."""
    old = project.remember(OLD, "decision")
    project.set_memory_status(old.id, "resolved")
    past_racy_window()
    again = project.remember(OLD_AGAIN, "decision")
    assert again.changed is False and again.status == "resolved", again.notice
    return old.path


def test_a_record_retired_on_disk_between_two_remembers_is_seen(project: Project) -> None:
    path = retired_on_disk(project)
    # Reactivated by hand in an editor (atomic replace: a new inode): a near-copy is now
    # an active twin, stored with a notice naming it, not refused as a tombstone.
    text = path.read_text()
    assert "status: resolved" in text
    tmp = path.with_name(".edit.tmp")
    tmp.write_text(text.replace("status: resolved", "status: active"))
    tmp.replace(path)
    again = project.remember(OLD_AGAIN, "decision")
    assert again.changed is True and again.notice and path.stem in again.notice


def test_an_in_place_edit_of_the_same_size_and_mtime_is_seen(project: Project) -> None:
    path = retired_on_disk(project)
    before = path.stat()
    text = path.read_bytes()
    assert b"status: resolved" in text
    with path.open("r+b") as handle:  # same inode, same size; the mtime set back below
        handle.write(text.replace(b"status: resolved", b"status: archived"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)
    again = project.remember(OLD_AGAIN, "decision")
    assert again.changed is False and again.status == "archived", again.notice


def test_a_file_changed_within_the_racy_window_is_not_kept(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.remember(OLD, "decision")
    reads = count_reads(monkeypatch)
    project.remember("Kafka consumer lag alarms fire at ten thousand messages", "decision")
    project.remember("Redis eviction uses allkeys-lru on the cache cluster", "decision")
    # Written just now: a second write in the same clock tick could leave its times alone,
    # so the second remember reads it again rather than trust what it kept.
    [old] = [p for p in reads if "postgres" in p.name]
    assert reads[old] == 2

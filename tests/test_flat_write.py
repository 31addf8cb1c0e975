"""A write in a long-lived process (the MCP server) commits nothing and lists no folder.

Auto-supersede asks the index for the records closest to a new memory. A process whose
index watches the vault asks the index as last committed and adds the notes the watch
reported since (its own earlier writes, another process's), so `remember` costs the same
however many notes the vault holds (issue #17). Each test runs real Whoosh indexes and
real inotify watches, and checks what was superseded on disk."""

from __future__ import annotations

import os
import sys

import pytest

import ocm.project
from ocm.project import Project
from ocm.vault.folder import read_document
from ocm.vault.memories import MemoryNote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

OLD = "Background jobs run on Celery with a Redis broker"
NEW = "Background jobs now run on Celery with a Redis broker and a result backend"


def status(path: os.PathLike) -> str:
    return MemoryNote(read_document(path)).status


@pytest.fixture
def watched(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project past the small-folder shortcut whose index watches the vault."""
    monkeypatch.setattr(ocm.project, "SUPERSEDE_SCAN_MAX", 5)
    for i in range(12):
        project.remember(f"Unrelated decision number {i} about CSS grid layout", "decision",
                         auto_supersede=False)
    for _ in range(3):  # two checks scan, the third starts the watch
        project.search("css grid")
    assert project.index_for(project.vault)._watch is not None
    return project


def _generation(project: Project) -> int:
    index = project.index_for(project.vault)
    index.searcher()
    assert index._ix is not None
    return index._ix.latest_generation()


def test_remember_commits_nothing_and_lists_no_folder(
        watched: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _generation(watched)
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: os.PathLike | str = ".") -> object:
        listed.append(os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    old = watched.remember(OLD, "decision")
    new = watched.remember(NEW, "decision")
    assert new.notice is not None and new.notice.startswith(f"superseded {old.id}")
    assert status(old.path) == "superseded"
    assert _generation(watched) == before  # neither write was committed to the index
    assert not [p for p in listed if "memories" in p]
    # The next read commits both writes and finds the replacement first.
    hits = watched.search("celery redis broker")
    assert [h.id for h in hits[:2]] == [new.id, old.id]
    assert _generation(watched) > before


def test_another_processes_write_since_the_last_commit_is_compared(
        watched: Project, repo) -> None:
    other = Project.open(cwd=repo)  # another process: its own index object, no watch
    old = other.remember(OLD, "decision", auto_supersede=False)
    found = watched._supersede_candidates(watched.vault, "decision", None, NEW)
    assert found is not None and old.path.resolve() in found
    new = watched.remember(NEW, "decision")
    assert new.notice is not None and old.id in new.notice
    assert status(old.path) == "superseded"


def test_a_record_superseded_since_the_commit_takes_no_candidate_slot(
        watched: Project) -> None:
    first = watched.remember(OLD, "decision")
    watched.search("celery")  # committed: the index holds `first` as active
    second = watched.remember(NEW, "decision")  # supersedes `first`, not committed
    assert second.notice is not None and status(first.path) == "superseded"
    found = watched._supersede_candidates(
        watched.vault, "decision", None, "Background jobs run on Celery with Redis streams")
    assert found is not None
    assert len(found) == len(set(found))
    # Both changed since the commit, so both come from the disk, not from a stale hit.
    resolved = {p.resolve() for p in found}
    assert {first.path.resolve(), second.path.resolve()} <= resolved
    third = watched.remember("Background jobs now run on Celery with a Redis broker and "
                             "a result backend in Postgres", "decision")
    assert third.notice is not None and second.id in third.notice


def test_without_a_watch_a_write_syncs_first(project: Project,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocm.project, "SUPERSEDE_SCAN_MAX", 5)
    index = project.index_for(project.vault)
    index.watch_enabled = False
    old = project.remember(OLD, "decision")
    for i in range(6):
        project.remember(f"Unrelated decision number {i} about CSS grid layout", "decision",
                         auto_supersede=False)
    assert index.unindexed() is None
    found = project._supersede_candidates(project.vault, "decision", None, NEW)
    assert found is not None and old.path.resolve() in {p.resolve() for p in found}
    assert index.unindexed() is None


class _CountingScan(dict):
    """A freshness scan that counts every walk over its entries (a copy walks them all)."""

    walks = 0

    def __iter__(self):  # noqa: ANN204 - dict's own
        _CountingScan.walks += 1
        return super().__iter__()

    def keys(self):  # noqa: ANN201 - dict(x) of a subclass walks keys()
        _CountingScan.walks += 1
        return super().keys()

    def items(self):  # noqa: ANN201
        _CountingScan.walks += 1
        return super().items()


def test_a_watched_write_walks_no_note_signature_but_its_own(watched: Project) -> None:
    """The watch's reports update the freshness scan in place: a copy of it, one entry per
    note of the vault, was made on every write (issue #17)."""
    index = watched.index_for(watched.vault)
    watched.search("css grid")  # the scan and the manifest agree
    scan = _CountingScan(index._last_scan)
    index._last_scan = scan
    _CountingScan.walks = 0
    old = watched.remember(OLD, "decision")
    new = watched.remember(NEW, "decision")
    assert new.notice is not None and old.id in new.notice
    rels = {p.resolve().relative_to(index.resolved_root).as_posix()
            for p in (old.path, new.path)}
    assert rels <= (index.unindexed() or set())  # takes in the watch's latest reports
    assert _CountingScan.walks == 0
    assert index._last_scan is scan
    assert all(scan[rel] == watched.vault.note_signature(rel) for rel in rels)
    # The next read still sees both writes: what it had compared no longer vouches.
    assert [h.id for h in watched.search("celery redis broker")[:2]] == [new.id, old.id]

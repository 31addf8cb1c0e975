"""The manifest is extended by a journal line per commit, not rewritten whole; whatever a
crash or another process leaves, a reader gets the manifest of the index's generation or
none (then it is read back from the index), and the index agrees with a rebuild."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocm.indexer import manifest as manifest_module
from ocm.indexer.index import NoteIndex
from ocm.indexer.manifest import JOURNAL, MANIFEST, Manifest
from ocm.project import Project


def _write_notes(project: Project, count: int, start: int = 0) -> list[Path]:
    return [project.remember(f"Fact number {i} about the build cache and {i} workers",
                             "discovery", auto_supersede=False).path
            for i in range(start, start + count)]


def _fresh_manifest(project: Project) -> dict:
    """The manifest as a new process would read it."""
    loaded = Manifest(project.vault.index_dir).load()
    assert loaded is not None
    return loaded


def _index_paths(project: Project) -> set[str]:
    index = NoteIndex(project.vault)
    try:
        return {stored["path"] for stored in index.searcher().all_stored_fields()}
    finally:
        index.close()


def test_a_small_commit_appends_a_line(project: Project) -> None:
    _write_notes(project, 20)
    project.search("build cache")  # commits the 20: the whole file (no journal yet)
    folder = project.vault.index_dir
    base = (folder / MANIFEST).read_bytes()
    journal = folder / JOURNAL
    assert not journal.exists()
    edited = _write_notes(project, 1, start=100)[0]
    project.search("build cache")
    assert (folder / MANIFEST).read_bytes() == base  # not rewritten
    lines = journal.read_text().splitlines()
    assert len(lines) == 1
    rel = edited.relative_to(project.vault.root).as_posix()
    assert list(json.loads(lines[0])["notes"]) == [rel]
    manifest = _fresh_manifest(project)
    assert rel in manifest["notes"] and len(manifest["notes"]) == 21
    index = project.index_for(project.vault)
    assert manifest["generation"] == index._open().latest_generation()
    # A deletion is journaled too.
    edited.unlink()
    project.search("build cache")
    assert rel not in _fresh_manifest(project)["notes"]
    assert set(_fresh_manifest(project)["notes"]) == _index_paths(project)


def test_the_journal_is_folded_in_once_it_is_large(project: Project,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _write_notes(project, 10)
    project.search("build cache")
    monkeypatch.setattr(manifest_module, "JOURNAL_FRACTION", 1)  # journal <= whole file
    journal = project.vault.index_dir / JOURNAL
    sizes = []
    for i in range(12):
        _write_notes(project, 1, start=200 + i)
        project.search("build cache")
        sizes.append(journal.stat().st_size if journal.exists() else 0)
    assert 0 in sizes[1:]  # folded in at least once
    assert max(sizes) <= (project.vault.index_dir / MANIFEST).stat().st_size * 2
    assert len(_fresh_manifest(project)["notes"]) == 22
    assert set(_fresh_manifest(project)["notes"]) == _index_paths(project)


def test_a_torn_line_or_a_stale_journal_is_not_believed(project: Project) -> None:
    _write_notes(project, 20)
    project.search("build cache")
    _write_notes(project, 1, start=300)
    project.search("build cache")
    folder = project.vault.index_dir
    journal = folder / JOURNAL
    good = journal.read_bytes()
    # A crash in the middle of an append: the line is cut short.
    journal.write_bytes(good + good[: len(good) // 2])
    loaded = _fresh_manifest(project)
    assert len(loaded["notes"]) == 21
    # The next commit rewrites the whole file rather than append after the torn line.
    added = _write_notes(project, 1, start=301)[0]
    project.search("build cache")
    assert not journal.exists()
    assert added.relative_to(project.vault.root).as_posix() in _fresh_manifest(project)["notes"]
    # Lines of an older whole file (a crash between its rewrite and the journal's removal)
    # are ignored, not applied to the new one.
    stale = json.loads(good.splitlines()[0])
    stale["notes"] = {"memories/discovery/ghost.md": [1, 2]}
    journal.write_text(json.dumps(stale) + "\n")
    assert "memories/discovery/ghost.md" not in _fresh_manifest(project)["notes"]


def test_a_journal_line_lost_in_a_crash_is_recovered_from_the_index(
        project: Project) -> None:
    _write_notes(project, 20)
    project.search("build cache")
    added = _write_notes(project, 1, start=400)[0]
    project.search("build cache")
    journal = project.vault.index_dir / JOURNAL
    journal.write_bytes(b"")  # the commit landed, its journal line did not
    other = Project.open(cwd=project.root)
    hits = other.search("fact number 400 build cache")
    assert hits and hits[0].path.resolve() == added.resolve()
    assert set(_fresh_manifest(other)["notes"]) == _index_paths(other)
    assert len(_index_paths(other)) == 21

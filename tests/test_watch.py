"""Freshness from inotify in long-lived processes: every change still found, no full scan.

The index checks freshness before every read. From its second check on it watches the
note folders (Linux) and looks again only at the notes the kernel reports; anything the
events cannot describe exactly falls back to a full scan. Each test changes notes the way
people and tools do (in-place editor save, rename-into-place, delete, new type folder,
`sessions/` removed) and asserts the next search sees exactly what is on disk."""

from __future__ import annotations

import os
import shutil
import sys
from datetime import datetime

import pytest

from ocm.project import Project, SearchRequest
from ocm.vault.freshness.scan import MEMORIES_DIR, SESSIONS_DIR
from ocm.vault.freshness.watch import NoteWatch

NOW = datetime(2026, 11, 20, 12, 0)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


def titles(project: Project, query: str) -> list[str]:
    return [h.title for h in project.search(SearchRequest(query=query, now=NOW))]


def scans(project: Project, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count full scans of the project's vault from now on."""
    count = [0]
    original = type(project.vault).note_signatures

    def counted(vault, folders=None):
        if vault is project.vault:
            count[0] += 1
        return original(vault, folders)

    monkeypatch.setattr(type(project.vault), "note_signatures", counted)
    return count


@pytest.fixture
def watched(project: Project) -> Project:
    project.remember("Redis TTL must be set on idempotency keys", "gotcha", title="Redis TTL")
    project.remember("Use alembic for every schema migration", "decision", title="Alembic")
    for _ in range(3):  # two checks scan, the third starts the watch (and scans)
        project.search("redis")
    return project


@linux_only
def test_quiet_checks_scan_nothing(watched: Project,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    index = watched.index_for(watched.vault)
    assert index._watch is not None
    count = scans(watched, monkeypatch)
    for _ in range(5):
        assert titles(watched, "redis ttl") == ["Redis TTL"]
    assert count[0] == 0


@linux_only
def test_in_place_edit_rename_and_delete_are_seen(watched: Project,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    count = scans(watched, monkeypatch)
    memories = watched.vault.memories_dir
    redis = next(memories.rglob("*redis*.md"))
    # An editor saving in place: same file, new bytes, no folder change.
    with open(redis, "r+", encoding="utf-8") as handle:
        text = handle.read().replace("Redis TTL must", "Valkey TTL must")
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    assert titles(watched, "valkey") == ["Redis TTL"]
    # An editor saving by writing a temp file and renaming it over the note.
    alembic = next(memories.rglob("*alembic*.md"))
    tmp = alembic.with_name(".alembic.md.swp")
    tmp.write_text(alembic.read_text().replace("alembic", "sqitch"), encoding="utf-8")
    os.replace(tmp, alembic)
    assert titles(watched, "sqitch") == ["Alembic"]
    redis.unlink()
    assert titles(watched, "valkey") == []
    assert count[0] == 0


@linux_only
def test_new_folders_fall_back_to_a_full_scan(watched: Project,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    count = scans(watched, monkeypatch)
    folder = watched.vault.memories_dir / "brand_new_type"
    folder.mkdir()
    source = next(watched.vault.memories_dir.rglob("*redis*.md"))
    (folder / "copied.md").write_text(source.read_text().replace(
        "Redis TTL must", "Memcached TTL must").replace("id: ", "id: x"), encoding="utf-8")
    assert "Redis TTL" in titles(watched, "memcached")
    assert count[0] >= 1
    # The new folder is watched from the next scan on: edits in it are seen without one.
    titles(watched, "redis")
    seen = count[0]
    (folder / "copied.md").write_text((folder / "copied.md").read_text().replace(
        "Memcached", "Dragonfly"), encoding="utf-8")
    assert "Redis TTL" in titles(watched, "dragonfly")
    assert count[0] == seen


@linux_only
def test_sessions_folder_removed_and_recreated(watched: Project) -> None:
    sessions = watched.vault.sessions_dir
    shutil.rmtree(sessions)
    titles(watched, "redis")
    sessions.mkdir()
    (sessions / "2026-11-20_10-00_cursor_kafka.md").write_text(
        "---\nid: s-kafka\ntype: session\ntool: cursor\nstarted_at: 2026-11-20T10:00:00\n"
        "status: open\n---\n\n## Goal\nMove the queue to kafka partitions\n", encoding="utf-8")
    assert titles(watched, "kafka partitions") == ["Move the queue to kafka partitions"]


def test_without_a_watch_every_check_scans(project: Project,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    index = project.index_for(project.vault)
    index.watch_enabled = False
    project.remember("Redis TTL must be set on idempotency keys", "gotcha", title="Redis TTL")
    count = scans(project, monkeypatch)
    for _ in range(3):
        assert titles(project, "redis") == ["Redis TTL"]
    assert count[0] == 3 and index._watch is None
    note = next(project.vault.memories_dir.rglob("*redis*.md"))
    note.write_text(note.read_text().replace("Redis TTL must", "Valkey TTL must"))
    assert titles(project, "valkey") == ["Redis TTL"]


def test_watch_start_fails_cleanly_on_a_missing_folder(tmp_path) -> None:
    assert NoteWatch.start(str(tmp_path), (SESSIONS_DIR, MEMORIES_DIR),
                           [str(tmp_path / "gone")]) is None

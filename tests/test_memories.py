"""Memory records: types, keys, supersede chains, lifecycle, validation, scopes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.errors import Conflict, InvalidInput, NotFound
from ocm.vault.folder import read_document
from ocm.vault.memories import MEMORY_TYPES, MemoryNote, canonical_type
from ocm.vault.sessions import CheckpointInput

from .conftest import git, snapshot


def memo(path: Path) -> MemoryNote:
    return MemoryNote(read_document(path))


def test_remember_writes_one_file_with_full_frontmatter(project: Project, repo: Path) -> None:
    r = project.remember("The API requires basic auth, not a bearer token.", "warning",
                         files=["src/api/client.py"], tags=["api", "429"], importance=7)
    assert r.path == repo / ".openCodeMemory" / "memories" / "gotcha" / f"{r.id}.md"
    m = memo(r.path)
    assert m.type == "gotcha" and m.status == "active" and m.scope == "project"
    assert m.title == "The API requires basic auth, not a bearer token."
    assert m.str_list("files") == ["src/api/client.py"]
    assert m.str_list("tags") == ["api", "429"]
    assert m.importance == 7
    assert m.fm["git_sha"] == git(repo, "rev-parse", "HEAD")[:12]
    assert m.content == "The API requires basic auth, not a bearer token."
    text = r.path.read_text()
    assert text.startswith("---\nid: ") and "created: 20" in text and "\n- \"429\"\n" in text


@pytest.mark.parametrize("alias, canonical", [
    ("warning", "gotcha"), ("incident", "bug_fix"), ("rule", "principle"),
    ("insight", "lesson"), ("Trade-Off", "trade_off"), ("pointer", "reference"),
    ("core", "identity"), ("past", "historical"), ("decision", "decision"),
])
def test_type_aliases(alias: str, canonical: str) -> None:
    assert canonical_type(alias) == canonical


def test_unknown_type_lists_the_valid_ones(project: Project) -> None:
    before = snapshot(project.vault.root)
    with pytest.raises(InvalidInput) as err:
        project.remember("x", "thought")
    message = str(err.value)
    assert "unknown memory type 'thought'" in message
    assert all(t in message for t in MEMORY_TYPES)
    assert snapshot(project.vault.root) == before


def test_key_is_one_active_record_and_supersede_links_both_ways(project: Project) -> None:
    old = project.remember("We use Celery for background jobs.", "decision", key="jobs-runner")
    before = snapshot(project.vault.root)
    with pytest.raises(Conflict) as err:
        project.remember("We moved to arq.", "decision", key="jobs-runner")
    assert old.id in str(err.value) and "supersede_reason" in str(err.value)
    assert snapshot(project.vault.root) == before
    new = project.remember("Background jobs moved from Celery to arq.", "decision",
                           key="jobs-runner", supersede_reason="Celery needed a broker we dropped")
    assert new.notice == f"superseded {old.id}"
    o, n = memo(old.path), memo(new.path)
    assert o.status == "superseded" and o.superseded_by == new.id
    assert o.fm["resolution"] == "Celery needed a broker we dropped"
    assert n.supersedes == old.id and n.status == "active"
    # The key now belongs to the new record.
    with pytest.raises(Conflict, match=new.id):
        project.remember("Third try", "decision", key="jobs-runner")


def test_resolve_archive_reactivate_and_errors(project: Project) -> None:
    r = project.remember("constants.ts is 800 lines and should be split", "gotcha")
    project.set_memory_status(r.id, "resolved", reason="split into lib/constants/")
    m = memo(r.path)
    assert m.status == "resolved" and m.fm["resolution"] == "split into lib/constants/"
    assert project.set_memory_status(r.id, "resolved").changed is False  # idempotent
    with pytest.raises(Conflict, match="reactivate it first"):
        project.forget(r.id)
    project.set_memory_status(r.id, "active")
    project.forget(r.id)
    assert memo(r.path).status == "archived"


def test_explicit_supersede_checks_the_replacement(project: Project) -> None:
    a = project.remember("Use polling", "decision")
    b = project.remember("Use websockets", "decision")
    with pytest.raises(InvalidInput, match="needs superseded_by"):
        project.set_memory_status(a.id, "superseded")
    with pytest.raises(NotFound):
        project.set_memory_status(a.id, "superseded", superseded_by="missing-123456")
    with pytest.raises(InvalidInput, match="cannot supersede itself"):
        project.set_memory_status(a.id, "superseded", superseded_by=a.id)
    project.set_memory_status(a.id, "superseded", superseded_by=b.id, reason="stability")
    assert memo(a.path).superseded_by == b.id
    assert memo(b.path).supersedes == a.id
    assert project.set_memory_status(a.id, "superseded", superseded_by=b.id).changed is False
    c = project.remember("Use SSE", "decision")
    with pytest.raises(Conflict, match="is superseded; reactivate"):
        project.set_memory_status(a.id, "resolved")
    project.set_memory_status(b.id, "archived")
    with pytest.raises(Conflict, match="is archived, not active"):
        project.set_memory_status(c.id, "superseded", superseded_by=b.id)


def test_resolve_by_session(project: Project) -> None:
    s = project.checkpoint(CheckpointInput(goal="Investigate OOM"), tool="codex")
    a = project.remember("p99 OOM under load", "gotcha", session=s.id)
    b = project.remember("batch 32 is the max", "discovery", session=s.id)
    other = project.remember("unrelated", "gotcha")
    done = project.resolve_by_session(s.id, reason="fixed in next session")
    assert sorted(r.id for r in done) == sorted([a.id, b.id])
    assert memo(other.path).status == "active"
    assert memo(a.path).session == s.id


def test_update_and_reclassify_moves_the_file(project: Project) -> None:
    r = project.remember("Retry twice on 502", "discovery", tags=["http"])
    project.update_memory(r.id, content="Retry three times on 502/503", title="Retry policy",
                          importance=8)
    moved = project.update_memory(r.id, memory_type="procedure")
    assert not r.path.exists()
    assert moved.path.parent.name == "procedure"
    m = memo(moved.path)
    assert m.type == "procedure" and m.title == "Retry policy" and m.importance == 8
    assert m.content == "Retry three times on 502/503" and m.str_list("tags") == ["http"]


def test_a_note_moved_by_a_person_is_found_by_its_id(project: Project) -> None:
    r = project.remember("Redis needs maxmemory-policy allkeys-lru", "gotcha")
    target = r.path.parent.parent / "custom" / "renamed in obsidian.md"
    target.parent.mkdir()
    r.path.rename(target)
    assert project.get(r.id)["markdown_path"] == str(target)
    project.update_memory(r.id, importance=9)
    assert memo(target).importance == 9


def test_forget_delete_removes_the_file(project: Project) -> None:
    r = project.remember("temporary", "context")
    result = project.forget(r.id, delete=True)
    assert result.status == "deleted" and not r.path.exists()
    with pytest.raises(NotFound):
        project.get(r.id)


def test_importance_is_capped_for_planning_sessions(project: Project) -> None:
    s = project.checkpoint(CheckpointInput(goal="Plan the refactor"), tool="claude-code")
    project.vault.count_activity(s.id, reads=6)
    capped = project.remember("constants.ts should be split", "gotcha", importance=9,
                              session=s.id)
    m = memo(capped.path)
    assert m.importance == 5 and m.fm["origin_type"] == "planning"
    project.vault.count_activity(s.id, edits=8)
    free = project.remember("constants.ts was split", "gotcha", importance=9, session=s.id)
    assert memo(free.path).importance == 9


def test_user_scope_goes_to_the_user_vault(project: Project, ocm_home: Path) -> None:
    r = project.remember("Prefer concise answers", "preference", scope="user")
    assert r.path.is_relative_to(ocm_home)
    assert memo(r.path).scope == "user"
    assert not any(project.vault.memories_dir.rglob("*.md"))


@pytest.mark.parametrize("kwargs, message", [
    ({"content": ""}, "non-empty"),
    ({"content": "x" * 70_000}, "max 64,000"),
    ({"content": "a\x00b"}, "NUL"),
    ({"importance": 11}, "1 to 10"),
    ({"importance": 0}, "1 to 10"),
    ({"files": ["../../outside.py"]}, "escapes the project root"),
    ({"files": ["a\x00b"]}, "NUL"),
    ({"key": "two\nlines"}, "one non-empty line"),
    ({"scope": "galaxy"}, "unknown scope"),
    ({"session": "../../x"}, "invalid session id"),
])
def test_invalid_memories_change_nothing(project: Project, kwargs: dict, message: str) -> None:
    project.remember("existing", "gotcha")
    before = snapshot(project.vault.root)
    args = {"content": "fine text", "memory_type": "gotcha", **kwargs}
    with pytest.raises(InvalidInput, match=message):
        project.remember(args.pop("content"), args.pop("memory_type"), **args)
    assert snapshot(project.vault.root) == before


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/b", "x\x00", "", "ａｂｃ"])
def test_bad_memory_ids(project: Project, bad: str) -> None:
    with pytest.raises((InvalidInput, NotFound)):
        project.set_memory_status(bad, "resolved")


def test_secrets_are_redacted_in_memories(project: Project) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    r = project.remember(f"CI uses token {token} for releases", "procedure",
                         title=f"release token {token}", tags=["ci"])
    text = r.path.read_text()
    assert token not in text
    assert text.count("[REDACTED:github_token]") == 2


def test_created_date_is_kept(project: Project) -> None:
    when = datetime(2025, 3, 1, 9, 30)
    r = project.remember("old fact", "discovery", created=when)
    assert memo(r.path).created == when
    assert "created: 2025-03-01T09:30:00" in r.path.read_text()

"""Obsidian as the dashboard: wikilinks for provenance, `ocm.base`, identity by `id`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ocm.project import Project
from ocm.vault.errors import InvalidInput
from ocm.vault.folder import read_document
from ocm.vault.links import link, unlink
from ocm.vault.memories import MemoryNote
from ocm.vault.obsidian import BASE_NAME, BASE_TEXT
from ocm.vault.sessions import CheckpointInput

from .conftest import snapshot

STAMP = re.compile(r"^(created|updated|started_at): \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$", re.M)


def memo(path: Path) -> MemoryNote:
    return MemoryNote(read_document(path))


def test_unlink_accepts_every_link_form() -> None:
    for value in ("abc", "[[abc]]", "[[abc|Alias]]", "[[memories/gotcha/abc]]", "[[abc#Part]]",
                  "[[abc.md]]", " [[abc]] ", [["abc"]]):
        assert unlink(value) == "abc"
    assert link("abc") == "[[abc]]" and link("[[abc]]") == "[[abc]]"
    assert unlink(None) == "" and unlink("") == ""


def test_memory_links_its_session_and_the_session_lists_it(project: Project) -> None:
    sid = project.checkpoint(CheckpointInput(goal="Stripe webhooks"), tool="claude-code").id
    m = project.remember("Stripe signs the raw body", "gotcha", session=sid, tags=["stripe"])
    session_path = project.vault.find_session(sid)
    text = m.path.read_text()
    assert f'session: "[[{session_path.stem}]]"' in text  # quoted, as Obsidian requires
    assert "tags:\n- stripe\n" in text and STAMP.search(text)
    session_text = session_path.read_text()
    assert "## Memories" in session_text
    assert f"- [[{m.id}]] — Stripe signs the raw body" in session_text
    assert project.vault.memories_of_session(sid) == [m.id]
    # the session rename (slug given later) moves the links along
    project.checkpoint(CheckpointInput(slug="stripe-webhooks"), session_id=sid)
    renamed = project.vault.find_session(sid)
    assert renamed.stem.endswith("_stripe-webhooks") and renamed.stem != session_path.stem
    assert memo(m.path).fm["session"] == f"[[{renamed.stem}]]"
    assert project.vault.memories_of_session(sid) == [m.id]
    assert [r.id for r in project.resolve_by_session(sid)] == [m.id]
    # the session's own index entry is not swamped by the memory list
    assert project.search("Stripe signs raw body", kind="session") == [] or all(
        h.kind == "session" for h in project.search("Stripe signs raw body", kind="session"))


def test_supersede_chain_links_both_ways(project: Project) -> None:
    old = project.remember("CI runs on Jenkins", "decision", key="ci")
    new = project.remember("CI runs on GitHub Actions", "decision", key="ci",
                           supersede_reason="moved off Jenkins")
    assert f'superseded_by: "[[{new.id}]]"' in old.path.read_text()
    assert f'supersedes: "[[{old.id}]]"' in new.path.read_text()
    a = project.remember("Use black", "principle")
    b = project.remember("Use ruff format", "principle")
    project.set_memory_status(a.id, "superseded", superseded_by=f"[[{b.id}]]")
    assert memo(a.path).superseded_by == b.id and memo(b.path).supersedes == a.id
    c = project.remember("Use black for formatting notebooks", "principle")
    with pytest.raises(InvalidInput, match="cannot supersede itself"):
        project.set_memory_status(c.id, "superseded", superseded_by=f"[[{c.id}|me]]")
    [hit] = [h for h in project.search("CI Jenkins", include_resolved=True) if h.id == old.id]
    assert hit.to_json()["superseded_by"] == new.id


def test_readers_accept_links_and_old_bare_ids(project: Project) -> None:
    sid = project.checkpoint(CheckpointInput(goal="Legacy notes"), tool="cursor").id
    folder = project.vault.memories_dir / "gotcha"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old-style-aaaaaa.md").write_text(
        f"---\nid: old-style-aaaaaa\ntype: gotcha\ntitle: Old style\nstatus: active\n"
        f"session: {sid}\n---\n\nWritten before links existed.\n")
    assert project.vault.memories_of_session(sid) == ["old-style-aaaaaa"]
    for ref in ("old-style-aaaaaa", "[[old-style-aaaaaa]]", "[[old-style-aaaaaa|Old]]"):
        assert project.get(ref)["id"] == "old-style-aaaaaa"
    assert project.get(f"[[{sid}]]")["kind"] == "session"
    assert project.vault.find_session(f"[[{sid}|the session]]").stem == sid
    [hit] = project.search("written before links")
    assert hit.meta["session"] == sid


def test_renamed_or_moved_notes_keep_working(project: Project) -> None:
    m = project.remember("Redis keys expire after 24 h", "decision")
    target = project.vault.memories_dir / "archive" / "My renamed note.md"
    target.parent.mkdir()
    m.path.rename(target)
    assert Path(project.get(m.id)["markdown_path"]) == target.resolve()
    [hit] = project.search("redis keys expire")
    assert hit.id == m.id and hit.path == target.resolve()
    newer = project.remember("Redis keys expire after 48 h", "decision")
    project.set_memory_status(m.id, "superseded", superseded_by=newer.id)
    assert memo(newer.path).fm["supersedes"] == "[[My renamed note]]"  # the file's stem
    assert memo(target).status == "superseded"
    sid = project.checkpoint(CheckpointInput(goal="Filed away"), tool="codex").id
    path = project.vault.find_session(sid)
    moved = project.vault.sessions_dir / "2026" / path.name
    moved.parent.mkdir()
    path.rename(moved)
    assert project.vault.find_session(sid) == moved
    assert [h.id for h in project.list_sessions()] == [sid]


def test_link_writes_keep_a_persons_edits(project: Project) -> None:
    m = project.remember("Retry at most 3 times", "procedure")
    text = m.path.read_text()
    edited = text.replace("status: active\n", "status: active  # keep\nreviewer: kate\n")
    edited += "\n## My notes\n\nSee the runbook.\n"
    m.path.write_text(edited)
    n = project.remember("Retry at most 5 times", "procedure")
    project.set_memory_status(m.id, "superseded", superseded_by=n.id, reason="more retries")
    after = m.path.read_text()
    assert "reviewer: kate\n" in after and "## My notes\n\nSee the runbook.\n" in after
    assert f'superseded_by: "[[{n.id}]]"' in after


@pytest.mark.cli_in_process
def test_init_writes_the_base_and_never_overwrites_an_edited_one(project: Project,
                                                                   run_ocm) -> None:
    base = project.vault.root / BASE_NAME
    assert base.read_text() == BASE_TEXT
    data = yaml.safe_load(base.read_text())
    names = [v["name"] for v in data["views"]]
    assert "Active memories by type" in names and "Sessions by tool" in names
    assert all(v["type"] == "table" and v["order"] for v in data["views"])
    assert project.init()["obsidian_base"] == "unchanged"
    base.write_text(BASE_TEXT + "  # mine\n")
    assert project.init()["obsidian_base"] == "kept (edited by you)"
    assert base.read_text().endswith("# mine\n")
    out = json.loads(run_ocm("init", "--agents", "none", "--json").stdout)
    assert out["obsidian_base"] == "kept (edited by you)"
    base.unlink()
    assert project.init()["obsidian_base"] == "created"
    project.remember("Bases are YAML", "discovery")
    assert [h.title for h in project.search("bases yaml")] == ["Bases are YAML"]
    assert project.status()["broken_notes"] == {}


def test_obsidian_properties_follow_the_rules(project: Project) -> None:
    sid = project.checkpoint(CheckpointInput(goal="Props", tags=["api"]), tool="gemini").id
    m = project.remember("Tags are lists", "lesson", tags=["y2026", "api"], session=sid,
                         files=["src/a.py"])
    fm = yaml.safe_load(m.path.read_text().split("---")[1])
    assert isinstance(fm["tags"], list) and isinstance(fm["files"], list)
    assert STAMP.search(m.path.read_text())  # YYYY-MM-DDTHH:MM:SS, no zone
    assert fm["session"].startswith("[[") and fm["session"].endswith("]]")
    before = snapshot(project.vault.root)
    project.search("tags lists")
    assert snapshot(project.vault.root) == before

"""Team memory through git: `ocm init --team`/`ocm team on|off`, the note merge driver run by
real `git merge`s between real clones of one bare repository, the invariants restored on the
next read, conflict markers reported and resolved, collision-free names, provenance."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.markdown import Document
from ocm.vault.team.merge import merge_note, sides_from_markers
from ocm.vault.team.mode import is_team

from .conftest import git, ocm_in_process

OCM = str(Path(sys.executable).parent / "ocm")


def ocm(cwd: Path, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess:
    """`ocm ARGS` through its entry point in this process (conftest.ocm_in_process); the
    merge driver stays the process git starts."""
    full = {**os.environ, **env}
    done = ocm_in_process(list(args), cwd, full, None)
    if check and done.returncode != 0:
        raise AssertionError(f"ocm {' '.join(args)}: {done.stderr}")
    return done


def clone(origin: Path, where: Path, name: str) -> Path:
    git(where.parent, "clone", "-q", str(origin), str(where))
    git(where, "config", "user.name", name)
    git(where, "config", "user.email", f"{name.lower()}@example.com")
    return where


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare origin with a team vault committed by Ann, and Bob's clone after `ocm init`."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    ann = clone(origin, tmp_path / "ann", "Ann")
    (ann / "README.md").write_text("# demo\n")
    git(ann, "add", "README.md")
    git(ann, "commit", "-q", "-m", "init")
    ocm(ann, "init", "--team", "--sessions", "--agents", "none")
    git(ann, "add", "-A")
    git(ann, "commit", "-q", "-m", "share ocm memory")
    git(ann, "push", "-q", "origin", "main")
    bob = clone(origin, tmp_path / "bob", "Bob")
    ocm(bob, "init", "--agents", "none")
    return origin, ann, bob


def sync(member: Path, rebase: bool = False) -> None:
    git(member, "add", "-A")
    if git(member, "status", "--porcelain"):
        git(member, "commit", "-q", "-m", f"notes from {member.name}")
    git(member, "pull", "-q", "--rebase" if rebase else "--no-rebase", "origin", "main")
    git(member, "push", "-q", "origin", "main")


def memories(member: Path) -> dict[str, dict]:
    out = {}
    for path in (member / ".openCodeMemory" / "memories").rglob("*.md"):
        out[path.stem] = Document.parse(path.read_text(encoding="utf-8")).frontmatter.data
    return out


# --------------------------------------------------------------------------- the merge


SESSION = """---
id: s1
tool: claude-code
status: open
reads: 2
tags:
- api
---

## Todos

### ✅ Work Completed

- first
"""


def test_merge_keeps_both_sides_bullets_and_one_of_each_key() -> None:
    ours = SESSION.replace("reads: 2", "reads: 5").replace("- first\n", "- first\n- mine\n")
    ours = ours.replace("- api\n", "- api\n- ours-tag\n")
    theirs = SESSION.replace("status: open", "status: closed").replace(
        "- first\n", "- first\n- yours\n").replace("reads: 2", "reads: 3")
    merged = merge_note(SESSION, ours, theirs)
    assert merged.clean
    doc = Document.parse(merged.text)  # would raise on a duplicated key
    fm = doc.frontmatter.data
    assert fm["status"] == "closed" and fm["reads"] == 6 and fm["tags"] == ["api", "ours-tag"]
    assert "- mine\n- yours\n" in merged.text and "<<<<<<<" not in merged.text
    # the same bullet appended on both sides is kept once
    both = merge_note(SESSION, ours, SESSION.replace("- first\n", "- first\n- mine\n"))
    assert both.text.count("- mine") == 1


MEMORY = """---
id: m1
type: gotcha
title: Pool
status: active
tags:
- db
- old
updated: 2026-01-01T10:00:00
---

Pool size is 10.
"""


def test_merge_frontmatter_newer_wins_lifecycle_as_a_unit_and_lists_as_sets() -> None:
    ours = MEMORY.replace("status: active", "status: resolved\nresolution: fixed").replace(
        "updated: 2026-01-01T10:00:00", "updated: 2026-01-02T10:00:00").replace("- old\n", "")
    theirs = MEMORY.replace("status: active",
                            'status: superseded\nsuperseded_by: "[[m2]]"').replace(
        "updated: 2026-01-01T10:00:00", "updated: 2026-01-03T10:00:00").replace(
        "- old\n", "- old\n- new\n")
    for a, b in ((ours, theirs), (theirs, ours)):  # the answer does not depend on the side
        merged = merge_note(MEMORY, a, b)
        fm = Document.parse(merged.text).frontmatter.data
        assert merged.clean
        assert fm["status"] == "superseded" and fm["superseded_by"] == "[[m2]]"
        assert "resolution" not in fm  # the newer side's lifecycle, not a mix of both
        assert sorted(fm["tags"]) == ["db", "new"] and fm["updated"].day == 3


def test_merge_keeps_crlf_and_falls_back_to_markers_on_broken_yaml() -> None:
    crlf = merge_note(MEMORY.replace("\n", "\r\n"),
                      MEMORY.replace("Pool size is 10.", "Pool size is 10.\n\nMine.").replace(
                          "\n", "\r\n"),
                      MEMORY.replace("- db\n", "- db\n- x\n").replace("\n", "\r\n"))
    assert crlf.clean and "\r\n" in crlf.text and "\n" not in crlf.text.replace("\r\n", "")
    assert "Mine." in crlf.text and "- x" in crlf.text
    broken = merge_note(MEMORY, MEMORY.replace("title: Pool", "title: [unclosed"),
                        MEMORY.replace("title: Pool", "title: Other"))
    assert not broken.clean and "<<<<<<<" in broken.text
    assert "[unclosed" in broken.text and "title: Other" in broken.text  # both sides kept


def test_sides_from_markers_round_trip() -> None:
    text = "a\n<<<<<<< ours\nb\n||||||| base\nc\n=======\nd\n>>>>>>> theirs\ne\n"
    assert sides_from_markers(text) == ("a\nc\ne\n", "a\nb\ne\n", "a\nd\ne\n")


# --------------------------------------------------------------------------- set-up


def test_team_on_tracks_notes_only_and_off_restores_the_ignore(repo: Path, ocm_home: Path) -> None:
    ocm(repo, "init", "--agents", "none")
    assert ".openCodeMemory/" in (repo / ".gitignore").read_text()
    ocm(repo, "remember", "Pool size is 10", "--type", "gotcha")
    ocm(repo, "remember", "I like tabs", "--type", "preference", "--scope", "user")
    ocm(repo, "checkpoint", "--tool", "codex", "--goal", "Try team mode")
    ocm(repo, "search", "pool")  # builds the index, folds the journal
    out = ocm(repo, "team", "on")
    assert "git add" in out.stdout
    vault = repo / ".openCodeMemory"
    assert is_team(vault) and ".openCodeMemory/" not in (repo / ".gitignore").read_text()
    driver = git(repo, "config", "--get", "merge.ocm-note.driver")
    assert "merge-note %O %A %B %P;" in driver and "git merge-file" in driver
    git(repo, "add", "-A")
    staged = git(repo, "diff", "--cached", "--name-only").splitlines()
    assert any(p.startswith(".openCodeMemory/memories/gotcha/") for p in staged)
    assert not [p for p in staged if p.startswith((".openCodeMemory/.index",
                                                    ".openCodeMemory/.locks",
                                                    ".openCodeMemory/sessions"))]
    assert not [p for p in staged if "preference" in p]  # user scope lives in OCM_HOME
    assert ocm_home not in repo.parents and not str(ocm_home).startswith(str(repo))
    git(repo, "reset", "-q")
    ocm(repo, "team", "on", "--sessions")
    git(repo, "add", "-A")
    assert any(p.startswith(".openCodeMemory/sessions/") for p in
               git(repo, "diff", "--cached", "--name-only").splitlines())
    git(repo, "commit", "-q", "-m", "share")
    off = ocm(repo, "team", "off")
    assert "git rm -r --cached .openCodeMemory" in off.stdout
    assert not is_team(vault) and ".openCodeMemory/" in (repo / ".gitignore").read_text()
    assert subprocess.run(["git", "config", "--get", "merge.ocm-note.driver"], cwd=repo,
                          capture_output=True).returncode == 1


def test_team_outside_git_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    done = ocm(folder, "init", "--team", "--agents", "none", check=False)
    assert done.returncode == 1 and "not a git repository" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (folder / ".openCodeMemory" / ".gitignore").exists()
    bad = ocm(folder, "init", "--sessions", "--agents", "none", check=False)
    assert bad.returncode == 1 and "--team" in bad.stderr


# --------------------------------------------------------------------------- real merges


def test_two_people_replace_one_key_no_conflict_one_active_chain_linked(team) -> None:
    _, ann, bob = team
    ocm(ann, "remember", "Pool size is 10", "--type", "decision", "--key", "db.pool",
        OCM_NOW="2026-11-20T09:00:00")
    sync(ann)
    sync(bob)
    old = next(iter(memories(bob)))
    ocm(bob, "remember", "Pool size is 20", "--type", "decision", "--key", "db.pool",
        "--supersede-reason", "load", OCM_NOW="2026-11-21T09:00:00")
    ocm(bob, "update", old, "--add-tag", "bob", OCM_NOW="2026-11-21T09:00:00")
    sync(bob)
    ocm(ann, "remember", "Pool size is 30", "--type", "decision", "--key", "db.pool",
        "--supersede-reason", "more load", OCM_NOW="2026-11-22T09:00:00")
    ocm(ann, "update", old, "--add-tag", "ann", OCM_NOW="2026-11-22T09:00:00")
    sync(ann)  # a real merge of the old record (both changed it) through ocm-note
    assert not git(ann, "diff", "--name-only", "--diff-filter=U")
    notes = memories(ann)
    assert sorted(notes[old]["tags"]) == ["ann", "bob"]
    active = [k for k, fm in notes.items() if fm["status"] == "active"]
    assert len(active) == 2  # the merge itself leaves both: the next read settles it
    listed = ocm(ann, "memories", "--json")
    assert "had 2 active memories" in listed.stderr
    notes = memories(ann)
    active = [k for k, fm in notes.items() if fm["status"] == "active"]
    assert len(active) == 1 and "30" in notes[active[0]]["title"]
    middle = next(k for k, fm in notes.items() if "20" in fm["title"])
    assert notes[middle]["resolution"] == "merged"
    assert notes[middle]["superseded_by"] == f"[[{active[0]}]]"
    assert notes[active[0]]["supersedes"] == f"[[{middle}]]"
    assert notes[middle]["supersedes"] == f"[[{old}]]"
    # Bob repairs the same merged state on his own: the same bytes, so no conflict.
    git(bob, "pull", "-q", "--no-rebase", "origin", "main")
    ocm(bob, "memories")
    sync(ann)
    sync(bob)
    assert not git(bob, "status", "--porcelain")
    assert memories(ann) == memories(bob)


def test_conflict_markers_are_reported_and_resolved_keeping_both_sides(team) -> None:
    _, ann, bob = team
    ocm(ann, "remember", "Pool size is 10", "--type", "gotcha")
    sync(ann)
    sync(bob)
    git(bob, "config", "--remove-section", "merge.ocm-note")  # a clone that never ran init
    path = next((bob / ".openCodeMemory" / "memories").rglob("*.md"))
    rel = path.relative_to(bob).as_posix()
    for member, title in ((ann, "Pool is ten"), (bob, "Pool is 10 connections")):
        target = member / rel
        target.write_text(target.read_text().replace("title: Pool size is 10",
                                                     f"title: {title}"))
        target.write_text(target.read_text() + f"\nNote from {member.name}.\n")
    sync(ann)
    git(bob, "commit", "-qam", "bob edits")
    pulled = subprocess.run(["git", "pull", "--no-rebase", "origin", "main"], cwd=bob,
                            capture_output=True, text=True)
    assert pulled.returncode != 0 and "<<<<<<<" in path.read_text()
    doctor = ocm(bob, "doctor", "--json", check=False)
    assert f"ocm team resolve {rel}" in doctor.stdout and doctor.returncode == 1
    assert rel.split(".openCodeMemory/")[1] in ocm(bob, "status", "--json").stdout
    done = ocm(bob, "team", "resolve")
    assert "merged" in done.stdout
    text = path.read_text()
    assert "<<<<<<<" not in text and "Note from ann." in text and "Note from bob." in text
    assert Document.parse(text).frontmatter.data["title"] in ("Pool is ten",
                                                               "Pool is 10 connections")
    assert not git(bob, "diff", "--name-only", "--diff-filter=U")
    assert "No notes with conflict markers" in ocm(bob, "team", "resolve").stdout


def test_supersede_cycle_from_two_branches_is_broken_on_read(team) -> None:
    _, ann, bob = team
    ocm(ann, "remember", "Use pgbouncer for pooling", "--type", "decision",
        OCM_NOW="2026-11-20T09:00:00")
    ocm(ann, "remember", "Use the driver's pool, not pgbouncer", "--type", "decision",
        "--no-auto-supersede", OCM_NOW="2026-11-21T09:00:00")
    sync(ann)
    sync(bob)
    first, second = sorted(memories(ann), key=lambda k: memories(ann)[k]["created"])
    ocm(ann, "resolve", first, "--superseded-by", second)
    ocm(bob, "resolve", second, "--superseded-by", first)
    sync(ann)
    sync(bob)
    notes = memories(bob)
    assert notes[first]["status"] == notes[second]["status"] == "superseded"  # the merge
    listed = ocm(bob, "memories", "--json")
    assert "supersede cycle" in listed.stderr
    notes = memories(bob)
    assert notes[second]["status"] == "active" and "superseded_by" not in notes[second]
    assert notes[first]["superseded_by"] == f"[[{second}]]"
    assert "supersedes" not in notes[first]


def test_names_never_collide_and_provenance_is_recorded(team) -> None:
    _, ann, bob = team
    when = {"OCM_NOW": "2026-11-20T09:00:00"}
    for member in (ann, bob):
        ocm(member, "checkpoint", "--tool", "claude-code", "--goal", "Same minute", **when)
        ocm(member, "remember", "Same words", "--type", "gotcha", **when)
    sync(ann)
    sync(bob)
    sessions = sorted(p.name for p in (bob / ".openCodeMemory" / "sessions").glob("*.md"))
    assert len(sessions) == 2 and all(s.startswith("2026-11-20_09-00_claude-code_")
                                      for s in sessions)
    notes = memories(bob)
    assert len(notes) == 2
    assert sorted(fm["author"] for fm in notes.values()) == [
        "Ann <ann@example.com>", "Bob <bob@example.com>"]
    project = Project.open(cwd=bob)
    assert project.vault.root.parent == bob


def test_author_filters_memories_and_search(team) -> None:
    _, ann, bob = team
    ocm(ann, "remember", "Stripe retries webhooks for three days", "--type", "gotcha")
    ocm(bob, "remember", "Stripe signs the raw body", "--type", "gotcha")
    sync(ann)
    sync(bob)
    listed = ocm(bob, "memories", "--author", "ann@example", "--json").stdout
    assert "three days" in listed and "raw body" not in listed
    assert '"author": "Ann <ann@example.com>"' in listed
    found = ocm(bob, "search", "stripe", "--author", "BOB", "--json").stdout
    assert "raw body" in found and "three days" not in found
    assert ocm(bob, "search", "stripe", "--author", "nobody", "--json").stdout.strip() == "[]"


def test_next_keyed_write_retires_every_active_record_of_the_key(project: Project) -> None:
    """Issue #13: after a merge two active records hold one key; a keyed write that comes
    before any read still leaves exactly one active record, the chain linked both ways."""
    first = project.remember("Timeout is 5 s", "decision", key="api.timeout")
    twin = first.path.with_name(first.path.name.replace(first.id, f"{first.id}x"))
    twin.write_text(first.path.read_text().replace(f"id: {first.id}", f"id: {first.id}x")
                    .replace("Timeout is 5 s", "Timeout is 7 s"))
    newest = project.vault.remember("Timeout is 9 s", "decision", key="api.timeout",
                                    supersede_reason="measured")
    notes = {path.stem: note for path, note in project.vault.memory_notes()}
    assert [k for k, n in notes.items() if n.status == "active"] == [newest.id]
    assert notes[f"{first.id}x"].superseded_by == newest.id
    assert notes[first.id].superseded_by == f"{first.id}x"
    assert notes[first.id].fm["resolution"] == "merged"
    assert notes[newest.id].supersedes == f"{first.id}x"

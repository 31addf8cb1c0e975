"""`ocm import` (MCP memory JSONL, basic-memory notes, Claude Code memory) and `ocm export`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.errors import InvalidInput
from ocm.vault.folder import read_document
from ocm.vault.memories import MemoryNote

from .conftest import make_repo, snapshot

# run_ocm: what these check is a command's output and exit code, not a process of its own.
pytestmark = pytest.mark.cli_in_process

MCP_JSONL = "\n".join(json.dumps(x) for x in [
    {"type": "entity", "name": "payments-service", "entityType": "service",
     "observations": ["Written in Go", "Talks to Stripe through src/stripe/client.go"]},
    {"type": "entity", "name": "Retry storms", "entityType": "warning",
     "observations": ["Exponential backoff with jitter is mandatory on the payment queue"]},
    {"type": "entity", "name": "Kate", "entityType": "person", "observations": []},
    {"type": "relation", "from": "Kate", "to": "payments-service", "relationType": "owns"},
]) + "\n"

BASIC_NOTE = """---
title: Search design
type: note
permalink: search-design
tags:
- search
- design
---

# Search design

Notes on how search works.

## Observations
- [decision] Use BM25F with field boosts #ranking
- [problem] Whoosh refresh keeps deleted docs visible (until reopened) #whoosh
- [fact] The index lives in .index/

## Relations
- implements [[Search spec]]
"""

CLAUDE_MD = """# CLAUDE.md

@docs/extra.md

## Commands
- `make test` runs ruff and pytest
- `make demo` builds the venv and runs the demo

## Code style
- Line length 100, ruff rules E,F,W,I,B,UP,SIM
- Never commit secrets: the key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH is fake

## Gotchas
Whoosh's `Searcher.refresh()` reuses segment readers; open a new searcher instead.
"""

MEMORY_MD = """# Memory index
- [Testing feedback](feedback_testing.md) — how the user wants tests run
- Prefers small commits with imperative subjects
"""

TOPIC = """---
name: Testing feedback
description: Run the whole suite before saying a change is done
type: feedback
---

The user was burned by a partial test run once; always run `pytest -q -x`.
"""


def memories(project: Project) -> list[MemoryNote]:
    return [MemoryNote(read_document(p)) for p in project.vault.memories_dir.rglob("*.md")]


def test_mcp_memory_jsonl(project: Project, tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text(MCP_JSONL)
    before = snapshot(project.vault.root)
    dry = project.import_notes(src, dry_run=True)
    assert dry["format"] == "mcp-memory" and dry["planned"] == 3
    assert dry["by_type"] == {"context": 2, "gotcha": 1}
    assert snapshot(project.vault.root) == before  # a dry run writes nothing
    done = project.import_notes(src)
    assert len(done["created"]) == 3
    notes = {n.title: n for n in memories(project)}
    payments = notes["payments-service (service)"]
    assert payments.type == "context" and "- Written in Go" in payments.content
    assert set(payments.str_list("tags")) >= {"service", "imported", "from-mcp-memory"}
    assert notes["Retry storms (warning)"].type == "gotcha"
    assert "- owns payments-service" in notes["Kate (person)"].content
    [hit] = project.search("exponential backoff jitter")
    assert hit.title == "Retry storms (warning)"
    again = project.import_notes(src)
    assert again["created"] == [] and again["skipped"] == 3  # re-import is a no-op


def test_bad_jsonl_refuses_and_writes_nothing(project: Project, tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text(MCP_JSONL + '{"type": "entity", "name": "x"\n')
    before = snapshot(project.vault.root)
    with pytest.raises(InvalidInput, match=r"memory.jsonl:5: not JSON"):
        project.import_notes(src)
    src.write_text('{"type": "edge"}\n')
    with pytest.raises(InvalidInput, match="unknown line type 'edge'"):
        project.import_notes(src)
    with pytest.raises(InvalidInput, match="no such file"):
        project.import_notes(tmp_path / "missing.jsonl")
    assert snapshot(project.vault.root) == before


def test_basic_memory_notes(project: Project, tmp_path: Path) -> None:
    folder = tmp_path / "basic-memory"
    folder.mkdir()
    (folder / "search-design.md").write_text(BASIC_NOTE)
    (folder / "plain.md").write_text("---\ntitle: Plain idea\ntype: note\npermalink: plain\n"
                                     "---\n\nKeep the CLI thin.\n")
    report = project.import_notes(folder)
    assert report["format"] == "basic-memory"
    assert report["by_type"] == {"decision": 1, "gotcha": 1, "discovery": 1, "context": 1}
    notes = {n.type: n for n in memories(project)}
    assert notes["decision"].content.startswith("Use BM25F with field boosts")
    assert "#ranking" not in notes["decision"].content
    assert set(notes["decision"].str_list("tags")) >= {"search", "design", "ranking"}
    assert notes["context"].title == "Plain idea"
    assert notes["gotcha"].str_list("tags")[:3] == ["search", "design", "whoosh"]


def test_claude_md_and_auto_memory(project: Project, tmp_path: Path, run_ocm) -> None:
    claude = project.root / "CLAUDE.md"
    claude.write_text(CLAUDE_MD)
    out = run_ocm("import", str(claude), "--dry-run").stdout
    assert "Would write 1 gotcha, 2 principle, 2 procedure from claude" in out
    assert memories(project) == []
    project.import_notes(claude)
    notes = memories(project)
    texts = {n.content: n for n in notes}
    assert texts["`make test` runs ruff and pytest"].type == "procedure"
    assert "commands" in texts["`make test` runs ruff and pytest"].str_list("tags")
    secret = next(n for n in notes if "Never commit secrets" in n.content)
    assert secret.type == "principle" and "sk-ant-api03" not in secret.content
    assert "[REDACTED" in secret.content  # redacted like every write
    assert not any(n.content.startswith("@") for n in notes)

    auto = tmp_path / "claude-projects" / "-work-proj" / "memory"
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text(MEMORY_MD)
    (auto / "feedback_testing.md").write_text(TOPIC)
    report = json.loads(run_ocm("import", str(auto), "--json").stdout)
    assert report["format"] == "claude" and report["by_type"] == {"preference": 1,
                                                                  "principle": 1}
    by_title = {n.title: n for n in memories(project)}
    topic = by_title["Testing feedback"]
    assert topic.type == "principle" and "pytest -q -x" in topic.content
    assert "Prefers small commits with imperative subjects" in by_title


def test_export_json_and_restore(project: Project, tmp_path: Path, run_ocm) -> None:
    from ocm.vault.sessions import CheckpointInput

    sid = project.checkpoint(CheckpointInput(goal="Back up the vault"), tool="codex").id
    m = project.remember("Backups are JSON", "decision", session=sid, tags=["backup"])
    data = json.loads(run_ocm("export", "--format", "json").stdout)
    assert data["format"] == "ocm-export" and data["counts"] == {"session": 1, "memory": 1,
                                                                  "transcript": 0}
    note = next(n for n in data["notes"] if n["id"] == m.id)
    assert note["markdown"] == m.path.read_text() and note["frontmatter"]["tags"] == ["backup"]
    assert isinstance(note["frontmatter"]["created"], str)
    assert run_ocm("export", m.id).stdout.strip() == str(m.path.resolve())  # old form
    backup = tmp_path / "backup.json"
    run_ocm("export", "-o", str(backup))
    other = Project.open(cwd=make_repo(tmp_path / "fresh"))
    other.init()
    restored = other.import_notes(backup)
    assert restored["format"] == "ocm" and len(restored["created"]) == 2
    mine = {k: v for k, v in snapshot(project.vault.root).items() if k.endswith(".md")}
    theirs = {k: v for k, v in snapshot(other.vault.root).items() if k.endswith(".md")}
    assert mine == theirs
    assert [h.id for h in other.search("backups json")] == [m.id]
    assert other.import_notes(backup)["skipped"] == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "ocm-export", "notes": [
        {"path": "../escape.md", "markdown": "x"}]}))
    with pytest.raises(InvalidInput, match="unsafe path"):
        other.import_notes(bad)


def test_reimport_of_records_that_held_secrets_is_a_no_op(project: Project,
                                                          tmp_path: Path) -> None:
    claude = tmp_path / "CLAUDE.md"
    claude.write_text(CLAUDE_MD)
    first = project.import_notes(claude)
    assert len(first["created"]) == 5
    before = snapshot(project.vault.root)
    again = project.import_notes(claude)
    assert again["created"] == [] and again["skipped"] == 5
    assert {n["action"] for n in again["items"]} == {"skip (already in the vault)"}
    assert {k: v for k, v in snapshot(project.vault.root).items() if k.endswith(".md")} == {
        k: v for k, v in before.items() if k.endswith(".md")}


@pytest.mark.parametrize(("name", "text"), [
    ("README.md", "# demo\n\nA project that does things.\n\n- install it\n- run it\n"),
    ("pyproject.toml", '[project]\nname = "demo"\nversion = "1.0"\n'),
    ("settings.json", '{"editor.tabSize": 4}\n'),
])
def test_auto_format_refuses_what_it_does_not_recognise(project: Project, tmp_path: Path,
                                                        run_ocm, name: str, text: str) -> None:
    src = tmp_path / name
    src.write_text(text)
    before = snapshot(project.vault.root)
    with pytest.raises(InvalidInput, match="cannot tell what .* holds.*--format"):
        project.import_notes(src)
    done = run_ocm("import", str(src), check=False)
    assert done.returncode == 1 and done.stderr.startswith("error: cannot tell what")
    assert done.stderr.count("\n") == 1
    assert snapshot(project.vault.root) == before
    empty = tmp_path / "empty-folder"
    empty.mkdir(exist_ok=True)
    (empty / "todo.md").write_text("# todo\n- a thing\n")
    with pytest.raises(InvalidInput, match="cannot tell what"):
        project.import_notes(empty)
    # Named explicitly, a Markdown file is still importable as CLAUDE.md-style notes.
    if name == "README.md":
        assert project.import_notes(src, fmt="claude", dry_run=True)["planned"] >= 1


def test_topic_files_with_toml_or_json_frontmatter(project: Project, tmp_path: Path) -> None:
    """Other tools' notes carry TOML (`+++`) or JSON frontmatter as well as YAML: each is read
    for its fields (python-frontmatter), and the frontmatter never becomes a record's text."""
    auto = tmp_path / "memory"
    auto.mkdir()
    (auto / "MEMORY.md").write_text(MEMORY_MD)
    (auto / "toml_topic.md").write_text(
        '+++\nname = "Release steps"\ntype = "reference"\n'
        'description = "Tag, then push the tag"\n+++\n\nRun `make release` after tagging.\n')
    (auto / "json_topic.md").write_text(
        '{\n  "name": "Editor preference",\n  "type": "user"\n}\n\nTabs are four spaces.\n')
    project.import_notes(auto)
    by_title = {n.title: n for n in memories(project)}
    toml_note, json_note = by_title["Release steps"], by_title["Editor preference"]
    assert toml_note.type == "reference"
    assert toml_note.content.startswith("Tag, then push the tag")
    assert "make release" in toml_note.content and "+++" not in toml_note.content
    assert json_note.type == "preference" and json_note.content == "Tabs are four spaces."


@pytest.mark.parametrize("head", ['+++\nname = "unclosed\n+++\n', "---\nname: [a\n---\n"])
def test_bad_frontmatter_in_an_import_is_one_line_and_writes_nothing(
        project: Project, tmp_path: Path, run_ocm, head: str) -> None:
    auto = tmp_path / "memory"
    auto.mkdir()
    (auto / "MEMORY.md").write_text(MEMORY_MD)
    (auto / "broken.md").write_text(head + "\nbody\n")
    before = snapshot(project.vault.root)
    out = run_ocm("import", str(auto), "--format", "claude", check=False)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "broken.md: bad frontmatter" in out.stderr
    assert snapshot(project.vault.root) == before

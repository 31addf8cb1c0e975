"""Input no one writes by hand (issue #16): a 300-character id, JSON nested 100,000 deep.
The CLI answers with one line and exit 1 and changes nothing; hooks log and exit 0 and write
no note. The installed `ocm` and `ocm-hook` in fresh processes, on a real vault."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ocm.project import Project
from tests.conftest import snapshot
from tests.fixtures.hooks.harness import HOOK

LONG = "a" * 300
DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
Run = Callable[..., subprocess.CompletedProcess[str]]


def _one_line_error(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr


@pytest.fixture
def vault(project: Project) -> Project:
    project.remember("The staging database is reset every Sunday night.", "convention")
    return project


@pytest.mark.parametrize("args", [
    ("get", LONG), ("show", LONG), ("show", f"{LONG}#Goal"), ("update", LONG, "--title", "x"),
    ("resolve", LONG), ("export", LONG), ("verify", LONG), ("reactivate", LONG),
    ("forget", LONG), ("files", LONG),
], ids=lambda args: args[0] + ("#" if "#" in args[1] else ""))
def test_a_300_character_id_is_a_one_line_error(vault: Project, run_ocm: Run,
                                                 args: tuple[str, ...]) -> None:
    before = snapshot(vault.vault.root)
    _one_line_error(run_ocm(*args, check=False))
    assert snapshot(vault.vault.root) == before


def test_a_300_character_host_session_id_is_one_session(vault: Project, run_ocm: Run) -> None:
    """A host id longer than ocm keeps (200 characters) still names one session."""
    run_ocm("checkpoint", "--session", LONG, "--tool", "codex", "--goal", "Port the parser.")
    run_ocm("checkpoint", "--session", LONG, "--done", "wrote the lexer")
    notes = sorted((vault.vault.root / "sessions").glob("*.md"))
    assert len(notes) == 1
    text = notes[0].read_text()
    assert "Port the parser." in text and "wrote the lexer" in text


@pytest.mark.parametrize(("name", "body", "fmt"), [
    ("deep.json", DEEP_LIST, None), ("deep.jsonl", DEEP_LIST, "mcp-memory"),
    ("deep.json", DEEP_OBJECT, "ocm"), ("objects.jsonl", DEEP_OBJECT, "mcp-memory"),
])
def test_import_of_deeply_nested_json_is_a_one_line_error(
        vault: Project, run_ocm: Run, tmp_path: Path, name: str, body: str,
        fmt: str | None) -> None:
    source = tmp_path / name
    source.write_text(body + "\n")
    before = snapshot(vault.vault.root)
    _one_line_error(run_ocm("import", str(source), *(["--format", fmt] if fmt else []),
                            check=False))
    assert snapshot(vault.vault.root) == before


@pytest.mark.parametrize("host", ["claude-code", "codex", "gemini", "cursor", "vscode",
                                  "opencode", "windsurf"])
@pytest.mark.parametrize("body", [DEEP_LIST, DEEP_OBJECT], ids=["list", "object"])
def test_hooks_take_deep_json_and_write_no_note(vault: Project, host: str, body: str) -> None:
    before = {rel: data for rel, data in snapshot(vault.vault.root).items()
              if not rel.startswith(".hooks/")}
    done = subprocess.run([HOOK, host], input=body.encode(), capture_output=True,
                          cwd=vault.vault.root.parent, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    after = {rel: data for rel, data in snapshot(vault.vault.root).items()
             if not rel.startswith(".hooks/")}
    assert after == before


def test_a_hook_with_a_300_character_session_id_keeps_200(vault: Project,
                                                          run_ocm: Run) -> None:
    payload = {"session_id": LONG, "hook_event_name": "SessionStart", "source": "startup",
               "cwd": str(vault.vault.root.parent), "transcript_path": ""}
    done = subprocess.run([HOOK, "claude-code", "SessionStart"],
                          input=json.dumps(payload).encode(), capture_output=True,
                          cwd=vault.vault.root.parent, timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert "additionalContext" in json.loads(done.stdout)["hookSpecificOutput"]
    # The agent's checkpoint naming the same long id lands in that session.
    run_ocm("checkpoint", "--session", LONG, "--goal", "Port the parser.")
    notes = sorted((vault.vault.root / "sessions").glob("*.md"))
    assert len(notes) == 1
    text = notes[0].read_text()
    assert f"agent_session_id: {'a' * 200}\n" in text and "Port the parser." in text

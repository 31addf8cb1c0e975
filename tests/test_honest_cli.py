"""Honest context and a consistent CLI (issue #13): no vault is said with how to make one,
`checkpoint` never writes into another tool's session, usage errors are one line."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("args", [
    ["remember", "x is y", "--type", "gotcha"],
    ["checkpoint", "--goal", "g"],
    ["search", "anything"],
    ["list"],
    ["memories"],
    ["recall"],
    ["files", "some-session"],
    ["show", "some-id"],
    ["rebuild-index"],
])
def test_no_vault_says_so_and_creates_nothing(run_ocm, repo: Path, args: list[str]) -> None:
    done = run_ocm(*args, check=False)
    assert done.returncode == 1, done.stdout
    assert done.stderr == (f"error: no ocm vault at {repo.resolve()}/.openCodeMemory: run "
                           f"`ocm init` in {repo.resolve()} to create one\n")
    assert "No results" not in done.stdout
    assert not (repo / ".openCodeMemory").exists()


def test_a_named_vault_that_does_not_exist(run_ocm, repo: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    for args in (["search", "x"], ["list"], ["remember", "x", "--type", "gotcha"]):
        done = run_ocm(*args, "--vault", str(missing), check=False)
        assert done.returncode == 1
        assert done.stderr.startswith(f"error: no ocm vault at {missing}: `ocm init --vault")
        assert not missing.exists()
    status = run_ocm("status", "--vault", str(missing), "--json")
    assert '"initialised": false' in status.stdout


def test_checkpoint_without_session_uses_the_callers_tool_or_refuses(run_ocm,
                                                                     repo: Path) -> None:
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    run_ocm("init", "--agents", "none")
    project = Project.open(cwd=repo)
    claude = project.checkpoint(CheckpointInput(goal="Claude's work"), tool="claude-code")
    before = claude.path.read_bytes()
    codex = project.checkpoint(CheckpointInput(goal="Codex's work"), tool="codex")
    # Two tools have open sessions: a checkpoint that names neither is refused.
    done = run_ocm("checkpoint", "--done", "step one", check=False)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "sessions of 2 tools are open (claude-code, codex)" in done.stderr
    assert claude.path.read_bytes() == before and "step one" not in codex.path.read_text()
    # The caller's own tool picks its own open session, whichever is newer.
    run_ocm("checkpoint", "--tool", "Claude Code", "--done", "step one")
    assert "step one" in claude.path.read_text() and "step one" not in codex.path.read_text()
    # One tool open: no ambiguity.
    project.checkpoint(CheckpointInput(status="closed"), session_id=codex.id)
    run_ocm("checkpoint", "--done", "step two")
    assert "step two" in claude.path.read_text()


def test_unknown_tool_values_are_refused(run_ocm, repo: Path) -> None:
    run_ocm("init", "--agents", "none")
    for args in (["checkpoint", "--tool", "claud", "--goal", "g"], ["list", "--tool", "claud"],
                 ["search", "x", "--tool", "claud"]):
        done = run_ocm(*args, check=False)
        assert done.returncode == 1, args
        assert done.stderr.startswith("error: unknown tool 'claud': expected one of "
                                      "claude-code, cursor")
    assert not list((repo / ".openCodeMemory" / "sessions").glob("*.md"))
    assert run_ocm("list", "--tool", "codex").returncode == 0
    assert run_ocm("checkpoint", "--tool", "unknown", "--goal", "g").returncode == 0

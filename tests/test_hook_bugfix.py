"""Slice 4: a failed command, then edits, then the same command passing -> a low-importance
`bug_fix` memory linking the error line, the command and the files (no LLM)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.markdown import Document  # noqa: E402
from ocm.vault.memories import MemoryNote  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

SID = "bugfix-session-1"




def send(repo: Path, env: dict[str, str], host: str, fixture: str, event: str,
         **override) -> None:
    out = h.run_hook([host, event], h.payload(host, fixture, repo, SID, **override), env,
                     cwd=repo)
    assert out.returncode == 0
    if event not in ("session-start", "stop"):  # a Stop may nudge (test_hook_nudge.py)
        assert out.stdout in (b"", b"{}\n")


def memories(repo: Path) -> list[MemoryNote]:
    folder = repo / ".openCodeMemory" / "memories" / "bug_fix"
    return [MemoryNote(Document.parse(p.read_text())) for p in sorted(folder.glob("*.md"))]


def test_claude_fail_edit_pass_records_bug_fix(repo: Path, env: dict[str, str]) -> None:
    send(repo, env, "claude-code", "session-start", "session-start")
    send(repo, env, "claude-code", "post-tool-use-failure-bash", "post-tool-use-failure")
    (repo / "src").mkdir()
    (repo / "src" / "backoff.py").write_text("x")
    send(repo, env, "claude-code", "post-tool-use-write", "post-tool-use")
    # A read in between (fold) must not lose the pending failure.
    h.fold(repo)
    send(repo, env, "claude-code", "post-tool-use-edit", "post-tool-use")
    send(repo, env, "claude-code", "post-tool-use-bash", "post-tool-use")
    send(repo, env, "claude-code", "stop", "stop")
    [memo] = memories(repo)
    assert memo.type == "bug_fix" and memo.importance <= 3 and memo.status == "active"
    assert "pytest -q tests/test_backoff.py" in memo.content
    assert "AssertionError: assert 9 == 8" in memo.content
    assert memo.str_list("files") == ["src/backoff.py", "README.md"]
    [session] = h.sessions(repo)
    assert memo.session == session.stem
    text = session.read_text()
    assert "## Failed Commands" in text and f"bug_fix memory {memo.id}" in text
    found = json.loads(h.ocm_here(["search", "AssertionError backoff", "--kind", "memory",
                                  "--json"], env, repo).stdout)
    assert [hit["id"] for hit in found] == [memo.id]
    # Folding again (a duplicate journal) never creates a second memory.
    send(repo, env, "claude-code", "post-tool-use-failure-bash", "post-tool-use-failure")
    send(repo, env, "claude-code", "post-tool-use-bash", "post-tool-use")
    h.fold(repo)
    assert len(memories(repo)) == 1


def test_pass_without_edits_or_trivial_commands_record_nothing(repo: Path,
                                                               env: dict[str, str]) -> None:
    send(repo, env, "claude-code", "session-start", "session-start")
    send(repo, env, "claude-code", "post-tool-use-failure-bash", "post-tool-use-failure")
    send(repo, env, "claude-code", "post-tool-use-bash", "post-tool-use")  # flaky, no edits
    grep = {"tool_name": "Bash", "tool_input": {"command": "grep -rn TODO src"}}
    send(repo, env, "claude-code", "post-tool-use-failure-bash", "post-tool-use-failure",
         **grep)
    send(repo, env, "claude-code", "post-tool-use-edit", "post-tool-use")
    send(repo, env, "claude-code", "post-tool-use-bash", "post-tool-use", **grep)
    h.fold(repo)
    assert memories(repo) == []
    text = h.sessions(repo)[0].read_text()
    assert "pytest -q tests/test_backoff.py" in text and "grep -rn" not in text


def test_codex_exit_code_fail_then_pass(repo: Path, env: dict[str, str]) -> None:
    send(repo, env, "codex", "session-start", "session-start")
    send(repo, env, "codex", "post-tool-use-bash", "post-tool-use")
    send(repo, env, "codex", "post-tool-use-apply-patch", "post-tool-use")
    send(repo, env, "codex", "post-tool-use-bash", "post-tool-use",
         tool_response="running 3 tests\ntest result: ok. 3 passed; 0 failed\n")
    send(repo, env, "codex", "session-end", "session-end")
    [memo] = memories(repo)
    assert "cargo test" in memo.content and "error[E0425]" in memo.content
    assert set(memo.str_list("files")) == {"src/tokenizer.py", "README.md", "old_parser.py"}

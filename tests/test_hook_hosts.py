"""Slice 2: Cursor, Codex, Gemini CLI and VS Code payloads through `ocm-hook`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.markdown import Document  # noqa: E402
from ocm.vault.sessions import SessionNote  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process


def run(host: str, fixture: str, repo: Path, env: dict[str, str], sid: str,
        event: str | None = None, invoked: str | None = None) -> bytes:
    event = event or fixture
    out = h.run_hook([invoked or host, event], h.payload(host, fixture, repo, sid), env,
                     cwd=repo)
    assert out.returncode == 0, out.stderr
    return out.stdout


def the_note(repo: Path, env: dict[str, str]) -> SessionNote:
    h.fold(repo)  # any read folds the journal first
    [path] = h.sessions(repo)
    return SessionNote(Document.parse(path.read_text()))


def context_of(host: str, stdout: bytes) -> str:
    data = json.loads(stdout)
    if host == "cursor":
        return data["additional_context"]
    return data["hookSpecificOutput"]["additionalContext"]


def test_cursor_session(repo: Path, env: dict[str, str]) -> None:
    sid = "cursor-conv-1"
    out = run("cursor", "session-start", repo, env, sid)
    assert "Current ocm session id" in context_of("cursor", out)
    assert json.loads(run("cursor", "before-submit-prompt", repo, env, sid)) == {
        "continue": True}
    (repo / "store.py").write_text("class Store: ...\n")
    for fixture in ("after-file-edit", "after-file-edit-new"):
        assert json.loads(run("cursor", fixture, repo, env, sid,
                              event="after-file-edit")) == {}
    assert json.loads(run("cursor", "after-shell-execution", repo, env, sid)) == {}
    for fixture in ("pre-compact", "stop", "session-end"):
        assert json.loads(run("cursor", fixture, repo, env, sid)) == {}
    note = the_note(repo, env)
    assert note.tool == "cursor" and note.fm["agent_session_id"] == sid
    assert note.files() == {"store.py": "created", "README.md": "modified"}
    assert note.status == "closed" and note.fm["trigger"] == "context_limit"
    assert note.items("prompts") == ["Rename the cache module to store"]


def test_cursor_also_running_claude_hooks_is_deduplicated(repo: Path,
                                                          env: dict[str, str]) -> None:
    """Cursor runs `.claude/settings.json` hooks too: same conversation, one note."""
    sid = "cursor-conv-2"
    first = run("cursor", "session-start", repo, env, sid)
    second = run("cursor", "session-start", repo, env, sid, invoked="claude-code")
    assert "Current ocm session id" in context_of("cursor", first)
    assert second == b"" or "additional_context" not in json.loads(second)
    run("cursor", "after-file-edit", repo, env, sid)
    edit = json.loads(h.payload("cursor", "after-file-edit", repo, sid))
    claude_style = {**edit, "hook_event_name": "postToolUse", "tool_name": "Write",
                    "tool_input": {"file_path": edit["file_path"]}}
    out = h.run_hook(["claude-code", "post-tool-use"], json.dumps(claude_style).encode(), env,
                     cwd=repo)
    assert out.returncode == 0
    note = the_note(repo, env)
    assert note.tool == "cursor" and note.files() == {"README.md": "modified"}


def test_codex_session_with_apply_patch(repo: Path, env: dict[str, str]) -> None:
    sid = "codex-thread-1"
    assert "Current ocm session id" in context_of("codex", run("codex", "session-start", repo,
                                                               env, sid))
    assert run("codex", "user-prompt-submit", repo, env, sid) == b""
    out = run("codex", "post-tool-use-apply-patch", repo, env, sid, event="post-tool-use")
    assert out == b""
    run("codex", "post-tool-use-bash", repo, env, sid, event="post-tool-use")
    stop = run("codex", "stop", repo, env, sid)  # Stop: JSON (here a nudge) or nothing
    assert json.loads(stop)["decision"] == "block"
    run("codex", "pre-compact", repo, env, sid)
    run("codex", "session-end", repo, env, sid)
    note = the_note(repo, env)
    assert note.tool == "codex"
    assert note.files() == {"src/tokenizer.py": "created", "README.md": "modified",
                            "old_parser.py": "deleted"}
    text = h.sessions(repo)[0].read_text()
    assert "## Failed Commands" in text and "cargo test" in text and "E0425" in text


def test_gemini_session(repo: Path, env: dict[str, str]) -> None:
    sid = "gemini-session-1"
    assert "Current ocm session id" in context_of("gemini", run("gemini", "session-start",
                                                                repo, env, sid))
    # Gemini parses stdout as JSON: every event prints exactly one object.
    assert json.loads(run("gemini", "before-agent", repo, env, sid)) == {}
    for fixture in ("after-tool-write-file", "after-tool-replace", "after-tool-shell"):
        assert json.loads(run("gemini", fixture, repo, env, sid, event="after-tool")) == {}
    for fixture in ("pre-compress", "after-agent", "session-end"):
        out = json.loads(run("gemini", fixture, repo, env, sid))
        assert out == ({"decision": "deny", "reason": out.get("reason")}
                       if fixture == "after-agent" else {}), out  # AfterAgent: a nudge
    note = the_note(repo, env)
    assert note.tool == "gemini" and note.status == "closed"
    assert note.files() == {"export/nightly.py": "created", "README.md": "modified"}
    assert note.items("prompts") == ["Why does the nightly export time out?"]


def test_vscode_session_camel_case(repo: Path, env: dict[str, str]) -> None:
    sid = "vscode-session-1"
    out = run("vscode", "session-start", repo, env, sid)
    assert "Current ocm session id" in context_of("vscode", out)
    assert run("vscode", "user-prompt-submit", repo, env, sid) == b""
    for fixture in ("post-tool-use-create", "post-tool-use-edit"):
        assert run("vscode", fixture, repo, env, sid, event="post-tool-use") == b""
    run("vscode", "pre-compact", repo, env, sid)
    run("vscode", "stop", repo, env, sid)
    note = the_note(repo, env)
    assert note.tool == "vscode" and note.fm["agent_session_id"] == sid
    assert note.files() == {"ui/theme.ts": "created", "README.md": "modified"}
    assert note.status == "open"  # VS Code has no session end; Stop only folds


def test_vscode_running_claude_settings_hooks(repo: Path, env: dict[str, str]) -> None:
    """VS Code reads `.claude/settings.json` and sends camelCase payloads to its commands."""
    sid = "vscode-session-2"
    out = run("vscode", "session-start", repo, env, sid, invoked="claude-code")
    assert "Current ocm session id" in context_of("vscode", out)
    run("vscode", "post-tool-use-create", repo, env, sid, event="post-tool-use",
        invoked="claude-code")
    note = the_note(repo, env)
    assert note.tool == "vscode" and note.files() == {"ui/theme.ts": "created"}


@pytest.mark.parametrize("host", ["cursor", "codex", "gemini", "vscode"])
def test_garbage_for_every_host(repo: Path, env: dict[str, str], host: str) -> None:
    for data in (b"", b"{oops", b'"just a string"', b'{"hook_event_name": 5}'):
        for event in ("session-start", "stop"):
            out = h.run_hook([host, event], data, env, cwd=repo)
            assert out.returncode == 0
            if host in ("cursor", "gemini"):
                assert isinstance(json.loads(out.stdout), dict)  # JSON on every path
            else:
                assert out.stdout == b""
    assert h.sessions(repo) == []


def test_worktree_shares_the_main_vault(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    tree = tmp_path / "wt"
    h.git(repo, "worktree", "add", "-q", str(tree), "-b", "feature")
    sid = "codex-worktree-1"
    out = h.run_hook(["codex", "session-start"], h.payload("codex", "session-start", tree, sid),
                     env, cwd=tree)
    assert "Current ocm session id" in context_of("codex", out.stdout)
    h.run_hook(["codex", "post-tool-use"],
               h.payload("codex", "post-tool-use-apply-patch", tree, sid), env, cwd=tree)
    assert not (tree / ".openCodeMemory").exists()
    note = the_note(repo, env)
    assert note.files() == {"src/tokenizer.py": "created", "README.md": "modified",
                            "old_parser.py": "deleted"}


def test_wrong_host_payloads_are_harmless(repo: Path, env: dict[str, str]) -> None:
    """A payload from one host sent to another host's command: parsed leniently, never an
    output the receiving host would reject."""
    crossed = [("gemini", "after-tool", "codex", "post-tool-use-apply-patch"),
               ("cursor", "session-start", "claude-code", "session-start"),
               ("codex", "stop", "gemini", "after-agent"),
               ("vscode", "post-tool-use", "cursor", "after-file-edit"),
               ("claude-code", "user-prompt-submit", "gemini", "before-agent")]
    for host, event, source, fixture in crossed:
        out = h.run_hook([host, event], h.payload(source, fixture, repo, f"x-{host}"), env,
                         cwd=repo)
        assert out.returncode == 0
        if host in ("cursor", "gemini") or out.stdout:  # JSON objects only, never text
            assert isinstance(json.loads(out.stdout), dict)

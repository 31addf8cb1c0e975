"""Issue #14: the hosts as they really behave. Whole sessions replayed through `ocm-hook`
from the payloads the real Codex CLI 0.169.0, Gemini CLI 0.61.0 and Claude Code 2.1.197 sent
(tests/fixtures/capture/payloads, copied from shared/reference/hosts; the project path
/home/dev/shop becomes the test repo), plus the documented formats of Cursor and VS Code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.agents import common as c  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

RECORDED = Path(__file__).parent / "fixtures" / "capture"
GEMINI_TRANSCRIPT = RECORDED / "transcripts" / "gemini" / "session-2026-11-23T13-11-16c090fe.jsonl"


def recorded(host: str, root: Path, transcript: Path | None = None) -> list[tuple[str, bytes]]:
    """(kebab event, payload) in the order the host fired them."""
    out = []
    for path in sorted((RECORDED / "payloads" / host).glob("*.json")):
        data = json.loads(path.read_text().replace("/home/dev/shop", str(root)))
        if transcript is not None:
            data["transcript_path"] = str(transcript)
        out.append((path.stem.split("-", 1)[1], json.dumps(data).encode()))
    return out


def replay(host: str, repo: Path, env: dict[str, str], transcript: Path | None = None,
           skip: tuple[str, ...] = ()) -> None:
    for event, data in recorded(host, repo, transcript):
        if event in skip:
            continue
        out = h.run_hook([host, event], data, env, cwd=repo)
        assert out.returncode == 0, out.stderr


def front(path: Path) -> dict:
    return Document.parse(path.read_text()).frontmatter.data


def bug_fixes(repo: Path) -> list[str]:
    folder = repo / ".openCodeMemory" / "memories" / "bug_fix"
    return [p.read_text() for p in sorted(folder.glob("*.md"))]


def test_codex_plain_text_shell_replies_capture_the_fix(repo: Path, env: dict[str, str]) -> None:
    """Codex's Bash `PostToolUse` is the command's output, no exit code (04: failed, 06:
    `ok`): the failure and the pass are read from the text, so the fix is captured."""
    replay("codex", repo, env)
    [session] = h.sessions(repo)
    text = session.read_text()
    assert "python3 src/check_codex.py" in text and "No such file or directory" in text
    [memo] = bug_fixes(repo)
    assert "python3 src/check_codex.py" in memo and "src/check_codex.py" in memo
    assert front(session)["status"] == "closed"


def test_codex_shell_outcomes_from_the_recorded_text() -> None:
    for name, ok in (("04-post-tool-use", False), ("06-post-tool-use", True)):
        data = json.loads((RECORDED / "payloads" / "codex" / f"{name}.json").read_text())
        ev = c.parse("codex", "codex", "post-tool-use", c.TOOL, data)
        assert ev.kind == c.SHELL and ev.ok is ok, name
        assert ("No such file or directory" in ev.error) is (not ok)


def test_codex_session_end_timeout_is_at_most_three_seconds(repo: Path,
                                                            env: dict[str, str]) -> None:
    """Codex clamps a SessionEnd timeout above 3 s and warns about it on every run."""
    assert h.ocm_here(["init", "--agents", "codex"], env, repo).returncode == 0
    hooks = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    [group] = hooks["SessionEnd"]
    assert 0 < group["hooks"][0]["timeout"] <= 3


def test_gemini_passing_shell_reply_without_exit_code(repo: Path, env: dict[str, str],
                                                     tmp_path: Path) -> None:
    """06 fails with `Exit Code: 2`; 10 passes with no `Exit Code:` line at all."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(GEMINI_TRANSCRIPT.read_bytes())
    replay("gemini", repo, env, transcript)
    [memo] = bug_fixes(repo)
    assert "python3 src/check_gemini.py" in memo and "src/check_gemini.py" in memo
    session = h.sessions(repo)[0]
    assert front(session)["status"] == "closed"
    # Six `PreCompress` (trigger: auto) with 10-token prompts: no compaction happened.
    assert front(session).get("trigger") != "context_limit"


def test_gemini_shell_outcomes_from_the_recorded_replies() -> None:
    for name, ok in (("06-after-tool", False), ("10-after-tool", True)):
        data = json.loads((RECORDED / "payloads" / "gemini" / f"{name}.json").read_text())
        ev = c.parse("gemini", "gemini", "after-tool", c.TOOL, data)
        assert ev.kind == c.SHELL and ev.ok is ok, name
    # Something that is not a shell reply at all stays unknown.
    assert c.gemini_shell_outcome("Command was cancelled by the user.") == (None, "")
    assert c.gemini_shell_outcome("Output: (empty)\nError: spawn ENOENT\n")[0] is False


def _big_prompt_transcript(tmp_path: Path, tokens: int) -> Path:
    lines = GEMINI_TRANSCRIPT.read_text().splitlines()
    turn = json.loads(next(ln for ln in reversed(lines) if '"tokens"' in ln))
    turn["tokens"]["input"] = tokens
    path = tmp_path / f"big-{tokens}.jsonl"
    path.write_text("\n".join([*lines, json.dumps(turn)]) + "\n")
    return path


def test_gemini_only_a_real_compression_sets_context_limit(repo: Path, env: dict[str, str],
                                                          tmp_path: Path) -> None:
    events = dict(recorded("gemini", repo, GEMINI_TRANSCRIPT))
    start, compress = events["session-start"], json.loads(events["pre-compress"])
    assert h.run_hook(["gemini", "session-start"], start, env, cwd=repo).returncode == 0
    session = h.sessions(repo)[0]
    small = json.dumps(compress).encode()
    h.run_hook(["gemini", "pre-compress"], small, env, cwd=repo)
    assert front(session).get("trigger") != "context_limit"
    missing = json.dumps({**compress, "transcript_path": str(tmp_path / "gone.jsonl")})
    h.run_hook(["gemini", "pre-compress"], missing.encode(), env, cwd=repo)
    assert front(session).get("trigger") != "context_limit"
    # A prompt of 600k tokens: Gemini really compresses before this model call.
    big = {**compress, "transcript_path": str(_big_prompt_transcript(tmp_path, 600_000))}
    h.run_hook(["gemini", "pre-compress"], json.dumps(big).encode(), env, cwd=repo)
    assert front(session)["trigger"] == "context_limit"


def test_gemini_manual_compress_sets_context_limit(repo: Path, env: dict[str, str]) -> None:
    events = dict(recorded("gemini", repo, GEMINI_TRANSCRIPT))
    h.run_hook(["gemini", "session-start"], events["session-start"], env, cwd=repo)
    manual = {**json.loads(events["pre-compress"]), "trigger": "manual"}
    h.run_hook(["gemini", "pre-compress"], json.dumps(manual).encode(), env, cwd=repo)
    assert front(h.sessions(repo)[0])["trigger"] == "context_limit"


def test_claude_recorded_session_still_captures_the_fix(repo: Path,
                                                        env: dict[str, str]) -> None:
    replay("claude-code", repo, env)
    [memo] = bug_fixes(repo)
    assert "python3 src/check_claude.py" in memo
    assert front(h.sessions(repo)[0])["status"] == "closed"


# --------------------------------------------------------------------------- Cursor


def _cursor(repo: Path, env: dict[str, str], fixture: str, sid: str, **override) -> None:
    out = h.run_hook(["cursor", fixture], h.payload("cursor", fixture, repo, sid, **override),
                     env, cwd=repo)
    assert out.returncode == 0


def test_cursor_after_shell_execution_exit_code(repo: Path, env: dict[str, str]) -> None:
    """Cursor's afterShellExecution carries command, output and exit code at the top level."""
    sid = "cursor-shell-1"
    _cursor(repo, env, "session-start", sid)
    _cursor(repo, env, "after-shell-execution", sid, exit_code=1,
            output="FAILED tests/test_app.py::test_total - AssertionError: assert 3 == 4")
    _cursor(repo, env, "after-file-edit", sid)
    _cursor(repo, env, "after-shell-execution", sid)
    _cursor(repo, env, "stop", sid)
    [memo] = bug_fixes(repo)
    assert "npm test" in memo and "AssertionError: assert 3 == 4" in memo


def test_cursor_shell_outcome_from_exit_code_not_words() -> None:
    data = {"conversation_id": "x", "cursor_version": "2.4.1", "command": "make lint",
            "output": "0 errors, no failures found", "exit_code": 2, "cwd": "/p"}
    ev = c.parse("cursor", "cursor", "after-shell-execution", c.SHELL, data)
    assert ev.ok is False and ev.command == "make lint"
    ev = c.parse("cursor", "cursor", "after-shell-execution", c.SHELL,
                 {**data, "exit_code": 0, "output": "error: none found"})
    assert ev.ok is True


# --------------------------------------------------------------------------- VS Code


def _vscode(repo: Path, env: dict[str, str], fixture: str, sid: str, invoked: str = "vscode",
            event: str | None = None) -> None:
    data = h.payload("vscode", fixture, repo, sid)
    out = h.run_hook([invoked, event or fixture], data, env, cwd=repo)
    assert out.returncode == 0


def test_vscode_running_both_hook_files_counts_an_edit_once(repo: Path,
                                                            env: dict[str, str]) -> None:
    """VS Code runs `.github/hooks/ocm.json` and `.claude/settings.json` for the same call."""
    sid = "vscode-double-1"
    for invoked in ("vscode", "claude-code"):
        _vscode(repo, env, "session-start", sid, invoked)
    for fixture in ("post-tool-use-create", "post-tool-use-edit"):
        for invoked in ("vscode", "claude-code"):
            _vscode(repo, env, fixture, sid, invoked, event="post-tool-use")
    h.fold(repo)
    [session] = h.sessions(repo)
    fm = front(session)
    assert fm["edits"] == 2, fm


def test_vscode_session_closed_when_the_next_starts(repo: Path, env: dict[str, str]) -> None:
    """VS Code has no session end: the next session start closes the previous one, with
    the git facts of that moment."""
    _vscode(repo, env, "session-start", "vscode-old")
    _vscode(repo, env, "post-tool-use-edit", "vscode-old", event="post-tool-use")
    (repo / "README.md").write_text("changed in the old session\n")
    h.git(repo, "commit", "-qam", "work of the old session")
    _vscode(repo, env, "session-start", "vscode-new")
    by_agent = {front(p)["agent_session_id"]: front(p) for p in h.sessions(repo)}
    old, new = by_agent["vscode-old"], by_agent["vscode-new"]
    assert old["status"] == "closed" and new["status"] == "open"
    assert h.git(repo, "rev-parse", "HEAD").startswith(str(old["git_sha_end"]))
    assert old["git_sha_end"] != old["git_sha_start"]


def test_vscode_session_closed_after_a_quiet_period(repo: Path, env: dict[str, str]) -> None:
    """With no next VS Code session, its session closes once it has been quiet for
    `OCM_QUIET_CLOSE_MINUTES` (30) and any hook of the project runs: closed like a session
    end, with the git facts of that moment. Never while it is still busy."""
    def at(stamp: str, **extra: str) -> dict[str, str]:
        return {**env, "OCM_NOW": f"2026-11-22T{stamp}", **extra}

    def claude(stamp: str, sid: str, **extra: str) -> None:
        out = h.run_hook(["claude-code", "session-start"], h.payload(
            "claude-code", "session-start", repo, sid), at(stamp, **extra), cwd=repo)
        assert out.returncode == 0

    _vscode(repo, at("09:00:00"), "session-start", "vscode-quiet")
    _vscode(repo, at("09:04:00"), "post-tool-use-edit", "vscode-quiet", event="post-tool-use")
    _vscode(repo, at("09:05:00"), "stop", "vscode-quiet")
    (repo / "README.md").write_text("changed after the turn\n")
    h.git(repo, "commit", "-qam", "later work")

    def vscode_note() -> dict:
        return next(front(p) for p in h.sessions(repo)
                    if front(p).get("agent_session_id") == "vscode-quiet")

    claude("09:30:00", "claude-a")  # 25 minutes: not quiet long enough
    assert vscode_note()["status"] == "open"
    claude("09:40:00", "claude-b", OCM_QUIET_CLOSE_MINUTES="0")  # 0 turns it off
    assert vscode_note()["status"] == "open"
    claude("09:36:00", "claude-c")  # 31 minutes after its last turn
    note = vscode_note()
    assert note["status"] == "closed", note
    assert h.git(repo, "rev-parse", "HEAD").startswith(str(note["git_sha_end"]))
    assert str(note["ended_at"]) == "2026-11-22 09:36:00"
    log = (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()
    assert "closed after 30 quiet minutes" in log
    # Claude Code has a session end of its own: its sessions are never closed this way.
    claude_notes = [front(p) for p in h.sessions(repo) if front(p).get("tool") == "claude-code"]
    assert len(claude_notes) == 3 and {n["status"] for n in claude_notes} == {"open"}


def test_vscode_busy_session_is_not_quiet(repo: Path, env: dict[str, str]) -> None:
    """Tool calls folded into the note after its last turn's end count as activity; an
    unreadable watch file is logged and started anew."""
    def at(stamp: str) -> dict[str, str]:
        return {**env, "OCM_NOW": f"2026-11-22T{stamp}"}

    _vscode(repo, at("09:00:00"), "session-start", "vscode-busy")
    _vscode(repo, at("09:50:00"), "post-tool-use-edit", "vscode-busy", event="post-tool-use")
    watch = repo / ".openCodeMemory" / ".hooks" / "quiet.json"
    assert "vscode-busy" in watch.read_text()
    out = h.run_hook(["claude-code", "session-start"], h.payload(
        "claude-code", "session-start", repo, "claude-x"), at("10:00:00"), cwd=repo)
    assert out.returncode == 0
    note = next(front(p) for p in h.sessions(repo) if front(p).get("tool") == "vscode")
    assert note["status"] == "open", note  # its edit at 09:50 was folded at 10:00
    watch.write_text("{not json")
    out = h.run_hook(["claude-code", "session-start"], h.payload(
        "claude-code", "session-start", repo, "claude-y"), at("10:01:00"), cwd=repo)
    assert out.returncode == 0
    assert "quiet.json unreadable" in (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()


def test_gemini_compression_threshold_edges(tmp_path: Path) -> None:
    """`trigger: auto` counts from the threshold on (100,000 prompt tokens, or
    OCM_GEMINI_COMPRESS_TOKENS), never below it; a floor that is not a number keeps 100,000."""
    from ocm.agents import gemini

    def real(tokens: int, env: dict[str, str]) -> bool:
        path = _big_prompt_transcript(tmp_path, tokens)
        return gemini.compaction_is_real({"trigger": "auto", "transcript_path": str(path)}, env)

    assert gemini.AUTO_COMPRESS_MIN_TOKENS == 100_000
    assert real(100_000, {}) and not real(99_999, {})
    assert real(5_000, {"OCM_GEMINI_COMPRESS_TOKENS": "5000"})
    assert not real(4_999, {"OCM_GEMINI_COMPRESS_TOKENS": "5000"})
    assert not real(99_999, {"OCM_GEMINI_COMPRESS_TOKENS": "lots"})

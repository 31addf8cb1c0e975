"""Hooks and huge or odd transcripts (issue #31): `ocm-hook claude-code stop` in a fresh
process, after the recorded Claude Code session replayed on a real vault. A fold reads at most
MAX_FOLD_BYTES; a line nested too deeply or longer than a fold is skipped and logged and never
blocks the lines after it; a last line without its newline is folded once; an identical hook
payload that is the fixing edit between a failed and a passing command still makes a bug_fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocm.vault import transcripts as vt
from tests.fixtures.hooks import harness as h
from tests.test_capture import _payloads, _transcripts, replay, world  # noqa: F401 - fixture

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

World = tuple[Path, dict[str, str], Path]


def _turn(prompt: str, answer: str, second: int) -> str:
    records = [
        {"type": "user", "timestamp": f"2026-11-23T13:20:{second:02d}.000Z",
         "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "timestamp": f"2026-11-23T13:20:{second + 1:02d}.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}}]
    return "".join(json.dumps(r) + "\n" for r in records)


def _stop(world: World) -> None:
    repo, env, home = world
    done = h.run_hook(["claude-code", "stop"], dict(_payloads("claude-code", repo, home))["stop"],
                      env, cwd=repo)
    assert done.returncode == 0, done.stderr


def _log(repo: Path) -> str:
    return (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()


def test_a_line_nested_too_deeply_is_skipped_and_the_next_lines_fold(world: World) -> None:
    repo, env, home = world
    target = replay("claude-code", repo, env, home)
    with target.open("a") as handle:
        handle.write('{"type": "user", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
        handle.write(_turn("why is the deep line skipped", "Because it is too deep.", 10))
    _stop(world)
    [transcript] = _transcripts(repo)
    text = transcript.read_text()
    assert "why is the deep line skipped" in text and "Because it is too deep." in text
    assert vt.read_offset(transcript)[0] == target.stat().st_size
    assert "1 line(s) nested too deeply skipped" in _log(repo)


def test_a_last_line_without_its_newline_is_folded_once(world: World) -> None:
    repo, env, home = world
    target = replay("claude-code", repo, env, home)
    with target.open("a") as handle:
        handle.write(_turn("add the retry budget", "Added the retry budget.", 20).rstrip("\n"))
    _stop(world)
    [transcript] = _transcripts(repo)
    assert "Added the retry budget." in transcript.read_text()
    assert vt.read_offset(transcript)[0] == target.stat().st_size  # nothing left to re-read
    # The host finishes the line and goes on: the newline is a blank line, the turn is new.
    with target.open("a") as handle:
        handle.write("\n" + _turn("now document it", "Documented.", 30))
    _stop(world)
    text = transcript.read_text()
    assert text.count("Added the retry budget.") == 1 and "Documented." in text


def test_a_fold_reads_at_most_its_cap_and_the_next_one_goes_on(world: World) -> None:
    repo, env, home = world
    target = replay("claude-code", repo, env, home)
    start = target.stat().st_size
    big = "word " * 600_000  # 3 MB of assistant text per turn, 12 MB in all
    with target.open("a") as handle:
        for n in range(4):
            handle.write(_turn(f"big turn number {n}", f"answer {n} {big}", 10 + 2 * n))
    _stop(world)
    [transcript] = _transcripts(repo)
    first = vt.read_offset(transcript)[0]
    assert start < first <= start + vt.MAX_FOLD_BYTES < target.stat().st_size
    assert "big turn number 0" in transcript.read_text()
    assert "big turn number 3" not in transcript.read_text()
    with target.open("a") as handle:  # the next turn's end folds the rest
        handle.write(_turn("a small turn", "Small answer.", 40))
    _stop(world)
    offset = vt.read_offset(transcript)[0]
    if offset < target.stat().st_size:  # three caps' worth: one more turn's end
        with target.open("a") as handle:
            handle.write(_turn("another small turn", "Another answer.", 50))
        _stop(world)
    text = transcript.read_text()
    assert all(f"big turn number {n}" in text for n in range(4)) and "Small answer." in text
    assert vt.read_offset(transcript)[0] == target.stat().st_size


def test_a_line_longer_than_a_fold_is_skipped_and_logged(world: World) -> None:
    repo, env, home = world
    target = replay("claude-code", repo, env, home)
    with target.open("a") as handle:
        handle.write(json.dumps({"type": "user", "message": {
            "role": "user", "content": "x" * (vt.MAX_FOLD_BYTES + 1000)}}) + "\n")
        handle.write(_turn("after the long line", "Still folded.", 10))
    _stop(world)
    [transcript] = _transcripts(repo)
    with target.open("a") as handle:
        handle.write(_turn("one more", "One more answer.", 20))
    _stop(world)
    text = transcript.read_text()
    assert "Still folded." in text and "One more answer." in text
    assert "x" * 1000 not in text
    assert f"a line of more than {vt.MAX_FOLD_BYTES:,} bytes" in _log(repo)


SID = "fix-edit-session"


def _send(repo: Path, env: dict[str, str], fixture: str, event: str) -> None:
    done = h.run_hook(["claude-code", event], h.payload("claude-code", fixture, repo, SID), env,
                      cwd=repo)
    assert done.returncode == 0, done.stderr


def test_the_same_fixing_edit_payload_again_still_makes_a_bug_fix(tmp_path: Path) -> None:
    env = h.clean_env(tmp_path / "ocm-home")
    repo = h.make_repo(tmp_path / "proj")
    h.init_vault(repo, env)
    (repo / "src").mkdir()
    (repo / "src" / "backoff.py").write_text("x")
    _send(repo, env, "session-start", "session-start")
    _send(repo, env, "post-tool-use-write", "post-tool-use")  # the first try
    _send(repo, env, "post-tool-use-failure-bash", "post-tool-use-failure")
    _send(repo, env, "post-tool-use-write", "post-tool-use")  # byte-identical: the fix
    _send(repo, env, "post-tool-use-bash", "post-tool-use")
    _send(repo, env, "stop", "stop")
    folder = repo / ".openCodeMemory" / "memories" / "bug_fix"
    [memo] = sorted(folder.glob("*.md"))
    assert "src/backoff.py" in memo.read_text()


def test_vscode_running_claude_settings_counts_one_edit_once(tmp_path: Path) -> None:
    """VS Code runs its own hooks and `.claude/settings.json` for one tool call: the same
    Claude-shaped payload reaches `ocm-hook vscode` and `ocm-hook claude-code`."""
    env = h.clean_env(tmp_path / "ocm-home")
    repo = h.make_repo(tmp_path / "proj")
    h.init_vault(repo, env)
    sid = "vscode-claude-shape"
    start = h.payload("claude-code", "session-start", repo, sid)
    edit = h.payload("claude-code", "post-tool-use-edit", repo, sid)
    for host in ("vscode", "claude-code"):
        assert h.run_hook([host, "session-start"], start, env, cwd=repo).returncode == 0
    for host in ("vscode", "claude-code"):
        assert h.run_hook([host, "post-tool-use"], edit, env, cwd=repo).returncode == 0
    h.fold(repo)
    [note] = h.sessions(repo)
    text = note.read_text()
    assert "\nedits: 1\n" in text, text[:600]

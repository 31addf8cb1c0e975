"""GitHub Copilot CLI 1.0.102 as its own host (issue #27): whole sessions replayed through
`ocm-hook` from the payloads the real program sent (tests/fixtures/capture/payloads/copilot*,
copied from shared/reference/hosts/captured-2026-11/copilot-1.0.102; the project path becomes
the test repo), with its own transcript `events.jsonl`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.agents import common as c  # noqa: E402
from ocm.agents import copilot  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

RECORDED = Path(__file__).parent / "fixtures" / "capture"
TRANSCRIPT = RECORDED / "transcripts" / "copilot" / "events.jsonl"
# Copilot's event -> the event name ocm's hooks file passes on the command line.
WIRED = {event: name for event, name, _ in copilot.HOOKS}
PROBES = ("/home/dev/probes/copilot-native/shop", "/home/dev/probes/copilot-claudewired/shop")


def payloads(folder: str, root: Path, transcript: Path) -> list[tuple[str, dict]]:
    out = []
    for path in sorted((RECORDED / "payloads" / folder).glob("*.json")):
        text = path.read_text()
        for probe in PROBES:
            text = text.replace(probe, str(root))
        data = json.loads(text)
        for key in ("transcriptPath", "transcript_path"):
            if key in data:
                data[key] = str(transcript)
        out.append((path.stem.split("-", 1)[1], data))
    return out


def copy_transcript(root: Path, tmp: Path) -> Path:
    out = tmp / "session-state" / "events.jsonl"
    out.parent.mkdir(parents=True)
    out.write_text(TRANSCRIPT.read_text().replace(PROBES[0], str(root)))
    return out


def replay_native(repo: Path, env: dict[str, str], transcript: Path) -> list[str]:
    """Copilot's own hooks file: only the events ocm wires, under the names it passes."""
    outputs = []
    for event, data in payloads("copilot", repo, transcript):
        if event not in WIRED:
            continue
        out = h.run_hook(["copilot", WIRED[event]], json.dumps(data).encode(), env, cwd=repo)
        assert out.returncode == 0, out.stderr
        outputs.append(out.stdout.decode())
    return outputs


def replay_claude_format(repo: Path, env: dict[str, str], transcript: Path) -> None:
    """What Copilot sends to `.claude/settings.json` hooks (`ocm init --agents claude-code`)."""
    for event, data in payloads("copilot-claude-format", repo, transcript):
        out = h.run_hook(["claude-code", event], json.dumps(data).encode(), env, cwd=repo)
        assert out.returncode == 0, out.stderr


def the_note(repo: Path) -> Document:
    [path] = h.sessions(repo)
    return Document.parse(path.read_text())


def bug_fixes(repo: Path) -> list[str]:
    folder = repo / ".openCodeMemory" / "memories" / "bug_fix"
    return [p.read_text() for p in sorted(folder.glob("*.md"))]


def test_native_session_brief_failure_fix_and_transcript(repo: Path, env: dict[str, str],
                                                         tmp_path: Path) -> None:
    assert h.ocm_here(["remember", "Pinned: warm the widget cache first", "--type", "gotcha"],
                 env, repo).returncode == 0
    transcript = copy_transcript(repo, tmp_path)
    outputs = replay_native(repo, env, transcript)
    # The brief as Copilot reads it: a top-level additionalContext, nothing else.
    start = json.loads(outputs[0])
    assert set(start) == {"additionalContext"}, start
    assert "warm the widget cache" in start["additionalContext"]
    note = the_note(repo)
    assert note.frontmatter.data["tool"] == "copilot"
    assert note.frontmatter.data["status"] == "closed"
    assert note.frontmatter.data["id"] in start["additionalContext"]
    text = h.sessions(repo)[0].read_text()
    assert "src/greet.py" in text
    assert "python3 src/greet.py" in text and "NameError" in text  # the failed command
    [fix] = bug_fixes(repo)
    assert "python3 src/greet.py" in fix and "src/greet.py" in fix
    # The transcript note: the user's words, the answer, the tools with their outcomes.
    [tnote] = sorted((repo / ".openCodeMemory" / "transcripts").glob("*.md"))
    body = tnote.read_text()
    assert "E2E task: create src/greet.py" in body and "Done (mock)." in body
    assert "ocm__remember" in body and "NameError" in body
    assert "<current_datetime>" not in body  # the typed words, not the transformed ones
    log = repo / ".openCodeMemory" / ".hooks" / "hook.log"
    assert not log.exists() or "unknown" not in log.read_text().lower()


def test_claude_format_copies_are_labelled_copilot(repo: Path, env: dict[str, str],
                                                   tmp_path: Path) -> None:
    """Only Claude Code wired: Copilot still runs `.claude/settings.json`; the note is
    Copilot's, the failure (exit code in the text) is seen, the fix captured."""
    replay_claude_format(repo, env, copy_transcript(repo, tmp_path))
    note = the_note(repo)
    assert note.frontmatter.data["tool"] == "copilot"
    assert "NameError" in h.sessions(repo)[0].read_text()
    assert len(bug_fixes(repo)) == 1


def test_both_hook_files_record_once(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """`--agents all`: Copilot fires its own file, VS Code's and Claude Code's for one event.
    With its own file wired, the copies through the other hosts' commands are dropped."""
    assert h.ocm_here(["init", "--agents", "copilot,claude-code,vscode"], env, repo).returncode == 0
    transcript = copy_transcript(repo, tmp_path)
    replay_claude_format(repo, env, transcript)
    replay_native(repo, env, transcript)
    for event, data in payloads("copilot", repo, transcript):  # as VS Code's file runs them
        if event in WIRED:
            h.run_hook(["vscode", WIRED[event]], json.dumps(data).encode(), env, cwd=repo)
    note = the_note(repo)
    assert note.frontmatter.data["tool"] == "copilot"
    text = h.sessions(repo)[0].read_text()
    assert text.count("`python3 src/greet.py` failed") == 1, text
    assert len(bug_fixes(repo)) == 1


def test_detection_keeps_the_other_hosts() -> None:
    fixtures = Path(__file__).parent / "fixtures" / "hooks"
    for host in ("claude-code", "vscode"):
        data = json.loads((fixtures / host / "session-start.json").read_text())
        assert c.detect_host(host, data, {}) == host
    for host in ("claude-code", "codex", "gemini"):
        for path in sorted((RECORDED / "payloads" / host).glob("*.json")):
            assert c.detect_host(host, json.loads(path.read_text()), {}) == host, path
    for folder in ("copilot", "copilot-claude-format"):
        for path in sorted((RECORDED / "payloads" / folder).glob("*.json")):
            data = json.loads(path.read_text())
            assert c.detect_host("vscode", data, {}) == "copilot", path


def test_exit_code_from_the_text() -> None:
    for name, ok in (("08-postToolUse", False), ("14-postToolUse", True)):
        data = json.loads((RECORDED / "payloads" / "copilot" / f"{name}.json").read_text())
        ev = c.parse("copilot", "copilot", "post-tool-use", c.TOOL, data)
        assert ev.kind == c.SHELL and ev.ok is ok, (name, ev.ok)
        assert ("NameError" in ev.error) is (not ok)


def test_init_writes_copilots_own_hooks_file(repo: Path, env: dict[str, str]) -> None:
    assert h.ocm_here(["init", "--agents", "copilot"], env, repo).returncode == 0
    hooks = json.loads((repo / ".github" / "hooks" / "ocm-copilot.json").read_text())
    assert hooks["version"] == 1
    assert set(hooks["hooks"]) == {"sessionStart", "userPromptSubmitted", "postToolUse",
                                   "agentStop", "sessionEnd"}
    [entry] = hooks["hooks"]["sessionStart"]
    assert entry["bash"].endswith("copilot session-start") and entry["type"] == "command"
    assert "ocm" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert "openCodeMemory" in (repo / "AGENTS.md").read_text()
    assert h.ocm_here(["uninstall", "--agents", "copilot"], env, repo).returncode == 0
    assert not (repo / ".github" / "hooks" / "ocm-copilot.json").exists()

"""Qwen Code 0.24.4 and Factory droid 0.215.0 as their own hosts (issue #27): sessions
replayed through `ocm-hook` from the payloads the real programs sent
(tests/fixtures/capture/payloads/{qwen,droid}, copied from
shared/reference/hosts/captured-2026-11; the project path becomes the test repo), with each
host's own transcript growing as it did between the hooks."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.agents import common as c  # noqa: E402
from ocm.agents import droid  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402
from ocm.vault.sessions import SessionNote  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

RECORDED = Path(__file__).parent / "fixtures" / "capture"
QWEN_PROBE = "/home/dev/probes/qwen/shop"
DROID_PROBE = "/home/dev/probes/droid/shop"
PROMPT = "E2E task: create src/greet.py, run it, fix it, remember the gotcha"


def payloads(folder: str, probe: str, root: Path, transcript: Path) -> list[tuple[str, dict]]:
    out = []
    for path in sorted((RECORDED / "payloads" / folder).glob("*.json")):
        data = json.loads(path.read_text().replace(probe, str(root)))
        data["transcript_path"] = str(transcript)
        out.append((path.stem.split("-", 1)[1], data))
    return out


def transcript_lines(folder: str, probe: str, root: Path) -> list[str]:
    [path] = sorted((RECORDED / "transcripts" / folder).glob("*.jsonl"))
    return path.read_text().replace(probe, str(root)).splitlines(keepends=True)


def the_note(repo: Path) -> tuple[Document, str]:
    [path] = h.sessions(repo)
    text = path.read_text()
    return Document.parse(text), text


def bug_fixes(repo: Path) -> list[str]:
    folder = repo / ".openCodeMemory" / "memories" / "bug_fix"
    return [p.read_text() for p in sorted(folder.glob("*.md"))]


def transcript_note(repo: Path) -> str:
    [path] = sorted((repo / ".openCodeMemory" / "transcripts").glob("*.md"))
    return path.read_text()


def hook(host: str, event: str, data: dict, env: dict[str, str], repo: Path) -> str:
    out = h.run_hook([host, event], json.dumps(data).encode(), env, cwd=repo)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode()


def brief_after(replay: Callable[[Path, dict[str, str], Path], list[str]], repo: Path,
                env: dict[str, str], tmp: Path) -> dict:
    """A pinned memory, then the session replayed: the SessionStart answer, which holds it."""
    assert h.ocm_here(["remember", "Pinned: warm the widget cache first", "--type", "gotcha"],
                 env, repo).returncode == 0
    start = json.loads(replay(repo, env, tmp)[0])["hookSpecificOutput"]
    assert start["hookEventName"] == "SessionStart"
    assert "warm the widget cache" in start["additionalContext"]
    return start


# --------------------------------------------------------------------------- Qwen Code


def replay_qwen(repo: Path, env: dict[str, str], tmp: Path) -> list[str]:
    """The recorded run (it has no Stop or SessionEnd: the capture stopped while the model
    waited for MCP); its turn then ends with the Stop and SessionEnd Qwen's source builds:
    the recorded session fields plus `stop_hook_active` / `last_assistant_message`, and
    `reason`."""
    transcript = tmp / "chats" / "qwen.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(transcript_lines("qwen", QWEN_PROBE, repo)))
    recorded = payloads("qwen", QWEN_PROBE, repo, transcript)
    outputs = [hook("qwen", event, data, env, repo) for event, data in recorded]
    base = {k: recorded[0][1][k] for k in ("session_id", "transcript_path", "cwd")}
    outputs.append(hook("qwen", "stop", {**base, "hook_event_name": "Stop",
                                         "stop_hook_active": False,
                                         "last_assistant_message": "Done (mock)."}, env, repo))
    outputs.append(hook("qwen", "session-end", {**base, "hook_event_name": "SessionEnd",
                                                "reason": "other"}, env, repo))
    return outputs


def test_qwen_session_brief_prompt_failure_fix_and_transcript(
        repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    start = brief_after(replay_qwen, repo, env, tmp_path)
    note, text = the_note(repo)
    assert note.frontmatter.data["tool"] == "qwen"
    assert note.frontmatter.data["status"] == "closed"
    assert note.frontmatter.data["id"] in start["additionalContext"]
    # Nine UserPromptSubmit calls, eight of them empty (after tool calls): one prompt.
    assert SessionNote(note).items("prompts") == [PROMPT], text
    assert "src/greet.py" in text
    assert "`python3 src/greet.py` passed after editing" in text  # failed, edited, passed
    [fix] = bug_fixes(repo)
    assert "python3 src/greet.py" in fix and "NameError" in fix and "src/greet.py" in fix
    body = transcript_note(repo)
    assert body.count(PROMPT) == 1, body  # one turn, not one per model call
    assert "run_shell_command" in body and "NameError" in body and "write_file" in body
    assert "attribution" not in body and "ui_telemetry" not in body
    log = repo / ".openCodeMemory" / ".hooks" / "hook.log"
    assert not log.exists() or "not handled" not in log.read_text()


def test_qwen_failure_event_and_tool_names() -> None:
    folder = RECORDED / "payloads" / "qwen"
    failed = json.loads((folder / "05-post-tool-use-failure.json").read_text())
    ev = c.parse("qwen", "qwen", "post-tool-use-failure", c.TOOL_FAILED, failed)
    assert ev.kind == c.SHELL and ev.ok is False and "NameError" in ev.error
    passed = json.loads((folder / "09-post-tool-use.json").read_text())
    ev = c.parse("qwen", "qwen", "post-tool-use", c.TOOL, passed)
    assert ev.kind == c.SHELL and ev.ok is True
    written = json.loads((folder / "03-post-tool-use.json").read_text())
    ev = c.parse("qwen", "qwen", "post-tool-use", c.TOOL, written)
    assert ev.kind == c.FILE_EDIT and ev.files[0].path.endswith("src/greet.py")
    empty = json.loads((folder / "04-user-prompt-submit.json").read_text())
    assert c.parse("qwen", "qwen", "user-prompt-submit", c.PROMPT, empty).prompt == ""


def test_qwen_stop_can_nudge() -> None:
    from ocm.agents import qwen

    out = json.loads(qwen.output(c.STOP, "[ocm memory check] save the turn"))
    assert out == {"decision": "block", "reason": "[ocm memory check] save the turn"}
    assert qwen.output(c.STOP, None) == ""


# --------------------------------------------------------------------------- droid


def replay_droid(repo: Path, env: dict[str, str], tmp: Path) -> list[str]:
    """droid's hooks in order, its transcript grown to where each one fired: the hook
    records in it (`hookEventName`) mark the points; Stop and SessionEnd see all of it."""
    lines = transcript_lines("droid", DROID_PROBE, repo)
    marks = [i for i, line in enumerate(lines) if '"hookEventName"' in line]
    transcript = tmp / "sessions" / "droid.jsonl"
    transcript.parent.mkdir(parents=True)
    outputs = []
    for n, (event, data) in enumerate(payloads("droid", DROID_PROBE, repo, transcript)):
        upto = marks[n] + 1 if event not in ("stop", "session-end") else len(lines)
        transcript.write_text("".join(lines[:upto]))
        outputs.append(hook("droid", event, data, env, repo))
    return outputs


def test_droid_failure_from_the_transcript_fix_and_transcript(
        repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    start = brief_after(replay_droid, repo, env, tmp_path)
    note, text = the_note(repo)
    assert note.frontmatter.data["tool"] == "droid"
    assert note.frontmatter.data["id"] in start["additionalContext"]
    assert SessionNote(note).items("prompts") == [PROMPT]  # from the transcript
    assert note.frontmatter.data["status"] == "closed"
    assert SessionNote(note).files() == {"src/greet.py": "created"}
    # No hook fired for the failing Execute: the transcript showed it at the Edit's hook.
    [fix] = bug_fixes(repo)
    assert "python3 src/greet.py" in fix and "NameError" in fix and "src/greet.py" in fix
    assert "`python3 src/greet.py` passed after editing" in text
    body = transcript_note(repo)
    assert PROMPT in body and "Execute" in body and "NameError" in body
    assert "ToolSearch" not in body and "system-reminder" not in body
    assert "Project memory (ocm)" not in body  # the hook's own output is no prompt


def test_droid_missed_failure_and_prompt_are_reported_once(repo: Path, env: dict[str, str],
                                                           tmp_path: Path) -> None:
    lines = transcript_lines("droid", DROID_PROBE, repo)
    transcript = tmp_path / "droid.jsonl"
    transcript.write_text("".join(lines[:8]))  # the failing Execute's call, not its result
    ev = c.HookEvent("droid", "droid", "post-tool-use", c.TOOL)
    ev.session_id, ev.transcript_path = "sid-1", str(transcript)
    vault = str(repo / ".openCodeMemory")
    [(_, prompt)] = droid.missed_events(ev, vault)  # the typed words, not the reminders
    assert prompt.kind == c.PROMPT and prompt.prompt == PROMPT
    transcript.write_text("".join(lines[:12]))  # its result came, with the next hook
    [(key, failed)] = droid.missed_events(ev, vault)
    assert key.endswith("|toolu_mock_3") and failed.kind == c.SHELL
    assert failed.command == "python3 src/greet.py" and failed.ok is False
    assert "NameError" in failed.error and failed.session_id == "sid-1"
    assert droid.missed_events(ev, vault) == []  # read once
    transcript.write_text("".join(lines[:2]))  # a new, shorter file: read from its start
    assert droid.missed_events(ev, vault) == []
    ev.transcript_path = str(tmp_path / "missing.jsonl")
    assert droid.missed_events(ev, vault) == []


def test_droid_tool_shapes() -> None:
    folder = RECORDED / "payloads" / "droid"
    for name, ok in (("04-post-tool-use", True), ("05-post-tool-use", True)):
        data = json.loads((folder / f"{name}.json").read_text())
        ev = c.parse("droid", "droid", "post-tool-use", c.TOOL, data)
        assert ev.kind == c.SHELL and ev.ok is ok, name
    failing = {**data, "tool_response": "Error: Command failed (exit code: 1)\nNameError: x"
               "\n\n[Process exited with code 1]"}
    ev = c.parse("droid", "droid", "post-tool-use", c.TOOL, failing)
    assert ev.ok is False and "NameError" in ev.error
    created = json.loads((folder / "02-post-tool-use.json").read_text())
    ev = c.parse("droid", "droid", "post-tool-use", c.TOOL, created)
    assert [f.change for f in ev.files] == ["created"]
    edited = json.loads((folder / "03-post-tool-use.json").read_text())
    assert [f.change for f in c.parse("droid", "droid", "post-tool-use", c.TOOL,
                                      edited).files] == ["modified"]


# --------------------------------------------------------------------------- wiring


def test_init_uninstall_and_doctor(repo: Path, env: dict[str, str]) -> None:
    (repo / ".qwen").mkdir()
    (repo / ".qwen" / "settings.json").write_text('{"model": {"name": "mine"}}\n')
    assert h.ocm_here(["init", "--agents", "qwen,droid"], env, repo).returncode == 0
    qwen_settings = json.loads((repo / ".qwen" / "settings.json").read_text())
    assert qwen_settings["model"] == {"name": "mine"}
    server = qwen_settings["mcpServers"]["ocm"]
    assert server["args"] == ["mcp"] and server["alwaysLoadTools"] is True
    assert set(qwen_settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PostToolUse",
                                           "PostToolUseFailure", "PreToolUse", "PreCompact",
                                           "Stop", "SessionEnd"}
    [group] = qwen_settings["hooks"]["PostToolUse"]
    assert "run_shell_command" in group["matcher"] and "write_file" in group["matcher"]
    assert group["hooks"][0]["command"].endswith("qwen post-tool-use")
    assert "openCodeMemory" in (repo / "QWEN.md").read_text()
    factory = json.loads((repo / ".factory" / "settings.json").read_text())["hooks"]
    assert "Execute" in factory["PostToolUse"][0]["matcher"]
    assert factory["Stop"][0]["hooks"][0]["command"].endswith("droid stop")
    mcp = json.loads((repo / ".factory" / "mcp.json").read_text())["mcpServers"]["ocm"]
    assert mcp["args"] == ["mcp"] and mcp["type"] == "stdio"
    assert "openCodeMemory" in (repo / "AGENTS.md").read_text()
    out = h.ocm_here(["doctor", "--json"], env, repo)
    checks = {c["what"]: c for c in json.loads(out.stdout)}
    assert checks["qwen (project)"]["status"] == "ok", checks
    assert checks["droid (project)"]["status"] == "ok", checks
    assert h.ocm_here(["uninstall", "--agents", "qwen,droid"], env, repo).returncode == 0
    assert json.loads((repo / ".qwen" / "settings.json").read_text()) == {
        "model": {"name": "mine"}}
    assert not (repo / ".factory").exists() or not any((repo / ".factory").rglob("*.json"))
    assert not (repo / "QWEN.md").exists() and not (repo / "AGENTS.md").exists()


def test_hosts_are_named() -> None:
    for word, host in (("qwen", "qwen"), ("qwen-code", "qwen"), ("droid", "droid"),
                       ("factory-droid", "droid")):
        assert c.canonical_host(word) == host
    assert c.detect_host("qwen", json.loads((RECORDED / "payloads" / "qwen" /
                                             "01-session-start.json").read_text()), {}) == "qwen"
    assert c.detect_host("droid", json.loads((RECORDED / "payloads" / "droid" /
                                              "01-session-start.json").read_text()), {}) == "droid"

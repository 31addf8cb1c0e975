"""Hand-over: does the next session's brief carry what the last session did, in any tool?

    python bench/handover.py [--show] [--json] [--only NAME]

Every session is replayed through the real hook entry point (`ocm-hook HOST EVENT`, one
process per payload) in a temp git repo set up by `ocm init`: the two recorded Claude Code
2.1.332 sessions (tests/fixtures/capture/payloads/claude-code-multiturn-a and -b, copied
from shared/reference/hosts; -b's `ocm__checkpoint` is an MCP call no hook sees, so it is
made here with `ocm checkpoint`), and scripted two-prompt sessions for every wired host
(claude-code, codex, gemini, cursor, vscode, windsurf, copilot, opencode; Copilot CLI's final
messages come from its events.jsonl transcript and OpenCode's turns from its SQLite database,
both written here as the session goes, in the recorded shapes): prompt 1 edits
src/greet.py (a decision: argparse, not click), prompt 2 creates tests/test_greet.py whose
run fails and is left failing, the last message says what is left; each with and without a
checkpoint (goal, completed, pending, the decision). Then tools interleaved: the issue's
Cursor → empty VS Code → Claude Code, and two tools open at once.

For each session the facts a next session needs are listed, and the brief the NEXT session
receives (a SessionStart of another session, default budget) is checked for each. A fact
the host cannot report through its hooks (Cursor and VS Code send no final message,
Windsurf no exit status) is "n/a" for that host and not counted. Nothing is asserted:
the table is reported in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "fixtures" / "capture" / "payloads"
BIN = Path(sys.executable).parent
HOOK = str(BIN / "ocm-hook")
OCM = str(BIN / "ocm")

PROMPT_1 = ("Add a --name option to src/greet.py (default: world). Use argparse, not click: "
            "the project must stay dependency-free.")
PROMPT_2 = "Good. Now add unit tests for it."
GREET = ('import argparse\n\n\ndef main() -> None:\n    parser = argparse.ArgumentParser()\n'
         '    parser.add_argument("--name", default="world")\n'
         '    print(f"hello {parser.parse_args().name}")\n')
TEST = ("import unittest\n\nfrom src.greet import greet\n\n\nclass GreetTest(unittest.TestCase):"
        "\n    def test_name(self):\n        self.assertEqual(greet(\"Ann\"), \"hello Ann\")\n")
TEST_CMD = "python3 -m unittest discover -s tests"
TEST_OUT = ("E\n======================================================================\n"
            "ERROR: test_greet (unittest.loader._FailedTest.test_greet)\n"
            "----------------------------------------------------------------------\n"
            "ImportError: Failed to import test module: test_greet\nTraceback (most recent call "
            "last):\n  File \"tests/test_greet.py\", line 3, in <module>\n    from src.greet "
            "import greet\nImportError: cannot import name 'greet' from 'src.greet'\n\n"
            "----------------------------------------------------------------------\n"
            "Ran 1 test in 0.000s\n\nFAILED (errors=1)")
MESSAGE_1 = ("Added `--name` to src/greet.py with argparse (click rejected: it would be the "
             "project's first dependency). `python3 src/greet.py --name Ann` prints `hello Ann`. "
             "Next: unit tests for --name, and a usage section in README.md.")
MESSAGE_2 = ("Added tests/test_greet.py, but it fails: src/greet.py has no importable `greet()` "
             "function (the formatting lives inside `main()`), so the test cannot import it. "
             "Still to do: split a `greet(name) -> str` out of `main()` so the test passes, then "
             "the README usage section. I stopped here.")
CHECKPOINT = {
    "goal": "Add a --name option to src/greet.py, with argparse, and unit tests for it",
    "work_completed": ["--name option in src/greet.py (argparse)"],
    "work_pending": ["split greet(name) -> str out of main() so tests/test_greet.py passes",
                     "README usage section"],
    "decisions": ["**argparse, not click:** the project stays dependency-free"],
}

# The facts of the two-prompt session: (name, text the brief must hold, what the host must
# report for the fact to be knowable: "" always, "message" a final message, "exit" an exit
# status, "checkpoint" the agent's checkpoint).
GREET_FACTS = [
    ("goal", "--name option", ""),
    ("done", "--name", ""),
    ("file modified", "src/greet.py", ""),
    ("file created", "tests/test_greet.py", ""),
    ("failing test + error", f"`{TEST_CMD}` fails: ImportError: cannot import name 'greet'",
     "exit"),
    ("what is left (last message)", "Still to do: split a", "message"),
    ("pending", "split greet(name) -> str out of main()", "checkpoint"),
    ("decision", "argparse, not click", "checkpoint"),
    ("read more", "ocm__get_note ", ""),
]


# --------------------------------------------------------------------------- hosts


@dataclass
class Host:
    """How one host's hooks report each step (event name, payload), from the documented or
    recorded payload shapes (tests/fixtures/hooks/<host>/, tests/fixtures/capture/); a step
    may also write what the host keeps beside its hooks (a transcript, a database)."""

    name: str
    reports: set[str]
    start: Callable[[str, Path], tuple[str, dict[str, Any]] | None]
    prompt: Callable[[str, Path, str], tuple[str, dict[str, Any]]]
    write: Callable[[str, Path, str, str, bool], tuple[str, dict[str, Any]]]
    shell: Callable[[str, Path, str, str, bool], tuple[str, dict[str, Any]]]
    stop: Callable[[str, Path, str], tuple[str, dict[str, Any]]]
    end: Callable[[str, Path], tuple[str, dict[str, Any]] | None]


def _claude(sid: str, root: Path, event: str, **data: Any) -> dict[str, Any]:
    return {"session_id": sid, "transcript_path": "", "cwd": str(root),
            "hook_event_name": event, **data}


def _claude_shell(sid: str, root: Path, cmd: str, out: str, ok: bool) -> tuple[str, dict]:
    if ok:
        return "post-tool-use", _claude(sid, root, "PostToolUse", tool_name="Bash",
                                        tool_input={"command": cmd}, tool_response={
                                            "stdout": out, "stderr": "", "interrupted": False})
    return "post-tool-use-failure", _claude(sid, root, "PostToolUseFailure", tool_name="Bash",
                                            tool_input={"command": cmd},
                                            error=f"Exit code 1\n{out}")


CLAUDE = Host(
    "claude-code", {"message", "exit"},
    start=lambda sid, root: ("session-start", _claude(sid, root, "SessionStart",
                                                      source="startup")),
    prompt=lambda sid, root, text: ("user-prompt-submit", _claude(
        sid, root, "UserPromptSubmit", prompt=text)),
    write=lambda sid, root, rel, text, new: ("post-tool-use", _claude(
        sid, root, "PostToolUse", tool_name="Write" if new else "Edit",
        tool_input={"file_path": str(root / rel), "content": text},
        tool_response={"type": "create" if new else "update", "filePath": str(root / rel)})),
    shell=_claude_shell,
    stop=lambda sid, root, msg: ("stop", _claude(sid, root, "Stop", stop_hook_active=False,
                                                 last_assistant_message=msg)),
    end=lambda sid, root: ("session-end", _claude(sid, root, "SessionEnd", reason="other")),
)


def _codex_write(sid: str, root: Path, rel: str, text: str, new: bool) -> tuple[str, dict]:
    body = "".join(f"+{line}\n" for line in text.splitlines())
    patch = (f"*** Begin Patch\n*** Add File: {rel}\n{body}*** End Patch\n" if new else
             f"*** Begin Patch\n*** Update File: {rel}\n@@\n{body}*** End Patch\n")
    return "post-tool-use", _claude(sid, root, "PostToolUse", tool_name="apply_patch",
                                    tool_input={"command": patch},
                                    tool_response=f"Success. Updated the following files:\n"
                                                  f"{'A' if new else 'M'} {rel}")


CODEX = Host(
    "codex", {"message", "exit"},
    start=CLAUDE.start, prompt=CLAUDE.prompt, write=_codex_write,
    shell=lambda sid, root, cmd, out, ok: ("post-tool-use", _claude(
        sid, root, "PostToolUse", tool_name="Bash", tool_input={"command": cmd},
        tool_response=out)),
    stop=CLAUDE.stop, end=CLAUDE.end,
)


def _gemini_shell(sid: str, root: Path, cmd: str, out: str, ok: bool) -> tuple[str, dict]:
    text = f"Output: {out}\n" + ("" if ok else "Exit Code: 1\n") + "Process Group PGID: 4242"
    return "after-tool", _claude(sid, root, "AfterTool", tool_name="run_shell_command",
                                 tool_input={"command": cmd},
                                 tool_response={"llmContent": text, "returnDisplay": text})


GEMINI = Host(
    "gemini", {"message", "exit"},
    start=CLAUDE.start,
    prompt=lambda sid, root, text: ("before-agent", _claude(sid, root, "BeforeAgent",
                                                            prompt=text)),
    write=lambda sid, root, rel, text, new: ("after-tool", _claude(
        sid, root, "AfterTool", tool_name="write_file" if new else "replace",
        tool_input={"file_path": str(root / rel), "content": text},
        tool_response={"llmContent": "Successfully wrote the file"})),
    shell=_gemini_shell,
    stop=lambda sid, root, msg: ("after-agent", _claude(sid, root, "AfterAgent",
                                                        prompt="", prompt_response=msg)),
    end=lambda sid, root: ("session-end", _claude(sid, root, "SessionEnd", reason="exit")),
)


def _cursor(sid: str, root: Path, event: str, **data: Any) -> dict[str, Any]:
    return {"conversation_id": sid, "generation_id": "gen-1", "hook_event_name": event,
            "cursor_version": "2.4.1", "workspace_roots": [str(root)], **data}


CURSOR = Host(
    "cursor", {"exit"},
    start=lambda sid, root: ("session-start", _cursor(sid, root, "sessionStart",
                                                      session_id=sid)),
    prompt=lambda sid, root, text: ("before-submit-prompt", _cursor(
        sid, root, "beforeSubmitPrompt", prompt=text)),
    write=lambda sid, root, rel, text, new: ("after-file-edit", _cursor(
        sid, root, "afterFileEdit", file_path=str(root / rel),
        edits=[{"old_string": "" if new else "print", "new_string": text}])),
    shell=lambda sid, root, cmd, out, ok: ("after-shell-execution", _cursor(
        sid, root, "afterShellExecution", command=cmd, output=out, exit_code=0 if ok else 1,
        cwd=str(root))),
    stop=lambda sid, root, msg: ("stop", _cursor(sid, root, "stop", status="completed",
                                                 loop_count=0)),
    end=lambda sid, root: ("session-end", _cursor(sid, root, "sessionEnd", session_id=sid,
                                                  reason="completed")),
)


def _vscode(sid: str, root: Path, event: str, **data: Any) -> dict[str, Any]:
    return {"timestamp": "2026-11-27T10:00:00.000Z", "cwd": str(root), "sessionId": sid,
            "hookEventName": event, "transcript_path": "", **data}


VSCODE = Host(
    "vscode", {"exit"},
    start=lambda sid, root: ("session-start", _vscode(sid, root, "SessionStart", source="new")),
    prompt=lambda sid, root, text: ("user-prompt-submit", _vscode(
        sid, root, "UserPromptSubmit", prompt=text)),
    write=lambda sid, root, rel, text, new: ("post-tool-use", _vscode(
        sid, root, "PostToolUse", tool_name="create_file" if new else "editFiles",
        tool_input={"filePath": str(root / rel), "content": text} if new else {
            "files": [str(root / rel)]}, tool_response="ok")),
    shell=lambda sid, root, cmd, out, ok: ("post-tool-use", _vscode(
        sid, root, "PostToolUse", tool_name="run_in_terminal", tool_input={"command": cmd},
        tool_response=f"{out}\nCommand exited with code {0 if ok else 1}")),
    stop=lambda sid, root, msg: ("stop", _vscode(sid, root, "Stop", stop_hook_active=False)),
    end=lambda sid, root: None,  # no session end: closed when its next session starts
)


def _cascade(sid: str, action: str, **info: Any) -> dict[str, Any]:
    return {"agent_action_name": action, "trajectory_id": sid, "execution_id": uuid.uuid4().hex,
            "timestamp": "2026-11-27T10:00:00Z", "tool_info": info}


WINDSURF = Host(
    "windsurf", {"message"},
    start=lambda sid, root: None,  # Cascade has no session start: the first hook opens it
    prompt=lambda sid, root, text: ("pre_user_prompt", _cascade(sid, "pre_user_prompt",
                                                                user_prompt=text)),
    write=lambda sid, root, rel, text, new: ("post_write_code", _cascade(
        sid, "post_write_code", file_path=str(root / rel),
        edits=[{"old_string": "" if new else "print", "new_string": text}])),
    shell=lambda sid, root, cmd, out, ok: ("post_run_command", _cascade(
        sid, "post_run_command", command_line=cmd, cwd=str(root))),
    stop=lambda sid, root, msg: ("post_cascade_response", _cascade(
        sid, "post_cascade_response", response=msg)),
    end=lambda sid, root: None,
)

_clock = [0]


def _ms() -> int:
    """Milliseconds now, never the same twice (OpenCode orders its rows by time)."""
    _clock[0] = max(_clock[0] + 1, int(time.time() * 1000))
    return _clock[0]


# GitHub Copilot CLI: camelCase payloads with a millisecond timestamp (tests/fixtures/capture/
# payloads/copilot/), a failing shell call reported as `resultType: "success"` with its exit
# code in the text, and no final message in any payload: `agentStop` names the transcript
# (`~/.copilot/session-state/<id>/events.jsonl`), which is written here in the recorded
# shape (tests/fixtures/capture/transcripts/copilot/events.jsonl) as the session goes.


def _copilot(sid: str, root: Path, **data: Any) -> dict[str, Any]:
    return {"sessionId": sid, "timestamp": _ms(), "cwd": str(root), **data}


def _copilot_events(sid: str, root: Path) -> Path:
    return root.parent / "home" / ".copilot" / "session-state" / sid / "events.jsonl"


def _copilot_log(sid: str, root: Path, kind: str, data: dict[str, Any]) -> None:
    path = _copilot_events(sid, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": kind, "data": data, "id": str(uuid.uuid4()),
                                 "timestamp": stamp}) + "\n")


def _copilot_tool(sid: str, root: Path, name: str, args: dict[str, Any], result: str,
                  exit_code: int | None = None) -> tuple[str, dict[str, Any]]:
    call = f"toolu_{uuid.uuid4().hex[:8]}"
    _copilot_log(sid, root, "assistant.message", {"content": "", "toolRequests": [
        {"toolCallId": call, "name": name, "arguments": args, "type": "function"}]})
    done: dict[str, Any] = {"toolCallId": call, "success": True, "result": {"content": result}}
    if exit_code is not None:
        done["shellExecution"] = {"exitCode": exit_code}
    _copilot_log(sid, root, "tool.execution_complete", done)
    return "post-tool-use", _copilot(sid, root, toolName=name, toolArgs=args, toolResult={
        "resultType": "success", "textResultForLlm": result})


def _copilot_prompt(sid: str, root: Path, text: str) -> tuple[str, dict[str, Any]]:
    _copilot_log(sid, root, "user.message", {"content": text})
    return "user-prompt-submitted", _copilot(sid, root, prompt=text)


def _copilot_write(sid: str, root: Path, rel: str, text: str, new: bool
                   ) -> tuple[str, dict[str, Any]]:
    path = str(root / rel)
    if new:
        return _copilot_tool(sid, root, "create", {"path": path, "file_text": text},
                             f"Created file {path} with {len(text)} characters")
    return _copilot_tool(sid, root, "edit", {"path": path, "old_str": 'print("hello world")\n',
                                             "new_str": text},
                         f"File {path} updated with changes.")


def _copilot_shell(sid: str, root: Path, cmd: str, out: str, ok: bool
                   ) -> tuple[str, dict[str, Any]]:
    code = 0 if ok else 1
    return _copilot_tool(sid, root, "bash", {"command": cmd, "description": "run it"},
                         f"{out}\n<shellId: 0 completed with exit code {code}>", code)


def _copilot_stop(sid: str, root: Path, msg: str) -> tuple[str, dict[str, Any]]:
    _copilot_log(sid, root, "assistant.message", {"content": msg, "toolRequests": []})
    return "stop", _copilot(sid, root, transcriptPath=str(_copilot_events(sid, root)),
                            stopReason="end_turn", stop_hook_active=False)


COPILOT = Host(
    "copilot", {"message", "exit"},
    start=lambda sid, root: ("session-start", _copilot(sid, root, source="new",
                                                       initialPrompt=PROMPT_1)),
    prompt=_copilot_prompt, write=_copilot_write, shell=_copilot_shell, stop=_copilot_stop,
    end=lambda sid, root: ("session-end", _copilot(sid, root, reason="complete")),
)


# OpenCode: its plugin (ocm/agents/opencode.py) forwards Claude-shaped payloads; the turns
# themselves are read at `session.idle` from OpenCode's SQLite database, written here with its
# schema (tests/fixtures/hooks/opencode/session-db.json, from a real opencode-ai 1.18.33) and
# the row shapes a real run left there.
OPENCODE_DB_FIXTURE = REPO / "tests" / "fixtures" / "hooks" / "opencode" / "session-db.json"


def _opencode_db(root: Path) -> sqlite3.Connection:
    path = root.parent / "home" / ".local" / "share" / "opencode" / "opencode.db"
    fresh = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    if fresh:
        db.execute("PRAGMA journal_mode = WAL")  # as OpenCode opens it
        for statement in json.loads(OPENCODE_DB_FIXTURE.read_text())["schema"]:
            db.execute(statement)
    return db


def _opencode_message(sid: str, root: Path, role: str, parts: list[dict[str, Any]]) -> None:
    db = _opencode_db(root)
    try:
        if not db.execute("SELECT 1 FROM session WHERE id = ?", (sid,)).fetchone():
            db.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                       "time_created, time_updated) VALUES (?, 'p', 's', ?, 't', '1.18.33', ?, ?)",
                       (sid, str(root), _ms(), _ms()))
        created = _ms()
        times = {"created": created, **({"completed": created} if role == "assistant" else {})}
        message = f"msg_{created}{uuid.uuid4().hex[:6]}"
        db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                   (message, sid, created, created, json.dumps({"role": role, "time": times})))
        for part in parts:
            stamp = _ms()
            db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                       (f"prt_{stamp}{uuid.uuid4().hex[:6]}", message, sid, stamp, stamp,
                        json.dumps(part)))
    finally:
        db.close()


def _opencode(sid: str, root: Path, event: str, **data: Any) -> dict[str, Any]:
    return {"hook_event_name": event, "cwd": str(root), "session_id": sid, **data}


def _opencode_prompt(sid: str, root: Path, text: str) -> tuple[str, dict[str, Any]]:
    _opencode_message(sid, root, "user", [{"type": "text", "text": text}])
    return "chat.message", _opencode(sid, root, "chat.message", prompt=text)


def _opencode_tool(sid: str, root: Path, name: str, args: dict[str, Any], out: str,
                   exit_code: int | None = None) -> tuple[str, dict[str, Any]]:
    call = f"toolu_{uuid.uuid4().hex[:8]}"
    meta = {} if exit_code is None else {"exit": exit_code}
    _opencode_message(sid, root, "assistant", [{"type": "tool", "tool": name, "callID": call,
                                                "state": {"status": "completed", "input": args,
                                                          "output": out, "metadata": meta}}])
    return "tool.execute.after", _opencode(sid, root, "tool.execute.after", tool_name=name,
                                           tool_input=args, tool_use_id=call,
                                           tool_response={"output": out, "exit_code": exit_code})


def _opencode_write(sid: str, root: Path, rel: str, text: str, new: bool
                    ) -> tuple[str, dict[str, Any]]:
    path = str(root / rel)
    if new:
        return _opencode_tool(sid, root, "write", {"filePath": path, "content": text},
                              "Wrote file successfully.")
    return _opencode_tool(sid, root, "edit", {"filePath": path, "oldString": 'print("hello '
                                              'world")\n', "newString": text},
                          "Edit applied successfully.")


def _opencode_stop(sid: str, root: Path, msg: str) -> tuple[str, dict[str, Any]]:
    _opencode_message(sid, root, "assistant", [{"type": "text", "text": msg}])
    return "session.idle", _opencode(sid, root, "session.idle")


OPENCODE = Host(
    "opencode", {"message", "exit"},
    start=lambda sid, root: ("session.created", _opencode(sid, root, "session.created",
                                                          source="startup")),
    prompt=_opencode_prompt, write=_opencode_write,
    shell=lambda sid, root, cmd, out, ok: _opencode_tool(
        sid, root, "bash", {"command": cmd, "description": "run it"}, out, 0 if ok else 1),
    stop=_opencode_stop,
    end=lambda sid, root: ("session.end", _opencode(sid, root, "session.end", reason="exit")),
)

HOSTS = {h.name: h for h in (CLAUDE, CODEX, GEMINI, CURSOR, VSCODE, WINDSURF, COPILOT,
                             OPENCODE)}


# --------------------------------------------------------------------------- running


class World:
    """A temp git repo with `ocm init`, and the hook and CLI run as real processes."""

    def __init__(self, base: Path) -> None:
        self.root = base / "shop"
        self.root.mkdir(parents=True)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CLAUDE", "CURSOR", "GEMINI", "CODEX", "VSCODE",
                                         "OCM_"))}
        self.env.pop("XDG_DATA_HOME", None)  # OpenCode's database: under HOME
        self.env.pop("OPENCODE_DB", None)
        self.env.update(OCM_HOME=str(base / "ocm-home"), HOME=str(base / "home"),
                        GIT_AUTHOR_NAME="Dev", GIT_AUTHOR_EMAIL="dev@example.com",
                        GIT_COMMITTER_NAME="Dev", GIT_COMMITTER_EMAIL="dev@example.com")
        (self.root / "src").mkdir()
        (self.root / "src" / "greet.py").write_text('print("hello world")\n')
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=self.root, env=self.env, check=True,
                           capture_output=True)
        self.ocm("init")

    def ocm(self, *args: str, stdin: str | None = None) -> str:
        out = subprocess.run([OCM, *args], cwd=self.root, env=self.env, input=stdin,
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"ocm {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def hook(self, host: str, step: tuple[str, dict[str, Any]] | None) -> str:
        if step is None:
            return ""
        event, data = step
        out = subprocess.run([HOOK, host, event], cwd=self.root, env=self.env,
                             input=json.dumps(data).encode(), capture_output=True, timeout=60)
        return out.stdout.decode("utf-8", "replace")

    def brief(self, host: str = "claude-code") -> str:
        """What a new session of `host` is told at its start."""
        sid = str(uuid.uuid4())
        out = self.hook(host, HOSTS[host].start(sid, self.root))
        if not out:
            return ""
        data = json.loads(out)
        return str(data.get("hookSpecificOutput", {}).get("additionalContext")
                   or data.get("additionalContext") or "")


@dataclass
class Result:
    name: str
    host: str
    facts: list[tuple[str, str, bool | None]] = field(default_factory=list)  # None: n/a
    brief: str = ""


def greet_session(world: World, host: Host, checkpoint: bool, end: bool = True) -> str:
    """The two-prompt session; returns the host's session id."""
    sid = str(uuid.uuid4()) if host.name != "cursor" else f"conv-{uuid.uuid4().hex[:8]}"
    root = world.root
    world.hook(host.name, host.start(sid, root))
    world.hook(host.name, host.prompt(sid, root, PROMPT_1))
    (root / "src" / "greet.py").write_text(GREET)
    world.hook(host.name, host.write(sid, root, "src/greet.py", GREET, False))
    world.hook(host.name, host.shell(sid, root, "python3 src/greet.py --name Ann", "hello Ann",
                                     True))
    world.hook(host.name, host.stop(sid, root, MESSAGE_1))
    world.hook(host.name, host.prompt(sid, root, PROMPT_2))
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_greet.py").write_text(TEST)
    world.hook(host.name, host.write(sid, root, "tests/test_greet.py", TEST, True))
    world.hook(host.name, host.shell(sid, root, TEST_CMD, TEST_OUT, False))
    if checkpoint:
        world.ocm("checkpoint", "--session", sid, "--tool", host.name, "--input", "-",
                  stdin=json.dumps(CHECKPOINT))
    world.hook(host.name, host.stop(sid, root, MESSAGE_2))
    if end:
        world.hook(host.name, host.end(sid, root))
    return sid


def check(name: str, host: str, brief: str, facts: list[tuple[str, str, str]],
          reports: set[str], checkpoint: bool) -> Result:
    result = Result(name, host, brief=brief)
    for fact, text, needs in facts:
        knowable = needs == "" or needs in reports or (needs == "checkpoint" and checkpoint)
        if needs == "message" and checkpoint and "message" not in reports:
            knowable = False
        result.facts.append((fact, text, (text in brief) if knowable else None))
    return result


def run_greet(base: Path, host: Host, checkpoint: bool) -> Result:
    world = World(base)
    greet_session(world, host, checkpoint)
    brief = world.brief("codex" if host.name == "claude-code" else "claude-code")
    label = f"{host.name} two prompts" + (" + checkpoint" if checkpoint else "")
    facts = [*GREET_FACTS, ("names the tool", f"({'handed over from ' + host.name}", "")]
    return check(label, host.name, brief, facts, host.reports, checkpoint)


def run_recorded(base: Path, folder: str, checkpoint: bool) -> Result:
    """A recorded Claude Code 2.1.332 session, its files written as the real run did."""
    world = World(base)
    sid = ""
    for path in sorted((RECORDED / folder).glob("*.json")):
        text = path.read_text().replace("/home/dev/rich-a/shop", str(world.root)).replace(
            "/home/dev/rich-b/shop", str(world.root))
        data = json.loads(text)
        sid = data["session_id"]
        event = path.stem.split("-", 1)[1]
        tool_input = data.get("tool_input") or {}
        if data.get("tool_name") == "Write":
            target = Path(tool_input["file_path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(tool_input["content"])
        if checkpoint and event == "stop" and "Still to do" in data["last_assistant_message"]:
            world.ocm("checkpoint", "--session", sid, "--tool", "claude-code", "--input", "-",
                      stdin=json.dumps(CHECKPOINT))
        world.hook("claude-code", (event, data))
    brief = world.brief("codex")
    facts = [*GREET_FACTS, ("names the tool", "(handed over from claude-code", "")]
    return check(f"recorded {folder.removeprefix('claude-code-')}", "claude-code", brief,
                 facts, CLAUDE.reports, checkpoint)


def run_cursor_vscode_claude(base: Path) -> Result:
    """The issue's story: Cursor saves pending work, VS Code starts and does nothing,
    Claude Code starts."""
    world = World(base)
    sid = f"conv-{uuid.uuid4().hex[:8]}"
    root = world.root
    world.hook("cursor", CURSOR.start(sid, root))
    world.hook("cursor", CURSOR.prompt(sid, root, "Retry the nightly export on timeouts"))
    (root / "src" / "retry.py").write_text("RETRIES = 3\n")
    world.hook("cursor", CURSOR.write(sid, root, "src/retry.py", "RETRIES = 3\n", True))
    world.ocm("checkpoint", "--session", sid, "--tool", "cursor", "--goal",
              "Retry the nightly export", "--pending", "add jitter to the backoff")
    world.hook("cursor", CURSOR.stop(sid, root, ""))
    world.hook("cursor", CURSOR.end(sid, root))
    vs = str(uuid.uuid4())
    world.hook("vscode", VSCODE.start(vs, root))
    brief = world.brief("claude-code")
    facts = [("the Cursor session, not the empty VS Code one", "(handed over from cursor", ""),
             ("its goal", "Retry the nightly export", ""),
             ("its pending work", "add jitter to the backoff", ""),
             ("its file", "src/retry.py", "")]
    result = check("cursor → empty vscode → claude-code", "cursor", brief, facts, set(), False)
    listed = world.ocm("list", "--json")
    result.facts.append(("`ocm list` after VS Code closes: no empty note", "",
                         vs not in listed or "vscode" not in listed))
    return result


def run_two_open(base: Path) -> Result:
    """Claude Code works and stays open; Codex starts: it sees Claude Code's work. Codex
    works; a new Claude Code session sees Codex's."""
    world = World(base)
    root = world.root
    a = str(uuid.uuid4())
    world.hook("claude-code", CLAUDE.start(a, root))
    world.hook("claude-code", CLAUDE.prompt(a, root, "Add a CHANGELOG.md for the 1.0 release"))
    (root / "CHANGELOG.md").write_text("# 1.0\n")
    world.hook("claude-code", CLAUDE.write(a, root, "CHANGELOG.md", "# 1.0\n", True))
    world.hook("claude-code", CLAUDE.stop(a, root, "Wrote CHANGELOG.md. Next: the 0.9 entries."))
    b = str(uuid.uuid4())
    codex_brief = ""
    out = world.hook("codex", CODEX.start(b, root))
    if out:
        codex_brief = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    world.hook("codex", CODEX.prompt(b, root, "Bump the version to 1.0 in pyproject.toml"))
    (root / "pyproject.toml").write_text('version = "1.0"\n')
    world.hook("codex", _codex_write(b, root, "pyproject.toml", 'version = "1.0"\n', True))
    world.hook("codex", CODEX.stop(b, root, "Version bumped. Still to do: tag the release."))
    brief = world.brief("claude-code")
    facts = [("codex sees claude-code's open session", "Add a CHANGELOG.md", ""),
             ("… and what it left", "Next: the 0.9 entries", ""),
             ("a new claude-code session sees codex's", "Bump the version to 1.0", ""),
             ("… named as codex's", "(handed over from codex", ""),
             ("… with its file", "pyproject.toml", ""),
             ("… and what it left", "Still to do: tag the release", "")]
    result = check("claude-code + codex open at once", "both", brief, facts[2:], set(), False)
    result.facts[:0] = [(f, t, t in codex_brief) for f, t, _ in facts[:2]]
    result.brief = f"{codex_brief}\n\n----- next claude-code session -----\n{brief}"
    return result


def scenarios() -> list[tuple[str, Callable[[Path], Result]]]:
    out: list[tuple[str, Callable[[Path], Result]]] = [
        ("recorded-a", lambda b: run_recorded(b, "claude-code-multiturn-a", False)),
        ("recorded-b", lambda b: run_recorded(b, "claude-code-multiturn-b", True)),
    ]
    for host in HOSTS.values():
        for ckpt in (False, True):
            out.append((f"{host.name}{'-checkpoint' if ckpt else ''}",
                        lambda b, h=host, c=ckpt: run_greet(b, h, c)))
    out += [("cursor-vscode-claude", run_cursor_vscode_claude), ("two-open", run_two_open)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print each brief")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", help="run the scenarios whose name contains this")
    args = parser.parse_args()
    results = []
    for name, run in scenarios():
        if args.only and args.only not in name:
            continue
        base = Path(tempfile.mkdtemp(prefix="ocm-handover-"))
        try:
            results.append(run(base))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps([{"session": r.name, "host": r.host, "brief_chars": len(r.brief),
                           "facts": [{"fact": f, "text": t, "held": h} for f, t, h in r.facts]}
                          for r in results], indent=2))
        return
    print("| session | facts held | missing | n/a (host does not report) | brief chars |")
    print("|---|---|---|---|---|")
    held = total = 0
    for r in results:
        known = [(f, h) for f, _, h in r.facts if h is not None]
        ok = sum(1 for _, h in known if h)
        held += ok
        total += len(known)
        missing = ", ".join(f for f, h in known if not h) or "—"
        na = ", ".join(f for f, _, h in r.facts if h is None) or "—"
        print(f"| {r.name} | {ok}/{len(known)} | {missing} | {na} | {len(r.brief)} |")
        if args.show:
            print(f"\n```\n{r.brief}\n```\n", file=sys.stderr)
    print(f"\nAll sessions: {held}/{total} facts in the brief.")


if __name__ == "__main__":
    main()

"""GitHub Copilot CLI (`copilot`, npm `@github/copilot`): its own hooks file
`.github/hooks/ocm-copilot.json` (version 1, camelCase events, `bash` commands), the project
MCP server in `.mcp.json` (shared with Claude Code), AGENTS.md.

What the recorded runs (reference/hosts/captured-2026-11/copilot-1.0.102) showed, and what
this module does about it:
* only a top-level `{"additionalContext": …}` reaches the model (`hookSpecificOutput` is
  ignored): `output` answers in that shape;
* a failing shell call arrives as `resultType: "success"`, its exit code only in the text
  (`<shellId: 0 completed with exit code 1>`): `common.shell_outcome` reads it from
  `textResultForLlm`;
* Copilot CLI also runs `.claude/settings.json` and every `.github/hooks/*.json`, so one
  event may reach ocm up to three times: payloads are told apart by their shape
  (`common.detect_host`), and a copy that came through another host's command is dropped
  when this file is wired (`OWN_HOOKS`, in the dispatcher);
* the transcript is `~/.copilot/session-state/<id>/events.jsonl` (`parse_transcript`).
"""

from __future__ import annotations

import json

from . import common as c
from .base import RULES, SERVER_NAME, InstallContext, hooks_file_is_ours, server_is_ours

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "copilot"
CAP = 10_000
OWN_HOOKS = ".github/hooks/ocm-copilot.json"
EVENTS = {
    "session-start": c.START, "user-prompt-submitted": c.PROMPT,
    "user-prompt-submit": c.PROMPT, "post-tool-use": c.TOOL, "stop": c.STOP,
    "agent-stop": c.STOP, "session-end": c.END,
}
# (Copilot's event, our event name, timeout in seconds)
HOOKS = [
    ("sessionStart", "session-start", 15),
    ("userPromptSubmitted", "user-prompt-submitted", 10),
    ("postToolUse", "post-tool-use", 10),
    ("agentStop", "stop", 30),
    ("sessionEnd", "session-end", 15),
]


def output(kind: str, context: str | None) -> str:
    """Copilot CLI reads a top-level `additionalContext` (session start, prompt)."""
    if context and kind in (c.START, c.PROMPT):
        return json.dumps({"additionalContext": context}, ensure_ascii=False)
    return ""


def hooks_file(ctx: InstallContext) -> str:
    data = {"version": 1, "hooks": {
        event: [{"type": "command", "bash": ctx.hook_command(HOST, name), "timeoutSec": timeout}]
        for event, name, timeout in HOOKS}}
    return json.dumps(data, indent=2) + "\n"


def _hooks_file_is_ours(text: str) -> bool:
    return hooks_file_is_ours(text, "bash")


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import BlockStep, JsonStep, OwnFileStep, SetKey

    if ctx.user:
        steps: list[Step] = [
            OwnFileStep(ctx.home / ".copilot" / "hooks" / "ocm-copilot.json", hooks_file(ctx),
                        "hooks", _hooks_file_is_ours),
            JsonStep(ctx.home / ".copilot" / "mcp-config.json", [
                SetKey(("mcpServers", SERVER_NAME), ctx.server(), server_is_ours)],
                "MCP server")]
        return steps, ["start `copilot` in a project and allow the 'ocm' tools it asks about"]
    from .claude_code import mcp_server

    steps = [
        JsonStep(ctx.root / ".mcp.json", [
            SetKey(("mcpServers", SERVER_NAME), mcp_server(ctx), server_is_ours)], "MCP server"),
        OwnFileStep(ctx.root / OWN_HOOKS, hooks_file(ctx), "hooks", _hooks_file_is_ours),
        BlockStep(ctx.root / "AGENTS.md", RULES, "rules"),
    ]
    return steps, ["start `copilot` at the repository root, trust the folder and allow the "
                   "'ocm' tools it asks about"]


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("copilot")) or (home / ".copilot").is_dir()


def _result(data: dict[str, Any]) -> tuple[int | None, str]:
    """A `tool.execution_complete` record's exit code and first error line."""
    from .transcript import outcome

    shell = data.get("shellExecution")
    result = c.as_dict(data.get("result"))
    text = c.text_of(result.get("content") or data.get("error"), 20_000)
    if isinstance(shell, dict) and isinstance(shell.get("exitCode"), int):
        code = shell["exitCode"]
        return code, (c.error_line(text) if code else "")
    return outcome(text, data.get("success") is False)


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from `events.jsonl`: `user.message` (the typed words, not the transformed
    content), `assistant.message` (text and `toolRequests`), `tool.execution_complete` (the
    outcome). Hook, usage, turn and session records are known and skipped."""
    from .transcript import TurnBuilder, describe_tool, records

    out = TurnBuilder()
    for rec in records(lines):
        kind = str(rec.get("type") or "")
        data = c.as_dict(rec.get("data"))
        time = str(rec.get("timestamp") or "")
        if kind.startswith(("session.", "hook.", "system.", "assistant.turn_", "tool.")):
            out.known += 1
        if kind == "user.message":
            out.known += 1
            out.prompt(str(data.get("content") or ""), time)
        elif kind == "assistant.message":
            out.known += 1
            out.text(str(data.get("content") or ""), time)
            for req in data.get("toolRequests") or []:
                if isinstance(req, dict):
                    out.tool(str(req.get("toolCallId") or ""), describe_tool(
                        str(req.get("name") or "?"), req.get("arguments"), cwd), time)
        elif kind == "tool.execution_complete":
            code, error = _result(data)
            out.result(str(data.get("toolCallId") or ""), code, error)
    return out.turns, out.known

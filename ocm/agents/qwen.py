"""Qwen Code (`qwen`, npm `@qwen-code/qwen-code`): Claude-shaped hooks and the MCP server in
`.qwen/settings.json`, rules in QWEN.md.

What the recorded run (reference/hosts/captured-2026-11/qwen-code-0.24.4) and the real
0.24.4 showed, and what this module does about it:
* hooks are Claude Code's events and payloads with Qwen's own tool names (`write_file`,
  `edit`, `run_shell_command`); a failing shell call fires `PostToolUseFailure` with the
  output and `Exit Code: N` in `error`; timeouts are seconds; `Stop` takes Claude's
  `{"decision": "block", "reason": …}` and the model goes on with the reason (nudges);
* `UserPromptSubmit` fires before every model call, with an empty `prompt` after tool calls:
  an empty prompt journals nothing, and transcript turns start only at the typed words;
* MCP tools are deferred behind Qwen's tool search unless the server sets
  `alwaysLoadTools` (set here, as `alwaysLoad` is for Claude Code);
* `SessionEnd` never fires in `qwen -p` (`NO_SESSION_END`);
* the transcript is `~/.qwen/projects/<project>/chats/<session>.jsonl` (`parse_transcript`).
"""

from __future__ import annotations

from . import common as c
from .base import RULES, SERVER_NAME, InstallContext, hook_group_is_ours, server_is_ours
from .claude_code import EVENTS as EVENTS  # Claude Code's event names
from .claude_code import hook_entries
from .claude_code import output as output  # Claude's output shapes, Stop's block included

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "qwen"
CAP = 10_000
# `SessionEnd` fires only when the interactive UI exits (and on /clear, and over ACP), never
# in `qwen -p`: an open session is closed at the next one's start or after a quiet period.
NO_SESSION_END = True
_TOOLS = "write_file|edit|replace|read_file|read_many_files|run_shell_command"
# (Qwen's event, our event name, matcher, timeout in seconds)
HOOKS: list[tuple[str, str, str | None, int]] = [
    ("SessionStart", "session-start", None, 15),
    ("UserPromptSubmit", "user-prompt-submit", None, 10),
    ("PostToolUse", "post-tool-use", _TOOLS, 10),
    ("PostToolUseFailure", "post-tool-use-failure", "run_shell_command", 10),
    ("PreToolUse", "pre-tool-use", "run_shell_command", 10),
    ("PreCompact", "pre-compact", None, 30),
    ("Stop", "stop", None, 30),
    ("SessionEnd", "session-end", None, 15),
]


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import AppendItem, BlockStep, JsonStep, SetKey

    base = ctx.home / ".qwen" if ctx.user else ctx.root / ".qwen"
    server = {**ctx.server(with_type=False), "alwaysLoadTools": True}
    edits: list[Any] = [SetKey(("mcpServers", SERVER_NAME), server, server_is_ours)]
    edits += [AppendItem(("hooks", event), group, hook_group_is_ours)
              for event, group in hook_entries(ctx, HOST, HOOKS)]
    steps: list[Step] = [
        JsonStep(base / "settings.json", edits, "MCP server + hooks"),
        BlockStep((base if ctx.user else ctx.root) / "QWEN.md", RULES, "rules"),
    ]
    return steps, ["start `qwen` at the repository root (with folder trust turned on, trust "
                   "the folder) and allow the 'ocm' tools it asks about"]


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("qwen")) or (home / ".qwen").is_dir()


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from `chats/<session>.jsonl`: `user` records typed by a person (their text
    parts), `assistant` records (text parts, not thoughts, and `functionCall`s), `tool_result`
    records (each `functionResponse` with `toolCallResult.status`). `system` records
    (telemetry, attribution snapshots) are known and skipped."""
    from .transcript import TurnBuilder, describe_tool, outcome, records

    out = TurnBuilder()
    for rec in records(lines):
        kind = rec.get("type")
        if kind not in ("user", "assistant", "tool_result", "system"):
            continue
        out.known += 1
        parts = [p for p in c.as_list(c.as_dict(rec.get("message")).get("parts"))
                 if isinstance(p, dict)]
        time = str(rec.get("timestamp") or "")
        if kind == "user" and rec.get("provenance") in (None, "real_user"):
            out.prompt("\n".join(str(p.get("text")) for p in parts
                                 if isinstance(p.get("text"), str)), time)
        elif kind == "assistant":
            for part in parts:
                call = part.get("functionCall")
                if isinstance(call, dict):
                    out.tool(str(call.get("id") or ""), describe_tool(
                        str(call.get("name") or "?"), call.get("args"), cwd), time)
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    out.text(part["text"], time)
        elif kind == "tool_result":
            status = str(c.as_dict(rec.get("toolCallResult")).get("status") or "")
            for part in parts:
                reply = c.as_dict(part.get("functionResponse"))
                if not reply:
                    continue
                body = c.as_dict(reply.get("response"))
                text = c.text_of(body.get("error") or body.get("output"), 20_000)
                failed = None if not status else status != "success"
                code, error = outcome(text, failed)
                out.result(str(reply.get("id") or ""), code, error)
    return out.turns, out.known

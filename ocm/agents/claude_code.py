"""Claude Code: `.claude/settings.json` hooks, `.mcp.json`, CLAUDE.md (integrations.md §1)."""

from __future__ import annotations

import json
import os

from . import common as c
from .base import (
    RULES,
    SERVER_NAME,
    InstallContext,
    hook_group_is_ours,
    hook_json_output,
    server_is_ours,
)

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "claude-code"
CAP = 10_000
EVENTS = {
    "session-start": c.START, "user-prompt-submit": c.PROMPT, "post-tool-use": c.TOOL,
    "post-tool-use-failure": c.TOOL_FAILED, "pre-compact": c.COMPACT, "stop": c.STOP,
    "session-end": c.END, "pre-tool-use": c.BEFORE_SHELL,
}
# (host event, our kebab name, matcher, timeout in seconds)
HOOKS = [
    ("SessionStart", "session-start", None, 15),
    ("UserPromptSubmit", "user-prompt-submit", None, 10),
    ("PostToolUse", "post-tool-use", "Write|Edit|NotebookEdit|Read|Bash", 10),
    ("PostToolUseFailure", "post-tool-use-failure", "Bash", 10),
    ("PreToolUse", "pre-tool-use", "Bash", 10),  # a nudge before a git commit (nudges: all)
    ("PreCompact", "pre-compact", None, 30),
    ("Stop", "stop", None, 30),
    # SessionEnd hooks share a 1.5 s budget unless a per-hook timeout raises it.
    ("SessionEnd", "session-end", None, 15),
]
_OUTPUT_EVENT = {c.START: "SessionStart", c.PROMPT: "UserPromptSubmit",
                 c.BEFORE_SHELL: "PreToolUse"}


def output(kind: str, context: str | None) -> str:
    """JSON for SessionStart/UserPromptSubmit context; on Stop only a nudge (a block
    keeps the conversation going for one more turn); nothing otherwise."""
    if context and kind in _OUTPUT_EVENT:
        return hook_json_output(_OUTPUT_EVENT[kind], context)
    if context and kind == c.STOP:  # a nudge: the model goes on with `reason` as its task
        return json.dumps({"decision": "block", "reason": context}, ensure_ascii=False)
    return ""


def hook_entries(ctx: InstallContext, host: str = HOST,
                 hooks: list[tuple[str, str, str | None, int]] | None = None,
                 ) -> list[tuple[str, dict[str, Any]]]:
    """Claude-style matcher groups (Qwen Code and droid read the same shape, with their own
    tool names in `hooks`)."""
    out = []
    for event, name, matcher, timeout in HOOKS if hooks is None else hooks:
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": ctx.hook_command(host, name),
                           "timeout": timeout}]
        out.append((event, group))
    return out


def mcp_server(ctx: InstallContext) -> dict[str, Any]:
    """The project `.mcp.json` entry (Claude Code and Copilot CLI read it). `alwaysLoad`:
    Claude Code 2.1.332 defers every MCP tool behind its ToolSearch tool unless the server
    says otherwise; ocm's tools stay in the prompt (README, "Claude Code")."""
    return {**ctx.server(), "alwaysLoad": True}


def config_dir(ctx: InstallContext) -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env) if env else ctx.home / ".claude"


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import AppendItem, BlockStep, JsonStep, SetKey


    settings = (config_dir(ctx) if ctx.user else ctx.root / ".claude") / "settings.json"
    steps: list[Step] = [
        JsonStep(settings, [AppendItem(("hooks", event), group, hook_group_is_ours)
                            for event, group in hook_entries(ctx)], "hooks"),
        BlockStep((config_dir(ctx) if ctx.user else ctx.root) / "CLAUDE.md", RULES, "rules"),
    ]
    todo = []
    if ctx.user:
        todo.append(f"register the MCP server: claude mcp add --scope user {SERVER_NAME} -- "
                    f"{ctx.ocm_exe} mcp")
    else:
        steps.insert(0, JsonStep(ctx.root / ".mcp.json", [
            SetKey(("mcpServers", SERVER_NAME), mcp_server(ctx), server_is_ours)], "MCP server"))
        todo.append("approve the project MCP server 'ocm' when Claude Code asks")
    todo.append("accept the workspace trust dialog (hooks wait for it); start `claude` "
                "at the repository root")
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("claude")) or (home / ".claude").is_dir()


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from the new lines of `~/.claude/projects/<project>/<session>.jsonl`: user
    prompts (not tool results, meta lines or compaction summaries), assistant text (not
    thinking) and tool_use blocks, with their tool_result's status. Attachments (ocm's own
    SessionStart brief among them), queue and bookkeeping lines are skipped."""
    from .transcript import TurnBuilder, describe_tool, outcome, records

    out = TurnBuilder()
    for rec in records(lines):
        kind = rec.get("type")
        message = rec.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            if kind in ("attachment", "queue-operation", "last-prompt", "summary", "system",
                        "file-history-snapshot"):
                out.known += 1
            continue
        out.known += 1
        if rec.get("isSidechain") or rec.get("isMeta") or rec.get("isCompactSummary"):
            continue
        time = str(rec.get("timestamp") or "")
        content = message.get("content")
        if kind == "user":
            if isinstance(content, str):
                out.prompt(content, time)
                continue
            texts = []
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    texts.append(str(block.get("text") or ""))
                elif block.get("type") == "tool_result":
                    body = c.text_of(block.get("content"), 20_000)
                    code, error = outcome(body, bool(block.get("is_error")))
                    out.result(str(block.get("tool_use_id") or ""), code, error)
            if texts:
                out.prompt("\n".join(texts), time)
            continue
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                out.text(str(block.get("text") or ""), time)
            elif block.get("type") == "tool_use" and block.get("name") != "ToolSearch":
                # ToolSearch only loads deferred tools: noise in a transcript note.
                out.tool(str(block.get("id") or ""),
                         describe_tool(str(block.get("name") or "?"), block.get("input"), cwd),
                         time)
    return out.turns, out.known

"""Codex CLI: `.codex/hooks.json`, `[mcp_servers.ocm]` in `.codex/config.toml`, AGENTS.md
(integrations.md §3). File edits arrive as `apply_patch` bodies."""

from __future__ import annotations

import json
import re

from . import common as c
from .base import RULES, SERVER_NAME, InstallContext, hook_group_is_ours, hook_json_output

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "codex"
CAP = 10_000
EVENTS = {
    "session-start": c.START, "user-prompt-submit": c.PROMPT, "post-tool-use": c.TOOL,
    "pre-compact": c.COMPACT, "stop": c.STOP, "session-end": c.END,
    "pre-tool-use": c.BEFORE_SHELL,
}
HOOKS = [
    ("SessionStart", "session-start", None, 15),
    ("UserPromptSubmit", "user-prompt-submit", None, 10),
    ("PostToolUse", "post-tool-use", "apply_patch|Edit|Write|Bash|shell", 10),
    # A nudge before a git commit (nudges: all); Codex 0.169/0.171 run PreToolUse for shell
    # calls (`Bash`) and pass its additionalContext to the model (tests_e2e/test_nudges.py).
    ("PreToolUse", "pre-tool-use", "Bash|shell", 10),
    ("PreCompact", "pre-compact", None, 30),
    ("Stop", "stop", None, 30),
    # Codex clamps a SessionEnd timeout above 3 s and warns on every run about it.
    ("SessionEnd", "session-end", None, 3),
]
_OUTPUT_EVENT = {c.START: "SessionStart", c.PROMPT: "UserPromptSubmit",
                 c.BEFORE_SHELL: "PreToolUse"}


def output(kind: str, context: str | None) -> str:
    """Context as JSON on SessionStart/UserPromptSubmit/PreToolUse, a nudge as a Stop block
    (Stop accepts only JSON or nothing); nothing elsewhere."""
    if context and kind in _OUTPUT_EVENT:
        return hook_json_output(_OUTPUT_EVENT[kind], context)
    if context and kind == c.STOP:  # a nudge: the model goes on with `reason` as its task
        return json.dumps({"decision": "block", "reason": context}, ensure_ascii=False)
    return ""


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def server_block(ctx: InstallContext) -> str:
    return "\n".join([f"[mcp_servers.{SERVER_NAME}]", f"command = {_toml_string(ctx.ocm_exe)}",
                      'args = ["mcp"]', "startup_timeout_sec = 20"])


def _has_own_server(text: str) -> bool:
    return re.search(rf"^\s*\[mcp_servers\.\"?{SERVER_NAME}\"?\]", text, re.M) is not None


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import AppendItem, BlockStep, JsonStep


    base = ctx.home / ".codex" if ctx.user else ctx.root / ".codex"
    groups: list[Any] = []
    for event, name, matcher, timeout in HOOKS:
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": ctx.hook_command(HOST, name),
                           "timeout": timeout}]
        groups.append(AppendItem(("hooks", event), group, hook_group_is_ours))
    steps: list[Step] = [
        BlockStep(base / "config.toml", server_block(ctx), "MCP server", style="toml",
                  conflict=_has_own_server),
        JsonStep(base / "hooks.json", groups, "hooks"),
        BlockStep((base if ctx.user else ctx.root) / "AGENTS.md", RULES, "rules"),
    ]
    todo = ["open /hooks in Codex and trust the ocm hooks (new or changed hooks are skipped "
            "until trusted)"]
    if not ctx.user:
        todo.insert(0, "trust the project (Codex reads .codex/ only in trusted projects)")
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("codex")) or (home / ".codex").is_dir()


_NOT_TYPED = ("# AGENTS.md instructions", "<environment_context>", "<user_instructions>",
              "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>")


def _typed_by_user(payload: dict[str, Any], text: str) -> bool:
    meta = payload.get("internal_chat_message_metadata_passthrough")
    items = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    if isinstance(items, list) and items:
        kinds = {str((i.get("provenance") or {}).get("type")) for i in items
                 if isinstance(i, dict)}
        return kinds == {"user"}
    return not text.lstrip().startswith(_NOT_TYPED)


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from the new lines of `~/.codex/sessions/…/rollout-*.jsonl`: `response_item`
    user messages the user typed (not AGENTS.md or environment context), assistant
    `output_text`, function and custom tool calls with the exit code of their output.
    Developer messages (ocm's SessionStart brief among them), reasoning and events are
    skipped."""
    from .transcript import TurnBuilder, describe_tool, outcome, records

    out = TurnBuilder()
    for rec in records(lines):
        payload = rec.get("payload")
        if not isinstance(payload, dict) or "type" not in rec:
            continue
        out.known += 1
        if rec.get("type") != "response_item":
            continue
        time = str(rec.get("timestamp") or "")
        kind = payload.get("type")
        if kind == "message":
            content = c.as_list(payload.get("content"))
            text = "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict)
                             and b.get("type") in ("input_text", "output_text", "text"))
            if payload.get("role") == "user" and _typed_by_user(payload, text):
                out.prompt(text, time)
            elif payload.get("role") == "assistant":
                out.text(text, time)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(payload.get("name") or kind)
            tool_input = payload.get("arguments", payload.get("input", payload.get("action")))
            out.tool(str(payload.get("call_id") or ""), describe_tool(name, tool_input, cwd),
                     time)
        elif kind in ("function_call_output", "custom_tool_call_output",
                      "local_shell_call_output"):
            body = c.text_of(payload.get("output"), 20_000)
            code, error = outcome(body)
            out.result(str(payload.get("call_id") or ""), code, error)
    return out.turns, out.known

"""Codex CLI: `.codex/hooks.json`, `[mcp_servers.ocm]` in `.codex/config.toml`, AGENTS.md
(integrations.md §3). File edits arrive as `apply_patch` bodies."""

from __future__ import annotations

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
}
HOOKS = [
    ("SessionStart", "session-start", None, 15),
    ("UserPromptSubmit", "user-prompt-submit", None, 10),
    ("PostToolUse", "post-tool-use", "apply_patch|Edit|Write|Bash|shell", 10),
    ("PreCompact", "pre-compact", None, 30),
    ("Stop", "stop", None, 30),
    ("SessionEnd", "session-end", None, 15),
]
_OUTPUT_EVENT = {c.START: "SessionStart", c.PROMPT: "UserPromptSubmit"}


def output(kind: str, context: str | None) -> str:
    """Context as JSON on SessionStart/UserPromptSubmit; nothing elsewhere (Stop accepts
    only JSON or nothing)."""
    if context and kind in _OUTPUT_EVENT:
        return hook_json_output(_OUTPUT_EVENT[kind], context)
    return ""


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def server_block(ctx: InstallContext) -> str:
    lines = [f"[mcp_servers.{SERVER_NAME}]", f"command = {_toml_string(ctx.ocm_exe)}",
             'args = ["mcp"]', "startup_timeout_sec = 20"]
    env = ctx.project_env()
    if env:
        lines += ["", f"[mcp_servers.{SERVER_NAME}.env]"]
        lines += [f"{k} = {_toml_string(v)}" for k, v in env.items()]
    return "\n".join(lines)


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

"""Cursor: `.cursor/hooks.json` (version 1), `.cursor/mcp.json`, `.cursor/rules/ocm.mdc`
(integrations.md §2). Cursor also runs Claude Code's hooks: the dispatcher dedupes."""

from __future__ import annotations

import json

from . import common as c
from .base import (
    RULES,
    SERVER_NAME,
    WORKSPACE_ENV,
    InstallContext,
    is_ocm_command,
    server_is_ours,
)

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "cursor"
CAP = 10_000
EVENTS = {
    "session-start": c.START, "before-submit-prompt": c.PROMPT,
    "after-file-edit": c.FILE_EDIT, "after-shell-execution": c.SHELL, "post-tool-use": c.TOOL,
    "post-tool-use-failure": c.TOOL_FAILED, "pre-compact": c.COMPACT, "stop": c.STOP,
    "session-end": c.END,
    # Claude Code event names, as Cursor maps them when it runs `.claude/settings.json`
    "user-prompt-submit": c.PROMPT,
}
HOOKS = [
    ("sessionStart", "session-start", 15),
    ("beforeSubmitPrompt", "before-submit-prompt", 10),
    ("afterFileEdit", "after-file-edit", 10),
    ("afterShellExecution", "after-shell-execution", 10),
    ("preCompact", "pre-compact", 30),
    ("stop", "stop", 30),
    ("sessionEnd", "session-end", 15),
]


def output(kind: str, context: str | None) -> str:
    """Cursor wants JSON on every path; snake_case `additional_context` at session start,
    `continue: true` before a prompt, a `followup_message` on stop only for a nudge."""
    if kind == c.START and context:
        return json.dumps({"additional_context": context}, ensure_ascii=False)
    if kind == c.STOP and context:
        return json.dumps({"followup_message": context}, ensure_ascii=False)
    if kind == c.PROMPT:
        return json.dumps({"continue": True})
    return "{}"


def _ours(item: Any) -> bool:
    return isinstance(item, dict) and is_ocm_command(item.get("command"))


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import OWN_MARKER, AppendItem, JsonStep, OwnFileStep, SetKey


    base = ctx.home / ".cursor" if ctx.user else ctx.root / ".cursor"
    edits = [AppendItem(("hooks", event), {"command": ctx.hook_command(HOST, name),
                                           "timeout": timeout}, _ours)
             for event, name, timeout in HOOKS]
    steps: list[Step] = [
        JsonStep(base / "mcp.json", [SetKey(("mcpServers", SERVER_NAME),
                                            ctx.server({} if ctx.user else WORKSPACE_ENV),
                                            server_is_ours)], "MCP server"),
        JsonStep(base / "hooks.json", edits, "hooks", skeleton={"version": 1}),
    ]
    todo = ["trust the workspace (project hooks run only in trusted workspaces) and enable "
            "the 'ocm' MCP server in Cursor's settings"]
    if ctx.user:
        todo.append("add the openCodeMemory rules as a User Rule (Cursor settings → Rules)")
    else:
        rule = (f"---\ndescription: openCodeMemory session memory ({OWN_MARKER})\n"
                f"alwaysApply: true\n---\n\n{RULES}")
        steps.append(OwnFileStep(ctx.root / ".cursor" / "rules" / "ocm.mdc", rule, "rules"))
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("cursor")) or (home / ".cursor").is_dir()

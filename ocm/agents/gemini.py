"""Gemini CLI: hooks and MCP server in `.gemini/settings.json`, GEMINI.md
(integrations.md §4). Timeouts are milliseconds; stdout must be JSON only."""

from __future__ import annotations

import json

from . import common as c
from .base import (
    RULES,
    SERVER_NAME,
    InstallContext,
    hook_group_is_ours,
    server_is_ours,
)

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "gemini"
CAP = 10_000
EVENTS = {
    "session-start": c.START, "before-agent": c.PROMPT, "after-tool": c.TOOL,
    "pre-compress": c.COMPACT, "after-agent": c.STOP, "session-end": c.END,
}
HOOKS = [
    ("SessionStart", "session-start", None, 15_000),
    ("BeforeAgent", "before-agent", None, 10_000),
    ("AfterTool", "after-tool", "write_file|replace|read_file|read_many_files|run_shell_command",
     10_000),
    ("PreCompress", "pre-compress", None, 30_000),
    ("AfterAgent", "after-agent", None, 30_000),
    ("SessionEnd", "session-end", None, 15_000),
]
_OUTPUT_EVENT = {c.START: "SessionStart", c.PROMPT: "BeforeAgent"}


def output(kind: str, context: str | None) -> str:
    """Always exactly one JSON object (Gemini parses stdout as JSON)."""
    if context and kind in _OUTPUT_EVENT:
        return json.dumps({"hookSpecificOutput": {"hookEventName": _OUTPUT_EVENT[kind],
                                                  "additionalContext": context}},
                          ensure_ascii=False)
    return "{}"


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import AppendItem, BlockStep, JsonStep, SetKey


    base = ctx.home / ".gemini" if ctx.user else ctx.root / ".gemini"
    edits: list[Any] = [SetKey(("mcpServers", SERVER_NAME),
                               {**ctx.server(ctx.project_env(), with_type=False),
                                "timeout": 30_000}, server_is_ours)]
    for event, name, matcher, timeout in HOOKS:
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"name": f"ocm-{name}", "type": "command",
                           "command": ctx.hook_command(HOST, name), "timeout": timeout}]
        edits.append(AppendItem(("hooks", event), group, hook_group_is_ours))
    steps: list[Step] = [
        JsonStep(base / "settings.json", edits, "MCP server + hooks"),
        BlockStep((base if ctx.user else ctx.root) / "GEMINI.md", RULES, "rules"),
    ]
    todo = ["trust the folder (Gemini ignores a project's .gemini/settings.json until then)"]
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("gemini")) or (home / ".gemini").is_dir()

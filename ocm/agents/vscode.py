"""VS Code (GitHub Copilot agent hooks, Preview): `.github/hooks/ocm.json`, `.vscode/mcp.json`
with `servers`, AGENTS.md (integrations.md §5). Payloads mix camelCase and snake_case."""

from __future__ import annotations

import json

from . import common as c
from .base import (
    RULES,
    SERVER_NAME,
    WORKSPACE_ENV,
    InstallContext,
    hook_json_output,
    hooks_file_is_ours,
    server_is_ours,
)

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path

    from .installer import Step

HOST = "vscode"
CAP = 10_000
OWN_HOOKS = ".github/hooks/ocm.json"
NO_SESSION_END = True   # the previous open session is closed when the next one starts
EVENTS = {
    "session-start": c.START, "user-prompt-submit": c.PROMPT, "post-tool-use": c.TOOL,
    "pre-compact": c.COMPACT, "stop": c.STOP,
}
HOOKS = [
    ("SessionStart", "session-start", 15),
    ("UserPromptSubmit", "user-prompt-submit", 10),
    ("PostToolUse", "post-tool-use", 10),
    ("PreCompact", "pre-compact", 30),
    ("Stop", "stop", 30),
]


def output(kind: str, context: str | None) -> str:
    if context and kind == c.START:
        return hook_json_output("SessionStart", context)
    return ""


def hooks_file(ctx: InstallContext) -> str:
    data = {"hooks": {event: [{"type": "command", "command": ctx.hook_command(HOST, name),
                               "timeout": timeout}]
                      for event, name, timeout in HOOKS}}
    return json.dumps(data, indent=2) + "\n"


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import BlockStep, JsonStep, OwnFileStep, SetKey


    hooks_dir = ctx.home / ".copilot" / "hooks" if ctx.user else ctx.root / ".github" / "hooks"
    steps: list[Step] = [OwnFileStep(hooks_dir / "ocm.json", hooks_file(ctx), "hooks",
                                     hooks_file_is_ours)]
    todo = ["agent hooks are a Preview feature: check they are enabled, then start the "
            "'ocm' server from the MCP view and trust it"]
    if ctx.user:
        todo.insert(0, "add the MCP server in 'MCP: Open User Configuration': "
                       f'"{SERVER_NAME}": {{"type": "stdio", "command": "{ctx.ocm_exe}", '
                       '"args": ["mcp"]}')
    else:
        steps.insert(0, JsonStep(ctx.root / ".vscode" / "mcp.json", [
            SetKey(("servers", SERVER_NAME), ctx.server(WORKSPACE_ENV), server_is_ours)],
            "MCP server"))
        steps.append(BlockStep(ctx.root / "AGENTS.md", RULES, "rules"))
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("code")) or (home / ".vscode").is_dir()

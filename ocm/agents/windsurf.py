"""Windsurf (Cascade hooks, beta): `.windsurf/hooks.json`, rules in `.windsurf/rules/ocm.md`,
MCP only at user level in `~/.codeium/windsurf/mcp_config.json`.

No Windsurf program exists here: the file locations, the hooks.json shape
(`{"hooks": {"post_write_code": [{"command": ..., "show_output": false}]}}`) and the event
names come from docs.windsurf.com/windsurf/cascade/hooks; the payload envelope
(`agent_action_name`, `trajectory_id`, `tool_info`) from third-party adapters quoting it
(integrations.md §6). Cascade documents no way to inject context and no session start or
end: the session note is opened by the first event of a trajectory and folded at each
`post_cascade_response`.
"""

from __future__ import annotations

from . import common as c
from .base import RULES, SERVER_NAME, InstallContext, is_ocm_command, server_is_ours

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "windsurf"
CAP = 10_000
EVENTS = {
    "pre-user-prompt": c.PROMPT, "post-read-code": c.TOOL, "post-write-code": c.FILE_EDIT,
    "post-run-command": c.SHELL, "post-cascade-response": c.STOP,
}
HOOKS = ["pre_user_prompt", "post_read_code", "post_write_code", "post_run_command",
         "post_cascade_response"]


def normalise(data: dict[str, Any]) -> dict[str, Any]:
    """Cascade's envelope (`agent_action_name`, `trajectory_id`, `tool_info`) in the shape
    the host-neutral parser reads; a payload without the envelope is left as it is."""
    if "agent_action_name" not in data and "trajectory_id" not in data:
        return data
    info = c.as_dict(data.get("tool_info"))
    out: dict[str, Any] = {"session_id": data.get("trajectory_id"),
                           "hook_event_name": data.get("agent_action_name"),
                           "cwd": info.get("cwd") or data.get("cwd")}
    action = c.kebab(str(data.get("agent_action_name") or ""))
    if action == "pre-user-prompt":
        out["prompt"] = info.get("user_prompt")
    elif action == "post-write-code":
        out.update(tool_name="write_file", tool_input={"file_path": info.get("file_path")})
        edits = c.as_list(info.get("edits"))
        if edits and all(isinstance(e, dict) and not e.get("old_string") for e in edits):
            out["tool_name"] = "create_file"
        elif edits:
            out["tool_name"] = "edit_file"
    elif action == "post-cascade-response":  # Cascade's reply: the turn's last message
        out["last_assistant_message"] = info.get("response")
    elif action == "post-read-code":
        out.update(tool_name="read_file", tool_input={"file_path": info.get("file_path")})
    elif action == "post-run-command":
        out.update(tool_name="run_command", tool_input={"command": info.get("command_line")})
        response = {k: info[k] for k in ("output", "stdout", "stderr", "exit_code")
                    if info.get(k) is not None}
        if response:
            out["tool_response"] = response
    return out


def output(kind: str, context: str | None) -> str:
    """Post hooks' output is not read; a pre hook blocks only with exit code 2."""
    return ""


def _ours(item: Any) -> bool:
    return isinstance(item, dict) and is_ocm_command(item.get("command"))


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import OWN_MARKER, AppendItem, BlockStep, JsonStep, OwnFileStep, SetKey

    base = ctx.home / ".codeium" / "windsurf" if ctx.user else ctx.root / ".windsurf"
    edits = [AppendItem(("hooks", event), {"command": ctx.hook_command(HOST, event),
                                           "show_output": False}, _ours)
             for event in HOOKS]
    steps: list[Step] = [JsonStep(base / "hooks.json", edits, "hooks")]
    todo = ["Cascade hooks are a beta feature of Windsurf: check they run (Windsurf settings)"]
    if ctx.user:
        steps.insert(0, JsonStep(base / "mcp_config.json", [
            SetKey(("mcpServers", SERVER_NAME), ctx.server(with_type=False), server_is_ours)],
            "MCP server"))
        steps.append(BlockStep(base / "memories" / "global_rules.md", RULES, "rules"))
    else:
        todo.insert(0, "Windsurf reads MCP servers only from ~/.codeium/windsurf/"
                       "mcp_config.json: run `ocm init --agents windsurf --user` once")
        rule = (f"---\ntrigger: always_on\ndescription: openCodeMemory session memory "
                f"({OWN_MARKER})\n---\n\n{RULES}")
        steps.append(OwnFileStep(ctx.root / ".windsurf" / "rules" / "ocm.md", rule, "rules"))
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("windsurf")) or (home / ".codeium" / "windsurf").is_dir()

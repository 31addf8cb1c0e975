"""OpenCode (`opencode-ai`): a project plugin `.opencode/plugins/ocm.js`, the MCP server in
`opencode.json` (`mcp.ocm`, `type: "local"`, `command` as a list), rules in AGENTS.md.

OpenCode has no command hooks: plugins are JavaScript modules it loads from
`.opencode/{plugin,plugins}/*.{js,ts}` (checked in the installed 1.18.33 binary), each named
export an async function returning hooks. Ours forwards what ocm needs to
`ocm-hook opencode <event>` as JSON on stdin, Claude-shaped (`session_id`, `tool_name`,
`tool_input`, `tool_response`), and puts the session-start brief into the system prompt
(`experimental.chat.system.transform`), where it also survives a compaction.
"""

from __future__ import annotations

import json

from . import common as c
from .base import RULES, SERVER_NAME, InstallContext, hook_json_output

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .installer import Step

HOST = "opencode"
CAP = 10_000
VERIFIED_VERSION = "1.18.33"
EVENTS = {
    "session-created": c.START, "chat-message": c.PROMPT, "tool-execute-after": c.TOOL,
    "session-compacted": c.COMPACT, "session-idle": c.STOP, "session-deleted": c.END,
    "session-end": c.END,
}

# `file.edited` is not forwarded: it names no session and fires for the same edits as
# `tool.execute.after` (which says which session and whether the file was written or edited).
_PLUGIN = """\
// openCodeMemory (ocm-managed): `ocm uninstall` removes this file.
// Forwards OpenCode events to `ocm-hook opencode <event>` (JSON on stdin, always exit 0)
// and adds ocm's session brief to the system prompt. Checked against opencode-ai @VERSION@.
import { spawn } from "node:child_process";

const HOOK = @ARGV@;

function hook(event, payload, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(HOOK[0], [...HOOK.slice(1), "opencode", event],
                    { cwd, stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
    const timer = setTimeout(() => child.kill(), 15000);
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", () => { clearTimeout(timer); resolve(""); });
    child.on("close", () => { clearTimeout(timer); resolve(out); });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ hook_event_name: event, cwd, ...payload }));
  });
}

function briefOf(text) {
  try {
    return JSON.parse(text).hookSpecificOutput?.additionalContext || "";
  } catch {
    return "";
  }
}

export const OpenCodeMemory = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const briefs = new Map();
  const children = new Set();
  const start = (sessionID, source) => {
    if (!briefs.has(sessionID)) {
      briefs.set(sessionID, hook("session.created", { session_id: sessionID, source }, cwd)
        .then(briefOf));
    }
    return briefs.get(sessionID);
  };
  return {
    event: async ({ event }) => {
      const p = event.properties || {};
      if (event.type === "session.created" && p.info) {
        if (p.info.parentID) children.add(p.info.id);
        else await start(p.info.id, "startup");
      } else if (event.type === "session.idle" && !children.has(p.sessionID)) {
        await hook("session.idle", { session_id: p.sessionID }, cwd);
      } else if (event.type === "session.compacted" && !children.has(p.sessionID)) {
        await hook("session.compacted", { session_id: p.sessionID, trigger: "auto" }, cwd);
      } else if (event.type === "session.deleted" && p.info && briefs.has(p.info.id)) {
        briefs.delete(p.info.id);
        await hook("session.deleted", { session_id: p.info.id, reason: "deleted" }, cwd);
      }
    },
    "chat.message": async (input, output) => {
      if (children.has(input.sessionID)) return;
      const text = (output.parts || [])
        .filter((part) => part.type === "text" && !part.synthetic && part.text)
        .map((part) => part.text).join("\\n");
      if (text) await hook("chat.message", { session_id: input.sessionID, prompt: text }, cwd);
    },
    "tool.execute.after": async (input, output) => {
      if (children.has(input.sessionID)) return;
      const meta = (output && output.metadata) || {};
      await hook("tool.execute.after", {
        session_id: input.sessionID, tool_name: input.tool, tool_input: input.args,
        tool_use_id: input.callID,
        tool_response: { output: output && output.output, exit_code: meta.exit },
      }, cwd);
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID || children.has(input.sessionID)) return;
      const brief = await start(input.sessionID, "resume");
      if (brief) output.system.push(brief);
    },
    dispose: async () => {
      for (const sessionID of briefs.keys()) {
        await hook("session.end", { session_id: sessionID, reason: "exit" }, cwd);
      }
    },
  };
};
"""


def output(kind: str, context: str | None) -> str:
    """The plugin reads `hookSpecificOutput.additionalContext` of a session start."""
    if context and kind == c.START:
        return hook_json_output("SessionStart", context)
    return ""


def plugin_source(ctx: InstallContext) -> str:
    import shlex

    argv = shlex.split(ctx.hook_exe)
    return (_PLUGIN.replace("@ARGV@", json.dumps(argv))
            .replace("@VERSION@", VERIFIED_VERSION))


def _server_is_ours(entry: Any) -> bool:
    import os

    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    words = [str(w) for w in command] if isinstance(command, list) else []
    return bool(words) and os.path.basename(words[0]).split(".")[0] in (
        "ocm", "python", "python3") and ("mcp" in words[1:2] or "ocm" in " ".join(words[1:]))


def server(ctx: InstallContext) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "local", "command": [ctx.ocm_exe, "mcp"], "enabled": True}
    env = ctx.project_env()
    if env:
        entry["environment"] = env
    return entry


def config_dir(ctx: InstallContext) -> Path:
    import os
    from pathlib import Path

    if ctx.user:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        return (Path(xdg) if xdg else ctx.home / ".config") / "opencode"
    return ctx.root / ".opencode"


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import BlockStep, JsonStep, OwnFileStep, SetKey

    base = config_dir(ctx)
    config = base / "opencode.json" if ctx.user else ctx.root / "opencode.json"
    steps: list[Step] = [
        JsonStep(config, [SetKey(("mcp", SERVER_NAME), server(ctx), _server_is_ours)],
                 "MCP server", skeleton={"$schema": "https://opencode.ai/config.json"}),
        OwnFileStep(base / "plugins" / "ocm.js", plugin_source(ctx), "hooks (plugin)"),
        BlockStep((base if ctx.user else ctx.root) / "AGENTS.md", RULES, "rules"),
    ]
    todo = ["restart OpenCode so it loads the plugin (it reads plugins at start-up)"]
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("opencode")) or (home / ".config" / "opencode").is_dir()

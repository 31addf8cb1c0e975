"""OpenCode (`opencode-ai`): a project plugin `.opencode/plugins/ocm.js`, the MCP server in
`opencode.json` (`mcp.ocm`, `type: "local"`, `command` as a list), rules in AGENTS.md.

OpenCode has no command hooks: plugins are JavaScript modules it loads from
`.opencode/{plugin,plugins}/*.{js,ts}` (checked in the installed 1.18.33 binary), each named
export an async function returning hooks. Ours forwards what ocm needs to
`ocm-hook opencode <event>` as JSON on stdin, Claude-shaped (`session_id`, `tool_name`,
`tool_input`, `tool_response`), and puts the session-start brief into the system prompt
(`experimental.chat.system.transform`), where it also survives a compaction.

Forks of OpenCode that keep its plugin API and session tables (Kilo CLI: ocm.agents.kilo)
are wired by this same code, told apart by a `Fork` (their folders, file and variable names).
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


class Fork:
    """Where OpenCode, or a fork of it with the same plugin API and session database, keeps
    things (plain class: cheap to import on the hook path)."""

    def __init__(self, host: str, name: str, package: str, version: str, app: str,
                 folder: str, project_config: str, db_env: str, schema: str) -> None:
        self.host = host                # ocm's host name: `ocm-hook <host> <event>`
        self.name = name                # as people call it
        self.package = package          # its npm package
        self.version = version          # the version the plugin was checked against
        self.app = app                  # its XDG folder name, binary, `<app>.db`, `<app>.json`
        self.folder = folder            # the project's config folder (plugins under it)
        self.project_config = project_config  # the project config file, from the root
        self.db_env = db_env            # the variable that names its database
        self.schema = schema            # its config file's `$schema`


OPENCODE = Fork(HOST, "OpenCode", "opencode-ai", VERIFIED_VERSION, "opencode",
                ".opencode", "opencode.json", "OPENCODE_DB", "https://opencode.ai/config.json")
EVENTS = {
    "session-created": c.START, "chat-message": c.PROMPT, "tool-execute-after": c.TOOL,
    "session-compacted": c.COMPACT, "session-idle": c.STOP, "session-deleted": c.END,
    "session-end": c.END,
}

# `file.edited` is not forwarded: it names no session and fires for the same edits as
# `tool.execute.after` (which says which session and whether the file was written or edited).
_PLUGIN = """\
// openCodeMemory (ocm-managed): `ocm uninstall` removes this file.
// Forwards @NAME@ events to `ocm-hook @HOST@ <event>` (JSON on stdin, always exit 0)
// and adds ocm's session brief to the system prompt. Checked against @PACKAGE@ @VERSION@.
import { spawn } from "node:child_process";

const HOOK = @ARGV@;

function hook(event, payload, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(HOOK[0], [...HOOK.slice(1), "@HOST@", event],
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


def plugin_source(ctx: InstallContext, fork: Fork = OPENCODE) -> str:
    import shlex

    argv = shlex.split(ctx.hook_exe)
    return (_PLUGIN.replace("@ARGV@", json.dumps(argv)).replace("@HOST@", fork.host)
            .replace("@NAME@", fork.name).replace("@PACKAGE@", fork.package)
            .replace("@VERSION@", fork.version))


def _server_is_ours(entry: Any) -> bool:
    import os

    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    words = [str(w) for w in command] if isinstance(command, list) else []
    return bool(words) and os.path.basename(words[0]).split(".")[0] in (
        "ocm", "python", "python3") and ("mcp" in words[1:2] or "ocm" in " ".join(words[1:]))


def server(ctx: InstallContext) -> dict[str, Any]:
    return {"type": "local", "command": [ctx.ocm_exe, "mcp"], "enabled": True}


def config_dir(ctx: InstallContext, fork: Fork = OPENCODE) -> Path:
    import os
    from pathlib import Path

    if ctx.user:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        return (Path(xdg) if xdg else ctx.home / ".config") / fork.app
    return ctx.root / fork.folder


def plan(ctx: InstallContext, fork: Fork = OPENCODE) -> tuple[list[Step], list[str]]:
    from .installer import BlockStep, JsonStep, OwnFileStep, SetKey

    base = config_dir(ctx, fork)
    config = base / f"{fork.app}.json" if ctx.user else ctx.root / fork.project_config
    steps: list[Step] = [
        JsonStep(config, [SetKey(("mcp", SERVER_NAME), server(ctx), _server_is_ours)],
                 "MCP server", skeleton={"$schema": fork.schema}),
        OwnFileStep(base / "plugins" / "ocm.js", plugin_source(ctx, fork), "hooks (plugin)"),
        BlockStep((base if ctx.user else ctx.root) / "AGENTS.md", RULES, "rules"),
    ]
    todo = [f"restart {fork.name} so it loads the plugin (it reads plugins at start-up)"]
    return steps, todo


def detected(home: Path, fork: Fork = OPENCODE) -> bool:
    import shutil

    return bool(shutil.which(fork.app)) or (home / ".config" / fork.app).is_dir()


# --------------------------------------------------------------------------- transcript
#
# OpenCode 1.x keeps a session's conversation in SQLite (`opencode.db` in its data folder:
# tables `message` and `part`, each row's `data` a JSON object), not in a file it appends
# to. At a turn's end (and at compaction and session end) `transcript_source` copies the
# session's newly completed messages into an append-only JSON-lines file of ocm's own under
# `.hooks/opencode/`, one line per message in the shape of `opencode export` (`info`,
# `parts`), keeping only what a transcript note shows (text, tool name, input without file
# contents, status, exit code, the ends of a tool's output), redacted before it is written.
# That file is what `parse_transcript` reads, like any other host's transcript.

_DROP_INPUT = ("content", "oldString", "newString", "patchText")
_OUTPUT_END = 1500  # characters kept from either end of a tool's output


def database(env: dict[str, str], fork: Fork = OPENCODE) -> str:
    """Where opencode-ai 1.18 keeps its sessions: `$OPENCODE_DB` (absolute, or relative to
    the data folder), else `<data>/opencode.db`, `<data>` being `$XDG_DATA_HOME/opencode`
    (default `~/.local/share/opencode`). Its non-release channels use `opencode-<channel>.db`:
    the newest such file when `opencode.db` is missing. A fork: its own names (Kilo 7.7.7:
    `$KILO_DB`, `$XDG_DATA_HOME/kilo/kilo.db`, `kilo-<channel>.db`)."""
    import glob
    import os

    data = os.path.join(env.get("XDG_DATA_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local", "share"), fork.app)
    named = env.get(fork.db_env)
    if named:
        return named if os.path.isabs(named) else os.path.join(data, named)
    default = os.path.join(data, f"{fork.app}.db")
    if os.path.exists(default):
        return default
    others = sorted(glob.glob(os.path.join(data, f"{fork.app}-*.db")), key=os.path.getmtime)
    return others[-1] if others else default


def _slim_part(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part.get("text") or "",
                "synthetic": bool(part.get("synthetic"))}
    if kind != "tool":
        return None
    state = c.as_dict(part.get("state"))
    tool_input = state.get("input")
    if isinstance(tool_input, dict):
        tool_input = {k: v for k, v in tool_input.items() if k not in _DROP_INPUT}
    output = str(state.get("output") or state.get("error") or "")
    if len(output) > 2 * _OUTPUT_END:
        output = _redacted(output)  # before the cut: a straddling secret leaves nothing
        output = output[:_OUTPUT_END] + "\n" + output[-_OUTPUT_END:]
    meta = c.as_dict(state.get("metadata"))
    return {"type": "tool", "tool": part.get("tool") or "?", "callID": part.get("callID") or "",
            "state": {"status": state.get("status") or "", "input": tool_input,
                      "output": output, "metadata": {"exit": meta.get("exit")}}}


def _redacted(value: Any) -> Any:
    from ocm.vault.secrets.redact import redact

    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    return value


def export_session(db_path: str, session_id: str, out_path: str) -> int:
    """Append the session's messages completed since the last export to `out_path`; returns
    how many. The position reached (`time_created`, `id` of the last message written) is kept
    in `<out_path>.pos`; an assistant message still being written stops the export there."""
    import os
    import sqlite3

    pos_path = out_path + ".pos"
    try:
        with open(pos_path, encoding="utf-8") as handle:
            after_time, after_id = json.load(handle)
    except (OSError, ValueError, TypeError):
        after_time, after_id = -1, ""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=2.0)
    try:
        rows = db.execute(
            "SELECT id, time_created, data FROM message WHERE session_id = ? AND "
            "(time_created > ? OR (time_created = ? AND id > ?)) ORDER BY time_created, id",
            (session_id, after_time, after_time, after_id)).fetchall()
        lines: list[str] = []
        last: tuple[int, str] | None = None
        for message_id, created, data in rows:
            info = json.loads(data)
            if not isinstance(info, dict):
                continue
            if info.get("role") == "assistant" and not (info.get("time") or {}).get("completed"):
                break  # still being written: the next export starts here
            parts = []
            for (part_data,) in db.execute(
                    "SELECT data FROM part WHERE message_id = ? ORDER BY time_created, id",
                    (message_id,)):
                part = json.loads(part_data)
                slim = _slim_part(part) if isinstance(part, dict) else None
                if slim is not None:
                    parts.append(slim)
            record = {"info": {"id": message_id, "role": info.get("role"),
                               "time": {"created": created}}, "parts": parts}
            lines.append(json.dumps(_redacted(record), ensure_ascii=False))
            last = (created, message_id)
    finally:
        db.close()
    if last is None:
        return 0
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "a", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    with open(pos_path, "w", encoding="utf-8") as handle:
        json.dump(list(last), handle)
    return len(lines)


def transcript_source(ev: Any, vault_dir: str, env: dict[str, str],
                      fork: Fork = OPENCODE) -> str:
    """The session's transcript file, brought up to date from OpenCode's database ("" when
    transcripts are off or there is nothing to read; never raises)."""
    import hashlib
    import os

    from ocm.vault.freshness import journal

    from .transcript import enabled

    if not ev.session_id or not enabled(vault_dir, env):
        return ""
    db_path = database(env, fork)
    if not os.path.exists(db_path):
        journal.log(vault_dir, f"{fork.host} {ev.event}: no session database at {db_path}; "
                               "no transcript")
        return ""
    name = hashlib.sha1(ev.session_id.encode()).hexdigest()[:24]
    out_path = os.path.join(journal.hooks_dir(vault_dir), fork.host, f"{name}.jsonl")
    try:
        export_session(db_path, ev.session_id, out_path)
    except Exception as exc:  # noqa: BLE001 - a changed schema or a locked database
        journal.log(vault_dir, f"{fork.host} {ev.event}: reading {db_path} failed "
                               f"({type(exc).__name__}: {exc}); transcript not updated")
    return out_path if os.path.exists(out_path) else ""


def _iso(ms: Any) -> str:
    from datetime import UTC, datetime

    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from the messages `transcript_source` exported (the shape of `opencode export`'s
    messages: `info` with `role` and `time.created` in ms, `parts`): user text parts (not
    synthetic ones) as the prompt, assistant text and tool parts with their status and exit
    code (`metadata.exit` for bash, else `status: error` as a failure)."""
    from .transcript import TurnBuilder, describe_tool, outcome, records

    out = TurnBuilder()
    for rec in records(lines):
        info, parts = rec.get("info"), rec.get("parts")
        if not isinstance(info, dict) or not isinstance(parts, list):
            continue
        out.known += 1
        time = _iso((info.get("time") or {}).get("created"))
        parts = [p for p in parts if isinstance(p, dict)]
        if info.get("role") == "user":
            out.prompt("\n".join(str(p.get("text") or "") for p in parts
                                 if p.get("type") == "text" and not p.get("synthetic")), time)
            continue
        if info.get("role") != "assistant":
            continue
        for part in parts:
            if part.get("type") == "text":
                out.text(str(part.get("text") or ""), time)
                continue
            state = c.as_dict(part.get("state"))
            call = describe_tool(str(part.get("tool") or "?"), state.get("input"), cwd)
            status = str(state.get("status") or "")
            exit_code = (state.get("metadata") or {}).get("exit")
            if not isinstance(exit_code, int) or isinstance(exit_code, bool):
                exit_code = None
            failed = (bool(exit_code) if exit_code is not None
                      else status == "error" if status in ("completed", "error") else None)
            call.exit, call.error = outcome(str(state.get("output") or ""), failed)
            if exit_code is not None:
                call.exit = exit_code
            out.tool(str(part.get("callID") or ""), call, time)
    return out.turns, out.known

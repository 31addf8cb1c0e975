"""Factory droid (`droid`, npm `droid`): Claude-shaped hooks in `.factory/settings.json`, the
MCP server in `.factory/mcp.json`, rules in AGENTS.md.

What the recorded run (reference/hosts/captured-2026-11/droid-0.215.0) and the real 0.215.0
showed, and what this module does about it:
* hooks are Claude Code's events and payloads with droid's tool names (`Create`, `Edit`,
  `Execute`); `tool_response` is a string, an `Execute`'s ending in `[Process exited with
  code N]` (`common.shell_outcome` reads it); `Stop` takes Claude's `{"decision": "block",
  "reason": …}` and the model goes on with the reason (nudges);
* a failing `Execute` fires no hook at all: its failure is read from the transcript at the
  next hook of the session (`missed_events`), so the session note still lists it and a
  later fix still makes a `bug_fix`;
* `UserPromptSubmit` does not fire in `droid exec`: the prompt comes from the transcript;
* the transcript is `~/.factory/sessions/<project>/<session>.jsonl` (`parse_transcript`).
"""

from __future__ import annotations

import json
import os

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

HOST = "droid"
CAP = 10_000
_TOOLS = "Create|Edit|MultiEdit|ApplyPatch|Read|Execute"
# (droid's event, our event name, matcher, timeout in seconds)
HOOKS: list[tuple[str, str, str | None, int]] = [
    ("SessionStart", "session-start", None, 15),
    ("UserPromptSubmit", "user-prompt-submit", None, 10),
    ("PostToolUse", "post-tool-use", _TOOLS, 10),
    ("PreToolUse", "pre-tool-use", "Execute", 10),
    ("PreCompact", "pre-compact", None, 30),
    ("Stop", "stop", None, 30),
    ("SessionEnd", "session-end", None, 15),
]
SHELL_TOOL = "Execute"
_STATE = "droid"
_MAX_READ = 4_000_000


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import AppendItem, BlockStep, JsonStep, SetKey

    base = ctx.home / ".factory" if ctx.user else ctx.root / ".factory"
    steps: list[Step] = [
        JsonStep(base / "mcp.json", [SetKey(("mcpServers", SERVER_NAME),
                                            ctx.server(), server_is_ours)],
                 "MCP server"),
        JsonStep(base / "settings.json", [AppendItem(("hooks", event), group,
                                                     hook_group_is_ours)
                                          for event, group in hook_entries(ctx, HOST, HOOKS)],
                 "hooks"),
        BlockStep((base if ctx.user else ctx.root) / "AGENTS.md", RULES, "rules"),
    ]
    return steps, ["start `droid` at the repository root and allow the 'ocm' tools it asks "
                   "about"]


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("droid")) or (home / ".factory").is_dir()


# --------------------------------------------------------------------------- missed failures


def _content(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = c.as_dict(record.get("message"))
    return [b for b in c.as_list(message.get("content")) if isinstance(b, dict)]


def missed_events(ev: c.HookEvent, vault_dir: str) -> list[tuple[str, c.HookEvent]]:
    """What droid sent no hook for, from the part of the session's transcript added since
    the last hook looked: each failed `Execute` (a shell event, failed, with its error line)
    and each typed prompt (`droid exec` fires no `UserPromptSubmit`), as (a key unique to
    the transcript record, the event). Reads only the bytes after the last look (a small
    state file under `.hooks/droid/`); never raises."""
    out = []
    for key, command, error in _missed(ev, vault_dir):
        missed = c.HookEvent(ev.host, ev.invoked_as, ev.event, c.SHELL if command else c.PROMPT)
        missed.session_id = ev.session_id
        if command:
            missed.command = c.redacted_cut(" ".join(command.split()), c.MAX_COMMAND_CHARS)
            missed.ok, missed.error = False, error
        else:
            missed.prompt = c.redacted_cut(error, c.MAX_PROMPT_CHARS * 4)
        out.append((f"{ev.transcript_path}|{key}", missed))
    return out


def _missed(ev: c.HookEvent, vault_dir: str) -> list[tuple[str, str, str]]:
    """(record key, command, error line) per failed `Execute`; (record key, "", words) per
    typed prompt."""
    if not ev.transcript_path or not ev.session_id:
        return []
    import hashlib

    from ocm.vault.freshness import journal

    folder = os.path.join(journal.hooks_dir(vault_dir), _STATE)
    state_path = os.path.join(folder, hashlib.sha1(
        f"{ev.session_id}|{ev.transcript_path}".encode()).hexdigest()[:24] + ".json")
    try:
        with open(state_path, encoding="utf-8") as handle:
            state = json.load(handle)
        offset, calls = int(state["offset"]), dict(state["calls"])
    except (OSError, ValueError, KeyError, TypeError):
        offset, calls = 0, {}
    try:
        with open(ev.transcript_path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < offset:  # a new file under the same name
                offset, calls = 0, {}
            handle.seek(offset)
            chunk = handle.read(_MAX_READ)
    except OSError:
        return []
    complete = chunk[: chunk.rfind(b"\n") + 1]
    if not complete:
        return []
    from .transcript import records

    found: list[tuple[str, str, str]] = []
    for rec in records(complete.splitlines()):
        message = c.as_dict(rec.get("message"))
        if message.get("role") == "user" and not message.get("visibility") and not \
                message.get("hookEventName"):
            from ocm.vault.transcripts import strip_injected

            words = strip_injected("\n".join(str(b.get("text") or "") for b in _content(rec)
                                             if b.get("type") == "text"))
            from .nudge.message import MARKER

            if words and not words.startswith(f"[{MARKER}]"):  # not ocm's own nudge
                found.append((str(rec.get("id") or ""), "", words))
        for block in _content(rec):
            if block.get("type") == "tool_use" and block.get("name") == SHELL_TOOL:
                calls[str(block.get("id") or "")] = c.command_text(block.get("input"))
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                command = calls.pop(str(block["tool_use_id"]))
                if block.get("is_error") is True and command:
                    error = c.error_line(c.text_of(block.get("content"), 20_000))
                    found.append((str(block["tool_use_id"]), command, error))
    try:
        os.makedirs(folder, exist_ok=True)
        with open(state_path, "w", encoding="utf-8") as handle:
            json.dump({"offset": offset + len(complete), "calls": calls}, handle)
    except OSError:
        return []  # not remembered: reported next time instead of twice
    return found


# --------------------------------------------------------------------------- transcript


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from `sessions/<project>/<session>.jsonl`: `message` records in Anthropic's
    shape. User records with text are prompts, except those droid adds itself (a
    `visibility`: hook results, system reminders); assistant text and `tool_use` blocks;
    `tool_result` blocks with `is_error` and the exit line. `session_start` and other
    bookkeeping records are known and skipped."""
    from .transcript import TurnBuilder, describe_tool, outcome, records

    out = TurnBuilder()
    for rec in records(lines):
        kind = rec.get("type")
        if kind != "message":
            if kind in ("session_start", "agent_turn_outcome"):
                out.known += 1
            continue
        out.known += 1
        message = c.as_dict(rec.get("message"))
        time = str(rec.get("timestamp") or "")
        blocks = _content(rec)
        if message.get("role") == "user":
            for block in blocks:
                if block.get("type") == "tool_result":
                    body = c.text_of(block.get("content"), 20_000)
                    code, error = outcome(body, block.get("is_error") is True)
                    out.result(str(block.get("tool_use_id") or ""), code, error)
            if not message.get("visibility") and not message.get("hookEventName"):
                out.prompt("\n".join(str(b.get("text") or "") for b in blocks
                                     if b.get("type") == "text"), time)
            continue
        for block in blocks:
            if block.get("type") == "text":
                out.text(str(block.get("text") or ""), time)
            elif block.get("type") == "tool_use" and block.get("name") != "ToolSearch":
                out.tool(str(block.get("id") or ""), describe_tool(
                    str(block.get("name") or "?"), block.get("input"), cwd), time)
    return out.turns, out.known

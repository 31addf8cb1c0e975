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


# Gemini compresses on its own only when the prompt nears its threshold (half the model's
# window by default, which is 1M tokens). It fires `PreCompress` with `trigger: auto`
# before every model call regardless (payloads/gemini/03, 05, ... with 10-token prompts), so
# an automatic one counts only when the transcript's last prompt was at least this big.
AUTO_COMPRESS_MIN_TOKENS = 100_000
_TAIL_BYTES = 262_144


def _last_prompt_tokens(transcript: str) -> int | None:
    """`tokens.input` of the newest model turn in a Gemini session transcript (JSONL)."""
    import os

    try:
        with open(transcript, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read().decode("utf-8", "replace")
    except (OSError, TypeError, ValueError):
        return None
    for line in reversed(tail.splitlines()):
        if '"tokens"' not in line:
            continue
        try:
            tokens = json.loads(line).get("tokens")
        except (ValueError, AttributeError, RecursionError):
            continue
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
            return tokens["input"]
    return None


def compaction_is_real(data: dict[str, Any], env: dict[str, str]) -> bool:
    """`/compress` (`trigger: manual`) always; `auto` only with a prompt that big."""
    if str(data.get("trigger") or "").lower() == "manual":
        return True
    try:
        floor = int(env.get("OCM_GEMINI_COMPRESS_TOKENS") or AUTO_COMPRESS_MIN_TOKENS)
    except ValueError:
        floor = AUTO_COMPRESS_MIN_TOKENS
    tokens = _last_prompt_tokens(str(data.get("transcript_path") or ""))
    return tokens is not None and tokens >= floor


def output(kind: str, context: str | None) -> str:
    """Always exactly one JSON object (Gemini parses stdout as JSON)."""
    if context and kind in _OUTPUT_EVENT:
        return json.dumps({"hookSpecificOutput": {"hookEventName": _OUTPUT_EVENT[kind],
                                                  "additionalContext": context}},
                          ensure_ascii=False)
    if context and kind == c.STOP:  # a nudge: AfterAgent's deny sends `reason` as a prompt
        return json.dumps({"decision": "deny", "reason": context}, ensure_ascii=False)
    return "{}"


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import AppendItem, BlockStep, JsonStep, SetKey


    base = ctx.home / ".gemini" if ctx.user else ctx.root / ".gemini"
    edits: list[Any] = [SetKey(("mcpServers", SERVER_NAME),
                               {**ctx.server(with_type=False),
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


def parse_transcript(lines: list[bytes], cwd: str) -> tuple[list[Any], int]:
    """Turns from the new lines of `~/.gemini/tmp/<project>/chats/session-*.jsonl`: user
    messages with text (the `<hook_context>` brief ocm injected removed; function responses
    and `<session_context>` skipped), `gemini` messages' content (not `thoughts`) and
    `toolCalls` with their status. Gemini rewrites a message under the same id as it
    completes: the last version of each id counts. `$set` metadata lines are skipped."""
    from .transcript import TurnBuilder, describe_tool, outcome, records

    latest: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    known = 0
    for rec in records(lines):
        if "$set" in rec or "sessionId" in rec:
            known += 1
            continue
        if rec.get("type") not in ("user", "gemini", "info", "error", "warning"):
            continue
        known += 1
        key = str(rec.get("id") or len(order))
        if key not in latest:
            order.append(key)
        latest[key] = rec
    out = TurnBuilder()
    out.known = known
    for key in order:
        rec = latest[key]
        time = str(rec.get("timestamp") or "")
        content = rec.get("content")
        if rec.get("type") == "user":
            parts = content if isinstance(content, list) else [{"text": content}]
            text = "\n".join(str(p.get("text") or "") for p in parts
                             if isinstance(p, dict) and isinstance(p.get("text"), str))
            out.prompt(text, time)
            continue
        if rec.get("type") != "gemini":
            continue
        out.text(c.text_of(content) if not isinstance(content, str) else content, time)
        for call in rec.get("toolCalls") or []:
            if not isinstance(call, dict):
                continue
            tool = describe_tool(str(call.get("name") or "?"), call.get("args"), cwd)
            reply = "\n".join(c.text_of(((item.get("functionResponse") or {}).get(
                "response")), 20_000) for item in call.get("result") or []
                if isinstance(item, dict))
            status = str(call.get("status") or "")
            failed = None if not status else status not in ("success", "completed")
            tool.exit, tool.error = outcome(reply, failed)
            out.tool(str(call.get("id") or ""), tool, time)
    return out.turns, out.known

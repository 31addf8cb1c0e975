"""Google Antigravity (the IDE and its `agy` CLI): not installable here, and no official page
of its customisation was found (README, "Google Antigravity", cites what was read). What
several third-party descriptions agree on, and is all ocm writes:

* the project MCP server in `.agents/mcp_config.json` (`mcpServers`, the Claude shape), the
  user's in `~/.gemini/antigravity/mcp_config.json`;
* the rules as an always-on workspace rule, `.agents/rules/ocm.md` (`trigger: always_on`);
* a skill, `.agents/skills/ocm-checkpoint/SKILL.md` (user: `~/.gemini/antigravity/skills/`),
  that tells the agent when and how to save its progress with `ocm__checkpoint`.

No hooks: the descriptions of its `hooks.json` disagree on the file's shape (named groups
or not) and on what a `PostToolUse` payload carries (one says no tool name or arguments),
and none shows a payload; a session is kept by the agent's own checkpoints.
"""

from __future__ import annotations

from .base import RULES, SERVER_NAME, InstallContext, server_is_ours

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from pathlib import Path

    from .installer import Step

HOST = "antigravity"
CAP = 10_000
EVENTS: dict[str, str] = {}  # no hooks wired (see above)
SKILL_NAME = "ocm-checkpoint"
SKILL = f"""---
name: {SKILL_NAME}
description: Save this coding session to the project's openCodeMemory (ocm) with the
  ocm__checkpoint tool - at the start of a task, before a git commit, when the context is
  about 70% full or was just compacted, when the user asks to save, and when a task ends.
---
<!-- ocm-managed: `ocm uninstall` removes this skill. -->

# Checkpoint the session to ocm

This project keeps its memory in `.openCodeMemory/` through the `ocm` MCP server. Nothing
records this session for you: your checkpoints are the session's note.

1. At the start of a task, call `ocm__recall` (optionally with the topic) to load what
   earlier sessions left: pinned memories, the last goal, pending work.
2. Call `ocm__checkpoint` without asking the user: after the first real step of a task
   (with a `slug` of 3-4 hyphenated words), before every git commit, when the context is
   about 70% full or was just compacted, when the user asks to save, and when a task ends.
   Pass the `session_id` the first checkpoint returned on every later one.
3. Fields: `goal` (1-2 specific sentences), `work_completed` (one bullet per finished
   task), `work_pending` (the full remaining list), `work_summary`, `decisions`
   (`**Label:** rationale.`), `files` you changed, `references`.
4. A fact a later session needs (a gotcha, a fix, a decision): `ocm__remember` with its
   `type` and the `files` it concerns.
"""


def output(kind: str, context: str | None) -> str:
    return ""


def _base(ctx: InstallContext) -> Path:
    return ctx.home / ".gemini" / "antigravity" if ctx.user else ctx.root / ".agents"


def plan(ctx: InstallContext) -> tuple[list[Step], list[str]]:
    from .installer import OWN_MARKER, JsonStep, OwnFileStep, SetKey

    base = _base(ctx)
    steps: list[Step] = [
        JsonStep(base / "mcp_config.json", [SetKey(("mcpServers", SERVER_NAME),
                                                   ctx.server(ctx.project_env(), False),
                                                   server_is_ours)], "MCP server"),
        OwnFileStep(base / "skills" / SKILL_NAME / "SKILL.md", SKILL, "skill"),
    ]
    todo = ["open the MCP servers panel in Antigravity and refresh it so 'ocm' starts; "
            "no hooks: the agent's own checkpoints keep the session (README)"]
    if ctx.user:
        todo.append("add the openCodeMemory rules as a global rule (~/.gemini/GEMINI.md)")
    else:
        rule = f"---\ntrigger: always_on\n---\n<!-- {OWN_MARKER} -->\n\n{RULES}"
        steps.append(OwnFileStep(base / "rules" / "ocm.md", rule, "rules"))
    return steps, todo


def detected(home: Path) -> bool:
    import shutil

    return bool(shutil.which("agy")) or (home / ".gemini" / "antigravity").is_dir()

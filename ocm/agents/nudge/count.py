"""Count-based fallback (seed 004 §15): after `edits_threshold` edits without a checkpoint,
the next prompt's hook adds context asking for `ocm__checkpoint`, naming the files edited.

One window at a time, kept as `count` in the nudge state file: it starts at the session's
start, restarts when the agent checkpoints (what it wrote changed) and after it fired, so
it fires at most once per window. Where it runs (`applies`): with `nudges: end` only on
hosts whose prompt hook can add context but that get no end-of-turn nudge (there it
stands in for the end-of-turn nudge: Copilot CLI); with `all` on every host whose prompt
hook can add context; never with `off`. The window restarts at the first prompt after a
checkpoint, so edits between the checkpoint and that prompt are not counted.
"""

from __future__ import annotations

from ocm.agents.common import as_dict

from . import message
from .decide import HOSTS as STOP_HOSTS
from .decide import edited_since, guarded, load, read_note, save, sent
from .settings import ALL, END, edits_threshold, mode

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ocm.agents.common import HookEvent

# Hosts whose prompt hook's answer reaches the model (additionalContext): Claude Code,
# Codex and Gemini CLI (checked with the real programs), Copilot CLI (recorded payloads:
# a top-level `additionalContext`). Cursor's beforeSubmitPrompt, VS Code's
# UserPromptSubmit, Windsurf's pre_user_prompt and OpenCode's chat.message add nothing.
PROMPT_HOSTS = frozenset({"claude-code", "codex", "gemini", "copilot"})


def applies(host: str, vault_dir: str, env: dict[str, str]) -> bool:
    """Whether the fallback runs for this host under the setting in force (stdlib only)."""
    if host not in PROMPT_HOSTS:
        return False
    current = mode(vault_dir, env)
    return current == ALL or (current == END and host not in STOP_HOSTS)


def at_prompt(project: Any, ev: HookEvent, note_id: str, vault_dir: str,
              env: dict[str, str]) -> str | None:
    """The context for this prompt, or None. Never raises (logs instead)."""
    return guarded(ev, vault_dir, lambda: _at_prompt(project, ev, note_id, vault_dir, env))


def _at_prompt(project: Any, ev: HookEvent, note_id: str, vault_dir: str,
               env: dict[str, str]) -> str | None:
    now = read_note(project, note_id, vault_dir)
    state = load(vault_dir, note_id)
    window = as_dict(state.get("count")) or {"edits": 0, "files": {}, "agent": ""}
    here = {"edits": now["edits"], "files": now["files"], "agent": now["agent"]}
    if now["agent"] != (window.get("agent") or ""):  # the agent checkpointed: a new window
        save(vault_dir, note_id, {**state, "count": here})
        return None
    edits = now["edits"] - int(window.get("edits") or 0)
    if edits < edits_threshold(vault_dir, env):
        return None
    text = message.compose_count(note_id, edits, edited_since(window, now))
    save(vault_dir, note_id, {**state, "count": here,
                              "sent": int(state.get("sent") or 0) + 1,
                              "chars": int(state.get("chars") or 0) + len(text)})
    return sent(ev, vault_dir, text, f"after {edits} edits")

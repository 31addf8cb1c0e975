"""When to nudge at the end of a turn, from the session note and ocm's own hook state.

The state file `.hooks/nudge/<note id>.json` keeps a snapshot of the session note taken at
the last checkpoint, nudge or follow-up turn (`base`): its files, failed-command lines,
read/edit counters and a fingerprint of what the agent wrote (goal, work, decisions). At a
Stop the note is compared with it:

* the agent wrote something new (it checkpointed): no nudge, the snapshot moves on;
* the turn is the follow-up of a nudge (`stop_hook_active`, Cursor's `loop_count`, or our
  own `nudged` flag for hosts that say neither): no nudge, the snapshot moves on — a nudge
  is never repeated for the same work;
* the user interrupted the turn (Cursor's `status: aborted`) or nudges are off: no nudge,
  the snapshot stays (the work is still unsaved at the next turn's end);
* nothing real happened (no file, no failure, no decision, fewer than `TOOL_CALLS` reads
  and edits): no nudge, the snapshot stays where the last checkpoint left it;
* otherwise: the instruction, and the snapshot moves on.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from ocm.agents.common import as_dict
from ocm.vault.freshness import journal

from . import message
from .settings import OFF, mode

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ocm.agents.common import HookEvent
    from ocm.vault.sessions import SessionNote

FOLDER = "nudge"
# Hosts whose Stop-type hook can make the model go on with an instruction (checked with the
# real Claude Code 2.1.197, Codex 0.169.0 and Gemini CLI 0.61.0 in tests_e2e/test_nudges.py;
# Cursor's `followup_message` from its documentation and recorded payloads only). OpenCode:
# `opencode run` ends at `session.idle`, so a plugin's prompt there never reached the model.
HOSTS = frozenset({"claude-code", "codex", "gemini", "cursor", "qwen", "droid"})
TOOL_CALLS = 8  # reads and edits since the snapshot that make a turn worth saving
# A decision-shaped last message: "went with argparse over click", "decided to ...".
_DECIDED = re.compile(
    r"\b(decided|decision|chose|chosen|opted|went with|instead of|rather than|trade-?off|"
    r"in favou?r of|settled on)\b", re.I)
# `git commit`, `git -C dir commit`, `git -c k=v commit` (not `git commit-tree`, not a grep).
_COMMIT = re.compile(r"(?:^|[;&|(]\s*|\bthen\s+)git(?:\s+-[Cc]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*"
                     r"\s+commit(?:\s|$)")
_AGENT_SECTIONS = ("goal", "work completed", "work to be completed", "architecture decisions")


def _state_path(vault_dir: str, note_id: str) -> str:
    return os.path.join(journal.hooks_dir(vault_dir), FOLDER, f"{note_id}.json")


def load(vault_dir: str, note_id: str) -> dict[str, Any]:
    try:
        with open(_state_path(vault_dir, note_id), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(vault_dir: str, note_id: str, state: dict[str, Any]) -> None:
    from pathlib import Path

    from ocm.vault.atomic import atomic_write_text

    path = Path(_state_path(vault_dir, note_id))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(state, ensure_ascii=False))


def _agent_fingerprint(note: SessionNote) -> str:
    """What the agent wrote with `ocm__checkpoint`; "" while the note is all automatic."""
    from ocm.vault.autosummary import is_auto

    if is_auto(note):
        return ""
    text = "\n".join(note.text(key) for key in _AGENT_SECTIONS)
    return hashlib.sha1(text.encode()).hexdigest()[:16] if text.strip() else ""


def _count(note: SessionNote, key: str) -> int:
    value = note.fm.get(key)
    return value if isinstance(value, int) else 0


def snapshot(note: SessionNote, failing: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the note says now; `failing`: still-failing command -> when it last failed."""
    return {"files": note.files(), "failed": note.items("failed commands"),
            "edits": _count(note, "edits"), "reads": _count(note, "reads"),
            "agent": _agent_fingerprint(note), "failing": failing or {}}


def still_failing(vault_dir: str, note_id: str) -> dict[str, Any]:
    """Commands whose last run failed and that never passed since (the journal's state),
    with the time of that last failure (a re-failure moves it)."""
    from .unresolved import pending

    return {str(failure["command"]): failure.get("t") for failure in pending(vault_dir, note_id)}


def read_note(project: Any, note_id: str, vault_dir: str) -> dict[str, Any]:
    """The snapshot of the session note as it is now."""
    from ocm.vault.markdown import Document
    from ocm.vault.sessions import SessionNote

    path = project.vault.find_session(note_id)
    note = SessionNote(Document.parse(path.read_text(encoding="utf-8")))
    return snapshot(note, still_failing(vault_dir, note_id))


_FIXED = re.compile(r"^`(.+?)` passed after editing")


def edited_since(base: dict[str, Any], now: dict[str, Any]) -> list[str]:
    before = as_dict(base.get("files"))
    return [path for path, change in now["files"].items() if before.get(path) != change]


def happened(base: dict[str, Any], now: dict[str, Any], last_message: str) -> str:
    """The sentence naming the turn's real work since `base`; "" for a trivial turn."""
    files = edited_since(base, now)
    old = set(base.get("failed") or [])
    fixed = [m.group(1) for line in now["failed"] if line not in old
             and (m := _FIXED.match(line))]
    # Failed since the snapshot: a new failure, or a pending one that failed again (its
    # Failed Commands bullet only moves, so the note's lines alone cannot tell).
    failing, then = as_dict(now.get("failing")), as_dict(base.get("failing"))
    failed_now = [cmd for cmd, at in failing.items() if cmd not in then or then[cmd] != at]
    # A failure that was already pending at the last snapshot still counts if files moved.
    failing_shown = failed_now or (list(failing) if files else [])
    calls = (now["edits"] + now["reads"]) - (int(base.get("edits") or 0)
                                             + int(base.get("reads") or 0))
    decided = bool(_DECIDED.search(last_message or ""))
    if not (files or fixed or failed_now or decided or calls >= TOOL_CALLS):
        return ""
    return message.what_happened(files, failing_shown, fixed, decided,
                                 calls if calls >= TOOL_CALLS else 0)


def guarded(ev: HookEvent, vault_dir: str, nudge: Callable[[], str | None]) -> str | None:
    """`nudge()`, or None when it raises (logged): a nudge must never break the hook."""
    try:
        return nudge()
    except Exception as exc:  # noqa: BLE001
        journal.log(vault_dir, f"{ev.host} {ev.event}: nudge failed: "
                               f"{type(exc).__name__}: {exc}")
        return None


def sent(ev: HookEvent, vault_dir: str, text: str, moment: str = "") -> str:
    """Log a nudge (`nudged[ moment] (N chars)`: what bench/nudges.py reads) and return it."""
    journal.log(vault_dir, f"{ev.host} {ev.event} {ev.session_id}: nudged"
                           f"{' ' + moment if moment else ''} ({len(text)} chars)")
    return text


def at_stop(project: Any, ev: HookEvent, note_id: str, vault_dir: str,
            env: dict[str, str]) -> str | None:
    """The nudge for this Stop, or None. Never raises (logs instead)."""
    return guarded(ev, vault_dir, lambda: _at_stop(project, ev, note_id, vault_dir, env))


def _at_stop(project: Any, ev: HookEvent, note_id: str, vault_dir: str,
             env: dict[str, str]) -> str | None:
    if ev.host not in HOSTS or mode(vault_dir, env) == OFF:
        return None
    now = read_note(project, note_id, vault_dir)
    state = load(vault_dir, note_id)
    base = as_dict(state.get("base"))
    if ev.interrupted:  # the user stopped the turn: its work waits for the next turn's end
        return None
    follow_up = ev.stop_active or bool(state.get("nudged"))
    if follow_up or now["agent"] != (base.get("agent") or ""):  # done, or just saved
        save(vault_dir, note_id, {**state, "base": now, "nudged": False})
        return None
    sentence = happened(base, now, ev.last_message)
    if not sentence:
        if state.get("nudged"):
            save(vault_dir, note_id, {**state, "nudged": False})
        return None
    text = message.compose(note_id, sentence)
    save(vault_dir, note_id, {**state, "base": now, "nudged": True,
                               "sent": int(state.get("sent") or 0) + 1,
                               "chars": int(state.get("chars") or 0) + len(text)})
    return sent(ev, vault_dir, text)


def unsaved(project: Any, note_id: str, vault_dir: str) -> str:
    """The sentence naming the work since the last snapshot; "" when the agent saved since
    or nothing happened. The state is not moved: the end-of-turn nudge still follows if the
    agent saves nothing."""
    now = read_note(project, note_id, vault_dir)
    base = as_dict(load(vault_dir, note_id).get("base"))
    if now["agent"] != (base.get("agent") or ""):
        return ""  # saved since the last snapshot
    return happened(base, now, "")


def after_compaction(project: Any, ev: HookEvent, note_id: str, vault_dir: str,
                     env: dict[str, str]) -> str | None:
    """A reminder for the brief a host injects after compacting the context, when the
    session holds unsaved work; None otherwise. No model turn of its own (it rides on the
    brief), so it runs with any setting but `off`."""
    def nudge() -> str | None:
        sentence = "" if mode(vault_dir, env) == OFF else unsaved(project, note_id, vault_dir)
        return sent(ev, vault_dir, message.compose_compaction(note_id, sentence),
                    "after a compaction") if sentence else None

    return guarded(ev, vault_dir, nudge)


def is_commit(command: str) -> bool:
    return bool(command) and _COMMIT.search(command) is not None


def before_commit(project: Any, ev: HookEvent, note_id: str, vault_dir: str) -> str | None:
    """Context before a git commit when the session holds unsaved work; None otherwise."""
    def nudge() -> str | None:
        sentence = unsaved(project, note_id, vault_dir)
        return sent(ev, vault_dir, message.compose_commit(note_id, sentence),
                    "before a commit") if sentence else None

    return guarded(ev, vault_dir, nudge)

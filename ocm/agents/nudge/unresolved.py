"""Without a model: a failure left unresolved at a session's end (a command that failed and
never passed afterwards) becomes a low-importance gotcha candidate in the session note, but
only when the same failure was also left unresolved by another session (one alone is noise).
The line goes in the note's Failed Commands, where the brief and a search find it.

`.openCodeMemory/.hooks/nudge/unresolved.json` maps each failure (command and the first
line of its error, digits dropped) to the sessions that ended with it."""

from __future__ import annotations

import json
import os
import re

from ocm.vault.freshness import journal

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms
if TYPE_CHECKING:
    from typing import Any

FILE = "unresolved.json"
SECTION = "failed commands"  # the candidate line goes beside the failure it is about
MAX_SESSIONS = 20  # kept per failure
MAX_FAILURES = 500  # kept in the file: the most recently seen


def _key(command: str, error: str) -> str:
    first = (error.splitlines() or [""])[0]
    return f"{command}\n{re.sub(r'[0-9]+', '#', first)[:120]}"


def pending(vault_dir: str, note_id: str) -> list[dict[str, Any]]:
    """The session's failures that never passed since (the journal's state file)."""
    path = os.path.join(journal.hooks_dir(vault_dir), journal.STATE_DIR, f"{note_id}.json")
    try:
        with open(path, encoding="utf-8") as handle:
            pending = json.load(handle).get("pending")
    except (OSError, ValueError, AttributeError):
        return []
    return [v for v in pending.values() if isinstance(v, dict) and v.get("command")] if (
        isinstance(pending, dict)) else []


def at_end(project: Any, note_id: str, vault_dir: str) -> list[str]:
    """Record this session's unresolved failures; add a candidate line to its note for each
    one another session also ended with. Returns the lines added. Never raises."""
    try:
        return _at_end(project, note_id, vault_dir)
    except Exception as exc:  # noqa: BLE001 - the session end goes on
        journal.log(vault_dir, f"unresolved failures at {note_id}: {type(exc).__name__}: {exc}")
        return []


def _at_end(project: Any, note_id: str, vault_dir: str) -> list[str]:
    from pathlib import Path

    from ocm.vault.atomic import atomic_write_text

    failures = pending(vault_dir, note_id)
    if not failures:
        return []
    path = Path(journal.hooks_dir(vault_dir)) / "nudge" / FILE
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    seen = seen if isinstance(seen, dict) else {}
    lines = []
    for failure in failures:
        command, error = str(failure["command"]), str(failure.get("error") or "")
        key = _key(command, error)
        others = [s for s in seen.pop(key, []) if s != note_id]
        seen[key] = ([note_id] + others)[:MAX_SESSIONS]
        if others:
            detail = f": `{error[:200]}`" if error else ""
            lines.append(f"Gotcha candidate (importance 1): `{command}` still failed at the "
                         f"end of this session and of {others[0]}{detail}; confirm it and "
                         "save it with ocm__remember, or ignore it")
    kept = dict(list(seen.items())[-MAX_FAILURES:])
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(kept, ensure_ascii=False))
    if lines:
        project.vault.session_edit(note_id, lambda note: note.add_items(SECTION, lines))
    return lines

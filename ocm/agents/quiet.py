"""Closing the sessions of a host without a session end (VS Code) after a quiet period.

VS Code never says a session ended. Its session is closed when its next session starts
(`dispatch._close_abandoned`), or, here, when any hook of the project runs after the session
has been quiet for `OCM_QUIET_CLOSE_MINUTES` (default 30; 0 turns it off): closed like a
session end, with the git facts of that moment. Each boundary event of such a session
(start, turn end, compaction), and the fold of its journaled prompts and tool calls, stamps
its last activity in `.hooks/quiet.json`, a small map read by every boundary event of the
project, so no session note is scanned to find them.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from ocm.vault import locks
from ocm.vault.atomic import atomic_write_text, locked
from ocm.vault.clock import format_timestamp, now, parse_timestamp
from ocm.vault.freshness import journal

TYPE_CHECKING = False  # the hook path imports this module: `typing` costs it ~3 ms
if TYPE_CHECKING:
    from typing import Any

STATE = "quiet.json"
DEFAULT_MINUTES = 30.0


def minutes(env: dict[str, str]) -> float:
    """The quiet period; a value that is not a number keeps the default."""
    try:
        return float(env.get("OCM_QUIET_CLOSE_MINUTES") or DEFAULT_MINUTES)
    except ValueError:
        return DEFAULT_MINUTES


def _path(vault_dir: str) -> Path:
    return Path(journal.hooks_dir(vault_dir)) / STATE


def _read(vault_dir: str) -> dict[str, list[str]]:
    """note id -> [last activity, host, the host's session id]."""
    try:
        data = json.loads(_path(vault_dir).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        journal.log(vault_dir, f"{STATE} unreadable ({type(exc).__name__}: {exc}); started anew")
        return {}
    if not isinstance(data, dict):
        journal.log(vault_dir, f"{STATE} is not a map; started anew")
        return {}
    return {str(k): [str(x) for x in v] for k, v in data.items()
            if isinstance(v, list) and len(v) == 3}


def _update(vault_dir: str, change: Any) -> None:
    """Apply `change(state)` under the file's lock."""
    with locked(locks.folder(Path(vault_dir)), locks.QUIET):
        state = _read(vault_dir)
        before = json.dumps(state, sort_keys=True)
        change(state)
        if json.dumps(state, sort_keys=True) != before:
            path = _path(vault_dir)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(state, indent=1, sort_keys=True) + "\n")


def touch(vault_dir: str, note_id: str, host: str, agent_session: str) -> None:
    """The session was active now."""
    entry = [format_timestamp(now()), host, agent_session]
    _update(vault_dir, lambda state: state.__setitem__(note_id, entry))


def refresh(vault_dir: str, note_ids: list[str]) -> None:
    """Those of `note_ids` that are watched were active now (their journaled tool calls and
    prompts were just folded into their notes)."""
    if not note_ids or not _path(vault_dir).exists():
        return
    stamp = format_timestamp(now())

    def change(state: dict[str, list[str]]) -> None:
        for note_id in note_ids:
            if note_id in state:
                state[note_id][0] = stamp

    _update(vault_dir, change)


def forget(vault_dir: str, note_ids: list[str]) -> None:
    if note_ids:
        _update(vault_dir, lambda state: [state.pop(n, None) for n in note_ids])


def close_quiet(project: Any, vault_dir: str, env: dict[str, str], host: str,
                agent_session: str) -> list[str]:
    """Close every watched session quiet for the period (never the one this event is from);
    returns their ids. One already closed some other way is only forgotten."""
    from datetime import timedelta

    from ocm.vault.errors import Conflict, NotFound
    from ocm.vault.markdown import Document

    period = minutes(env)
    if period <= 0 or not _path(vault_dir).exists():
        return []
    limit = now() - timedelta(minutes=period)
    due = [note_id for note_id, (stamp, owner, agent) in _read(vault_dir).items()
           if (owner, agent) != (host, agent_session)
           and (parse_timestamp(stamp) or limit) <= limit]
    closed, done = [], []
    for note_id in due:
        with contextlib.suppress(Conflict, NotFound, OSError):
            path = project.vault.find_session(note_id)
            status = Document.parse(path.read_text(encoding="utf-8")).frontmatter.get("status")
            done.append(note_id)
            if (status or "open") != "open":
                continue  # closed or frozen some other way: its facts stay
            project.vault.close_session(note_id, "closed")
            closed.append(note_id)
            journal.log(vault_dir, f"session {note_id} closed after {period:g} quiet "
                                   "minutes (its host has no session end)")
    forget(vault_dir, done)
    return closed

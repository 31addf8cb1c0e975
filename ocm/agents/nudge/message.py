"""The words of a nudge: what happened, in the model's own terms, and the one thing to do.

A nudge is read by the host's model as its next instruction, so it names the files and
commands (the model needs no search), gives the ocm session id, and stays under `BUDGET`
characters whatever the session did (lists are cut with "and N more")."""

from __future__ import annotations

MARKER = "ocm memory check"
BUDGET = 700
MAX_NAMED = 4


def _names(items: list[str], limit: int = MAX_NAMED) -> str:
    shown = [f"`{item}`" for item in items[:limit]]
    more = len(items) - len(shown)
    if more > 0:
        shown.append(f"{more} more")
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def what_happened(files: list[str], failing: list[str], fixed: list[str],
                  decided: bool, tool_calls: int) -> str:
    """One sentence: "you edited `a` and `b`; `cmd` still fails"."""
    parts = []
    if files:
        parts.append(f"you edited {_names(files)}")
    if fixed:
        parts.append(f"{_names(fixed, 2)} passed after a fix")
    if failing:
        parts.append(f"{_names(failing, 2)} still fail{'s' if len(failing) == 1 else ''}")
    if decided:
        parts.append("you made a decision")
    if not parts and tool_calls:
        parts.append(f"you made {tool_calls} tool calls")
    return "; ".join(parts)


def compose_commit(session_id: str, happened: str) -> str:
    """The context before a git commit: checkpoint first (seed 004 §4.3)."""
    text = (f"[{MARKER}] You are about to commit. Since your last checkpoint {happened}. "
            f'Before the commit, call ocm__checkpoint with session_id "{session_id}", '
            'trigger "git_commit" and goal, work_completed, work_pending and decisions.')
    return text if len(text) <= BUDGET else compose(session_id, happened)


def compose_compaction(session_id: str, happened: str) -> str:
    """After a compaction (the host's SessionStart with source compact): save what the
    summary may have dropped."""
    text = (f"[{MARKER}] Since your last checkpoint {happened}; the compaction summary may "
            f'have dropped details. Call ocm__checkpoint with session_id "{session_id}" and '
            "goal, work_completed, work_pending and decisions now; then go on.")
    return text if len(text) <= BUDGET else compose(session_id, happened)


def compose_count(session_id: str, edits: int, files: list[str]) -> str:
    """The context at a prompt after `edits` edits without a checkpoint (seed 004 §15)."""
    what = f" to {_names(files)}" if files else ""
    return (f"[{MARKER}] You made {edits} edits{what} since your last checkpoint. First call "
            f'ocm__checkpoint with session_id "{session_id}" and goal, work_completed, '
            "work_pending and decisions; then go on with the request.")


def compose(session_id: str, happened: str, budget: int = BUDGET) -> str:
    """The instruction; `happened` is shortened first if the whole would pass `budget`."""
    head = f"[{MARKER}] Since your last checkpoint "
    tail = (f". Save it now, in one step: call ocm__checkpoint with session_id "
            f'"{session_id}" and goal, work_completed, work_pending and decisions (with why). '
            "Call ocm__remember only for a lasting fact a later session needs (a gotcha, a "
            "convention) that is not saved yet. Do not redo or re-check the work; nothing "
            "worth saving? Answer \"nothing to save\".")
    room = budget - len(head) - len(tail)
    if len(happened) > room:
        happened = happened[: max(room - 1, 0)].rstrip(" ,;") + "…"
    return head + happened + tail

"""The context brief injected at session start: pinned facts first, within a budget."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ocm.vault.clock import now as clock_now
from ocm.vault.git.staleness import verify_line
from ocm.vault.memories import RECALL_ORDER

if TYPE_CHECKING:
    from ocm.vault.handover import Handover

    from .hits import Hit

_HEADINGS = {
    "identity": "Identity", "principle": "Principles", "preference": "Preferences",
    "lesson": "Lessons", "gotcha": "Gotchas", "decision": "Decisions",
    "procedure": "Procedures", "context": "Current context",
}
SNIPPET_CHARS = 220
# Seed 003: identity is never dropped, and the brief warns once it fills 80 % of its budget.
NEVER_DROPPED = frozenset({"identity"})
BUDGET_WARNING = 0.8
RELEVANT = "Relevant to this task"
# The last session's block: at most this share of the budget, each line at most LINE_CHARS.
LAST_SHARE = 0.6
LINE_CHARS = 320


@dataclass
class Brief:
    text: str
    items: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    last_session: dict[str, Any] | None = None
    left_out: int = 0  # relevant hits that are no longer true (resolved, superseded, …)
    warning: str | None = None


def current(hit: Hit) -> bool:
    """What a brief may state as true now: sessions, and memories that are still active."""
    return hit.kind != "memory" or hit.status == "active"


def _order(hits: list[Hit]) -> list[Hit]:
    rank = {t: i for i, t in enumerate(RECALL_ORDER)}
    return sorted(hits, key=lambda h: (rank.get(h.type, len(rank)),
                                       -(h.date.timestamp() if h.date else 0)))


def _snippet(hit: Hit) -> str:
    """The memory text beyond its title ('' when the title already says it all)."""
    text = str(hit.meta.get("snippet") or "")
    title = hit.title.rstrip("…")
    if text.startswith(title):
        text = text[len(title):].lstrip(" .:-—")
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def _item(hit: Hit, section: str) -> dict[str, Any]:
    return {"section": section, "id": hit.id, "kind": hit.kind, "type": hit.type,
            "status": hit.status, "title": hit.title,
            "snippet": _snippet(hit) if hit.kind == "memory" else "",
            "files": hit.top_files, "score": round(hit.score, 3),
            "date": hit.date.isoformat(timespec="seconds") if hit.date else None,
            "scope": hit.scope, "markdown_path": str(hit.path),
            "changed_files": list(hit.meta.get("changed_files") or []),
            "matched": hit.matched}


def _line(item: dict[str, Any], fmt: str) -> str:
    if fmt == "snippets":
        return f"{item['score']:.2f} | {item['type']} | {item['id']} | {item['title']}"
    files = f" [{', '.join(item['files'])}]" if item["files"] else ""
    if item.get("changed_files"):
        files += f" ({verify_line(item['changed_files'])})"
    title = item["title"]
    if title.endswith("…") and item["snippet"]:
        # The title is a cut of the text: print the text once, whole.
        return f"- {title[:-1]}{item['snippet']}{files} (id: {item['id']})"
    detail = f" — {item['snippet']}" if item["snippet"] else ""
    return f"- {title}{detail}{files} (id: {item['id']})"


def _ago(when: datetime | None, now: datetime) -> str:
    if when is None:
        return ""
    minutes = max(0, int((now - when).total_seconds() // 60))
    if minutes < 1:
        return "just now"
    for size, unit in ((1440, "day"), (60, "hour"), (1, "minute")):
        if minutes >= size:
            count = minutes // size
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return ""


def handover_dict(last: Handover, now: datetime | None = None) -> dict[str, Any]:
    """The handed-over session as the brief's JSON `last_session`."""
    when = last.ended_at or last.updated or last.started_at
    return {"id": last.id, "goal": last.goal, "tool": last.tool, "status": last.status,
            "pending": list(last.pending),
            "date": last.started_at.isoformat(timespec="seconds") if last.started_at else None,
            "markdown_path": str(last.path), "ago": _ago(when, now or clock_now()),
            "done": list(last.done), "left_off": last.left_off, "failing": list(last.failing),
            "decisions": list(last.decisions),
            "files": [{"path": p, "change_type": c} for p, c in last.files],
            "transcript": last.transcript}


def _cut_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1].rstrip() + "…"


def _last_session_lines(last: dict[str, Any], tool: str | None, room: int) -> list[str]:
    """The handed-over session, one line per item, in `room` characters: the head (who,
    when, goal, where to read more) always; then the items, one of each kind in turn
    (failures, pending, what was left, files, decisions, done) while they fit; what did
    not fit is counted ("+3 more files")."""
    where = last["tool"] or "unknown tool"
    if tool and last["tool"] and last["tool"] != tool:
        where = f"handed over from {last['tool']}"
    when = ", ".join(x for x in (last["status"], last["ago"]) if x)
    head = ["", f"## Last session ({where}, {when})",
            _cut_line(f"{last['id']}: {last['goal'] or '(no goal recorded)'}")]
    more = f"- read more: ocm__get_note {last['id']}"
    if last["transcript"]:
        note, _, anchor = last["transcript"].partition("#")
        more += f"; the conversation: ocm__get_note {note}" + (f" (#{anchor})" if anchor else "")
    kinds: list[tuple[str, str, list[str]]] = [
        ("failing", "failing", list(last["failing"])),
        ("pending", "pending", list(last["pending"])),
        ("left off", "left", [last["left_off"]] if last["left_off"] else []),
        ("files", "file", [f"{f['change_type']} `{f['path']}`" for f in last["files"]]),
        ("decisions", "decision", list(last["decisions"])),
        ("done", "done", list(last["done"])),
    ]
    used = sum(len(x) + 1 for x in head) + len(more) + 1
    reserve = 60  # the "(+N more …)" line
    chosen: dict[str, list[str]] = {name: [] for name, _, _ in kinds}
    left: dict[str, int] = {name: len(items) for name, _, items in kinds}
    for depth in range(max((len(items) for _, _, items in kinds), default=0)):
        for name, label, items in kinds:
            if depth >= len(items):
                continue
            line = _cut_line(f"- {label}: {items[depth]}")
            if used + len(line) + 1 + reserve > room:
                continue
            chosen[name].append(line)
            used += len(line) + 1
            left[name] -= 1
    if used > room:
        return []
    shown = ("done", "pending", "left off", "failing", "files", "decisions")
    body = [line for name in shown for line in chosen[name]]
    counted = [f"+{n} more {name}" for name, n in left.items() if n > 0]
    if counted:
        body.append(f"- ({', '.join(counted)} did not fit: ocm__get_note {last['id']})")
    return head + body + [more]


def build_brief(project: str, pinned: list[Hit], relevant: list[Hit], last: Handover | None,
                budget: int, fmt: str, session_id: str | None, unread: int = 0,
                tool: str | None = None, now: datetime | None = None) -> Brief:
    """Identity first (never dropped, even past the budget), then what is relevant to the
    task, then the other pinned types in RECALL_ORDER, newest first. Only what is true now
    is stated: a relevant memory that was resolved, superseded or archived is left out and
    counted in `left_out`. `dropped` counts every item that did not fit, plus `unread`:
    pinned notes the caller did not read (the hook's brief stops at a file cap). `last`, the
    session handed over, comes first, in at most LAST_SHARE of the budget; `tool` is the
    current session's, to say when the work is handed over from another tool."""
    left_out = sum(1 for hit in relevant if not current(hit))
    ordered = _order([h for h in pinned if current(h)])
    identity = [h for h in ordered if h.type in NEVER_DROPPED]
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for hits, section in ((identity, None), ([h for h in relevant if current(h)], RELEVANT),
                          (ordered, None)):
        for hit in hits:
            if hit.id not in seen:
                seen.add(hit.id)
                items.append(_item(hit, section or _HEADINGS.get(hit.type, hit.type)))
    last_session = handover_dict(last, now) if last else None

    header = [f"# Project memory (ocm): {project}"]
    if session_id:
        header.append(f"Current ocm session id: {session_id} (pass it to ocm__checkpoint).")
    footer_hint = ("Search for more with ocm__search (MCP) or `ocm search QUERY`; "
                   "read a note with ocm__get_note ID.")
    lines = list(header)
    used = sum(len(line) + 1 for line in lines) + len(footer_hint) + 80
    kept: list[dict[str, Any]] = []
    section = None
    if last_session:
        block = _last_session_lines(last_session, tool,
                                    max(0, min(budget - used, int(budget * LAST_SHARE))))
        cost = sum(len(x) + 1 for x in block)
        if block and used + cost <= budget:
            lines += block
            used += cost
        else:
            last_session = None
    dropped = unread
    for item in items:
        extra = [] if item["section"] == section else ["", f"## {item['section']}"]
        line = _line(item, fmt)
        cost = sum(len(x) + 1 for x in extra) + len(line) + 1
        if used + cost > budget and item["type"] not in NEVER_DROPPED:
            dropped += 1
            continue
        if extra:
            section = item["section"]
        lines += extra + [line]
        used += cost
        kept.append(item)
    lines.append("")
    if dropped:
        lines.append(f"({dropped} more memories did not fit the {budget}-character budget.)")
    lines.append(footer_hint)
    warning = None
    if dropped or used >= BUDGET_WARNING * budget:
        warning = (f"ocm: the brief fills {min(used, 10 * budget) * 100 // budget} % of its "
                   f"{budget}-character budget" + (f"; {dropped} left out" if dropped else "")
                   + ": raise --budget, or resolve or archive what no longer holds")
    if fmt == "json":
        text = json.dumps({"project": project, "session_id": session_id, "items": kept,
                           "last_session": last_session, "dropped": dropped,
                           "left_out": left_out, "budget": budget, "used": used,
                           "warning": warning}, indent=2)
    else:
        text = "\n".join(lines)
    return Brief(text=text, items=kept, dropped=dropped, last_session=last_session,
                 left_out=left_out, warning=warning)

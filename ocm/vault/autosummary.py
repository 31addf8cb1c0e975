"""A session note that is never empty: what can be known without a model.

When the agent never called `ocm__checkpoint`, the hooks fill the note at each turn's end
and at session end: Goal from the first prompt the user typed, Work Done from the last
assistant message of each turn (one short bullet a turn, read from the host's transcript
as it is folded, so turns that ended without a Stop of their own count too; at most
MAX_WORK_DONE bullets, then one line pointing at the transcript), and mark it
`summary: auto`. Files come
from the hooks (and the git fallback at close). The first agent checkpoint that brings its
own content replaces the auto parts (Goal, Work Done) and drops the mark; the Goal is then
the agent's, while each later turn still adds its Work Done bullet (the work goes on after
a checkpoint). Left Off keeps the sentence of the newest turn's last message that says what
is left ("Still to do: …", `ocm.vault.handover.left_sentences`).
"""

from __future__ import annotations

from .handover import left_sentences
from .secrets.redact import redact
from .sessions import CheckpointInput, SessionNote

AUTO = "auto"
MAX_GOAL_CHARS = 300
MAX_BULLET_CHARS = 280
MAX_WORK_DONE = 40
MORE_IN_TRANSCRIPT = "(later turns: see the transcript)"
_CONTENT_FIELDS = ("goal", "work_completed", "work_pending", "work_summary", "decisions",
                   "plan_files", "references", "diff_summary")


def is_auto(note: SessionNote) -> bool:
    return note.fm.get("summary") == AUTO


def _agent_wrote(note: SessionNote) -> bool:
    return bool(note.goal or note.items("work done") or note.items("work completed")
                or note.items("work to be completed") or note.text("architecture decisions"))


def bullet(message: str, limit: int = MAX_BULLET_CHARS) -> str:
    """An assistant message as one bullet: redacted, its first paragraph, whitespace
    collapsed, cut at a word with an ellipsis."""
    text = redact(message or "").strip()
    first = next((p for p in text.split("\n\n") if p.strip()), "")
    words = " ".join(first.replace("`", "'").split()).lstrip("#-*> ").strip()
    if len(words) > limit:
        words = words[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return words


def fill(note: SessionNote, last_messages: list[str] | None = None) -> bool:
    """Fill Goal where the agent did not, add a Work Done bullet per turn (after an agent
    checkpoint too: the turns after it are work done as well), and keep the sentence of
    the last message that says what is left in Left Off (`last_messages`: the last
    assistant message of each turn that ended, in order); True if anything changed."""
    agent = not is_auto(note) and _agent_wrote(note)
    changed = False
    if not agent and not note.goal:
        prompts = note.items("prompts")
        if prompts:
            goal = bullet(prompts[0], MAX_GOAL_CHARS)
            if goal:
                note.ensure_section("goal").set_text(goal)
                changed = True
    messages = [m for m in last_messages or [] if m and m.strip()]
    items = [item for item in (bullet(m) for m in messages) if item]
    if items:
        done = [i for i in note.items("work done") if i != MORE_IN_TRANSCRIPT]
        room = max(0, MAX_WORK_DONE - len(done))
        kept = [i for i in dict.fromkeys(items) if i not in done][:room]
        if len(kept) < len(set(items) - set(done)):
            kept.append(MORE_IN_TRANSCRIPT)
        if note.add_items("work done", kept):
            changed = True
    if messages:
        changed = _left_off(note, left_sentences(redact(messages[-1]))) or changed
    if changed and not agent and not is_auto(note):
        note.set_frontmatter("summary", AUTO)
    return changed


def _left_off(note: SessionNote, text: str) -> bool:
    """Left Off holds what the newest turn's last message says is left, or nothing."""
    block = note.doc.find("left off")
    if block is not None and block.text().strip() == text:
        return False
    if text:
        note.ensure_section("left off").set_text(text)
    elif block is not None:
        note.doc.remove(block)
    else:
        return False
    return True


def brings_content(inp: CheckpointInput) -> bool:
    return any(getattr(inp, name) for name in _CONTENT_FIELDS)


def hand_over(note: SessionNote, inp: CheckpointInput) -> None:
    """Before an agent checkpoint with content is applied: drop the auto parts."""
    if not is_auto(note) or not brings_content(inp):
        return
    for key in ("goal", "work done"):
        block = note.doc.find(key)
        if block is not None:
            note.doc.remove(block)
    note.doc.frontmatter.delete("summary")

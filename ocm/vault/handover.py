"""What a session leaves to the next one: the facts of its note, read without an LLM.

`session_facts(note)` reads one session note into a `Handover`: goal, what was done (the
checkpoint's completed items, else the Work Done bullets), pending work, files (most edited
first), commands that failed and never passed afterwards (with their error line), decisions,
the sentence of the agent's last message that says what is left (`left_off`), and where to
read more. `last_with_content(vault, exclude)` is the newest session of any tool that holds
any of that: a note a hook opened and nothing ever wrote to is never handed over.
`left_sentences(message)` is the plain-text rule that finds "Still to do: …" in a message.

Reused by the session-start brief (`ocm.agents.brief`), `ocm recall`, and anything that
asks "what happened in that session" (the Stop nudges).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import OcmError
from .folder import read_document
from .sessions import SessionNote

if TYPE_CHECKING:
    from .folder import NoteFolder

# Sections whose items are the session's own content (Git Diff Summary alone is not: close
# writes one even for a session that did nothing).
_CONTENT_SECTIONS = ("goal", "prompts", "work done", "work completed", "work to be completed",
                     "architecture decisions", "failed commands", "memories", "left off",
                     "plan files", "references")
_FAILED = re.compile(r"^(`+) ?(?P<cmd>.+?) ?\1 failed(?:: (`+) ?(?P<err>.*?) ?\3)?$")
_PASSED = re.compile(r"^(`+) ?(?P<cmd>.+?) ?\1 passed\b")
_TURN = re.compile(r"^## (Turn \d+)\b", re.M)

# "What is left" in an agent's closing message: a sentence that opens with one of these
# words (and a colon or dash), or says it stopped / left something undone.
_LEFT_LEAD = re.compile(
    r"^(?:\*\*)?(?:still to do|still todo|to ?do|todo|next(?: steps?| up)?|remaining|"
    r"what'?s left|left to do|not (?:yet )?done|open (?:items?|questions?)|follow[- ]ups?|"
    r"pending|outstanding)(?:\*\*)?\s*[:\-—]", re.I)
_LEFT_ANYWHERE = re.compile(
    r"\b(?:I stopped (?:here|there|at|before)|stopped here|still (?:need|needs|have|has) to|"
    r"(?:is|are) still (?:failing|broken|missing|open|to do)|not (?:yet )?(?:done|finished|"
    r"implemented)|(?:did not|didn't) get to|left (?:for|to) (?:the )?next|remains? to be|"
    r"next session)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(\[])")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
MAX_LEFT_CHARS = 400


@dataclass
class Handover:
    """One session's facts for the next session, each list newest-meaningful first."""

    id: str
    tool: str
    status: str
    path: Path
    started_at: datetime | None = None
    ended_at: datetime | None = None
    goal: str = ""
    done: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, change)
    failing: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    left_off: str = ""
    transcript: str = ""  # the transcript note's id and last `#Turn N` anchor, or ""
    updated: datetime | None = None  # the note's last write: when the session last acted



def has_content(note: SessionNote) -> bool:
    """Anything recorded beyond the frontmatter a session start writes."""
    return bool(note.files()) or any(
        note.text(key).strip() for key in _CONTENT_SECTIONS)


def removable(note: SessionNote) -> bool:
    """A note a host's hook opened (it has the host's session id) in which nothing was ever
    recorded: no section but the Git Diff Summary a close writes, nothing a person added."""
    from .sessions import FRONTMATTER_ORDER

    if not note.fm.get("agent_session_id") or has_content(note):
        return False
    if set(note.fm) - set(FRONTMATTER_ORDER) - {"summary", "ended_at"}:
        return False
    return all(not block.text() for block in note.doc.blocks
               if block.key != "git diff summary")


def unresolved_failures(items: list[str]) -> list[str]:
    """`cmd` fails: error, for each command of the Failed Commands section whose last word
    in the section is a failure (a later "`cmd` passed …" item settles it)."""
    last: dict[str, str | None] = {}
    for item in items:
        passed = _PASSED.match(item.strip())
        if passed:
            last[passed.group("cmd")] = None
            continue
        failed = _FAILED.match(item.strip())
        if failed:
            cmd = failed.group("cmd")
            last.pop(cmd, None)  # re-insert: the newest failure last
            last[cmd] = failed.group("err") or ""
    return [f"`{cmd}` fails" + (f": {err}" if err else "")
            for cmd, err in last.items() if err is not None]


def left_sentences(message: str) -> str:
    """The sentences of an agent's message that say what is left ("Still to do: …",
    "Next: …", "I stopped here"), with the bullets a "Next steps:" line introduces; ""
    when none does. Plain text rules, no model."""
    picked: list[str] = []
    lines = (message or "").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        if _LEFT_LEAD.match(line.lstrip("#>*- ").strip()) and line.rstrip("*").endswith(":"):
            items = []
            while i < len(lines) and (_BULLET.match(lines[i]) or not lines[i].strip()):
                if lines[i].strip():
                    items.append(_BULLET.sub("", lines[i]).strip())
                elif items:
                    break
                i += 1
            picked.append(line.lstrip("#> ").strip() + " " + "; ".join(items))
            continue
        for sentence in _SENTENCE_END.split(_BULLET.sub("", line)):
            sentence = sentence.strip()
            if _LEFT_LEAD.match(sentence.lstrip("*> ")) or _LEFT_ANYWHERE.search(sentence):
                picked.append(sentence)
    text = " ".join(" ".join(dict.fromkeys(picked)).split())
    if len(text) > MAX_LEFT_CHARS:
        text = text[:MAX_LEFT_CHARS].rsplit(" ", 1)[0] + " …"
    return text


def _edit_counts(transcript_text: str, paths: list[str]) -> dict[str, int]:
    """How often each path appears in the transcript's tool lines (edits and reads alike:
    the file the session worked on most)."""
    tool_lines = [line for line in transcript_text.splitlines() if line.startswith("- `")]
    return {p: sum(line.count(p) for line in tool_lines) for p in paths}


def _transcript(vault_root: Path, note_id: str) -> tuple[str, str]:
    from .transcripts import SUFFIX, transcript_path

    path = transcript_path(vault_root, note_id)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", ""
    turns = _TURN.findall(text)
    return text, f"{note_id}{SUFFIX}" + (f"#{turns[-1]}" if turns else "")


def session_facts(note: SessionNote, path: Path, vault_root: Path | None = None) -> Handover:
    note_id = note.id or path.stem
    completed = note.items("work completed")
    facts = Handover(
        id=note_id, tool=note.tool, status=note.status, path=path,
        started_at=note.started_at, ended_at=note.ended_at,
        goal=" ".join(note.goal.split()),
        done=completed or note.items("work done")[-5:][::-1],
        pending=note.items("work to be completed"),
        failing=unresolved_failures(note.items("failed commands")),
        decisions=note.items("architecture decisions"),
        left_off=" ".join(note.text("left off").split()))
    files = list(note.files().items())
    text = ""
    if vault_root is not None:
        text, facts.transcript = _transcript(vault_root, note_id)
    counts = _edit_counts(text, [p for p, _ in files]) if text else {}
    order = {p: i for i, (p, _) in enumerate(files)}
    facts.files = sorted(files, key=lambda pc: (-counts.get(pc[0], 0), order[pc[0]]))
    return facts


def last_with_content(vault: NoteFolder, exclude: str | None = None) -> Handover | None:
    """The newest session (any tool) with content, other than `exclude`. Newest by last
    activity (the note's last write), so a long session that just ended beats one that
    began after it and has done nothing yet; equal times (a git checkout writes many notes
    in one second) go by `session_headers`' order, the true start instant. Notes are read
    newest first until one has content, so a vault of many sessions costs a few reads."""

    candidates = []
    for rank, (path, data) in enumerate(vault.session_headers()):
        if exclude and exclude in (str(data.get("id") or ""), path.stem,
                                   str(data.get("agent_session_id") or "")):
            continue
        try:
            candidates.append((path.stat().st_mtime, -rank, path))
        except OSError:
            continue
    for mtime, _, path in sorted(candidates, reverse=True):
        try:
            note = SessionNote(read_document(path))
        except OcmError:
            continue
        if has_content(note):
            facts = session_facts(note, path.resolve(), vault.root)
            facts.updated = datetime.fromtimestamp(mtime)
            return facts
    return None

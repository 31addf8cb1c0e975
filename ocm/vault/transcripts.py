"""Transcript notes: a host's conversation as Markdown, one `##` section per user turn.

The hosts' parsers (`ocm.agents.<host>.parse_transcript`) turn the new lines of a
transcript into `Turn`s; this module renders them and appends them to
`transcripts/<session id>_transcript.md` beside the session note, linked both ways. The
byte offset read up to is kept in the note's frontmatter (`offset`), so each fold reads
only what the host appended since, and a crash between two folds repeats nothing: the note
and its offset are written in one atomic replace.

What a turn keeps: the prompt, the assistant's text and one line per tool call (tool, file
or command, exit status, first error line). Never tool output, file contents, images,
thinking, or ocm's own injected brief. Every piece is redacted before it is cut to its cap;
what a cap cut is said in the note.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import locks
from .atomic import atomic_write_text, locked
from .clock import format_timestamp, now, utc_timestamp
from .freshness.scan import TRANSCRIPTS_DIR
from .links import link
from .markdown import Document, emit_key
from .secrets.redact import redact

SUFFIX = "_transcript"
MAX_PROMPT_CHARS = 2000
MAX_TEXT_CHARS = 4000         # the assistant's text in one turn
MAX_TOOL_LINES = 40           # tool calls listed per turn
MAX_TOOL_TARGET_CHARS = 160
MAX_NOTE_CHARS = 400_000      # the whole note; later turns are counted, not kept
# One fold reads at most this much of the host's transcript; the next hook goes on from there.
# With the lines and their parsed records, a hook holds a few times this at most.
MAX_FOLD_BYTES = 8 * 1024 * 1024
HEADING_WORDS = 8
HEADING_CHARS = 60
_FM_ORDER = ["id", "kind", "tool", "session", "agent_session_id", "source", "started_at",
             "started_at_utc", "updated_at", "offset", "turns", "chars", "cut_turns"]
# Blocks a host or ocm itself puts into the user's message: never the user's words.
_INJECTED = re.compile(
    r"<(hook_context|system-reminder|session_context|environment_context|user_instructions)>"
    r".*?</\1>\s*", re.S)
_HEADING_BAD = re.compile(r"[#\[\]|^`*<>\\]")


@dataclass
class ToolCall:
    name: str
    target: str = ""              # a file path or a command
    exit: int | None = None       # None: unknown; 0 passed
    error: str = ""               # the first error line of a failure


@dataclass
class Turn:
    """One user turn: its prompt (empty when the new lines continue the previous turn)."""

    prompt: str = ""
    time: str = ""                # ISO timestamp of the prompt (or first event)
    texts: list[str] = field(default_factory=list)
    tools: list[ToolCall] = field(default_factory=list)
    tool_ids: dict[str, int] = field(default_factory=dict)  # host call id -> index in tools

    def add_tool(self, call_id: str, call: ToolCall) -> None:
        if call_id:
            self.tool_ids[call_id] = len(self.tools)
        self.tools.append(call)

    def tool(self, call_id: str) -> ToolCall | None:
        index = self.tool_ids.get(call_id)
        return self.tools[index] if index is not None else None

    @property
    def last_text(self) -> str:
        return next((t for t in reversed(self.texts) if t.strip()), "")


def strip_injected(text: str) -> str:
    """The user's own words: ocm's `<hook_context>` brief and the hosts' injected context
    blocks removed."""
    return _INJECTED.sub("", text or "").strip() if "<" in (text or "") else (text or "").strip()


def transcript_path(vault_root: Path, session_id: str) -> Path:
    return vault_root / TRANSCRIPTS_DIR / f"{session_id}{SUFFIX}.md"


# --------------------------------------------------------------------------- rendering


def _cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut between words (a secret is never half kept: what is
    cut is redacted first, what is kept with the whole turn in `render_turn`)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    text = redact(text)
    if len(text) <= limit:
        return text
    kept = text[:limit].rsplit(None, 1)[0] if " " in text[:limit] else text[:limit]
    return kept.rstrip() + f"\n\n*(cut: {len(text) - len(kept):,} more characters)*"


def _escape(text: str) -> str:
    """Lines that Markdown would read as headings or frontmatter fences are escaped, so a
    turn stays one section."""
    return re.sub(r"(?m)^(#{1,6}\s|---\s*$)", r"\\\1", text)


def heading(number: int, turn: Turn) -> str:
    clock = turn.time[11:16] if len(turn.time) >= 16 and turn.time[10:11] in "T " else ""
    words = " ".join(_HEADING_BAD.sub(" ", redact(turn.prompt[:400])).split()[:HEADING_WORDS])
    if len(words) > HEADING_CHARS:
        words = words[:HEADING_CHARS].rsplit(" ", 1)[0]
    parts = [f"Turn {number}", clock, words or "(no prompt)"]
    return "## " + " · ".join(p for p in parts if p)


def tool_line(call: ToolCall) -> str:
    line = f"- `{call.name}`"
    target = " ".join(call.target.split())
    if target:
        if len(target) > MAX_TOOL_TARGET_CHARS:
            target = redact(target)[:MAX_TOOL_TARGET_CHARS] + "…"
        line += f" `{target.replace('`', chr(39))}`"
    if call.exit is not None:
        line += " → ok" if call.exit == 0 else f" → exit {call.exit}"
    elif call.error:
        line += " → failed"
    if call.error:
        error = " ".join(call.error.split())
        line += ": " + (redact(error)[:200] if len(error) > 200 else error)
    return line


def render_turn(number: int | None, turn: Turn) -> str:
    """A turn's Markdown; `number` None renders a continuation of the previous turn."""
    out: list[str] = []
    if number is not None:
        out.append(heading(number, turn))
        out.append("")
        if turn.prompt.strip():
            out.append("**User:** " + _escape(_cut(turn.prompt, MAX_PROMPT_CHARS)))
            out.append("")
    text = "\n\n".join(t.strip() for t in turn.texts if t.strip())
    if text:
        out.append("**Assistant:** " + _escape(_cut(text, MAX_TEXT_CHARS)))
        out.append("")
    if turn.tools:
        out += [tool_line(call) for call in turn.tools[:MAX_TOOL_LINES]]
        if len(turn.tools) > MAX_TOOL_LINES:
            out.append(f"- *(cut: {len(turn.tools) - MAX_TOOL_LINES} more tool calls)*")
        out.append("")
    # One redaction pass over the turn (pieces over their cap were redacted before the cut).
    return redact("\n".join(out) + "\n") if out else ""


# --------------------------------------------------------------------------- the note


@dataclass
class FoldResult:
    path: Path
    turns: int                    # new turns rendered
    offset: int
    created: bool = False
    # The last assistant message of each turn this fold read (for the auto summary's Work
    # Done), in order; a turn the note cap left out of the note still has its message here.
    last_texts: list[str] = field(default_factory=list)
    more: bool = False  # the transcript holds more than this fold read (MAX_FOLD_BYTES)


def read_offset(path: Path) -> tuple[int, str]:
    """(offset, source) from a transcript note's frontmatter; (0, "") without one."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            head = handle.read(4096)
    except (FileNotFoundError, UnicodeDecodeError):
        return 0, ""
    offset = re.search(r"(?m)^offset: (\d+)\s*$", head)
    source = re.search(r"(?m)^source: (.+?)\s*$", head)
    value = source.group(1).strip().strip("'\"") if source else ""
    return (int(offset.group(1)) if offset else 0), value


def fold(vault_root: Path, session_id: str, session_stem: str, tool: str, agent_session: str,
         source: str, turns_of: Any, log: Any = None,
         started: datetime | None = None) -> FoldResult | None:
    """Render what `source` gained since the note's offset. `turns_of(lines)` is the host's
    parser: it returns (turns, records it recognised). None when nothing was new.
    `started` dates a new note (default: now)."""
    path = transcript_path(vault_root, session_id)
    with locked(locks.folder(vault_root), locks.transcript(session_id)):
        offset, old_source = read_offset(path)
        if old_source and old_source != source:
            offset = 0  # the host moved to another file (resumed session): read it whole
        try:
            size = os.path.getsize(source)
        except OSError:
            return None
        if size < offset:
            if log:
                log(f"transcript {source} shrank below offset {offset:,}; reading from its end")
            offset = size
        if size == offset:
            return None
        with open(source, "rb") as handle:
            handle.seek(offset)
            data = handle.read(min(size - offset, MAX_FOLD_BYTES))
            end = data.rfind(b"\n")
            if offset + len(data) == size and _complete(data[end + 1:]):
                end = len(data) - 1  # a last line without its newline, whole: folded once
            if end < 0 and len(data) < MAX_FOLD_BYTES:
                return None  # a line still being written
            if end < 0:  # one line longer than a fold reads: skipped to its end, unread
                skipped = _skip_line(handle)
                if log:
                    log(f"transcript {source}: a line of more than {MAX_FOLD_BYTES:,} bytes "
                        f"at offset {offset:,} skipped")
                data = b""
                new_offset = offset + len(data) + MAX_FOLD_BYTES + skipped
            else:
                data = data[: end + 1]
                new_offset = offset + len(data)
        lines = data.splitlines()
        turns, known = turns_of(lines)
        if lines and not known:
            if log:
                log(f"transcript {source}: no record in a known format in {len(lines)} "
                    f"lines at offset {offset:,}; skipped")
            turns = []
        result = _write(path, session_id, session_stem, tool, agent_session, source,
                        new_offset, turns, started)
        result.last_texts = [t.last_text for t in turns if t.last_text]
        result.more = new_offset < size
        return result


def _complete(tail: bytes) -> bool:
    """A transcript's unterminated last line that is already a whole JSON value."""
    if not tail.strip():
        return False
    try:
        json.loads(tail)
    except ValueError:
        return False  # still being written
    except RecursionError:
        return True  # whole or not, no fold could read it: passed over (the parser logs it)
    return True


def _skip_line(handle: Any) -> int:
    """Bytes up to and including the next newline (or to the end), read in small pieces."""
    skipped = 0
    while True:
        piece = handle.read(1024 * 1024)
        if not piece:
            return skipped
        end = piece.find(b"\n")
        if end >= 0:
            return skipped + end + 1
        skipped += len(piece)


def _write(path: Path, session_id: str, session_stem: str, tool: str, agent_session: str,
           source: str, offset: int, turns: list[Turn],
           started: datetime | None) -> FoldResult:
    created = not path.exists()
    if created:
        doc = Document.new()
        doc.has_frontmatter = True
        body = f"# Transcript of {session_id}\n\n"  # the session link is a property
        started = started or now()
        fm: dict[str, Any] = {"id": f"{session_id}{SUFFIX}", "kind": "transcript",
                              "tool": tool, "session": link(session_stem),
                              "agent_session_id": agent_session or None,
                              "started_at": format_timestamp(started),
                              # the true moment, for order across zones (ocm/vault/clock.py)
                              "started_at_utc": utc_timestamp(started), "turns": 0,
                              "chars": 0,
                              "cut_turns": 0}
    else:
        text = path.read_text(encoding="utf-8")
        doc = Document.parse(text[: text.find("\n---", 3) + 4] + "\n", path)
        body = text[text.find("\n---", 3) + 5:]
        fm = dict(doc.frontmatter.data)
    count = int(fm.get("turns") or 0)
    chars = int(fm.get("chars") or 0)
    cut = int(fm.get("cut_turns") or 0)
    added = 0
    pieces: list[str] = []
    for turn in turns:
        is_new = bool(turn.prompt.strip()) or count == 0
        if chars >= MAX_NOTE_CHARS:
            cut += 1 if is_new else 0
            continue
        if is_new:
            count += 1
            added += 1
        piece = render_turn(count if is_new else None, turn)
        pieces.append(piece)
        chars += len(piece)
    if cut and chars >= MAX_NOTE_CHARS and "*(note cap reached" not in body + "".join(pieces):
        pieces.append(f"*(note cap reached at {MAX_NOTE_CHARS:,} characters: later turns "
                      "are counted in `cut_turns`, not kept)*\n\n")
    fm.update({"source": source, "updated_at": format_timestamp(now()), "offset": offset,
               "turns": count, "chars": chars, "cut_turns": cut})
    lines = ["---"]
    for key in [*_FM_ORDER, *[k for k in fm if k not in _FM_ORDER]]:
        if fm.get(key) is not None:
            lines += emit_key(key, fm[key])
    lines.append("---")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "\n".join(lines) + "\n" + body + "".join(pieces))
    return FoldResult(path, added, offset, created)

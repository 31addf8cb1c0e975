"""Folding a host's transcript into the session's transcript note (hook side).

Each host's `parse_transcript(lines, cwd)` (in `ocm.agents.<host>`) reads the lines its
transcript gained since the last fold with a `TurnBuilder`; `fold_session` hands them to
`ocm.vault.transcripts.fold`, links the two notes and never raises (an unknown or changed
format is logged and skipped). `OCM_TRANSCRIPTS=0` (or `transcripts: false` in
`.openCodeMemory/config.json`) turns transcript notes off.
"""

from __future__ import annotations

import contextlib
import json
import os

from . import common as c

TYPE_CHECKING = False  # the hook path imports this module: `typing` costs it ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ocm.vault.transcripts import ToolCall, Turn

CONFIG = "config.json"
_OFF = {"0", "false", "no", "off"}


def enabled(vault_dir: str, env: dict[str, str]) -> bool:
    """Transcripts are on unless `OCM_TRANSCRIPTS` or the vault's config turns them off."""
    value = env.get("OCM_TRANSCRIPTS")
    if value is not None and value.strip():
        return value.strip().lower() not in _OFF
    try:
        with open(os.path.join(vault_dir, CONFIG), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return True
    return not (isinstance(config, dict) and config.get("transcripts") is False)


# Lines of the current fold skipped for nesting deeper than Python parses (fold_session
# logs them): such a line is passed over, never retried, and never stops the lines after it.
_too_deep: list[int] = []
# Transcripts a fold did not finish (MAX_FOLD_BYTES): their marker is not written, so the next
# turn's end folds on even when the file has not grown.
_unfinished: set[str] = set()


def records(lines: list[bytes]) -> Iterator[dict[str, Any]]:
    """Each line that is a JSON object (a half-written, foreign or too deeply nested line is
    skipped)."""
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        except RecursionError:
            _too_deep.append(number)
            continue
        if isinstance(value, dict):
            yield value


def _relative(path: str, cwd: str) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def describe_tool(name: str, tool_input: Any, cwd: str) -> ToolCall:
    """One line's worth of a tool call: its file(s) or command, never its content."""
    from ocm.vault.transcripts import ToolCall
    if isinstance(tool_input, str) and tool_input.strip().startswith("{"):
        with contextlib.suppress(ValueError):
            tool_input = json.loads(tool_input)
    kind = c.tool_kind(name)
    target = ""
    if kind == "patch" or (isinstance(tool_input, str) and "*** Begin Patch" in tool_input):
        target = ", ".join(_relative(ch.path, cwd) for ch in c.parse_patch(
            tool_input if isinstance(tool_input, str) else c.command_text(tool_input)))
    elif kind == "shell":
        target = c.command_text(tool_input)
    elif isinstance(tool_input, dict):
        paths = c.paths_in(tool_input)
        if paths:
            target = ", ".join(_relative(p, cwd) for p in paths[:5])
        elif kind is None:
            value = c.get(tool_input, "command", "cmd", "pattern", "query", "url")
            target = value if isinstance(value, str) else ""
    return ToolCall(name=name, target=target)


def outcome(text: str, failed: bool | None = None) -> tuple[int | None, str]:
    """(exit code, first error line) from a tool's reply text; the code None when unknown."""
    if len(text or "") > 3000:  # the exit line and the errors are at either end
        from ocm.vault.secrets.redact import redact

        text = redact(text)  # before the cut: a secret straddling it leaves nothing
        text = text[:1500] + "\n" + text[-1500:]
    m = c._EXIT_RE.search(text or "")  # noqa: SLF001 - one pattern for hooks and transcripts
    code = int(m.group(1)) if m else None
    if code is None and failed is not None:
        code = 1 if failed else 0
    return code, (c.error_line(text) if code not in (None, 0) else "")


class TurnBuilder:
    """Turns from a stream of events in transcript order."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.known = 0

    def _current(self, time: str) -> Turn:
        from ocm.vault.transcripts import Turn

        if not self.turns:
            self.turns.append(Turn(time=time))  # continues the note's last turn
        return self.turns[-1]

    def prompt(self, text: str, time: str) -> None:
        from ocm.vault.transcripts import Turn, strip_injected

        words = strip_injected(text)
        if words:
            self.turns.append(Turn(prompt=words, time=time))

    def text(self, text: str, time: str) -> None:
        if text and text.strip():
            self._current(time).texts.append(text.strip())

    def tool(self, call_id: str, call: ToolCall, time: str) -> None:
        self._current(time).add_tool(call_id, call)

    def result(self, call_id: str, code: int | None, error: str) -> None:
        for turn in reversed(self.turns):
            call = turn.tool(call_id)
            if call is not None:
                call.exit, call.error = code, error
                return


def fold_session(project: Any, ev: c.HookEvent, note_id: str, vault_dir: str,
                 env: dict[str, str]) -> list[str]:
    """Render the new part of the host's transcript for the session `note_id`; returns the
    last assistant message of each turn it read (empty when nothing was folded). Never
    raises."""
    from ocm.vault.freshness import journal

    if not ev.transcript_path or not enabled(vault_dir, env):
        return []
    try:
        from ocm.vault import transcripts
        from ocm.vault.links import link

        module = c.host_module(ev.host)
        parse = getattr(module, "parse_transcript", None)
        if parse is None:
            return []
        session_path = project.vault.find_session(note_id)
        cwd = ev.cwd

        def log(message: str) -> None:
            journal.log(vault_dir, f"{ev.host} {ev.event}: {message}")

        _too_deep.clear()
        result = transcripts.fold(project.vault.root, note_id, session_path.stem, ev.host,
                                  ev.session_id, ev.transcript_path,
                                  lambda lines: parse(lines, cwd), log)
        if _too_deep:
            log(f"transcript {ev.transcript_path}: {len(_too_deep)} line(s) nested too deeply "
                "skipped")
        if result is None:
            return []
        if result.more:
            _unfinished.add(_marker_name(ev))
        stem = result.path.stem

        def mutate(note: Any) -> None:
            if note.fm.get("transcript") != link(stem):
                note.set_frontmatter("transcript", link(stem))

        project.vault.session_edit(note_id, mutate)
        return result.last_texts
    except Exception as exc:  # noqa: BLE001 - a transcript never breaks the hook
        journal.log(vault_dir, f"{ev.host} {ev.event}: transcript {ev.transcript_path} "
                               f"skipped ({type(exc).__name__}: {exc})")
        return []


def size(path: str) -> int:
    try:
        return os.path.getsize(path) if path else -1
    except OSError:
        return -1


def has_news(ev: c.HookEvent, vault_dir: str, env: dict[str, str]) -> bool:
    """Whether a turn's end brings anything to record: the host's transcript grew since it
    was last folded (a stat and a tiny read, before anything heavy is imported), or, with
    transcripts off or absent, the payload carries the assistant's last message."""
    if not ev.transcript_path or not enabled(vault_dir, env):
        return bool(ev.last_message)
    current = size(ev.transcript_path)
    if current < 0:
        return bool(ev.last_message)
    marker = os.path.join(vault_dir, ".hooks", "transcripts", _marker_name(ev))
    try:
        with open(marker, encoding="utf-8") as handle:
            return current != int(handle.read().strip() or -1)
    except (OSError, ValueError):
        return True


def _marker_name(ev: c.HookEvent) -> str:
    import hashlib

    return hashlib.sha1(f"{ev.host}|{ev.session_id}|{ev.transcript_path}".encode()).hexdigest()[:24]


def mark_folded(ev: c.HookEvent, vault_dir: str) -> None:
    """Remember the transcript's size as folded, for `unfolded` (best effort)."""
    if not ev.transcript_path:
        return
    try:
        if _marker_name(ev) in _unfinished:  # more to fold: the next turn's end goes on
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(vault_dir, ".hooks", "transcripts", _marker_name(ev)))
            return
        size = os.path.getsize(ev.transcript_path)
        folder = os.path.join(vault_dir, ".hooks", "transcripts")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, _marker_name(ev)), "w", encoding="utf-8") as handle:
            handle.write(str(size))
    except OSError:
        pass

"""The hook journal: a buffer of small hook facts, folded into session notes before reads.

Frequent hook events (a file edited, a prompt submitted, a shell command run) must cost a
hook a few milliseconds, so they are not written into the note by the hook itself: the hook
appends one JSON line to `<vault>/.hooks/journal.jsonl` with a single `os.write` on an
`O_APPEND` descriptor (stdlib only, see `append`). Whoever reads the vault next (`ocm
search`, the MCP server, a session-end hook) calls `fold`, which applies the lines to the
session notes under the usual note locks and removes them. The Markdown stays the truth:
the journal only ever holds facts not yet folded, and folding twice changes nothing
(files are recorded by net effect, prompts deduplicated).

Rotation is race-free: appenders hold a shared `flock` while writing and re-check that the
path still names the file they opened; the folder takes the exclusive lock to rename the
journal aside (`*.fold`), so no line can land in a file that was already read.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

try:  # POSIX; on Windows appends are still atomic per write, rotation is best-effort
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms; only checkers need it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..store import Vault

HOOKS_DIR = ".hooks"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # a planted link here is never written through
JOURNAL = "journal.jsonl"
FAILED = "journal.failed.jsonl"
LOG = "hook.log"
STATE_DIR = "state"
MAX_LINE_BYTES = 32_000
MAX_LOG_BYTES = 1_000_000
DUPLICATE_WINDOW_S = 5.0  # a payload repeated within this is one event delivered twice
BUG_FIX_IMPORTANCE = 3
# Commands whose failure says nothing about a bug (a grep that found nothing, a probe).
_TRIVIAL_COMMANDS = {
    "ls", "cat", "grep", "rg", "ag", "find", "fd", "which", "type", "test", "[", "echo", "pwd",
    "cd", "head", "tail", "less", "more", "git", "diff", "wc", "file", "stat", "true", "false",
    "sleep", "kill", "pkill", "ps", "env", "printenv", "command", "exit", "sed", "awk", "jq",
}


def hooks_dir(vault_root: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(vault_root), HOOKS_DIR)


# --------------------------------------------------------------------------- writing (hook)


def append(vault_root: str | os.PathLike[str], record: dict[str, Any]) -> bool:
    """Append one record as one line; False if it could not be written."""
    data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    if len(data) > MAX_LINE_BYTES:
        return False
    folder = hooks_dir(vault_root)
    path = os.path.join(folder, JOURNAL)
    os.makedirs(folder, exist_ok=True)
    for _ in range(5):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_SH)
                mine = os.fstat(fd)
                try:
                    now_there = os.stat(path)
                except FileNotFoundError:
                    continue
                if (mine.st_ino, mine.st_dev) != (now_there.st_ino, now_there.st_dev):
                    continue  # rotated between open and lock: open the new journal
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            return True
        finally:
            os.close(fd)
    return False


def log(vault_root: str | os.PathLike[str] | None, message: str) -> None:
    """One line in `<vault>/.hooks/hook.log` (never raises; rotated at ~1 MB)."""
    if not vault_root:
        return
    try:
        folder = hooks_dir(vault_root)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, LOG)
        try:
            if os.stat(path).st_size > MAX_LOG_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        line = f"{stamp} [{os.getpid()}] {' '.join(message.split())[:2000]}\n".encode()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - logging must never break a hook
        pass


def pending(vault_root: str | os.PathLike[str]) -> bool:
    """Whether anything waits to be folded (two cheap stats when nothing does)."""
    folder = hooks_dir(vault_root)
    try:
        if os.stat(os.path.join(folder, JOURNAL)).st_size > 0:
            return True
    except FileNotFoundError:
        pass
    try:
        return any(name.endswith(".fold") for name in os.listdir(folder))
    except FileNotFoundError:
        return False


# --------------------------------------------------------------------------- folding


class FoldReport:
    def __init__(self) -> None:
        self.records = 0
        self.sessions: list[str] = []
        self.memories: list[str] = []
        self.skipped = 0
        self.errors: list[str] = []


def _rotate(folder: str) -> None:
    path = os.path.join(folder, JOURNAL)
    try:
        fd = os.open(path, os.O_RDWR | _NOFOLLOW)
    except FileNotFoundError:
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for appenders mid-write
        if os.fstat(fd).st_size == 0:
            return
        target = os.path.join(folder, f"{time.time_ns():020d}-{os.getpid()}.fold")
        os.replace(path, target)
    finally:
        os.close(fd)


def _read_records(paths: list[str]) -> tuple[list[dict[str, Any]], int]:
    records: list[dict[str, Any]] = []
    bad = 0
    for path in paths:
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            continue
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(item, dict) and isinstance(item.get("k"), str):
                records.append(item)
            else:
                bad += 1
    return records, bad


def fold(vault: Vault) -> FoldReport:
    """Apply every journaled record to its session note, then drop the records."""
    report = FoldReport()
    root = vault.root
    if not pending(root):
        return report
    from ..atomic import locked

    folder = hooks_dir(root)
    with locked(vault.locks_dir, "journal-fold"):
        _rotate(folder)
        paths = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".fold"))
        records, report.skipped = _read_records(paths)
        report.records = len(records)
        records = _drop_redelivered(records)
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for rec in records:
            groups.setdefault((str(rec.get("h") or "unknown"), str(rec.get("s") or "")),
                              []).append(rec)
        for (host, sid), recs in groups.items():
            try:
                note_id, made = _apply_session(vault, host, sid, recs)
                if note_id:
                    report.sessions.append(note_id)
                report.memories += made
            except Exception as exc:  # noqa: BLE001 - one bad note must not block the rest
                report.errors.append(f"{host}/{sid}: {type(exc).__name__}: {exc}")
                log(root, f"fold: could not apply {len(recs)} record(s) for {host}/{sid}: "
                          f"{type(exc).__name__}: {exc}; kept in {FAILED}")
                _keep_failed(folder, recs)
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    return report


def _drop_redelivered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without the second delivery of one hook payload. VS Code runs both its own
    hooks and `.claude/settings.json` for one tool call, under two host names: the copies
    arrive back to back (or interleaved), with the same session and payload digest (`u`).
    Only a repeat of the payload just before in that session, within DUPLICATE_WINDOW_S, is
    dropped: an identical payload after another one is a new event (the same fixing edit
    made again between a failed and a passing command)."""
    kept: list[dict[str, Any]] = []
    state: dict[str, tuple[str, float, set[str]]] = {}  # session -> (payload, time, seen)
    for rec in records:
        once = rec.get("u")
        if not isinstance(once, str):
            kept.append(rec)
            continue
        sid = str(rec.get("s") or "")
        payload = once.partition(":")[0]
        stamp = rec.get("t")
        at = float(stamp) if isinstance(stamp, int | float) else 0.0
        last, last_time, seen = state.get(sid, ("", 0.0, set()))
        if payload != last or abs(at - last_time) > DUPLICATE_WINDOW_S:
            seen = set()
        state[sid] = (payload, at, seen)
        if once in seen:
            continue  # the same hook payload delivered twice
        seen.add(once)
        kept.append(rec)
    return kept


def _keep_failed(folder: str, recs: list[dict[str, Any]]) -> None:
    with open(os.path.join(folder, FAILED), "a", encoding="utf-8") as handle:
        for rec in recs:
            handle.write(json.dumps(rec, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- one session


def _session_for(vault: Vault, host: str, sid: str) -> Path | None:
    from ..errors import InvalidInput, NotFound
    from ..sessions import validate_tool

    tool = host if host in ("claude-code", "cursor", "codex", "gemini", "vscode",
                            "opencode", "windsurf", "copilot", "qwen", "droid", "kilo",
                            "antigravity") else "unknown"
    if sid:
        try:
            return vault.find_session(sid)
        except (NotFound, InvalidInput):
            pass
        return vault.create_session(validate_tool(tool), agent_session_id=sid).path
    return vault.current_session(tool)  # no host session id: the open one, if any


def _existed_at(root: Path, sha: str | None, rels: list[str]) -> dict[str, bool]:
    """Whether each path existed in commit `sha` (one `git cat-file` for all of them)."""
    import subprocess

    if not sha or not rels:
        return {}
    try:
        out = subprocess.run(
            ["git", "cat-file", "--batch-check"], cwd=root, capture_output=True, timeout=10,
            input="".join(f"{sha}:{rel}\n" for rel in rels).encode(), check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = out.stdout.decode("utf-8", "replace").splitlines()
    if out.returncode != 0 or len(lines) != len(rels):
        return {}
    return {rel: not line.endswith(" missing") for rel, line in zip(rels, lines, strict=True)}


def _command_key(command: str) -> str:
    return " ".join(command.split())


def _significant(command: str) -> bool:
    words = command.split()
    if not words:
        return False
    first = os.path.basename(words[0])
    while first in ("sudo", "time", "env", "nice", "timeout") and len(words) > 1:
        words = words[1:]
        first = os.path.basename(words[0])
    return first not in _TRIVIAL_COMMANDS


def _state_path(vault: Vault, note_id: str) -> Path:
    from pathlib import Path

    return Path(hooks_dir(vault.root)) / STATE_DIR / f"{note_id}.json"


def _load_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return {"pending": {}}
    return data if isinstance(data, dict) and isinstance(data.get("pending"), dict) else {
        "pending": {}}


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _apply_session(vault: Vault, host: str, sid: str,
                   recs: list[dict[str, Any]]) -> tuple[str, list[str]]:
    import hashlib

    from ..alike.autofix import AUTO_TITLE
    from ..atomic import atomic_write_text
    from ..errors import Conflict, InvalidInput
    from ..secrets.redact import redact
    from ..sessions import SessionNote, normalise_file_path

    path = _session_for(vault, host, sid)
    if path is None:
        log(vault.root, f"fold: {len(recs)} {host} record(s) without a session id and no open "
                        "session; dropped")
        return "", []
    header = vault._frontmatter_only(path) or {}
    note_id = str(header.get("id") or path.stem)
    project_root = vault.project_root
    root_text = str(project_root)
    vault_rel = None
    with contextlib.suppress(ValueError):
        vault_rel = vault.root.resolve().relative_to(project_root.resolve()).as_posix()

    def rel_of(raw: str, tree: Any = None) -> str | None:
        base = tree if isinstance(tree, str) and tree and raw.startswith(
            tree.rstrip("/\\") + os.sep) else root_text
        try:
            rel = normalise_file_path(redact(raw), base)
        except InvalidInput:
            return None
        if rel.startswith("/") or rel.startswith(".git/") or (
                vault_rel and (rel == vault_rel or rel.startswith(vault_rel + "/"))):
            return None  # outside the project, or git's / ocm's own files
        return rel

    # Pass 1: normalise, in order; decide ambiguous writes against the session's start.
    files: list[tuple[str, str]] = []
    written: list[str] = []
    for rec in recs:
        if rec.get("k") == "file" and isinstance(rec.get("p"), str):
            rel = rel_of(rec["p"], rec.get("w"))
            if rel is None:
                continue
            change = str(rec.get("c") or "modified")
            if change == "written":
                written.append(rel)
            rec["_rel"] = rel
    existed = _existed_at(project_root, header.get("git_sha_start") and str(
        header.get("git_sha_start")), list(dict.fromkeys(written)))

    state_file = _state_path(vault, note_id)
    state = _load_state(state_file)
    pending_fail: dict[str, Any] = state["pending"]
    prompts: list[str] = []
    outcomes: list[str | dict[str, Any]] = []  # in order; a fix (a dict) is worded below
    fixes: list[dict[str, Any]] = []
    reads = edits = 0
    for rec in recs:
        kind = rec.get("k")
        if kind == "file" and rec.get("_rel"):
            rel = rec["_rel"]
            change = str(rec.get("c") or "modified")
            if change == "written":
                change = "modified" if existed.get(rel, True) else "created"
            if change not in ("created", "modified", "deleted"):
                continue
            files.append((rel, change))
            edits += 1
            for entry in pending_fail.values():
                if rel not in entry["files"]:
                    entry["files"].append(rel)
        elif kind == "read":
            n = rec.get("n")
            reads += n if isinstance(n, int) and 0 < n < 1000 else 1
        elif kind == "prompt" and isinstance(rec.get("x"), str):
            text = " ".join(redact(rec["x"]).split())[:2000]
            if text:
                prompts.append(text)
        elif kind == "cmd" and isinstance(rec.get("x"), str):
            command = _command_key(redact(rec["x"]))[:500]
            if not command or not _significant(command):
                continue
            if rec.get("ok") is False:
                error = " ".join(redact(str(rec.get("e") or "")).split())[:300]
                # `t`: when it failed, so a re-failure of a pending command is seen as new.
                pending_fail[command] = {"command": command, "error": error, "files": [],
                                         "t": rec.get("t")}
                outcomes.append(f"{_code(command)} failed" + (
                    f": {_code(error)}" if error else ""))
            elif rec.get("ok") is True and command in pending_fail:
                entry = pending_fail.pop(command)
                if entry["files"]:
                    fixes.append(entry)
                    outcomes.append(entry)
                else:  # passed again without an edit: the failure no longer stands
                    outcomes.append(f"{_code(command)} passed")

    # Pass 2: low-importance bug_fix memories for "failed, edited, passed" (no LLM).
    made: list[str] = []
    for fix in fixes:
        digest = hashlib.sha1(f"{fix['command']}\n{fix['error']}".encode()).hexdigest()[:10]
        files_text = ", ".join(_code(f) for f in fix["files"][:10])
        error = fix["error"] or "a non-zero exit status"
        content = (f"{_code(fix['command'])} failed with:\n\n    {error}\n\n"
                   f"It passed after editing {files_text}.\n\n"
                   f"Recorded automatically from session {note_id} (failed command, edits, "
                   "same command passed).")
        title = f"{AUTO_TITLE} {fix['command'][:60]}: {error[:90]}"
        key = f"auto-fix-{note_id}-{digest}"
        kept_as = "bug_fix"  # the agent's own record of this failure, when it holds the fix
        try:
            result = vault.remember(content, "bug_fix", title=title,
                                    files=fix["files"][:20], tags=["auto-captured"],
                                    importance=BUG_FIX_IMPORTANCE, session=note_id, key=key)
            memory_id, kept_as = result.id, result.path.parent.name
            made.append(memory_id)
        except Conflict:  # already captured (folded twice, or the same fix made again)
            previous = vault.active_with_key(key)
            memory_id = previous[1].id if previous else ""
        fix["item"] = f"{_code(fix['command'])} passed after editing {files_text}" + (
            f" ({kept_as} memory {memory_id})" if memory_id else "")
    items = [o if isinstance(o, str) else str(o["item"]) for o in outcomes]
    # Each bullet once, where it last happened: a command that failed, passed and failed
    # again with the same error ends on its failure, which the brief then reads as standing.
    items = list(dict.fromkeys(reversed(items)))[::-1]

    def mutate(note: SessionNote) -> None:
        for rel, change in files:
            note.record_file(rel, change)
        note.add_items("prompts", list(dict.fromkeys(prompts)))
        note.add_items("failed commands", items, renew=True)
        note.count_activity(reads, edits)

    if files or prompts or items or reads or edits:
        vault.session_edit(note_id, mutate)
    if pending_fail:
        atomic_write_text(state_file, json.dumps(state, ensure_ascii=False))
    elif state_file.exists():
        state_file.unlink()
    return note_id, made

"""`ocm hook <host> <event>`: one payload in, the host's output (JSON or nothing) out.

Frequent events (prompt submitted, file edited or read, shell command finished) only append
one line to the vault's journal (`ocm.vault.freshness.journal.append`: stdlib, a few milliseconds).
Session boundaries (start, compaction, stop, end) import the facade, fold the journal into
the session note and do their work; session start injects the recall brief. Nothing here
imports Whoosh or MCP, and `run` never raises: every problem is logged under the vault.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

from ocm.vault.boundary import linked_written_folders
from ocm.vault.freshness import journal

from . import common as c
from . import transcript
from .hook_input import MAX_PAYLOAD_BYTES

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms; only checkers need it
if TYPE_CHECKING:
    from typing import Any

DEDUPE_WINDOW_S = 30.0
_SEEN = "seen"


def _parse_argv(argv: list[str]) -> tuple[str | None, str | None, dict[str, str], str]:
    host = event = None
    opts: dict[str, str] = {}
    problem = ""
    words: list[str] = []
    it = iter(argv)
    for word in it:
        if word.startswith("--") and "=" in word:
            key, _, value = word[2:].partition("=")
            opts[key] = value
        elif word.startswith("--"):
            opts[word[2:]] = next(it, "")
        else:
            words.append(word)
    if words:
        host = c.canonical_host(words[0])
        if host is None:
            event = words[0]  # `ocm-hook session-start`: the host comes from the payload
            problem = "" if len(words) == 1 else f"unknown host {words[0]!r}"
        elif len(words) > 1:
            event = words[1]
    return host, event, opts, problem


def _decode(raw: bytes) -> tuple[dict[str, Any], str]:
    if not raw.strip():
        return {}, "empty payload"
    if len(raw) > MAX_PAYLOAD_BYTES:
        return {}, f"payload of {len(raw):,} bytes is over {MAX_PAYLOAD_BYTES:,}; ignored"
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError as exc:
        return {}, f"payload is not JSON ({exc.__class__.__name__}: {str(exc)[:80]})"
    if not isinstance(data, dict):
        return {}, f"payload is a JSON {type(data).__name__}, not an object"
    return data, ""


def _merge_outputs(parts: list[str]) -> str:
    """One host's config ran another's command (Cursor running Claude Code's hooks): answer
    in both dialects, which each host reads and the other ignores."""
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return parts[0] if parts else ""
    merged: dict[str, Any] = {}
    for part in parts:
        try:
            value = json.loads(part)
        except ValueError:
            return parts[0]
        if isinstance(value, dict):
            merged.update(value)
    return json.dumps(merged, ensure_ascii=False)


def _first_time(vault_dir: str, key: str) -> bool:
    """True for the first arrival of (host, session, event) within the dedupe window."""
    import hashlib

    folder = os.path.join(journal.hooks_dir(vault_dir), _SEEN)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha1(key.encode()).hexdigest()[:24])
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if journal.fcntl is not None:
            journal.fcntl.flock(fd, journal.fcntl.LOCK_EX)
        try:
            last = float(os.read(fd, 64).decode() or 0)
        except ValueError:
            last = 0.0
        now = time.time()
        if now - last < DEDUPE_WINDOW_S:
            return False
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, repr(now).encode())
        return True
    finally:
        os.close(fd)


def _prune_seen(vault_dir: str, older_than_s: float = 86_400.0) -> None:
    folder = os.path.join(journal.hooks_dir(vault_dir), _SEEN)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    cutoff = time.time() - older_than_s
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            pass


# --------------------------------------------------------------------------- light events


def _journal_event(ev: c.HookEvent, vault_dir: str, raw: bytes) -> int:
    """Journal one payload. Each record carries `u`, the payload's digest and its place in
    it, so the same payload delivered twice (VS Code runs `.github/hooks/*.json` and
    `.claude/settings.json` for one tool call) is folded once."""
    import hashlib

    digest = hashlib.sha1(raw).hexdigest()[:16]
    base = {"t": round(time.time(), 3), "h": ev.host, "s": ev.session_id}
    records: list[dict[str, Any]] = []
    for change in ev.files:
        record = {**base, "k": "file", "p": c.redacted_cut(change.path, 4096), "c": change.change}
        if ev.work_tree:
            record["w"] = ev.work_tree
        records.append(record)
    if ev.reads:
        records.append({**base, "k": "read", "n": ev.reads})
    # The parser redacted prompt, command and error line before cutting them.
    if ev.prompt:
        text = c.redacted_cut(" ".join(ev.prompt.split()), c.MAX_PROMPT_CHARS)
        if text:
            records.append({**base, "k": "prompt", "x": text})
    if ev.command and ev.ok is not None:
        records.append({**base, "k": "cmd", "x": ev.command, "ok": ev.ok, "e": ev.error})
    for index, record in enumerate(records):
        record["u"] = f"{digest}:{index}"
        if not journal.append(vault_dir, record):
            journal.log(vault_dir, f"{ev.host} {ev.event}: could not journal {record['k']}")
    return len(records)


def _int_option(opts: dict[str, str], env: dict[str, str], opt: str, var: str,
                default: int) -> int:
    for value in (opts.get(opt), env.get(var)):
        if value:
            try:
                return int(value)
            except ValueError:
                pass
    return default


# --------------------------------------------------------------------------- heavy events


def _project(root: str, vault_dir: str) -> Any:
    from pathlib import Path

    from ocm.project import Project

    return Project(Path(vault_dir), Path(root))


def _fold(project: Any, vault_dir: str) -> list[str]:
    """Fold the journal; returns the sessions it wrote to."""
    try:
        report = journal.fold(project.vault)
        for error in report.errors:
            journal.log(vault_dir, f"fold: {error}")
        return report.sessions
    except Exception as exc:  # noqa: BLE001 - the session work still goes on
        journal.log(vault_dir, f"fold failed: {type(exc).__name__}: {exc}")
        return []


def _session(project: Any, ev: c.HookEvent, create: bool = True) -> str | None:
    from ocm.vault.errors import InvalidInput, NotFound

    tool = ev.host
    if ev.session_id:
        try:
            if create:
                return project.start_session(tool, agent_session_id=ev.session_id).id
            return project.resolve_session(ev.session_id, create=False)
        except (NotFound, InvalidInput):
            return None
    current = project.vault.current_session(tool)  # STOP without an id: the open session
    return str(current.stem) if current is not None else None


def _heavy(ev: c.HookEvent, root: str, vault_dir: str, opts: dict[str, str],
           env: dict[str, str], cap: int) -> str | None:
    """Runs a session-boundary event; returns context to inject, if any."""
    from ocm.vault.sessions import CheckpointInput

    from . import quiet

    project = _project(root, vault_dir)
    folded = _fold(project, vault_dir)
    try:
        quiet.refresh(vault_dir, folded)
        quiet.close_quiet(project, vault_dir, env, ev.host, ev.session_id)
    except Exception as exc:  # noqa: BLE001 - this event's own work still goes on
        journal.log(vault_dir, f"quiet close failed: {type(exc).__name__}: {exc}")
    no_end = getattr(c.host_module(ev.host), "NO_SESSION_END", False)
    if no_end and ev.kind in (c.STOP, c.COMPACT):
        note_id = _session(project, ev, create=False)
        if note_id:  # its last activity, for the quiet-period close
            quiet.touch(vault_dir, note_id, ev.host, ev.session_id)
    if ev.kind == c.START:
        note_id = _session(project, ev)
        if not note_id:
            return None
        if no_end:
            quiet.touch(vault_dir, note_id, ev.host, ev.session_id)
            quiet.forget(vault_dir, _close_abandoned(project, ev.host, note_id))
        compacted = ev.source == "compact"
        reminder = None
        if compacted:
            _capture(project, ev, note_id, vault_dir, env)
            from . import nudge  # unsaved work the summary may have dropped

            reminder = nudge.after_compaction(project, ev, note_id, vault_dir, env)
            project.vault.checkpoint(note_id, CheckpointInput(trigger="context_limit"))
        from .base import DEFAULT_BRIEF_BUDGET
        from .brief import session_brief

        budget = _int_option(opts, env, "budget", "OCM_BRIEF_BUDGET", DEFAULT_BRIEF_BUDGET)
        if reminder:
            cap -= len(reminder) + 2
        text = session_brief(project, note_id, budget, cap, compacted=compacted, tool=ev.host)
        return f"{text}\n\n{reminder}" if reminder else text
    if ev.kind == c.COMPACT:
        note_id = _session(project, ev)
        if note_id:
            project.vault.checkpoint(note_id, CheckpointInput(trigger="context_limit"))
            if ev.host != "gemini":  # Gemini's PreCompress fires before every model call
                _capture(project, ev, note_id, vault_dir, env)
        return None
    if ev.kind == c.END:
        note_id = _session(project, ev, create=False)
        if note_id:
            from ocm.vault.errors import Conflict
            from ocm.vault.git import snapshot as gitsnapshot

            _capture(project, ev, note_id, vault_dir, env)

            with contextlib.suppress(Conflict):
                project.vault.close_session(note_id, "closed")
        _prune_seen(vault_dir)
        if note_id:  # failures still pending when the session ends will not be fixed in it
            from .nudge import unresolved

            unresolved.at_end(project, note_id, vault_dir)
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(journal.hooks_dir(vault_dir), journal.STATE_DIR,
                                       f"{note_id}.json"))
            gitsnapshot.drop(project.vault.root, note_id)
        return None
    note_id = _session(project, ev, create=False)  # STOP: the fold above, and the turn
    if note_id:
        _capture(project, ev, note_id, vault_dir, env)
        from . import nudge  # the model saves the turn's work, if it did not

        return nudge.at_stop(project, ev, note_id, vault_dir, env)
    return None


def _capture(project: Any, ev: c.HookEvent, note_id: str, vault_dir: str,
             env: dict[str, str]) -> None:
    """A turn ended (or the context was compacted, or the session ends): the transcript's
    new part into its note, and the session note's auto summary."""
    from ocm.vault import autosummary

    from .transcript import fold_session, mark_folded

    # Work Done: the last message of every turn the fold read (turns without a Stop of
    # their own, e.g. interrupted ones, included); the payload's when nothing was folded.
    messages = fold_session(project, ev, note_id, vault_dir, env) or [ev.last_message]
    mark_folded(ev, vault_dir)
    try:
        project.vault.session_edit(note_id, lambda note: autosummary.fill(note, messages))
    except Exception as exc:  # noqa: BLE001 - the hook still answers
        journal.log(vault_dir, f"{ev.host} {ev.event}: auto summary failed: "
                               f"{type(exc).__name__}: {exc}")


def _close_abandoned(project: Any, host: str, keep: str) -> list[str]:
    """A host without a session end (VS Code): its earlier open sessions end when the next
    one starts, closed with the git facts of this moment (`git_sha_end`, the diff stat).
    Returns their ids."""
    from ocm.vault.errors import Conflict

    stale = [str(data.get("id") or path.stem) for path, data in project.vault.session_headers()
             if data.get("tool") == host and (data.get("status") or "open") == "open"]
    closed = []
    for note_id in stale:
        if note_id != keep:
            with contextlib.suppress(Conflict):
                project.vault.close_session(note_id, "closed")
                closed.append(note_id)
    return closed


def _before_shell(ev: c.HookEvent, root: str, vault_dir: str, env: dict[str, str]
                  ) -> str | None:
    """A git commit about to run (`nudges: all`): ask for a checkpoint first."""
    from . import nudge

    if not nudge.is_commit(ev.command) or nudge.mode(vault_dir, env) != nudge.ALL:
        return None  # every other shell call: nothing read
    project = _project(root, vault_dir)
    _fold(project, vault_dir)
    note_id = _session(project, ev, create=False)
    return nudge.before_commit(project, ev, note_id, vault_dir) if note_id else None


def _count_nudge(ev: c.HookEvent, root: str, vault_dir: str, env: dict[str, str]
                 ) -> str | None:
    """N edits without a checkpoint: ask for one at this prompt (nudge.count says where)."""
    from .nudge import count

    if not count.applies(ev.host, vault_dir, env):
        return None  # nothing read: the prompt stays a journal line
    project = _project(root, vault_dir)
    _fold(project, vault_dir)
    note_id = _session(project, ev, create=False)
    return count.at_prompt(project, ev, note_id, vault_dir, env) if note_id else None


def _prompt_context(ev: c.HookEvent, root: str, vault_dir: str, opts: dict[str, str],
                    env: dict[str, str], cap: int) -> str | None:
    limit = _int_option(opts, env, "prompt-recall", "OCM_PROMPT_RECALL", 0)
    if limit <= 0 or not ev.prompt:
        return None
    from .brief import prompt_memories

    budget = min(cap, _int_option(opts, env, "prompt-budget", "OCM_PROMPT_RECALL_BUDGET", 1500))
    try:
        threshold = float(env.get("OCM_PROMPT_RECALL_MIN") or 0.5)
    except ValueError:
        threshold = 0.5
    return prompt_memories(_project(root, vault_dir), ev.prompt, limit, budget,
                           threshold) or None


# --------------------------------------------------------------------------- entry


def run(argv: list[str], raw: bytes, env: dict[str, str] | None = None) -> str:
    """Handle one hook call; returns what to print (possibly ""). Never raises."""
    env = dict(os.environ if env is None else env)
    vault_dir: str | None = None
    host_arg = table_host = host = None
    kind = c.IGNORE
    try:
        host_arg, event_arg, opts, argv_problem = _parse_argv(argv)
        data, problem = _decode(raw)
        problem = argv_problem or problem
        normalise = getattr(c.host_module(host_arg), "normalise", None) if host_arg else None
        if normalise is not None:
            data = normalise(data)  # Windsurf's envelope
        event = c.kebab(event_arg or str(c.get(data, "hook_event_name") or ""))
        host = c.detect_host(host_arg, data, env)
        table_host = host_arg or host
        kind = c.host_module(table_host).EVENTS.get(event, c.IGNORE)
        if kind == c.IGNORE:
            for name in c.MODULES:  # an event name from another host's table
                kind = c.host_module(name).EVENTS.get(event, c.IGNORE)
                if kind != c.IGNORE:
                    break
        ev = c.parse(host, table_host, event, kind, data)
        located = c.locate_vault(ev, env)
        if located is None:
            _log_without_vault(env, f"{table_host} {event}: no ocm vault for "
                                    f"{ev.cwd or (ev.roots or [''])[0] or os.getcwd()}")
            return _output(host, table_host, kind, None)
        root, vault_dir = located
        linked = linked_written_folders(vault_dir)
        if linked:  # a committed link: nothing is written through it, not even the log
            vault_dir = None
            print(f"ocm-hook: {located[1]}/{linked[0]} is a symbolic link; ocm never writes "
                  "through links; nothing recorded", file=sys.stderr)
            return _output(host, table_host, kind, None)
        own = getattr(c.host_module(host), "OWN_HOOKS", None)
        if host != table_host and own and os.path.isfile(os.path.join(root, own)):
            return ""  # a copy through another host's hooks; the host's own hooks carry it
        if problem or kind == c.IGNORE:
            journal.log(vault_dir, f"{table_host} {event or '?'}: "
                                   f"{problem or 'event not handled'}; no-op")
            return _output(host, table_host, kind, None)
        cap = getattr(c.host_module(host), "CAP", 10_000)
        missed = getattr(c.host_module(host), "missed_events", None)
        if missed is not None and ev.kind != c.BEFORE_SHELL:
            for key, event in missed(ev, vault_dir):  # droid: failures and prompts, no hook
                _journal_event(event, vault_dir, key.encode())
        if ev.kind == c.BEFORE_SHELL:
            return _output(host, table_host, kind, _before_shell(ev, root, vault_dir, env))
        if ev.kind in c.FREQUENT:
            _journal_event(ev, vault_dir, raw)
            context = _prompt_context(ev, root, vault_dir, opts, env, cap) if (
                ev.kind == c.PROMPT) else None
            if ev.kind == c.PROMPT and ev.prompt:
                count = _count_nudge(ev, root, vault_dir, env)
                context = "\n\n".join(x for x in (count, context) if x) or None
            return _output(host, table_host, kind, context)
        if not ev.session_id and kind in (c.START, c.COMPACT, c.END):
            journal.log(vault_dir, f"{table_host} {event}: no session id in the payload; no-op")
            return _output(host, table_host, kind, None)
        source = getattr(c.host_module(ev.host), "transcript_source", None)
        if source is not None and kind in (c.STOP, c.COMPACT, c.END) and not ev.transcript_path:
            ev.transcript_path = source(ev, vault_dir, env)  # OpenCode: from its database
        if kind == c.STOP and not journal.pending(vault_dir) and not transcript.has_news(
                ev, vault_dir, env):
            return _output(host, table_host, kind, None)  # nothing to fold: no imports at all
        real = getattr(c.host_module(host), "compaction_is_real", None)
        if kind == c.COMPACT and real is not None and not real(data, env):
            return _output(host, table_host, kind, None)  # Gemini: before every model call
        key = ev.dedupe_key()
        if kind == c.STOP:  # one per turn: a turn's end is told apart by what it appended
            key += f"|{transcript.size(ev.transcript_path)}|{ev.last_message[:500]}"
        if not _first_time(vault_dir, key):
            journal.log(vault_dir, f"{host} {event} {ev.session_id}: duplicate within "
                                   f"{DEDUPE_WINDOW_S:.0f}s; no-op")
            return _output(host, table_host, kind, None)
        context = _heavy(ev, root, vault_dir, opts, env, cap)
        return _output(host, table_host, kind, context)
    except Exception as exc:  # noqa: BLE001 - a hook must never break its host
        journal.log(vault_dir, f"{host_arg} {argv}: {type(exc).__name__}: {exc}")
        try:
            return _output(host or "claude-code", table_host or host or "claude-code", kind,
                           None)
        except Exception:  # noqa: BLE001
            return ""


def _output(host: str, table_host: str, kind: str, context: str | None) -> str:
    parts = [c.host_module(host).output(kind, context)]
    if table_host != host:
        parts.append(c.host_module(table_host).output(kind, context))
    return _merge_outputs(parts)


def _log_without_vault(env: dict[str, str], message: str) -> None:
    """No project vault: log in the user's vault if it exists; create nothing."""
    user = c.user_vault_dir(env)
    if os.path.isdir(user):
        journal.log(user, message)

"""What every host integration shares: the install context, the rule block, hook entries.

Stdlib only and cheap to import (the hook path imports the host modules for their event
tables and output formats; the install half is only data until `plan` is called).
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms; only checkers need it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

BRIEF_CAP = 10_000          # Claude Code's additionalContext cap; the others are not documented
DEFAULT_BRIEF_BUDGET = 6000
SERVER_NAME = "ocm"
HOOK_EXE = "ocm-hook"

RULES = """\
## openCodeMemory (ocm)

This project keeps a local memory in `.openCodeMemory/`: one Markdown note per coding
session and small typed memory records. Hooks record the files you edit and the prompts you
receive; the brief injected at session start lists pinned memories, the last session's goal
and pending work, and the current ocm session id.

### Save progress with `ocm__checkpoint`

Call it with the ocm session id from the brief, without asking the user:

1. when the context is about 70% full, and right after the context was compacted;
2. before a git commit;
3. when the user asks to save, and at the natural end of a task.

Fields: `goal` (1-2 specific sentences), `work_completed` (one bullet per finished task;
appended), `work_pending` (the full remaining list; replaces the previous one),
`work_summary` (bullets since the last checkpoint), `decisions` (`**Label:** rationale.`,
with a link when there is one), `plan_files` (path + the file's exact first heading),
`references` (URL + a 3-5 word title), `slug` (3-4 hyphenated words, first checkpoint only).

### Keep lasting facts with `ocm__remember`

One record per fact a later session needs: `gotcha`, `decision`, `bug_fix`, `discovery`,
`trade_off`, `procedure`, `principle`, `preference`, `lesson`, `context`, `reference`.
Give a `key` to a fact that will be replaced later (pass `supersede_reason` to replace it);
mark facts that stopped being true with `ocm__resolve_memory`.

### Load context from earlier work

1. `ocm__search` (memories and sessions) or `ocm__search_sessions` with a plain description
   of the task, e.g. "TEI migration embedding latency"; dates like "last week" work in it.
2. Read the `markdown_path` a result returns directly; `ocm__get_session_files` gives only
   a session's files, `ocm__get_note` one note by id.
3. `ocm__recall` rebuilds the start-of-session brief, optionally for a topic.

From a shell: `ocm search "..."`, `ocm recall`, `ocm show ID`.
"""


class InstallContext:
    """Where and with which executables a host is wired (plain class: cheap to import)."""

    def __init__(self, root: Path, user: bool, hook_exe: str, ocm_exe: str,
                 home: Path) -> None:
        self.root = root            # the project root, or the home folder (user scope)
        self.user = user
        self.hook_exe = hook_exe    # absolute path of `ocm-hook`
        self.ocm_exe = ocm_exe      # absolute path of `ocm`
        self.home = home

    def hook_command(self, host: str, event: str) -> str:
        import shlex

        return f"{shlex.quote(self.hook_exe)} {host} {event}"

    def server(self, env: dict[str, str] | None = None, with_type: bool = True) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "stdio"} if with_type else {}
        entry.update({"command": self.ocm_exe, "args": ["mcp"]})
        entry["env"] = dict(env or {})
        return entry

    def project_env(self) -> dict[str, str]:
        """This machine's project folder, for a host that starts MCP servers outside the
        project and expands no variable there (Antigravity). Every other host starts
        `ocm mcp` in the folder it runs in (each host `make e2e` drives remembers into the
        project's vault with no folder in its config), and the server finds the project's
        root from there or from the client's MCP roots: a committed config then names no
        folder of one machine and is the same on every teammate's."""
        return {} if self.user else {"OCM_PROJECT_DIR": str(self.root)}


# VS Code and Cursor expand predefined variables in their mcp.json server entries ("refer to
# the workspace folder (${workspaceFolder})": code.visualstudio.com/docs/copilot/reference/
# mcp-configuration; Cursor's config interpolation takes ${workspaceFolder} too).
WORKSPACE_ENV = {"OCM_PROJECT_DIR": "${workspaceFolder}"}


def _beside_python(name: str) -> str | None:
    import sys
    from pathlib import Path

    folder = Path(sys.executable).parent
    for candidate in (folder / name, folder / f"{name}.exe", folder / "Scripts" / f"{name}.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def executables() -> tuple[str, str]:
    """Absolute paths of the installed `ocm-hook` and `ocm` (the running venv's first)."""
    import shutil
    import sys
    from pathlib import Path

    hook = _beside_python(HOOK_EXE) or shutil.which(HOOK_EXE)
    ocm = _beside_python("ocm") or shutil.which("ocm")
    if not hook:
        hook = f"{sys.executable} -m ocm.hook"
    if not ocm:
        ocm = sys.executable
    return str(Path(hook).absolute()) if " " not in hook else hook, str(Path(ocm).absolute())


def stable_executables() -> tuple[str, str]:
    """What host configs run: the bare `ocm-hook` and `ocm` when both are on PATH (an install
    as a tool: `uv tool install`, `pipx install`), found again by the shell at every run, so a
    committed config is the same on every machine and survives a moved or deleted clone.
    Otherwise the running install's absolute paths (a clone's venv not on PATH)."""
    import shutil

    if shutil.which(HOOK_EXE) and shutil.which("ocm"):
        return HOOK_EXE, "ocm"
    return executables()


def is_ocm_command(command: Any) -> bool:
    return isinstance(command, str) and (HOOK_EXE in command or "ocm.hook" in command)


def hooks_file_is_ours(text: str, key: str = "command") -> bool:
    """A hooks file (`{"hooks": {event: [handler, …]}}`, VS Code's and Copilot CLI's) is
    ocm's when every handler's `key` runs ocm's hook."""
    try:
        data = json.loads(text)
    except ValueError:
        return False
    events = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(events, dict) or not events:
        return False
    return all(isinstance(h, dict) and is_ocm_command(h.get(key))
               for handlers in events.values() if isinstance(handlers, list)
               for h in handlers)


def hook_group_is_ours(group: Any) -> bool:
    """A Claude-style matcher group whose handlers are all ocm's."""
    if not isinstance(group, dict):
        return False
    handlers = group.get("hooks")
    if isinstance(handlers, list) and handlers:
        return all(isinstance(h, dict) and is_ocm_command(h.get("command")) for h in handlers)
    return is_ocm_command(group.get("command"))


def server_is_ours(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    command = str(entry.get("command") or "")
    args = entry.get("args") or []
    return os.path.basename(command).split(".")[0] in ("ocm", "python", "python3") and (
        args[:1] == ["mcp"] or "ocm" in " ".join(map(str, args)))


def hook_json_output(event_name: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name,
                                              "additionalContext": context}},
                      ensure_ascii=False)

"""Host-neutral hook payload handling. Stdlib only: this module is on every hook's path.

A payload is read leniently (snake_case and camelCase keys, strings or lists, missing
fields) into a `HookEvent`: what happened (`kind`), to which host session, in which
folder, and the facts a vault needs (files with their change type, a prompt, a shell
command and whether it failed). Nothing here writes anything.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re

TYPE_CHECKING = False  # `typing` costs a hook ~3 ms; only checkers need it
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

HOSTS = ("claude-code", "cursor", "codex", "gemini", "vscode", "opencode", "windsurf",
         "copilot", "qwen", "droid", "kilo", "antigravity")
HOST_ALIASES = {
    "claude": "claude-code", "claudecode": "claude-code", "claude-code": "claude-code",
    "cursor": "cursor", "codex": "codex", "gemini": "gemini", "gemini-cli": "gemini",
    "vscode": "vscode", "vs-code": "vscode", "code": "vscode", "copilot": "copilot",
    "copilot-cli": "copilot", "github-copilot": "copilot",
    "opencode": "opencode", "open-code": "opencode", "windsurf": "windsurf",
    "cascade": "windsurf", "qwen": "qwen", "qwen-code": "qwen", "droid": "droid",
    "factory": "droid", "factory-droid": "droid",
    "kilo": "kilo", "kilo-cli": "kilo", "kilocode": "kilo", "kilo-code": "kilo",
    "antigravity": "antigravity", "agy": "antigravity",
}
# Each host's module under ocm/agents/ (its event table, payload and transcript parsers,
# what `ocm init` writes for it).
MODULES = {"claude-code": "claude_code", "cursor": "cursor", "codex": "codex",
           "gemini": "gemini", "vscode": "vscode", "opencode": "opencode",
           "windsurf": "windsurf", "copilot": "copilot", "qwen": "qwen", "droid": "droid",
           "kilo": "kilo", "antigravity": "antigravity"}


def host_module(host: str) -> ModuleType:
    return importlib.import_module(f"ocm.agents.{MODULES[host]}")


def as_dict(value: object) -> dict[str, Any]:
    """A payload's nested object, or an empty one when it is missing or of another shape."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """A payload's nested list, or an empty one when it is missing or of another shape."""
    return value if isinstance(value, list) else []


# Canonical kinds of event, whatever the host calls them.
START, PROMPT, TOOL, TOOL_FAILED, FILE_EDIT, SHELL, COMPACT, STOP, END, IGNORE = (
    "start", "prompt", "tool", "tool_failed", "file_edit", "shell", "compact", "stop", "end",
    "ignore")
BEFORE_SHELL = "before_shell"  # a shell command about to run (nudges before a git commit)
FREQUENT = frozenset({PROMPT, TOOL, TOOL_FAILED, FILE_EDIT, SHELL})

MAX_PROMPT_CHARS = 2000
MAX_COMMAND_CHARS = 500
MAX_ERROR_CHARS = 300
_SID_BAD = re.compile(r"[^A-Za-z0-9._:@+-]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?(?:</hook_context>|\Z)\s*", re.S)


def kebab(name: str) -> str:
    """'SessionStart' / 'afterFileEdit' / 'session_start' / 'session.created' (OpenCode)
    -> 'session-start' ..."""
    return _CAMEL.sub("-", str(name or "").strip()).replace("_", "-").replace(".", "-").lower()


def canonical_host(name: str | None) -> str | None:
    return HOST_ALIASES.get(kebab(name or "")) if name else None


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def get(data: Any, *keys: str, default: Any = None) -> Any:
    """The first present, non-empty value among `keys`, each tried snake and camel case."""
    if not isinstance(data, dict):
        return default
    for key in keys:
        for variant in (key, _camel(key)):
            value = data.get(variant)
            if value not in (None, "", [], {}):
                return value
    return default


def redacted_cut(text: str, limit: int) -> str:
    """`text` with its secrets redacted, then cut to `limit` characters. Redaction comes first
    (half a key is still a leak), and a cut never keeps the front of a word it splits, since
    that word may be the front of a secret the redactor could not see whole."""
    from ocm.vault.secrets.redact import redact

    text = redact(text)
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace():
        head = head[: max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"), 0)]
    return head


def text_of(value: Any, limit: int = 200_000) -> str:
    """A string from whatever a host sent: str, list of str, dict of output fields. Longer
    than `limit`, it is redacted whole before it is cut (`redacted_cut`), so a secret
    straddling the cut leaves nothing (the payload itself is capped: MAX_PAYLOAD_BYTES)."""
    text = _joined(value)
    return text if len(text) <= limit else redacted_cut(text, limit)


def _joined(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return " ".join(_joined(v) for v in value)
    if isinstance(value, dict):
        parts = [_joined(value.get(k)) for k in (
            "stderr", "error", "stdout", "output", "llmContent", "llm_content", "content",
            "result", "message", "text", "returnDisplay", "text_result_for_llm",
            "textResultForLlm") if value.get(k)]
        return "\n".join(p for p in parts if p)
    return str(value)


class FileChange:
    __slots__ = ("path", "change")

    def __init__(self, path: str, change: str) -> None:
        self.path = path
        self.change = change  # created | modified | deleted | written (decided at fold time)

    def __repr__(self) -> str:
        return f"FileChange({self.path!r}, {self.change!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileChange) and (self.path, self.change) == (
            other.path, other.change)


class HookEvent:
    """One hook call, normalised (plain class: `dataclasses` costs a hook ~9 ms)."""

    def __init__(self, host: str, invoked_as: str, event: str, kind: str) -> None:
        self.host = host                # the host that really sent it (from the payload)
        self.invoked_as = invoked_as    # the host named on the command line
        self.event = event              # kebab-case host event name
        self.kind = kind
        self.session_id = ""
        self.cwd = ""
        self.roots: list[str] = []
        self.source = ""                # session start: startup | resume | clear | compact
        self.reason = ""                # session end reason / compact trigger
        self.prompt = ""
        self.tool = ""
        self.files: list[FileChange] = []
        self.reads = 0
        self.command = ""
        self.ok: bool | None = None     # a shell command's outcome, None when unknown
        self.error = ""
        self.tool_use_id = ""
        self.work_tree = ""             # a linked git worktree the event happened in
        self.transcript_path = ""       # the file the host appends the conversation to
        self.last_message = ""          # the assistant's last message (stop events)
        self.stop_active = False        # stop events: the turn already continued for a hook
        self.interrupted = False        # stop events: the user stopped the turn

    def dedupe_key(self) -> str:
        detail = self.source or self.reason or ""
        return f"{self.host}|{self.session_id}|{self.kind}|{detail}"


# --------------------------------------------------------------------------- detection


def detect_host(invoked: str | None, data: dict[str, Any], env: dict[str, str]) -> str:
    """The host that sent a payload. Cursor and VS Code also run Claude Code's hooks, so the
    command line alone is not enough (integrations.md §1.11)."""
    if "cursor_version" in data or "conversation_id" in data or "workspace_roots" in data:
        return "cursor"
    if is_copilot_cli(data):
        return "copilot"
    if ("hookEventName" in data or "sessionId" in data) and "session_id" not in data:
        return "vscode"
    if "agent_action_name" in data or "trajectory_id" in data:
        return "windsurf"
    if invoked:
        return invoked
    if env.get("CURSOR_VERSION"):
        return "cursor"
    if env.get("GEMINI_SESSION_ID") or env.get("GEMINI_PROJECT_DIR"):
        return "gemini"
    if "turn_id" in data:
        return "codex"
    return "claude-code"


def is_copilot_cli(data: dict[str, Any]) -> bool:
    """A payload of GitHub Copilot CLI: its own shape (`sessionId`, a timestamp in
    milliseconds, no `hookEventName`), or Claude's shape as Copilot sends it to
    `.claude/settings.json` hooks (a string `timestamp` and no transcript but its own)."""
    stamp = data.get("timestamp")
    if "sessionId" in data and "hookEventName" not in data and isinstance(stamp, int):
        return True
    if "session_id" in data and "hook_event_name" in data and isinstance(stamp, str):
        transcript = data.get("transcript_path")
        return transcript is None or "/.copilot/session-state/" in str(transcript)
    return False


def clean_session_id(value: Any) -> str:
    text = str(value or "").strip()[:200]
    text = _SID_BAD.sub("_", text).replace("..", "__")
    return text.strip("._") and text


# --------------------------------------------------------------------------- tools

def _norm_tool(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", (name or "").lower())


CREATE_TOOLS = {"createfile", "newfile", "create"}
WRITE_TOOLS = {"write", "writefile"}
MODIFY_TOOLS = {
    "edit", "multiedit", "notebookedit", "replace", "replacestringinfile",
    "multireplacestringinfile", "inserteditintofile", "editfile", "editfiles", "editnotebook",
    "strreplace", "strreplacebasededittool", "searchreplace", "editnotebookfile",
}
PATCH_TOOLS = {"applypatch"}
DELETE_TOOLS = {"deletefile", "delete", "removefile"}
READ_TOOLS = {"read", "readfile", "readmanyfiles", "view", "notebookread", "readnotebook"}
SHELL_TOOLS = {
    "bash", "shell", "runshellcommand", "runterminalcommand", "runinterminal", "execcommand",
    "localshell", "terminal", "runcommand", "containerexec", "execute",
}
_PATH_KEYS = ("file_path", "notebook_path", "target_file", "absolute_path", "path", "filename")
_LIST_KEYS = ("files", "file_paths", "paths", "absolute_paths")
_PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$", re.M)
_MOVE_LINE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.M)


def tool_kind(name: str) -> str | None:
    n = _norm_tool(name)
    for kind, names in (("create", CREATE_TOOLS), ("write", WRITE_TOOLS),
                        ("modify", MODIFY_TOOLS), ("patch", PATCH_TOOLS),
                        ("delete", DELETE_TOOLS), ("read", READ_TOOLS), ("shell", SHELL_TOOLS)):
        if n in names:
            return kind
    if n.startswith("mcp"):
        return None
    return None


def paths_in(tool_input: Any) -> list[str]:
    """Every file path a tool input names (`file_path`, `filePath`, `files: [...]`, ...)."""
    out: list[str] = []
    if isinstance(tool_input, str):
        return [tool_input] if tool_input.strip() else []
    if not isinstance(tool_input, dict):
        return out
    for key in _PATH_KEYS:
        value = get(tool_input, key)
        if isinstance(value, str) and value.strip():
            out.append(value)
            break
    for key in _LIST_KEYS:
        value = get(tool_input, key)
        if isinstance(value, list):
            for item in value:
                out += paths_in(item) if isinstance(item, dict) else (
                    [item] if isinstance(item, str) and item.strip() else [])
    return list(dict.fromkeys(out))


def parse_patch(text: str) -> list[FileChange]:
    """Files named by a Codex `apply_patch` body (`*** Add/Update/Delete File:`, moves)."""
    changes: list[FileChange] = []
    if not text or "*** " not in text:
        return changes
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _PATCH_LINE.match(line)
        if not m:
            continue
        action, path = m.group(1), m.group(2)
        change = {"Add": "created", "Update": "modified", "Delete": "deleted"}[action]
        moved = _MOVE_LINE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if moved and action == "Update":
            changes.append(FileChange(path, "deleted"))
            changes.append(FileChange(moved.group(1), "created"))
        else:
            changes.append(FileChange(path, change))
    return changes


def _patch_text(tool_input: Any) -> str:
    if isinstance(tool_input, str):
        return tool_input
    if isinstance(tool_input, list):
        return "\n".join(x for x in tool_input if isinstance(x, str))
    if isinstance(tool_input, dict):
        return "\n".join(_patch_text(tool_input.get(k)) for k in (
            "command", "input", "patch", "patchText", "cmd", "arguments") if tool_input.get(k))
    return ""


def command_text(tool_input: Any) -> str:
    value = get(tool_input, "command", "cmd", "command_line", "script") if isinstance(
        tool_input, dict) else tool_input
    if isinstance(value, list):
        parts = [str(x) for x in value]
        # ["bash", "-lc", "pytest -q"] -> "pytest -q"
        if len(parts) == 3 and parts[1] in ("-c", "-lc", "-ic") and parts[0].endswith("sh"):
            return parts[2]
        return " ".join(parts)
    return str(value or "")


_ERROR_HINT = re.compile(
    r"(error|exception|traceback|failed|failure|fatal|panic|assert|not found|no such file|"
    r"cannot|denied|segmentation)", re.I)
_NOT_ERROR = re.compile(r"\b0 (errors?|failed|failures)\b", re.I)
_EXIT_RE = re.compile(r"exit(?:ed)?(?: with)?[ _]?(?:code|status)[:= ]+(-?\d+)", re.I)
# Most telling first: a pytest `E   ...` line, a compiler's first error, an exception line.
_FIRST_PATTERNS = (re.compile(r"^E\s{2,}\S"), re.compile(
    r"(?:^|[\s:-])(?:fatal )?error(?:\[\w+\]| [A-Z]{2,}\d+)?:", re.I))
_LAST_PATTERNS = (re.compile(r"^[\w.]*(?:Error|Exception)\b.*:"), re.compile(r"^FAILED "))
# Gemini's and Qwen's shell reply fields left empty (`Error: (none)`, `Signal: (none)`).
_EMPTY_FIELD = re.compile(r"[A-Z][\w ]*: \(none\)")
_SUMMARY = re.compile(r"could not compile|aborting due to|^make: \*\*\*|^npm ERR! code|"
                      r"^Error: Command failed \(exit code: -?\d+\)$|"  # droid's header
                      r"^(?:ERROR|FAIL): \w+ \([\w.]+\)$")  # unittest's test-name header


def error_line(text: str) -> str:
    """The most telling line of a failed command's output (deterministic, no LLM)."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _EXIT_RE.fullmatch(ln) and not ln.lower().startswith(
        "exit code") and not _EMPTY_FIELD.fullmatch(ln)] or lines
    pick = ""
    for pattern in _FIRST_PATTERNS:
        pick = next((ln for ln in lines if pattern.search(ln) and not _SUMMARY.search(ln)), "")
        if pick:
            break
    for pattern in _LAST_PATTERNS if not pick else ():
        pick = next((ln for ln in reversed(lines) if pattern.search(ln)), "")
        if pick:
            break
    if not pick:
        pick = next((ln for ln in reversed(lines) if _ERROR_HINT.search(ln)
                     and not _NOT_ERROR.search(ln)), "")
    pick = pick or (lines[-1] if lines else "")
    return redacted_cut(pick, MAX_ERROR_CHARS)


def shell_outcome(response: Any, failed_event: bool) -> tuple[bool | None, str]:
    """(ok, error line) of a shell tool result; ok None when the payload does not say."""
    if failed_event:
        return False, error_line(text_of(response))
    code: Any = None
    if isinstance(response, str):
        stripped = response.strip()
        if stripped.startswith("{"):
            import json

            with contextlib.suppress(ValueError):
                response = json.loads(stripped)
    if isinstance(response, dict):
        code = get(response, "exit_code", "returncode", "return_code", "exit_status")
        if code is None and isinstance(response.get("status"), int):
            code = response["status"]
        if code is None and get(response, "error") and not get(response, "stdout", "output"):
            return False, error_line(text_of(response))
        if code is None and response.get("success") is False:
            return False, error_line(text_of(response))
    text = text_of(response)
    if code is None:
        m = _EXIT_RE.search(text)
        if m:
            code = m.group(1)
    if code is None:
        return None, ""
    try:
        ok = int(code) == 0
    except (TypeError, ValueError):
        return None, ""
    return ok, "" if ok else error_line(text)


_GEMINI_FIELD = re.compile(r"^(Error|Signal): *(.*?) *$", re.M)


def gemini_shell_outcome(text: str) -> tuple[bool | None, str]:
    """Gemini's `run_shell_command` reply (`Output: …`, `Exit Code: N` only when non-zero,
    `Error: …` / `Signal: …` when set, `Process Group PGID: …`): no exit line means it passed
    (payloads/gemini/06 and 10)."""
    if "Output:" not in text and "Process Group PGID:" not in text:
        return None, ""
    failed = [m for m in _GEMINI_FIELD.finditer(text) if m.group(2) not in ("", "(none)")]
    if failed:
        return False, error_line(text)
    return True, ""


def text_outcome(text: str) -> tuple[bool, str]:
    """A shell reply with no exit status at all (Codex's `PostToolUse` is the command's plain
    output, payloads/codex/04 and 06): failed when a line reads like an error."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if any(_ERROR_HINT.search(ln) and not _NOT_ERROR.search(ln) for ln in lines):
        return False, error_line(text)
    return True, ""


# --------------------------------------------------------------------------- parsing


def parse_tool(ev: HookEvent, data: dict[str, Any], failed: bool) -> None:
    """Fill `ev` from a tool event (Claude/Codex/VS Code PostToolUse, Gemini AfterTool,
    Cursor postToolUse) or Cursor's afterFileEdit / afterShellExecution."""
    name = str(get(data, "tool_name", "toolName", "tool") or "")
    tool_input = get(data, "tool_input", "toolInput", "toolArgs", "tool_args", "input")
    if isinstance(tool_input, str) and tool_input.strip().startswith("{"):
        import json

        with contextlib.suppress(ValueError):
            tool_input = json.loads(tool_input)
    response = get(data, "tool_response", "toolResponse", "tool_output", "toolOutput",
                   "tool_result", "output", "error", "result")
    ev.tool = name
    ev.tool_use_id = str(get(data, "tool_use_id", "toolUseId", "tool_call_id") or "")
    kind = tool_kind(name)
    if not name:
        if get(data, "file_path") and ev.event in ("after-file-edit", "after-tab-file-edit"):
            kind = "edit-event"
        elif get(data, "command") is not None:
            # Cursor's afterShellExecution: command, output and exit code at the top level
            kind, tool_input, response = "shell", data, data
    if kind == "edit-event":
        edits = as_list(data.get("edits"))
        created = bool(edits) and all(
            isinstance(e, dict) and not (e.get("old_string") or e.get("oldString"))
            for e in edits)
        ev.files.append(FileChange(str(get(data, "file_path")),
                                   "written" if created else "modified"))
        ev.kind = FILE_EDIT
    elif kind in ("create", "write", "modify", "delete"):
        change = {"create": "created", "modify": "modified", "delete": "deleted"}.get(
            kind, "written")
        if kind == "write" and isinstance(response, dict):
            hint = str(get(response, "type") or "").lower()
            change = {"create": "created", "update": "modified"}.get(hint, change)
        if not failed:
            ev.files += [FileChange(p, change) for p in paths_in(tool_input)]
        ev.kind = FILE_EDIT if ev.files else TOOL
    elif kind == "patch":
        if not failed:
            ev.files += parse_patch(_patch_text(tool_input))
        ev.kind = FILE_EDIT if ev.files else TOOL
    elif kind == "read":
        ev.reads = max(1, len(paths_in(tool_input)))
        ev.kind = TOOL
    elif kind == "shell":
        ev.command = redacted_cut(" ".join(command_text(tool_input).split()), MAX_COMMAND_CHARS)
        ev.ok, ev.error = shell_outcome(response, failed)
        if ev.ok is None and not failed:
            if _norm_tool(name) == "bash" and (ev.host == "claude-code"
                                               and ev.event == "post-tool-use"):
                ev.ok = True  # Claude Code reports failed Bash calls as PostToolUseFailure
            elif ev.host == "gemini":
                ev.ok, ev.error = gemini_shell_outcome(text_of(response))
            elif ev.host in ("codex", "cursor") and isinstance(response, str | dict):
                ev.ok, ev.error = text_outcome(text_of(response))
        ev.kind = SHELL if ev.command else TOOL
        # Codex reports some edits as shell calls of apply_patch
        patch = parse_patch(_patch_text(tool_input))
        if patch and not failed:
            ev.files += patch
            ev.kind = FILE_EDIT
            ev.command = ""
    else:
        ev.kind = TOOL


def parse(host: str, invoked: str, event: str, kind: str, data: dict[str, Any]) -> HookEvent:
    """A payload of any host as a `HookEvent` (kind from the host's event table)."""
    ev = HookEvent(host=host, invoked_as=invoked, event=event, kind=kind)
    ev.session_id = clean_session_id(get(data, "session_id", "conversation_id", "thread_id"))
    cwd = get(data, "cwd")
    ev.cwd = cwd if isinstance(cwd, str) else ""
    roots = get(data, "workspace_roots", "workspace_folders")
    if isinstance(roots, list):
        ev.roots = [r for r in roots if isinstance(r, str)]
    ev.source = str(get(data, "source") or "")[:40]
    ev.reason = str(get(data, "reason", "trigger") or "")[:40]
    transcript = get(data, "transcript_path")
    ev.transcript_path = transcript if isinstance(transcript, str) else ""
    if kind == PROMPT:
        prompt = get(data, "prompt", "user_prompt", "message", "text")
        raw = "" if prompt is None else text_of(prompt)
        if "<hook_context>" in raw:  # Gemini puts ocm's own brief before the prompt
            raw = _HOOK_CONTEXT.sub("", raw).strip()
        from .nudge.message import MARKER

        if raw.lstrip().startswith(f"[{MARKER}]"):  # ocm's own nudge, sent as a prompt (Gemini)
            raw = ""
        ev.prompt = redacted_cut(raw, MAX_PROMPT_CHARS * 4)
        if not ev.prompt:
            llm = as_dict(data.get("llm_request"))
            msgs = as_list(llm.get("messages"))
            users = [m for m in msgs if isinstance(m, dict) and m.get("role") == "user"]
            ev.prompt = redacted_cut(text_of(users[-1].get("content")),
                                     MAX_PROMPT_CHARS * 4) if users else ""
    elif kind == STOP:
        last = get(data, "last_assistant_message", "prompt_response")
        ev.last_message = last if isinstance(last, str) else ""
        loops = data.get("loop_count")  # Cursor's count of follow-ups already sent
        ev.stop_active = data.get("stop_hook_active") is True or (
            isinstance(loops, int) and loops > 0)
        ev.interrupted = str(data.get("status") or "") in ("aborted", "cancelled", "error")
    elif kind == BEFORE_SHELL:
        tool_input = get(data, "tool_input", "toolInput")
        ev.command = redacted_cut(" ".join(command_text(tool_input).split()), MAX_COMMAND_CHARS)
    elif kind in (TOOL, TOOL_FAILED, FILE_EDIT, SHELL):
        parse_tool(ev, data, failed=kind == TOOL_FAILED)
        if kind == TOOL_FAILED and ev.kind == TOOL and ev.command:
            ev.kind = SHELL
    # Paths named relative to the event's folder (Codex patches) become absolute.
    base = ev.cwd or (ev.roots[0] if ev.roots else "")
    for change in ev.files:
        change.path = change.path.strip().strip("'\"")
        if base and not os.path.isabs(change.path) and not re.match(r"^[A-Za-z]:[\\/]",
                                                                    change.path):
            change.path = os.path.join(base, change.path)
    return ev


# --------------------------------------------------------------------------- project root


def _git_root(start: str) -> tuple[str, str] | tuple[None, None]:
    """(main work tree, this work tree) of the repository containing `start`, from the file
    system only: a `.git` folder, or a linked worktree's `.git` file and its `commondir`."""
    folder = os.path.abspath(start)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            return folder, folder
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, encoding="utf-8") as handle:
                    line = handle.read(4096).strip()
            except OSError:
                return folder, folder
            if not line.startswith("gitdir:"):
                return folder, folder
            gitdir = line[7:].strip()
            if not os.path.isabs(gitdir):
                gitdir = os.path.normpath(os.path.join(folder, gitdir))
            try:
                with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
                    common = handle.read().strip()
            except OSError:
                return folder, folder  # a submodule: its own work tree
            if not os.path.isabs(common):
                common = os.path.normpath(os.path.join(gitdir, common))
            main = os.path.dirname(common) if os.path.basename(common) == ".git" else folder
            return main, folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None, None
        folder = parent


VAULT_DIRNAME = ".openCodeMemory"


def user_vault_dir(env: dict[str, str]) -> str:
    home = env.get("OCM_HOME")
    return os.path.abspath(os.path.expanduser(home) if home else os.path.join(
        os.path.expanduser("~"), VAULT_DIRNAME))


def _is_user_vault(vault: str, env: dict[str, str]) -> bool:
    try:
        return os.path.samefile(vault, user_vault_dir(env))
    except OSError:
        return False


def locate_vault(ev: HookEvent, env: dict[str, str]) -> tuple[str, str] | None:
    """(project root, vault folder) for an event, or None when no vault exists (`ocm init`
    never ran): the payload's folder first, then the hosts' project-dir variables."""
    override = env.get("OCM_VAULT")
    candidates = [ev.cwd, *ev.roots]
    for name in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "GEMINI_PROJECT_DIR",
                 "OCM_PROJECT_DIR"):
        if env.get(name):
            candidates.append(env[name])
    candidates.append(os.getcwd())
    for start in candidates:
        if not start or not os.path.isdir(start):
            continue
        git_root, tree = _git_root(start)
        root = git_root or os.path.abspath(start)
        # Every worktree shares the main work tree's vault; paths are relative to their own.
        ev.work_tree = tree if tree and tree != root else ""
        if override:
            vault = os.path.abspath(os.path.expanduser(override))
            if os.path.isdir(vault):
                return (os.path.dirname(vault) if os.path.basename(vault) == VAULT_DIRNAME
                        else root), vault
            return None
        vault = os.path.join(root, VAULT_DIRNAME)
        if os.path.isdir(vault) and not _is_user_vault(vault, env):
            return root, vault
        if git_root:
            continue
        # Not a git checkout: the nearest folder above `start` that holds a project vault.
        folder = os.path.abspath(start)
        while True:
            vault = os.path.join(folder, VAULT_DIRNAME)
            if os.path.isdir(vault) and not _is_user_vault(vault, env):
                return folder, vault
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return None

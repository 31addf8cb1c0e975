"""A scripted model server on 127.0.0.1 that speaks the three wire formats the hosts use:
Anthropic Messages (Claude Code, OpenCode), OpenAI Responses (Codex) and Gemini
`generateContent` (Gemini CLI).

Every host gets the same session, in its own tool vocabulary: create a file with a bug, run
it (fails), fix it, run it again (passes), call `ocm__remember` through MCP, say done. The
step is read from the request itself (how many tool calls the conversation holds), so the
server keeps no conversation state and a host that retries a request gets the same answer.
The mock answers in microseconds, faster than a host connects its MCP servers: when the
remember step comes and the host does not offer the tool yet, the "model" runs
`WAIT_COMMAND` (not counted as a step) and looks again, as a person would wait for a tool.
A request that offers no tools (titles, summaries, topic checks) gets a short text reply.
Every request is recorded, so a test can check what the model was shown."""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BROKEN = "print(GREETING)\n"
FIXED = 'GREETING = "hello"\nprint(GREETING)\n'
FILE = "src/greet.py"
COMMAND = "python3 src/greet.py"
REMEMBER = {
    "content": "E2E: src/greet.py must define GREETING before printing it",
    "type": "gotcha",
    "files": [FILE],
}
DONE = "Done (mock)."
WAIT_COMMAND = "sleep 1  # ocm-e2e: waiting for the MCP server"
MAX_WAITS = 60
# (action, argument): the session every host is driven through.
STEPS: list[tuple[str, Any]] = [
    ("write", BROKEN), ("shell", COMMAND), ("write", FIXED), ("shell", COMMAND),
    ("remember", REMEMBER), ("text", DONE),
]
_ids = itertools.count(1)
# How the "model" answers an ocm nudge (a Stop hook's instruction, ocm.agents.nudge): it
# calls ocm__checkpoint with the session id the nudge names, then ocm__remember, then says
# NUDGE_DONE (one call per response), as a model that does what it is asked would.
NUDGE_MARKER = "ocm memory check"
NUDGE_GOAL = "E2E: make src/greet.py print its greeting"
NUDGE_DECISION = "**Constant at module top:** GREETING is defined before use, not passed in"
NUDGE_PENDING = "add a unit test for src/greet.py"
NUDGE_REMEMBER = {"content": "E2E convention: module constants in src/ are defined at the top",
                  "type": "convention", "files": [FILE]}
NUDGE_DONE = "Saved (mock)."
_NUDGE_SID = re.compile(r'session_id \\*"([^"\\]+)\\*"')


def nudge_answer(body: dict[str, Any], calls: list[str]) -> tuple[str, Any] | None:
    """The next answer to a nudge, or None when the conversation holds none: the
    checkpoint with the session id the nudge names, then a convention to remember, then
    NUDGE_DONE. `calls`: the tool calls made so far, each as text (name and arguments)."""
    text = json.dumps(body)
    at = text.rfind(NUDGE_MARKER)
    if at < 0:
        return None
    if not any("ocm__checkpoint" in call for call in calls):
        match = _NUDGE_SID.search(text, at)
        return "checkpoint", {"session_id": match.group(1) if match else "",
                              "goal": NUDGE_GOAL, "work_completed": [f"{FILE} prints hello"],
                              "work_pending": [NUDGE_PENDING], "decisions": [NUDGE_DECISION]}
    if not any(NUDGE_REMEMBER["content"] in call for call in calls):
        return "remember", NUDGE_REMEMBER
    return "text", NUDGE_DONE


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    scripted: bool = False
    step: int | None = None
    nudge: str | None = None  # the answer to an ocm nudge this request got (nudge_answer)


@dataclass
class Script:
    """Per-run settings: the project root (hosts want absolute paths)."""

    root: str = ""
    steps: list[tuple[str, Any]] = field(default_factory=lambda: list(STEPS))
    nudges: list[str] = field(default_factory=list)

    def nudged(self, answer: tuple[str, Any]) -> tuple[str, Any]:
        self.nudges.append(answer[0])
        return answer

    def step(self, commands: list[str], has_remember: bool) -> tuple[int, str, Any]:
        """The step after the tool calls made so far (their shell commands, "" for other
        tools): (index, action, argument)."""
        waits = sum(1 for command in commands if command.startswith(WAIT_COMMAND))
        done = min(len(commands) - waits, len(self.steps) - 1)
        action, arg = self.steps[done]
        if action == "remember" and not has_remember and waits < MAX_WAITS:
            # Numbered after the first: droid stops a turn that repeats one call unchanged.
            return done, "shell", f"{WAIT_COMMAND} ({waits + 1})" if waits else WAIT_COMMAND
        return done, action, arg


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


# --- Anthropic Messages ----------------------------------------------------------------


def _anthropic_tool(script: Script, names: set[str], action: str,
                    arg: Any) -> tuple[str, dict[str, Any]]:
    """Claude Code's tools (Write, Bash, mcp__ocm__…), OpenCode's (write, bash, ocm_…),
    Copilot CLI's (create, edit, bash, ocm-ocm__…) or droid's (Create, Edit, Execute)."""
    claude = "Write" in names
    if action == "write" and "Create" in names:  # droid
        path = f"{script.root}/{FILE}"
        return ("Create", {"file_path": path, "content": arg}) if arg == BROKEN else (
            "Edit", {"file_path": path, "old_str": BROKEN, "new_str": arg})
    if action == "shell" and "Execute" in names:
        return "Execute", {"command": arg, "summary": "run greet.py", "riskLevel": "low",
                           "riskLevelReason": "runs a local script"}
    if action == "write" and "create" in names:
        path = f"{script.root}/{FILE}"
        return ("create", {"path": path, "file_text": arg}) if arg == BROKEN else (
            "edit", {"path": path, "old_str": BROKEN, "new_str": arg})
    if action == "write":
        path = f"{script.root}/{FILE}"
        return ("Write", {"file_path": path, "content": arg}) if claude else (
            "write", {"filePath": path, "content": arg})
    if action == "shell":
        return ("Bash" if claude else "bash"), {"command": arg, "description": "run greet.py"}
    if action == "select":  # Claude Code's deferred tools: load one by its exact name
        return "ToolSearch", {"query": f"select:{arg}"}
    suffix = f"ocm__{action}"  # remember, or checkpoint (a nudge's answer)
    return next((n for n in sorted(names) if n.endswith(suffix)), suffix), arg


def _deferred_remember(body: dict[str, Any], tool: str = "remember") -> str | None:
    """Claude Code 2.1.332 defers MCP tools: `tools` holds `ToolSearch`, and the deferred
    tools are only named in a system reminder. The name of ocm's remember tool when it is
    named there (to load with `ToolSearch {"query": "select:NAME"}`)."""
    if "ToolSearch" not in {t.get("name") for t in body.get("tools") or []}:
        return None
    text = json.dumps(body.get("messages"))
    named = re.search(rf"mcp__[A-Za-z0-9_-]*?ocm__{tool}", text)
    # droid lists deferred tools one per line under "Deferred tools:", by its own names.
    listed = re.search(rf"Deferred tools:(?:\\n[^\\\s]+)*?\\n([A-Za-z0-9_-]*ocm__{tool})\\n",
                       text)
    return named.group(0) if named else listed.group(1) if listed else None


def anthropic(body: dict[str, Any], script: Script) -> tuple[int | None, bytes, str]:
    names = {t.get("name") for t in body.get("tools") or []}
    calls = [b for m in body.get("messages", [])
             if m.get("role") == "assistant" and isinstance(m.get("content"), list)
             for b in m["content"] if b.get("type") == "tool_use"]
    # A ToolSearch call loads tools (callable from then on): it is no step of the script.
    for call in calls:
        query = str((call.get("input") or {}).get("query", ""))
        if call.get("name") == "ToolSearch" and query.startswith("select:"):
            names |= set(query[len("select:"):].split(","))
    commands = [str((b.get("input") or {}).get("command", "")) for b in calls
                if b.get("name") != "ToolSearch"]
    step, action, arg = None, "text", "ok"
    if names & {"Write", "write", "create", "Create"}:
        has_remember = any(n.endswith("ocm__remember") for n in names)
        deferred = None if has_remember else _deferred_remember(body)
        step, action, arg = script.step(commands, has_remember or deferred is not None)
        if action == "remember" and deferred:
            action, arg = "select", deferred
        calls = [json.dumps(b) for m in body.get("messages", []) if m.get("role") == "assistant"
                 and isinstance(m.get("content"), list) for b in m["content"]
                 if b.get("type") == "tool_use" and b.get("name") != "ToolSearch"]
        nudge = nudge_answer(body, calls)
        deferred = None if not nudge or nudge[0] == "text" or any(
            n.endswith(f"ocm__{nudge[0]}") for n in names) else _deferred_remember(body, nudge[0])
        if deferred:  # droid: the nudge's tool is deferred; loading it is no answer yet
            step, action, arg = None, "select", deferred
        elif nudge:
            step, (action, arg) = None, script.nudged(nudge)
    if action == "text":
        block: dict[str, Any] = {"type": "text", "text": arg}
        stop = "end_turn"
    else:
        name, tool_input = _anthropic_tool(script, names, action, arg)
        block = {"type": "tool_use", "id": f"toolu_mock_{next(_ids)}", "name": name,
                 "input": tool_input}
        stop = "tool_use"
    msg_id = f"msg_mock_{next(_ids)}"
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {"id": msg_id, "type": "message", "role": "assistant",
               "model": body.get("model", "mock"), "content": [block],
               "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return step, json.dumps(message).encode(), "application/json"
    start = dict(message, content=[], stop_reason=None)
    if block["type"] == "text":
        first = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        first = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": first}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return step, _sse(events), "text/event-stream"


# --- OpenAI Responses ------------------------------------------------------------------

_CALL_ITEMS = ("function_call", "custom_tool_call")


def _responses_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Offered tools by name, namespaces flattened to `namespace` + name."""
    out: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                full = f"{tool['name']}__{inner.get('name', '')}"
                out[full] = dict(inner, namespace=tool["name"])
        elif tool.get("name") or tool.get("type"):
            out[tool.get("name") or tool["type"]] = tool
    return out


def _responses_item(script: Script, tools: dict[str, dict[str, Any]], action: str,
                    arg: Any) -> dict[str, Any]:
    call_id = f"call_mock_{next(_ids)}"
    if action == "write":
        verb = "Update" if arg == FIXED else "Add"
        body = "".join(f"+{line}\n" for line in arg.splitlines())
        if verb == "Update":
            body = "@@\n" + "".join(f"-{line}\n" for line in BROKEN.splitlines()) + body
        patch = f"*** Begin Patch\n*** {verb} File: {FILE}\n{body}*** End Patch\n"
        if tools.get("apply_patch", {}).get("type") == "custom":
            return {"type": "custom_tool_call", "id": f"ctc_{call_id}", "status": "completed",
                    "call_id": call_id, "name": "apply_patch", "input": patch}
        return {"type": "function_call", "id": f"fc_{call_id}", "status": "completed",
                "call_id": call_id, "name": "apply_patch",
                "arguments": json.dumps({"input": patch})}
    if action == "shell":
        name, args = ("exec_command", {"cmd": arg}) if "exec_command" in tools else (
            "shell", {"command": ["bash", "-lc", arg]})
        return {"type": "function_call", "id": f"fc_{call_id}", "status": "completed",
                "call_id": call_id, "name": name, "arguments": json.dumps(args)}
    full = f"mcp__ocm__ocm__{action}"  # remember, or checkpoint (a nudge's answer)
    if full not in tools and "tool_search" in tools:
        # Codex defers MCP tools: the model finds them first (client-side tool search).
        return {"type": "tool_search_call", "call_id": call_id, "status": "completed",
                "execution": "client", "arguments": {"query": "ocm__remember memory", "limit": 20}}
    item = {"type": "function_call", "id": f"fc_{call_id}", "status": "completed",
            "call_id": call_id, "arguments": json.dumps(arg)}
    tool = tools.get(full) or {}
    if tool.get("namespace"):
        item.update(namespace=tool["namespace"], name=tool["name"])
    else:
        item["name"] = full
    return item


def _command(item: dict[str, Any]) -> str:
    try:
        args = json.loads(item.get("arguments") or "{}")
    except ValueError:
        return ""
    command = args.get("cmd") or args.get("command") or ""
    return command[-1] if isinstance(command, list) and command else str(command)


def responses(body: dict[str, Any], script: Script) -> tuple[int | None, bytes, str]:
    items = body.get("input") if isinstance(body.get("input"), list) else []
    found = [i for i in items if i.get("type") == "tool_search_output"]
    tools = _responses_tools({"tools": [*(body.get("tools") or []),
                                        *(t for i in found for t in i.get("tools") or [])]})
    commands = [_command(i) for i in items if i.get("type") in _CALL_ITEMS]
    step, action, arg = None, "text", "ok"
    if "exec_command" in tools or "shell" in tools:
        # Deferred tools: searching again after each wait, until the server is up.
        last = items[-1].get("type") if items else None
        has_remember = "mcp__ocm__ocm__remember" in tools or (
            "tool_search" in tools and last != "tool_search_output")
        step, action, arg = script.step(commands, has_remember)
        nudge = nudge_answer(body, [json.dumps(i) for i in items if i.get("type") in _CALL_ITEMS])
        if nudge:
            step, (action, arg) = None, script.nudged(nudge)
    if action == "text":
        item: dict[str, Any] = {
            "type": "message", "id": f"msg_mock_{next(_ids)}", "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": arg, "annotations": []}]}
    else:
        item = _responses_item(script, tools, action, arg)
    resp_id = f"resp_mock_{next(_ids)}"
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    response = {"id": resp_id, "object": "response", "status": "completed",
                "model": body.get("model", "mock"), "output": [item], "usage": usage}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created",
                              "response": dict(response, status="in_progress", output=[])}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return step, _sse(events), "text/event-stream"


# --- Gemini generateContent -------------------------------------------------------------


def _from_schema(schema: dict[str, Any]) -> Any:
    """A minimal value of a JSON schema (the host's side calls ask for structured JSON:
    routing, next-speaker checks)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][-1]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _from_schema(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)  # "a score from 1-100"
    return False if kind == "boolean" else "mock"


def gemini(body: dict[str, Any], script: Script) -> tuple[int | None, bytes, str]:
    names = [f.get("name", "") for t in body.get("tools") or []
             for f in t.get("functionDeclarations") or []]
    commands = [str((p["functionCall"].get("args") or {}).get("command", ""))
                for c in body.get("contents") or [] for p in c.get("parts") or []
                if "functionCall" in p]
    step, action, arg = None, "text", "ok"
    if "write_file" in names:
        has_remember = any(n.endswith("ocm__remember") for n in names)
        step, action, arg = script.step(commands, has_remember)
        nudge = nudge_answer(body, [json.dumps(p["functionCall"]) for c in body.get(
            "contents") or [] for p in c.get("parts") or [] if "functionCall" in p])
        if nudge:
            step, (action, arg) = None, script.nudged(nudge)
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if step is None and schema:
        part: dict[str, Any] = {"text": json.dumps(_from_schema(schema))}
    elif action == "text":
        part = {"text": arg}
    elif action == "write":
        part = {"functionCall": {"name": "write_file", "args": {
            "file_path": f"{script.root}/{FILE}", "content": arg}}}
    elif action == "shell":
        part = {"functionCall": {"name": "run_shell_command", "args": {
            "command": arg, "description": "run greet.py"}}}
    else:
        suffix = f"ocm__{action}"  # remember, or checkpoint (a nudge's answer)
        part = {"functionCall": {"name": next((n for n in names if n.endswith(suffix)), suffix),
                                 "args": arg}}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                               "totalTokenCount": 15},
             "modelVersion": body.get("model", "mock")}
    return step, json.dumps(chunk).encode(), "application/json"


class MockModel:
    """The server: `start()`, point a host at `url`, read `requests` afterwards."""

    def __init__(self) -> None:
        self.script = Script()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def reset(self, root: str) -> None:
        with self._lock:
            self.script = Script(root=root)
            self.requests = []

    def start(self) -> MockModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, code: int, payload: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                model.record(Recorded("GET", self.path, None))
                if self.path.rstrip("/").endswith("/models"):
                    self._reply(200, json.dumps({"data": [], "models": []}).encode(),
                                "application/json")
                else:
                    self._reply(404, b'{"error": {"message": "not found"}}',
                                "application/json")

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                code, payload, ctype = model.answer(self.path, body)
                self._reply(code, payload, ctype)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)

    def answer(self, path: str, body: Any) -> tuple[int, bytes, str]:
        rec = Recorded("POST", path, body)
        self.record(rec)
        route = path.split("?")[0]
        nudges = len(self.script.nudges)
        if route.endswith("/messages/count_tokens"):
            return 200, b'{"input_tokens": 10}', "application/json"
        if route.endswith("/messages"):
            rec.step, payload, ctype = anthropic(body, self.script)
        elif route.endswith("/responses"):
            rec.step, payload, ctype = responses(body, self.script)
        elif route.endswith(":countTokens"):
            return 200, b'{"totalTokens": 10}', "application/json"
        elif route.endswith(":generateContent"):
            rec.step, payload, ctype = gemini(body, self.script)
        elif route.endswith(":streamGenerateContent"):
            rec.step, payload, ctype = gemini(body, self.script)
            payload, ctype = b"data: " + payload + b"\r\n\r\n", "text/event-stream"
        else:
            return 404, json.dumps({"error": {"message": f"mock: no route {route}"}}).encode(), \
                "application/json"
        rec.scripted = rec.step is not None
        rec.nudge = self.script.nudges[-1] if len(self.script.nudges) > nudges else None
        return 200, payload, ctype

    def seen(self, pattern: str) -> list[Recorded]:
        """Scripted requests whose body matches `pattern` (a regex)."""
        rx = re.compile(pattern)
        return [r for r in self.requests if r.scripted and rx.search(json.dumps(r.body))]

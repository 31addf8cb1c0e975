"""The stdio wire of `ocm mcp`: every request line gets an answer, and a server whose client
is gone stops.

The SDK's stdio transport validates each line with pydantic's JSON parser and, when that
fails, drops the line without a word: the client waits for its own timeout. Lines it cannot
take are those a host or a hostile caller can send: not JSON, a lone surrogate such as
`"\\ud800"` (a JavaScript host that cut a string inside an emoji), an integer of more digits
than Python converts (4,300), JSON nested past the recursion limit, or a line of many
megabytes. Here each line is read with a byte cap and checked first; a bad one is answered
with a JSON-RPC error (`-32700` parse error, `-32600` invalid request, `-32602` naming the
field that holds a lone surrogate) carrying the request's id when it can be found, logged,
and the server keeps serving. Good lines go to the SDK unchanged.

When stdin ends (the client closed it or died) or the parent process is gone, the server
exits within `GONE_GRACE_S` seconds even if a tool call is still running in a worker thread:
the answer has no one to go to, and a long search would otherwise burn CPU for nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

log = logging.getLogger("ocm.mcp")

MAX_LINE_BYTES = 16 * 1024 * 1024  # one JSON-RPC message; a longer line is refused unread
MAX_DEPTH = 64  # nesting of a request (the deepest tool argument needs 5)
MAX_INT_DIGITS = 4300  # Python's own int conversion limit
GONE_GRACE_S = 2.0  # after stdin ends, time left to write answers already computed
PARENT_POLL_S = 1.0

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# Strings, brackets and colons of a JSON text: enough to find the top-level `"id"` of a line
# that does not parse (too deep, a huge number), in one linear pass.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*+"|[{}\[\]:,]')
_ID_VALUE = re.compile(r'[ \t\r\n]*(-?[0-9]{1,18}(?![0-9.eE])|"(?:[^"\\]|\\.){0,200}")')


class BadLine(ValueError):
    """A line the server answers with a JSON-RPC error instead of passing it on."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


def _top_level_id(text: str) -> Any:
    """The `id` member of the top-level object of a JSON text that may not parse; None."""
    depth = 0
    want_value = False
    for m in _JSON_TOKENS.finditer(text):
        token = m.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif want_value and token == ":":
            value = _ID_VALUE.match(text, m.end())
            if value is None:
                return None
            with contextlib.suppress(ValueError):
                found = json.loads(value.group(1))
                if isinstance(found, int | str) and not _has_surrogate(str(found)):
                    return found
            return None
        want_value = depth == 1 and token == '"id"'
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _big_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise BadLine(PARSE_ERROR, f"an integer of {len(digits):,} digits (at most "
                                   f"{MAX_INT_DIGITS:,})")
    return int(digits)


def _check(value: Any, path: str, depth: int) -> None:
    """Depth and lone surrogates, iteratively bounded by MAX_DEPTH (the parse already
    refused anything deeper than the recursion limit)."""
    if depth > MAX_DEPTH:
        raise BadLine(INVALID_REQUEST, f"{path or 'the request'}: nested more than "
                                       f"{MAX_DEPTH} levels deep")
    if isinstance(value, str):
        if _has_surrogate(value):
            raise BadLine(INVALID_PARAMS, f"{path}: a lone surrogate (a string cut inside a "
                                          "character); send valid UTF-16 pairs")
    elif isinstance(value, dict):
        for key, item in value.items():
            if _has_surrogate(key):
                raise BadLine(INVALID_PARAMS, f"{path}: a key with a lone surrogate")
            _check(item, f"{path}.{key}" if path else key, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]", depth + 1)


def _field(path: str) -> str:
    """`params.arguments.query` -> `query`: the name a tool's caller gave."""
    prefix = "params.arguments."
    return path[len(prefix):] if path.startswith(prefix) else path


def check_line(line: bytes) -> dict[str, Any]:
    """The request a line holds, or BadLine saying why not (with its id when found)."""
    text = line.decode("utf-8", errors="replace")
    try:
        message = json.loads(text, parse_int=_big_int)
    except BadLine as exc:
        exc.request_id = _top_level_id(text)
        raise
    except RecursionError:
        raise BadLine(PARSE_ERROR, "JSON nested too deeply", _top_level_id(text)) from None
    except ValueError as exc:
        raise BadLine(PARSE_ERROR, f"not JSON ({exc})", _top_level_id(text)) from None
    if not isinstance(message, dict):
        raise BadLine(INVALID_REQUEST, "a JSON-RPC message is one JSON object (batches are "
                                       "not part of MCP)")
    request_id = message.get("id")
    if not isinstance(request_id, int | str) or isinstance(request_id, bool) or (
            isinstance(request_id, str) and _has_surrogate(request_id)):
        request_id = None
    try:
        _check(message, "", 0)
    except BadLine as exc:
        exc.request_id = request_id
        exc.args = (_field(str(exc)),)
        raise
    if message.get("jsonrpc") != "2.0" or not (
            isinstance(message.get("method"), str) or "result" in message or "error" in message):
        raise BadLine(INVALID_REQUEST, "not a JSON-RPC 2.0 request, notification or response",
                      request_id)
    return message


def error_line(exc: BadLine) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": exc.request_id,
                       "error": {"code": exc.code, "message": str(exc)}})


def read_line(stream: BinaryIO) -> bytes | None:
    """One line of at most MAX_LINE_BYTES; None at the end of the stream. A longer line is
    read to its end in pieces (memory stays bounded) and raises BadLine."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
        return line
    head = line[:65536].decode("utf-8", errors="replace")
    total = len(line)
    while line and not line.endswith(b"\n"):
        line = stream.readline(1024 * 1024)
        total += len(line)
    raise BadLine(INVALID_REQUEST, f"a message of {total:,} bytes (at most "
                                   f"{MAX_LINE_BYTES:,})", _top_level_id(head))


class _Output:
    """stdout for the SDK's writer and for our error answers: one whole line per write."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        data = text.encode("utf-8", errors="replace")
        async with self._lock:
            await anyio.to_thread.run_sync(self._write, data)

    def _write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    async def flush(self) -> None:
        pass  # every write is flushed


class _Input:
    """The checked lines of stdin, as the SDK's transport iterates them."""

    def __init__(self, stream: BinaryIO, output: _Output, on_end: Callable[[], None]) -> None:
        self._stream = stream
        self._output = output
        self._on_end = on_end

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            try:
                line = await anyio.to_thread.run_sync(read_line, self._stream,
                                                      abandon_on_cancel=True)
                if line is None:
                    break
                if not line.strip():
                    continue
                check_line(line)
            except BadLine as exc:
                log.warning("refused a request (id %s): %s", exc.request_id, exc)
                await self._output.write(error_line(exc) + "\n")
                continue
            except OSError:
                break
            yield line.decode("utf-8")
        self._on_end()


def _exit_soon(reason: str) -> None:
    """Exit the process GONE_GRACE_S from now, whatever is still running."""
    def stop() -> None:
        log.info("ocm: %s; stopping", reason)
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(GONE_GRACE_S, stop)
    timer.daemon = True
    timer.start()


def _watch_parent() -> None:
    """A parent that dies without closing our stdin (it was shared) still stops us."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            threading.Event().wait(PARENT_POLL_S)
            if os.getppid() != parent:
                _exit_soon("the client process is gone")
                return

    threading.Thread(target=watch, name="ocm-parent-watch", daemon=True).start()


def _claim_std_fds() -> tuple[BinaryIO, BinaryIO]:
    """Private duplicates of fd 0 and 1 for the protocol; fd 0 then reads /dev/null and
    fd 1 writes to stderr, so a stray print in a handler never corrupts the wire."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    with contextlib.suppress(OSError):
        os.dup2(2, 1)
    return wire_in, wire_out


def serve(server: Any) -> None:
    """Run an MCPServer on stdio through the checked wire."""
    from mcp.server.stdio import stdio_server

    from . import handshake

    wire_in, wire_out = _claim_std_fds()
    _watch_parent()
    log.info("ocm: serving on stdio (parent %d)", os.getppid())

    async def run() -> None:
        output = _Output(wire_out)
        stdin = _Input(wire_in, output, lambda: _exit_soon("the client closed stdin"))
        lowlevel = server._lowlevel_server  # noqa: SLF001 - what run_stdio_async uses
        async with stdio_server(stdin=stdin, stdout=output) as (read, write):  # type: ignore[arg-type]
            await handshake.serve(lowlevel, read, write)

    anyio.run(run)

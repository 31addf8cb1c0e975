"""Serving stdio in the `initialize` handshake era, whatever a client probes first.

The MCP SDK (2.3) decides a connection's protocol era from the client's first request: a
`server/discover` carrying the 2026-07-28 envelope opens a modern connection, on which a
later `initialize` is refused (-32022). GitHub Copilot CLI 1.0.102 sends exactly that pair,
pipelined: `server/discover`, then `initialize` at 2025-11-25, and drops the server when the
second fails (recorded in tests_e2e). So an opening `server/discover` from a client known
to speak only the handshake (`HANDSHAKE_ONLY`, by the `clientInfo` its envelope names) is
answered here with "method not found" and never reaches the SDK: the connection then opens
with `initialize`. Every other frame, and every other client's discover (the SDK's own
client negotiates 2026-07-28), passes through unchanged.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError, JSONRPCRequest

METHOD_NOT_FOUND = -32601
DISCOVER = "server/discover"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
HANDSHAKE_ONLY = frozenset({"copilot-cli"})


def _handshake_only(message: JSONRPCRequest) -> bool:
    meta = (message.params or {}).get("_meta")
    info = meta.get(CLIENT_INFO) if isinstance(meta, dict) else None
    return isinstance(info, dict) and info.get("name") in HANDSHAKE_ONLY


async def relay(read: Any, write: Any, send: Any) -> None:
    """Copy `read` to `send`, answering a handshake-only client's opening `server/discover`
    on `write` itself."""
    opened = False
    async with send:
        async for item in read:
            message = getattr(item, "message", None)
            if not opened and isinstance(message, JSONRPCRequest):
                if message.method == DISCOVER and _handshake_only(message):
                    await write.send(SessionMessage(JSONRPCError(
                        jsonrpc="2.0", id=message.id, error=ErrorData(
                            code=METHOD_NOT_FOUND,
                            message="ocm serves the initialize handshake; send initialize"))))
                    continue
                opened = True
            await send.send(item)


async def serve(lowlevel: Any, read: Any, write: Any) -> None:
    """Run the low-level server on these streams (the checked stdio wire, ocm/mcp_server/
    wire.py) behind `relay`."""
    send, receive = anyio.create_memory_object_stream[Any](32)
    async with anyio.create_task_group() as group:
        group.start_soon(relay, read, write, send)
        await lowlevel.run(receive, write, lowlevel.create_initialization_options())
        group.cancel_scope.cancel()

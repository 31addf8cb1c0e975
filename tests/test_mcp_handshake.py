"""`ocm mcp` on stdio answers the pair GitHub Copilot CLI 1.0.102 sends (recorded in the
e2e run): a pipelined `server/discover` with the 2026-07-28 envelope, then `initialize` at
2025-11-25. The discover gets "method not found", the handshake succeeds (without the
filter the SDK refused it with -32022 and Copilot dropped the server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
DISCOVER = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "copilot-cli", "version": "1.0.102"},
    "io.modelcontextprotocol/clientCapabilities": {}}}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "copilot-cli", "version": "1.0.102"}}}


def test_discover_then_initialize(tmp_path: Path) -> None:
    lines = [DISCOVER, INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    proc = subprocess.Popen([str(VENV_BIN / "ocm"), "mcp"], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={"PATH": str(VENV_BIN), "HOME": str(tmp_path)})
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
    proc.stdin.flush()
    replies = {}
    while len(replies) < 3:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        reply = json.loads(line)
        replies[reply.get("id")] = reply
    proc.stdin.close()
    proc.wait(timeout=30)
    assert replies[0]["error"]["code"] == -32601
    assert replies[1]["result"]["serverInfo"]["name"] == "ocm"
    names = {t["name"] for t in replies[2]["result"]["tools"]}
    assert "ocm__remember" in names and "ocm__checkpoint" in names

"""`make e2e`'s own machinery, offline: without node/npm a clear SKIPPED line, exit 0,
nothing installed; the scripted mock model's step logic. (The end-to-end tests themselves
live in tests_e2e/ and are not part of this suite.)"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_e2e_skips_without_node_and_npm(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    cache = tmp_path / "cache"
    out = subprocess.run([sys.executable, "-m", "tests_e2e.run"], cwd=ROOT, text=True,
                         capture_output=True, timeout=60,
                         env={"PATH": str(empty), "HOME": str(tmp_path),
                              "OCM_E2E_CACHE": str(cache)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("e2e: SKIPPED: node and npm not found on PATH"), out.stdout
    assert not cache.exists()


def _post(url: str, body: dict) -> bytes:
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    with opener.open(req, timeout=10) as resp:
        return resp.read()


def test_mock_model_waits_for_the_mcp_tool() -> None:
    """The scripted model on 127.0.0.1: after four tool calls it wants ocm__remember; while
    the host does not offer it, it waits (a shell call not counted as a step)."""
    from tests_e2e.mock_model import COMMAND, WAIT_COMMAND, MockModel

    mock = MockModel().start()
    try:
        mock.reset("/p")
        calls = [{"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": COMMAND}}]}
            for i in range(4)]
        tools = [{"name": "Write"}, {"name": "Bash"}]
        body = {"model": "m", "messages": calls, "tools": tools}
        wait = json.loads(_post(f"{mock.url}/v1/messages", body))["content"][0]
        assert wait["name"] == "Bash" and wait["input"]["command"] == WAIT_COMMAND
        body["tools"] = [*tools, {"name": "mcp__ocm__ocm__remember"}]
        body["messages"] = [*calls, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "w", "name": "Bash", "input": wait["input"]}]}]
        call = json.loads(_post(f"{mock.url}/v1/messages", body))["content"][0]
        assert call["name"] == "mcp__ocm__ocm__remember" and call["input"]["type"] == "gotcha"
        # Codex: deferred MCP tools are searched for first.
        items = [{"type": "function_call", "name": "exec_command", "call_id": f"c{i}",
                  "arguments": json.dumps({"cmd": COMMAND})} for i in range(4)]
        sse = _post(f"{mock.url}/v1/responses", {"input": items, "tools": [
            {"type": "function", "name": "exec_command"}, {"type": "tool_search"}]})
        assert b'"type": "tool_search_call"' in sse
        assert [r.step for r in mock.requests] == [4, 4, 4]
    finally:
        mock.stop()

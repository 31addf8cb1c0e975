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


def _bash_calls(count: int) -> list[dict]:
    """Anthropic messages: the assistant's first `count` Bash calls of the script."""
    from tests_e2e.mock_model import COMMAND

    return [{"role": "assistant", "content": [
        {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": COMMAND}}]}
        for i in range(count)]


def test_mock_model_waits_for_the_mcp_tool() -> None:
    """The scripted model on 127.0.0.1: after four tool calls it wants ocm__remember; while
    the host does not offer it, it waits (a shell call not counted as a step)."""
    from tests_e2e.mock_model import COMMAND, WAIT_COMMAND, MockModel

    mock = MockModel().start()
    try:
        mock.reset("/p")
        calls = _bash_calls(4)
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


def test_mock_model_loads_claude_codes_deferred_tools() -> None:
    """Claude Code 2.1.332 offers `ToolSearch` and names ocm's tools only in a system
    reminder: the mock loads the remember tool with `select:` (no step of the script), then
    calls it by its exact name, as the recorded transcript shows."""
    from tests_e2e.mock_model import MockModel

    mock = MockModel().start()
    try:
        mock.reset("/p")
        calls = _bash_calls(4)
        reminder = {"role": "user", "content": [{"type": "text", "text": (
            "<system-reminder>The following deferred tools are now available via "
            "ToolSearch: mcp__ocm__ocm__checkpoint, mcp__ocm__ocm__remember"
            "</system-reminder>")}]}
        tools = [{"name": "Write"}, {"name": "Bash"}, {"name": "ToolSearch"}]
        body = {"model": "m", "messages": [reminder, *calls], "tools": tools}
        select = json.loads(_post(f"{mock.url}/v1/messages", body))["content"][0]
        assert select["name"] == "ToolSearch", select
        assert select["input"] == {"query": "select:mcp__ocm__ocm__remember"}
        body["messages"] = [reminder, *calls, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "s", "name": "ToolSearch", "input": select["input"]}]}]
        call = json.loads(_post(f"{mock.url}/v1/messages", body))["content"][0]
        assert call["name"] == "mcp__ocm__ocm__remember" and call["input"]["type"] == "gotcha"
        # Without the reminder (the server not connected yet) it waits, as before.
        wait = json.loads(_post(f"{mock.url}/v1/messages", {
            "model": "m", "messages": calls, "tools": tools}))["content"][0]
        assert wait["name"] == "Bash" and "sleep" in wait["input"]["command"]
        assert [r.step for r in mock.requests] == [4, 4, 4]
    finally:
        mock.stop()


def test_hosts_switch_picks_versions(monkeypatch) -> None:
    """`make e2e HOSTS=...`: pinned by default, `latest` asks npm, names and
    `name@version` pick single hosts; an unknown name is a one-line error."""
    from tests_e2e import run
    from tests_e2e.hosts import PINNED, chosen

    monkeypatch.setattr(run, "newest", lambda host: f"9.9.{len(host.name)}")
    pinned = run.choose("pinned")
    assert [(h.name, h.version) for h in pinned] == [(n, h.version) for n, h in PINNED.items()]
    latest = run.choose("latest")
    assert all(h.version.startswith("9.9.") for h in latest) and len(latest) == len(PINNED)
    some = run.choose("claude-code@latest,codex@0.171.0,copilot")
    assert [(h.name, h.version) for h in some] == [
        ("claude-code", "9.9.11"), ("codex", "0.171.0"), ("copilot", PINNED["copilot"].version)]
    assert "unknown host 'cursorx'" in run.choose("cursorx")
    # What run.py hands the tests comes back as the same hosts.
    handed = chosen(",".join(f"{h.name}@{h.version}" for h in some))
    assert {n: h.version for n, h in handed.items()} == {h.name: h.version for h in some}

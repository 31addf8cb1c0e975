"""Every MCP request gets an answer (issue #31): `ocm mcp` in a subprocess, spoken to over
real stdio, with raw JSON-RPC lines a host or a hostile caller can send and with the real
MCP SDK client; a server whose client is gone stops."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from ocm.project import Project
from tests.conftest import snapshot

REPO = Path(__file__).resolve().parents[1]
Send = Callable[[str], dict[str, Any]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def env(project: Project, repo: Path, ocm_home: Path, tmp_path: Path) -> dict[str, str]:
    project.remember("The staging database is reset every Sunday night.", "gotcha")
    return {"OCM_HOME": str(ocm_home), "OCM_PROJECT_DIR": str(repo), "HOME": str(tmp_path),
            "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}


def _server(env: dict[str, str], tmp_path: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "ocm.cli.main", "mcp"], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=(tmp_path / "server.err").open("wb"), **kwargs)


def _reader(proc: subprocess.Popen[bytes]) -> Callable[[], dict[str, Any]]:
    def receive() -> dict[str, Any]:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no answer within 60 s"
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        return json.loads(line)

    return receive


@pytest.fixture
def raw(env: dict[str, str], tmp_path: Path) -> Iterator[Send]:
    """An initialized `ocm mcp`; send(line) returns the answer to that line."""
    proc = _server(env, tmp_path, stdin=subprocess.PIPE)
    receive = _reader(proc)
    assert proc.stdin is not None

    def write(line: str | bytes) -> None:
        proc.stdin.write(line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass"))
        proc.stdin.write(b"\n")
        proc.stdin.flush()

    def send(line: str) -> dict[str, Any]:
        write(line)
        return receive()

    answer = send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}))
    assert answer["result"]["serverInfo"]["name"] == "ocm"
    write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    yield send
    proc.stdin.close()
    proc.wait(30)


def _call(request_id: int, arguments: str) -> str:
    return ('{"jsonrpc":"2.0","id":' + str(request_id) + ',"method":"tools/call",'
            '"params":{"name":"ocm__search","arguments":' + arguments + "}}")


BAD_LINES = {
    "not JSON": ("{not json", -32700, None),
    "a lone surrogate": (_call(2, '{"query":"stack \\ud800 trace"}'), -32602, 2),
    "an integer over 4,300 digits": (_call(3, '{"query":"x","limit":' + "9" * 5000 + "}"),
                                     -32700, 3),
    "JSON nested past the recursion limit": (
        _call(4, '{"query":' + "[" * 100_000 + "]" * 100_000 + "}"), -32700, 4),
    "nested deep but parseable": (_call(5, '{"query":' + "[" * 500 + "]" * 500 + "}"),
                                  -32600, 5),
    "not JSON-RPC": ('{"id":6,"method":"tools/list"}', -32600, 6),
    "a batch": ("[1,2]", -32600, None),
}


def test_every_malformed_line_gets_a_json_rpc_error_and_the_server_lives(
        raw: Send, tmp_path: Path) -> None:
    for name, (line, code, request_id) in BAD_LINES.items():
        answer = raw(line)
        assert answer["error"]["code"] == code, (name, answer)
        assert answer["id"] == request_id, (name, answer)
    assert "query: a lone surrogate" in raw(BAD_LINES["a lone surrogate"][0])["error"]["message"]
    # A line longer than the wire takes is read to its end, answered with its id, not kept.
    huge = _call(9, json.dumps({"query": "x" * (17 * 1024 * 1024)}))
    answer = raw(huge)
    assert answer["id"] == 9 and answer["error"]["code"] == -32600
    assert "at most 16,777,216" in answer["error"]["message"]
    # Still serving, and each refusal was logged.
    found = raw(_call(10, '{"query":"staging database"}'))
    assert found["id"] == 10 and not found["result"].get("isError")
    assert "Sunday" in json.dumps(found["result"])
    assert (tmp_path / "server.err").read_text().count("refused a request") >= len(BAD_LINES)


def test_a_ten_megabyte_query_is_refused_naming_the_field(raw: Send) -> None:
    answer = raw(_call(11, json.dumps({"query": "aB1" * 3_500_000})))
    assert answer["id"] == 11 and answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert "query: 10,500,000 characters, at most 10,000" in text


@pytest.mark.anyio
async def test_every_argument_has_a_size_limit_naming_it(env: dict[str, str], repo: Path,
                                                         tmp_path: Path) -> None:
    vault = repo / ".openCodeMemory"
    before = snapshot(vault)
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocm.cli.main", "mcp"],
                                   env=env, cwd=str(tmp_path))
    calls = {
        "query": ("ocm__search", {"query": "q" * 10_001}),
        "id": ("ocm__get_note", {"id": "i" * 5000}),
        "work_pending": ("ocm__checkpoint", {"goal": "g", "work_pending": ["x"] * 1001}),
        "work_summary[0]": ("ocm__checkpoint", {"work_summary": ["s" * 100_001]}),
        "content": ("ocm__remember", {"type": "gotcha", "content": "c" * 100_001}),
        "tags[1]": ("ocm__remember", {"type": "gotcha", "content": "ok",
                                      "tags": ["a", "t" * 1001]}),
        "plan_files[0].path": ("ocm__checkpoint", {"plan_files": [{"path": "p" * 1001}]}),
    }
    with anyio.fail_after(120), (tmp_path / "client.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            for field, (tool, args) in calls.items():
                result = await client.call_tool(tool, args)
                assert result.is_error is True, (field, result)
                text = result.content[0].text  # type: ignore[union-attr]
                assert f"{field}: " in text and "at most" in text, (field, text)
            fine = await client.call_tool("ocm__search", {"query": "q" * 10_000})
            assert fine.is_error is not True
    assert snapshot(vault) == before  # nothing refused wrote anything


def test_the_cli_refuses_a_query_over_the_limit(project: Project, run_ocm: Any) -> None:
    done = run_ocm("search", "w" * 10_001, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "error: query: 10,001 characters, at most 10,000"


def _gone(pid: int, within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True  # exited, not yet reaped by its new parent
        except FileNotFoundError:
            return True
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.1)
    return False


def test_a_server_whose_client_closed_stdin_stops_even_mid_call(
        env: dict[str, str], tmp_path: Path) -> None:
    proc = _server(env, tmp_path, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _call(1, json.dumps({"query": "ab" * 50_000}))]  # a minute on a quadratic search
    proc.stdin.write("\n".join(lines).encode() + b"\n")
    proc.stdin.flush()
    _reader(proc)()  # initialized; the search is under way or queued
    proc.stdin.close()
    assert _gone(proc.pid, 30), "the server kept running after its client left"


def test_a_server_whose_parent_died_stops(env: dict[str, str], tmp_path: Path) -> None:
    """The parent dies without closing the server's stdin (a pipe someone else still holds)."""
    read_end, write_end = os.pipe()
    errors = tmp_path / "child.err"
    errors.touch()
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time\n"
         f"p = subprocess.Popen([sys.executable, '-m', 'ocm.cli.main', 'mcp'], stdin={read_end},"
         f" stdout=subprocess.DEVNULL, stderr=open({str(errors)!r}, 'w'))\n"
         "print(p.pid, flush=True)\ntime.sleep(600)\n"],
        env={**env, "OCM_LOG_LEVEL": "INFO"}, cwd=tmp_path, stdout=subprocess.PIPE,
        pass_fds=(read_end,))
    try:
        assert parent.stdout is not None
        server = int(parent.stdout.readline())
        end = time.monotonic() + 60
        while "serving on stdio" not in errors.read_text() and time.monotonic() < end:
            time.sleep(0.1)
        assert not _gone(server, 0.5)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _gone(server, 30), "the server outlived its parent"
    finally:
        os.close(read_end)
        os.close(write_end)

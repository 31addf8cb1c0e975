"""The MCP server as agents run it: `ocm mcp` in a subprocess, spoken to over real stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

import ocm

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A temp git project and the child's whole environment (it inherits nothing else)."""
    home = tmp_path / "ocm-home"
    monkeypatch.setenv("OCM_HOME", str(home))
    for name in ("OCM_VAULT", "OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "OCM_NOW"):
        monkeypatch.delenv(name, raising=False)
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True, capture_output=True)
    from ocm.project import Project

    Project.open(cwd=proj).init()  # the server never creates a vault itself
    env = {"OCM_HOME": str(home), "OCM_PROJECT_DIR": str(proj), "HOME": str(tmp_path),
           "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}
    return proj, env


async def ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error is not True, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.mark.anyio
async def test_ocm_mcp_over_stdio_sees_cli_writes(
        setup: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    proj, env = setup
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocm.cli.main", "mcp"],
                                   env=env, cwd=str(tmp_path))
    errlog_path = tmp_path / "server.err"
    with anyio.fail_after(30), errlog_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            assert client.server_info.name == "ocm"
            assert client.server_info.version == ocm.__version__
            assert client.instructions and len(client.instructions) <= 512
            assert len((await client.list_tools()).tools) == 13

            made = await ok(client, "ocm__checkpoint", {
                "goal": "Wire the MCP server", "slug": "mcp-server",
                "work_pending": ["stdio test"]})
            assert Path(made["markdown_path"]).is_relative_to(proj / ".openCodeMemory")
            mem = await ok(client, "ocm__remember", {
                "content": "stdio servers must never print to stdout.", "type": "gotcha"})
            found = await ok(client, "ocm__search", {"query": "stdout print"})
            assert [r["id"] for r in found["results"]] == [mem["id"]]  # own write, at once
            sessions = await ok(client, "ocm__search_sessions", {"query": "mcp server"})
            assert sessions["results"][0]["session_id"] == made["session_id"]
            missing = await ok(client, "ocm__search", {"query": "flamingo"})
            assert missing["results"] == []

            cli = subprocess.run(  # another process writes while the server keeps running
                [sys.executable, "-m", "ocm.cli.main", "remember",
                 "Flamingo is the codename of the billing service.", "--type", "context"],
                cwd=proj, env=env, capture_output=True, text=True, timeout=60)
            assert cli.returncode == 0, cli.stderr
            found = await ok(client, "ocm__search", {"query": "flamingo"})
            assert len(found["results"]) == 1
            assert found["results"][0]["title"].startswith("Flamingo is the codename")

            note = await ok(client, "ocm__get_note", {"id": made["session_id"]})
            assert "Wire the MCP server" in note["markdown"]
            bad = await client.call_tool("ocm__remember", {"content": "x", "type": "nope"})
            assert bad.is_error is True and "unknown memory type 'nope'" in bad.content[0].text
    errors = errlog_path.read_text(encoding="utf-8")
    assert "Traceback" not in errors


@pytest.mark.anyio
async def test_python_m_ocm_mcp_server_modern_protocol(
        setup: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    proj, env = setup
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocm.mcp_server"],
                                   env=env, cwd=str(proj))
    with anyio.fail_after(30), (tmp_path / "server.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            assert client.server_info.name == "ocm"
            assert client.protocol_version == "2026-07-28"
            made = await ok(client, "ocm__remember", {
                "content": "Modern clients negotiate 2026-07-28.", "type": "discovery"})
            brief = await ok(client, "ocm__recall", {"query": "modern clients"})
            assert made["id"] in {item["id"] for item in brief["items"]}

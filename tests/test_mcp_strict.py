"""MCP tools refuse what they do not understand (issues #14 and #16): an unknown argument or
a wrong type is an `isError` result naming the field, and nothing changes on disk; every
error carries its reason. Through the real MCP SDK client against the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from ocm.mcp_server.server import build_server
from ocm.project import Project
from tests.conftest import snapshot

pytestmark = pytest.mark.anyio

WRONG_TYPES = [
    ("ocm__remember", {"content": "a fact", "type": "gotcha", "importance": True}, "importance"),
    ("ocm__remember", {"content": "a fact", "type": "gotcha", "importance": "7"}, "importance"),
    ("ocm__remember", {"content": ["a fact"], "type": "gotcha"}, "content"),
    ("ocm__remember", {"content": "a fact", "type": "gotcha", "tags": "one"}, "tags"),
    ("ocm__checkpoint", {"goal": "g", "plan_files": [{"path": "a.md", "heade": "A"}]},
     "heade"),
    ("ocm__checkpoint", {"goal": "g", "plan_file": [{"path": "a.md"}]}, "plan_file"),
    ("ocm__checkpoint", {"goal": "g", "references": [{"url": "u", "titel": "t"}]}, "titel"),
    ("ocm__checkpoint", {"goal": 3}, "goal"),
    ("ocm__search", {"query": "x", "limit": "ten"}, "limit"),
    ("ocm__search", {"query": "x", "limit": 2.5}, "limit"),
    ("ocm__search", {"query": 5}, "query"),
]


async def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def test_every_tool_refuses_an_unknown_argument(project: Project, repo: Path) -> None:
    before = snapshot(project.vault.root)
    async with Client(build_server(repo)) as client:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 12
        for tool in tools:
            assert tool.input_schema.get("additionalProperties") is False, tool.name
            result = await client.call_tool(tool.name, {"zz_not_an_argument": 1})
            assert result.is_error is True, tool.name
            assert "zz_not_an_argument" in await _text(result), tool.name
    await anyio.sleep(0)
    assert snapshot(project.vault.root) == before


@pytest.mark.parametrize(("name", "args", "field"), WRONG_TYPES,
                         ids=[f"{n}-{f}" for n, _, f in WRONG_TYPES])
async def test_a_wrong_type_is_refused_naming_the_field(
        project: Project, repo: Path, name: str, args: dict[str, Any], field: str) -> None:
    before = snapshot(project.vault.root)
    async with Client(build_server(repo)) as client:
        result = await client.call_tool(name, args)
        assert result.is_error is True
        assert field in await _text(result)
    await anyio.sleep(0)
    assert snapshot(project.vault.root) == before


async def test_well_formed_calls_still_work(project: Project, repo: Path) -> None:
    async with Client(build_server(repo)) as client:
        saved = await client.call_tool("ocm__checkpoint", {
            "goal": "Port the parser.", "plan_files": [{"path": "docs/plan.md", "header": "Plan"}],
            "references": [{"url": "https://example.org/spec", "title": "The spec"}]})
        assert saved.is_error is not True, await _text(saved)
        remembered = await client.call_tool("ocm__remember", {
            "content": "The parser keeps CRLF.", "type": "gotcha", "importance": 7,
            "tags": ["parser"]})
        assert remembered.is_error is not True, await _text(remembered)
        found = await client.call_tool("ocm__search", {"query": "parser CRLF", "limit": 3})
        assert found.is_error is not True
        assert [r["title"] for r in found.structured_content["results"]][:1] == [
            "The parser keeps CRLF."]
    await anyio.sleep(0)
    note = next((project.vault.root / "sessions").glob("*.md")).read_text()
    assert "docs/plan.md" in note and "https://example.org/spec" in note


async def test_an_unexpected_error_says_what_it_was(project: Project, repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError("missing piece")

    monkeypatch.setattr(Project, "search", broken)
    async with Client(build_server(repo)) as client:
        result = await client.call_tool("ocm__search", {"query": "x"})
        assert result.is_error is True
        text = await _text(result)
        assert "KeyError" in text and "missing piece" in text
    await anyio.sleep(0)

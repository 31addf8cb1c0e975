"""A read command never creates anything (issue #16): pointed at a folder that is not an ocm
vault, every read says so (or reports it, for `status` and `doctor`) and leaves the folder
exactly as it was; the MCP server's read tools too. Fresh `ocm` processes, real client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client

from ocm.mcp_server.server import build_server

Run = Callable[..., subprocess.CompletedProcess[str]]
NEED_A_VAULT = [("list",), ("memories",), ("recall",), ("stale",), ("export",),
                ("get", "x"), ("show", "x"), ("files", "x"), ("search", "anything"),
                ("supersede",)]


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "not-a-vault"
    folder.mkdir()
    (folder / "notes.txt").write_text("someone's own file\n")
    return folder


@pytest.mark.parametrize("args", NEED_A_VAULT, ids=lambda a: a[0])
def test_reads_on_a_folder_that_is_not_a_vault_create_nothing(
        elsewhere: Path, run_ocm: Run, args: tuple[str, ...]) -> None:
    before = _tree(elsewhere)
    done = run_ocm(*args, "--vault", str(elsewhere), check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: no ocm vault at {elsewhere}: `ocm init --vault {elsewhere}` creates it, "
        "or point --vault (OCM_VAULT) at an existing one"]
    assert _tree(elsewhere) == before


def test_status_and_doctor_report_it_and_create_nothing(elsewhere: Path, run_ocm: Run) -> None:
    before = _tree(elsewhere)
    status = json.loads(run_ocm("status", "--json", "--vault", str(elsewhere)).stdout)
    assert status["initialised"] is False and status["memories"] == 0
    run_ocm("doctor", "--vault", str(elsewhere), check=False)
    assert _tree(elsewhere) == before


def test_init_then_reads_work(elsewhere: Path, run_ocm: Run) -> None:
    run_ocm("init", "--vault", str(elsewhere))
    run_ocm("remember", "The staging database resets on Sundays.", "--type", "gotcha",
            "--vault", str(elsewhere))
    assert "staging" in run_ocm("memories", "--vault", str(elsewhere)).stdout


@pytest.mark.anyio
async def test_mcp_read_tools_on_a_project_without_a_vault_create_nothing(
        tmp_path: Path) -> None:
    folder = tmp_path / "plain-project"
    folder.mkdir()
    before = _tree(folder)
    async with Client(build_server(folder)) as client:
        for name, args in (("ocm__search", {"query": "x"}), ("ocm__recall", {}),
                           ("ocm__list_memories", {}), ("ocm__get_note", {"id": "x"})):
            result = await client.call_tool(name, args)
            assert result.is_error is True, name
            assert "no ocm vault" in result.content[0].text, name
    await anyio.sleep(0)
    assert _tree(folder) == before

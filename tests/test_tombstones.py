"""Tombstones: a `remember` that nearly copies a superseded, resolved or archived record
writes nothing unless forced, and says so in words the agent acts on; through the real MCP
SDK client against `ocm mcp`, the CLI, and the Project facade."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

import tests.test_mcp_stdio as stdio
from ocm.project import Project
from tests.conftest import ocm_in_process

OLD = "The Postgres connection pool size is 20 per web worker."
NEW = "The Postgres connection pool size is 40 per web worker after the load test."
OLD_AGAIN = "the postgres connection pool size is 20 per web worker"
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


# `setup`: a temp git project with a vault and the `ocm mcp` child's whole environment.
setup, anyio_backend = stdio.setup, stdio.anyio_backend


def files_of(root: Path) -> dict[str, str]:
    folder = root / ".openCodeMemory" / "memories"
    return {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*.md")}


def cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`ocm ARGS` through its entry point in this process (what is checked is the output)."""
    return ocm_in_process(list(args), root, env, None)


def superseded_pair(project: Project) -> tuple[Any, Any]:
    old = project.remember(OLD, "decision", files=["config/database.yml"])
    new = project.remember(NEW, "decision", files=["config/database.yml"])
    assert new.notice and old.id in new.notice  # auto-superseded
    return old, new


async def call(client: Client, args: dict[str, Any]) -> Any:
    return await client.call_tool("ocm__remember", args)


@pytest.mark.anyio
async def test_mcp_remember_of_a_superseded_fact_is_refused_until_forced(
        setup: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, env = setup
    old, new = superseded_pair(Project.open(cwd=root))
    before = files_of(root)
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocm.cli.main", "mcp"],
                                   env=env, cwd=str(root))
    with anyio.fail_after(60), (tmp_path / "server.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            result = await call(client, {"content": OLD_AGAIN, "type": "decision"})
            assert result.is_error is not True, result.content
            out = result.structured_content
            assert out["id"] == old.id and out["status"] == "superseded"
            assert out["changed"] is False
            notice = out["notice"]
            assert notice.startswith(f"not stored: this nearly copies {old.id}")
            assert "superseded on 20" in notice and f"by {new.id}" in notice
            assert "which holds now" in notice and "force: true" in notice
            assert files_of(root) == before  # nothing written, the old record untouched

            for bad in ("yes", 1, None):
                wrong = await call(client, {"content": OLD_AGAIN, "type": "decision",
                                            "force": bad})
                assert wrong.is_error is True
                assert "force" in wrong.content[0].text
                assert files_of(root) == before

            forced = await call(client, {"content": OLD_AGAIN, "type": "decision",
                                         "force": True})
            assert forced.is_error is not True
            made = forced.structured_content
            assert made["changed"] is True and made["status"] == "active"
            assert made["id"] not in (old.id, new.id)
            assert Path(made["markdown_path"]).is_file()


@pytest.mark.anyio
async def test_mcp_resolved_fact_names_its_resolution_and_reactivation(
        setup: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, env = setup
    project = Project.open(cwd=root)
    gotcha = project.remember("The staging deploy fails when the VPN is on; turn the VPN off "
                              "before running deploy.sh.", "gotcha", files=["deploy.sh"])
    project.set_memory_status(gotcha.id, "resolved", reason="deploy.sh now routes around it")
    before = files_of(root)
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocm.cli.main", "mcp"],
                                   env=env, cwd=str(root))
    with anyio.fail_after(60), (tmp_path / "server.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            result = await call(client, {
                "content": "the staging deploy fails when the VPN is on, turn the VPN off "
                           "before running deploy.sh", "type": "gotcha"})
            out = result.structured_content
            assert out["id"] == gotcha.id and out["status"] == "resolved"
            assert out["changed"] is False
            assert "(deploy.sh now routes around it)" in out["notice"]
            assert f"reactivate {gotcha.id}" in out["notice"]
            assert "ocm__reactivate_memory" in out["notice"]
            assert files_of(root) == before


def test_cli_refuses_forces_and_rejects_a_bad_force(setup: tuple[Path, dict[str, str]]
                                                    ) -> None:
    root, env = setup
    old, new = superseded_pair(Project.open(cwd=root))
    before = files_of(root)
    out = cli(root, env, "remember", OLD_AGAIN, "--type", "decision")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Not stored: this nearly copies {old.id}")
    assert f"by {new.id}" in out.stdout and "--force" in out.stdout
    as_json = json.loads(cli(root, env, "remember", OLD_AGAIN, "--type", "decision",
                             "--json").stdout)
    assert as_json["id"] == old.id and as_json["changed"] is False
    assert files_of(root) == before

    bad = cli(root, env, "remember", OLD_AGAIN, "--type", "decision", "--force=yes")
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "--force" in bad.stderr
    assert files_of(root) == before

    forced = cli(root, env, "remember", OLD_AGAIN, "--type", "decision", "--force")
    assert forced.returncode == 0 and forced.stdout.startswith("Remembered ")
    assert len(files_of(root)) == len(before) + 1


def test_archived_record_is_a_tombstone_and_secrets_are_redacted_first(
        setup: tuple[Path, dict[str, str]]) -> None:
    root, _ = setup
    project = Project.open(cwd=root)
    text = f"The CI token for the release job is {SECRET}; it lives in the vault settings."
    first = project.remember(text, "context")
    assert SECRET not in first.path.read_text()
    project.forget(first.id)
    before = files_of(root)
    again = project.remember(text, "context")  # redacted first, then compared: same record
    assert (again.id, again.status, again.changed) == (first.id, "archived", False)
    assert again.notice and "archived on" in again.notice and SECRET not in again.notice
    assert files_of(root) == before


def test_distinct_record_sharing_words_is_stored(setup: tuple[Path, dict[str, str]]) -> None:
    root, _ = setup
    project = Project.open(cwd=root)
    superseded_pair(project)
    other = project.remember("The Redis connection pool size is 20 per web worker.",
                             "decision", files=["config/redis.yml"])
    assert other.changed and other.status == "active"
    assert other.notice is None or "not stored" not in other.notice
    with pytest.raises(Exception, match="force must be true or false"):
        project.remember(OLD_AGAIN, "decision", force="yes")  # type: ignore[arg-type]


def test_broken_superseded_record_is_reported_and_skipped(
        setup: tuple[Path, dict[str, str]]) -> None:
    root, env = setup
    project = Project.open(cwd=root)
    old, _ = superseded_pair(project)
    text = old.path.read_text()
    old.path.write_text(text.replace("status: superseded", "status: superseded\nfiles: [a, "))
    out = cli(root, env, "remember", OLD_AGAIN, "--type", "decision", "--json")
    assert out.returncode == 0, out.stderr
    made = json.loads(out.stdout)
    assert made["changed"] is True and made["status"] == "active" and made["id"] != old.id
    assert f"skipped 1 unreadable record file(s) ({old.path.name}" in made["notice"]


def test_past_the_small_folder_shortcut_a_fresh_process_still_sees_tombstones(
        setup: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: past SUPERSEDE_SCAN_MAX records of a type, a process that does not watch
    the vault (the CLI) compared a new record with the index's closest *active* records only,
    so a near-copy of a superseded one was stored as a new active twin."""
    import ocm.project

    root, _ = setup
    monkeypatch.setattr(ocm.project, "SUPERSEDE_SCAN_MAX", 5)
    project = Project.open(cwd=root)
    for i in range(12):
        project.remember(f"Unrelated decision number {i} about CSS grid layout", "decision",
                         auto_supersede=False)
    old, new = superseded_pair(project)
    before = files_of(root)
    fresh = Project.open(cwd=root)  # a new process's view: no watch, the postings answer
    again = fresh.remember(OLD_AGAIN, "decision", files=["config/database.yml"])
    assert not again.changed and again.id == old.id
    assert again.notice and "superseded" in again.notice and new.id in again.notice
    assert files_of(root) == before

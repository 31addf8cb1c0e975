"""The MCP server through the SDK's real in-process client: every tool, its errors, the
legacy handshake, the project lookup, and concurrent calls on one Project."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation, ListRootsResult, Root

from ocm.mcp_server.server import INSTRUCTIONS, build_server

TOOLS = {
    "ocm__checkpoint", "ocm__search_sessions", "ocm__list_sessions", "ocm__get_session_files",
    "ocm__remember", "ocm__search", "ocm__recall", "ocm__resolve_memory",
    "ocm__list_memories", "ocm__update_memory", "ocm__forget", "ocm__get_note",
    "ocm__reactivate_memory",
}
READ_ONLY = {"ocm__search_sessions", "ocm__list_sessions", "ocm__get_session_files",
             "ocm__search", "ocm__recall", "ocm__list_memories", "ocm__get_note"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def private_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private OCM_HOME and no inherited project hints: the real home is never touched."""
    home = tmp_path / "ocm-home"
    monkeypatch.setenv("OCM_HOME", str(home))
    for name in ("OCM_VAULT", "OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "OCM_NOW"):
        monkeypatch.delenv(name, raising=False)
    return home


def git_repo(path: Path, init: bool = True) -> Path:
    """A git repository; with `init`, where `ocm init` has made the vault (the server
    never creates one itself)."""
    from ocm.project import Project

    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)
    if init:
        Project.open(cwd=path).init()
    return path


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "proj")


@pytest.fixture
def vault(proj: Path) -> Path:
    return proj / ".openCodeMemory"


@pytest.fixture
async def client(proj: Path):
    async with Client(build_server(proj), raise_exceptions=True) as c:
        yield c


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every note file's bytes; the derived index and lock files are left out."""
    if not folder.exists():
        return {}
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.relative_to(folder).as_posix().startswith(
                (".index/", ".locks/"))}


async def ok(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(tool, args or {})
    assert result.is_error is not True, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def refused(client: Client, tool: str, args: dict[str, Any], vault: Path) -> str:
    """The call is an is_error result and the vault is byte-identical afterwards."""
    before = snapshot(vault)
    result = await client.call_tool(tool, args)
    assert result.is_error is True
    assert snapshot(vault) == before
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}")
    return text


async def remember(client: Client, content: str, type_: str = "gotcha",
                   **extra: Any) -> dict[str, Any]:
    return await ok(client, "ocm__remember", {"content": content, "type": type_, **extra})


# ----------------------------------------------------------------------------- the server


@pytest.mark.anyio
async def test_identity_instructions_and_tool_list(client: Client) -> None:
    assert client.server_info is not None
    assert client.server_info.name == "ocm"
    import ocm

    assert client.server_info.version == ocm.__version__
    assert client.instructions == INSTRUCTIONS
    assert len(INSTRUCTIONS) <= 512
    for name in ("ocm__checkpoint", "ocm__search", "ocm__remember", "ocm__recall"):
        assert name in INSTRUCTIONS

    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description, name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        assert "ctx" not in tool.input_schema["properties"], name
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, name
        assert hints.read_only_hint is (name in READ_ONLY), name
    assert tools["ocm__forget"].annotations.destructive_hint is True
    for name in ("ocm__remember", "ocm__checkpoint", "ocm__resolve_memory"):
        assert tools[name].annotations.destructive_hint is False
    checkpoint = tools["ocm__checkpoint"].input_schema
    assert checkpoint.get("required", []) == []
    assert {"session_id", "slug", "goal", "work_completed", "work_pending", "work_summary",
            "decisions", "plan_files", "references", "diff_summary", "status", "trigger",
            "tool"} <= set(checkpoint["properties"])
    assert tools["ocm__search_sessions"].input_schema["required"] == ["query"]
    assert "markdown_path" in str(tools["ocm__search_sessions"].output_schema)
    assert set(tools["ocm__remember"].input_schema["required"]) == {"content", "type"}


# ----------------------------------------------------------------------------- sessions


@pytest.mark.anyio
async def test_checkpoint_appends_replaces_and_reuses_the_open_session(
        client: Client, vault: Path) -> None:
    first = await ok(client, "ocm__checkpoint", {
        "slug": "tei-migration", "goal": "Move embeddings to TEI.",
        "work_completed": ["read the TEI docs"], "work_pending": ["benchmark", "switch"],
        "plan_files": [{"path": "docs/plan.md", "header": "# TEI plan"}],
        "references": [{"url": "https://github.com/huggingface/text-embeddings-inference",
                        "title": "TEI repo"}],
        "decisions": ["**Batching:** server-side batching beats client-side."],
        "trigger": "manual"})
    sid = first["session_id"]
    assert first["status"] == "open" and first["changed"] is True
    path = Path(first["markdown_path"])
    assert path.is_file() and path.parent == vault / "sessions"
    assert path.name.endswith("_tei-migration.md")

    second = await ok(client, "ocm__checkpoint", {
        "work_completed": ["benchmark"], "work_pending": ["switch", "clean up"],
        "work_summary": ["measured 3x lower latency"]})
    assert second["session_id"] == sid  # no id: the current open session
    text = Path(second["markdown_path"]).read_text(encoding="utf-8")
    assert "- read the TEI docs" in text and "- benchmark" in text
    assert "- clean up" in text and "measured 3x lower latency" in text
    assert "`docs/plan.md`" in text and "[TEI repo](https://github.com" in text
    pending = text.split("Work To Be Completed", 1)[1].split("##", 1)[0]
    assert "switch" in pending and "benchmark" not in pending

    again = await ok(client, "ocm__checkpoint", {"session_id": sid})
    assert again["changed"] is False

    closed = await ok(client, "ocm__checkpoint", {"session_id": sid, "status": "closed"})
    assert closed["status"] == "closed"
    fresh = await ok(client, "ocm__checkpoint", {"goal": "Next task"})
    assert fresh["session_id"] != sid


@pytest.mark.anyio
async def test_checkpoint_with_the_host_session_id(client: Client) -> None:
    made = await ok(client, "ocm__checkpoint",
                    {"session_id": "host-7f3a", "goal": "Fix the OOM on A10G", "tool": "cursor"})
    assert made["session_id"] != "host-7f3a"
    again = await ok(client, "ocm__checkpoint",
                     {"session_id": "host-7f3a", "work_completed": ["halved the batch size"]})
    assert again["session_id"] == made["session_id"]
    note = await ok(client, "ocm__get_note", {"id": "host-7f3a"})
    assert note["frontmatter"]["agent_session_id"] == "host-7f3a"
    assert note["frontmatter"]["tool"] == "cursor"
    assert "halved the batch size" in note["markdown"]


@pytest.mark.anyio
async def test_checkpoint_refusals_write_nothing(client: Client, vault: Path) -> None:
    text = await refused(client, "ocm__checkpoint", {"goal": "x" * 5000}, vault)
    assert "5,000 characters" in text
    assert not (vault / "sessions").exists() or not any((vault / "sessions").iterdir())
    assert "invalid slug" in await refused(client, "ocm__checkpoint",
                                           {"slug": "../../etc", "goal": "g"}, vault)
    assert "invalid trigger" in await refused(client, "ocm__checkpoint",
                                              {"goal": "g", "trigger": "NOT A WORD"}, vault)
    assert "'open', 'frozen' or 'closed'" in await refused(
        client, "ocm__checkpoint", {"status": "finished"}, vault)
    assert "invalid tool" in await refused(client, "ocm__checkpoint",
                                           {"goal": "g", "tool": "Bad Tool!"}, vault)

    sid = (await ok(client, "ocm__checkpoint", {"goal": "real"}))["session_id"]
    assert "no session with id '2020-01-01_00-00_nope'" in await refused(
        client, "ocm__checkpoint", {"session_id": "2020-01-01_00-00_nope", "goal": "g"}, vault)
    assert "path separators" in await refused(
        client, "ocm__checkpoint", {"session_id": "../escape", "goal": "g"}, vault)
    await ok(client, "ocm__checkpoint", {"session_id": sid, "status": "closed"})
    assert "cannot become open" in await refused(
        client, "ocm__checkpoint", {"session_id": sid, "status": "open"}, vault)


@pytest.mark.anyio
async def test_search_sessions_caps_at_five_and_returns_paths(client: Client) -> None:
    for n in range(7):
        await ok(client, "ocm__checkpoint", {
            "session_id": f"host-{n}", "tool": "claude-code" if n % 2 else "cursor",
            "goal": f"Tune embedding server latency, attempt {n}"})
    found = await ok(client, "ocm__search_sessions",
                     {"query": "embedding server latency", "limit": 50})
    assert 1 <= len(found["results"]) <= 5
    assert [r["rank"] for r in found["results"]] == list(range(1, len(found["results"]) + 1))
    for row in found["results"]:
        assert Path(row["markdown_path"]).is_file()
        assert "embedding server latency" in row["goal"].lower()
        assert set(row) == {"rank", "score", "session_id", "goal", "date", "tool", "status",
                            "top_files", "markdown_path", "matched", "confidence"}
        assert row["matched"] in ("words", "both") and 0.0 <= row["confidence"] <= 1.0
    only_cursor = await ok(client, "ocm__search_sessions",
                           {"query": "embedding latency", "tool_filter": "cursor"})
    assert only_cursor["results"] and {r["tool"] for r in only_cursor["results"]} == {"cursor"}
    everywhere = await ok(client, "ocm__search_sessions",
                          {"query": "embedding latency", "scope": "global", "limit": 2})
    assert len(everywhere["results"]) == 2

    none = await client.call_tool("ocm__search_sessions", {"query": "kubernetes helm chart"})
    assert none.is_error is not True
    assert none.structured_content["results"] == []
    assert none.structured_content["message"] == "No sessions found matching your query."
    assert "No sessions found matching your query." in none.content[0].text


@pytest.mark.anyio
async def test_list_sessions_newest_first(client: Client, vault: Path) -> None:
    empty = await ok(client, "ocm__list_sessions")
    assert empty["sessions"] == [] and "No sessions" in empty["message"]
    ids = []
    for n, tool in enumerate(["cursor", "claude-code", "cursor"]):
        ids.append((await ok(client, "ocm__checkpoint", {
            "session_id": f"h{n}", "tool": tool, "goal": f"goal {n}"}))["session_id"])
    listed = await ok(client, "ocm__list_sessions")
    assert {s["session_id"] for s in listed["sessions"]} == set(ids)
    dates = [s["date"] for s in listed["sessions"]]
    assert dates == sorted(dates, reverse=True)
    assert len((await ok(client, "ocm__list_sessions", {"limit": 2}))["sessions"]) == 2
    cursor = await ok(client, "ocm__list_sessions", {"tool_filter": "cursor"})
    assert {s["tool"] for s in cursor["sessions"]} == {"cursor"} and len(cursor["sessions"]) == 2
    await refused(client, "ocm__list_sessions", {"limit": 0}, vault)


@pytest.mark.anyio
async def test_get_session_files(client: Client, proj: Path, vault: Path) -> None:
    from ocm.project import Project

    made = await ok(client, "ocm__checkpoint", {"session_id": "host-files", "goal": "files"})
    hooks = Project.open(cwd=proj)  # what a hook process does: record touched files
    hooks.vault.record_file(made["session_id"], str(proj / "src" / "app.py"), "created")
    hooks.vault.record_file(made["session_id"], "README.md", "modified")
    hooks.vault.record_file(made["session_id"], "old.py", "deleted")

    files = await ok(client, "ocm__get_session_files", {"session_id": "host-files"})
    assert files["session_id"] == made["session_id"]
    assert files["files"] == [{"path": "src/app.py", "change_type": "created"},
                              {"path": "README.md", "change_type": "modified"},
                              {"path": "old.py", "change_type": "deleted"}]
    same = await ok(client, "ocm__get_session_files", {"session_id": made["session_id"]})
    assert same == files
    assert "no session with id 'nope'" in await refused(
        client, "ocm__get_session_files", {"session_id": "nope"}, vault)


# ----------------------------------------------------------------------------- memories


@pytest.mark.anyio
async def test_remember_is_searchable_at_once_and_readable(client: Client, proj: Path) -> None:
    made = await remember(client, "Whoosh's writer lock must be released before os.fork.",
                          "warning", title="Release the Whoosh lock before fork",
                          files=[str(proj / "ocm" / "indexer" / "index.py")],
                          tags=["whoosh", "concurrency"], importance=8)
    assert made["kind"] == "memory" and made["status"] == "active"
    path = Path(made["markdown_path"])
    assert path.is_file() and path.parent.name == "gotcha"  # warning -> gotcha

    found = await ok(client, "ocm__search", {"query": "whoosh fork lock"})
    assert found["results"][0]["id"] == made["id"]
    hit = found["results"][0]
    assert hit["type"] == "gotcha" and hit["importance"] == 8
    assert hit["top_files"] == ["ocm/indexer/index.py"] and hit["tags"] == ["whoosh",
                                                                           "concurrency"]
    assert "content" not in hit and "markdown" not in hit

    note = await ok(client, "ocm__get_note", {"id": made["id"]})
    assert note["kind"] == "memory" and note["scope"] == "project"
    assert note["markdown_path"] == made["markdown_path"]
    assert note["markdown"] == path.read_text(encoding="utf-8")
    assert "released before os.fork" in note["markdown"]
    assert note["frontmatter"]["type"] == "gotcha"
    assert isinstance(note["frontmatter"]["created"], str)


@pytest.mark.anyio
async def test_remember_refusals(client: Client, vault: Path) -> None:
    text = await refused(client, "ocm__remember", {"content": "x", "type": "nonsense"}, vault)
    assert "unknown memory type 'nonsense'" in text
    for valid in ("gotcha", "decision", "bug_fix", "lesson", "preference"):
        assert valid in text

    first = await remember(client, "Pool size is 10.", "decision", key="db.pool-size",
                           title="DB pool size 10")
    text = await refused(client, "ocm__remember",
                         {"content": "Pool size is 20.", "type": "decision",
                          "key": "db.pool-size"}, vault)
    assert first["id"] in text and "DB pool size 10" in text and "supersede_reason" in text
    assert "importance" in await refused(
        client, "ocm__remember", {"content": "c", "type": "gotcha", "importance": 11}, vault)
    assert "'project' or 'user'" in await refused(
        client, "ocm__remember", {"content": "c", "type": "gotcha", "scope": "global"}, vault)
    assert "non-empty" in await refused(
        client, "ocm__remember", {"content": "   ", "type": "gotcha"}, vault)
    assert "no session with id 'nope'" in await refused(
        client, "ocm__remember", {"content": "c", "type": "gotcha", "session_id": "nope"},
        vault)


@pytest.mark.anyio
async def test_supersede_and_resolve(client: Client, vault: Path) -> None:
    old = await remember(client, "Deploys go through Jenkins.", "procedure", key="deploy")
    new = await remember(client, "Deploys go through GitHub Actions.", "procedure",
                         key="deploy", supersede_reason="moved CI off Jenkins")
    assert new["notice"] == f"superseded {old['id']}"
    old_note = await ok(client, "ocm__get_note", {"id": old["id"]})
    assert old_note["frontmatter"]["status"] == "superseded"
    assert old_note["frontmatter"]["superseded_by"] == f"[[{new['id']}]]"
    assert old_note["frontmatter"]["resolution"] == "moved CI off Jenkins"
    found = await ok(client, "ocm__search", {"query": "deploys"})
    by_id = {r["id"]: r for r in found["results"]}
    assert by_id[old["id"]]["superseded_by"] == new["id"]
    ids = [r["id"] for r in found["results"]]
    assert ids.index(new["id"]) < ids.index(old["id"])

    bug = await remember(client, "Flaky test test_upload times out on CI.", "bug_fix")
    done = await ok(client, "ocm__resolve_memory", {"id": bug["id"], "reason": "fixed"})
    assert done["status"] == "resolved"
    assert bug["id"] not in [r["id"] for r in (await ok(
        client, "ocm__search", {"query": "flaky upload"}))["results"]]
    shown = await ok(client, "ocm__search", {"query": "flaky upload", "include_resolved": True})
    assert bug["id"] in [r["id"] for r in shown["results"]]
    before = snapshot(vault)
    again = await ok(client, "ocm__resolve_memory", {"id": bug["id"]})  # idempotent
    assert again["changed"] is False and again["status"] == "resolved"
    assert snapshot(vault) == before

    a = await remember(client, "Use ruff for lint.", "principle")
    b = await remember(client, "Use ruff for lint and format.", "principle")
    replaced = await ok(client, "ocm__resolve_memory", {"id": a["id"], "superseded_by": b["id"]})
    assert replaced["status"] == "superseded"
    assert (await ok(client, "ocm__get_note", {"id": b["id"]}))["frontmatter"][
        "supersedes"] == f"[[{a['id']}]]"

    assert "no session or memory with id 'missing-1'" in await refused(
        client, "ocm__resolve_memory", {"id": "missing-1"}, vault)
    assert "needs superseded_by" in await refused(
        client, "ocm__resolve_memory", {"id": b["id"], "status": "superseded"}, vault)
    assert "cannot supersede itself" in await refused(
        client, "ocm__resolve_memory", {"id": b["id"], "superseded_by": b["id"]}, vault)
    assert "'resolved' or 'superseded'" in await refused(
        client, "ocm__resolve_memory", {"id": b["id"], "status": "archived"}, vault)


@pytest.mark.anyio
async def test_list_memories_filters(client: Client, vault: Path) -> None:
    g = await remember(client, "Never run migrations on Fridays.", "gotcha", tags=["db"],
                       files=["db/migrate.py"])
    d = await remember(client, "We chose Postgres over MySQL.", "decision", tags=["db"])
    u = await remember(client, "Prefers short commit messages.", "preference", scope="user")
    await ok(client, "ocm__resolve_memory", {"id": d["id"]})

    active = await ok(client, "ocm__list_memories")
    assert {m["id"] for m in active["memories"]} == {g["id"], u["id"]}
    assert active["message"] == "2 memories"
    everything = await ok(client, "ocm__list_memories", {"status": "all"})
    assert {m["id"] for m in everything["memories"]} == {g["id"], d["id"], u["id"]}
    resolved = await ok(client, "ocm__list_memories", {"status": "resolved"})
    assert [m["id"] for m in resolved["memories"]] == [d["id"]]
    assert [m["id"] for m in (await ok(client, "ocm__list_memories", {"type": "warning"}))[
        "memories"]] == [g["id"]]
    assert [m["id"] for m in (await ok(client, "ocm__list_memories", {
        "type": ["gotcha", "preference"], "tag": "db"}))["memories"]] == [g["id"]]
    assert [m["id"] for m in (await ok(client, "ocm__list_memories", {"file": "migrate"}))[
        "memories"]] == [g["id"]]
    user = await ok(client, "ocm__list_memories", {"scope": "user"})
    assert [(m["id"], m["scope"]) for m in user["memories"]] == [(u["id"], "user")]
    assert "unknown memory type 'kind-of-thing'" in await refused(
        client, "ocm__list_memories", {"type": "kind-of-thing"}, vault)


@pytest.mark.anyio
async def test_update_memory_and_reclassify(client: Client, vault: Path) -> None:
    made = await remember(client, "Cache TTL is 60s.", "discovery", title="Cache TTL")
    changed = await ok(client, "ocm__update_memory", {
        "id": made["id"], "content": "Cache TTL is 300s since v2.", "type": "decision",
        "tags": ["cache"], "importance": 7})
    path = Path(changed["markdown_path"])
    assert path.parent.name == "decision" and path.is_file()
    assert not Path(made["markdown_path"]).exists()
    note = await ok(client, "ocm__get_note", {"id": made["id"]})
    assert "300s since v2" in note["markdown"] and "60s" not in note["markdown"]
    assert note["frontmatter"]["type"] == "decision" and note["frontmatter"]["importance"] == 7
    found = await ok(client, "ocm__search", {"query": "cache ttl"})
    assert found["results"][0]["type"] == "decision"

    text = await refused(client, "ocm__update_memory", {"id": made["id"], "type": "bogus"}, vault)
    assert "unknown memory type 'bogus'" in text and "gotcha" in text
    assert "nothing to change" in await refused(
        client, "ocm__update_memory", {"id": made["id"]}, vault)
    assert "no session or memory with id 'gone-123'" in await refused(
        client, "ocm__update_memory", {"id": "gone-123", "title": "t"}, vault)
    session = await ok(client, "ocm__checkpoint", {"goal": "a session"})
    assert "is a session" in await refused(
        client, "ocm__update_memory", {"id": session["session_id"], "title": "t"}, vault)


@pytest.mark.anyio
async def test_forget_archives_or_deletes(client: Client, vault: Path) -> None:
    a = await remember(client, "Old staging host is stage-1.", "context")
    b = await remember(client, "Temporary note about stage-2.", "context")
    archived = await ok(client, "ocm__forget", {"id": a["id"]})
    assert archived["status"] == "archived" and Path(a["markdown_path"]).is_file()
    assert a["id"] not in [r["id"] for r in (await ok(
        client, "ocm__search", {"query": "staging host"}))["results"]]
    deleted = await ok(client, "ocm__forget", {"id": b["id"], "mode": "delete"})
    assert deleted["status"] == "deleted" and not Path(b["markdown_path"]).exists()
    assert b["id"] not in [r["id"] for r in (await ok(
        client, "ocm__search", {"query": "stage-2", "include_resolved": True}))["results"]]

    assert "no session or memory with id" in await refused(
        client, "ocm__forget", {"id": b["id"], "mode": "delete"}, vault)
    before = snapshot(vault)
    again = await ok(client, "ocm__forget", {"id": a["id"]})  # idempotent
    assert again["changed"] is False and snapshot(vault) == before
    assert "'archive' or 'delete'" in await refused(
        client, "ocm__forget", {"id": a["id"], "mode": "shred"}, vault)
    session = await ok(client, "ocm__checkpoint", {"goal": "keep me"})
    assert "only memories can be forgotten" in await refused(
        client, "ocm__forget", {"id": session["session_id"], "mode": "delete"}, vault)


@pytest.mark.anyio
async def test_search_filters_and_refusals(client: Client, vault: Path) -> None:
    mem = await remember(client, "Retry 429 responses with jitter.", "lesson", tags=["http"])
    ses = await ok(client, "ocm__checkpoint", {"goal": "Add retries for 429 responses",
                                               "tool": "codex"})
    both = await ok(client, "ocm__search", {"query": "429 retries"})
    assert {r["id"] for r in both["results"]} == {mem["id"], ses["session_id"]}
    assert [r["id"] for r in (await ok(client, "ocm__search", {
        "query": "429 retries", "kind": "session"}))["results"]] == [ses["session_id"]]
    assert [r["id"] for r in (await ok(client, "ocm__search", {
        "query": "429", "type": "lesson"}))["results"]] == [mem["id"]]
    assert [r["id"] for r in (await ok(client, "ocm__search", {
        "query": "429", "tag": "http"}))["results"]] == [mem["id"]]
    assert [r["id"] for r in (await ok(client, "ocm__search", {
        "query": "429", "tool": "codex"}))["results"]] == [ses["session_id"]]
    newest = await ok(client, "ocm__search", {"limit": 1})
    assert len(newest["results"]) == 1
    none = await ok(client, "ocm__search", {"query": "zeppelin"})
    assert none["results"] == [] and none["message"] == "No sessions or memories matched."

    assert "unknown status 'done'" in await refused(
        client, "ocm__search", {"query": "x", "status": "done"}, vault)
    assert "'memory' or 'transcript'" in await refused(
        client, "ocm__search", {"query": "x", "kind": "file"}, vault)
    assert "less than or equal to 100" in await refused(
        client, "ocm__search", {"query": "x", "limit": 1000}, vault)


@pytest.mark.anyio
async def test_recall_brief(client: Client, vault: Path) -> None:
    rule = await remember(client, "Always run the full test suite before pushing.",
                          "principle", title="Full tests before push")
    gotcha = await remember(client, "The staging DB resets nightly at 02:00.", "gotcha")
    last = await ok(client, "ocm__checkpoint", {"session_id": "host-old", "goal": "Ship v1",
                                                "work_pending": ["write changelog"]})
    await ok(client, "ocm__checkpoint", {"session_id": "host-old", "status": "closed"})

    brief = await ok(client, "ocm__recall", {"session_id": "host-new"})
    assert "Full tests before push" in brief["text"] and rule["id"] in brief["text"]
    assert {i["id"] for i in brief["items"]} >= {rule["id"], gotcha["id"]}
    assert brief["last_session"]["id"] == last["session_id"]
    assert brief["last_session"]["pending"] == ["write changelog"]
    assert "host-new" in brief["text"] and brief["dropped"] == 0

    relevant = await ok(client, "ocm__recall", {"query": "staging database reset"})
    assert relevant["items"][0]["id"] == gotcha["id"]
    assert relevant["items"][0]["section"] == "Relevant to this task"
    snippets = await ok(client, "ocm__recall", {"format": "snippets"})
    assert f"| {rule['id']} |" in snippets["text"]
    as_json = await ok(client, "ocm__recall", {"format": "json"})
    assert '"items"' in as_json["text"]
    tight = await ok(client, "ocm__recall", {"budget": 200})
    assert tight["dropped"] >= 1 and len(tight["text"]) <= 400

    assert "greater than or equal to 200" in await refused(
        client, "ocm__recall", {"budget": 10}, vault)
    assert "'prompt', 'snippets' or 'json'" in await refused(
        client, "ocm__recall", {"format": "html"}, vault)


@pytest.mark.anyio
async def test_get_note_of_a_session_and_unknown_ids(client: Client, vault: Path) -> None:
    made = await ok(client, "ocm__checkpoint", {"goal": "Read me back", "slug": "read-back"})
    note = await ok(client, "ocm__get_note", {"id": made["session_id"]})
    assert note["kind"] == "session" and note["id"] == made["session_id"]
    assert note["markdown"] == Path(made["markdown_path"]).read_text(encoding="utf-8")
    assert note["markdown"].startswith("---\n") and "## Goal" in note["markdown"]
    assert note["frontmatter"]["status"] == "open"
    assert "no session or memory with id 'ghost'" in await refused(
        client, "ocm__get_note", {"id": "ghost"}, vault)
    assert "invalid" in await refused(client, "ocm__get_note", {"id": "../../etc/passwd"}, vault)


# ----------------------------------------------------------------------------- freshness


@pytest.mark.anyio
async def test_edits_by_others_are_seen_and_the_searcher_is_reused(
        proj: Path, vault: Path) -> None:
    server = build_server(proj)
    async with Client(server) as client:
        made = await remember(client, "The queue consumer acks after processing.", "discovery")
        await ok(client, "ocm__search", {"query": "queue consumer"})
        project = server.ocm_backend._project
        index = project.index_for(project.vault)
        searcher = index._searcher
        await ok(client, "ocm__search", {"query": "queue acks"})
        assert index._searcher is searcher  # nothing changed: the searcher is reused

        path = Path(made["markdown_path"])  # an editor rewrites the note
        path.write_text(path.read_text(encoding="utf-8").replace(
            "acks after processing", "acks before processing (at-most-once)"), encoding="utf-8")
        found = await ok(client, "ocm__search", {"query": "at-most-once"})
        assert [r["id"] for r in found["results"]] == [made["id"]]

        from ocm.project import Project  # another process stores a memory

        other = Project.open(cwd=proj).remember("Kafka retention is 7 days.", "context")
        found = await ok(client, "ocm__search", {"query": "kafka retention"})
        assert [r["id"] for r in found["results"]] == [other.id]


@pytest.mark.anyio
async def test_concurrent_calls_share_one_project(client: Client) -> None:
    made: list[str] = []
    searched: list[int] = []

    async def store(n: int) -> None:
        made.append((await remember(client, f"Fact number {n} about the parser.",
                                    "discovery"))["id"])

    async def look() -> None:
        searched.append(len((await ok(client, "ocm__search", {"query": "parser"}))["results"]))

    async with anyio.create_task_group() as tg:
        for n in range(12):
            tg.start_soon(store, n)
            tg.start_soon(look)
    assert len(set(made)) == 12 and len(searched) == 12
    listed = await ok(client, "ocm__list_memories", {"limit": 100})
    assert {m["id"] for m in listed["memories"]} == set(made)


# ----------------------------------------------------------------------------- handshake


@pytest.mark.anyio
async def test_legacy_handshake_roundtrip(proj: Path) -> None:
    async with Client(build_server(proj), mode="legacy") as client:
        assert client.protocol_version != "2026-07-28"
        assert client.server_info.name == "ocm"
        assert set(t.name for t in (await client.list_tools()).tools) == TOOLS
        made = await remember(client, "Legacy clients still work.", "lesson")
        found = await ok(client, "ocm__search", {"query": "legacy clients"})
        assert found["results"][0]["id"] == made["id"]
        bad = await client.call_tool("ocm__get_note", {"id": "nope"})
        assert bad.is_error is True and "no session or memory with id 'nope'" in (
            bad.content[0].text)


@pytest.mark.anyio
async def test_host_tool_is_taken_from_the_client_name(proj: Path) -> None:
    info = Implementation(name="claude-code", version="2.1.0")
    async with Client(build_server(proj), mode="legacy", client_info=info) as client:
        made = await ok(client, "ocm__checkpoint", {"goal": "Guess my tool"})
        note = await ok(client, "ocm__get_note", {"id": made["session_id"]})
        assert note["frontmatter"]["tool"] == "claude-code"


# ----------------------------------------------------------------------------- project lookup


def _where(server: Any) -> tuple[Path, str]:
    backend = server.ocm_backend
    return backend._project.root, backend.project_source


@pytest.mark.anyio
async def test_project_from_env_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ocm_dir = git_repo(tmp_path / "from-ocm")
    claude_dir = git_repo(tmp_path / "from-claude")
    cwd_dir = git_repo(tmp_path / "from-cwd")
    monkeypatch.chdir(cwd_dir)

    async def opened() -> tuple[Path, str]:
        server = build_server()
        async with Client(server) as client:
            await ok(client, "ocm__list_sessions")
        return _where(server)

    monkeypatch.setenv("OCM_PROJECT_DIR", str(ocm_dir))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(claude_dir))
    assert await opened() == (ocm_dir.resolve(), "OCM_PROJECT_DIR")
    monkeypatch.delenv("OCM_PROJECT_DIR")
    assert await opened() == (claude_dir.resolve(), "CLAUDE_PROJECT_DIR")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert await opened() == (cwd_dir.resolve(), "cwd")
    # .vscode/mcp.json's `${workspaceFolder}` read by a client that does not expand it.
    monkeypatch.setenv("OCM_PROJECT_DIR", "${workspaceFolder}")
    assert await opened() == (cwd_dir.resolve(), "cwd")

    monkeypatch.setenv("OCM_PROJECT_DIR", str(tmp_path / "missing"))
    async with Client(build_server()) as client:
        bad = await client.call_tool("ocm__list_sessions", {})
        assert bad.is_error is True and "does not exist" in bad.content[0].text


@pytest.mark.anyio
async def test_project_from_mcp_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rooted = git_repo(tmp_path / "rooted")
    monkeypatch.chdir(git_repo(tmp_path / "elsewhere"))
    asked: list[int] = []

    async def roots(_ctx: Any) -> ListRootsResult:
        asked.append(1)
        return ListRootsResult(roots=[Root(uri=rooted.resolve().as_uri(), name="rooted")])

    server = build_server()
    async with Client(server, mode="legacy", list_roots_callback=roots) as client:
        made = await ok(client, "ocm__checkpoint", {"goal": "Rooted session"})
        await ok(client, "ocm__list_sessions")
    assert _where(server) == (rooted.resolve(), "roots")
    assert Path(made["markdown_path"]).is_relative_to(rooted.resolve() / ".openCodeMemory")
    assert asked == [1]  # asked once, then the project is kept

    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "elsewhere"))
    server = build_server()  # an environment variable wins over the roots
    async with Client(server, mode="legacy", list_roots_callback=roots) as client:
        await ok(client, "ocm__list_sessions")
    assert _where(server)[1] == "CLAUDE_PROJECT_DIR" and asked == [1]


@pytest.mark.anyio
async def test_reactivate_and_list_edits(client: Client, vault: Path) -> None:
    a = await remember(client, "Use polling for job status.", "decision")
    b = await remember(client, "Use websockets for job status.", "decision",
                       tags=["jobs", "ws"])
    await ok(client, "ocm__resolve_memory", {"id": a["id"], "superseded_by": b["id"]})
    back = await ok(client, "ocm__reactivate_memory", {"id": a["id"]})
    assert back["status"] == "active" and back["changed"] is True
    assert f"{b['id']} no longer supersedes it" in back["notice"]
    note = await ok(client, "ocm__get_note", {"id": b["id"]})
    assert "supersedes" not in note["frontmatter"]
    again = await ok(client, "ocm__reactivate_memory", {"id": a["id"]})
    assert again["changed"] is False
    assert "no session or memory with id" in await refused(
        client, "ocm__reactivate_memory", {"id": "ghost-123456"}, vault)
    edited = await ok(client, "ocm__update_memory", {"id": b["id"], "add_tags": ["realtime"],
                                                     "remove_tags": ["ws"]})
    assert edited["changed"] is True
    note = await ok(client, "ocm__get_note", {"id": b["id"]})
    assert note["frontmatter"]["tags"] == ["jobs", "realtime"]
    same = await ok(client, "ocm__update_memory", {"id": b["id"], "add_tags": ["jobs"]})
    assert same["changed"] is False
    assert "has no tag 'nope'" in await refused(
        client, "ocm__update_memory", {"id": b["id"], "remove_tags": ["nope"]}, vault)
    assert "tags replaces the list" in await refused(
        client, "ocm__update_memory", {"id": b["id"], "tags": ["x"], "add_tags": ["y"]}, vault)


@pytest.mark.anyio
async def test_no_vault_is_said_and_nothing_is_created(tmp_path: Path) -> None:
    bare = git_repo(tmp_path / "bare", init=False)
    async with Client(build_server(bare)) as client:
        for tool, args in (("ocm__remember", {"content": "x is y", "type": "gotcha"}),
                           ("ocm__checkpoint", {"goal": "g"}), ("ocm__search", {"query": "x"}),
                           ("ocm__list_sessions", {}), ("ocm__recall", {})):
            result = await client.call_tool(tool, args)
            assert result.is_error is True, tool
            text = result.content[0].text
            assert "no ocm vault at" in text and "ocm init" in text, text
    assert not (bare / ".openCodeMemory").exists()


@pytest.mark.anyio
async def test_search_and_list_memories_filter_by_author(tmp_path: Path) -> None:
    """A team vault records who wrote each memory (git name and email at write time);
    `author` on ocm__search and ocm__list_memories keeps one person's, like the CLI's
    `--author`, and says so in each result."""
    from ocm.project import Project

    root = git_repo(tmp_path / "team", init=False)
    for args in (["config", "user.name", "Ann"], ["config", "user.email", "ann@example.com"],
                 ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    Project.open(cwd=root).init(team=True)
    async with Client(build_server(root), raise_exceptions=True) as c:
        await remember(c, "Stripe retries webhooks for three days")
    for args in (["config", "user.name", "Bob"], ["config", "user.email", "bob@example.com"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    async with Client(build_server(root), raise_exceptions=True) as c:
        await remember(c, "Stripe signs the raw body")
        both = await ok(c, "ocm__search", {"query": "stripe"})
        assert {r["author"] for r in both["results"]} == {
            "Ann <ann@example.com>", "Bob <bob@example.com>"}
        found = await ok(c, "ocm__search", {"query": "stripe", "author": "ann@example"})
        assert [r["author"] for r in found["results"]] == ["Ann <ann@example.com>"]
        assert "three days" in found["results"][0]["title"]
        listed = await ok(c, "ocm__list_memories", {"author": "BOB"})
        assert [m["author"] for m in listed["memories"]] == ["Bob <bob@example.com>"]
        nobody = await ok(c, "ocm__search", {"query": "stripe", "author": "nobody"})
        assert nobody["results"] == [] and nobody["message"].startswith("No ")
        empty = await ok(c, "ocm__list_memories", {"author": "nobody"})
        assert empty["memories"] == []
        bad = await c.call_tool("ocm__search", {"query": "stripe", "author": 7})
        assert bad.is_error is True and "author" in bad.content[0].text

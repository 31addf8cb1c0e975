"""The `ocm` command end to end: human output, stable JSON, clear errors, exit codes."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ocm.cli.main import cli

from .conftest import snapshot


@pytest.fixture
def ocm(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(repo)
    runner = CliRunner()

    def run(*args: str, code: int = 0, input: str | None = None):
        result = runner.invoke(cli, list(args), input=input, catch_exceptions=False)
        assert result.exit_code == code, (args, result.output, result.stderr)
        return result

    run("init")
    return run


def js(result) -> object:
    return json.loads(result.stdout)


def test_init_is_idempotent_and_ignores_the_vault(ocm, repo: Path, ocm_home: Path) -> None:
    info = js(ocm("init", "--json"))
    assert info["vault"] == str(repo / ".openCodeMemory")
    assert info["gitignore_updated"] is False and info["registered"] is False
    assert (repo / ".gitignore").read_text().count(".openCodeMemory/") == 1
    registry = json.loads((ocm_home / "registry.json").read_text())
    assert [e["vault"] for e in registry] == [str(repo / ".openCodeMemory")]


def test_checkpoint_flags_and_json_input(ocm, repo: Path) -> None:
    out = js(ocm("checkpoint", "--tool", "cursor", "--slug", "tei-migration", "--goal",
                 "Migrate to TEI", "--done", "client swapped", "--pending", "tune batch",
                 "--plan-file", "docs/plan.md::## Plan", "--reference",
                 "https://example.com::Docs", "--json"))
    assert set(out) == {"id", "kind", "markdown_path", "status", "changed"}
    assert out["status"] == "open" and out["markdown_path"].endswith("_tei-migration.md")
    payload = json.dumps({"session_id": out["id"], "work_completed": ["batch tuned"],
                          "work_pending": [], "decisions": ["**Batch 64:** fits memory"]})
    again = js(ocm("checkpoint", "--input", "-", "--json", input=payload))
    assert again["id"] == out["id"]
    text = Path(out["markdown_path"]).read_text()
    assert "- client swapped\n- batch tuned" in text and "tune batch" not in text
    files = js(ocm("files", out["id"], "--json"))
    assert files == []
    assert ocm("export", out["id"]).stdout.strip() == out["markdown_path"]
    assert ocm("show", out["id"]).stdout == text
    closed = js(ocm("checkpoint", "--session", out["id"], "--status", "closed", "--json"))
    assert closed["status"] == "closed"


def test_remember_search_get_update_resolve_forget(ocm) -> None:
    mem = js(ocm("remember", "Stripe signature check needs the raw request body", "--type",
                 "gotcha", "--file", "src/payments/webhooks.py", "--tag", "stripe", "--json"))
    hits = js(ocm("search", "stripe", "raw", "body", "--json"))
    assert isinstance(hits, list) and hits[0]["id"] == mem["id"]
    assert set(hits[0]) >= {"rank", "score", "id", "kind", "type", "title", "date", "tool",
                            "status", "top_files", "markdown_path"}
    assert hits[0]["top_files"] == ["src/payments/webhooks.py"]
    assert js(ocm("get", mem["id"], "--json"))["frontmatter"]["type"] == "gotcha"
    ocm("update", mem["id"], "--importance", "9")
    listed = js(ocm("memories", "--type", "gotcha", "--json"))
    assert listed[0]["importance"] == 9
    assert js(ocm("resolve", mem["id"], "--reason", "handled", "--json"))[0]["status"] == (
        "resolved")
    assert js(ocm("search", "stripe", "--json")) == []
    assert len(js(ocm("search", "stripe", "--include-resolved", "--json"))) == 1
    other = js(ocm("remember", "temp", "--type", "context", "--json"))
    assert js(ocm("archive", other["id"], "--json"))["status"] == "archived"
    assert js(ocm("forget", other["id"], "--delete", "--json"))["status"] == "deleted"


def test_key_conflict_is_a_clear_error(ocm, repo: Path) -> None:
    first = js(ocm("remember", "Use Celery", "--type", "decision", "--key", "jobs", "--json"))
    before = snapshot(repo / ".openCodeMemory")
    result = ocm("remember", "Use arq", "--type", "decision", "--key", "jobs", code=1)
    assert result.stderr.startswith("error: key 'jobs' already belongs to active memory "
                                    f"{first['id']}")
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot(repo / ".openCodeMemory") == before
    ocm("remember", "Use arq", "--type", "decision", "--key", "jobs", "--supersede-reason",
        "broker dropped")
    assert js(ocm("memories", "--status", "superseded", "--json"))[0]["id"] == first["id"]


@pytest.mark.parametrize("args, message", [
    (["remember", "x", "--type", "thought"], "unknown memory type 'thought'"),
    (["remember", "", "--type", "gotcha"], "non-empty"),
    (["get", "../../etc/passwd"], "invalid note id '../../etc/passwd'"),
    (["show", "nope-123"], "no session or memory with id 'nope-123'"),
    (["resolve"], "give a memory id or --session"),
    (["search", "x", "--limit", "0"], "limit must be"),
    (["recall", "--budget", "10"], "budget must be"),
    (["checkpoint", "--input", "missing.json"], "cannot read --input"),
    (["files", "2020-01-01_00-00_cursor_none"], "no session with id"),
    (["search", "x", "--since", "whenever"], "cannot read --since"),
])
def test_bad_input_exits_1_with_one_line(ocm, repo: Path, args: list[str], message: str) -> None:
    before = snapshot(repo / ".openCodeMemory")
    result = ocm(*args, code=1)
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert snapshot(repo / ".openCodeMemory") == before


def test_list_recall_status_and_rebuild(ocm) -> None:
    ocm("checkpoint", "--tool", "codex", "--goal", "Speed up the CI pipeline",
        "--pending", "cache wheels")
    ocm("remember", "Always run ruff before pushing", "--type", "rule")
    sessions = js(ocm("list", "--json"))
    assert sessions[0]["tool"] == "codex" and sessions[0]["kind"] == "session"
    assert "Speed up the CI pipeline" in ocm("list").stdout
    brief = ocm("recall").stdout
    assert "## Principles" in brief and "Always run ruff before pushing" in brief
    assert "## Last session" in brief and "pending: cache wheels" in brief
    data = js(ocm("recall", "--json"))
    assert data["items"][0]["type"] == "principle" and data["last_session"]["tool"] == "codex"
    status = js(ocm("status", "--json"))
    assert status["sessions"] == 1 and status["memories"] == 1 and status["broken_notes"] == {}
    assert js(ocm("rebuild-index", "--json"))["indexed"] == 2
    # (its process exits without collecting; a process that goes on collects again)
    assert gc.isenabled()


def test_a_real_process_round_trip(run_ocm, repo: Path) -> None:
    run_ocm("init")
    run_ocm("remember", "-", "--type", "lesson", input="Never deploy on Fridays\n")
    found = json.loads(run_ocm("search", "deploy fridays", "--json").stdout)
    assert found[0]["type"] == "lesson"
    bad = run_ocm("remember", "x", "--type", "nonsense", check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("error: unknown memory type")
    assert "Traceback" not in bad.stderr


def test_a_rebuild_draws_its_bar_at_most_every_tenth_of_a_second(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The build reports each note; the bar keeps every count but is drawn at a steady
    rate: the first report, then once DRAW_EVERY_S has passed, and the last (done == total)
    whatever the clock says."""
    from ocm.cli import main

    clock = iter([0.0, 0.01, 0.05, 0.099, 0.1, 0.15, 0.21, 0.22, 0.23])
    monkeypatch.setattr(main.time, "monotonic", lambda: next(clock))
    seen: list[tuple[int, int, bool]] = []
    progress = main.drawn_at_most_every(main.DRAW_EVERY_S,
                                        lambda done, total, draw: seen.append((done, total,
                                                                               draw)))
    for done in range(1, 10):
        progress(done, 9)
    assert [d for d, _, _ in seen] == list(range(1, 10))  # every count reaches the bar
    assert [d for d, _, draw in seen if draw] == [1, 5, 7, 9]

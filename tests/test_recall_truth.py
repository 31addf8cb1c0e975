"""Recall states only what is true now, never drops identity, counts what it left out, and
every write sees the hook journal folded first (issue #13, wrong answers)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.markdown import Document

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env  # noqa: E402, F401 - shared fixture


def test_recall_leaves_out_what_is_no_longer_true(project: Project) -> None:
    old = project.remember("The retry queue drains every 5 minutes", "gotcha",
                           auto_supersede=False)
    new = project.remember("The retry queue drains every minute since the cron change",
                           "gotcha", auto_supersede=False)
    project.set_memory_status(old.id, "superseded", superseded_by=new.id)
    gone = project.remember("The retry queue is stuck after deploys", "bug_fix")
    project.set_memory_status(gone.id, "resolved")
    # A resolved memory only shows in search when asked; a superseded one always does.
    brief = project.recall("retry queue", fmt="json")
    ids = [item["id"] for item in brief.items]
    assert new.id in ids and old.id not in ids and gone.id not in ids
    assert all(item["status"] == "active" for item in brief.items if item["kind"] == "memory")
    assert brief.left_out >= 1
    data = json.loads(brief.text)
    assert data["left_out"] == brief.left_out
    assert {item["status"] for item in data["items"]} == {"active"}
    prompt = project.recall("retry queue").text
    assert old.id not in prompt and "5 minutes" not in prompt and new.id in prompt


def test_identity_is_never_dropped_and_dropped_counts_everything(project: Project) -> None:
    start = datetime(2026, 1, 1, 9, 0)
    me = project.remember("I maintain the payments service and its webhooks", "identity",
                          created=start)
    for n in range(110):  # newer pinned records than any listing returns
        project.remember(f"Gotcha number {n}: the widget {n} needs flag {n}", "gotcha",
                         created=start + timedelta(minutes=n + 1))
    brief = project.recall(budget=1000, fmt="json")
    ids = [item["id"] for item in brief.items]
    assert ids[0] == me.id
    assert brief.dropped == 111 - len(brief.items)  # every pinned record is counted
    assert brief.dropped > 100
    assert brief.warning and "budget" in brief.warning
    # Identity stays even when it alone overflows the budget.
    tiny = project.recall(budget=200, fmt="json")
    assert [i["id"] for i in tiny.items] == [me.id] and tiny.dropped == 110
    # A roomy budget: nothing dropped, no warning.
    roomy = project.recall(budget=100_000, fmt="json")
    assert roomy.dropped == 0 and roomy.warning is None and len(roomy.items) == 111


@pytest.mark.cli_in_process
def test_budget_warning_reaches_the_cli(run_ocm, repo: Path) -> None:
    run_ocm("init", "--agents", "none")
    for n in range(12):
        run_ocm("remember", f"Gotcha {n}: the exporter {n} truncates long lines", "--type",
                "gotcha", "--no-auto-supersede")
    out = run_ocm("recall", "--budget", "400")
    assert "% of its 400-character budget" in out.stderr
    quiet = run_ocm("recall", "--budget", "50000")
    assert "budget" not in quiet.stderr


@pytest.mark.hook_in_process  # what the hook writes, not its process
def test_importance_cap_sees_hook_reads_not_yet_folded(tmp_path: Path,
                                                       env: dict[str, str]) -> None:  # noqa: F811
    repo = h.make_repo(tmp_path / "proj")
    h.init_vault(repo, env)
    sid = "cap-session-0001"
    out = h.run_hook(["claude-code", "session-start"],
                     h.payload("claude-code", "session-start", repo, sid), env, cwd=repo)
    assert out.returncode == 0
    for n in range(6):
        data = h.payload("claude-code", "post-tool-use-read", repo, sid,
                         tool_use_id=f"toolu_read_{n}",
                         tool_input={"file_path": str(repo / f"doc{n}.md")})
        assert h.run_hook(["claude-code", "post-tool-use"], data, env, cwd=repo).returncode == 0
    journal = repo / ".openCodeMemory" / ".hooks" / "journal.jsonl"
    assert journal.read_text().count("\n") >= 6  # pending, not folded yet
    done = h.ocm_here(["remember", "constants.ts should be split", "--type", "gotcha",
                       "--importance", "9", "--session", sid, "--json"], env, repo)
    assert done.returncode == 0, done.stderr
    path = Path(json.loads(done.stdout)["markdown_path"])
    fm = Document.parse(path.read_text()).frontmatter.data
    assert fm["origin_type"] == "planning" and fm["importance"] == 5


@pytest.mark.parametrize("status", ["resolved", "archived"])
def test_recall_json_items_carry_status(project: Project, status: str) -> None:
    keep = project.remember("Deploys need the VPN on", "gotcha")
    hide = project.remember("Deploys need the staging token", "gotcha")
    project.set_memory_status(hide.id, status)
    brief = project.recall(fmt="json")
    assert [(i["id"], i["status"]) for i in brief.items] == [(keep.id, "active")]


def test_hook_brief_counts_the_notes_past_its_read_cap_and_logs_the_warning(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.agents import brief as hook_brief

    start = datetime(2026, 1, 1, 9, 0)
    me = project.remember("I maintain the payments service", "identity", created=start)
    for n in range(6):
        project.remember(f"Gotcha {n}: the widget {n} needs flag {n}", "gotcha",
                         created=start + timedelta(minutes=n + 1))
    monkeypatch.setattr(hook_brief, "MAX_PINNED_FILES", 3)  # identity is read first
    text = hook_brief.session_brief(project, "2026-01-01_09-00_claude-code", 6000, 10_000)
    assert me.id in text
    assert "(4 more memories did not fit" in text  # 4 of the 6 gotchas were never read
    log = (project.vault.root / ".hooks" / "hook.log").read_text(encoding="utf-8")
    assert "4 left out" in log
    monkeypatch.setattr(hook_brief, "MAX_PINNED_FILES", 2000)
    roomy = hook_brief.session_brief(project, "2026-01-01_09-00_claude-code", 6000, 10_000)
    assert "did not fit" not in roomy and all(f"Gotcha {n}:" in roomy for n in range(6))

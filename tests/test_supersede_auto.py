"""Auto-supersede (seed 000, no embeddings): similar newer records retire older ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.alike.supersede import judge, similarity
from ocm.vault.folder import read_document
from ocm.vault.memories import MemoryNote
from ocm.vault.sessions import CheckpointInput

from .conftest import snapshot

# run_ocm: what these check is a command's output and exit code, not a process of its own.
pytestmark = pytest.mark.cli_in_process

ROOT = Path(__file__).resolve().parent.parent
OLD = "The Postgres connection pool size is 20 per web worker."
NEW = "The Postgres connection pool size is 40 per web worker after the load test."


def memo(path: Path) -> MemoryNote:
    return MemoryNote(read_document(path))


def test_update_supersedes_with_links_both_ways(project: Project) -> None:
    old = project.remember(OLD, "decision", title="Database connection pool size",
                           files=["config/database.yml"])
    new = project.remember(NEW, "decision", title="Database connection pool size",
                           files=["config/database.yml"])
    assert new.notice and new.notice.startswith(f"superseded {old.id} (auto: similarity 0.")
    o, n = memo(old.path), memo(new.path)
    assert o.status == "superseded" and o.superseded_by == new.id and n.supersedes == old.id
    assert o.fm["resolution"].startswith(f"auto-superseded by {new.id} (similarity ")
    assert "same file" in o.fm["resolution"]
    hits = project.search("connection pool size")
    assert [h.id for h in hits] == [new.id, old.id] and hits[1].status == "superseded"


def test_look_alikes_survive(project: Project) -> None:
    a = project.remember("Idempotency keys are stored in Redis with a 24 h TTL.", "decision",
                         title="Redis TTL for idempotency keys")
    b = project.remember("The session cache is stored in Redis with a 1 h TTL.", "decision",
                         title="Redis TTL for session cache")
    assert b.notice is None and memo(a.path).status == "active"


def test_the_rules_before_similarity(project: Project) -> None:
    # another type
    project.remember(OLD, "decision", files=["config/database.yml"])
    other = project.remember(OLD, "discovery", files=["config/database.yml"])
    assert other.notice is None
    # within one session
    sid = project.checkpoint(CheckpointInput(goal="Pool tuning"), tool="codex").id
    first = project.remember(OLD, "gotcha", session=sid)
    second = project.remember(NEW, "gotcha", session=sid)
    assert second.notice is None and memo(first.path).status == "active"
    # across scopes
    user = project.remember(OLD, "preference", scope="user")
    here = project.remember(OLD, "preference")
    assert here.notice is None and memo(user.path).status == "active"
    # keyed records have their own explicit supersede (a copy of one is only pointed out)
    keyed = project.remember(OLD, "procedure", key="db.pool")
    plain = project.remember(OLD, "procedure")
    assert plain.notice.startswith(f"nearly the same as active {keyed.id} ")
    assert memo(keyed.path).status == "active"
    # session summaries never
    s1 = project.remember(OLD, "session_summary")
    s2 = project.remember(OLD, "session_summary")
    assert s2.notice is None and memo(s1.path).status == "active"
    # opt-out
    o1 = project.remember(OLD, "lesson")
    o2 = project.remember(OLD, "lesson", auto_supersede=False)
    assert o2.notice.startswith(f"nearly the same as active {o1.id} ")
    assert memo(o1.path).status == "active"


def test_stricter_without_a_shared_file() -> None:
    text_a = "Run the test suite with make test (ruff then pytest)."
    text_b = "Run the test suite with make test (ruff then pytest -x), make test-fast skips."
    score = similarity("Run the test suite", text_a, "Run the test suite", text_b)
    shared = judge("Run the test suite", text_a, ["Makefile"], "Run the test suite", text_b,
                   ["Makefile"])
    alone = judge("Run the test suite", text_a, [], "Run the test suite", text_b, [])
    assert shared.score == alone.score == score
    assert shared.threshold < alone.threshold


def test_supersede_command_dry_run_then_apply(project: Project, run_ocm) -> None:
    old = project.remember(OLD, "decision", files=["config/database.yml"],
                           title="Database connection pool size", auto_supersede=False)
    new = project.remember(NEW, "decision", files=["config/database.yml"],
                           title="Database connection pool size", auto_supersede=False)
    keep = project.remember("Feature flags are managed in LaunchDarkly.", "decision")
    before = snapshot(project.vault.root)
    out = run_ocm("supersede", "--dry-run").stdout
    assert f"{old.id} would be superseded by {new.id}" in out and keep.id not in out
    assert snapshot(project.vault.root) == before
    [row] = json.loads(run_ocm("supersede", "--json").stdout)
    assert row["applied"] and row["old_id"] == old.id and row["new_id"] == new.id
    assert memo(old.path).status == "superseded" and memo(new.path).supersedes == old.id
    assert "Nothing to supersede" in run_ocm("supersede", "--dry-run").stdout
    # OLD again nearly copies the superseded record: stored only when forced
    # (tests/test_tombstones.py); with --no-auto-supersede it retires nothing.
    cli = json.loads(run_ocm("remember", OLD + " Again.", "--type", "decision",
                             "--no-auto-supersede", "--force", "--json").stdout)
    assert "notice" not in cli


def test_supersede_command_names_a_plan_reported_done(project: Project, run_ocm) -> None:
    files = ["src/lib/constants.ts"]
    old = project.remember("constants.ts is 800 lines and should be split", "gotcha",
                           files=files, auto_supersede=False)
    new = project.remember("constants.ts was refactored into domain modules", "gotcha",
                           files=files, auto_supersede=False)
    out = run_ocm("supersede", "--dry-run").stdout
    assert f"{old.id} would be superseded by {new.id}" in out
    assert "plan reported done: 'split' done: 'refactored into domain modules'" in out
    [row] = json.loads(run_ocm("supersede", "--dry-run", "--json").stdout)
    assert row["done"] and row["done"] in row["why"] and not row["applied"]


def test_bench_precision_meets_the_bar() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "supersede.py")],
                          capture_output=True, text=True, check=True, timeout=300)
    report = json.loads(done.stdout)
    assert report["all"]["pairs"] >= 50
    pairs = [json.loads(line) for line in (ROOT / "bench" / "data" / "coding" /
                                           "supersede_pairs.jsonl").read_text().splitlines()]
    assert sum(p["label"] == "supersede" for p in pairs) == len(pairs) // 2
    for split in ("tune", "test", "all", "product_path_all"):
        assert report[split]["precision"] >= 0.95, (split, report[split])
    assert report["product_path_all"] == report["all"]
    assert report["all"]["recall"] >= 0.5


def test_candidates_come_from_the_index_not_the_whole_folder(project, monkeypatch) -> None:
    import ocm.project

    monkeypatch.setattr(ocm.project, "SUPERSEDE_SCAN_MAX", 5)
    old = project.remember("Background jobs run on Celery with a Redis broker", "decision")
    for i in range(20):
        project.remember(f"Unrelated decision number {i} about CSS grid layout", "decision",
                         auto_supersede=False)
    project.search("css grid")  # commits the writes: none is compared for being new
    found = project._supersede_candidates(project.vault, "decision", None,
                                          "Background jobs now run on arq with Redis")
    assert found is not None and old.path in found
    assert len(found) < 21


def test_long_texts_never_auto_supersede(project) -> None:
    chat = "\n".join(f"Emi: I went hiking near the lake on day {i}." for i in range(60))
    first = project.remember(chat, "context", title="Emi and Elise, session 1")
    second = project.remember(chat.replace("hiking", "cycling"), "context",
                              title="Emi and Elise, session 2")
    assert second.notice is None
    assert project.get(first.id)["frontmatter"]["status"] == "active"


def test_backdated_writes_never_auto_supersede(project) -> None:
    from datetime import datetime

    first = project.remember("Background jobs run on Celery with a Redis broker", "decision")
    again = project.remember("Background jobs run on Celery with a Redis broker today",
                             "decision", created=datetime(2025, 1, 1))
    assert again.notice is None  # neither superseded nor pointed out: a backfill
    assert project.get(first.id)["frontmatter"]["status"] == "active"

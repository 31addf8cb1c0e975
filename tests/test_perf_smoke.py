"""The speed benchmark runs end to end and reports every figure (speed is never asserted), and
the performance machinery it measures keeps search results exactly fresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ocm.project import Project

REPO = Path(__file__).resolve().parent.parent
PERF = REPO / "bench" / "perf.py"
KEYS = {"notes", "build_notes_per_s", "search_p50_ms", "search_p95_ms", "cli_search_ms",
        "noop_refresh_ms", "incremental_10_ms", "checkpoint_ms", "remember_ms", "hook_ms",
        "python_pass_ms", "index_mb"}


def test_perf_json_has_exactly_the_keys_and_sane_values(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCM_")}
    out = subprocess.run([sys.executable, str(PERF), "--notes", "200", "--json", "--quick"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert set(data) == KEYS
    assert data["notes"] == 200
    for key in KEYS - {"notes"}:
        assert isinstance(data[key], int | float) and data[key] > 0, key
    assert data["search_p95_ms"] >= data["search_p50_ms"]
    assert data["index_mb"] < 200


def test_generator_is_deterministic_and_writes_real_formats(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import perf
    finally:
        sys.path.remove(str(REPO / "bench"))
    a = perf.generate_vault(tmp_path / "a", 60, seed=3)
    b = perf.generate_vault(tmp_path / "b", 60, seed=3)
    assert a == b and len(a["session"]) + len(a["memory"]) == 60
    first = (tmp_path / "a" / a["session"][0]).read_text(encoding="utf-8")
    assert first == (tmp_path / "b" / b["session"][0]).read_text(encoding="utf-8")
    assert "## Goal" in first and "### ✅ Work Completed" in first
    project = Project.open(vault=tmp_path / "a", cwd=tmp_path)
    report = project.rebuild_index()
    assert report.added == 60 and not report.broken
    assert project.search(perf.make_queries(5)[0]) is not None


def test_reused_searcher_sees_every_change_across_commits(tmp_path: Path) -> None:
    """Segment readers are recycled between commits; updates, deletions and merges of small
    segments must still show exactly the current notes."""
    project = Project.open(vault=tmp_path / "v", cwd=tmp_path)
    ids = [project.remember(f"zebracorn gotcha number {i} about widgets", "gotcha",
                            title=f"widget note {i}").id for i in range(3)]
    assert {h.id for h in project.search("zebracorn")} == set(ids)
    # Many small commits: each adds a segment, and small ones get merged along the way.
    for i in range(12):
        ids.append(project.remember(f"zebracorn later note {i}", "gotcha",
                                    title=f"later {i}").id)
        assert len(project.search("zebracorn", limit=50)) == len(ids)
    gone = project.vault.find_memory(ids[0])
    gone.unlink()
    edited = project.vault.find_memory(ids[1])
    edited.write_text(edited.read_text(encoding="utf-8").replace("zebracorn", "quokkafish"),
                      encoding="utf-8")
    found = {h.id for h in project.search("zebracorn", limit=50)}
    assert found == set(ids[2:])
    assert [h.id for h in project.search("quokkafish")] == [ids[1]]
    index = project.index_for(project.vault)
    segments = index.searcher().ixreader.leaf_readers()
    assert len(segments) <= 6  # small segments were merged, not piled up


def test_write_benchmark_reports_and_leaves_the_kept_vault_alone(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import perf
    finally:
        sys.path.remove(str(REPO / "bench"))
    perf.Bench(60, tmp_path / "kept").setup()
    vault = tmp_path / "kept" / "project" / ".openCodeMemory"
    before = sorted(p.relative_to(vault) for p in vault.rglob("*.md"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCM_")}
    out = subprocess.run([sys.executable, str(REPO / "bench" / "writes.py"), "--vault-dir",
                          str(tmp_path / "kept"), "--notes", "60", "--json"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert data["notes"] == 60
    for key in ("remember_ms", "remember_cpu_ms", "incremental_10_ms", "incremental_10_cpu_ms"):
        assert isinstance(data[key], int | float) and data[key] > 0, key
    assert sorted(p.relative_to(vault) for p in vault.rglob("*.md")) == before

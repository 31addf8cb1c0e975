"""Cross-project memory: `--scope global` over every registered vault, `ocm projects`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault import projects as registry

from .conftest import make_repo

# run_ocm: what these check is a command's output and exit code, not a process of its own.
pytestmark = pytest.mark.cli_in_process


def two_projects(tmp_path: Path) -> tuple[Project, Project]:
    a = Project.open(cwd=make_repo(tmp_path / "alpha"))
    a.init()
    b = Project.open(cwd=make_repo(tmp_path / "beta"))
    b.init()
    return a, b


def test_global_search_merges_vaults_labelled_by_project(tmp_path: Path) -> None:
    a, b = two_projects(tmp_path)
    a.remember("Postgres connection pool is 20 in alpha", "decision")
    for i in range(30):  # beta's index has many more documents: a different BM25 scale
        b.remember(f"unrelated beta note number {i} about widgets", "context")
    b.remember("Postgres connection pool is 40 in beta", "decision")
    b.remember("Use the user vault for preferences", "preference", scope="user")
    hits = a.search("postgres connection pool", scope="global")
    by_project = {h.project: h for h in hits}
    assert set(by_project) == {"alpha", "beta"}
    assert all(h.to_json()["project"] in ("alpha", "beta") for h in hits)
    # normalised: each vault's best match reaches the same score
    assert abs(by_project["alpha"].score - by_project["beta"].score) < 1e-6 * max(
        by_project["alpha"].score, 1)
    assert [h.project for h in a.search("postgres connection pool")] == ["alpha"]
    assert [h.project for h in a.search("user vault preferences", scope="global")] == ["user"]


def test_projects_lists_and_prunes_the_registry(tmp_path: Path, run_ocm) -> None:
    a, b = two_projects(tmp_path)
    a.remember("alpha fact", "discovery")
    info = a.projects()
    rows = {r["project"]: r for r in info["projects"]}
    assert set(rows) == {"alpha", "beta"}
    assert rows["alpha"]["current"] and rows["alpha"]["memories"] == 1 and rows["alpha"]["exists"]
    entries = registry.read_registry()
    registry.write_registry(entries + [entries[0]])  # a repeated entry
    shutil.rmtree(b.vault.root)
    dry = a.projects(prune=True, dry_run=True)
    assert sorted(r["problem"] for r in dry["removed"]) == ["duplicate entry",
                                                           "vault folder is missing"]
    assert len(registry.read_registry()) == 3  # dry run changed nothing
    out = run_ocm("projects", "--prune", cwd=a.root).stdout
    assert "Removed beta" in out and "vault folder is missing" in out
    assert [e["project"] for e in registry.read_registry()] == ["alpha"]
    listed = json.loads(run_ocm("projects", "--json", cwd=a.root).stdout)
    assert [r["project"] for r in listed["projects"]] == ["alpha"]
    assert "Nothing to prune" in run_ocm("projects", "--prune", cwd=a.root).stdout
    # global search skips nothing it can reach and never fails on a pruned vault
    assert [h.project for h in a.search("alpha fact", scope="global")] == ["alpha"]


def test_cli_global_search_labels_projects(tmp_path: Path, run_ocm) -> None:
    a, b = two_projects(tmp_path)
    a.remember("Feature flags live in LaunchDarkly", "decision")
    b.remember("Feature flags live in Unleash", "decision")
    out = run_ocm("search", "feature flags", "--scope", "global", cwd=a.root).stdout
    assert "[alpha]" in out and "[beta]" in out
    found = json.loads(run_ocm("search", "feature flags", "--scope", "global", "--json",
                               cwd=a.root).stdout)
    assert {h["project"] for h in found} == {"alpha", "beta"}

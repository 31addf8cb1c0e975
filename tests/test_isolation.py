"""Project-scope search never shows another project's notes; only `--scope global` does;
project notes never land in the user vault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import make_repo
from tests.test_stress_writers import load_stress

stress = load_stress()


def test_scopes_keep_projects_apart(tmp_path: Path) -> None:
    report = stress.Report()
    stress.run_isolation(tmp_path, report)
    assert report.problems == []


@pytest.mark.cli_in_process
def test_cli_scopes(tmp_path: Path, run_ocm, ocm_home: Path) -> None:
    alpha = make_repo(tmp_path / "alpha")
    beta = make_repo(tmp_path / "beta")
    for repo, word in ((alpha, "alphaonly"), (beta, "betaonly")):
        run_ocm("init", cwd=repo)
        run_ocm("remember", f"commonword {word} fact", "--type", "gotcha", cwd=repo)

    def ids(*args: str, cwd: Path) -> set[str]:
        return {h["id"] for h in json.loads(run_ocm("search", *args, "--json", cwd=cwd).stdout)}

    (beta_id,) = ids("betaonly", cwd=beta)
    assert beta_id not in ids("betaonly", cwd=alpha)
    assert len(ids("commonword", cwd=alpha)) == 1
    assert len(ids("commonword", "--scope", "global", cwd=alpha)) == 2
    assert len(ids("betaonly", "--scope", "global", cwd=alpha)) == 1
    assert ids("commonword", "--scope", "user", cwd=alpha) == set()
    assert not (ocm_home / "memories").exists() or not any((ocm_home / "memories").rglob("*.md"))

"""What a fresh `ocm search` starts before it imports what it needs (ocm/cli/searching.py
`located`, `look_ahead`): the index's files read in full in a thread (checksums.py) and the
freshness scan in a child (scanahead.py), both started on the vault the command names before
its values are checked (which imports ocm.project, whoosh and numpy). What must hold: the
thread starts before those imports, a damaged file is still never read, and a listing that
the search did not take (click runs the command instead) is never left for a later search."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from ocm.cli import searching
from ocm.indexer import checksums
from ocm.project import Project
from ocm.vault import paths as vault_paths
from ocm.vault.errors import InvalidInput
from ocm.vault.freshness import scanahead

from .conftest import ocm_in_process

NOW = datetime(2026, 11, 20, 12, 0)


@pytest.fixture
def indexed(project: Project, keyword_only: None) -> Project:
    for i in range(12):
        project.remember(f"redis ttl eviction case {i}", "gotcha", title=f"redis {i}",
                         created=NOW)
    project.rebuild_index()
    return project


def test_the_index_is_read_ahead_before_the_search_imports(indexed: Project) -> None:
    """In a new process, the thread reading the index's files starts before ocm.project,
    whoosh or numpy is imported, and the search still answers."""
    # (Told by an exit handler: a search's process ends at once after its answer.)
    code = (
        "import atexit, sys\nfrom ocm.indexer import checksums\nseen = []\n"
        "real = checksums.check_ahead\n"
        "def watched(folder, also=()):\n"
        "    seen.append(sorted(m for m in ('ocm.project', 'whoosh', 'numpy')"
        " if m in sys.modules))\n"
        "    real(folder, also)\n"
        "checksums.check_ahead = watched\n"
        "from ocm.cli import lean\n"
        "sys.argv = ['ocm', 'search', '--json', 'redis', 'ttl']\n"
        "atexit.register(lambda: sys.stderr.write(str(seen[0])))\n"
        "lean.main()\n")
    env = {**os.environ, "OCM_VAULT": str(indexed.vault.root)}
    done = subprocess.run([sys.executable, "-c", code], cwd=indexed.root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "[]"), done.stderr
    assert len(json.loads(done.stdout)) == 10


def test_a_search_of_a_named_vault_imports_no_subprocess(indexed: Project) -> None:
    """A fresh search of a named vault starts its `find` without the subprocess module
    (and the modules it imports) and still takes its listing, the first time (recorded) and
    the next (compared with the one recorded), and answers as a search that checks the notes
    itself."""
    code = (
        "import atexit, sys\nfrom ocm.vault.freshness import scanahead\ntaken = []\n"
        "real = scanahead.take\n"
        "def watched(*args):\n"
        "    listing = real(*args)\n"
        "    taken.append(listing is not None)\n"
        "    return listing\n"
        "scanahead.take = watched\n"
        "from ocm.cli import lean\n"
        "sys.argv = ['ocm', 'search', '--json', 'redis', 'ttl']\n"
        "atexit.register(lambda: sys.stderr.write(repr(('subprocess' in sys.modules, taken))))\n"
        "lean.main()\n")
    env = {**os.environ, "OCM_VAULT": str(indexed.vault.root)}
    expected = [h.id for h in indexed.search("redis ttl")]
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], cwd=indexed.root, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert (done.returncode, done.stderr) == (0, "(False, [True])"), done.stderr
        assert [h["id"] for h in json.loads(done.stdout)] == expected


@pytest.mark.parametrize("args", [["--limit", "abc", "redis"], ["--kind", "Memory", "redis"]])
def test_a_search_click_must_run_leaves_no_listing_behind(
        indexed: Project, ocm_home: Path, args: list[str]) -> None:
    """Values the lean path hands to click (which refuses them): the scan started ahead is
    dropped, not left for a later search of this process to take as current."""
    env = {**os.environ, "OCM_HOME": str(ocm_home), "OCM_VAULT": str(indexed.vault.root)}
    refused = ocm_in_process(["search", *args], indexed.root, env, None)
    assert refused.returncode == 1 and refused.stdout == "" and args[0] in refused.stderr
    assert not scanahead.started(str(indexed.vault.root))
    assert str(indexed.vault.root) not in scanahead._AHEAD
    # A note written since is found by the next search of this process.
    indexed.remember("zeppelin moored at the hangar", "gotcha", title="zeppelin",
                     created=NOW)
    found = ocm_in_process(["search", "--json", "zeppelin"], indexed.root, env, None)
    assert found.returncode == 0
    assert [h["title"] for h in json.loads(found.stdout)] == ["zeppelin"]


def test_a_vault_that_cannot_be_found_starts_nothing(
        tmp_path: Path, run_ocm: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    """A named vault that is a file: nothing is started ahead, and the search says why in
    one line."""
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    assert searching.located(str(afile)) is None
    assert str(afile) not in scanahead._AHEAD and os.fspath(afile) not in checksums._AHEAD
    done = run_ocm("search", "--vault", str(afile), "redis", check=False)
    assert done.returncode != 0 and done.stdout == ""
    assert "not-a-folder" in done.stderr and done.stderr.count("\n") == 1


def test_a_vault_with_no_index_starts_no_scan(project: Project) -> None:
    """No manifest: no `find` and no thread (the first search lists the notes by name)."""
    shutil.rmtree(project.vault.index_dir, ignore_errors=True)
    location = searching.located(str(project.vault.root))
    assert location is not None and location[0] == project.vault.root
    assert str(project.vault.root) not in scanahead._AHEAD
    assert os.fspath(project.vault.index_dir) not in checksums._AHEAD


def test_locate_finds_what_project_open_found(repo: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OCM_VAULT", raising=False)
    inner = repo / "sub"
    inner.mkdir()
    assert vault_paths.locate(cwd=inner) == (repo / vault_paths.VAULT_DIRNAME, repo, False)
    named = tmp_path / "elsewhere" / vault_paths.VAULT_DIRNAME
    assert vault_paths.locate(named, repo) == (named, named.parent, True)
    monkeypatch.setenv("OCM_VAULT", str(tmp_path / "plain"))
    assert vault_paths.locate(cwd=repo) == (tmp_path / "plain", tmp_path / "plain", True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput, match="is not a folder"):
        vault_paths.locate(tmp_path / "file", repo)
    with pytest.raises(InvalidInput, match="does not exist"):
        vault_paths.locate(None, tmp_path / "missing")

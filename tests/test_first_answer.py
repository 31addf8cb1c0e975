"""A first search that finds no usable index (a fresh clone, a deleted `.index/`) answers
from the notes indexed so far and says so; a process of its own builds the rest, and later
answers are complete. A `kill -9` mid-build loses nothing: the next process resumes.

Through the real `ocm` CLI and a real `ocm mcp` spoken to with the MCP SDK's client.
OCM_FIRST_ANSWER_S=0 and OCM_FIRST_ANSWER_MIN_NOTES=0 make the bound deterministic: the
first search indexes one note, then answers (bench/clone.py measures the seconds).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from ocm.indexer import index as index_module
from ocm.indexer.index import BUILDING, NoteIndex
from ocm.project import Project

from .conftest import VENV_BIN

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from clone import until_whole  # noqa: E402  (bench/clone.py: waits for a vault's builder)

NOTES = 240
REPO = Path(__file__).resolve().parents[1]
WAIT_S = 180.0
# The first search indexes one note, then answers.
FIRST_NOTE = {"OCM_FIRST_ANSWER_S": "0", "OCM_FIRST_ANSWER_MIN_NOTES": "0"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _vault_of(project: Project, notes: int) -> Path:
    """`notes` memories: bulk-0000 (first in path order) alone holds `zebrafirst`, the last
    alone holds `zebralast`; all hold `sharedword`."""
    template = project.remember("Kafka consumers commit offsets after the write.", "gotcha",
                                title="Kafka offsets").path
    text = template.read_text()
    stem = template.stem
    for i in range(notes):
        marker = "zebrafirst" if i == 0 else "zebralast" if i == notes - 1 else ""
        body = f"Note {i} sharedword {marker} " + " ".join(
            f"word{(i * 7 + j) % 997}" for j in range(120))
        note = text.replace(stem, f"bulk-{i:04d}").replace(
            "Kafka consumers commit offsets after the write.", body)
        (template.parent / f"bulk-{i:04d}.md").write_text(note)
    template.unlink()
    return project.vault.root


def _env(ocm_home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "OCM_HOME": str(ocm_home), "OCM_SEMANTIC": "0", **extra}


def _search(repo: Path, env: dict[str, str], *query: str) -> tuple[list[dict], str]:
    done = subprocess.run([str(VENV_BIN / "ocm"), "search", "--json", "--limit", "50", *query],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def _whole_search(project: Project, repo: Path, ocm_home: Path) -> tuple[Path, list[dict]]:
    """The vault of NOTES notes, its index built in full, and what `sharedword` finds."""
    vault = _vault_of(project, NOTES)
    env = _env(ocm_home)
    subprocess.run([str(VENV_BIN / "ocm"), "rebuild-index", "--json"], cwd=repo, env=env,
                   check=True, capture_output=True)
    whole, _ = _search(repo, env, "sharedword")
    assert len(whole) == 50 and not any("indexing" in hit for hit in whole)
    return vault, whole


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cli_first_search_answers_from_part_then_later_ones_are_whole(
        project: Project, repo: Path, ocm_home: Path) -> None:
    vault, whole = _whole_search(project, repo, ocm_home)
    env = _env(ocm_home)
    shutil.rmtree(vault / ".index")  # what a fresh clone has

    first, err = _search(repo, _env(ocm_home, **FIRST_NOTE), "sharedword")
    # One note indexed: the newest (the last written; of equal times, the last path); the
    # answer says how far it got.
    assert [hit["id"] for hit in first] == [f"bulk-{NOTES - 1:04d}"]
    assert first[0]["indexing"] == {"indexed": 1, "total": NOTES}
    assert f"indexing under way: 1 of {NOTES} notes indexed so far" in err

    until_whole(vault, [0, 0])  # the first search started the build of the rest
    again, err = _search(repo, env, "sharedword")
    assert "indexing" not in err and not any("indexing" in hit for hit in again)
    assert [(h["id"], h["score"]) for h in again] == [(h["id"], h["score"]) for h in whole]
    last, _ = _search(repo, env, "zebralast")
    assert [hit["id"] for hit in last] == [f"bulk-{NOTES - 1:04d}"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_mid_build_loses_nothing_and_the_next_process_resumes(
        project: Project, repo: Path, ocm_home: Path) -> None:
    vault, whole = _whole_search(project, repo, ocm_home)
    env = _env(ocm_home)
    proc = subprocess.Popen([str(VENV_BIN / "ocm"), "rebuild-index", "--json"], cwd=repo,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + WAIT_S
    while not (vault / ".index" / BUILDING).exists() and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if not (vault / ".index" / BUILDING).exists():
        pytest.skip("the rebuild finished before it could be killed")

    first, err = _search(repo, _env(ocm_home, **FIRST_NOTE), "sharedword")
    assert "indexing under way" in err
    assert all(hit["indexing"]["total"] == NOTES for hit in first)
    until_whole(vault, [0, 0])
    again, _ = _search(repo, env, "sharedword")
    assert [(h["id"], h["score"]) for h in again] == [(h["id"], h["score"]) for h in whole]
    assert not (vault / ".index" / BUILDING).exists()


def test_a_build_cut_short_keeps_its_committed_batches(
        project: Project, monkeypatch: pytest.MonkeyPatch, keyword_only: None) -> None:
    """Batches are committed with the manifest: a build that dies in its third batch keeps
    the first two, and the next sync builds only the rest (no start over)."""
    _vault_of(project, NOTES)
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 60)  # 4 batches, ~60 notes each
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES // 50 + 1)
    index = NoteIndex(project.vault)
    fields = NoteIndex._fields
    read: list[str] = []

    def dying(self: NoteIndex, rel: str) -> Any:
        if len(read) == 150:
            raise KeyboardInterrupt  # the process dies mid-batch
        read.append(rel)
        return fields(self, rel)

    monkeypatch.setattr(NoteIndex, "_fields", dying)
    with pytest.raises(KeyboardInterrupt):
        index.sync(force_rebuild=True)
    index.close()
    monkeypatch.setattr(NoteIndex, "_fields", fields)
    kept = json.loads((project.vault.index_dir / "manifest.json").read_text())["notes"]
    assert 100 <= len(kept) <= 140 and set(kept) == set(read[:len(kept)])

    again = NoteIndex(project.vault)
    counted: list[str] = []
    monkeypatch.setattr(NoteIndex, "_fields", lambda self, rel: (counted.append(rel),
                                                               fields(self, rel))[1])
    report = again.sync()
    assert not report.rebuilt and report.added == NOTES - len(kept)
    assert not set(counted) & set(kept)  # the first two batches were not read again
    assert again.progress is None and not (project.vault.index_dir / BUILDING).exists()
    assert again.searcher().doc_count() == NOTES


@pytest.mark.anyio
async def test_mcp_first_search_is_partial_and_later_ones_complete(
        project: Project, repo: Path, ocm_home: Path, tmp_path: Path) -> None:
    vault = _vault_of(project, NOTES)
    shutil.rmtree(vault / ".index")
    env = {"OCM_HOME": str(ocm_home), "OCM_PROJECT_DIR": str(repo), "HOME": str(tmp_path),
           "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO),
           "OCM_SEMANTIC": "0", **FIRST_NOTE}
    params = StdioServerParameters(command=sys.executable, args=["-m", "ocm.cli.main", "mcp"],
                                   env=env, cwd=str(tmp_path))
    with anyio.fail_after(WAIT_S + 60), (tmp_path / "server.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            first = await client.call_tool("ocm__search", {"query": "sharedword"})
            assert first.is_error is not True, first.content
            out: dict[str, Any] = first.structured_content or {}
            assert out["indexing"] == {"indexed": 1, "total": NOTES}
            assert [r["id"] for r in out["results"]] == [f"bulk-{NOTES - 1:04d}"]
            assert f"indexing under way: 1 of {NOTES} notes" in out["message"]
            while True:  # the server's builder finishes the rest meanwhile
                later = (await client.call_tool(
                    "ocm__search", {"query": "zebralast"})).structured_content or {}
                if later["indexing"] is None:
                    break
                assert later["indexing"]["indexed"] <= NOTES
                await anyio.sleep(0.3)
            assert [r["id"] for r in later["results"]] == [f"bulk-{NOTES - 1:04d}"]
            assert "indexing" not in later["message"]


def _budgeted(project: Project) -> NoteIndex:
    """The index of a first search: it indexes one note, then answers."""
    index = NoteIndex(project.vault)
    index.build_budget, index.budget_min_notes = 0.0, 0
    return index


def _manifest_notes(project: Project) -> dict[str, list[int]]:
    return json.loads((project.vault.index_dir / "manifest.json").read_text())["notes"]


def test_a_first_search_with_no_index_looks_only_at_what_it_indexes(
        project: Project, monkeypatch: pytest.MonkeyPatch, keyword_only: None) -> None:
    """No `stat` of every note before the first answer: the notes are listed by name, the
    newest (the last path: sessions are named by their start) read first, and only the
    note indexed is looked at; its real signature goes into the manifest."""
    _vault_of(project, NOTES)
    shutil.rmtree(project.vault.index_dir)

    def no_scan(*_: Any, **__: Any) -> Any:
        raise AssertionError("a full scan before the first answer")

    looked: list[str] = []
    signature = type(project.vault).note_signature
    monkeypatch.setattr(NoteIndex, "_scan", no_scan)
    monkeypatch.setattr(type(project.vault), "note_signature",
                        lambda self, rel: (looked.append(rel), signature(self, rel))[1])
    index = _budgeted(project)
    report = index.sync()
    last = f"memories/gotcha/bulk-{NOTES - 1:04d}.md"
    assert index.progress == (1, NOTES) and index.build_left and report.rebuilt
    assert looked == [last]
    stat = (project.vault.root / last).stat()
    assert _manifest_notes(project) == {last: [stat.st_mtime_ns, stat.st_size]}
    assert [hit["path"] for hit in index.searcher().all_stored_fields()] == [last]


class _TickingClock:
    """`time` as index.py sees it, but each `monotonic()` one second after the last."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def test_a_first_search_reads_for_part_of_its_budget_and_commits_in_the_rest(
        project: Project, monkeypatch: pytest.MonkeyPatch, keyword_only: None) -> None:
    """The budget bounds the reading and the commit of what was read: the reading stops at
    READ_SHARE of it (a clock that ticks a second per look: a 10 s budget reads 5 s at
    most), and the answer says how far it got."""
    _vault_of(project, NOTES)
    shutil.rmtree(project.vault.index_dir)
    monkeypatch.setattr(index_module, "time", _TickingClock())
    index = NoteIndex(project.vault)
    index.build_budget, index.budget_min_notes = 10.0, 0
    index.sync()
    read = index.progress[0] if index.progress else 0
    assert 1 < read <= 10.0 * index_module.READ_SHARE < NOTES
    assert index.progress == (read, NOTES) and index.build_left
    assert len(_manifest_notes(project)) == read
    assert len(list(index.searcher().all_stored_fields())) == read


def test_a_broken_note_in_the_first_answer_is_reported_and_the_build_goes_on(
        project: Project, keyword_only: None) -> None:
    vault = _vault_of(project, NOTES)
    broken = vault / "memories" / "gotcha" / "zz-broken.md"  # the last path: read first
    broken.write_text("---\nid: [unclosed\n---\nbody\n")
    shutil.rmtree(project.vault.index_dir)
    index = _budgeted(project)
    report = index.sync()
    rel = "memories/gotcha/zz-broken.md"
    assert list(report.broken) == [rel] and index.progress == (1, NOTES + 1)
    index.close()
    rest = NoteIndex(project.vault)  # the background build's
    report = rest.sync()
    assert not report.rebuilt and report.added == NOTES and list(rest.broken) == [rel]
    assert rest.progress is None and rest.searcher().doc_count() == NOTES
    assert not (project.vault.index_dir / BUILDING).exists()


def test_a_first_search_that_meets_another_build_compares_signatures(
        project: Project, monkeypatch: pytest.MonkeyPatch, keyword_only: None) -> None:
    """Two first searches at once: the one that listed the notes by name and then finds
    the other's build committed compares the notes by their real signatures (none is
    stored without one, none is indexed twice)."""
    _vault_of(project, NOTES)
    shutil.rmtree(project.vault.index_dir)
    names = index_module.names

    def other_first(root: str) -> list[str]:
        listed = names(root)
        monkeypatch.setattr(index_module, "names", names)  # the other lists as usual
        other = _budgeted(project)
        other.sync()  # commits its first note (and the manifest) meanwhile
        other.close()
        return listed

    monkeypatch.setattr(index_module, "names", other_first)
    index = _budgeted(project)
    index.sync()
    notes = _manifest_notes(project)
    assert len(notes) == 2 and all(sig[0] > 0 and sig[1] > 0 for sig in notes.values())
    assert index.searcher().doc_count() == 2 and index.progress == (2, NOTES)


def test_an_index_that_lost_only_its_manifest_is_compared_by_signatures(
        project: Project, keyword_only: None) -> None:
    """No manifest but an index: not a new index, so no note is taken by name unseen."""
    _vault_of(project, NOTES)
    NoteIndex(project.vault).sync(force_rebuild=True)
    (project.vault.index_dir / "manifest.json").unlink()
    index = _budgeted(project)
    index.sync()
    notes = _manifest_notes(project)
    assert len(notes) == NOTES and all(sig[0] > 0 and sig[1] > 0 for sig in notes.values())
    assert index.progress is None and index.searcher().doc_count() == NOTES

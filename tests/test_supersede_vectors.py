"""Auto-supersede's candidates from the notes' embeddings in a watching process (issue #17).

A process whose index watches the vault (the MCP server) takes a new memory's candidates
from the rows of `NoteIndex.vectors` closest to its text, not from the postings of its
words; with meaning off (OCM_SEMANTIC=0) it reads the postings as before. Real Whoosh
indexes, real embeddings, real inotify watches, on the coding vault's records."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import ocm.project
from ocm.indexer.postings import PostingScorer
from ocm.project import Project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import supersede_candidates  # noqa: E402  (bench/supersede_candidates.py: its vault)

# Synthetic notes generated for their memories (a fifth of them), of every type.
GENERATED = 1500


@pytest.fixture
def coding(project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
           ) -> tuple[Project, list[tuple[dict, Path]]]:
    """The coding vault's records, generated records of every type and every `supersede`
    pair's older record, in a project past the small-folder shortcut whose index watches
    the vault and has committed them all; with each pair and its older record's path."""
    monkeypatch.setattr(ocm.project, "SUPERSEDE_SCAN_MAX", 5)
    return project, supersede_candidates.fill(project, tmp_path, GENERATED)


def _found(project: Project, pair: dict) -> list[Path]:
    new = pair["new"]
    found = project._supersede_candidates(project.vault, pair["type"], new["title"],
                                          new["content"])
    assert found is not None
    return [path.resolve() for path in found]


def _count_postings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = PostingScorer.top

    def top(self: PostingScorer, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PostingScorer, "top", top)
    return calls


def test_the_older_record_is_a_candidate_as_often_as_with_the_postings(
        coding: tuple[Project, list[tuple[dict, Path]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    project, olds = coding
    calls = _count_postings(monkeypatch)
    by_meaning = [old in _found(project, pair) for pair, old in olds]
    assert calls[0] == 0  # no postings read on the vector path
    monkeypatch.setenv("OCM_SEMANTIC", "0")
    by_words = [old in _found(project, pair) for pair, old in olds]
    assert calls[0] == 2 * len(olds)  # the fallback reads them: active, then retired
    assert len(olds) >= 30
    assert sum(by_meaning) >= sum(by_words)
    assert sum(by_meaning) == len(olds)


def test_candidates_follow_the_rows_appended_by_a_commit(
        coding: tuple[Project, list[tuple[dict, Path]]]) -> None:
    project, _ = coding
    text = "Deploys now go through the blue-green pipeline with a canary stage"
    first = project.remember(text, "decision", auto_supersede=False)
    found = _found(project, {"type": "decision", "new": {"title": None, "content": text}})
    assert first.path.resolve() in found  # unindexed: from the watch, as before
    project.search("blue-green canary")  # committed: its row is appended to the vectors
    assert project.index_for(project.vault).unindexed() == set()
    found = _found(project, {"type": "decision", "new": {"title": None, "content": text}})
    assert found[0] == first.path.resolve()
    assert all(path.parent.name == "decision" for path in found)


def test_a_watching_process_asks_the_vectors_below_the_small_folder_shortcut(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """20 records of a type are under SUPERSEDE_SCAN_MAX (read whole by a one-shot
    process), but a watching process with meaning asks the embeddings for 12 of them;
    keyword-only, it reads the folder as before."""
    topics = ["redis", "celery", "stripe", "docker", "nginx", "kafka", "jwt", "s3", "grpc",
              "pytest", "webpack", "postgres", "terraform", "sentry", "oauth", "graphql",
              "elastic", "rabbitmq", "vault", "helm"]
    for topic in topics:
        project.remember(f"The {topic} client must be closed after each request.", "gotcha",
                         title=f"Close the {topic} client", auto_supersede=False)
    for _ in range(3):  # two checks scan, the third starts the watch
        project.search("client closed")
    index = project.index_for(project.vault)
    assert index._watch is not None and index.unindexed() == set()
    assert len(topics) <= ocm.project.SUPERSEDE_SCAN_MAX
    calls = _count_postings(monkeypatch)
    found = project._supersede_candidates(project.vault, "gotcha", "Close the kafka client",
                                          "The kafka client must be closed after a request.")
    assert found is not None and calls[0] == 0
    wanted = ocm.project.SUPERSEDE_CANDIDATES + ocm.project.SUPERSEDE_MEANING_EXTRA
    assert len(found) == wanted < len(topics)
    assert any(path.name.startswith("close-the-kafka-client") for path in found)
    monkeypatch.setenv("OCM_SEMANTIC", "0")
    assert project._supersede_candidates(project.vault, "gotcha", "Close the kafka client",
                                         "The kafka client must be closed.") is None

"""One search reads one searcher: another process's commit between its steps (BM25F
candidates, the notes close in meaning, the relevance coverage) must not mix the doc
numbers of two index generations (regression: `IndexError` in `PostingScorer.stored_fields`
under concurrent writers, and wrong notes where the numbering had only shifted)."""

from __future__ import annotations

from ocm.indexer.hits import Filters
from ocm.indexer.index import NoteIndex
from ocm.indexer.search import candidates
from ocm.project import Project


def test_a_commit_by_another_process_mid_search_changes_nothing_of_that_search(
        project: Project, keyword_only: None, monkeypatch) -> None:
    project.remember("Release builds are signed on the CI runner.", "procedure",
                     title="Signed release builds")
    payload = project.remember("Webhook payloads are logged for a week.", "decision",
                               title="Webhook payload logs")
    kept = project.remember("The payment webhook retries three times with backoff.",
                            "gotcha", title="Webhook retries")  # the highest doc number
    assert [h.id for h in project.search("webhook retries")][:1] == [kept.id]

    def seen(hits) -> list[tuple[str, float, float | None]]:
        return [(h.id, h.score, h.coverage) for h in hits]

    index = project.index_for(project.vault)
    before = seen(candidates(index, "webhook retries", (), Filters()))
    real_vectors = NoteIndex.vectors
    committed = []

    def vectors_after_another_commit(self: NoteIndex):
        if self is index and not committed:
            # Another process (its own NoteIndex on the same files) deletes the note and
            # rebuilds the index, then deletes one more note: a newer generation with
            # fewer documents than the numbers this search has already taken.
            other = NoteIndex(project.vault)
            kept.path.unlink()
            other.sync(force_rebuild=True)
            payload.path.unlink()
            other.sync()
            other.close()
            committed.append(True)
        return real_vectors(self)

    monkeypatch.setattr(NoteIndex, "vectors", vectors_after_another_commit)
    hits = candidates(index, "webhook retries", (), Filters())
    assert committed, "the other commit did not happen mid-search"
    # Every score and share from the generation the search started on.
    assert seen(hits) == before and before[0][0] == kept.id

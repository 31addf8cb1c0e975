"""What a warm process keeps between searches (issue #29, warm search at 10k) must be what it
would read afresh: the index folder's latest generation (listed again only when the folder
changed), the hits' stored chunks and their rank column rows (kept per segment and doc)."""

from __future__ import annotations

import os
import time

import pytest
from whoosh import index as windex

from ocm.indexer import postings
from ocm.indexer.index import NoteIndex
from ocm.project import Project
from ocm.vault import racy


def _remember_three(project: Project) -> None:
    project.remember("Release builds are signed on the CI runner.\n\n## Keys\n\nThe signing "
                     "key lives in the runner's keychain, rotated yearly.", "procedure",
                     title="Signed release builds")
    project.remember("Webhook payloads are logged for a week.\n\n## Where\n\nThe payload "
                     "log is in the webhook service's bucket.", "decision",
                     title="Webhook payload logs")
    project.remember("The payment webhook retries three times with backoff.\n\n## Why\n\n"
                     "The provider drops a webhook after three failures.", "gotcha",
                     title="Webhook retries")


def _listings(monkeypatch: pytest.MonkeyPatch) -> list[windex.FileIndex]:
    """Each Whoosh index whose folder is listed for its latest generation, once a listing."""
    counted: list[windex.FileIndex] = []
    real = windex.FileIndex.latest_generation

    def latest_generation(self: windex.FileIndex) -> int:
        counted.append(self)
        return real(self)

    monkeypatch.setattr(windex.FileIndex, "latest_generation", latest_generation)
    return counted


def _settled(index: NoteIndex) -> None:
    """Waits until the index folder's last change is older than the racy window."""
    found = os.stat(index.dir)
    left = max(found.st_mtime_ns, found.st_ctime_ns) + racy.RACY_NS - time.time_ns()
    if left > 0:
        time.sleep(left / 1e9 + 0.01)


def _searched_and_settled(project: Project, monkeypatch: pytest.MonkeyPatch
                          ) -> tuple[NoteIndex, list[windex.FileIndex]]:
    """The vault's index after three records and a search, its folder settled, and the
    listings counted from now on."""
    _remember_three(project)
    project.search("webhook retries")
    index = project.index_for(project.vault)
    _settled(index)
    return index, _listings(monkeypatch)


def test_the_index_folder_is_listed_again_only_when_it_changed(
        project: Project, keyword_only: None, monkeypatch: pytest.MonkeyPatch) -> None:
    index, counted = _searched_and_settled(project, monkeypatch)
    mine = index._open()
    assert mine is not None

    def listed() -> int:
        return sum(1 for ix in counted if ix is mine)

    index._generation_seen = None
    searcher = index.searcher()  # listed once: the folder's stamp is taken now
    assert listed() == 1
    for _ in range(3):
        assert index.searcher() is searcher
    assert listed() == 1  # the folder did not change: not listed again
    # Another process's commit (its own project on the same vault) adds a generation:
    # the next searcher is over it.
    other = Project.open(vault=project.vault.root)
    other.remember("Webhook secrets rotate monthly.", "decision", title="Webhook secrets")
    assert other.search("webhook secrets")  # its index brought up to date: a commit
    fresh = index.searcher()
    assert fresh is not searcher and listed() == 2
    assert index._searcher_generation == mine.latest_generation()
    assert [hit.title for hit in project.search("webhook secrets")][:1] == ["Webhook secrets"]


def test_a_folder_listed_in_its_racy_window_is_listed_again(
        project: Project, keyword_only: None, monkeypatch: pytest.MonkeyPatch) -> None:
    index, counted = _searched_and_settled(project, monkeypatch)
    monkeypatch.setattr(racy, "RACY_NS", 10**18)  # every change is "just now"
    index._generation_seen = None
    for _ in range(3):
        index.searcher()
    assert len(counted) == 3
    monkeypatch.setattr(racy, "RACY_NS", 0)  # long settled: listed once more, then kept
    for _ in range(3):
        index.searcher()
    assert len(counted) == 4


def test_kept_chunks_and_rank_rows_are_what_a_fresh_read_gives(
        project: Project, keyword_only: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _remember_three(project)
    hits = project.search("webhook payload retries")
    assert hits and all(hit.chunk is not None for hit in hits)
    scorer = project.index_for(project.vault).scorer()
    numbers = range(scorer.doc_count)
    for number in numbers:
        assert scorer.chunks(number) is scorer.chunks(number)  # kept, not read again
        assert scorer.rank_row(number) is scorer.rank_row(number)
    fresh = postings.SegmentCache()
    for number in numbers:
        position = [base for _, base in scorer.leaves].index(
            max(base for _, base in scorer.leaves if base <= number))
        reader, base = scorer.leaves[position]
        assert fresh.chunks(reader, number - base) == scorer.chunks(number)
        assert fresh.rank_row(reader, number - base) == scorer.rank_row(number)
    # Within their bounds: the oldest go first.
    monkeypatch.setattr(postings, "CHUNK_CHARS_KEPT", 1)
    monkeypatch.setattr(postings, "RANK_ROWS_KEPT", 1)
    small = postings.SegmentCache()
    reader, _ = scorer.leaves[0]
    small.keep_only([reader])
    for doc in range(reader.doc_count_all()):
        small.chunks(reader, doc)
        small.rank_row(reader, doc)
        assert len(small._chunks) == 1 and len(small._rows) == 1
        assert small._chunk_chars == sum(len(c[5]) for c in small.chunks(reader, doc))
    # A segment no longer searched (merged away) takes its entries with it.
    small.keep_only([])
    assert not small._chunks and not small._rows and small._chunk_chars == 0


def test_candidates_made_from_kept_values_are_the_hits_made_afresh(
        project: Project, keyword_only: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.indexer import search
    from ocm.indexer.hits import Filters

    _remember_three(project)
    assert project.search("webhook")  # indexed
    index = project.index_for(project.vault)

    def made() -> list[dict]:
        hits = search.candidates(index, "webhook payload retries signed", (), Filters())
        assert len(hits) >= 3
        return [dict(hit.__dict__, meta_source=None, chunk_source=None) for hit in hits]

    first = made()
    scorer = index.scorer()
    assert len(scorer.hit_values) >= 3
    kept = made()  # the same scorer: made from its kept values
    assert kept == first and [list(h) for h in kept] == [list(h) for h in first]
    scorer.hit_values.clear()
    assert made() == first
    # Within its bound: full, the kept values start again.
    monkeypatch.setattr(search, "HIT_VALUES_KEPT", 1)
    scorer.hit_values.clear()
    assert made() == first and len(scorer.hit_values) == 1
    hits = search.candidates(index, "webhook payload retries signed", (), Filters())
    assert {hit.title for hit in hits} >= {"Webhook retries", "Webhook payload logs"}
    assert all(hit.meta.get("title") == hit.title for hit in hits)


def test_a_sketch_is_its_words_and_is_made_once(project: Project, keyword_only: None) -> None:
    from ocm.indexer import hits as hits_module

    _remember_three(project)
    first = project.search("webhook payload retries", limit=5)
    again = project.search("webhook payload retries", limit=5)
    assert first and [h.id for h in first] == [h.id for h in again]
    for one, two in zip(first, again, strict=True):
        words = frozenset(str(one.meta.get("sketch") or "").split())
        assert words and one.sketch == words
        assert two.sketch is one.sketch  # the same note's sketch: one set
    hits_module._sketch_words.cache_clear()
    assert first[0].sketch == frozenset(str(again[0].meta.get("sketch") or "").split())


def test_a_scorer_replaced_after_a_commit_is_freed_without_the_cycle_collector(
        project: Project, keyword_only: None) -> None:
    """Its candidates' values refer back to it (their chunk sources): kept, they made it and
    a warm process's candidates (~46k objects) garbage for Python's full collection, whose cost
    it doubled in whichever search after a commit it fell (bench/peers.py's
    `incremental_10_ms`). A candidate made before the commit still reads its chunks."""
    import gc
    import weakref

    from ocm.indexer import search
    from ocm.indexer.hits import Filters

    _remember_three(project)
    assert project.search("webhook payload retries signed")
    index = project.index_for(project.vault)
    scorer = index.scorer()
    assert scorer.hit_values  # the search made its candidates' values
    kept = search.candidates(index, "webhook payload retries signed", (), Filters())[0]
    gone = weakref.ref(scorer)
    del scorer
    gc.collect()
    gc.disable()
    try:
        project.remember("Webhook signatures are checked with the shared secret.", "decision",
                         title="Webhook signatures")  # a commit: a new searcher
        assert project.search("webhook payload retries signed")
        assert gone() is not None  # the candidate kept above still holds its scorer
        assert gone() is not index.scorer()
        assert kept.chunks and kept.chunks[0][5]  # read through the replaced scorer
        del kept
        assert gone() is None
    finally:
        gc.enable()

"""A warm process finds the doc numbers of the notes closest in meaning in one table per
searcher (`meaning._path_numbers`), made from each segment's saved `path` terms
(`SavedPostings.field_terms`) once it has looked for LOOKS_BEFORE_TABLE paths one at a time:
the numbers `first_live` finds, across segments, deleted documents and rewritten notes. A
segment without saved postings means no table: every path is looked for as before."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from ocm.indexer import meaning, postings
from ocm.indexer.savedpostings import SavedPostings, term_key
from ocm.project import Project, SearchRequest

from .test_buildcodec import _docs
from .test_savedpostings import _segments

NOW = datetime(2026, 11, 27, 12, 0)


def test_a_fields_terms_are_its_run_of_saved_keys_with_their_postings(tmp_path: Path) -> None:
    ix = _segments(tmp_path, _docs(300), _docs(40, seed=5))
    with ix.searcher() as searcher:
        leaves = searcher.ixreader.leaf_readers()
        assert len(leaves) == 2
        for reader, _ in leaves:
            saved = SavedPostings.open(reader)
            assert saved is not None
            every = list(reader.all_terms())
            # "path": one posting a term; "body": terms over several blocks; "date" and
            # "tags" sort around others; "zzz" and "aaa" hold nothing (before and after
            # every field).
            for field in ("path", "body", "date", "tags", "content", "aaa", "zzz"):
                terms = [tbytes for name, tbytes in every if name == field]
                keys, ids, starts = saved.field_terms(field)
                assert keys == b"".join(term_key(field, tbytes) for tbytes in terms)
                decoded = [postings._decode(reader._terms.matcher(
                    field, tbytes, reader.schema[field].format))[0].tolist()
                    for tbytes in terms]
                assert starts.tolist() == np.cumsum([0] + [len(d) for d in decoded]).tolist()
                assert ids.tolist() == [number for found in decoded for number in found]
                assert bool(terms) == (field not in ("aaa", "zzz"))


@pytest.fixture
def notes(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """Notes over several segments, one rewritten (its old document deleted in an older
    segment) and one forgotten."""
    monkeypatch.setenv("OCM_SEMANTIC", "0")
    for number in range(6):
        project.remember(f"Fact {number}: the cache holds {number} pages.", "context",
                         title=f"Fact {number}")
    first = project.search(SearchRequest(query="Fact 1 cache", now=NOW))[0]
    first.path.write_text(first.path.read_text() + "\nRewritten: the cache holds more.\n")
    gone = project.search(SearchRequest(query="Fact 2 cache", now=NOW))[0]
    project.forget(gone.id, delete=True)
    project.search(SearchRequest(query="cache", now=NOW))  # indexes the rewrite
    return project


def _every_path(scorer: postings.PostingScorer) -> list[str]:
    """Every path any segment holds, deleted documents' included, and one none holds."""
    paths = {tbytes.decode() for reader, _ in scorer.leaves
             for tbytes in reader.lexicon("path")}
    return sorted(paths) + ["memories/context/none-such.md"]


def test_the_table_holds_each_paths_first_live_number(notes: Project) -> None:
    scorer = notes.index_for(notes.vault).scorer()
    assert len(scorer.leaves) >= 2
    assert any(reader.has_deletions() for reader, _ in scorer.leaves)
    table = meaning._path_numbers(scorer)
    expected = {rel: scorer.first_live("path", rel) for rel in _every_path(scorer)}
    assert None in expected.values()  # the forgotten note and the none-such path
    assert table == {rel: number for rel, number in expected.items() if number is not None}


def test_doc_number_answers_from_the_table_after_its_looks(
        notes: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meaning, "LOOKS_BEFORE_TABLE", 2)
    scorer = notes.index_for(notes.vault).scorer()
    rels = _every_path(scorer)
    asked: list[str] = []
    first_live = scorer.first_live

    def counted(field: str, term: str) -> int | None:
        asked.append(term)
        return first_live(field, term)

    monkeypatch.setattr(scorer, "first_live", counted)
    found = [meaning.doc_number(scorer, rel) for rel in rels]
    assert found == [first_live("path", rel) for rel in rels]
    # Two looked for one at a time, then only the paths the table lacks (none holds them).
    assert asked[:2] == rels[:2]
    assert asked[2:] == [rel for rel, number in zip(rels, found, strict=True)
                         if number is None and rel not in rels[:2]]
    assert meaning._numbers[scorer].table  # made, and kept for this searcher


def test_a_segment_without_saved_postings_means_no_table(
        notes: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meaning, "LOOKS_BEFORE_TABLE", 1)
    scorer = notes.index_for(notes.vault).scorer()
    last = scorer.leaves[-1][0]
    saved = scorer.cache.saved
    monkeypatch.setattr(scorer.cache, "saved",
                        lambda reader: None if reader is last else saved(reader))
    assert meaning._path_numbers(scorer) == {}
    rels = _every_path(scorer)
    assert [meaning.doc_number(scorer, rel) for rel in rels] == [
        scorer.first_live("path", rel) for rel in rels]
    assert meaning._numbers[scorer].table == {}

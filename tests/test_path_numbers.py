"""A warm process finds the doc numbers of the notes closest in meaning in one table per
segment (`meaning._segment_paths`), read from its saved `path` terms
(`SavedPostings.field_terms`) once the process has looked for LOOKS_BEFORE_TABLES paths one
at a time: the numbers `first_live` finds, across segments, deleted documents, rewritten
notes and a commit (whose kept segments keep their tables). A segment without saved
postings means no tables: every path is looked for as before."""

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


def _counting(scorer: postings.PostingScorer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    first_live = scorer.first_live

    def counted(field: str, term: str) -> int | None:
        asked.append(term)
        return first_live(field, term)

    monkeypatch.setattr(scorer, "first_live", counted)
    return asked


def test_doc_number_answers_from_the_segments_tables_after_its_looks(
        notes: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meaning, "LOOKS_BEFORE_TABLES", 2)
    monkeypatch.setattr(meaning, "_looks", [0])
    scorer = notes.index_for(notes.vault).scorer()
    assert len(scorer.leaves) >= 2
    assert any(reader.has_deletions() for reader, _ in scorer.leaves)
    rels = _every_path(scorer)
    expected = [scorer.first_live("path", rel) for rel in rels]
    assert None in expected  # the forgotten note's path and the none-such one
    asked = _counting(scorer, monkeypatch)
    assert [meaning.doc_number(scorer, rel) for rel in rels] == expected
    # Two looked for one at a time, then only the paths no segment holds live (the
    # rewritten note's old document is dead in its older segment: the next one answers).
    assert asked[:2] == rels[:2]
    assert asked[2:] == [rel for rel, number in zip(rels, expected, strict=True)
                         if number is None and rel not in rels[:2]]
    assert [meaning.doc_number(scorer, rel) for rel in rels] == expected
    # A commit: the new searcher's tables are the kept segments' own, and its new one's.
    tables = {id(paths) for paths, _ in meaning._numbers[scorer].tables or []}
    notes.remember("Fact 9: the cache holds nine pages.", "context", title="Fact 9")
    notes.search(SearchRequest(query="cache", now=NOW))
    fresh = notes.index_for(notes.vault).scorer()
    assert fresh is not scorer
    rels = _every_path(fresh)
    assert [meaning.doc_number(fresh, rel) for rel in rels] == [
        fresh.first_live("path", rel) for rel in rels]
    kept = {id(paths) for paths, _ in meaning._numbers[fresh].tables or []}
    assert len(kept) == len(fresh.leaves) and kept & tables


def test_a_path_of_several_documents_in_one_segment_is_looked_for(tmp_path: Path) -> None:
    docs = _docs(30)
    docs[7]["path"] = docs[3]["path"]  # one path twice in one segment (as before a merge)
    ix = _segments(tmp_path, docs)
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        paths = meaning._segment_paths(SavedPostings.open(reader))
    assert paths is not None and len(paths) == 29
    assert paths["n3.md"] == meaning._SEVERAL
    assert all(paths[f"n{i}.md"] == i for i in range(30) if i not in (3, 7))


def test_a_segment_without_saved_postings_means_no_tables(
        notes: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meaning, "LOOKS_BEFORE_TABLES", 0)
    scorer = notes.index_for(notes.vault).scorer()
    last = scorer.leaves[-1][0]
    saved = scorer.cache.saved
    monkeypatch.setattr(scorer.cache, "saved",
                        lambda reader: None if reader is last else saved(reader))
    rels = _every_path(scorer)
    expected = [scorer.first_live("path", rel) for rel in rels]
    asked = _counting(scorer, monkeypatch)
    assert [meaning.doc_number(scorer, rel) for rel in rels] == expected
    assert asked == rels  # every one looked for as before
    assert meaning._numbers[scorer].tables == []

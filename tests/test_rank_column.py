"""The rank column (ocm/indexer/rankcolumn.py): every segment writer writes each note's row
(the forked sub-writers of a full build, an incremental commit, a merge of small segments
and a merge of large ones), a search's candidates are made from it with their `meta` read
only when asked for, and an index built before the column is searched as before, from the
stored fields. Real Whoosh indexes, real notes, real forked writers."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pytest
from whoosh import index as windex

from ocm.indexer import index as index_module
from ocm.indexer import rankcolumn
from ocm.indexer import search as engine
from ocm.indexer.columnreads import PreadColumn, column_read
from ocm.indexer.hits import Filters
from ocm.indexer.schema import RANK_COLUMN, RANK_FIELD, build_schema
from ocm.project import Project, SearchRequest

NOTES = index_module.FORK_MIN_NOTES + 20
NOW = datetime(2030, 1, 1)
QUERIES = ("word17 word42", "kafka offsets", "note 123", "word3 word5", "fonts renderer")


def _fill(project: Project) -> None:
    template = project.remember("Kafka consumers commit offsets after the write.", "gotcha",
                                title="Kafka offsets", tags=["kafka"]).path
    text = template.read_text()
    for i in range(NOTES):
        body = f"Note {i}: " + " ".join(f"word{(i * 7 + j) % 397}" for j in range(40))
        note = text.replace(template.stem, f"bulk-{i:04d}").replace(
            "Kafka consumers commit offsets after the write.", body)
        if i % 3 == 0:
            note = note.replace("importance: 5", f"importance: {i % 10 + 1}")
        (template.parent / f"bulk-{i:04d}.md").write_text(note)


def _segments(project: Project) -> list[tuple[int, bool]]:
    """(live notes, whether every one of them has a row equal to what its stored fields
    say) of each segment of the project's index."""
    ix = windex.open_dir(str(project.vault.index_dir))
    found = []
    with ix.searcher() as searcher:
        for reader, _ in searcher.ixreader.leaf_readers():
            read = column_read(reader, RANK_FIELD, RANK_COLUMN, rankcolumn.decode)
            docs = [doc for doc in range(reader.doc_count_all()) if not reader.is_deleted(doc)]
            same = read is not None and all(
                read(doc) == rankcolumn.row_of(reader.stored_fields(doc)) for doc in docs)
            found.append((len(docs), same))
    return found


def _results(project: Project) -> list[list[tuple]]:
    return [[(h.relpath, repr(h.score), h.to_json()["tags"], h.to_json()["importance"],
              h.title, h.date) for h in project.search(SearchRequest(query=q, limit=20,
                                                                     now=NOW))]
            for q in QUERIES]


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="sub-writers are bound with prctl (Linux only)")
def test_every_segment_writer_writes_the_rows(project: Project,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(project)
    project.rebuild_index(procs=2)  # the parent's BuildWriter and a forked sub-writer's
    built = _segments(project)
    assert len(built) == 2 and all(same for _, same in built)
    assert sum(count for count, _ in built) == NOTES + 1
    # Incremental commits (Whoosh's own SegmentWriter): one small segment each, until the
    # fifth commit merges the small ones by indexing their notes again.
    memories = project.vault.root / "memories" / "gotcha"
    for i in range(index_module.MAX_SMALL_SEGMENTS + 1):
        project.remember(f"The invoice renderer needs fonts package number {i}.", "gotcha",
                         title=f"Invoice fonts {i}")
        project.refresh(project.vault)
        after = _segments(project)
        assert all(same for _, same in after), after
    assert len(after) < len(built) + index_module.MAX_SMALL_SEGMENTS + 1  # merged
    assert sorted(count for count, _ in after) == [1, 1, NOTES + 4]
    # A merge of large segments (`add_reader`: the smaller half of them, here one of the
    # one-note segments) copies the rows as Whoosh copies every column.
    monkeypatch.setattr(index_module, "SMALL_SEGMENT_DOCS", 0)
    monkeypatch.setattr(index_module, "MAX_LARGE_SEGMENTS", 1)
    edited = memories / "bulk-0001.md"
    edited.write_text(edited.read_text().replace("Note 1:", "Note 1 edited:"))
    project.refresh(project.vault)
    merged = _segments(project)
    assert sorted(count for count, _ in merged) == [1, 2, NOTES + 3], merged
    assert all(same for _, same in merged)


def test_candidates_read_meta_only_when_asked(project: Project) -> None:
    _fill(project)
    project.rebuild_index()
    index = project.refresh(project.vault)
    scorer = index.scorer()
    hits = engine.candidates(index, "word17 word42 kafka", (), Filters())
    assert len(hits) > 20
    # Made from the column: nothing of the stored fields read yet.
    assert all(h.meta_source is not None and h.__dict__["_meta"] is None for h in hits)
    for hit in hits:
        number = scorer.first_live("path", hit.relpath)
        stored = scorer.stored_fields(number)
        assert (hit.id, hit.kind, hit.type, hit.status, hit.relpath) == (
            stored["id"], stored["kind"], stored["type"], stored["status"], stored["path"])
        assert hit.date == datetime.fromtimestamp(stored["date"])
        assert hit.title == stored["meta"]["title"]
        assert hit.importance == stored["meta"]["importance"]
        assert hit.meta_source is not None  # importance came from the row
        assert hit.meta is stored["meta"] and hit.meta_source is None  # read, once
    assert {h.importance for h in hits} > {5}  # the notes' own values, not a default


def test_ranking_reads_meta_of_the_returned_hits_only(project: Project) -> None:
    _fill(project)
    project.rebuild_index()
    index = project.refresh(project.vault)
    hits = engine.candidates(index, "word17 word42", (), Filters())
    ranked = engine.rank(hits, NOW, 3)
    assert len(ranked) == 3 and len(hits) > 10
    shown = {id(h) for h in ranked}
    unread = [h for h in hits if h.__dict__["_meta"] is None]
    # The candidates the ranking dropped were never read; the shown ones are as stored.
    assert len(unread) >= len(hits) - 10 and not shown & {id(h) for h in unread}
    assert all(h.to_json()["tags"] == ["kafka"] for h in ranked)


def test_an_index_built_before_the_column_is_searched_as_before(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(project)
    old_schema = build_schema()
    old_schema.remove(RANK_FIELD)
    monkeypatch.setattr(index_module, "build_schema", lambda: old_schema)
    project.rebuild_index()
    monkeypatch.undo()  # the code of today, on the index of yesterday
    project = Project.open(cwd=project.vault.project_root)
    assert _segments(project) == [(NOTES + 1, False)]
    ix = windex.open_dir(str(project.vault.index_dir))
    assert RANK_FIELD not in ix.schema
    # An incremental commit adds no row to a schema without the column (no unknown field).
    project.remember("The invoice renderer needs the fonts package.", "gotcha",
                     title="Invoice fonts")
    old = _results(project)
    index = project.refresh(project.vault)
    hits = engine.candidates(index, "word17 word42", (), Filters())
    assert hits and all(h.meta_source is None and h.__dict__["_meta"] for h in hits)
    assert [count for count, _ in _segments(project)] == [NOTES + 1, 1]
    assert not any(same for _, same in _segments(project))
    # The same notes rebuilt with the column: the same results, byte for byte.
    project.rebuild_index()
    assert all(same for _, same in _segments(project))
    assert _results(project) == old
    assert any(h for h in old[-1] if h[2] == [] and "invoice" in h[0])


@pytest.mark.parametrize("compound", [False, True])
def test_a_row_marshal_cannot_hold_is_left_empty(tmp_path: Path, compound: bool) -> None:
    fields = {"path": "memories/a.md", "id": "a", "kind": "memory", "type": "gotcha",
              "status": "active", "date": 5, "content": "kafka",
              "meta": {"title": "A", "importance": datetime(2024, 1, 1)}}
    schema = build_schema()
    rankcolumn.add_row(schema, fields)
    assert fields[RANK_FIELD] == b""
    plain = {**fields, "path": "memories/b.md", "id": "b", "meta": {"title": "B", "importance": 7}}
    rankcolumn.add_row(schema, plain)
    ix = windex.create_in(str(tmp_path), schema)
    writer = ix.writer(compound=compound)
    writer.add_document(**fields)
    writer.add_document(**plain)
    writer.commit()
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        read = column_read(reader, RANK_FIELD, RANK_COLUMN, rankcolumn.decode)
        # One `pread` a row from a file of its own; a compound file's through Whoosh.
        assert read is not None and isinstance(read, PreadColumn) is not compound
        assert read(0) is None  # its hits are made from the stored fields
        assert read(1) == ("b", "memory", "gotcha", "B", "active", "", "", 5,
                           "memories/b.md", 7)


def test_a_listing_reads_the_meta_of_what_it_lists_only(project: Project) -> None:
    _fill(project)
    project.rebuild_index()
    index = project.refresh(project.vault)
    every = engine.candidates(index, "", (), Filters())  # no words: every note, newest first
    assert len(every) == NOTES + 1
    listed = engine.rank(every, NOW, 5, ranked=False)
    assert [h.rank for h in listed] == [1, 2, 3, 4, 5]
    # Read within the search (a damaged index is still repaired there), the rest never.
    assert all(h.__dict__["_meta"] and h.meta_source is None for h in listed)
    assert sum(h.__dict__["_meta"] is None for h in every) == NOTES + 1 - 5

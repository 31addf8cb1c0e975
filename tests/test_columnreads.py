"""A segment's pickled columns read with one `pread` a value (ocm/indexer/columnreads.py):
the same values as Whoosh's own reader, from a handle of their own, and Whoosh's reader
wherever the column is stored some other way. Real Whoosh indexes."""

from __future__ import annotations

from pathlib import Path

from whoosh import index as windex
from whoosh.codec.whoosh3 import STORED_COLUMN

from ocm.indexer.columnreads import PreadColumn, column_read
from ocm.indexer.schema import CHUNKS_COLUMN, build_schema

DOCS = [
    {"path": "memories/a.md", "id": "a", "kind": "memory", "content": "kafka offsets",
     "meta": {"title": "Kafka", "sketch": "kafka offset"},
     "chunks": [("", 0, 1, "", "content", "kafka offsets", 2)]},
    # No chunks and no meta: nothing in the chunks column for it.
    {"path": "memories/b.md", "id": "b", "kind": "memory", "content": "fonts"},
    {"path": "sessions/c.md", "id": "c", "kind": "session", "goal": "retries é ü",
     "chunks": [("Goal", 2, 3, "Goal", "goal", "retries é ü " * 400, 3)]},
]


def _index(folder: Path, compound: bool) -> windex.Index:
    ix = windex.create_in(str(folder), build_schema())
    writer = ix.writer(compound=compound)
    for doc in DOCS:
        writer.add_document(**doc)
    writer.commit()
    return ix


def test_values_equal_whooshs_and_outlive_its_reader(tmp_path: Path) -> None:
    ix = _index(tmp_path, compound=False)
    searcher = ix.searcher()
    (reader, _), = searcher.ixreader.leaf_readers()
    stored = column_read(reader, "_stored", STORED_COLUMN)
    chunks = column_read(reader, "chunks", CHUNKS_COLUMN)
    assert isinstance(stored, PreadColumn) and isinstance(chunks, PreadColumn)
    expected = [(reader.stored_fields(doc), reader.column_reader("chunks")[doc])
                for doc in range(len(DOCS))]
    assert [e[0]["id"] for e in expected] == ["a", "b", "c"]
    assert expected[1][1] is None and expected[2][1][0][5].startswith("retries é ü")
    searcher.close()  # Whoosh's files closed: the reads use a handle of their own
    assert [(stored(doc), chunks(doc)) for doc in range(len(DOCS))] == expected


def test_a_compound_segment_is_read_by_whoosh(tmp_path: Path) -> None:
    ix = _index(tmp_path, compound=True)
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        assert reader._segment.is_compound()
        chunks = column_read(reader, "chunks", CHUNKS_COLUMN)
        assert chunks is not None and not isinstance(chunks, PreadColumn)
        assert chunks(0) == DOCS[0]["chunks"] and chunks(1) is None


def test_a_missing_column_reads_as_none(tmp_path: Path) -> None:
    ix = windex.create_in(str(tmp_path), build_schema())
    writer = ix.writer(compound=False)
    writer.add_document(path="memories/a.md", id="a", content="kafka")
    writer.commit()
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        assert column_read(reader, "chunks", CHUNKS_COLUMN) is None

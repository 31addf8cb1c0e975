"""A pickled column's offsets summed by numpy (ocm/indexer/columnreads.py, `_SummedReader`):
the same offsets, lengths and values as Whoosh's own reader, on a real index and on a
column written with its offsets (Whoosh's format past 32k documents)."""

from __future__ import annotations

import random
from pathlib import Path

from whoosh import index as windex
from whoosh.codec.whoosh3 import STORED_COLUMN
from whoosh.columns import CompressedBytesColumn, PickleColumn
from whoosh.filedb.filestore import FileStorage

from ocm.indexer.columnreads import _SummedReader, _whoosh_reader, column_read
from ocm.indexer.schema import CHUNKS_COLUMN, build_schema


def test_offsets_and_values_equal_whooshs(tmp_path: Path) -> None:
    rng = random.Random(3)
    ix = windex.create_in(str(tmp_path), build_schema())
    writer = ix.writer()
    for n in range(400):
        words = " ".join(rng.choice(["kafka", "pool", "retry", "é", "fonts"])
                         for _ in range(rng.randrange(0, 300)))
        doc = {"path": f"memories/n{n}.md", "id": f"n{n}", "kind": "memory", "content": words}
        if n % 3:  # a third without chunks: nothing in that column for them
            doc["chunks"] = [("", 0, 1, "", "content", words, 2)]
        writer.add_document(**doc)
    writer.commit()
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        perdoc = reader._perdoc
        for name, column in (("_stored", STORED_COLUMN), ("chunks", CHUNKS_COLUMN)):
            theirs = perdoc.column_reader(name, column)  # Whoosh's, made anew, not kept
            ours = _whoosh_reader(perdoc, name, column)
            assert isinstance(ours._child, _SummedReader) and not ours._child.had_stored_offsets
            assert perdoc._cached_reader(name, column) is ours  # what Whoosh reads too
            assert list(ours._child._offsets) == list(theirs._child._offsets)
            assert list(ours._child._lengths) == list(theirs._child._lengths)
            assert [ours[d] for d in range(400)] == [theirs[d] for d in range(400)]
            read = column_read(reader, name, column)
            assert [read(d) for d in range(400)] == [theirs[d] for d in range(400)]
        assert reader.stored_fields(7)["id"] == "n7"
        assert sum(1 for d in range(400) if ours[d] is None) == 134


def test_a_column_written_with_its_offsets(tmp_path: Path) -> None:
    storage = FileStorage(str(tmp_path))
    values = [None if n % 5 == 0 else {"n": n, "text": "x" * n} for n in range(60)]
    column = PickleColumn(CompressedBytesColumn())
    handle = storage.create_file("c.col")
    writer = column.writer(handle)
    writer._child.cutoff = 10  # past it Whoosh writes the offsets too
    for doc, value in enumerate(values):
        if value is not None:
            writer.add(doc, value)
    writer.finish(len(values))
    handle.close()
    length = storage.file_length("c.col")
    ours = PickleColumn.Reader(_SummedReader(storage.open_file("c.col"), 0, length, 60))
    theirs = column.reader(storage.open_file("c.col"), 0, length, 60)
    assert ours._child.had_stored_offsets and theirs._child.had_stored_offsets
    assert [ours[d] for d in range(60)] == [theirs[d] for d in range(60)]
    assert [ours[d] for d in range(60)] == values

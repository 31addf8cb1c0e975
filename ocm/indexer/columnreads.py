"""A Whoosh segment's pickled columns (its stored fields, the notes' chunks) and plain bytes
columns (the rank column, ocm/indexer/rankcolumn.py) read with one `os.pread` a value.

Whoosh reads a document's value through four Python layers (pickle, zlib, var-bytes, the
file wrapper) and a seek then a buffered read of the file: a warm search reads ~75 notes'
stored fields, ~40 of them not yet kept. Here a value is one `pread` at the offset and
length Whoosh's own reader parsed from the column, one `zlib.decompress` and one
`pickle.loads`: the same bytes, so the same objects. Not a memory map: the pages a
long-lived server touched would stay in its resident memory (bounded at 100k notes). A
column Whoosh reads some other way (a compound segment's file, another column type) is
read by Whoosh's reader, as before. A file whose blocks are checked as they are read
(ocm/indexer/checksums.py) has each value's range checked before it is used.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from array import array
from collections.abc import Callable
from typing import Any

from whoosh.codec.whoosh3 import W3PerDocReader
from whoosh.columns import CompressedBytesColumn, PickleColumn, VarBytesColumn

from .checksums import Blocks, CheckedFile

# A column's reader: a local doc number -> its value (None when it has none).
ColumnRead = Callable[[int], Any]
# How a value's bytes (as written, not empty) become the value.
Decode = Callable[[bytes], Any]


def unpickle(raw: bytes) -> Any:
    """A pickled column's value from its compressed bytes (None for an empty pickle)."""
    value = zlib.decompress(raw)
    return pickle.loads(value) if value else None


class PreadColumn:
    """One pickled, compressed column of one segment, read from its own handle on the
    column's file (Whoosh's may be closed with its reader while this is still held)."""

    def __init__(self, handle: Any, base: int, offsets: Any, lengths: Any,
                 blocks: Blocks | None = None, decode: Decode = unpickle) -> None:
        self._handle = handle
        self._fd = handle.fileno()
        self._base = base
        self._offsets = offsets
        self._lengths = lengths
        self._blocks = blocks
        self._decode = decode

    def __call__(self, doc: int) -> Any:
        length = self._lengths[doc]
        if not length:
            return None
        start = self._base + self._offsets[doc]
        if self._blocks is not None:
            self._blocks.ensure(self._fd, start, length)
        return self._decode(os.pread(self._fd, length, start))


class _SummedBytesReader(VarBytesColumn.Reader):
    """Whoosh's reader of a var-bytes column whose offsets it derives from the lengths
    (a segment of at most 32k documents writes none), summed by numpy, not one by one in
    Python (~1 ms a column of 8k documents; a fresh search at 100k opens ~18)."""

    def _read_offsets_and_lengths(self) -> None:
        import numpy as np

        dbfile, doccount = self._dbfile, self._doccount
        lastbyte = self._basepos + self._length - 1
        code = chr(dbfile.get_byte(lastbyte))
        if code == "X":  # offsets written: Whoosh reads them as they are
            super()._read_offsets_and_lengths()
            return
        lengths = dbfile.get_array(lastbyte - struct.calcsize(code) * doccount, code, doccount)
        sums = np.zeros(doccount, dtype=np.int64)
        np.cumsum(np.asarray(lengths, dtype=np.int64)[:-1], out=sums[1:])
        self._offsets = array("q", sums.tobytes())
        self._lengths = lengths


class _SummedReader(_SummedBytesReader, CompressedBytesColumn.Reader):
    """`_SummedBytesReader` of a zlib-compressed var-bytes column."""

    def __init__(self, dbfile: Any, basepos: int, length: int, doccount: int) -> None:
        CompressedBytesColumn.Reader.__init__(self, dbfile, basepos, length, doccount, "zlib")


def _whoosh_reader(perdoc: Any, name: str, column: PickleColumn | VarBytesColumn) -> Any:
    """`perdoc._cached_reader(name, column)`, through `_SummedReader` for a pickled zlib
    column in a file of its own, `_SummedBytesReader` for a plain var-bytes one (kept where
    Whoosh keeps its own, so it reads that one)."""
    child = getattr(column, "_child", None)
    pickled = (type(column) is PickleColumn and type(child) is CompressedBytesColumn
               and child._module == "zlib")
    if (not isinstance(perdoc, W3PerDocReader) or name in perdoc._readers
            or not (pickled or type(column) is VarBytesColumn)
            or not perdoc.has_column(name)):
        return perdoc._cached_reader(name, column)
    if name not in perdoc._colfiles:
        perdoc._colfiles[name] = perdoc._get_column_file(name)
    dbfile, basepos, length = perdoc._colfiles[name]
    found: Any = (PickleColumn.Reader(_SummedReader(dbfile, basepos, length, perdoc._doccount))
                  if pickled else _SummedBytesReader(dbfile, basepos, length, perdoc._doccount))
    perdoc._readers[name] = found
    return found


def column_read(reader: Any, name: str, column: PickleColumn | VarBytesColumn,
                decode: Decode | None = None) -> ColumnRead | None:
    """How to read the column `name` of a Whoosh segment reader's segment: written as
    `column`, a PickleColumn over a CompressedBytesColumn, or a VarBytesColumn whose values
    `decode` makes (an empty value: None). With `PreadColumn` where it is a file of its
    own, else with Whoosh's reader; None when the segment has no such column."""
    whoosh = _whoosh_reader(reader._perdoc, name, column)
    if whoosh is None:
        return None
    if decode is None:
        child = getattr(whoosh, "_child", None)
        fallback = whoosh.__getitem__
        if not isinstance(child, CompressedBytesColumn.Reader) or (
                child._decompress is not zlib.decompress):
            return fallback
    else:
        child, value_of = whoosh, decode

        def fallback(doc: int) -> Any:
            raw = child[doc]
            return value_of(raw) if raw else None

        if type(child) is not _SummedBytesReader and type(child) is not VarBytesColumn.Reader:
            return fallback
    if reader._segment.is_compound() or not hasattr(os, "pread"):
        return fallback
    dbfile = child._dbfile
    blocks = None
    if isinstance(dbfile.file, CheckedFile):
        fd, blocks = dbfile.file.checked_fd()
    elif dbfile.is_real:
        fd = dbfile.fileno()
    else:
        return fallback
    try:
        handle = os.fdopen(os.dup(fd), "rb", buffering=0)
    except OSError:
        return fallback
    return PreadColumn(handle, child._basepos, child._offsets, child._lengths, blocks,
                       decode or unpickle)

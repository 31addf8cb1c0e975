"""A Whoosh segment's term file opened with one read of its hash directory.

Whoosh's `HashReader` reads the directory of 256 hash tables at the end of a term file
(`.trm`) with 256 reads of 12 bytes, each through `StructFile` and, for a file whose blocks
are checked as they are read (ocm/indexer/checksums.py), `CheckedFile` and `Blocks.ensure`:
~0.7 ms a segment reader, paid by every new process for each segment it opens (14 at 100k
notes). `TermTable` reads the same 3,072 bytes with one read and unpacks them with the
same `struct`; every other step of the opening is Whoosh's own, in its order, so the reader
holds the same values (tests/test_termtables.py compares them with Whoosh's) and a short or
damaged file raises what Whoosh's raises.
"""

from __future__ import annotations

import os
import struct
from typing import Any

from whoosh.filedb import filetables
from whoosh.system import _INT_SIZE


class TermTable(filetables.OrderedHashReader):
    """`OrderedHashReader` whose directory is read in one read (the rest is Whoosh's)."""

    def __init__(self, dbfile: Any, length: int | None = None, magic: bytes = b"HSH3",
                 startoffset: int = 0) -> None:
        # HashReader.__init__ (whoosh/filedb/filetables.py) step by step, but the directory.
        self.dbfile = dbfile
        self.startoffset = startoffset
        self.is_closed = False
        if length is None:
            dbfile.seek(0, os.SEEK_END)
            length = dbfile.tell() - startoffset
        dbfile.seek(startoffset)
        if (filemagic := dbfile.read(4)) != magic:
            raise filetables.FileFormatError(f"Unknown file header {filemagic!r}")
        self.hashtype = dbfile.read_byte()
        self.hashfn = filetables._hash_functions[self.hashtype]
        dbfile.read_int()
        dbfile.read_int()
        self.startofdata = dbfile.tell()
        exptr = startoffset + length - _INT_SIZE
        exlen = dbfile.get_int(exptr)
        expos = exptr - exlen
        dbfile.seek(expos)
        self._read_extras()
        dbfile.seek(expos - filetables._directory_size)
        # 256 (position, number of slots), as Whoosh reads them one by one; a short read
        # raises struct.error, as its `unpack` of a short entry does.
        self.tables = list(filetables._dir_entry.iter_unpack(
            _exactly(dbfile.read(filetables._directory_size))))
        self.endofdata = self.tables[0][0]


def _exactly(data: bytes) -> bytes:
    """`data`, or a struct.error when it is not the whole directory."""
    if len(data) != filetables._directory_size:
        raise struct.error(
            f"the hash directory needs {filetables._directory_size} bytes, got {len(data)}")
    return data


def install() -> None:
    """Have Whoosh's term readers (`W3TermsReader`) open term files as `TermTable`s."""
    filetables.OrderedHashReader = TermTable  # type: ignore[misc]

"""Each segment's postings saved once, as the arrays the scorer reads, beside the segment.

`ocm/indexer/postings.py` scores from numpy arrays of doc ids and weights per (field,
term). Decoding them from Whoosh's posting blocks (a term-info lookup, then per block a
read, a zlib decompress and an unpickle) was ~a quarter of a warm search at 10k notes: a
long-lived process still meets new terms. Segments never change once written, so the
writer (`buildcodec.BulkFieldWriter`, which holds each term's ids and weights as it writes
them) also writes them here, once: `MAIN_<segment id>.ocmpost`. A reader maps the file and
finds a term by a hash of its key, without Whoosh's term index or its blocks.

Layout (little-endian, each array starting on an 8-byte boundary): MAGIC; the segment id
(32 bytes, NUL-padded); term, posting and key-byte counts (int64 x3); the CRC-32 of each
term key, ascending (uint32); for each of those the term's number (int32); per term number
where its postings start and end (int64, terms + 1) and where its key starts and ends
(int64, terms + 1); each term's doc ids (int32, ascending) then its weights (float32, as
Whoosh's writer keeps them), term after term, so that a term is one read and one block
check; the keys (field name, NUL, the term's bytes) one after the other. A file of the
first layout (MAGIC_IDS_APART: all terms' ids, then all their weights, two reads a term)
is read as it is. A file that is missing or does not match its size and segment is not
used: the scorer decodes Whoosh's blocks as before (same arrays, same scores).

The file is written under a temporary name and renamed when complete, before the segment
is listed in the index's table of contents; Whoosh deletes it with its segment (its name
matches Whoosh's segment file pattern). numpy is imported where it is used.

The term table is mapped; a term's ids and weights are read from the file (`pread`), the
arrays over the bytes read. Mapped, every page of postings a long-lived process had ever scored
stayed in its resident memory (the MCP server at 100k notes: 715 MB after 200 searches,
against 533 MB before this file existed); read, only what the scorer's cache keeps does.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import threading
import zlib
from array import array
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ocm.vault.atomic import open_new

from .checksums import Blocks, ChecksumError, blocks_of

if TYPE_CHECKING:
    import numpy as np

EXT = "ocmpost"
MAGIC = b"OCMPOST2"
# Written before each term's ids and weights were put side by side (read, no longer written).
MAGIC_IDS_APART = b"OCMPOST1"
_SEGMENT_ID_BYTES = 32
_HEADER = len(MAGIC) + _SEGMENT_ID_BYTES + 3 * 8
_PREAD = getattr(os, "pread", None)
_INT32 = struct.Struct("<i")
_TWO_INT64 = struct.Struct("<qq")
# At most this many postings put side by side at once by the writer (~10 MB of numpy
# scratch, whatever the segment's size).
_PAIRED_AT_ONCE = 1 << 18


def term_key(field: str, tbytes: bytes) -> bytes:
    return field.encode() + b"\x00" + tbytes


def _pad(size: int) -> int:
    return -size % 8


def _unchecked(start: int, length: int) -> None:
    """A range of a term table already checked whole (`SavedPostings._table_checked`)."""


def _folder(storage: Any) -> str | None:
    """The folder of an on-disk, non-compound storage (None for RAM or compound files)."""
    folder = getattr(storage, "folder", None)
    return folder if isinstance(folder, str) and folder else None


class SavedPostingsWriter:
    """Collects one segment's terms as its field writer writes them; `write` saves them."""

    def __init__(self) -> None:
        self._keys: list[bytes] = []
        self._starts = array("q", [0])
        # Unsigned as a rebuild's writer files its doc numbers (ocm/indexer/buildwriter.py),
        # so its arrays extend this one as they are; saved as int32 (numbers < 2**31).
        self._ids = array("I")
        self._weights = array("f")

    def add(self, key: bytes, docnums: Sequence[int], weights: Sequence[float]) -> None:
        """A term's postings; `key` is its `term_key` (the caller makes a field's prefix
        once, not once a term)."""
        self._keys.append(key)
        self._ids.extend(docnums)
        self._weights.extend(weights)
        self._starts.append(len(self._ids))

    def write(self, storage: Any, segment: Any) -> None:
        """Saves the file beside the segment's (nothing for a storage without a folder)."""
        import numpy as np

        folder = _folder(storage)
        if folder is None:
            return
        segid = segment.segment_id().encode()
        if len(segid) > _SEGMENT_ID_BYTES:
            return
        keys = self._keys
        hashes = np.fromiter((zlib.crc32(k) for k in keys), dtype=np.uint32, count=len(keys))
        order = np.argsort(hashes, kind="stable").astype(np.int32)
        key_starts = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)),
                  out=key_starts[1:])
        blob = b"".join(keys)
        header = MAGIC + segid.ljust(_SEGMENT_ID_BYTES, b"\x00") + np.array(
            [len(keys), len(self._ids), len(blob)], dtype="<i8").tobytes()
        # The arrays written as they are held (a copy only where the machine is not
        # little-endian), the postings' runs made one at a time: copies of whole arrays were
        # ~12 bytes a posting at the end of a build's segment, its writer's peak.
        starts = np.frombuffer(self._starts, dtype=np.int64)
        parts = chain((header, hashes[order].astype("<u4", copy=False),
                       order.astype("<i4", copy=False), starts.astype("<i8", copy=False),
                       key_starts.astype("<i8", copy=False)),
                      _side_by_side(starts, np.frombuffer(self._ids, dtype=np.uint32),
                                    np.frombuffer(self._weights, dtype=np.uint32)))
        name = segment.make_filename("." + EXT)
        final = os.path.join(folder, name)
        fd, temporary = open_new(Path(folder), name, prefix=".")  # never a planted link
        try:
            with os.fdopen(fd, "wb") as out:
                for part in parts:  # (the postings' runs: 8 bytes a posting, no padding)
                    with memoryview(part) as view, view.cast("B") as data:
                        out.write(data)
                        out.write(bytes(_pad(len(data))))
                out.write(blob)
            os.replace(temporary, final)
        except BaseException:  # a full disk: no half-written file left beside the segment
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise


def _side_by_side(starts: np.ndarray, ids: np.ndarray,
                  weights: np.ndarray) -> Iterator[np.ndarray]:
    """Each term's ids, then its weights (their float32 bits), as little-endian uint32
    runs of at most about _PAIRED_AT_ONCE postings. The posting at `j` of the term `t`
    (starts[t] <= j < starts[t + 1]) has its id at word j + starts[t] and its weight at
    word j + starts[t + 1] of the whole."""
    import numpy as np

    terms, first = len(starts) - 1, 0
    while first < terms:
        last = max(first + 1, int(np.searchsorted(starts, starts[first] + _PAIRED_AT_ONCE,
                                                  side="right")) - 1)
        last = min(last, terms)
        begin, end = int(starts[first]), int(starts[last])
        counts = np.diff(starts[first:last + 1])
        at = np.arange(end - begin, dtype=np.int64) + np.repeat(starts[first:last] - begin,
                                                                counts)
        run = np.empty(2 * (end - begin), dtype="<u4")
        run[at] = ids[begin:end]
        at += np.repeat(counts, counts)
        run[at] = weights[begin:end]
        yield run
        first = last


class SavedPostings:
    """One segment's saved postings: the term table mapped read-only, the postings read
    from `handle` as they are asked for."""

    def __init__(self, buffer: Any, handle: Any, terms: int, postings: int,
                 keys: int, blocks: Blocks | None = None, apart: bool = False) -> None:
        import numpy as np

        self._handle = handle
        self._fd = handle.fileno()
        self._lock = threading.Lock()
        self._buffer = buffer
        self._terms = terms
        # The file's block check when it is checked as it is read (ocm/indexer/checksums.py):
        # each range of the file is checked before its bytes are used.
        self._blocks = blocks
        at = _HEADER

        def take(dtype: str, count: int) -> np.ndarray:
            nonlocal at
            found = np.frombuffer(buffer, dtype=dtype, count=count, offset=at)
            at += found.nbytes + _pad(found.nbytes)
            return found

        self._checked(at, 4 * terms)  # searched whole: checked whole
        self._hashes = take("<u4", terms)
        self._order_at = at
        self._order = take("<i4", terms)
        self._starts_at = at
        self._starts = take("<i8", terms + 1)
        self._key_starts_at = at
        self._key_starts = take("<i8", terms + 1)
        # Each term's ids then its weights (`_side_by_side`), or (the first layout) all
        # terms' ids, then all their weights.
        self._apart = apart
        self._ids_at = at
        if apart:
            at += 4 * postings + _pad(4 * postings)
            self._weights_at = at
            at += 4 * postings + _pad(4 * postings)
        else:
            at += 8 * postings
        self._ids_type, self._weights_type = np.dtype("<i4"), np.dtype("<f4")
        self._keys_at = at
        self._keys = memoryview(buffer)[at:at + keys]
        # The term table's two byte ranges (term numbers, posting and key bounds; the keys):
        # once their blocks are checked, `find` reads the table without a check per range.
        self._table_ranges = ((self._order_at, self._ids_at), (self._keys_at, self._keys_at + keys))

    def _checked(self, start: int, length: int) -> None:
        """Check bytes [start, start + length) of the file before they are used, when it is
        checked a block at a time (ChecksumError when one fails)."""
        if self._blocks is not None:
            self._blocks.ensure(self._fd, start, length)

    def _table_checked(self) -> bool:
        """Whether every block of the term table was found sound in this process."""
        blocks = self._blocks
        return blocks is None or all(blocks.checked(start, stop)
                                     for start, stop in self._table_ranges)

    @classmethod
    def open(cls, reader: Any) -> SavedPostings | None:
        """The saved postings of a Whoosh segment reader's segment; None when there are
        none, or the file does not belong to the segment or is cut short."""
        folder = _folder(reader._storage)
        segment = reader._segment
        if folder is None or segment.is_compound():
            return None
        path = os.path.join(folder, segment.make_filename("." + EXT))
        try:
            handle = open(path, "rb")  # noqa: SIM115 - kept open for the postings' reads
        except OSError:
            return None
        try:
            size = os.fstat(handle.fileno()).st_size
            blocks = blocks_of(path, handle)
            buffer = (mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                      if size >= _HEADER else None)
        except (OSError, ValueError):
            buffer = None
        if buffer is None:
            handle.close()
            return None
        if blocks is not None:
            try:
                blocks.ensure(handle.fileno(), 0, _HEADER)
            except ChecksumError:
                handle.close()
                raise
        segid = segment.segment_id().encode().ljust(_SEGMENT_ID_BYTES, b"\x00")
        start = len(MAGIC)
        apart = buffer[:start] == MAGIC_IDS_APART
        if (buffer[:start] not in (MAGIC, MAGIC_IDS_APART)
                or buffer[start:start + _SEGMENT_ID_BYTES] != segid):
            handle.close()
            return None
        at = start + _SEGMENT_ID_BYTES
        terms, postings, keys = (int.from_bytes(buffer[i:i + 8], "little", signed=True)
                                 for i in range(at, at + 24, 8))
        expected = _HEADER
        for width, count in ((4, terms), (4, terms), (8, terms + 1), (8, terms + 1),
                             *([(4, postings), (4, postings)] if apart else [(8, postings)])):
            expected += width * count + _pad(width * count)
        if min(terms, postings, keys) < 0 or size != expected + keys:
            handle.close()
            return None
        return cls(buffer, handle, terms, postings, keys, blocks, apart)

    def find(self, key: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        """The term's doc ids and weights (read-only arrays read from the file); None when
        the segment does not hold it. Read from the file opened with the segment: a merge
        that deletes it meanwhile changes nothing (segments never change in place)."""
        hashes = self._hashes
        wanted = zlib.crc32(key)
        # As the array's own type: a Python int would have numpy convert the whole array.
        at = int(hashes.searchsorted(hashes.dtype.type(wanted)))
        if at == self._terms or hashes[at] != wanted:
            return None  # (most of the terms a segment does not hold)
        buffer = self._buffer
        check = _unchecked if self._table_checked() else self._checked
        while at < self._terms and hashes[at] == wanted:
            check(self._order_at + 4 * at, 4)
            term = _INT32.unpack_from(buffer, self._order_at + 4 * at)[0]
            check(self._key_starts_at + 8 * term, 16)
            begin, stop = _TWO_INT64.unpack_from(buffer, self._key_starts_at + 8 * term)
            check(self._keys_at + begin, stop - begin)
            if self._keys[begin:stop] == key:
                check(self._starts_at + 8 * term, 16)
                return self._postings(*_TWO_INT64.unpack_from(buffer,
                                                              self._starts_at + 8 * term))
            at += 1
        return None

    def _postings(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """The ids and weights of the postings [start, end) of one term: read-only arrays
        over the bytes read (one `pread`), not over the map."""
        import numpy as np

        count = end - start
        if self._apart:
            self._checked(self._ids_at + 4 * start, 4 * count)
            self._checked(self._weights_at + 4 * start, 4 * count)
            ids = self._read(self._ids_at + 4 * start, 4 * count)
            weights = self._read(self._weights_at + 4 * start, 4 * count)
            return (np.frombuffer(ids, dtype=self._ids_type),
                    np.frombuffer(weights, dtype=self._weights_type))
        self._checked(self._ids_at + 8 * start, 8 * count)  # side by side: one range, one read
        data = self._read(self._ids_at + 8 * start, 8 * count)
        return (np.frombuffer(data, dtype=self._ids_type, count=count),
                np.frombuffer(data, dtype=self._weights_type, count=count, offset=4 * count))

    def field_terms(self, field: str) -> tuple[bytes, np.ndarray, np.ndarray]:
        """Every key of `field` (`term_key`: the field's name, NUL, the term's bytes) one
        after the other, terms ascending; all their doc ids one term after the other; and
        where each term's ids start in them (one more, the end). The writer saves the terms
        in Whoosh's order, by field and then by term, so one field's terms are one run of
        term numbers, found by two binary searches of the keys."""
        import numpy as np

        prefix = term_key(field, b"")
        low = self._first_key_at_least(prefix)
        high = self._first_key_at_least(prefix[:-1] + b"\x01")  # past every `field\0...`
        self._checked(self._key_starts_at + 8 * low, 16)
        self._checked(self._key_starts_at + 8 * high, 8)
        begin, stop = int(self._key_starts[low]), int(self._key_starts[high])
        self._checked(self._keys_at + begin, stop - begin)
        self._checked(self._starts_at + 8 * low, 8 * (high - low + 1))
        starts = self._starts[low:high + 1]
        first, last = int(starts[0]), int(starts[-1])
        # The run's words: its ids alone, or each term's ids then its weights.
        width = 4 if self._apart else 8  # bytes a posting
        at = self._ids_at + width * first
        self._checked(at, width * (last - first))
        words = np.frombuffer(self._read(at, width * (last - first)), dtype=self._ids_type)
        local = (starts - first).astype(np.int64)
        if not self._apart:  # the posting at j (from 0) of the term starting at s: word j + s
            words = words[np.arange(last - first) + np.repeat(local[:-1], np.diff(local))]
        return self._keys[begin:stop].tobytes(), words, local

    def _first_key_at_least(self, wanted: bytes) -> int:
        """The first term number whose key is not below `wanted` (the keys ascend)."""
        low, high = 0, len(self._hashes)
        while low < high:
            middle = (low + high) // 2
            self._checked(self._key_starts_at + 8 * middle, 16)
            begin, stop = int(self._key_starts[middle]), int(self._key_starts[middle + 1])
            self._checked(self._keys_at + begin, stop - begin)
            if self._keys[begin:stop].tobytes() < wanted:
                low = middle + 1
            else:
                high = middle
        return low

    def _read(self, at: int, size: int) -> bytes:
        """`size` bytes of the file from `at` on."""
        if _PREAD is not None:
            data = _PREAD(self._fd, size, at)
        else:  # Windows: the handle's position is shared, so one at a time
            with self._lock:
                self._handle.seek(at)
                data = self._handle.read(size)
        if len(data) != size:
            raise OSError(f"saved postings cut short: {self._handle.name}")
        return data

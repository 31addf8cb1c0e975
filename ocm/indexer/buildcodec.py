"""A Whoosh codec for every index write that adds each term's postings in bulk.

Whoosh's ``FieldWriter.add_postings`` handles the sorted postings of a segment one at a
time: a Python call chain per posting (``add`` -> ``add_posting`` with type asserts) plus a
read of the document's field length from the just-written length column (a seek and a
read per posting). That loop was the largest single cost of building the index.

:class:`BuildCodec` groups the sorted postings by term, reads every field's lengths once
and makes each term's blocks, term info and terms row itself (the bytes
``W3PostingsWriter`` and ``OrderedHashWriter`` would write, with none of their calls a
posting, a block or a term; the terms file's hash tables a run of bytes each). The
blocks, term infos and files are what ``W3Codec`` writes, and the segments record a plain
``W3Codec``, so readers never see this module: it only exists while writing. One file is
added per segment: its postings as the scorer's arrays, written from the ids and weights
the blocks are made of (``savedpostings.py``).

What it writes compressed (posting blocks, the ``_stored`` and ``chunks`` columns) it
deflates with ISA-L (python-isal) at its level 1, not zlib at Whoosh's level 3: the same
plain zlib streams, which ``zlib.decompress`` reads as before, for about half the CPU (a
10k build's 79,586 calls, timed in place: ~1.4 CPU-s instead of ~2.6) and ~2 % more of
their bytes (docs/decisions.md, "A build's deflate through ISA-L"). With
``deflate=(zlib.compress, 3)`` the files are byte for byte ``W3Codec``'s
(``tests/test_buildcodec.py`` and ``test_buildwriter.py`` compare the bytes, and with ISA-L
what the files decode to).

Written against whoosh3 3.54.0's ``W3FieldWriter``, ``W3PostingsWriter`` and
``OrderedHashWriter`` internals (the pinned version); the tests above fail if an upgrade
changes them.
"""

from __future__ import annotations

import functools
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from hashlib import md5
from itertools import groupby, starmap
from operator import itemgetter, sub
from pickle import dumps
from typing import Any

from isal.isal_zlib import compress as isal_compress
from whoosh.codec.whoosh3 import (
    COMPRESSION_MIN_SIZE,
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3FieldWriter,
    W3PerDocWriter,
    W3Segment,
    W3TermInfo,
)
from whoosh.columns import CompressedBytesColumn, PickleColumn
from whoosh.filedb.filetables import _lengths as _ROW_LENGTHS
from whoosh.filedb.filetables import _pointer as _POINTER
from whoosh.filedb.filetables import md5_hash
from whoosh.system import pack_int, pack_ushort
from whoosh.util.numeric import length_to_byte

from .savedpostings import SavedPostingsWriter, term_key

Posting = tuple[str, bytes, int, float, bytes | None]
# How a codec deflates: a function of (data, level) returning a zlib stream, and its level.
Deflate = tuple[Callable[[bytes, int], bytes], int]
# ISA-L's level 1 (of 0-3): its level 0 was 4x faster still but wrote 42 % more bytes, which
# zlib.decompress then read 2x slower; levels 2 and 3 cost more for no fewer bytes.
ISAL_DEFLATE: Deflate = (isal_compress, 1)
# One term's postings: field, term, docnums, weights, values.
Terms = tuple[str, bytes, Sequence[int], Sequence[float], Sequence[bytes]]

_FIELD_AND_TERM = itemgetter(0, 1)
# Whoosh's marker for spelling-only entries in the posting stream (never postings).
_SPELLING_DOCNUM = -1
# A term info's bytes before its extent (the block's offset and length), and its extent
# (pack_long(offset) + pack_int(length)): a one-block term's value in the terms file.
_TERMINFO = W3TermInfo._struct
_EXTENT = struct.Struct("!qi")
_TERM_VALUE_BYTES = _TERMINFO.size + _EXTENT.size
# Pickle protocol 2's opening, and a one-posting block's info (a tuple of six) up to its id
# (after the posting count 1): a one-posting block is made of these, its id's opcode and
# the pieces after it (`_Single`).
_PROTO2 = b"\x80\x02"
_INFO_BEFORE_ID = _PROTO2 + b"(K\x01"
_ID0 = b"K\x00"  # (docnum 0, as the pieces are made)
_TWO_IDS = struct.Struct("!II")
# Whoosh's length byte of a field length, kept per length: the lengths a segment's field
# writer meets are those its length columns decode to, at most 256 of them.
_length_byte = functools.cache(length_to_byte)


def _pickled_id(docnum: int) -> bytes:
    """A doc number as pickle protocol 2 writes it inside a tuple: its opcode and bytes
    (BININT1, BININT2 or BININT: 2, 3 or 5 bytes; LONG1 above 2**31: 7 bytes)."""
    return dumps(docnum, 2)[len(_PROTO2):-1]  # (without the protocol and the STOP)


class _Single:
    """The pieces of a one-posting term's block and term info that do not depend on its
    doc number, for one (weight, value, field length) of a field: the block is
    ``before[len(id)] + id + middle + id + after`` (the id pickled, `_pickled_id`), the
    term info before its extent ``head + pack(id, id)``. Made from the block of that
    posting at doc number 0, so every byte but the id's is `_blocks`'s own."""

    __slots__ = ("after", "before", "head", "middle")

    def __init__(self, info: bytes, data: bytes, head: bytes) -> None:
        # info: _INFO_BEFORE_ID + _ID0 + rest; data: _PROTO2 + _ID0 + rest
        self.middle = info[len(_INFO_BEFORE_ID) + len(_ID0):] + _PROTO2
        self.after = data[len(_PROTO2) + len(_ID0):]
        self.head = head[:-_TWO_IDS.size]
        fixed = len(info) + len(data) - 2 * len(_ID0)
        # by the id's length (`_pickled_id`): the magic, the block's negative length
        # (a term's only block is its last) and the info up to the id
        self.before = {n: WHOOSH3_HEADER_MAGIC + pack_int(-(fixed + 2 * n)) + _INFO_BEFORE_ID
                       for n in (2, 3, 5, 7)}


class BuildCodec(W3Codec):
    """``W3Codec`` with a bulk field writer; everything it writes reads as ``W3Codec``.
    Postings are never inlined into the term info (``inlinelimit`` 1, W3Codec's default):
    every term's go to blocks."""

    def __init__(self, blocklimit: int = 128, compression: int = 3,
                 inlinelimit: int = 1, deflate: Deflate = ISAL_DEFLATE) -> None:
        if inlinelimit > 1:
            raise ValueError("BuildCodec writes every term's postings to blocks")
        super().__init__(blocklimit, compression, inlinelimit)
        # What compresses the blocks and columns; `compression` stays the blocks' flag.
        self.deflate = deflate

    def field_writer(self, storage, segment) -> BulkFieldWriter:
        return BulkFieldWriter(self, storage, segment)

    def per_document_writer(self, storage, segment) -> _PerDocWriter:
        return _PerDocWriter(self, storage, segment)

    def new_segment(self, storage, indexname) -> W3Segment:
        # The segment (pickled into the index's TOC) names the stock codec.
        return W3Segment(W3Codec(self._blocklimit, self._compression, self._inlinelimit),
                         indexname)


class _PerDocWriter(W3PerDocWriter):
    """``W3PerDocWriter`` whose zlib-compressed columns (Whoosh's ``_stored``, ocm's
    ``chunks``) are deflated by the codec's `Deflate`: the same columns, read by the same
    ``zlib.decompress``."""

    def _create_column(self, fieldname, column) -> None:
        super()._create_column(fieldname, column)
        writer = self._colwriters[fieldname]
        if isinstance(column, PickleColumn):
            column, writer = column._child, writer._child
        if isinstance(column, CompressedBytesColumn) and column._module == "zlib":
            writer._compress, writer._level = self._codec.deflate


class BulkFieldWriter(W3FieldWriter):
    def __init__(self, codec, storage, segment) -> None:
        super().__init__(codec, storage, segment)
        # Every term's ids and weights, also saved beside the segment for the scorer
        # (savedpostings.py); None when Whoosh's own path wrote the terms instead.
        self._saved: SavedPostingsWriter | None = SavedPostingsWriter()
        # (weight, value, length) -> the pieces of a one-posting term's block and term
        # info with that posting in the current field (None: made by `_blocks`). A field
        # has few (weight, value) pairs and at most 256 lengths (its length bytes).
        self._single: dict[tuple[float, bytes, int], _Single | None] = {}
        self._fixed_size: int | None = None  # (the current field's format's)

    def start_field(self, fieldname, fieldobj) -> None:
        self._single.clear()  # (a field's format decides its blocks' values)
        super().start_field(fieldname, fieldobj)
        self._fixed_size = fieldobj.format.fixed_value_size()

    def close(self) -> None:
        _write_hash_tables(self._tindex)
        super().close()
        if self._saved is not None:
            self._saved.write(self._storage, self._segment)

    def add_postings(self, schema, lengths, items: Iterable[Posting]) -> None:
        count = getattr(lengths, "doc_count_all", None) if lengths else None
        if lengths and (count is None or not hasattr(lengths, "doc_field_length_reader")):
            self._saved = None
            super().add_postings(schema, lengths, items)  # an unusual length source
            return
        self.add_terms(schema, lengths, _grouped(items))

    def add_terms(self, schema, lengths, terms: Iterable[Terms]) -> None:
        """Every term's postings, as (field, term bytes, docnums, weights, values) in
        field then term order, docnums ascending (what ``add_postings`` groups its sorted
        postings into; a rebuild's writer files them so, ocm/indexer/buildwriter.py).

        A term whose postings fit in one block (most terms: at 10k notes two thirds of
        them occur in a single note) is written here, in this loop: the bytes
        ``start_term``, ``add_posting`` per posting and ``finish_term`` write, without
        their dozen calls a term (``start_postings``, ``_write_block``, ``add_block``,
        ``_mini_*``...), and its terms row the bytes ``OrderedHashWriter.add`` writes, at
        positions counted here instead of asked (a buffered file's ``tell`` is an
        ``lseek``). A term with one posting (two thirds of them) is made of the pieces
        of the first one-posting block with its weight, value and length in this field
        (`_Single`): only its doc number is written for it."""
        saved = self._saved
        single = self._single
        blocks = self._blocks
        tindex = self._tindex
        hashfn = _md5_hash if tindex.hashfn is md5_hash else tindex.hashfn
        buckets, index_append = tindex.buckets, tindex.index.append
        write_block, write_row = self._postfile.file.write, tindex.dbfile.file.write
        post_at = self._postfile.tell()
        terms_at = tindex.dbfile.tell()
        lastkey = tindex.lastkey
        pickled_ids: dict[int, bytes] = {}
        _two_ids = _TWO_IDS.pack
        field = None
        field_lengths: Sequence[int] = ()
        prefix = saved_prefix = b""
        for fieldname, btext, docnums, weights, values in terms:
            if fieldname != field:
                if field is not None:
                    self.finish_field()
                field = fieldname
                self.start_field(fieldname, schema[fieldname])
                field_lengths = _field_lengths(lengths, fieldname)
                prefix = pack_ushort(self._fieldid)
                saved_prefix = term_key(fieldname, b"")
            if saved is not None:
                saved.add(saved_prefix + btext, docnums, weights)
            if len(docnums) == 1:
                docnum = docnums[0]
                key = (weights[0], values[0], field_lengths[docnum] if field_lengths else 0)
                pieces = single.get(key)
                if pieces is None and key not in single:
                    pieces = single[key] = self._single_of(*key)
                if pieces is None:
                    block, head = blocks(docnums, weights, values, [key[2]])
                else:
                    pid = pickled_ids.get(docnum)
                    if pid is None:
                        pid = pickled_ids[docnum] = _pickled_id(docnum)
                    block = b"".join((pieces.before[len(pid)], pid, pieces.middle, pid,
                                      pieces.after))
                    head = pieces.head + _two_ids(docnum, docnum)
            else:
                block, head = blocks(docnums, weights, values,
                                     list(map(field_lengths.__getitem__, docnums))
                                     if field_lengths else [0] * len(docnums))
            write_block(block)  # (StructFile.write only hands it on)
            # The terms row: OrderedHashWriter.add(key, value) as bytes, one write.
            tkey = prefix + btext
            if tkey <= lastkey:
                raise ValueError(f"Keys must increase: {lastkey!r}..{tkey!r}")
            row = b"".join((_ROW_LENGTHS.pack(len(tkey), _TERM_VALUE_BYTES), tkey, head,
                            _EXTENT.pack(post_at, len(block))))
            index_append(terms_at)
            write_row(row)
            h = hashfn(tkey)
            buckets[h & 255].append((h, terms_at))
            lastkey = tkey
            post_at += len(block)
            terms_at += len(row)
        tindex.lastkey = lastkey
        if field is not None:
            self.finish_field()

    def _blocks(self, docnums: Sequence[int], weights: Sequence[float],
                values: Sequence[bytes], lengths: Sequence[int]) -> tuple[bytes, bytes]:
        """(the blocks, the term info's bytes before its extent) of one term's postings:
        what ``W3PostingsWriter`` writes a block (``_blocklimit`` postings) at a time, its
        first block after the magic, its last block's length negative, and the term info
        its ``add_block`` sums up over them."""
        limit = self._codec._blocklimit
        count = len(docnums)
        parts = [WHOOSH3_HEADER_MAGIC]
        # W3TermInfo's sums over the blocks, from TermInfo's starting values.
        total: float = 0
        minlength: int | None = None
        maxlength = 0
        maxweight: float = 0
        for start in range(0, count, limit):
            end = start + limit
            infobytes, databytes, block_total, block_max, block_min, block_maxlen = \
                self._block(docnums[start:end], weights[start:end], values[start:end],
                            lengths[start:end])
            size = len(infobytes) + len(databytes)
            parts += (pack_int(size if end < count else -size), infobytes, databytes)
            total += block_total
            if minlength is None or (block_min is not None and block_min < minlength):
                minlength = block_min
            maxlength = max(maxlength, block_maxlen)
            maxweight = max(maxweight, block_max)
        # W3TermInfo(...).to_bytes() before the extent: not inlined, total and max weight,
        # df, min and max length as bytes, first and last id.
        return b"".join(parts), _TERMINFO.pack(
            False, total, count, 0 if minlength is None else _length_byte(minlength),
            _length_byte(maxlength), maxweight, docnums[0], docnums[-1])

    def _block(self, ids: Sequence[int], weights: Sequence[float], values: Sequence[bytes],
               lengths: Sequence[int]) -> tuple[bytes, bytes, float, float, int | None, int]:
        """One block's info and data bytes (``W3PostingsWriter._write_block``) and what
        ``add_block`` sums of it: its total and max weight, min length (None if no
        posting has one) and max length."""
        block_weights = array("f", weights)
        top = max(weights)
        block_max = top if top > 0 else 0
        known = [x for x in lengths if x] if 0 in lengths else lengths
        block_min = min(known) if known else None
        block_maxlen = max(known) if known else 0
        # delta_encode(ids), with the subtraction done by map
        deltas = tuple(map(sub, ids, (0, *ids[:-1])))
        databytes = dumps((deltas, _mini_weights(block_weights),
                           _mini_values(self._fixed_size, values)), 2)
        # (the info's `comp` is the codec's level, as Whoosh writes it: readers only test it)
        comp = self._codec._compression if len(databytes) >= COMPRESSION_MIN_SIZE else 0
        if comp:
            deflate, level = self._codec.deflate
            databytes = deflate(databytes, level)
        infobytes = dumps((len(ids), ids[-1], block_max, comp, _length_byte(block_min),
                           _length_byte(block_maxlen)), 2)
        return (infobytes, databytes, sum(block_weights), block_max, block_min,
                block_maxlen)

    def _single_of(self, weight: float, value: bytes, length: int) -> _Single | None:
        """The pieces of a one-posting term's block with this posting (`_Single`), or None
        when its data may be long enough to be compressed (the id then is not in it as
        pickled)."""
        info, data, *_ = self._block([0], [weight], [value], [length])
        if (len(data) + 5 >= COMPRESSION_MIN_SIZE  # (an id pickles to 2..7 bytes)
                or not info.startswith(_INFO_BEFORE_ID + _ID0)
                or not data.startswith(_PROTO2 + _ID0)):
            return None
        block, head = self._blocks([0], [weight], [value], [length])
        assert block == b"".join((WHOOSH3_HEADER_MAGIC, pack_int(-len(info) - len(data)),
                                  info, data))
        return _Single(info, data, head)


def _write_hash_tables(tindex: Any) -> None:
    """``HashWriter._write_hashes``: the terms file's 256 hash tables (each twice its
    bucket's entries, open addressing), each written as one run of bytes instead of a
    write a slot; the buckets are emptied so that Whoosh's ``close`` only adds the
    directory of the tables written here."""
    dbfile = tindex.dbfile
    null = (0, 0)
    for entries in tindex.buckets:
        numslots = 2 * len(entries)
        tindex.directory.append((dbfile.tell(), numslots))
        table = [null] * numslots
        for entry in entries:
            slot = (entry[0] >> 8) % numslots
            while table[slot] != null:
                slot = (slot + 1) % numslots
            table[slot] = entry
        dbfile.write(b"".join(starmap(_POINTER.pack, table)))
    tindex.buckets = []


def _md5_hash(key: bytes) -> int:
    """Whoosh's ``md5_hash`` (the digest's last 32 bits, as the terms file's buckets take
    them) without formatting the digest as hex and parsing it back."""
    return int.from_bytes(md5(key, usedforsecurity=False).digest()[12:], "big")


def _grouped(items: Iterable[Posting]) -> Iterator[Terms]:
    """Sorted postings grouped by term, without Whoosh's spelling-only markers."""
    for (fieldname, btext), group in groupby(items, key=_FIELD_AND_TERM):
        postings = list(group)
        if postings[0][2] == _SPELLING_DOCNUM:  # sorted by docnum: markers come first
            postings = [p for p in postings if p[2] != _SPELLING_DOCNUM]
            if not postings:
                continue
        _, _, docnums, weights, values = zip(*postings, strict=True)
        if None in values:  # Whoosh writes a missing value as empty bytes
            values = tuple(b"" if v is None else v for v in values)
        yield fieldname, btext, docnums, weights, values


def _mini_weights(weights: array) -> Any:
    """``W3PostingsWriter._mini_weights``: None if all 1.0, one value if all equal."""
    n = len(weights)
    if weights.count(1.0) == n:
        return None
    if weights.count(weights[0]) == n:
        return weights[0]
    return tuple(weights)


def _mini_values(fixed_size: int | None, values: Sequence[bytes]) -> Any:
    """``W3PostingsWriter._mini_values`` for a format's fixed value size (it only ever
    holds the non-empty values; joining the empty ones adds nothing)."""
    if fixed_size is None or fixed_size < 0:
        return tuple(v for v in values if v)
    if fixed_size == 0:
        return None
    return b"".join(values)


def _field_lengths(lengths: Any, fieldname: str) -> list[int]:
    """Every document's length in ``fieldname`` (as Whoosh's byte-encoded column gives it),
    read once per field instead of once per posting."""
    if not lengths:
        return []
    read = lengths.doc_field_length_reader(fieldname)
    return [read(docnum) for docnum in range(lengths.doc_count_all())]

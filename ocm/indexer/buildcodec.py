"""A Whoosh codec for every index write that adds each term's postings in bulk.

Whoosh's ``FieldWriter.add_postings`` handles the sorted postings of a segment one at a
time: a Python call chain per posting (``add`` -> ``add_posting`` with type asserts) plus a
read of the document's field length from the just-written length column (a seek and a
read per posting). That loop was the largest single cost of building the index.

:class:`BuildCodec` groups the sorted postings by term, reads every field's lengths once
and fills each posting block in one step. The blocks, term infos and files are exactly
what ``W3Codec`` writes (``tests/test_buildcodec.py`` compares the bytes), and the segments
record a plain ``W3Codec``, so readers never see this module: it only exists while
writing. One file is added per segment: its postings as the scorer's arrays, written from
the ids and weights the blocks are made of (``savedpostings.py``).

Written against whoosh3 3.54.0's ``W3FieldWriter`` / ``W3PostingsWriter`` internals (the
pinned version); the test above fails if an upgrade changes them.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from operator import itemgetter, sub
from pickle import dumps
from typing import Any

from whoosh.codec.whoosh3 import (
    COMPRESSION_MIN_SIZE,
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3FieldWriter,
    W3PostingsWriter,
    W3Segment,
    W3TermInfo,
)
from whoosh.filedb.filetables import _lengths as _ROW_LENGTHS
from whoosh.system import pack_int, pack_long, pack_ushort
from whoosh.util.numeric import length_to_byte

from .savedpostings import SavedPostingsWriter

Posting = tuple[str, bytes, int, float, bytes | None]
# One term's postings: field, term, docnums, weights, values.
Terms = tuple[str, bytes, Sequence[int], Sequence[float], Sequence[bytes]]

_FIELD_AND_TERM = itemgetter(0, 1)
# Whoosh's marker for spelling-only entries in the posting stream (never postings).
_SPELLING_DOCNUM = -1
# A term info's bytes before its extent (the block's offset and length).
_TERMINFO_HEAD = W3TermInfo._struct.size
# How many single-posting blocks a field writer keeps made (a term that occurs in one note
# only, two thirds of a build's terms, writes the block of every other term of that note
# and field with the same count): bounded, as a 100k build's part meets ~1M of them.
SINGLE_BLOCKS_KEPT = 65_536


class BuildCodec(W3Codec):
    """``W3Codec`` with a bulk field writer; everything it writes reads as ``W3Codec``."""

    def field_writer(self, storage, segment) -> BulkFieldWriter:
        return BulkFieldWriter(self, storage, segment)

    def postings_writer(self, dbfile, byteids: bool = False) -> W3PostingsWriter:
        if byteids:  # term vectors: not used by this schema, Whoosh's own writer
            return super().postings_writer(dbfile, byteids=True)
        return BulkPostingsWriter(dbfile, blocklimit=self._blocklimit,
                                  compression=self._compression,
                                  inlinelimit=self._inlinelimit)

    def new_segment(self, storage, indexname) -> W3Segment:
        # The segment (pickled into the index's TOC) names the stock codec.
        return W3Segment(W3Codec(self._blocklimit, self._compression, self._inlinelimit),
                         indexname)


class BulkPostingsWriter(W3PostingsWriter):
    def add_postings(self, ids: Sequence[int], weights: Sequence[float],
                     values: Sequence[bytes], lengths: Sequence[int]) -> None:
        """All of one term's postings, called once between ``start_postings`` and
        ``finish_postings``: leaves the state ``add_posting`` would after each of them, a
        block at a time (a full block is written when the next posting arrives, the last
        one stays buffered for ``finish_postings``)."""
        assert not self._ids, "add_postings takes a whole term at once"
        limit = self._blocklimit
        for start in range(0, len(ids), limit):
            if start:
                self._write_block()
            end = start + limit
            self._ids = array("I", ids[start:end])
            block_weights = weights[start:end]
            self._weights = array("f", block_weights)
            top = max(block_weights)
            self._maxweight = top if top > 0 else 0
            self._values = [v for v in values[start:end] if v]
            known = [n for n in lengths[start:end] if n]
            self._minlength = min(known) if known else None
            self._maxlength = max(known) if known else 0


class BulkFieldWriter(W3FieldWriter):
    def __init__(self, codec, storage, segment) -> None:
        super().__init__(codec, storage, segment)
        # Every term's ids and weights, also saved beside the segment for the scorer
        # (savedpostings.py); None when Whoosh's own path wrote the terms instead.
        self._saved: SavedPostingsWriter | None = SavedPostingsWriter()
        # (docnum, weight, value, length) -> (block bytes, term info bytes before the
        # extent) of a term with that one posting in the current field.
        self._single: dict[tuple[int, float, bytes, int], tuple[bytes, bytes]] = {}
        # Where the next write lands in the postings and the terms file, while only
        # `_add_one_block_term` writes them; None once Whoosh's own path wrote (then
        # asked with `tell()`: a buffered file's `tell` is an `lseek` per call, three a
        # term, ~3 % of a build).
        self._post_at: int | None = None
        self._terms_at: int | None = None

    def start_field(self, fieldname, fieldobj) -> None:
        self._single.clear()  # (a field's format decides its blocks' values)
        super().start_field(fieldname, fieldobj)

    def close(self) -> None:
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
        postings into; a rebuild's writer files them so, ocm/indexer/buildwriter.py)."""
        # Terms with at most this many postings take the one-block shortcut (most terms:
        # at 10k notes two thirds of them occur in a single note). Inlined postings
        # (inlinelimit > 1) would change the layout, so they never do.
        single_block = self._codec._blocklimit if self._codec._inlinelimit <= 1 else 0
        field = None
        field_lengths: Sequence[int] = ()
        for fieldname, btext, docnums, weights, values in terms:
            if fieldname != field:
                if field is not None:
                    self.finish_field()
                field = fieldname
                self.start_field(fieldname, schema[fieldname])
                field_lengths = _field_lengths(lengths, fieldname)
            if self._saved is not None:
                self._saved.add(fieldname, btext, docnums, weights)
            lens = (list(map(field_lengths.__getitem__, docnums)) if field_lengths
                    else [0] * len(docnums))
            if len(docnums) <= single_block:
                self._add_one_block_term(btext, docnums, weights, values, lens)
            else:
                self._post_at = self._terms_at = None  # (Whoosh's writers write now)
                self.start_term(btext)
                self._postwriter.add_postings(docnums, weights, values, lens)
                self.finish_term()
        if field is not None:
            self.finish_field()

    def _add_one_block_term(self, btext: bytes, docnums: Sequence[int],
                            weights: Sequence[float], values: Sequence[bytes],
                            lengths: Sequence[int]) -> None:
        """The bytes ``start_term``, ``add_posting`` per posting and ``finish_term`` write
        for a term whose postings fit in one block, without their dozen calls per term
        (``start_postings``, ``_write_block``, ``add_block``, ``_mini_*``...): the same
        block header, info tuple and data tuple, pickled and compressed the same way.
        A term with one posting takes its block from another term with the same posting
        in this field when there was one (the same bytes: only the extent differs)."""
        if len(docnums) == 1:
            key = (docnums[0], weights[0], values[0], lengths[0])
            made = self._single.get(key)
            if made is None:
                if len(self._single) >= SINGLE_BLOCKS_KEPT:
                    self._single.clear()
                made = self._single[key] = self._one_block(docnums, weights, values,
                                                           lengths)
        else:
            made = self._one_block(docnums, weights, values, lengths)
        block, head = made
        start = self._post_at
        if start is None:
            start = self._postfile.tell()
        self._postfile.file.write(block)  # (StructFile.write only hands it on)
        self._post_at = start + len(block)
        self._add_term_row(pack_ushort(self._fieldid) + btext,
                           head + pack_long(start) + pack_int(len(block)))

    def _add_term_row(self, key: bytes, value: bytes) -> None:
        """``OrderedHashWriter.add(key, value)`` (the same bytes, hash bucket, index entry
        and order check) with the row's position known instead of asked twice, and its
        three writes as one."""
        tindex = self._tindex
        if key <= tindex.lastkey:
            raise ValueError(f"Keys must increase: {tindex.lastkey!r}..{key!r}")
        at = self._terms_at
        if at is None:
            at = tindex.dbfile.tell()
        row = b"".join((_ROW_LENGTHS.pack(len(key), len(value)), key, value))
        tindex.index.append(at)
        tindex.dbfile.file.write(row)
        h = tindex.hashfn(key)
        tindex.buckets[h & 255].append((h, at))
        tindex.lastkey = key
        self._terms_at = at + len(row)

    def _one_block(self, docnums: Sequence[int], weights: Sequence[float],
                   values: Sequence[bytes], lengths: Sequence[int]) -> tuple[bytes, bytes]:
        """(the block, the term info's bytes before its extent) of one block's postings."""
        n = len(docnums)
        block_weights = array("f", weights)
        top = max(weights)
        maxweight = top if top > 0 else 0
        known = [x for x in lengths if x] if 0 in lengths else lengths
        minlength = min(known) if known else None
        maxlength = max(known) if known else 0
        # delta_encode(ids), with the subtraction done by map
        deltas = tuple(map(sub, docnums, (0, *docnums[:-1])))
        data = (deltas, _mini_weights(block_weights),
                _mini_values(self._format.fixed_value_size(), values))
        databytes = dumps(data, 2)
        comp = self._codec._compression if len(databytes) >= COMPRESSION_MIN_SIZE else 0
        if comp:
            databytes = zlib.compress(databytes, comp)
        infobytes = dumps((n, docnums[-1], maxweight, comp, length_to_byte(minlength),
                           length_to_byte(maxlength)), 2)
        # Magic (first block), length (negative: the last block), info, data: one write.
        block = b"".join((WHOOSH3_HEADER_MAGIC, pack_int(-(len(infobytes) + len(databytes))),
                          infobytes, databytes))
        terminfo = W3TermInfo(weight=0 + sum(block_weights), df=n, minlength=minlength,
                              maxlength=maxlength, maxweight=maxweight, minid=docnums[0],
                              maxid=docnums[-1])
        terminfo.set_extent(0, 0)  # (the caller packs the block's own)
        return block, terminfo.to_bytes()[:_TERMINFO_HEAD]


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

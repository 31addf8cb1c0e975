"""A Whoosh codec for full rebuilds that writes each term's postings in bulk.

Whoosh's ``FieldWriter.add_postings`` handles the sorted postings of a segment one at a
time: a Python call chain per posting (``add`` -> ``add_posting`` with type asserts) plus a
read of the document's field length from the just-written length column (a seek and a
read per posting). That loop was the largest single cost of building the index.

:class:`BuildCodec` groups the sorted postings by term, reads every field's lengths once
and fills each posting block in one step. The blocks, term infos and files are exactly
what ``W3Codec`` writes (``tests/test_buildcodec.py`` compares the bytes), and the segments
record a plain ``W3Codec``, so readers never see this module: it only exists while
writing.

Written against whoosh3 3.54.0's ``W3FieldWriter`` / ``W3PostingsWriter`` internals (the
pinned version); the test above fails if an upgrade changes them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any

from whoosh.codec.whoosh3 import W3Codec, W3FieldWriter, W3PostingsWriter, W3Segment

Posting = tuple[str, bytes, int, float, bytes | None]

_FIELD_AND_TERM = itemgetter(0, 1)
# Whoosh's marker for spelling-only entries in the posting stream (never postings).
_SPELLING_DOCNUM = -1


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
    def add_postings(self, schema, lengths, items: Iterable[Posting]) -> None:
        count = getattr(lengths, "doc_count_all", None) if lengths else None
        if lengths and (count is None or not hasattr(lengths, "doc_field_length_reader")):
            super().add_postings(schema, lengths, items)  # an unusual length source
            return
        field = None
        field_lengths: Sequence[int] = ()
        for (fieldname, btext), group in groupby(items, key=_FIELD_AND_TERM):
            if fieldname != field:
                if field is not None:
                    self.finish_field()
                field = fieldname
                self.start_field(fieldname, schema[fieldname])
                field_lengths = _field_lengths(lengths, fieldname)
            postings = list(group)
            if postings[0][2] == _SPELLING_DOCNUM:  # sorted by docnum: markers come first
                postings = [p for p in postings if p[2] != _SPELLING_DOCNUM]
                if not postings:
                    continue
            _, _, docnums, weights, values = zip(*postings, strict=True)
            self.start_term(btext)
            lens = [field_lengths[d] for d in docnums] if field_lengths else [0] * len(docnums)
            self._postwriter.add_postings(docnums, weights,
                                          [b"" if v is None else v for v in values], lens)
            self.finish_term()
        if field is not None:
            self.finish_field()


def _field_lengths(lengths: Any, fieldname: str) -> list[int]:
    """Every document's length in ``fieldname`` (as Whoosh's byte-encoded column gives it),
    read once per field instead of once per posting."""
    if not lengths:
        return []
    read = lengths.doc_field_length_reader(fieldname)
    return [read(docnum) for docnum in range(lengths.doc_count_all())]

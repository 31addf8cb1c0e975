"""The writer of a full rebuild: Whoosh's `SegmentWriter` without its posting pool.

`SegmentWriter.add_document` makes a `(field, term, docnum, weight, value)` tuple per
posting (~270 per note), hands each to a sorting pool (a Python call with asserts and a
size estimate), and at commit sorts them all (2.7M tuples at 10k notes) to group them by
term again. A rebuild adds documents in docnum order into an empty segment, so
:class:`BuildWriter` files each posting under its term straight away (a docnum and a code
for its (weight, value) in two int arrays) and at commit only sorts the terms; the field
writer (:class:`~ocm.indexer.buildcodec.BulkFieldWriter`) takes each term's postings as
they are. The segment's files are byte for byte those `SegmentWriter` writes
(`tests/test_buildwriter.py`). Every other part of a document (stored fields, lengths,
columns) goes through Whoosh's per-document writer as before.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from whoosh.fields import FieldType
from whoosh.writing import SegmentWriter

from .buildcodec import BuildCodec, Terms

# (weight, value) pairs are coded per field: a field's postings have few distinct ones.
_Postings = tuple[array, array]  # docnums, codes


class BuildWriter(SegmentWriter):
    """A writer for a new segment filled only by `add_document` (no deletions, merges or
    `add_reader`); it needs the bulk codec (:class:`BuildCodec`)."""

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        for name, field in ix.schema.items():
            if field.vector or field.separate_spelling():
                raise ValueError(f"BuildWriter cannot index field {name!r} (vectors or "
                                 f"separate spelling)")
        kwargs.setdefault("codec", BuildCodec())
        super().__init__(ix, **kwargs)
        assert isinstance(self.codec, BuildCodec)
        # field -> term (str where the field's format gives words, else bytes) -> postings
        self._terms: dict[str, dict[Any, _Postings]] = {}
        self._codes: dict[str, dict[tuple[float, bytes], int]] = {}

    def add_document(self, **fields: Any) -> None:
        self._check_state()
        perdocwriter = self.perdocwriter
        schema = self.schema
        docnum = self.docnum
        docboost = self._doc_boost(fields)
        fieldnames = sorted([name for name in fields if not name.startswith("_")])
        self._check_fields(schema, fieldnames)
        perdocwriter.start_doc(docnum)
        try:
            for fieldname in fieldnames:
                value = fields[fieldname]
                if value is None:
                    continue
                field = schema[fieldname]
                length = 0
                if field.indexed:
                    length = self._index(fieldname, field, value,
                                         self._field_boost(fields, fieldname, docboost))
                customval = fields.get(f"_stored_{fieldname}", value)
                perdocwriter.add_field(fieldname, field, customval if field.stored else None,
                                       length)
                column = field.column_type
                if column and customval is not None:
                    perdocwriter.add_column_value(fieldname, column,
                                                  field.to_column_value(customval))
        except ValueError:
            perdocwriter.cancel_doc()
            raise
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def _index(self, fieldname: str, field: FieldType, value: Any, boost: float) -> int:
        """File the postings of one field of the current document; its length."""
        terms = self._terms.get(fieldname)
        if terms is None:
            terms = self._terms[fieldname] = {}
            self._codes[fieldname] = {}
        codes = self._codes[fieldname]
        if type(field).index is FieldType.index:
            # FieldType.index without its generator and its UTF-8 encoding of every term:
            # the words stay str (their order is their UTF-8 bytes' order).
            if not isinstance(value, str | list | tuple):
                raise ValueError(f"{value!r} is not unicode or sequence")
            assert field.format is not None  # every indexed field has one
            items = field.format.word_values(value, field.analyzer, mode="index")
        else:
            items = field.index(value)
        docnum = self.docnum
        length = 0
        for term, freq, weight, vbytes in items:
            weight *= boost
            length += freq
            key = (weight, vbytes)
            code = codes.get(key)
            if code is None:
                code = codes[key] = len(codes)
            postings = terms.get(term)
            if postings is None:
                postings = terms[term] = (array("I"), array("I"))
            postings[0].append(docnum)
            postings[1].append(code)
        return length if field.scorable else 0

    def _sorted_terms(self) -> Iterator[Terms]:
        """(field, term bytes, docnums, weights, values) of every term, in the order
        the posting pool would have sorted them (field, then term; docnums ascend)."""
        for fieldname in sorted(self._terms):
            terms = self._terms[fieldname]
            pairs = list(self._codes[fieldname])
            weights = [weight for weight, _ in pairs]
            values = [value for _, value in pairs]
            for term in sorted(terms):
                docnums, codes = terms[term]
                yield (fieldname, term.encode() if isinstance(term, str) else term,
                       docnums, [weights[c] for c in codes], [values[c] for c in codes])
            del self._terms[fieldname]

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        lengths = self.per_document_reader() if self.codec.length_stats else None
        self.fieldwriter.add_terms(self.schema, lengths, self._sorted_terms())
        self.fieldwriter.close()
        if lengths:
            lengths.close()

    def finish_part(self) -> Any:  # -> whoosh.codec.base.Segment
        """Write this writer's segment and return it, without a TOC (a part of a build
        whose segments are committed together, `commit_parts`)."""
        return self._finalize_segment()

    def commit_parts(self, parts: list[Any]) -> None:
        """Commit the index as its segments so far, this writer's own, then `parts`
        (segments other writers of the same build finished), in that order."""
        self._check_state()
        try:
            segments = list(self.segments)
            if self._added:
                segments.append(self._finalize_segment())
            else:
                self._close_segment()
            self._commit_toc(segments + parts)
        except Exception:
            self._cleanup_on_error()  # releases the lock, as SegmentWriter.commit does
            raise
        self._finish()

"""The writer of a full rebuild: Whoosh's `SegmentWriter` without its posting pool.

`SegmentWriter.add_document` makes a `(field, term, docnum, weight, value)` tuple per
posting (~270 per note), hands each to a sorting pool (a Python call with asserts and a
size estimate), and at commit sorts them all (2.7M tuples at 10k notes) to group them by
term again. A rebuild adds documents in docnum order into an empty segment, so
:class:`BuildWriter` appends each posting to its field's flat int arrays (the term's
number, the docnum, a code for its (weight, value)) and at commit groups them by term in
one stable sort and sorts the terms; the field
writer (:class:`~ocm.indexer.buildcodec.BulkFieldWriter`) takes each term's postings as
they are. The segment's files are byte for byte those `SegmentWriter` writes
(`tests/test_buildwriter.py`). Every other part of a document (stored fields, lengths,
columns) goes to Whoosh's per-document writer's dict and column writers, without its
per-value calls (`add_field`, `add_column_value`).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import repeat
from typing import Any

from whoosh.codec.whoosh3 import LENGTHS_COLUMN
from whoosh.fields import FieldType
from whoosh.util.numeric import length_to_byte
from whoosh.writing import SegmentWriter

from .analysis import CountedFrequency, encoded_count
from .buildcodec import BuildCodec, Terms

# A field's postings in the order they were added, three uint32s each: the term's number
# (in the order the field met its terms), the docnum, the code of its (weight, value) pair
# (coded per field: a field's postings have few distinct ones). Flat arrays, not two arrays
# per term: a term costs its dict entry only (a build meets ~40 new terms a note; two
# arrays and a tuple each were ~10 KB a note, 100 MB a process in a 100k build's batch).
_Postings = tuple[array, array, array]  # term numbers, docnums, codes
# Terms whose postings are taken out of the sorted arrays together at commit.
_TERMS_AT_ONCE = 4096


class _Numbers(dict):
    """A field's terms and their numbers, in the order the field met them: a term not
    there yet is numbered when first looked up, so a document's terms are numbered by one
    `map` in C (not a `setdefault` and a `len` per term in Python)."""

    def __missing__(self, term: Any) -> int:
        number = self[term] = len(self)
        return number


class _CountCodes(dict):
    """A counted field's code of each count a term has in a document (the code of its
    (weight, value) pair, `_index`'s, at one boost): coded when first met, so a document's
    counts are coded by one `map` in C."""

    def __init__(self, codes: dict[tuple[float, bytes], int], field_boost: float,
                 boost: float) -> None:
        super().__init__()
        self._codes, self._field_boost, self._boost = codes, field_boost, boost

    def __missing__(self, n: int) -> int:
        # (the weight as word_values makes it, then boosted as _index does)
        key = (float(n) * self._field_boost * self._boost, encoded_count(n))
        code = self._codes.get(key)
        if code is None:
            code = self._codes[key] = len(self._codes)
        self[n] = code
        return code


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
        # field -> term (str where the field's format gives words, else bytes) -> number
        self._terms: dict[str, _Numbers] = {}
        self._postings: dict[str, _Postings] = {}
        self._codes: dict[str, dict[tuple[float, bytes], int]] = {}
        self._count_codes: dict[tuple[str, float], _CountCodes] = {}
        # field name -> (field, indexed, stored, column, its lengths column's name)
        self._plans: dict[str, tuple[FieldType, bool, bool, Any, str]] = {}
        # column name -> its writer's `add(docnum, value)`, once the column is created
        self._column_adds: dict[str, Callable[[int, Any], None]] = {}

    def add_document(self, **fields: Any) -> None:
        # SegmentWriter.add_document's steps, with Whoosh's per-field calls cut where a
        # document has no boosts or stored values of its own (`_boost`, `_<name>_boost`,
        # `_stored_<name>`: ocm passes none): no boost looked up, and values go straight
        # into the stored fields' dict and each column's writer (`add_field` and
        # `add_column_value` are three calls and two lookups per value). Same bytes.
        self._check_state()
        plans = self._plans
        if not plans.keys() >= fields.keys():  # a new field name, or a keyword of Whoosh's
            self._check_fields(self.schema, [n for n in fields if not n.startswith("_")])
            for name in fields:
                if not name.startswith("_") and name not in plans:
                    field = self.schema[name]
                    plans[name] = (field, field.indexed, field.stored, field.column_type,
                                   f"_{name}_len")
        plain = plans.keys() >= fields.keys()
        docboost = 1.0 if plain else self._doc_boost(fields)
        perdocwriter = self.perdocwriter
        docnum = self.docnum
        adds = self._column_adds
        perdocwriter.start_doc(docnum)
        stored = perdocwriter._storedfields
        lengths = perdocwriter._fieldlengths
        try:
            for fieldname in sorted(fields):
                value = fields[fieldname]
                if value is None or (not plain and fieldname.startswith("_")):
                    continue
                field, indexed, stores, column, lenfield = plans[fieldname]
                length = 0
                if indexed:
                    length = self._index(fieldname, field, value, 1.0 if plain else
                                         self._field_boost(fields, fieldname, docboost))
                customval = value if plain else fields.get(f"_stored_{fieldname}", value)
                if stores and customval is not None:
                    stored[fieldname] = customval
                if length:  # (W3PerDocWriter.add_field's)
                    add = adds.get(lenfield)
                    if add is None:
                        self._add_column(lenfield, LENGTHS_COLUMN, length_to_byte(length))
                    else:
                        add(docnum, length_to_byte(length))
                    lengths[fieldname] += length
                if column and customval is not None:
                    add = adds.get(fieldname)
                    if add is None:
                        self._add_column(fieldname, column, field.to_column_value(customval))
                    else:
                        add(docnum, field.to_column_value(customval))
        except ValueError:
            perdocwriter.cancel_doc()
            raise
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def _add_column(self, name: str, column: Any, value: Any) -> None:
        """The current document's value in a column not written yet: created by the
        per-document writer as `add_column_value` creates it (so in the same order),
        its writer's `add` then kept."""
        self.perdocwriter.add_column_value(name, column, value)
        self._column_adds[name] = self.perdocwriter._get_column(name).add

    def _index(self, fieldname: str, field: FieldType, value: Any, boost: float) -> int:
        """File the postings of one field of the current document; its length."""
        terms = self._terms.get(fieldname)
        if terms is None:
            terms = self._terms[fieldname] = _Numbers()
            self._codes[fieldname] = {}
            self._postings[fieldname] = (array("I"), array("I"), array("I"))
        codes = self._codes[fieldname]
        numbers, docnums, coded = self._postings[fieldname]
        if type(field).index is FieldType.index:
            # FieldType.index without its generator and its UTF-8 encoding of every term:
            # the words stay str (their order is their UTF-8 bytes' order).
            if not isinstance(value, str | list | tuple):
                raise ValueError(f"{value!r} is not unicode or sequence")
            assert field.format is not None  # every indexed field has one
            if isinstance(field.format, CountedFrequency):
                counts = field.format.term_counts(value, field.analyzer, mode="index")
                if counts is not None:
                    return self._index_counts(fieldname, field, counts, boost)
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
            numbers.append(terms[term])
            docnums.append(docnum)
            coded.append(code)
        return length if field.scorable else 0

    def _index_counts(self, fieldname: str, field: FieldType, counts: Counter[str],
                      boost: float) -> int:
        """`_index` for a field whose format counts its terms (CountedFrequency): the same
        postings filed a field at a time (the arrays extended once, each count's code
        looked up in C) instead of a few dict lookups and three appends per term."""
        if not counts:
            return 0
        code_of = self._count_codes.get((fieldname, boost))
        if code_of is None:
            assert isinstance(field.format, CountedFrequency)
            code_of = self._count_codes[fieldname, boost] = _CountCodes(
                self._codes[fieldname], field.format.field_boost, boost)
        numbers, docnums, coded = self._postings[fieldname]
        numbers.extend(map(self._terms[fieldname].__getitem__, counts))
        docnums.extend(repeat(self.docnum, len(counts)))
        coded.extend(map(code_of.__getitem__, counts.values()))
        return sum(counts.values()) if field.scorable else 0

    def _sorted_terms(self) -> Iterator[Terms]:
        """(field, term bytes, docnums, weights, values) of every term, in the order
        the posting pool would have sorted them (field, then term; docnums ascend)."""
        import numpy as np

        for fieldname in sorted(self._terms):
            terms = self._terms.pop(fieldname)
            pairs = list(self._codes[fieldname])
            weights = [weight for weight, _ in pairs]
            values = [value for _, value in pairs]
            numbers, docnums, coded = self._postings.pop(fieldname)
            names = sorted(terms)
            # Each term's rank in that order; the postings grouped by it, each term's in
            # the order added (a stable sort), so its docnums ascend and the terms come
            # one after the other: `starts[r]` is where the r-th term's begin.
            rank = np.empty(len(names), dtype=np.uint32)
            rank[np.fromiter(map(terms.__getitem__, names), dtype=np.int64,
                             count=len(names))] = np.arange(len(names), dtype=np.uint32)
            del terms
            of_rank = rank[np.frombuffer(numbers, dtype=np.uint32)]
            del rank, numbers
            order = np.argsort(of_rank, kind="stable")
            starts = np.zeros(len(names) + 1, dtype=np.int64)
            np.cumsum(np.bincount(of_rank, minlength=len(names)), out=starts[1:])
            del of_rank
            ids = np.frombuffer(docnums, dtype=np.uint32)[order]
            codes = np.frombuffer(coded, dtype=np.uint32)[order]
            del docnums, coded, order
            # A run of terms at a time as Python lists (one conversion each, not three
            # numpy slices a term; two thirds of the terms hold one posting).
            # Each run's weights and values looked up at once, then sliced a term at a time.
            for first in range(0, len(names), _TERMS_AT_ONCE):
                bounds = starts[first:first + _TERMS_AT_ONCE + 1].tolist()
                base = bounds[0]
                run_ids = ids[base:bounds[-1]].tolist()
                run_codes = codes[base:bounds[-1]].tolist()
                run_weights = list(map(weights.__getitem__, run_codes))
                run_values = list(map(values.__getitem__, run_codes))
                run_names = names[first:first + _TERMS_AT_ONCE]
                if run_names and isinstance(run_names[0], str):
                    run_names = [term.encode() for term in run_names]
                for i, term in enumerate(run_names):
                    start, end = bounds[i] - base, bounds[i + 1] - base
                    yield (fieldname, term, run_ids[start:end], run_weights[start:end],
                           run_values[start:end])

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        lengths = self.per_document_reader() if self.codec.length_stats else None
        self.fieldwriter.add_terms(self.schema, lengths, self._sorted_terms())
        self.fieldwriter.close()
        if lengths:
            lengths.close()

    def finish_part(self) -> Any:  # -> whoosh.codec.base.Segment
        """Write this writer's segment and return it, without a TOC (a part of a build
        whose segments are committed together, `commit_parts`, this one's among them)."""
        segment = self._finalize_segment()
        self._added = False  # (written: `commit_parts` does not write it again)
        return segment

    def commit_parts(self, parts: list[Any]) -> None:
        """Commit the index as its segments so far, this writer's own (unless it was
        written already by `finish_part`), then `parts` (segments writers of the same build
        finished), in that order."""
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

"""Term-at-a-time BM25F over a Whoosh searcher's postings.

Whoosh scores a disjunction of boosted (field, term) clauses document by document through
a tree of matcher objects: several microseconds of Python per posting, ~100 ms per query
at 10k notes. Here each posting list is read once as numpy arrays, from the file saved
beside its segment when it was written (`savedpostings.py`) or, without one, decoded from
Whoosh's blocks a block at a time, and its documents' scores are added into one array over
the searcher's documents with vector operations, with the statistics `whoosh.scoring.BM25F`
uses (the searcher's idf and average field length, the byte-coded field length of each
document) and the same float64 operations in the same order: every score equals Whoosh's
bit for bit (`tests/test_postings.py` compares them).

Segments never change once written (deletions are kept beside them), so what is decoded
from a segment stays valid for as long as its reader is open: a long-lived process (the
MCP server) keeps it across searches and commits, within a bounded budget.

This reads a few attributes Whoosh keeps private (posting blocks, the field-length
column); `whoosh3` is pinned to one release in pyproject.toml for that reason, and the
equality tests fail loudly if an upgrade moves them. numpy is imported where it is used:
the index module (and so every command that opens an index) imports this one.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from whoosh import query as Q
from whoosh.codec.whoosh3 import LENGTHS_COLUMN, STORED_COLUMN, W3LeafMatcher
from whoosh.reading import TermNotFound
from whoosh.util.numeric import byte_to_length

from .columnreads import ColumnRead, Decode, column_read
from .rankcolumn import Row
from .rankcolumn import decode as decode_row
from .savedpostings import SavedPostings, term_key
from .schema import CHUNKS_COLUMN, RANK_COLUMN, RANK_FIELD

if TYPE_CHECKING:
    import numpy as np

# (field, term, boost): one clause of the disjunction.
Clause = tuple[str, str, float]
# Decoded postings kept per process: 8 bytes each (doc id, weight), ~48 MB. At
# 50k notes 200 realistic queries touch 6.7 M postings: with 2 M kept, a search decoded
# again what the one before had (34.5 ms CPU a search against 14.7 ms with all kept).
POSTINGS_BUDGET = 6_000_000
# A segment of at most this many documents (the notes written since the last merge) has its
# term keys read into a set once this many terms were looked up in it: most query terms are
# in no note of it, and each of those cost a Whoosh hash-table lookup (~40 us) in every new
# (field, term). A process that searches once or twice never builds the set.
SMALL_SEGMENT_DOCS = 2000
SMALL_SEGMENT_LOOKUPS = 300
# (field, term) pairs whose segments a scorer keeps at hand (PostingScorer._holding): a
# search has ~70; kept small so that postings the cache has let go of are not held long.
HELD_KEPT = 1024
# Stored fields of this many documents (a few KB each) are kept: a search reads ~60.
STORED_BUDGET = 3000
# Stored chunks (a note's sections, their text whole: ~2.4 KB a note, a transcript's far
# more) kept, counted in characters of text (~2.2 MB held): a search reads the chunks of
# the ~10 notes it returns, a third of them returned by an earlier search of the same
# process (most of those recently), and each read is a zlib inflate (~30 us a note).
CHUNK_CHARS_KEPT = 1_000_000
# Rank column rows kept (a 10-tuple of short strings, a few hundred bytes each): a search
# makes ~75 candidates, most of them candidates of earlier searches of the process, and a
# read is a `pread`, its blocks' check and a `marshal.loads` (~5 us).
RANK_ROWS_KEPT = 20_000
# Postings whose score in one clause (idf * BM25 part * boost, with their global doc
# numbers) a scorer keeps, 12 bytes each (~12 MB): a search then adds ~30 ready arrays in
# one pass instead of computing ~120 (clause, segment) pieces (measured at 10k notes:
# 3 -> 0.3 ms a search). Same searcher, same statistics: valid for the scorer's life.
CLAUSE_BUDGET = 1_000_000


class _Postings:
    """One term's postings in one field of one segment: ascending local doc numbers
    (int32) and their weights (float32, as Whoosh's writer keeps them)."""

    __slots__ = ("ids", "weights")

    def __init__(self, ids: np.ndarray, weights: np.ndarray) -> None:
        self.ids = ids
        self.weights = weights


def _decode(matcher: Any) -> tuple[np.ndarray, np.ndarray]:
    """All doc ids (int32, ascending) and weights (float32) of one term in one segment.

    Each block of a `W3LeafMatcher` is read and unpickled by Whoosh (`_read_data`): ids as
    deltas from 0 (the first one absolute), weights as a tuple, one float for all, or None
    for all 1.0; the deltas are summed here with numpy, not one Python step each (at 50k
    notes Whoosh's own decoding was 16 M generator steps per 200 queries)."""
    import numpy as np

    if not isinstance(matcher, W3LeafMatcher):  # terms with one posting are stored inline
        ids, weights = [], []
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        return np.array(ids, dtype=np.int32), np.array(weights, dtype=np.float32)
    deltas: list[int] = []
    weights = []
    starts = [0]
    while True:
        if matcher._data is None:
            matcher._read_data()
        block, weight = matcher._data[0], matcher._data[1]
        if matcher._byteids:  # absolute ids (term vectors): make them deltas of the block
            block = [b - a for a, b in zip((0, *block), block, strict=False)]
        deltas.extend(block)
        if weight is None:
            weights.extend([1.0] * len(block))
        elif isinstance(weight, float):
            weights.extend([weight] * len(block))
        else:
            weights.extend(weight)
        starts.append(len(deltas))
        if matcher._lastblock:
            break
        matcher._goto(matcher._nextoffset)
    summed = np.cumsum(np.array(deltas, dtype=np.int64))
    # Each block's deltas start again from 0: take off what the blocks before it summed to.
    ends = np.array(starts[1:-1], dtype=np.int64)
    before = np.concatenate(([0], summed[ends - 1]))
    ids = summed - np.repeat(before, np.diff(starts))
    return ids.astype(np.int32), np.array(weights, dtype=np.float32)


def _length_bytes(reader: Any, field: str) -> bytes:
    """One byte per document: Whoosh's coded length of `field` (0 = absent)."""
    perdoc = reader._perdoc
    name = f"_{field}_len"
    doccount = reader.doc_count_all()
    if not perdoc.has_column(name):
        return bytes(doccount)
    column = perdoc.column_reader(name, LENGTHS_COLUMN)
    data = column._dbfile.get(column._basepos, column._count)
    return bytes(data) + bytes(max(0, doccount - len(data)))


def _segment_key(reader: Any) -> str:
    """What identifies a segment's immutable content: its id. New deletions reopen the
    reader but change nothing decoded here (the scorer reads them from the reader). Kept on
    the reader: a search asks for it a few hundred times."""
    try:
        return reader._ocm_segment_key
    except AttributeError:
        key = reader._ocm_segment_key = reader.segment().segment_id()
        return key


def best(values: np.ndarray, limit: int) -> np.ndarray:
    """Positions of the `limit` largest values, largest first; equal values by position
    (the order of a stable sort, and of Whoosh's collector for doc numbers)."""
    import numpy as np

    positions = np.arange(len(values))
    if limit <= 0:
        return positions[:0]
    if len(values) > limit:
        cut = len(values) - limit
        kth = np.partition(values, cut)[cut]  # the limit-th largest
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[: limit - len(above)]
        positions = np.concatenate((above, tied))
    return positions[np.lexsort((positions, -values[positions]))]


class SegmentCache:
    """What was decoded from segments, shared by successive scorers of one index: a
    commit that deletes a few documents from the large segment keeps all of it. Entries
    of segments no longer searched (merged away) are dropped."""

    def __init__(self, budget: int = POSTINGS_BUDGET) -> None:
        self.budget = budget
        self._live: frozenset[str] = frozenset()
        self._lengths: dict[tuple[str, str], np.ndarray] = {}
        self._postings: OrderedDict[tuple[str, str, str], _Postings | None] = OrderedDict()
        self._size = 0
        self._stored: OrderedDict[tuple[str, int], dict] = OrderedDict()
        # (segment, doc) -> (its chunks, their characters of text), least recently used first.
        self._chunks: OrderedDict[tuple[str, int], tuple[list, int]] = OrderedDict()
        self._chunk_chars = 0
        # (segment, doc) -> its rank column row (None: none), oldest first.
        self._rows: dict[tuple[str, int], Row | None] = {}
        # Small segments: their term keys (Whoosh's bytes), or how many lookups so far.
        self._keys: dict[str, frozenset[bytes] | int] = {}
        # Each segment's saved postings (savedpostings.py), None where it has none.
        self._saved: dict[str, SavedPostings | None] = {}
        # (segment, column) -> how its values are read (columnreads.py), None: no column.
        self._columns: dict[tuple[str, str], ColumnRead | None] = {}

    def keep_only(self, readers: Iterable[Any]) -> None:
        live = frozenset(_segment_key(reader) for reader in readers)
        if live == self._live:
            return
        self._live = live
        self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
        for key in [k for k in self._postings if k[0] not in live]:
            self._forget(key)
        for stored in [k for k in self._stored if k[0] not in live]:
            del self._stored[stored]
        self._rows = {k: v for k, v in self._rows.items() if k[0] in live}
        for gone in [k for k in self._chunks if k[0] not in live]:
            self._chunk_chars -= self._chunks.pop(gone)[1]
        self._keys = {k: v for k, v in self._keys.items() if k in live}
        self._saved = {k: v for k, v in self._saved.items() if k in live}
        self._columns = {k: v for k, v in self._columns.items() if k[0] in live}

    def stored_fields(self, reader: Any, doc: int) -> dict:
        """A document's stored fields; callers must not modify the dict."""
        key = (_segment_key(reader), doc)
        found = self._stored.get(key)
        if found is None:
            # The segment's own column, not `reader.stored_fields`: that copies the dict
            # leaving out fields the schema no longer has, and this schema never drops one
            # (a change of it rebuilds the index: SCHEMA_VERSION).
            read = self._column(reader, "_stored", STORED_COLUMN)
            found = read(doc) if read is not None else None
            if found is None:
                found = {}
            self._stored[key] = found
            if len(self._stored) > STORED_BUDGET:
                self._stored.popitem(last=False)
        else:
            self._stored.move_to_end(key)
        return found

    def chunks(self, reader: Any, doc: int) -> list:
        """A document's stored chunks (the `chunks` column; [] for a segment written
        without one), read for the hits a search returns; callers must not modify the
        list. The last CHUNK_CHARS_KEPT characters' worth are kept."""
        key = (_segment_key(reader), doc)
        kept = self._chunks.get(key)
        if kept is not None:
            self._chunks.move_to_end(key)
            return kept[0]
        read = self._column(reader, "chunks", CHUNKS_COLUMN)
        found = (read(doc) if read is not None else None) or []
        chars = sum(len(chunk[5]) for chunk in found)
        self._chunks[key] = (found, chars)
        self._chunk_chars += chars
        while self._chunk_chars > CHUNK_CHARS_KEPT and len(self._chunks) > 1:
            self._chunk_chars -= self._chunks.popitem(last=False)[1][1]
        return found

    def rank_row(self, reader: Any, doc: int) -> Row | None:
        """A document's row of the rank column (ocm/indexer/rankcolumn.py); None for a
        segment or note without one. The last RANK_ROWS_KEPT read are kept."""
        key = (_segment_key(reader), doc)
        rows = self._rows
        if key in rows:
            return rows[key]
        read = self._column(reader, RANK_FIELD, RANK_COLUMN, decode_row)
        found = rows[key] = read(doc) if read is not None else None
        if len(rows) > RANK_ROWS_KEPT:
            del rows[next(iter(rows))]
        return found

    def _column(self, reader: Any, name: str, column: Any,
                decode: Decode | None = None) -> ColumnRead | None:
        key = (_segment_key(reader), name)
        if key not in self._columns:
            self._columns[key] = column_read(reader, name, column, decode)
        return self._columns[key]

    def _forget(self, key: tuple[str, str, str]) -> None:
        entry = self._postings.pop(key)
        if entry is not None:
            self._size -= len(entry.ids)

    def lengths(self, reader: Any, field: str) -> np.ndarray:
        """The field's coded length of each local doc number (uint8)."""
        import numpy as np

        key = (_segment_key(reader), field)
        found = self._lengths.get(key)
        if found is None:
            found = self._lengths[key] = np.frombuffer(_length_bytes(reader, field),
                                                       dtype=np.uint8)
        return found

    def postings(self, reader: Any, field: str, term: str,
                 tbytes: bytes | None = None) -> _Postings | None:
        """The term's postings in the field of the reader's segment, None where it holds
        none; `tbytes` the term's bytes when the caller made them (the segments of one
        index share its schema, so one reader's serve every segment)."""
        if tbytes is None:
            tbytes = reader._text_to_bytes(field, term)
        return self.postings_in(reader, _segment_key(reader), field, term, tbytes,
                                term_key(field, tbytes))

    def postings_in(self, reader: Any, segment: str, field: str, term: str, tbytes: bytes,
                    saved_key: bytes) -> _Postings | None:
        """`postings`, with the reader's `_segment_key` and the term's bytes and
        `term_key` made by the caller (once for every segment)."""
        key = (segment, field, term)
        postings = self._postings
        if key in postings:
            postings.move_to_end(key)
            return postings[key]
        saved = self._saved[segment] if segment in self._saved else self.saved(reader)
        if saved is not None:
            found = saved.find(saved_key)
            entry = None if found is None else _Postings(*found)
        else:
            entry = self._decoded(reader, segment, field, tbytes)
        if entry is not None:
            self._size += len(entry.ids)
        self._postings[key] = entry
        while self._size > self.budget and len(self._postings) > 1:
            self._forget(next(iter(self._postings)))
        return entry

    def saved(self, reader: Any) -> SavedPostings | None:
        """The segment's saved postings (savedpostings.py), None where it has none."""
        segment = _segment_key(reader)
        if segment not in self._saved:
            self._saved[segment] = SavedPostings.open(reader)
        return self._saved[segment]

    def _decoded(self, reader: Any, segment: str, field: str,
                 tbytes: bytes) -> _Postings | None:
        """The term's postings decoded from Whoosh's blocks (a segment saved none)."""
        terms = reader._terms
        if not self._may_hold(reader, segment, terms, field, tbytes):
            return None
        try:
            # The segment's own matcher: `reader.postings` would wrap it in a FilterMatcher
            # for the deletions (which reads the first block to skip deleted documents);
            # the scorer applies deletions itself.
            matcher = terms.matcher(field, tbytes, reader.schema[field].format)
        except TermNotFound:
            return None
        return _Postings(*_decode(matcher))

    def _may_hold(self, reader: Any, segment: str, terms: Any, field: str,
                  tbytes: bytes) -> bool:
        """False when a small segment is known not to hold the term (SMALL_SEGMENT_DOCS)."""
        known = self._keys.get(segment, 0)
        if isinstance(known, int):
            if reader.doc_count_all() > SMALL_SEGMENT_DOCS:
                return True
            if known + 1 < SMALL_SEGMENT_LOOKUPS:
                self._keys[segment] = known + 1
                return True
            known = self._keys[segment] = frozenset(terms._tindex.keys())
        return terms._keycoder(field, tbytes) in known


class PostingScorer:
    """Scores clause lists against one searcher (a `livestats.LiveSearcher`: its idf and
    average field lengths count live documents only)."""

    def __init__(self, searcher: Any, k1: float, b: float,
                 cache: SegmentCache | None = None) -> None:
        self.searcher = searcher
        self.k1 = k1
        self.b = b
        # An empty index is one EmptyReader, with nothing to score.
        self.leaves = [(reader, base) for reader, base in searcher.ixreader.leaf_readers()
                       if reader.doc_count_all()]
        # Each segment's reader, the slice of global doc numbers it holds and its key.
        self._slices = [(reader, slice(base, base + reader.doc_count_all()),
                         _segment_key(reader)) for reader, base in self.leaves]
        self._bases = [base for _, base in self.leaves]
        # Global doc numbers run from 0 to doc_count: each segment's after the previous.
        self.doc_count = max((base + reader.doc_count_all() for reader, base in self.leaves),
                             default=0)
        self.cache = cache if cache is not None else SegmentCache()
        self.cache.keep_only(reader for reader, _ in self.leaves)
        # What a search makes a candidate of, by global doc number (search._hit): valid for
        # this searcher's numbers, so kept with it.
        self.hit_values: dict[int, dict[str, Any]] = {}
        self._norms: dict[str, np.ndarray] = {}
        self._codes: dict[str, np.ndarray] = {}
        self._sets: dict[str, frozenset[int]] = {}
        self._masks: dict[str, np.ndarray] = {}
        self._live: np.ndarray | None = None
        # Whether any segment has deleted documents (a fresh build's index has none).
        self._deletions = any(reader.has_deletions() for reader, _ in self.leaves)
        # (field, term) -> the segments holding it, as (reader, global doc numbers, postings):
        # a search asks for each of its terms' postings in every segment three times
        # (scores, holders, the live idf), a few hundred times a query.
        self._held: dict[tuple[str, str], list[tuple[Any, slice, _Postings]]] = {}
        # clause -> (global doc numbers, their scores in it), None for a clause no document
        # holds; least recently used first, within CLAUSE_BUDGET postings.
        self._clauses: OrderedDict[Clause, tuple[np.ndarray, np.ndarray] | None] = OrderedDict()
        self._clause_size = 0

    def retire(self) -> None:
        """Let go of its candidates' values (`search._hit_values`): each refers back to this
        scorer through its sources (`partial(self.chunks, number)`), so a scorer replaced
        after a commit with them was freed only by a full collection of Python's cycle
        collector: after 220 searches ~46k objects, which doubled the cost of that collection
        (~70 -> ~150 ms at load 5), in whichever search after a commit it fell
        (bench/peers.py's `incremental_10_ms`). Without them it is freed when nothing uses it
        any more; a caller still holding it just makes its candidates' values again."""
        self.hit_values.clear()

    def _norm_table(self, field: str) -> np.ndarray:
        """BM25's length normalisation for each of the field's 256 coded lengths."""
        import numpy as np

        found = self._norms.get(field)
        if found is None:
            avgfl = self.searcher.avg_field_length(field) or 1
            k1, b = self.k1, self.b
            found = np.array([k1 * ((1 - b) + b * byte_to_length(code) / avgfl)
                              for code in range(256)], dtype=np.float64)
            self._norms[field] = found
        return found

    def _length_codes(self, field: str) -> np.ndarray:
        """The field's coded length (uint8) of each global doc number: every segment's
        in one array, so a clause's postings of all segments are scored in one pass."""
        import numpy as np

        found = self._codes.get(field)
        if found is None:
            found = np.zeros(self.doc_count, dtype=np.uint8)
            for reader, docs in self._segments():
                found[docs] = self.cache.lengths(reader, field)[:docs.stop - docs.start]
            self._codes[field] = found
        return found

    def _segments(self) -> Iterable[tuple[Any, slice]]:
        """Each segment's reader and the slice of global doc numbers it holds."""
        return ((reader, docs) for reader, docs, _ in self._slices)

    def _holding(self, field: str, term: str) -> list[tuple[Any, slice, _Postings]]:
        """The segments that hold the term in the field, with its postings in each."""
        key = (field, term)
        found = self._held.get(key)
        if found is None:
            # The term's bytes and key made once, not for each segment (`_text_to_bytes`).
            tbytes = self.leaves[0][0]._text_to_bytes(field, term) if self.leaves else b""
            saved_key, postings_in = term_key(field, tbytes), self.cache.postings_in
            found = [(reader, docs, entry) for reader, docs, segment in self._slices
                     if (entry := postings_in(reader, segment, field, term, tbytes, saved_key))
                     is not None]
            if len(self._held) >= HELD_KEPT:
                self._held.clear()
            self._held[key] = found
        return found

    def scores(self, clauses: Iterable[Clause]) -> np.ndarray:
        """The score of each global doc number; 0.0 where no clause matched. Deleted
        documents keep a score: `top` skips them. Each document's clause scores are added
        in clause order, starting from 0.0 (`np.bincount` adds its weights in array order):
        the same floats as adding each clause's array in turn."""
        import numpy as np

        numbers: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        for clause in clauses:
            found = self._clause(clause)
            if found is not None:
                numbers.append(found[0])
                parts.append(found[1])
        if not numbers:
            return np.zeros(self.doc_count, dtype=np.float64)
        return np.bincount(np.concatenate(numbers), np.concatenate(parts),
                           minlength=self.doc_count)

    def _clause(self, clause: Clause) -> tuple[np.ndarray, np.ndarray] | None:
        """The global doc numbers holding the clause's term and their scores in it."""
        import numpy as np

        if clause in self._clauses:
            self._clauses.move_to_end(clause)
            return self._clauses[clause]
        field, term, boost = clause
        held = self._holding(field, term)
        found = None
        if held:
            numbers = np.concatenate([entry.ids + docs.start for _, docs, entry in held])
            # The live documents among them are the term's live document frequency: the
            # searcher need not look its postings up again, segment by segment.
            idf = self.searcher.idf(field, term, self._live_count(numbers))
            # tf*(K1+1) / (tf + norm(length)) per posting: all of BM25 but the idf, for
            # the postings of every segment at once (each element the same float64
            # operations as segment by segment, in place: a product or sum of two floats
            # is the same in either order).
            tf = np.concatenate([entry.weights for _, _, entry in held], dtype=np.float64)
            norms = self._norm_table(field)[self._length_codes(field)[numbers]]
            norms += tf
            parts = tf * (self.k1 + 1)
            parts /= norms
            parts *= idf
            parts *= boost
            found = (numbers, parts)
            self._clause_size += len(found[0])
        self._clauses[clause] = found
        while self._clause_size > CLAUSE_BUDGET and len(self._clauses) > 1:
            dropped = self._clauses.popitem(last=False)[1]
            if dropped is not None:
                self._clause_size -= len(dropped[0])
        return found

    def _live_count(self, numbers: np.ndarray) -> int:
        """How many of the global doc numbers `numbers` are live: all of them when no
        segment has deletions (a fresh build's index), else counted."""
        import numpy as np

        if not self._deletions:
            return len(numbers)
        return int(np.count_nonzero(self.live()[numbers]))

    def live(self) -> np.ndarray:
        """True for each global doc number that is not deleted."""
        import numpy as np

        if self._live is None:
            self._live = np.ones(self.doc_count, dtype=bool)
            for reader, docs in self._segments():
                if reader.has_deletions():
                    deleted = np.fromiter(reader.deleted_docs_set, dtype=np.int64)
                    self._live[docs][deleted] = False
        return self._live

    def holders(self, term: str, fields: Iterable[str]) -> np.ndarray:
        """True for each live global doc number that holds `term` in any of `fields`."""
        import numpy as np

        fields = tuple(fields)
        held = np.zeros(self.doc_count, dtype=bool)
        for field in fields:
            for _, docs, entry in self._holding(field, term):
                held[docs][entry.ids] = True
        return held & self.live()

    def first_live(self, field: str, term: str) -> int | None:
        """The lowest global doc number of a live document holding the term (a note's
        by its `path`), as `Searcher.document_number` finds it."""
        live = self.live()
        for reader, docs in self._segments():  # not _holding: stops at the first found
            entry = self.cache.postings(reader, field, term)
            if entry is not None:
                for number in (entry.ids + docs.start).tolist():
                    if live[number]:
                        return number
        return None

    def stored_fields(self, number: int) -> dict:
        """Stored fields of a global doc number (shared: do not modify)."""
        position = bisect.bisect_right(self._bases, number) - 1
        reader, base = self.leaves[position]
        return self.cache.stored_fields(reader, number - base)

    def rank_row(self, number: int) -> Row | None:
        """The rank column's row of a global doc number (ocm/indexer/rankcolumn.py)."""
        position = bisect.bisect_right(self._bases, number) - 1
        reader, base = self.leaves[position]
        return self.cache.rank_row(reader, number - base)

    def meta(self, number: int) -> dict:
        """The stored `meta` of a global doc number (shared: do not modify)."""
        return self.stored_fields(number).get("meta") or {}

    def chunks(self, number: int) -> list:
        """The stored chunks of a global doc number (ocm/indexer/chunks.py)."""
        position = bisect.bisect_right(self._bases, number) - 1
        reader, base = self.leaves[position]
        return self.cache.chunks(reader, number - base)

    def doc_set(self, query: Any) -> frozenset[int]:
        """Global doc numbers matching a filter query, cached for this searcher."""
        import numpy as np

        key = repr(query)
        found = self._sets.get(key)
        if found is None:
            held = self._terms_mask(query)
            found = (frozenset(self.searcher.docs_for_query(query)) if held is None
                     else frozenset(np.flatnonzero(held).tolist()))
            self._sets[key] = found
        return found

    def doc_mask(self, query: Any) -> np.ndarray:
        """`doc_set` as True for each global doc number it holds, cached likewise."""
        import numpy as np

        key = repr(query)
        found = self._masks.get(key)
        if found is None:
            found = self._terms_mask(query)
            if found is None:
                docs = self.doc_set(query)
                found = np.zeros(self.doc_count, dtype=bool)
                found[np.fromiter(docs, dtype=np.int64, count=len(docs))] = True
            self._masks[key] = found
        return found

    def _terms_mask(self, query: Any) -> np.ndarray | None:
        """For a Term, or an Or of Terms, on fields of the schema: True for each live
        global doc number holding one, from the postings the scorer reads (what Whoosh's
        matchers find, without stepping through them in Python: the default search's
        mask of resolved and archived notes, ~3k documents at 100k notes); None for any
        other query."""
        import numpy as np

        terms: list[Any] = [query] if type(query) is Q.Term else (
            list(query.subqueries) if type(query) is Q.Or and not query.minmatch else [])
        schema = self.searcher.schema
        if not terms or any(type(t) is not Q.Term or not isinstance(t.text, str)
                            or t.fieldname not in schema for t in terms):
            return None
        held = np.zeros(self.doc_count, dtype=bool)
        for term in terms:
            held |= self.holders(term.text, (term.fieldname,))
        return held

    def top(self, clauses: Iterable[Clause], limit: int, allow: Any = None,
            mask: Any = None) -> list[tuple[int, float]]:
        """The `limit` best (global doc number, score), best first; ties by doc number, as
        Whoosh's collector orders them. `allow` / `mask` are filter queries (or None)."""
        import numpy as np

        scores = self.scores(clauses)
        shown = (scores != 0) & self.live()
        if allow is not None:
            shown &= self.doc_mask(allow)
        if mask is not None:
            shown &= ~self.doc_mask(mask)
        numbers = np.flatnonzero(shown)
        found = scores[numbers]
        order = best(found, limit)  # positions ascend with doc numbers: ties by number
        return list(zip(numbers[order].tolist(), found[order].tolist(), strict=True))

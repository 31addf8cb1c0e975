"""Term-at-a-time BM25F over a Whoosh searcher's postings.

Whoosh scores a disjunction of boosted (field, term) clauses document by document through
a tree of matcher objects: several microseconds of Python per posting, ~100 ms per query
at 10k notes. Here each posting list is decoded once, a block at a time, and its
documents' scores are added into one list per segment, with the statistics
`whoosh.scoring.BM25F` uses (the searcher's idf and average field length, the byte-coded
field length of each document) and the same float operations in the same order: every
score equals Whoosh's bit for bit (`tests/test_postings.py` compares them).

Segments never change once written (deletions are kept beside them), so what is decoded
from a segment stays valid for as long as its reader is open: a long-lived process (the
MCP server) keeps it across searches and commits, within a bounded budget.

This reads a few attributes Whoosh keeps private (posting blocks, the field-length
column); `whoosh3` is pinned to one release in pyproject.toml for that reason, and the
equality tests fail loudly if an upgrade moves them.
"""

from __future__ import annotations

import bisect
import heapq
from array import array
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3LeafMatcher
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import TermNotFound
from whoosh.util.numeric import byte_to_length

# (field, term, boost): one clause of the disjunction.
Clause = tuple[str, str, float]
# Decoded postings kept per process: 16 bytes each (doc id, weight, score part), ~32 MB.
POSTINGS_BUDGET = 2_000_000
# Stored fields of this many documents (a few KB each) are kept: a search reads ~60.
STORED_BUDGET = 3000


class _Postings:
    """One term's postings in one field of one segment, and BM25's per-document part of
    the score for the average field length it was last computed with."""

    __slots__ = ("avgfl", "ids", "parts", "weights")

    def __init__(self, ids: array, weights: array) -> None:
        self.ids = ids
        self.weights = weights
        self.avgfl = -1.0
        self.parts = array("d")


def _decode(matcher: Any) -> tuple[array, array]:
    """All (doc ids, weights) of one term in one segment, read a whole block at a time."""
    ids = array("i")
    weights = array("f")
    if isinstance(matcher, W3LeafMatcher):
        while True:
            matcher._read_ids()
            matcher._read_weights()
            ids.extend(matcher._ids)
            weights.extend(matcher._weights)
            if matcher._lastblock:
                return ids, weights
            matcher._goto(matcher._nextoffset)
    while matcher.is_active():  # terms with one posting are stored inline (ListMatcher)
        ids.append(matcher.id())
        weights.append(matcher.weight())
        matcher.next()
    return ids, weights


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
    reader but change nothing decoded here (the scorer reads them from the reader)."""
    return reader.segment().segment_id()


class SegmentCache:
    """What was decoded from segments, shared by successive scorers of one index: a
    commit that deletes a few documents from the large segment keeps all of it. Entries
    of segments no longer searched (merged away) are dropped."""

    def __init__(self, budget: int = POSTINGS_BUDGET) -> None:
        self.budget = budget
        self._live: frozenset[str] = frozenset()
        self._lengths: dict[tuple[str, str], bytes] = {}
        self._postings: OrderedDict[tuple[str, str, str], _Postings | None] = OrderedDict()
        self._size = 0
        self._stored: OrderedDict[tuple[str, int], dict] = OrderedDict()

    def keep_only(self, readers: Iterable[Any]) -> None:
        live = frozenset(_segment_key(reader) for reader in readers)
        if live == self._live:
            return
        self._live = live
        self._lengths = {k: v for k, v in self._lengths.items() if k[0] in live}
        for key in [k for k in self._postings if k[0] not in live]:
            self._forget(key)
        for key in [k for k in self._stored if k[0] not in live]:
            del self._stored[key]

    def stored_fields(self, reader: Any, doc: int) -> dict:
        """A document's stored fields; callers must not modify the dict."""
        key = (_segment_key(reader), doc)
        found = self._stored.get(key)
        if found is None:
            found = self._stored[key] = reader.stored_fields(doc)
            if len(self._stored) > STORED_BUDGET:
                self._stored.popitem(last=False)
        else:
            self._stored.move_to_end(key)
        return found

    def _forget(self, key: tuple[str, str, str]) -> None:
        entry = self._postings.pop(key)
        if entry is not None:
            self._size -= len(entry.ids)

    def lengths(self, reader: Any, field: str) -> bytes:
        key = (_segment_key(reader), field)
        found = self._lengths.get(key)
        if found is None:
            found = self._lengths[key] = _length_bytes(reader, field)
        return found

    def postings(self, reader: Any, field: str, term: str) -> _Postings | None:
        key = (_segment_key(reader), field, term)
        if key in self._postings:
            self._postings.move_to_end(key)
            return self._postings[key]
        try:
            matcher = reader.postings(field, term)
        except TermNotFound:
            entry = None
        else:
            if isinstance(matcher, FilterMatcher):  # deletions are applied by the scorer
                matcher = matcher.child
            entry = _Postings(*_decode(matcher))
            self._size += len(entry.ids)
        self._postings[key] = entry
        while self._size > self.budget and len(self._postings) > 1:
            self._forget(next(iter(self._postings)))
        return entry


class PostingScorer:
    """Scores clause lists against one searcher."""

    def __init__(self, searcher: Any, k1: float, b: float,
                 cache: SegmentCache | None = None) -> None:
        self.searcher = searcher
        self.k1 = k1
        self.b = b
        # An empty index is one EmptyReader, with nothing to score.
        self.leaves = [(reader, base) for reader, base in searcher.ixreader.leaf_readers()
                       if reader.doc_count_all()]
        self._bases = [base for _, base in self.leaves]
        self.cache = cache if cache is not None else SegmentCache()
        self.cache.keep_only(reader for reader, _ in self.leaves)
        self._norms: dict[str, tuple[float, list[float]]] = {}
        self._sets: dict[str, frozenset[int]] = {}

    def _norm_table(self, field: str) -> tuple[float, list[float]]:
        """The field's average length and BM25's length normalisation for each of the 256
        coded lengths."""
        found = self._norms.get(field)
        if found is None:
            avgfl = self.searcher.avg_field_length(field) or 1
            k1, b = self.k1, self.b
            found = (avgfl, [k1 * ((1 - b) + b * byte_to_length(code) / avgfl)
                             for code in range(256)])
            self._norms[field] = found
        return found

    def _parts(self, entry: _Postings, reader: Any, field: str) -> array:
        """tf*(K1+1) / (tf + norm(length)) per posting: all of BM25 but the idf."""
        avgfl, norms = self._norm_table(field)
        if entry.avgfl != avgfl:
            lengths = self.cache.lengths(reader, field)
            k1p1 = self.k1 + 1
            entry.parts = array("d", [(tf * k1p1) / (tf + norms[lengths[doc]])
                                      for doc, tf in zip(entry.ids, entry.weights, strict=True)])
            entry.avgfl = avgfl
        return entry.parts

    def scores(self, clauses: Iterable[Clause]) -> list[tuple[list[float], int, Any]]:
        """Per segment: (score of each local doc number, doc base, reader); 0.0 where no
        clause matched. Deleted documents keep a score: `top` skips them."""
        searcher = self.searcher
        accs = [([0.0] * reader.doc_count_all(), base, reader) for reader, base in self.leaves]
        for field, term, boost in clauses:
            idf = None
            for acc, _, reader in accs:
                entry = self.cache.postings(reader, field, term)
                if entry is None:
                    continue
                if idf is None:
                    idf = searcher.idf(field, term)
                for doc, part in zip(entry.ids, self._parts(entry, reader, field),
                                     strict=True):
                    acc[doc] += idf * part * boost
        return accs

    def stored_fields(self, number: int) -> dict:
        """Stored fields of a global doc number (shared: do not modify)."""
        position = bisect.bisect_right(self._bases, number) - 1
        reader, base = self.leaves[position]
        return self.cache.stored_fields(reader, number - base)

    def doc_set(self, query: Any) -> frozenset[int]:
        """Global doc numbers matching a filter query, cached for this searcher."""
        key = repr(query)
        found = self._sets.get(key)
        if found is None:
            found = frozenset(self.searcher.docs_for_query(query))
            self._sets[key] = found
        return found

    def top(self, clauses: Iterable[Clause], limit: int, allow: Any = None,
            mask: Any = None) -> list[tuple[int, float]]:
        """The `limit` best (global doc number, score), best first; ties by doc number, as
        Whoosh's collector orders them. `allow` / `mask` are filter queries (or None)."""
        keep = self.doc_set(allow) if allow is not None else None
        hide = set(self.doc_set(mask)) if mask is not None else set()
        found: list[tuple[float, int]] = []
        for acc, base, reader in self.scores(clauses):
            hide.update(base + doc for doc in reader.deleted_docs_set)
            # (score, -number): the largest tuples are the best scores, then low numbers.
            if keep is not None and len(keep) < len(acc):  # few allowed: look only at them
                end = base + len(acc)
                found += [(acc[number - base], -number) for number in keep
                          if base <= number < end and acc[number - base]
                          and number not in hide]
            else:
                found += [(score, -number) for number, score in enumerate(acc, base)
                          if score and number not in hide and (keep is None or number in keep)]
        return [(-negated, score) for score, negated in heapq.nlargest(limit, found)]

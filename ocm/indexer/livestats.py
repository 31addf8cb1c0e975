"""BM25F statistics of the live documents alone, whatever the index's history.

Whoosh takes its statistics from what each segment was written with: documents deleted but
not yet merged away still count in `doc_count_all`, `doc_frequency` and `field_length`, and a
merge re-sums a field's total length from the documents' one-byte length codes. Two indexes
of the same notes built through different histories (one clone remembered a note and
re-indexed it, another pulled it in one batch; one merged its segments, the other not yet)
then score a query differently, and near-ties or the relative threshold come out
differently. `LiveSearcher` computes them from the live documents only: the number of
undeleted documents, a term's undeleted postings, and a field's average length as the mean
of the live documents' length codes (the byte each document is stored with, the same
however it got there). Scores are then a function of the notes alone: every clone holding
the same notes gives the same answers (issue #15).
"""

from __future__ import annotations

import math
from typing import Any

from whoosh.searching import Searcher
from whoosh.util.numeric import byte_to_length

from .postings import SegmentCache  # the one reader of postings and lengths

_LENGTHS = [byte_to_length(code) for code in range(256)]


class LiveSearcher(Searcher):
    """A Whoosh searcher whose idf and average field length count live documents only."""

    def __init__(self, *args: Any, cache: SegmentCache | None = None, **kwargs: Any) -> None:
        # What was decoded from the segments, passed on from searcher to searcher of one
        # index and shared with its scorer: postings and lengths are decoded once. Set
        # first: Whoosh makes the per-segment sub-searchers in its __init__.
        parent = kwargs.get("parent")
        self.cache = parent.cache if parent is not None else cache or SegmentCache()
        self._deletions: dict[Any, Any] = {}
        super().__init__(*args, **kwargs)
        self._avg_lengths: dict[str, float] = {}

    def _leaves(self) -> list[Any]:
        return [reader for reader, _ in self.ixreader.leaf_readers() if reader.doc_count_all()]

    def _deleted(self, reader: Any) -> Any:
        """The segment's deleted local doc numbers, ascending (numpy int64)."""
        import numpy as np

        found = self._deletions.get(reader)
        if found is None:
            found = self._deletions[reader] = np.sort(
                np.fromiter(reader.deleted_docs_set, dtype=np.int64))
        return found

    def live_doc_frequency(self, fieldname: str, text: str | bytes) -> int:
        """How many undeleted documents hold the term in the field."""
        import numpy as np

        if isinstance(text, bytes):
            text = str(self.schema[fieldname].from_bytes(text))
        total = 0
        # The postings the scorer decodes (and has, when it asks for the idf): their length
        # is the segment's document frequency, without a second lookup of the term.
        for reader in self._leaves():
            entry = self.cache.postings(reader, fieldname, text)
            if entry is None:
                continue
            if not reader.has_deletions():
                total += len(entry.ids)
            elif len(entry.ids):  # sorted: count the deleted among them
                deleted = self._deleted(reader)
                at = np.searchsorted(entry.ids, deleted).clip(max=len(entry.ids) - 1)
                total += len(entry.ids) - int(np.count_nonzero(entry.ids[at] == deleted))
        return total

    def idf(self, fieldname: str, text: str | bytes, df: int | None = None) -> float:
        """Whoosh's idf (`log(N / (df + 1)) + 1`) over the live documents; `df` is the
        term's live document frequency when the caller has counted it (the scorer, from
        the postings it just gathered), else it is counted here."""
        key = (fieldname, text)
        found = self._idf_cache.get(key)
        if found is None:
            if df is None:
                df = self.live_doc_frequency(fieldname, text)
            found = self._idf_cache[key] = math.log(max(self.doc_count(), 1) / (df + 1)) + 1
        return found

    def avg_field_length(self, fieldname: str, default: float | None = None) -> float | None:
        """The mean decoded length of the field over the live documents."""
        if not self.schema[fieldname].scorable:
            return default
        import numpy as np

        found = self._avg_lengths.get(fieldname)
        if found is None:
            total = 0
            for reader in self._leaves():
                codes = self.cache.lengths(reader, fieldname)
                if reader.has_deletions():
                    codes = np.delete(codes, self._deleted(reader))
                # Python ints: an exact sum, whatever the order.
                counts = np.bincount(codes, minlength=256).tolist()
                total += sum(_LENGTHS[code] * n for code, n in enumerate(counts) if n)
            found = self._avg_lengths[fieldname] = total / max(self.doc_count(), 1)
        return found

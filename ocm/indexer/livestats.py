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

import bisect
import contextlib
import math
from collections import Counter
from typing import Any

from whoosh.searching import Searcher
from whoosh.util.numeric import byte_to_length

from .postings import _decode, _length_bytes  # the one reader of postings and lengths

_LENGTHS = [byte_to_length(code) for code in range(256)]


class LiveSearcher(Searcher):
    """A Whoosh searcher whose idf and average field length count live documents only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._avg_lengths: dict[str, float] = {}

    def _leaves(self) -> list[Any]:
        return [reader for reader, _ in self.ixreader.leaf_readers() if reader.doc_count_all()]

    def live_doc_frequency(self, fieldname: str, text: str | bytes) -> int:
        """How many undeleted documents hold the term in the field."""
        from whoosh.matching.wrappers import FilterMatcher
        from whoosh.reading import TermNotFound

        total = 0
        for reader in self._leaves():
            if not reader.has_deletions():
                total += reader.doc_frequency(fieldname, text)
                continue
            with contextlib.suppress(TermNotFound):
                matcher = reader.postings(fieldname, text)
                if isinstance(matcher, FilterMatcher):  # the deletions, counted below
                    matcher = matcher.child
                ids, _ = _decode(matcher)  # sorted doc numbers, read a block at a time
                held = sum(1 for doc in reader.deleted_docs_set
                           if (at := bisect.bisect_left(ids, doc)) < len(ids) and ids[at] == doc)
                total += len(ids) - held
        return total

    def idf(self, fieldname: str, text: str | bytes) -> float:
        """Whoosh's idf (`log(N / (df + 1)) + 1`) over the live documents."""
        key = (fieldname, text)
        found = self._idf_cache.get(key)
        if found is None:
            df = self.live_doc_frequency(fieldname, text)
            found = self._idf_cache[key] = math.log(max(self.doc_count(), 1) / (df + 1)) + 1
        return found

    def avg_field_length(self, fieldname: str, default: float | None = None) -> float | None:
        """The mean decoded length of the field over the live documents."""
        if not self.schema[fieldname].scorable:
            return default
        found = self._avg_lengths.get(fieldname)
        if found is None:
            total = 0
            for reader in self._leaves():
                codes = _length_bytes(reader, fieldname)
                counts = Counter(codes)
                for doc in reader.deleted_docs_set if reader.has_deletions() else ():
                    counts[codes[doc]] -= 1
                total += sum(_LENGTHS[code] * n for code, n in counts.items())
            found = self._avg_lengths[fieldname] = total / max(self.doc_count(), 1)
        return found

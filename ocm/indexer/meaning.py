"""A search phrase's meaning-only hits, checked word by word only when the search asks.

A note that holds no word of a search phrase counts as close in meaning only when one of
its words has a near twin among the phrase's (`ontopic.WordMeaning`), and a note of a few
sentences is read by its closest one. That check reads the note word by word: most of a
warm search's meaning work when it ran on each such candidate (~15 a search at 10k notes).
Most of them never need it: once a hit holds the phrase's most telling word, a hit holding
none of its words is dropped whatever its meaning (`relevance.relevance_filter`), and one
below the relative threshold is dropped before anything asks. So `search._fuse` leaves the
check on the hit (`Hit.close_check`) and `relevance.is_close` runs it the first time the
hit's closeness decides something; the hits a search returns are all checked
(`relevance.mark_matched`). The answer is the one the check gives when it runs at once: it
reads only the hit, the query and the vault's other notes' mean, none of which change in
between.
"""

from __future__ import annotations

import weakref
from functools import partial
from itertools import compress
from typing import Any

from . import ontopic as on_topic
from .hits import Hit
from .relevance import MIN_WORD_COSINE

# Notes found by their path in one searcher (`doc_number`), per scorer: ~100 bytes each.
NUMBERS_KEPT = 50_000
# Paths looked for one at a time in a searcher before its table of every note's doc number
# is made (`_path_numbers`): a one-shot search never makes it, a warm process soon does.
LOOKS_BEFORE_TABLE = 64


class _Numbers:
    """One searcher's doc numbers found by path: its table once made, and those looked for
    one at a time (every path asked for before the table, and any the table lacks)."""

    def __init__(self) -> None:
        self.known: dict[str, int | None] = {}
        self.looks = 0
        self.table: dict[str, int] | None = None


_numbers: weakref.WeakKeyDictionary[Any, _Numbers] = weakref.WeakKeyDictionary()


def doc_number(scorer: Any, rel: str) -> int | None:
    """The live doc number of the note `rel` in the searcher of `scorer` (a PostingScorer:
    `first_live` of its path), kept while that searcher is the index's: a warm process
    meets the same notes among the closest in meaning search after search, and a commit
    makes a new searcher (and scorer), whose numbers are found afresh. After
    LOOKS_BEFORE_TABLE paths looked for one at a time (each in every segment until found),
    the searcher's table of every path's number answers (`_path_numbers`)."""
    numbers = _numbers.get(scorer)
    if numbers is None:
        numbers = _numbers[scorer] = _Numbers()
    if numbers.table is not None:
        found = numbers.table.get(rel)
        if found is not None:
            return found
    known = numbers.known
    if rel not in known:
        if len(known) >= NUMBERS_KEPT:
            known.clear()
        known[rel] = scorer.first_live("path", rel)
        numbers.looks += 1
        if numbers.table is None and numbers.looks >= LOOKS_BEFORE_TABLE:
            numbers.table = _path_numbers(scorer)
    return known[rel]


def _path_numbers(scorer: Any) -> dict[str, int]:
    """Each path's lowest live global doc number in the searcher of `scorer`, what
    `first_live` finds, read from every segment's saved postings at once (the `path` terms:
    one run of the segment's term table). Empty when a segment has no saved postings (the
    lowest number could be in it): every path is then looked for one at a time."""
    import numpy as np

    live = scorer.live()
    table: dict[str, int] = {}
    for reader, base in reversed(scorer.leaves):  # an earlier segment's number wins
        saved = scorer.cache.saved(reader)
        if saved is None:
            return {}
        keys, ids, starts = saved.field_terms("path")
        if not len(ids):
            continue
        try:  # every key is `path` NUL the path, and a path holds no NUL
            paths = keys.decode("utf-8").split("path\0")[1:]
        except UnicodeDecodeError:
            return {}
        if len(paths) != len(starts) - 1:
            return {}
        numbers = ids + base
        # Per term, its first live posting: the first live one at or after its start
        # (ids ascend within a term), kept if it lies before the next term's start.
        after = np.flatnonzero(live[numbers])
        first = np.append(after, len(ids))[np.searchsorted(after, starts[:-1])]
        held = (first < starts[1:]).tolist()
        firsts = numbers[np.minimum(first, len(ids) - 1)].tolist()
        table.update(zip(compress(paths, held), compress(firsts, held), strict=True))
    return table


class WordCheck:
    """One search phrase's word-by-word check of its meaning-only hits."""

    def __init__(self, model: Any, folder: Any, text: str, query: Any) -> None:
        self.model, self.folder, self.text, self.query = model, folder, text, query
        self._words: on_topic.WordMeaning | None = None

    def defer(self, hit: Hit, near: float, others: float) -> None:
        """Leave the check on `hit` (`near`: its closest part's cosine, `others`: what the
        vault's other notes score), to run when the search asks (`relevance.is_close`)."""
        hit.close_check = partial(self._check, near=near, others=others)

    def _check(self, hit: Hit, near: float, others: float) -> None:
        # A note of one part is read by its closest sentence when its whole text is not
        # close (a sentence about the phrase among unrelated ones); a note of several parts
        # already is by its closest part.
        if self._words is None:
            self._words = on_topic.WordMeaning(self.model, self.folder, self.text, self.query)
        words = self._words
        if not hit.close:
            body = " ".join(str(chunk[5]) for chunk in hit.chunks)
            near = max(near, words.sentence_cosine(body))
            hit.similarity, hit.cosine = near - others, near
            hit.close = on_topic.close(self.text, near, hit.similarity)
        if hit.close:
            note = " ".join([hit.title, *(str(chunk[5]) for chunk in hit.chunks)])
            hit.close = words.best(note) >= MIN_WORD_COSINE


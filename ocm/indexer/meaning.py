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
from typing import Any

from . import ontopic as on_topic
from .hits import Hit
from .relevance import MIN_WORD_COSINE

# Notes found by their path in one searcher (`doc_number`), per scorer: ~100 bytes each.
NUMBERS_KEPT = 50_000
_numbers: weakref.WeakKeyDictionary[Any, dict[str, int | None]] = weakref.WeakKeyDictionary()


def doc_number(scorer: Any, rel: str) -> int | None:
    """The live doc number of the note `rel` in the searcher of `scorer` (a PostingScorer:
    `first_live` of its path), kept while that searcher is the index's: a warm process
    meets the same notes among the closest in meaning search after search, and a commit
    makes a new searcher (and scorer), whose numbers are found afresh."""
    known = _numbers.get(scorer)
    if known is None or len(known) >= NUMBERS_KEPT:
        known = _numbers[scorer] = {}
    if rel not in known:
        known[rel] = scorer.first_live("path", rel)
    return known[rel]


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


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
# Paths a process looks for one at a time (each in every segment until found) before it
# reads every segment's paths into tables (`_segment_paths`): a one-shot search never does,
# a warm process soon does (~7 searches at 10k notes).
LOOKS_BEFORE_TABLES = 64
# A path whose term holds several documents in a segment (a note rewritten before a merge):
# its first live one is looked for as before (`first_live`).
_SEVERAL = -1


class _Numbers:
    """One searcher's doc numbers found by path: its segments' tables once made, and those
    looked for one at a time (before the tables, and any path no table holds)."""

    def __init__(self) -> None:
        self.known: dict[str, int | None] = {}
        self.tables: list[tuple[dict[str, int], int]] | None = None


_numbers: weakref.WeakKeyDictionary[Any, _Numbers] = weakref.WeakKeyDictionary()
# Per index (its scorers' shared SegmentCache): segment id -> path -> local doc number (or
# _SEVERAL). Segments never change, so a commit's new searcher reads only its new segments'.
_paths: weakref.WeakKeyDictionary[Any, dict[str, dict[str, int]]] = weakref.WeakKeyDictionary()
_looks = [0]  # paths this process looked for one at a time


def doc_number(scorer: Any, rel: str) -> int | None:
    """The live doc number of the note `rel` in the searcher of `scorer` (a PostingScorer:
    `first_live` of its path), kept while that searcher is the index's: a warm process
    meets the same notes among the closest in meaning search after search, and a commit
    makes a new searcher (and scorer). Once the process has looked for LOOKS_BEFORE_TABLES
    paths one at a time, each segment's table of its paths answers (`_segment_paths`)."""
    numbers = _numbers.get(scorer)
    if numbers is None:
        numbers = _numbers[scorer] = _Numbers()
    if numbers.tables is None and _looks[0] >= LOOKS_BEFORE_TABLES:
        numbers.tables = _tables(scorer)
    known = numbers.known
    if rel in known:
        return known[rel]
    if numbers.tables:
        live = scorer.live()
        for paths, base in numbers.tables:  # `first_live`'s order: segment by segment
            local = paths.get(rel)
            if local is None:
                continue
            if local == _SEVERAL:
                break  # looked for below
            if live[base + local]:
                return base + local
    if len(known) >= NUMBERS_KEPT:
        known.clear()
    known[rel] = scorer.first_live("path", rel)
    _looks[0] += 1
    return known[rel]


def _tables(scorer: Any) -> list[tuple[dict[str, int], int]]:
    """The path table of each segment of `scorer`'s searcher with its first global doc
    number, in `first_live`'s order; empty when a segment has no saved postings (its paths
    are then looked for one at a time)."""
    from .postings import _segment_key

    kept = _paths.get(scorer.cache)
    if kept is None:
        kept = _paths[scorer.cache] = {}
    segments = {_segment_key(reader): reader for reader, _ in scorer.leaves}
    for gone in [key for key in kept if key not in segments]:
        kept.pop(gone, None)  # merged away
    out = []
    for reader, base in scorer.leaves:
        key = _segment_key(reader)
        if key not in kept:
            paths = _segment_paths(scorer.cache.saved(reader))
            if paths is None:
                return []
            kept[key] = paths
        out.append((kept[key], base))
    return out


def _segment_paths(saved: Any) -> dict[str, int] | None:
    """Path -> local doc number of each `path` term of a segment's saved postings (one run
    of its term table), _SEVERAL for a term of several documents; None without saved
    postings or with a path that is not UTF-8."""
    if saved is None:
        return None
    keys, ids, starts = saved.field_terms("path")
    try:  # every key is `path` NUL the path, and a path holds no NUL
        paths = keys.decode("utf-8").split("path\0")[1:]
    except UnicodeDecodeError:
        return None
    if len(paths) != len(starts) - 1 or not len(ids):
        return None if len(paths) else {}
    first = ids[starts[:-1]]  # each term's first document (a copy)
    first[(starts[1:] - starts[:-1]) != 1] = _SEVERAL
    return dict(zip(paths, first.tolist(), strict=True))


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


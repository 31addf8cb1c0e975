"""Relevance: which hits of a search phrase are matches at all (seed 004: say "no results"
rather than show weak matches).

BM25F scores have no absolute scale, so a share of the best score lets everything through
when the best is itself weak (`backoff.py` against notes that share only `py`). Relevance
is read instead from what a hit holds of the query: the idf-weighted share of the query's
terms found anywhere in the note (`coverage`). A term no note holds weighs the most, so a
hit that shares only a common part of the query (`py`, `1`) covers little of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .postings import PostingScorer

# A hit of a search phrase must hold at least this share of the query's information
# (idf-weighted terms). Pasted paragraphs (over MAX_PHRASE_WORDS words) are exempt: a long
# issue text is matched by a small share of its words.
MIN_COVERAGE = 0.25
MAX_PHRASE_WORDS = 20
PART_CREDIT = 0.5


def _idf(df: int, total: int) -> float:
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


def coverage(scorer: PostingScorer, words: Iterable[tuple[str, ...]], fields: Iterable[str],
             docs: Iterable[int]) -> dict[int, float]:
    """Global doc number -> share (0..1) of the query's information that the doc holds in
    any of `fields`. `words` are the index terms of each query word (a word and its parts):
    a word weighs its rarest term's idf, and a doc holding only a part of it (`1` of `Q1`)
    is credited with that part's idf alone."""
    docs = set(docs)
    fields = tuple(fields)
    total = max(scorer.searcher.doc_count_all(), 1)
    idf: dict[str, tuple[float, set[int]]] = {}
    for term in {t for word in words for t in word}:
        holders: set[int] = set()
        for reader, base in scorer.leaves:
            for field in fields:
                entry = scorer.cache.postings(reader, field, term)
                if entry is not None:
                    holders.update(base + doc for doc in entry.ids)
        idf[term] = (_idf(len(holders), total), holders & docs)
    # A word's first term is the word itself; holding only one of its parts (`1` of `Q1`,
    # `py` of `backoff.py`) says less than holding the word.
    groups = [[(w * (1.0 if n == 0 else PART_CREDIT), held)
               for n, (w, held) in enumerate(idf[t] for t in dict.fromkeys(word))]
              for word in dict.fromkeys(words)]
    tops = [max(idf[t][0] for t in word) for word in dict.fromkeys(words)]
    # A word weighs 1 + its idf: rarer words say more, and in a vault of a few notes (where
    # every idf is near 0 or near its maximum) each word still has its say.
    whole = sum(1.0 + top for top in tops)
    return {doc: sum((1.0 + top) * max((w for w, held in group if doc in held), default=0.0)
                     / top for group, top in zip(groups, tops, strict=True) if top)
            / whole for doc in docs}


def is_phrase(text: str) -> bool:
    """A search phrase (as opposed to a pasted paragraph), whose hits must cover it."""
    return len(text.split()) <= MAX_PHRASE_WORDS


def relevant(hit: Any) -> bool:
    """False for a weak match: a hit whose `coverage` was measured and is too low."""
    return hit.coverage is None or hit.coverage >= MIN_COVERAGE

"""Relevance: which hits of a search phrase are matches at all (seed 004: say "no results"
rather than show weak matches).

BM25F scores have no absolute scale, so a share of the best score lets everything through
when the best is itself weak (`backoff.py` against notes that share only `py`). Relevance
is read instead from what a hit holds of the query: the weight of the most telling query
word found in the note against the query's most telling word (`coverage`). A term no note
holds weighs the most, so a hit that shares only a common part of the query (`py` of
`backoff.py`, `1` of `Q1`) covers little of it. A hit close in meaning (a paraphrase)
is relevant whatever words it shares.
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from .postings import PostingScorer

# A hit of a search phrase must hold a word worth at least this share of the query's most
# telling word (weights: 1 + idf). 0.25 cost 0.005-0.015 nDCG on the conversational sets
# (questions whose relevant note holds only their common words); 0.1 costs nothing there and
# still drops notes sharing only a common part of a word. Pasted paragraphs (over
# MAX_PHRASE_WORDS words) are exempt: a long issue text is matched by a few of its words.
MIN_COVERAGE = 0.1
MAX_PHRASE_WORDS = 20
PART_CREDIT = 0.5
# A hit is close in meaning by itself (relevant without a query word) when its cosine
# with the query (static embeddings) reaches MIN_COSINE, stands MIN_SIMILARITY above the
# mean of the vault's other notes for the query, and, for a search phrase, one of its words
# is as close as MIN_WORD_COSINE to one of the phrase's (ontopic.WordMeaning). The whole
# texts' cosines do not tell alone: "the kitten" against "Our cat sleeps on the radiator"
# is 0.23 (0.25 above the other notes), "docker compose" against "Use pnpm, not npm" 0.31
# (0.27 above), "kubernetes" against "The deploy pipeline runs on GitHub Actions" 0.28;
# their closest words: kitten/cat 0.57, docker/npm 0.27, kubernetes/deploy 0.30. On the dev
# splits (bench/abstain.py) a search phrase's relevant hits all but never hold none of its
# words (1 of 1,487 on LoCoMo and REALTALK sessions), so the word rule costs nothing
# measured there. A pasted paragraph (an issue text) is matched by meaning far more often:
# a cosine of 0.3 by itself, no relative or word rule (SWE-bench: any stricter rule dropped
# relevant patches, bench/README.md).
MIN_COSINE = 0.2
MIN_SIMILARITY = 0.12
MIN_WORD_COSINE = 0.45
# A phrase's note whose whole text is not close but not far either (a cosine of at least
# MIN_DILUTED_COSINE) is read by its closest sentence: "Our cat sleeps on the radiator. A
# full disk, say." is 0.198 from "the kitten" as a whole, 0.267 by its first sentence.
MIN_DILUTED_COSINE = 0.15
MIN_COSINE_PARAGRAPH = 0.3
MIN_SIMILARITY_PARAGRAPH = -1.0
# What a vault's other notes score against a query on average, for a lone note (no others
# to average): about 0 for short memories (the fixtures of tests/test_ontopic.py).
TYPICAL_OTHERS = 0.0
# A pasted paragraph's hit is on topic by its words when it holds at least this share of
# the paragraph's idf-weighted words (each word weighs its idf in the vault; a word no note
# holds weighs the most), or one of its identifiers whole (`idents`). With meaning off a
# paragraph's hits are not filtered (its words are all there is to go by).
MIN_MASS = 0.3
# A pasted paragraph is answered only when the vault holds its uncommon words at least this
# fraction as often as its common ones (`ontopic.familiarity`), unless it names a package of
# the vault's own; one importing a package no note holds never is (`ontopic.project`). On
# SWE-bench another repository's issue gets nothing 81.8 % of the time (familiarity alone
# at 0.25: 27 %) for 0.001 in-group nDCG@10 (0.45: 80.4 % for 0, 0.5: 84 % for 0.010;
# docs/decisions.md).
MIN_FAMILIAR = 0.45
FULL_COVERAGE = 1.0 - 1e-9  # holds the query's most telling word (float sums aside)
# Which documents hold a query term (`held`), kept per scorer one bit a document: a warm
# process meets the same query words search after search. At most this many bytes of
# bits per scorer (10k notes: ~800 terms; 100k: ~80), least recently used dropped first.
HELD_BYTES_KEPT = 1_000_000
_held: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, tuple[str, ...]], tuple[int, Any]]] \
    = weakref.WeakKeyDictionary()


def held(scorer: PostingScorer, term: str, fields: tuple[str, ...], docs: Any) -> tuple[int, Any]:
    """(how many live documents hold `term` in any of `fields`, True for each of the global
    doc numbers `docs` (numpy intp) that does): `scorer.holders` counted and read at `docs`,
    its bits kept for the scorer's life (a commit makes a new scorer)."""
    import numpy as np

    kept = _held.get(scorer)
    if kept is None:
        kept = _held[scorer] = OrderedDict()
    key = (term, fields)
    found = kept.get(key)
    if found is None:
        mask = scorer.holders(term, fields)
        found = kept[key] = (int(mask.sum()), np.packbits(mask))
        # Every mask of one scorer is as long (its doc count).
        while len(kept) * len(found[1]) > HELD_BYTES_KEPT and len(kept) > 1:
            kept.popitem(last=False)
    else:
        kept.move_to_end(key)
    count, bits = found
    # Bit `doc` of the packed mask (np.packbits: the first document in the high bit).
    return count, ((bits[docs >> 3] >> (7 - (docs & 7))) & 1).astype(bool)


def _idf(df: int, total: int) -> float:
    return math.log(1.0 + (total - df + 0.5) / (df + 0.5))


def coverage(scorer: PostingScorer, words: Iterable[tuple[str, ...]], fields: Iterable[str],
             docs: Iterable[int]) -> dict[int, float]:
    """Global doc number -> how much (0..1) of the query's most telling word the doc's best
    held word amounts to, in any of `fields`. `words` are the index terms of each query
    word (a word and its parts): a word weighs 1 + its rarest term's idf, and a doc
    holding only a part of it (`1` of `Q1`) is credited with half that part's idf."""
    import numpy as np

    docs = list(dict.fromkeys(docs))
    fields = tuple(fields)
    at = np.fromiter(docs, dtype=np.intp, count=len(docs))
    # Live documents only (a deleted one's postings stay until its segment is merged), so
    # that every index of the same notes weighs a word alike (ocm/indexer/livestats.py).
    total = max(scorer.searcher.doc_count(), 1)
    idf: dict[str, tuple[float, Any]] = {}
    for term in {t for word in words for t in word}:
        count, holding = held(scorer, term, fields, at)  # and which of `docs` hold it
        idf[term] = (_idf(count, total), holding)
    # A word's first term is the word itself; holding only one of its parts (`1` of `Q1`,
    # `py` of `backoff.py`) says less than holding the word.
    groups = [[(w * (1.0 if n == 0 else PART_CREDIT), holding)
               for n, (w, holding) in enumerate(idf[t] for t in dict.fromkeys(word))]
              for word in dict.fromkeys(words)]
    tops = [max(idf[t][0] for t in word) for word in dict.fromkeys(words)]
    # A word weighs 1 + its idf: rarer words say more, and in a vault of a few notes (where
    # every idf is near 0 or near its maximum) each word still has its say. A hit is as
    # strong as the best word it holds: a question's words are rarely all in one note,
    # but a relevant note holds at least one of its telling words.
    weights = [1.0 + top for top in tops]
    strongest = max(weights, default=0.0)
    if not strongest:
        return dict.fromkeys(docs, 0.0)
    # Each doc's best (weight x its best held term's credit / top) over the words, for all
    # docs at once: the float64 operations a doc at a time made, in the same order (every
    # credit is positive, so "none held" is the 0.0 it defaulted to).
    best = np.zeros(len(docs))
    for group, top, weight in zip(groups, tops, weights, strict=True):
        if top:
            held_best = np.zeros(len(docs))
            for w, holding in group:
                held_best = np.maximum(held_best, np.where(holding, w, 0.0))
            best = np.maximum(best, weight * held_best / top)
    return dict(zip(docs, (best / strongest).tolist(), strict=True))


def is_phrase(text: str) -> bool:
    """A search phrase (as opposed to a pasted paragraph), whose hits must cover it."""
    return len(text.split()) <= MAX_PHRASE_WORDS


def on_topic_by_words(hit: Any) -> bool:
    """The hit holds words of the query that matter: for a pasted paragraph a share of its
    weighted words (`mass`) or one of its identifiers whole (`idents`), for a search
    phrase a word worth a tenth of its most telling one (`coverage`); unmeasured (a hit
    on a file the query names): True."""
    if hit.mass is not None:
        return hit.cosine is None or hit.mass >= MIN_MASS or hit.idents > 0
    return hit.coverage is None or hit.coverage >= MIN_COVERAGE


def familiar(hit: Any) -> bool:
    """A pasted paragraph's hit is in a vault of the paragraph's project: it names a package
    of the vault's own, or imports none the vault lacks and its uncommon words are familiar
    (MIN_FAMILIAR); unmeasured (meaning off): True."""
    if hit.whose is not None:
        return hit.whose == "own"
    return hit.familiar is None or hit.familiar >= MIN_FAMILIAR


def is_close(hit: Any) -> bool:
    """`hit.close`, its word-by-word check run first where the search left one
    (ocm/indexer/meaning.py)."""
    check = hit.close_check
    if check is not None:
        hit.close_check = None
        check(hit)
    return hit.close


def mark_matched(hits: list[Any]) -> None:
    """Set `matched` (words, meaning, both) on the hits a search returns, each hit's
    `close` as its word-by-word check makes it (run now where it has not run yet)."""
    for hit in hits:
        by_words = on_topic_by_words(hit)
        close = is_close(hit)
        hit.matched = ("both" if by_words and close else "words" if by_words
                       else "meaning" if close or not hit.bm25 else "words")


def relevance_filter(hits: list[Any]) -> Callable[[Any], bool]:
    """`relevant` for the hits of one search (`mark_matched` then says how the hits it
    returns matched). Meaning stands in for the query's words where they fail: once a hit
    holds the query's most telling word (an identifier, a rare name), a hit holding none
    of its words is not made relevant by being close in meaning (a random token's
    embedding is its pieces', close to every note with those pieces). `is_close` is asked
    only where it decides."""
    words_found = any(h.coverage is not None and h.coverage >= FULL_COVERAGE for h in hits)
    if any(hit.mass is not None for hit in hits):
        # A pasted paragraph is answered or not as a whole: when one hit is on topic its
        # ranking stands as it is (dropping the others cost in-group SWE-bench 0.005 nDCG@10
        # for one point of cross-repository "nothing", docs/decisions.md).
        # It is asked of each hit's own vault (a search may span the user's vault too).
        answered = any(familiar(hit) and (on_topic_by_words(hit) or is_close(hit))
                       for hit in hits)
        return lambda hit: answered

    def relevant(hit: Any) -> bool:
        """False for a hit off topic: neither its words (`on_topic_by_words`) nor its
        meaning (`close`: a cosine high by itself and above the vault's other notes) say
        it is about the query."""
        return on_topic_by_words(hit) or (not words_found and is_close(hit))

    return relevant

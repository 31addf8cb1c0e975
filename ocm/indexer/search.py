"""Ranking: BM25F over boosted fields, then decay, supersede order, threshold and MMR."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from whoosh import query as Q

from ocm.vault.memories import DEFAULT_IMPORTANCE, EVERGREEN_TYPES, HIDDEN_STATUSES

from . import confidence
from . import ontopic as on_topic
from .chunks import chunk_of, scored_chunks
from .hits import Filters, Hit, candidate, holds_file
from .index import NoteIndex
from .meaning import WordCheck, doc_number
from .postings import PostingScorer, best
from .query import MAX_FILTER_QUERY_WORDS
from .rankcolumn import row_of
from .relevance import (
    MIN_DILUTED_COSINE,
    TYPICAL_OTHERS,
    is_phrase,
    mark_matched,
    relevance_filter,
)
from .schema import FIELD_BOOSTS

# Recency reaches its full (small, see DECAY_FLOOR) weight over months, not weeks: a
# conversation or project weeks old is still one piece of current context.
HALF_LIFE_DAYS = 60.0
# Decay never takes a score below this share of itself: recency breaks near-ties, a strong
# old match stays on top (a lower floor measurably buries old answers on real data).
DECAY_FLOOR = 0.95
SUPERSEDED_PENALTY = 0.5
# A memory's own importance (1-10) as a mild prior: ±IMPORTANCE_WEIGHT at the ends of the
# scale, none at the default, so records written without one are unaffected.
IMPORTANCE_WEIGHT = 0.1
RELATIVE_THRESHOLD = 0.12
# Diversity weighs a tenth: sketches of conversation notes share small talk, so a stronger
# diversity term (0.8) reordered near-ties more by chance than by redundancy.
MMR_LAMBDA = 0.9
# A date named next to real content ("what did Kate cook on 29 Dec") is a preference, not a
# filter: the event is often written down a day or two later.
DATE_PRIOR = 1.5
DATE_SLACK = timedelta(days=2)
CANDIDATES = 60
# Note paths kept made (search._note_path): a few hundred bytes each.
NOTE_PATHS = 20_000
# Candidates' values kept made per scorer (`_hit`): ~1 KB each, the strings shared with the
# rank rows the index's cache keeps.
HIT_VALUES_KEPT = 10_000
SEARCH_FIELDS = tuple(f for f in FIELD_BOOSTS if f != "tags")
# Words that describe what is being looked for rather than its content ("my last session").
_META_WORDS = frozenset({
    "session", "sessions", "note", "notes", "memory", "memories", "work", "worked", "working",
    "did", "do", "done", "doing", "what", "i", "we", "my", "our", "me", "us", "show", "list",
    "find", "all", "any", "previous", "last", "latest", "recent", "recently", "everything",
    "happened", "have", "has",
})
_SESSION_WORDS = frozenset({"session", "sessions"})
_ACTIVITY_WORDS = frozenset({"did", "do", "done", "doing", "work", "worked", "working"})
# What a query asks for, read from its wording (seed 003's query-time type classification,
# with words instead of a model): soft multipliers on matching kinds and memory types.
PRIOR_BOOST = 1.3
# A question for a kind of record (a gotcha, a decision, a procedure) asks for what is known,
# which memories state and session logs only narrate, even when worded as work done ("why
# did we drop X"): sessions then count for less than for a plain question.
KNOWLEDGE_SESSION = 0.6
# Resuming work ("where was I with X") asks for the latest session on X: among sessions,
# recency then weighs more than the gentle general decay (RECENT_FLOOR instead of
# DECAY_FLOOR). Not read from pasted text, whose "continue" is not an instruction.
RECENT = "@recent"
RECENT_FLOOR = 0.5
_RESUME = re.compile(r"\b(where was i|left off|pick(?:ing)? up|continue|resum\w*)\b")
_INTENTS: list[tuple[re.Pattern[str], dict[str, float]]] = [
    (_RESUME, {"session": PRIOR_BOOST}),
    (re.compile(r"\bsessions?\b"), {"session": PRIOR_BOOST}),
    (re.compile(r"\b(gotchas?|pitfalls?|watch out|careful|caveats?|known issues?|warnings?|"
                r"before (?:editing|changing|touching))\b"),
     {"gotcha": PRIOR_BOOST, "bug_fix": 1.15, "session": KNOWLEDGE_SESSION}),
    (re.compile(r"\b(why|decid\w*|decisions?|chose|choose|instead of|what do we use)\b"),
     {"decision": PRIOR_BOOST, "trade_off": 1.15, "session": KNOWLEDGE_SESSION}),
    (re.compile(r"\b(how (?:do|to|can) (?:i|we)|steps?|procedures?)\b"),
     {"procedure": PRIOR_BOOST, "session": KNOWLEDGE_SESSION}),
    # A symptom ("slow", "flaky", "out of memory") asks for what fixed it.
    (re.compile(r"\b(errors?|fail\w*|crash\w*|broken|bugs?|slow|leak\w*|flaky|killed|"
                r"timeouts?|exceptions?|out of memory|oom|regression)\b"),
     {"bug_fix": PRIOR_BOOST}),
]


# Work done, as opposed to what is true: "what did I change", "the refactor I worked on".
_ACTIVITY = re.compile(r"\b(did|done|doing|worked|working|changed|fixed|tried|wrote|was i|"
                       r"were we|yesterday|today|last time)\b")
# Without such words a question asks what is true, which memories state and session logs
# only narrate: sessions then count for a little less.
SESSION_NARRATIVE = 0.75
# A whitespace-delimited run holding `x/y`, `x.y`, `x_y`. The lookbehind starts a match only
# at a run's start and `\S*+` never backtracks: linear, where `\S*\w[/\\._]\w\S*` retried
# every offset of a long token (a 100,000-character token took a minute).
_IDENTIFIER = re.compile(r"(?<!\S)(?=\S*?\w[/\\._]\w)\S++")
# Wording read as intent only in search phrases, not in pasted paragraphs.
MAX_INTENT_WORDS = MAX_FILTER_QUERY_WORDS


def intent_priors(query: str, about_sessions: bool = False) -> dict[str, float]:
    """Multipliers by kind ('session') or memory type that the query's wording implies
    (the strongest wins where two intents name the same key); `about_sessions` when a tool
    or date filter already points at work done. RECENT in the result asks rank() for
    recency among sessions."""
    # Intent is read from words, not from paths or identifiers ("src/db/session.py").
    text = _IDENTIFIER.sub(" ", query.lower())
    priors: dict[str, float] = {}
    for pattern, boosts in _INTENTS:
        if pattern.search(text):
            for key, value in boosts.items():
                priors[key] = max(priors[key], value) if key in priors else value
    if "session" not in priors and not about_sessions and not _ACTIVITY.search(text):
        priors["session"] = SESSION_NARRATIVE
    if _RESUME.search(text) and len(query.split()) <= MAX_INTENT_WORDS:
        priors[RECENT] = 1.0
    return priors


def meta_only(text: str) -> tuple[bool, str | None]:
    """(True, implied kind) when the text names no content, only what to list."""
    words = [w.strip("?!.,;:'\"").lower() for w in text.split()]
    words = [w for w in words if w]
    if not words or any(w not in _META_WORDS for w in words):
        return False, None
    # "my last session", "what did I do": a listing of sessions (work), not of memories.
    return True, "session" if (_SESSION_WORDS | _ACTIVITY_WORDS) & set(words) else None



def _filter_query(filters: Filters) -> tuple[Q.Query | None, Q.Query | None]:
    parts: list[Q.Query] = []
    if filters.kind:
        parts.append(Q.Term("kind", filters.kind))
    if filters.types:
        parts.append(Q.Or([Q.Term("type", t) for t in filters.types]))
    if filters.status:
        parts.append(Q.Term("status", filters.status))
    if filters.tool:
        parts.append(Q.Term("tool", filters.tool))
    if filters.tag:
        parts.append(Q.Term("tags", filters.tag.lower()))
    if filters.since or filters.until:
        start = int(filters.since.timestamp()) if filters.since else None
        end = int(filters.until.timestamp()) - 1 if filters.until else None
        parts.append(Q.NumericRange("date", start, end))
    mask = None
    if not filters.include_resolved and not filters.status:
        mask = Q.Or([Q.Term("status", s) for s in HIDDEN_STATUSES])
    return (Q.And(parts) if parts else None), mask


def term_clauses(terms: list[str]) -> list[tuple[str, str, float]]:
    """(field, term, boost) for every query term in every text field, then in tags."""
    clauses = [(name, term, FIELD_BOOSTS[name]) for term in terms for name in SEARCH_FIELDS]
    return clauses + [("tags", term, FIELD_BOOSTS["tags"]) for term in terms]


def text_query(text: str, paths: tuple[str, ...] = ()) -> tuple[Q.Query | None, list[str]]:
    terms = on_topic.query_terms(text)
    clauses: list[Q.Query] = [
        Q.Term(name, term, boost=boost) for name, term, boost in term_clauses(terms)]
    for fragment in paths:
        clean = fragment.lower().strip("`'\"").replace("*", "").replace("?", "")
        if clean:
            clauses.append(Q.Wildcard("files", f"*{clean}*", boost=FIELD_BOOSTS["files"]))
    if not clauses:
        return None, terms
    query = Q.Or(clauses)
    # Execution strategy only (same documents, same scores): sum each clause's postings into
    # an array instead of advancing a binary tree of ~40 union matchers document by
    # document, which Whoosh picks by itself only for segments under 5,000 notes.
    # Measured at 10k notes: 3.5x less CPU per query, identical top-60 on 40 queries.
    query.matcher_type = Q.Or.ARRAY_MATCHER
    return query, terms


@lru_cache(maxsize=NOTE_PATHS)
def _note_path(root: Path, rel: str) -> Path:
    """A note's path: one `Path` per note, not one per hit of every search (`root / rel`
    parses and joins again each time)."""
    return root / rel


def _hit(index: NoteIndex, scorer: PostingScorer, number: int, score: float) -> Hit:
    """A hit of the note at global doc `number` of `scorer`'s searcher, scoring `score`:
    its values made once per scorer (`_hit_values`; a warm process meets most candidates
    in search after search) and copied into a new `Hit`."""
    kept = scorer.hit_values
    values = kept.get(number)
    if values is None:
        if len(kept) >= HIT_VALUES_KEPT:
            kept.clear()
        values = kept[number] = _hit_values(index, scorer, number)
    hit = candidate(values)
    hit.score = score
    return hit


def _hit_values(index: NoteIndex, scorer: PostingScorer, number: int) -> dict[str, Any]:
    """What a hit of the note at global doc `number` of `scorer`'s searcher holds but its
    score (`hits.candidate`'s values): made from its row of the rank column (its `meta`
    read when first asked for), else from its stored fields read now; its stored chunks
    read when they are first asked for (`Hit.chunks`)."""
    row = scorer.rank_row(number)
    meta: dict | None = None
    if row is None:  # a segment written before the rank column (ocm/indexer/rankcolumn.py)
        stored = scorer.stored_fields(number)
        # The cache's own dict, not a copy per candidate: what annotates a hit's meta (its
        # staleness, ocm/vault/git/staleness.py) gives the hit a new dict.
        meta = stored.get("meta") or {}
        row = row_of(stored)
    ident, kind, type_, title, status, tool, scope, epoch, rel, importance = row
    return {
        "id": ident, "kind": kind, "type": type_, "title": title, "status": status,
        "tool": tool, "scope": scope,
        "date": datetime.fromtimestamp(epoch) if epoch else None,
        "path": _note_path(index.resolved_root, rel), "_meta": meta,
        "meta_source": partial(scorer.meta, number) if meta is None else None,
        "_importance": importance, "project": index.vault.project,
        "chunk_source": partial(scorer.chunks, number),
        "relpath": rel,
    }


def candidates(index: NoteIndex, text: str, paths: tuple[str, ...], filters: Filters,
               limit: int = CANDIDATES, explain: bool = False,
               meaning: bool = True) -> list[Hit]:
    """Raw hits of one vault, best first (before decay and re-ranking): BM25F's, fused with
    the notes closest in meaning unless `meaning` is False or semantic search is off."""
    # Whoosh's query only where Whoosh scores it (a path filter); BM25F's clauses otherwise.
    query, terms = text_query(text, paths) if paths else (None, on_topic.query_terms(text))
    filter_q, mask = _filter_query(filters)
    # One searcher for the whole search: the doc numbers below are its own, and a commit by
    # another process reopens the index's searcher between two calls of `index.scorer()`.
    scorer = index.scorer()
    if query is None and not terms:
        if text.strip():
            return []  # words, but none searchable ("the and of a", "how do I")
        results = scorer.searcher.search(filter_q or Q.Every(), mask=mask, limit=None,
                                          sortedby="date", reverse=True)
        hits = [_hit(index, scorer, r.docnum, 0.0) for r in results]
        # Notes of one date in path order, not in the index's document order (which
        # differs between clones of one vault).
        hits.sort(key=lambda h: h.relpath)
        hits.sort(key=lambda h: h.date or datetime.min, reverse=True)
    elif paths:
        searcher = scorer.searcher
        results = searcher.search(query, filter=filter_q, mask=mask, limit=limit)
        hits = [_hit(index, scorer, r.docnum, r.score) for r in results]
        numbers = [r.docnum for r in results]
    else:
        # Same clauses, same scores, a faster way to add them up (ocm/indexer/postings.py).
        clauses = term_clauses(terms)
        wider = 2 * limit + 20  # room for the notes tied with the last one kept
        best = scorer.top(clauses, wider, allow=filter_q, mask=mask)
        if len(best) > limit and best[limit][1] == best[limit - 1][1]:
            # A tie across the cut: which of the tied notes make it is decided by their
            # paths, not by the index's document order (which differs between clones).
            if len(best) == wider and best[-1][1] == best[limit - 1][1]:
                best = scorer.top(clauses, scorer.searcher.doc_count_all(), allow=filter_q,
                                  mask=mask)  # more ties than that: all of them
            cut = best[limit - 1][1]
            tied = sorted((b for b in best if b[1] == cut),
                          key=lambda b: scorer.stored_fields(b[0])["path"])
            best = [b for b in best if b[1] > cut] + tied
        best = best[:limit]
        hits = [_hit(index, scorer, doc, score) for doc, score in best]
        numbers = [doc for doc, _ in best]
    for hit in hits:
        hit.bm25 = hit.score
    if terms and meaning:
        hits, numbers = _fuse(index, scorer, text, hits, numbers, filter_q, mask, explain)
    if explain and terms:
        # The search that ran, explained: the same candidates and scores, each with its
        # BM25F by field and the fusion step that made its score.
        for hit in hits:
            hit.explain = {**_explain(scorer.searcher, terms, paths, hit.relpath),
                           **(hit.fusion or {})}
    if terms:
        on_topic.measure(scorer, text, hits, numbers, paths, (*SEARCH_FIELDS, "tags"))
    if filters.file:
        hits = [h for h in hits if holds_file(h, filters.file)]
    if filters.author:
        needle = filters.author.lower()
        hits = [h for h in hits if needle in str(h.meta.get("author") or "").lower()]
    return hits


def _chunk_scorer(indexes: list[NoteIndex],
                  weight: float):  # -> (hit) -> [(score, position)]
    """Scores a hit's chunks with the statistics of the index it came from, meaning
    weighing `weight` (`semantic_weight`)."""
    stats: dict[Path, tuple[Callable, Callable]] = {}

    by_root = {str(ix.resolved_root): ix for ix in indexes}

    def for_hit(hit: Hit, terms: list[str]) -> list[tuple[float, int]]:
        if len(hit.chunks) < 2 or not terms:
            return [(0.0, 0)] if hit.chunks else []
        index = by_root.get(str(hit.path)[: -len(hit.relpath) - 1])
        if index is None:
            return [(0.0, 0)]
        if index.resolved_root not in stats:
            searcher = index.searcher()
            stats[index.resolved_root] = (lru_cache(maxsize=None)(searcher.idf),
                                          lru_cache(maxsize=None)(searcher.avg_field_length))
        idf, avgfl = stats[index.resolved_root]
        scored = scored_chunks(hit.chunks, terms, idf, avgfl)
        meaning = hit.part_similarities
        if not meaning or len(meaning) != len(hit.chunks):
            return scored
        return fused_chunks(scored, meaning, weight)

    return for_hit


def fused_chunks(scored: list[tuple[float, int]], meaning: list[float],
                 weight: float) -> list[tuple[float, int]]:
    """Chunk scores fused like notes' (`fusion`): each chunk's BM25F over the note's best
    chunk's, and its cosine with the query min-max scaled over the note's chunks; best
    first, file order breaking ties. Where some chunk holds the query's words, a chunk that
    holds none scores 0 (meaning orders the chunks that match, it does not list the rest);
    where none does (the note was found by meaning alone), meaning alone picks."""
    top = max(score for score, _ in scored)
    low, high = min(meaning), max(meaning)
    fused = [(fusion(score, top, meaning[pos], low, high, weight)
              if score > 0 or top <= 0 else 0.0, pos) for score, pos in scored]
    return sorted(fused, key=lambda pair: (-pair[0], pair[1]))


def fusion(bm25: float, best_bm25: float, cosine: float, low: float, high: float,
           weight: float) -> float:
    """Words and meaning in one score (0..1): BM25F over the best BM25F among those ranked
    together, and the cosine min-max scaled over them (`low`..`high`), weighted
    1 - `weight` and `weight`."""
    words = bm25 / best_bm25 if best_bm25 > 0 else 0.0
    close = (cosine - low) / (high - low) if high > low else 1.0
    return (1 - weight) * words + weight * close


# A transcript note (a whole conversation, one `##` per turn) may list this many of its
# turns in a grouped search: a question's evidence often lies in several turns of one
# conversation, while a cap keeps one long transcript from filling the list.
TRANSCRIPT_TURNS = 3


def grouped_hits(hits: list[Hit], text: str, indexes: list[NoteIndex], limit: int,
                 turns: int = TRANSCRIPT_TURNS) -> list[Hit]:
    """The default (grouped) result list of the ranked notes `hits`: one result per note
    with its best chunk for the query `text` (section, anchor, line, snippet), except that
    a transcript note also lists up to `turns` - 1 more matching turns as results of their
    own (each at the note's score times its BM25F share of the best turn's, as
    `chunk_hits` scores them), placed among the notes by score without reordering the
    notes and dropped below the relevance threshold; cut to `limit`."""
    terms = on_topic.query_terms(text)
    scorer = _chunk_scorer(indexes, semantic_weight(text))
    cutoff = RELATIVE_THRESHOLD * max((h.score for h in hits), default=0.0)
    extras: list[tuple[float, int, int, Hit]] = []
    for order, hit in enumerate(hits):
        scored = scorer(hit, terms)
        if not scored:
            continue
        top, best = scored[0]
        hit.chunk = chunk_of(hit.chunks[best], hit.relpath, terms, top)
        if hit.kind != "transcript":
            continue
        for score, position in scored[1:turns]:
            share_score = hit.score * score / top if top > 0 else 0.0
            if score <= 0 or share_score < cutoff:
                break
            chunk = chunk_of(hit.chunks[position], hit.relpath, terms, score)
            extras.append((share_score, order, position,
                           replace(hit, score=share_score, chunk=chunk)))
    # An extra turn goes before the first note after its own that scores below it.
    before: dict[int, list[tuple[float, int, int, Hit]]] = {}
    for extra in extras:
        score, parent = extra[0], extra[1]
        at = next((i for i in range(parent + 1, len(hits)) if hits[i].score < score),
                  len(hits))
        before.setdefault(at, []).append(extra)
    out: list[Hit] = []
    for at in range(len(hits) + 1):
        out.extend(item[3] for item in sorted(before.get(at, []),
                                              key=lambda item: (-item[0], item[1], item[2])))
        if at < len(hits):
            out.append(hits[at])
    found = out[:limit]
    for position, hit in enumerate(found, 1):
        hit.rank = position
    return found


def chunk_hits(hits: list[Hit], text: str, indexes: list[NoteIndex], limit: int) -> list[Hit]:
    """The chunks of the ranked notes `hits` as results of their own, best first: a note's
    best chunk keeps the note's score, its other matching chunks get a share of it in
    proportion to their BM25F."""
    terms = on_topic.query_terms(text)
    scorer = _chunk_scorer(indexes, semantic_weight(text))
    out: list[tuple[float, int, int, Hit]] = []
    for order, hit in enumerate(hits):
        scored = scorer(hit, terms)
        top = scored[0][0] if scored else 0.0
        for rank_in_note, (score, position) in enumerate(scored):
            if rank_in_note and score <= 0:
                break
            share = score / top if top > 0 else 1.0
            chunk = chunk_of(hit.chunks[position], hit.relpath, terms, score)
            out.append((hit.score * share, order, position,
                        replace(hit, score=hit.score * share, chunk=chunk)))
    out.sort(key=lambda item: (-item[0], item[1], item[2]))
    found = [item[3] for item in out[:limit]]
    for position, hit in enumerate(found, 1):
        hit.rank = position
    return found


# -- meaning: BM25F fused with the cosine similarity of static embeddings -------------------
# fused = (1 - w) * bm25 / best bm25 + w * cosine min-max scaled over this query's
# candidates: BM25F's best CANDIDATES and the embeddings' best VECTOR_CANDIDATES. The weight
# w of meaning follows the query's length: a search phrase's few words are matched well by
# their own postings and poorly by the mean of their few token vectors, a pasted paragraph
# (an issue text) the other way round. Measured on the dev splits (bench/README.md): each
# set of questions prefers 0.2 to 0.3, the pasted issues 0.4 to 0.3.
SEMANTIC_WEIGHT = 0.2
PARAGRAPH_SEMANTIC_WEIGHT = 0.4
VECTOR_CANDIDATES = 20
FUSED_SCALE = 100.0  # fused scores on BM25F's usual range, for display and --explain


def semantic_weight(text: str) -> float:
    """The weight of meaning in the fused score of the query `text`."""
    return SEMANTIC_WEIGHT if is_phrase(text) else PARAGRAPH_SEMANTIC_WEIGHT


def _fuse(index: NoteIndex, scorer: PostingScorer, text: str, hits: list[Hit],
          numbers: list[int], allow: Q.Query | None, mask: Q.Query | None,
          explain: bool = False) -> tuple[list[Hit], list[int]]:
    """Add the notes closest in meaning to the candidates and re-score every candidate
    with the fused score (`numbers`: the candidates' doc numbers in `scorer`'s searcher;
    each hit's `fusion` step only for `explain`).
    Without embeddings (turned off, or the model did not load) the BM25F hits come back as
    they were."""
    import numpy as np

    from .embed import embedder

    store = index.vectors()
    model, _ = embedder(index.vault.root)
    if store is None or model is None or not store.count:
        return hits, numbers
    query = model.embed([text], store.folder)[0]
    sims = store.cosines(query)
    # What the other notes of this vault score against this query: a hit is close in
    # meaning by how far it stands above them (relevance.MIN_SIMILARITY), not by its bare
    # cosine, which shared surface pieces (`.py`, `only`) lift for every note alike. Summed
    # in float64 one after the other (accumulate, not numpy's pairwise sum): the same
    # float as Python's sum() of the cosines.
    total = float(np.add.accumulate(sims, dtype=np.float64)[-1])
    count = len(sims)
    keep = scorer.doc_set(allow) if allow is not None else None
    hide = scorer.doc_set(mask) if mask is not None else frozenset()
    hits, numbers = list(hits), list(numbers)
    rels = [hit.relpath for hit in hits]  # each hit's stored `path`
    known = set(rels)
    for row in best(sims, VECTOR_CANDIDATES).tolist():
        rel = store.path(row)
        if rel in known:
            continue
        number = doc_number(scorer, rel)
        if number is None or number in hide or (keep is not None and number not in keep):
            continue
        hits.append(_hit(index, scorer, number, 0.0))
        numbers.append(number)
        rels.append(rel)
    if not hits:
        return hits, numbers
    bm25 = [hit.score for hit in hits]
    rows = store.rows(rels)
    # Each row's cosine read in one look (`tolist`: the floats `float(sims[row])` gives).
    found = iter(sims[np.array([row for row in rows if row is not None], dtype=np.intp)]
                 .tolist())
    own = [next(found) if row is not None else 0.0 for row in rows]
    cos = list(own)
    closest = list(own)  # what makes a hit relevant by meaning: its closest part
    parts = store.parts_similarities(rows, query)
    for at, (hit, part) in enumerate(zip(hits, parts, strict=True)):
        # A transcript's whole-conversation embedding blurs its turns: it ranks by the
        # mean of that and its closest turn's (the closest turn alone cost the
        # conversation-level ranking on REALTALK, bench/README.md), and counts as close in
        # meaning when its closest turn is (the turn is what the hit shows).
        hit.part_similarities = part
        if hit.part_similarities:
            closest[at] = max(own[at], max(hit.part_similarities))
            cos[at] = (own[at] + max(hit.part_similarities)) / 2
    high_b = max(bm25)
    low_c, high_c = min(cos), max(cos)
    weight = semantic_weight(text)
    phrase = is_phrase(text)
    checks: WordCheck | None = None
    for hit, b, c, mine, near in zip(hits, bm25, cos, own, closest, strict=True):
        # BM25F over its best: a note that shares a word with the query keeps a share of
        # the score (min-max put the weakest keyword match at 0, and the relative threshold
        # then dropped it from a small vault's results).
        # A lone note has no others to stand above: it is read against what other notes
        # score for a query on average (relevance.TYPICAL_OTHERS).
        others = (total - mine) / (count - 1) if count > 1 else TYPICAL_OTHERS
        hit.similarity = near - others
        hit.cosine = near
        hit.close = on_topic.close_by(phrase, near, hit.similarity)
        diluted = near >= MIN_DILUTED_COSINE and not hit.part_similarities
        if not b and phrase and (hit.close or diluted):
            # A note holding no word of a search phrase: the whole texts' embeddings are
            # close for unrelated notes too; one of its words must have a near twin here,
            # checked when the search first asks (ocm/indexer/meaning.py).
            checks = checks or WordCheck(model, store.folder, text, query)
            checks.defer(hit, near, others)
        hit.score = FUSED_SCALE * fusion(b, high_b, c, low_c, high_c, weight)
        if explain:
            hit.fusion = {"words": round(b, 4), "best_words": round(high_b, 4),
                          "cosine": round(c, 4),
                          "cosine_range": [round(low_c, 4), round(high_c, 4)],
                          "weights": [round(1 - weight, 2), round(weight, 2)],
                          "fused": round(hit.score, 4)}
    return hits, numbers


def _explain(searcher: Any, terms: list[str], paths: tuple[str, ...], path: str) -> dict:
    only = Q.Term("path", path)
    fields: dict[str, float] = {}
    for name in (*SEARCH_FIELDS, "tags"):
        sub, _ = text_query(" ".join(terms), paths if name == "files" else ())
        if sub is None:
            continue
        clauses = getattr(sub, "subqueries", ())  # text_query builds an Or of clauses
        narrowed = Q.Or([c for c in clauses if getattr(c, "fieldname", None) == name])
        if not narrowed.subqueries:
            continue
        found = searcher.search(narrowed, filter=only, limit=1)
        if found:
            fields[name] = round(found[0].score, 4)
    return {"fields": fields}


def decay(hit: Hit, now: datetime, floor: float = DECAY_FLOOR) -> float:
    if hit.type in EVERGREEN_TYPES or hit.date is None:
        return 1.0
    age_days = max(0.0, (now - hit.date).total_seconds() / 86400.0)
    return floor + (1.0 - floor) * math.pow(0.5, age_days / HALF_LIFE_DAYS)


def importance_prior(hit: Hit) -> float:
    """A memory's own importance (1-10, default 5) as a mild multiplier: at most
    IMPORTANCE_WEIGHT either way, 1.0 at the default."""
    value = hit.importance if hit.kind == "memory" else None
    if not isinstance(value, int) or isinstance(value, bool):
        return 1.0
    return 1.0 + IMPORTANCE_WEIGHT * (min(max(value, 1), 10) - DEFAULT_IMPORTANCE) / 5.0


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def in_window(hit: Hit, window: tuple[datetime | None, datetime | None],
              slack: timedelta = timedelta(0)) -> bool:
    since, until = window
    if hit.date is None:
        return False
    return (since is None or hit.date >= since - slack) and (
        until is None or hit.date < until + slack)


def rank(hits: list[Hit], now: datetime, limit: int, ranked: bool = True,
         priors: dict[str, float] | None = None,
         window: tuple[datetime | None, datetime | None] | None = None) -> list[Hit]:
    """Apply decay, intent and date priors, the superseded penalty, the threshold and MMR;
    number the survivors. `window` is a date range the query named alongside real content:
    notes inside it (or within DATE_SLACK of it) are favoured, none are excluded."""
    if not ranked:
        for position, hit in enumerate(hits[:limit], 1):
            hit.rank = position
            # Its meta read now (as ranking reads a ranked hit's), while a damaged index
            # can still be rebuilt and searched again (searcher.VaultSearch.run).
            hit.meta = hit.meta
        return hits[:limit]
    priors = dict(priors or {})
    if window is not None and priors.get("session") == SESSION_NARRATIVE:
        # A date named next to the content points at work done (intent_priors'
        # `about_sessions`): sessions are not discounted as mere narrative then.
        del priors["session"]
    recent = RECENT in priors
    for hit in hits:
        aged = decay(hit, now, RECENT_FLOOR if recent and hit.kind == "session" else DECAY_FLOOR)
        importance = importance_prior(hit)
        intent = priors.get("session" if hit.kind == "session" else hit.type, 1.0)
        dated = 1.0
        if window is not None:
            if in_window(hit, window):
                dated = DATE_PRIOR
            elif in_window(hit, window, DATE_SLACK):
                dated = 1.0 + (DATE_PRIOR - 1.0) / 2
        superseded = SUPERSEDED_PENALTY if hit.status == "superseded" else 1.0
        factor = aged * importance * intent * dated * superseded
        if hit.explain is not None:
            # Every factor between BM25F and the displayed score (their product).
            # `base`: the score the factors multiply (the fused score with meaning on,
            # else BM25F itself).
            hit.explain.update(bm25f=round(hit.bm25, 4), base=round(hit.score, 4),
                               decay=round(aged, 4),
                               importance=round(importance, 4), intent=round(intent, 4),
                               date=round(dated, 4), superseded=superseded,
                               score=round(hit.score * factor, 4))
        hit.score *= factor
    # Equal scores in note order, not in the order of the index's documents (which differs
    # between clones of one vault).
    hits = sorted(hits, key=lambda h: (-h.score, str(h.path)))
    if not hits:
        return []
    # A query that is one identifier or path: the notes holding it whole first
    # (ocm/indexer/ontopic.py), the threshold read from the best of them.
    whole_first = any(h.whole for h in hits)
    if whole_first:
        hits.sort(key=lambda h: not h.whole)
    cutoff = RELATIVE_THRESHOLD * hits[0].score
    hits = [h for h in hits if h.score >= cutoff]
    # The replacement of a relevant superseded record is what is true now: it stays even
    # when it is worded differently from the query.
    relevant = relevance_filter(hits)
    successors = {h.superseded_by for h in hits if h.status == "superseded" and relevant(h)}
    hits = [h for h in hits if relevant(h) or h.id in successors]
    for hit in hits:
        if hit.explain is not None:
            hit.explain["threshold"] = round(cutoff, 4)
    hits = _mmr(hits, limit)
    mark_matched(hits)
    if whole_first:
        hits.sort(key=lambda h: not h.whole)
    hits = _replacements_first(hits)
    confidence.rate(hits)
    for position, hit in enumerate(hits, 1):
        hit.rank = position
    return hits


def _mmr(hits: list[Hit], limit: int) -> list[Hit]:
    """Maximal marginal relevance: each pick is the hit with the best MMR_LAMBDA * its share
    of the top score minus the rest times its largest sketch overlap (Jaccard) with the
    picks so far, the earlier hit on a tie. Overlaps only grow as picks are added, so a
    value measured against fewer picks is an upper bound: the hits wait in a heap by their
    last value and a hit is compared with the newer picks only when it comes to the top
    (lazy greedy). Same picks, in the same order, as comparing every hit with every pick,
    in far fewer Jaccards (the low-scoring hits are never compared)."""
    if len(hits) <= 1:
        return hits[:limit]
    top = hits[0].score or 1.0
    relevance = [MMR_LAMBDA * hit.score / top for hit in hits]
    overlap = [0.0] * len(hits)
    # (-value, position, picks compared with): the best value first, then the earlier hit.
    waiting = [(-value, at, 0) for at, value in enumerate(relevance)]
    heapq.heapify(waiting)
    chosen: list[Hit] = []
    sketches: list[frozenset[str]] = []  # the picks' sketches
    while waiting and len(chosen) < limit:
        _, at, seen = heapq.heappop(waiting)
        if seen == len(chosen):
            chosen.append(hits[at])
            sketches.append(hits[at].sketch)
            continue
        sketch = hits[at].sketch
        for other in sketches[seen:]:
            similarity = jaccard(sketch, other)
            if similarity > overlap[at]:
                overlap[at] = similarity
        value = relevance[at] - (1 - MMR_LAMBDA) * overlap[at]
        heapq.heappush(waiting, (-value, at, len(chosen)))
    return chosen


def _replacements_first(hits: list[Hit]) -> list[Hit]:
    """A superseded record whose replacement is listed goes after every current record:
    the history stays findable without crowding out what is true now. The replacement may
    itself have been replaced by a listed record (A -> B -> C with only A and C found): the
    listed record's `supersedes` names the missing link."""
    listed = {hit.id for hit in hits}
    # id -> the listed record that replaced it (read from that record's `supersedes`).
    replaced_by_listed = {str(h.meta.get("supersedes") or ""): h.id for h in hits}
    replaced_by_listed.pop("", None)

    def replacement_listed(hit: Hit) -> bool:
        seen: set[str] = set()
        nxt = hit.superseded_by
        while nxt and nxt not in seen:
            if nxt in listed:
                return True
            seen.add(nxt)
            nxt = replaced_by_listed.get(nxt, "")
        return False

    current = [h for h in hits if not (h.status == "superseded" and replacement_listed(h))]
    kept = {id(h) for h in current}  # by identity: `in` compared every field of a Hit
    return current + [h for h in hits if id(h) not in kept]

"""Chunks: every `##`/`###` section of a note, with the BM25F field its text is indexed in.

A note is ranked as a whole (its BM25F fields: the session-level questions of every
evaluation set are about whole notes, and a section's words add up with its siblings'); a
hit then carries its best chunk: the section the query's words weigh most in, scored with
the same BM25F (the index's idf and average field length, the field's boost), its
Obsidian link, first line and a snippet with the query's words in context. `group=False`
searches list the chunks themselves.

The chunks of a note are derived data, stored with the note's index document under
`.index/` and so refreshed, rebuilt and deleted with it by the same `(mtime_ns, size)` check.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ocm.vault.markdown import Document, normalise_heading
from ocm.vault.sections import Section, sections

from .analysis import TOKEN_PATTERN, tokens
from .schema import BM25_B, BM25_K1, FIELD_BOOSTS

# A note whose text is at most this long stays one chunk: its sections are too short to
# be worth telling apart (a snippet shows most of it anyway).
SHORT_NOTE_CHARS = 400
SNIPPET_CHARS = 200
# How much text a snippet shows before the first query word it is built around.
SNIPPET_LEAD = 40
# Session sections and the field their text is indexed in (documents.session_fields).
SESSION_SECTION_FIELDS = {
    "goal": "goal", "todos": "todos", "work completed": "todos",
    "work to be completed": "todos", "files touched": "files",
    "architecture decisions": "decisions", "work done": "work_summary",
}
# Sections whose text no field indexes: never a chunk.
SESSION_SECTIONS_SKIPPED = frozenset({"memories"})
_RAW_TOKEN = re.compile(TOKEN_PATTERN)
# How much of a query term's start is looked for in a chunk's text (stemming only rewrites
# a word's ending, so a word holding a term begins with this much of it).
PREFIX = 4
# The places each query term occurs in a chunk that are looked at, for its frequency (BM25
# saturates long before) and for where the snippet goes.
MAX_OCCURRENCES = 16

# Words of chunk text whose index terms are kept made (_word_terms): a warm process meets
# the same words in search after search.
WORD_TERMS_KEPT = 50_000

# (title, level, line, link, field, text, length in indexed terms): one stored chunk.
StoredChunk = tuple[str, int, int, str, str, str, int]
FieldOf = Callable[[Section], str | None]


@dataclass
class Chunk:
    """A hit's chunk: the section, where it starts, how to link to it, and a snippet."""

    section: str
    level: int
    line: int
    anchor: str
    snippet: str
    score: float = 0.0


def session_field(section: Section) -> str | None:
    """The BM25F field of a session section (a `###` inherits its `##`'s)."""
    key = normalise_heading(section.title)
    parent = normalise_heading(section.parent)
    if key in SESSION_SECTIONS_SKIPPED or parent in SESSION_SECTIONS_SKIPPED:
        return None
    return SESSION_SECTION_FIELDS.get(key) or SESSION_SECTION_FIELDS.get(parent) or "body"


def memory_field(_section: Section) -> str:
    """A memory's text is all one field."""
    return "content"


def note_chunks(doc: Document, field_of: FieldOf,
                headed: bool = False) -> list[StoredChunk]:
    """The chunks to store for a note: one per section with text, or one for the whole
    note when it has fewer than two sections with text, or is short, unless `headed` (a
    memory's or a session's own `##` headings, a person's included, are always its
    sections; a short transcript's turns are not told apart)."""
    found = [(s, f) for s in sections(doc) if s.text and (f := field_of(s)) is not None]
    if not found:
        return []
    titled = headed and sum(1 for s, _ in found if s.level) >= 2
    if len(found) == 1 or (not titled
                           and sum(len(s.text) for s, _ in found) <= SHORT_NOTE_CHARS):
        first = found[0][0]
        text = "\n".join(s.text for s, _ in found)
        return [("", 0, first.line, "", found[0][1], text, len(tokens(text)))]
    return [(s.title, s.level, s.line, s.link, f, s.text, len(tokens(s.text)))
            for s, f in found]


def _bm25(counts: dict[str, int], field: str, length: int,
          idf: Callable[[str, str], float], avgfl: Callable[[str], float]) -> float:
    """BM25F of one chunk: its field's boost, the index's idf and average field length, its
    own length (counted when it was indexed) and its query terms' frequencies."""
    if not counts or not length:
        return 0.0
    norm = BM25_K1 * ((1 - BM25_B) + BM25_B * length / (avgfl(field) or 1.0))
    boost = FIELD_BOOSTS.get(field, 1.0)
    # In term order: the counts are filled from sets, whose order follows the hash seed,
    # and a float sum's last digit follows the order of its terms.
    return sum(idf(field, term) * boost * tf * (BM25_K1 + 1) / (tf + norm)
               for term, tf in sorted(counts.items()))


def scored_chunks(stored: list[StoredChunk], terms: list[str],
                  idf: Callable[[str, str], float],
                  avgfl: Callable[[str], float]) -> list[tuple[float, int]]:
    """(BM25F score, position) of every chunk, best first (file order breaks ties). Term
    frequencies come from the places the terms occur in the note's text, found in one
    pass over all its chunks (not by analysing every chunk again)."""
    if len(stored) == 1:
        return [(0.0, 0)]
    starts = []
    at = 0
    for chunk in stored:
        starts.append(at)
        at += len(chunk[5]) + 1
    joined = "\n".join(chunk[5] for chunk in stored)
    counts: list[dict[str, int]] = [{} for _ in stored]
    for where, found in _term_positions(joined, terms, MAX_OCCURRENCES * len(stored)):
        mine = counts[bisect.bisect_right(starts, where) - 1]
        for term in found:
            mine[term] = mine.get(term, 0) + 1
    scored = [(_bm25(counts[i], chunk[4], chunk[6], idf, avgfl), i)
              for i, chunk in enumerate(stored)]
    return sorted(scored, key=lambda pair: (-pair[0], pair[1]))


def chunk_of(stored: StoredChunk, relpath: str, terms: list[str], score: float) -> Chunk:
    title, level, line, link, _, text, _ = stored
    anchor = f"{relpath}#{link}" if link else relpath
    return Chunk(title, level, line, anchor, snippet(text, terms), score)


@lru_cache(maxsize=WORD_TERMS_KEPT)
def _word_terms(raw: str) -> tuple[str, ...]:
    """The index terms of one word of text, in order."""
    return tuple(tokens(raw))


def _term_positions(text: str, terms: list[str],
                    cap: int = MAX_OCCURRENCES) -> list[tuple[int, frozenset[str]]]:
    """(start, query terms it yields) of the words of `text` that hold a query term, in
    order, at most `cap` places per term. Only the words that begin with a term's first
    letters are analysed (found with `str.find`, not by scanning every word: chunks can be
    long transcripts)."""
    wanted = frozenset(terms)
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lower to two: keep offsets exact
        lowered = text
    found: dict[int, frozenset[str]] = {}
    yields = _yields_of(wanted)  # word -> the query terms it is indexed as
    find, word_at = lowered.find, _RAW_TOKEN.match
    for prefix in sorted({term[:PREFIX] for term in wanted}):  # (not in hash order)
        at = find(prefix)
        taken = 0
        while at != -1 and taken < cap:
            # A term starts a word or a part of one (`src/api/client.py`, `embed_server`).
            if (at == 0 or not lowered[at - 1].isalnum()) and at not in found:
                word = word_at(text, at)
                if word is not None:
                    raw = word.group()
                    here = yields.get(raw)
                    if here is None:
                        here = yields[raw] = wanted.intersection(_word_terms(raw))
                    if here:
                        found[at] = here
                        taken += 1
            at = find(prefix, at + 1)
    return sorted(found.items())


# Query term sets whose words' yields are kept (_yields_of): a search scores the chunks of
# its ~10 shown hits and makes their snippets with one set.
TERM_SETS_KEPT = 8
_YIELDS: dict[frozenset[str], dict[str, frozenset[str]]] = {}


def _yields_of(wanted: frozenset[str]) -> dict[str, frozenset[str]]:
    """Word of text -> the terms of `wanted` it is indexed as, kept for the last
    TERM_SETS_KEPT term sets (all dropped at once when a new set would make one more): a
    search's hits share words, and its snippets are made from the chunks it scored."""
    found = _YIELDS.get(wanted)
    if found is None:
        if len(_YIELDS) >= TERM_SETS_KEPT:
            _YIELDS.clear()
        found = _YIELDS[wanted] = {}
    return found


def _densest(hits: list[tuple[int, frozenset[str]]], span: int) -> int:
    """Where the stretch of `span` characters that holds the most distinct query terms
    begins (the first such), in one pass with two pointers."""
    best, start, end = -1, hits[0][0], 0
    inside: dict[str, int] = {}
    for at, words in hits:
        while end < len(hits) and hits[end][0] < at + span:
            for word in hits[end][1]:
                inside[word] = inside.get(word, 0) + 1
            end += 1
        if len(inside) > best:
            best, start = len(inside), at
        for word in words:
            inside[word] -= 1
            if not inside[word]:
                del inside[word]
    return start


def snippet(text: str, terms: list[str], limit: int = SNIPPET_CHARS) -> str:
    """At most `limit` characters of `text` on one line, around the stretch that holds the
    most distinct query words (the start of the text when none is there). Only that
    stretch is flattened, not the whole (possibly long) text."""
    if len(text) <= limit:
        return " ".join(text.split())
    hits = _term_positions(text, terms)
    start = 0
    if hits:
        start = max(0, _densest(hits, limit - SNIPPET_LEAD) - SNIPPET_LEAD)
        if start and not text[start - 1].isspace():  # begin at a word
            space = next((i for i in range(start, min(len(text), start + SNIPPET_LEAD))
                          if text[i].isspace()), start)
            start = space + 1 if space > start else start
    head = "…" if text[:start].strip() else ""
    room = limit - len(head)
    stretch = text[start:start + 3 * limit]
    piece = " ".join(stretch.split())
    if len(piece) > room or text[start + len(stretch):].strip():
        cut = piece[: room - 1].rfind(" ")
        piece = (piece[:cut] if cut > room // 2 else piece[: room - 1]) + "…"
    return head + piece

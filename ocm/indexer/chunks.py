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

import re
from collections.abc import Callable
from dataclasses import dataclass

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
# How much of a query term's start the no-match shortcut looks for.
PREFIX = 4
# A snippet is placed among the first this many places each query term occurs in its chunk.
MAX_SNIPPET_WORDS = 16

# (title, level, line, link, field, text): one stored chunk.
StoredChunk = tuple[str, int, int, str, str, str]
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


def note_chunks(doc: Document, field_of: FieldOf) -> list[StoredChunk]:
    """The chunks to store for a note: one per section with text, or one for the whole
    note when it is short or has fewer than two sections with text."""
    found = [(s, f) for s in sections(doc) if s.text and (f := field_of(s)) is not None]
    if not found:
        return []
    if len(found) == 1 or sum(len(s.text) for s, _ in found) <= SHORT_NOTE_CHARS:
        first = found[0][0]
        text = "\n".join(s.text for s, _ in found)
        return [("", 0, first.line, "", found[0][1], text)]
    return [(s.title, s.level, s.line, s.link, f, s.text) for s, f in found]


def _bm25(terms: list[str], stored: StoredChunk, idf: Callable[[str, str], float],
          avgfl: Callable[[str], float]) -> float:
    field, text = stored[4], stored[5]
    # Stemming only rewrites a word's ending: a chunk without the start of any query term
    # cannot hold one, and is not tokenized at all (most chunks of most hits).
    lowered = text.lower()
    if not any(term[:PREFIX] in lowered for term in terms):
        return 0.0
    words = tokens(text)
    if not words:
        return 0.0
    wanted = set(terms)
    counts: dict[str, int] = {}
    for word in words:
        if word in wanted:
            counts[word] = counts.get(word, 0) + 1
    if not counts:
        return 0.0
    norm = BM25_K1 * ((1 - BM25_B) + BM25_B * len(words) / (avgfl(field) or 1.0))
    boost = FIELD_BOOSTS.get(field, 1.0)
    return sum(idf(field, term) * boost * tf * (BM25_K1 + 1) / (tf + norm)
               for term, tf in counts.items())


def scored_chunks(stored: list[StoredChunk], terms: list[str],
                  idf: Callable[[str, str], float],
                  avgfl: Callable[[str], float]) -> list[tuple[float, int]]:
    """(BM25F score, position) of every chunk, best first (file order breaks ties)."""
    if len(stored) == 1:
        return [(0.0, 0)]
    scored = [(_bm25(terms, chunk, idf, avgfl), i) for i, chunk in enumerate(stored)]
    return sorted(scored, key=lambda pair: (-pair[0], pair[1]))


def chunk_of(stored: StoredChunk, relpath: str, terms: list[str], score: float) -> Chunk:
    title, level, line, link, _, text = stored
    anchor = f"{relpath}#{link}" if link else relpath
    return Chunk(title, level, line, anchor, snippet(text, terms), score)


def _term_positions(flat: str, terms: list[str]) -> list[tuple[int, frozenset[str]]]:
    """(start, query terms it yields) of the words of `flat` that hold a query term, in
    order. Only the words that begin with a term's first letters are analysed (found with
    `str.find`, not a scan of every word: chunks can be long transcripts)."""
    wanted = set(terms)
    lowered = flat.lower()
    if len(lowered) != len(flat):  # a few characters lower to two: keep offsets exact
        lowered = flat
    found: dict[int, frozenset[str]] = {}
    for prefix in {term[:PREFIX] for term in wanted}:
        at = lowered.find(prefix)
        taken = 0
        while at != -1 and taken < MAX_SNIPPET_WORDS:
            # A term starts a word or a part of one (`src/api/client.py`, `embed_server`).
            if (at == 0 or not lowered[at - 1].isalnum()) and at not in found:
                word = _RAW_TOKEN.match(flat, at)
                here = wanted.intersection(tokens(word.group())) if word else None
                if here:
                    found[at] = frozenset(here)
                    taken += 1
            at = lowered.find(prefix, at + 1)
    return sorted(found.items())


def snippet(text: str, terms: list[str], limit: int = SNIPPET_CHARS) -> str:
    """At most `limit` characters of `text` on one line, around the stretch that holds the
    most distinct query words (the start of the text when none is there). Only that
    stretch is flattened, not the whole (possibly long) text."""
    if len(text) <= limit:
        return " ".join(text.split())
    hits = _term_positions(text, terms)
    start = 0
    if hits:
        best = -1
        for i, (at, _) in enumerate(hits):
            covered: set[str] = set()
            for other, words in hits[i:]:
                if other >= at + limit - SNIPPET_LEAD:
                    break
                covered |= words
            if len(covered) > best:
                best, start = len(covered), at
        start = max(0, start - SNIPPET_LEAD)
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

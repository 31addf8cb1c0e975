"""Search filters and the result record, kept free of Whoosh (the facade and the hook path
import them without paying for the index).

`ocm.indexer.search` re-exports both; import them from either place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .chunks import Chunk


@dataclass
class Filters:
    """What a search is restricted to (all optional)."""

    kind: str | None = None
    types: tuple[str, ...] = ()
    status: str | None = None
    tool: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    file: str | None = None
    tag: str | None = None
    include_resolved: bool = False
    author: str | None = None


# Sketches whose word sets are kept made (`_sketch_words`): ~60 words, ~3 KB a set.
SKETCHES_KEPT = 1024


@lru_cache(maxsize=SKETCHES_KEPT)
def _sketch_words(sketch: str) -> frozenset[str]:
    """A note's sketch (space-separated terms) as a set, made once per sketch: the notes
    MMR compares come back search after search (~8 us a set of ~60 words), their `meta`
    the index cache's own, and so the same string with its hash already made."""
    return frozenset(sketch.split())


class _Meta:
    """`Hit.meta`, the note's stored `meta`: a hit made from the rank column
    (ocm/indexer/rankcolumn.py) is given `meta_source` instead, read on first use."""

    def __get__(self, hit: Hit | None, owner: type | None = None) -> dict[str, Any]:
        if hit is None:
            raise AttributeError("meta")  # a dataclass field without a default
        found = hit.__dict__["_meta"]
        if found is None:
            source = hit.meta_source
            found = hit.__dict__["_meta"] = source() if source is not None else {}
            hit.meta_source = None
        return found

    def __set__(self, hit: Hit, value: dict[str, Any] | None) -> None:
        hit.__dict__["_meta"] = value


# `Hit._importance` when it was not given: read from `meta`.
_FROM_META: Any = object()


@dataclass
class Hit:
    id: str
    kind: str
    type: str
    title: str
    status: str
    tool: str
    scope: str
    date: datetime | None
    path: Path
    # None with a `meta_source` (a candidate made from the rank column): read on first use.
    meta: _Meta = _Meta()
    project: str = ""
    score: float = 0.0
    rank: int = 0
    explain: dict[str, Any] | None = None
    # The note's sketch words as a set (MMR's overlaps), made from `meta` (a string of
    # space-separated terms) on first use (`sketch`): a search compares the sketches of its
    # best hits only.
    _sketch: frozenset[str] | None = field(default=None, repr=False, compare=False)
    # The best chunk (a section) for the query; set on the hits a search returns.
    chunk: Chunk | None = None
    # Where the note's stored chunks are read from when first asked for (`chunks`): a
    # search reads the sections of the hits it returns, not of every candidate.
    chunk_source: Callable[[], list] | None = field(default=None, repr=False, compare=False)
    _chunks: list | None = field(default=None, repr=False, compare=False)
    relpath: str = field(default="", repr=False)
    # Share of the query's idf-weighted terms the note holds (ocm/indexer/relevance.py);
    # None when not measured (listings, pasted paragraphs).
    coverage: float | None = None
    # Cosine similarity of the note's and the query's embeddings above the mean of the
    # vault's other notes for that query (None without embeddings).
    similarity: float | None = None
    # Cosine of each of the note's sections with the query, in chunk order, for a note
    # whose sections have embeddings of their own (a transcript's turns); else None.
    part_similarities: list[float] | None = field(default=None, repr=False)
    # Why the hit is on topic (ocm/indexer/ontopic.py): its BM25F before fusion, the cosine
    # of its closest part with the query and whether that is close by itself, the share of
    # a pasted paragraph's weighted words it holds, whether it holds a one-identifier query
    # whole, and the fusion step (for --explain).
    bm25: float = 0.0
    cosine: float | None = None
    close: bool = False
    # A meaning-only hit's word-by-word check, left to run when the search first asks
    # whether it is close (`relevance.is_close`, ocm/indexer/meaning.py); None once run.
    close_check: Callable[[Hit], None] | None = field(default=None, repr=False, compare=False)
    mass: float | None = None
    idents: int = 0
    # A pasted paragraph's `ontopic.familiarity` in this vault (the same on each hit).
    familiar: float | None = None
    # Whose project a pasted paragraph is about (`ontopic.project`: "own", "other", None).
    whose: str | None = None
    whole: bool | None = None
    fusion: dict[str, Any] | None = field(default=None, repr=False)
    # "words", "meaning" or "both" on the hits of a search (None in a listing), and the
    # share of dev-split hits like it that were relevant (ocm/indexer/confidence.py).
    matched: str | None = None
    confidence: float | None = None
    # Where `meta` is read from when first asked for (None once read), and a memory's
    # importance as the rank column holds it (ranking reads it of every candidate).
    meta_source: Callable[[], dict[str, Any]] | None = field(default=None, repr=False,
                                                            compare=False)
    _importance: Any = field(default=_FROM_META, repr=False, compare=False)

    @property
    def sketch(self) -> frozenset[str]:
        if self._sketch is None:
            self._sketch = _sketch_words(str(self.meta.get("sketch") or ""))
        return self._sketch

    @property
    def importance(self) -> Any:
        """`meta`'s importance (a memory's: 1-10, or whatever its note holds)."""
        if self._importance is _FROM_META:
            return self.meta.get("importance")
        return self._importance

    @property
    def chunks(self) -> list:
        """The note's stored chunks (ocm/indexer/chunks.py; not part of the result), read
        from `chunk_source` on first use; [] without one."""
        if self._chunks is None:
            self._chunks = self.chunk_source() if self.chunk_source is not None else []
            self.chunk_source = None
        return self._chunks

    @property
    def top_files(self) -> list[str]:
        return list(self.meta.get("files") or [])[:3]

    @property
    def superseded_by(self) -> str:
        return str(self.meta.get("superseded_by") or "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rank": self.rank, "score": round(self.score, 4), "id": self.id, "kind": self.kind,
            "type": self.type, "title": self.title, "status": self.status,
            "date": self.date.isoformat(timespec="seconds") if self.date else None,
            "tool": self.tool or None, "scope": self.scope, "project": self.project,
            "top_files": self.top_files, "markdown_path": str(self.path),
        }
        if self.kind == "memory":
            out["importance"] = self.meta.get("importance")
            out["superseded_by"] = self.superseded_by or None
            out["supersedes"] = self.meta.get("supersedes") or None
            out["tags"] = self.meta.get("tags") or []
            out["author"] = self.meta.get("author") or None
            out["stale"] = bool(self.meta.get("changed_files"))
            out["changed_files"] = list(self.meta.get("changed_files") or [])
        if self.matched is not None:
            out["matched"] = self.matched
            out["confidence"] = self.confidence
        if self.chunk is not None:
            out.update(anchor=self.chunk.anchor, line=self.chunk.line,
                       section=self.chunk.section or None, snippet=self.chunk.snippet)
        if self.explain is not None:
            out["explain"] = self.explain
        return out


def _defaults(cls: type) -> dict[str, Any]:
    """Every field of the dataclass `cls` in `__init__`'s order (`meta` as `_meta`, where
    `Hit`'s descriptor keeps it) with its default; the fields without one hold MISSING."""
    out: dict[str, Any] = {}
    for spec in fields(cls):
        if spec.default_factory is not MISSING:  # one default object would be shared
            raise TypeError(f"{cls.__name__}.{spec.name}: a default_factory is not copied")
        out["_meta" if spec.name == "meta" else spec.name] = spec.default
    return out


_DEFAULTS = _defaults(Hit)


def candidate(values: dict[str, Any]) -> Hit:
    """A `Hit` holding `values` (every field without a default among them, `meta` given
    as `_meta`) and the other fields' defaults: the same object `Hit(...)` makes, made by
    copying one dict instead of running the 36 assignments of the dataclass's `__init__`
    (a search makes ~75 candidates and returns ~10)."""
    hit = object.__new__(Hit)
    state = _DEFAULTS.copy()
    state.update(values)
    hit.__dict__ = state
    return hit


def holds_file(hit: Hit, fragment: str) -> bool:
    """Whether one of the note's `files` contains `fragment` (case-insensitive)."""
    needle = fragment.lower().strip("/")
    return any(needle in str(f).lower() for f in hit.meta.get("files") or [])

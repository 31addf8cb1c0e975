"""Whoosh analyzer for notes that mix English prose with code.

Identifiers, paths and dotted names are indexed whole *and* split into their
parts, so ``embedding_server``, ``server`` and ``src/inference/embedding_server.py``
all find the same note. Parts of a compound share the position of the whole
token: the fields using this analyzer are not meant for phrase queries.

The analyzer is pickled into the index schema, so every component here is a
module-level class (no lambdas, no closures) and this module's import path is
part of the on-disk index format: moving it requires a reindex.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from whoosh.analysis import (
    Analyzer,
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StopFilter,
)
from whoosh.analysis.acore import Token

__all__ = [
    "STOP_WORDS",
    "CodePartsFilter",
    "SimpleWordStemFilter",
    "code_analyzer",
    "tokens",
]

# A word, optionally continued by separator-joined words (paths, dotted names,
# kebab-case, `a::b`), optionally ending in `++` or `#` (c++, g++, c#, f#).
# `#` only counts as a suffix when no word follows, so `#1234` and `issue#12`
# still yield the bare number. Separators and `\w` are disjoint, which keeps
# the repetition free of catastrophic backtracking.
TOKEN_PATTERN = r"\w+(?:[./\\:\-]+\w+)*(?:\+\+|#(?!\w))?"

# Deliberately small: on natural-language questions BM25 already discounts
# frequent words, and a long list starts eating code tokens. Two-letter code
# words (go, io, os, db, ui, id, js, ts, ...) must never appear here. "s" and "t"
# are the debris of contractions ("don't", "user's").
# fmt: off
STOP_WORDS: frozenset[str] = frozenset((
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "should", "so", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to",
    "too", "us", "was", "we", "were", "what", "when", "where", "which", "who", "why",
    "will", "with", "would", "you", "your", "s", "t",
))
# fmt: on

# Tokens longer than this are dropped (their parts are kept): base64 blobs and
# minified code would otherwise bloat the term dictionary for no recall gain.
MAX_TOKEN_LENGTH = 128

# Successive split levels: path segments, then dotted pieces, then snake/kebab
# words. Each level is matched against the whole token, which is cheaper than
# recursing and yields the same pieces.
_LEVELS: tuple[re.Pattern[str], ...] = (
    re.compile(r"[^/\\:]+"),
    re.compile(r"[^/\\:.]+"),
    re.compile(r"[^/\\:._\-]+"),
)
_WORDS = _LEVELS[-1]
_CAMEL_BOUNDARY = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

Part = tuple[str, int, int]


@lru_cache(maxsize=65536)
def _parts(text: str) -> tuple[Part, ...]:
    """Distinct sub-tokens of ``text`` with offsets relative to its start.

    Cached because identifiers and paths repeat heavily across a vault.
    """
    # Deduplicate case-insensitively: `std::vec::Vec` should not count `vec` twice.
    seen = {text.lower()}
    out: list[Part] = []
    for level in _LEVELS:
        for m in level.finditer(text):
            piece = m.group()
            key = piece.lower()
            if key not in seen:
                seen.add(key)
                out.append((piece, m.start(), m.end()))
    # camelCase and letter/digit splitting is ASCII-only: Python's `re` has no
    # Unicode case classes, and guessing on other scripts does more harm than good.
    for m in _WORDS.finditer(text):
        word = m.group()
        if not (word.isascii() and _CAMEL_BOUNDARY.search(word)):
            continue
        base = m.start()
        for cm in _CAMEL_PARTS.finditer(word):
            piece = cm.group()
            key = piece.lower()
            if key not in seen:
                seen.add(key)
                out.append((piece, base + cm.start(), base + cm.end()))
    return tuple(out)


def _is_atomic(text: str) -> bool:
    """True for tokens that cannot have parts (the vast majority of prose)."""
    if text.isalpha():
        # Non-ASCII words never get camel-split (see _parts), so they are atomic.
        return text.islower() or text.istitle() or text.isupper() or not text.isascii()
    return text.isdigit()


class CodePartsFilter(Filter):
    """Yields each token unchanged, then its parts (same position, own offsets).

    Parts are split on ``/ \\ : . _ -`` and on camelCase / letter-digit
    boundaries, e.g. ``src/api/client.py`` -> ``src``, ``api``, ``client.py``,
    ``client``, ``py``. Put it before lowercasing: camelCase detection needs case.
    """

    def __call__(self, tokens: Iterable[Token]) -> Iterator[Token]:
        for t in tokens:
            text = t.text
            if _is_atomic(text):
                yield t
                continue
            parts = _parts(text)
            # Whoosh reuses one Token object and later filters mutate it in
            # place, so everything needed for the parts is captured up front.
            chars = t.chars
            start = t.startchar if chars else 0
            keep = hasattr(t, "original")
            yield t
            for piece, pstart, pend in parts:
                t.text = piece
                t.stopped = False
                if keep:
                    t.original = piece
                if chars:
                    t.startchar = start + pstart
                    t.endchar = start + pend
                yield t


class SimpleWordStemFilter(StemFilter):
    """Stems only plain ASCII words.

    Compounds (``embedding_server.py``, ``c++``, ``utf-8``), numbers and
    non-English scripts are left alone: stemming them would corrupt identifiers
    without helping recall, since their parts are stemmed separately anyway.
    """

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        stemfn = self._stem
        for t in tokens:
            if not t.stopped:
                text = t.text
                if text.isalpha() and text.isascii():
                    t.text = stemfn(text)
            yield t


def _build() -> Analyzer:
    # renumber=False keeps parts on their parent's position and leaves gaps
    # where stop words were, which is what positions mean for this field.
    stop = StopFilter(stoplist=STOP_WORDS, minsize=1, maxsize=MAX_TOKEN_LENGTH, renumber=False)
    # lang="en" selects the Snowball (Porter2) stemmer. whoosh.lang.porter.stem
    # mishandles doubled consonants ("embedding" -> "embedd", "running" ->
    # "runn"), which would split word families across index terms.
    stem = SimpleWordStemFilter(lang="en", cachesize=50000)
    return RegexTokenizer(TOKEN_PATTERN) | CodePartsFilter() | LowercaseFilter() | stop | stem


_ANALYZER: Analyzer | None = None


def code_analyzer() -> Analyzer:
    """The shared analyzer instance (stateless apart from the stem cache)."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = _build()
    return _ANALYZER


def tokens(text: str) -> list[str]:
    """Token texts produced by :func:`code_analyzer` for ``text``, in order."""
    return [t.text for t in code_analyzer()(text)]

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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import chain
from typing import Any, NamedTuple

from whoosh.analysis import (
    Analyzer,
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StopFilter,
)
from whoosh.analysis.acore import Token
from whoosh.formats import Frequency
from whoosh.lang import stemmer_for_language
from whoosh.system import pack_uint

__all__ = [
    "STOP_WORDS",
    "CodeAnalyzer",
    "CodePartsFilter",
    "CountedFrequency",
    "SimpleWordStemFilter",
    "code_analyzer",
    "encoded_count",
    "legacy_chain",
    "tokens",
]

# A word, optionally continued by separator-joined words (paths, dotted names,
# kebab-case, `a::b`), optionally ending in `++` or `#` (c++, g++, c#, f#).
# `#` only counts as a suffix when no word follows, so `#1234` and `issue#12`
# still yield the bare number. Separators and `\w` are disjoint, which keeps
# the repetition free of catastrophic backtracking, and makes its quantifiers possessive
# (`++`, `*+`) without changing a match: nothing a run gave up could let what follows
# match (tests/test_analyzer_equivalence.py compares it with the plain form). `re` then
# keeps no backtracking state a character: `findall` ~15 % faster on notes.
TOKEN_PATTERN = r"\w++(?:[./\\:\-]++\w++)*+(?:\+\+|#(?!\w))?"

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
# Each level and the separators it splits on beyond the previous level's.
_SPLITS = tuple(zip(_LEVELS, map(frozenset, ("/\\:", ".", "_-")), strict=True))
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
    # A level adds pieces only where the text holds a separator of its own (else its pieces
    # are the previous level's, or the whole text): most compounds hold one kind, or none.
    for level, separators in _SPLITS:
        if not separators.isdisjoint(text):
            for m in level.finditer(text):
                piece = m.group()
                key = piece.lower()
                if key not in seen:
                    seen.add(key)
                    out.append((piece, m.start(), m.end()))
    # camelCase and letter/digit splitting is ASCII-only: Python's `re` has no
    # Unicode case classes, and guessing on other scripts does more harm than good.
    if _CAMEL_BOUNDARY.search(text) is None:  # (then no word of it holds one)
        return tuple(out)
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

    def __call__(self, tokens: Iterable[Token]) -> Iterator[Token]:  # type: ignore[override]
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
                    t.original = piece  # type: ignore[attr-defined]  # Token's attrs are open
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

    def __call__(self, tokens: Iterable[Token]) -> Iterator[Token]:  # type: ignore[override]
        stemfn = self._stem
        for t in tokens:
            if not t.stopped:
                text = t.text
                if text.isalpha() and text.isascii():
                    t.text = stemfn(text)
            yield t


def legacy_chain() -> Analyzer:
    """The analyzer as a chain of Whoosh filters: the reference :class:`CodeAnalyzer` must
    match token for token (tests compare them). Indexes built before the fused analyzer
    pickled this chain."""
    # renumber=False keeps parts on their parent's position and leaves gaps
    # where stop words were, which is what positions mean for this field.
    stop = StopFilter(stoplist=STOP_WORDS, minsize=1, maxsize=MAX_TOKEN_LENGTH, renumber=False)
    # lang="en" selects the Snowball (Porter2) stemmer. whoosh.lang.porter.stem
    # mishandles doubled consonants ("embedding" -> "embedd", "running" ->
    # "runn"), which would split word families across index terms.
    stem = SimpleWordStemFilter(lang="en", cachesize=50000)
    return RegexTokenizer(TOKEN_PATTERN) | CodePartsFilter() | LowercaseFilter() | stop | stem


_TOKENS = re.compile(TOKEN_PATTERN)
# Memoised expansions are dropped wholesale past this many distinct raw tokens, which
# bounds the memory of a long-lived process (a 10k-note vault has ~100k of them).
EXPANSION_CACHE_SIZE = 200_000
# The terms of this many texts last analysed whole are kept: indexing a note analyses most
# of its texts twice (a section's text for its chunk's length, then the field holding it;
# a session's todos for its sketch, then its field).
RECENT_TEXTS = 32
# Shorter texts (a word, a query, a title) are analysed again: looking them up costs about
# as much, and they would push the long ones out.
RECENT_MIN_CHARS = 80


class _Term(NamedTuple):
    """One output token of a raw token: the whole token or one of its parts."""

    lowered: str  # the text without stemming (what `no_morph` asks for)
    stemmed: str  # the indexed text (== lowered for stop words and non-words)
    stopped: bool  # a stop word, or longer than MAX_TOKEN_LENGTH
    start: int  # offsets relative to the raw token
    end: int
    original: str  # the piece as written


def _indexed_as(low: str, stem: Callable[[str], str]) -> str | None:
    """What a lowered piece is indexed as: its stem (plain ASCII words only), itself, or
    None for a stop word or a piece longer than MAX_TOKEN_LENGTH."""
    if not 1 <= len(low) <= MAX_TOKEN_LENGTH or low in STOP_WORDS:
        return None
    return stem(low) if low.isalpha() and low.isascii() else low


def _pieces(raw: str) -> list[Part]:
    """A raw token and its parts, with offsets: what the filter chain yields for it."""
    pieces = [(raw, 0, len(raw))]
    if not _is_atomic(raw):
        pieces += _parts(raw)
    return pieces


def _expand(raw: str, stem: Callable[[str], str]) -> tuple[_Term, ...]:
    """What the filter chain makes of one raw token, computed once per distinct token."""
    out = []
    for piece, start, end in _pieces(raw):
        low = piece.lower()
        indexed = _indexed_as(low, stem)
        out.append(_Term(low, low if indexed is None else indexed, indexed is None, start,
                         end, piece))
    return tuple(out)


def _index_texts(raw: str, stem: Callable[[str], str]) -> tuple[str, ...]:
    """The indexed texts of one raw token's terms (`_expand`'s that are not stopped), made
    without its Term tuples: a build meets each distinct token once per process."""
    return tuple(found for piece, _, _ in _pieces(raw)
                 if (found := _indexed_as(piece.lower(), stem)) is not None)


class CodeAnalyzer(Analyzer):
    """``RegexTokenizer | CodePartsFilter | LowercaseFilter | StopFilter |
    SimpleWordStemFilter`` fused into one pass with a per-raw-token memo.

    The chain ran five generator layers per token; a note's words repeat within the
    note and across the vault, so each distinct raw token is expanded once
    (:func:`_expand`) and every later occurrence costs a dict lookup. Output is
    token-for-token identical to :func:`legacy_chain` for every keyword the chain honours
    (positions, chars, keeporiginal, removestops, start_pos, start_char, tokenize,
    no_morph, mode). :meth:`index_terms` skips Token objects altogether for indexing.

    Configuration comes from this module's constants, not from pickled state: the
    pickle holds only the class, and ``SCHEMA_VERSION`` forces a rebuild when they change.
    """

    is_morph = True  # stems, so Whoosh's `no_morph` queries (wildcards, ...) skip stemming

    def __init__(self) -> None:
        self._setup()

    def _setup(self) -> None:
        self._stem = lru_cache(maxsize=50_000)(stemmer_for_language("en"))
        self._expanded: dict[str, tuple[_Term, ...]] = {}
        self._indexed: dict[str, tuple[str, ...]] = {}
        self._recent: dict[str, tuple[str, ...]] = {}

    def __getstate__(self) -> dict:
        return {}  # the memos are rebuilt on load, the rest is module constants

    def __setstate__(self, state: dict) -> None:
        self._setup()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def clean(self) -> None:
        """Drop the memos, `_parts`' too (a build does after each batch: the processes
        it forks for the next start without the last one's words)."""
        self._setup()
        _parts.cache_clear()

    def _terms_of(self, raw: str) -> tuple[_Term, ...]:
        terms = self._expanded.get(raw)
        if terms is None:
            if len(self._expanded) >= EXPANSION_CACHE_SIZE:
                self._expanded.clear()
            terms = self._expanded[raw] = _expand(raw, self._stem)
        return terms

    def index_terms(self, value: str) -> list[str]:
        """The texts of the tokens ``self(value, mode="index")`` yields, in order."""
        if len(value) < RECENT_MIN_CHARS:
            return self._index_terms(value)
        known = self._recent.get(value)
        if known is not None:
            return list(known)
        out = self._index_terms(value)
        self._remember(value, tuple(out))
        return out

    def joined(self, parts: list[str]) -> str:
        """``"\n".join(parts)``, its terms (what :meth:`index_terms` gives for it) kept
        among the recent texts' and made from the parts' in turn: no token crosses a line
        break, so a field made of sections a note's chunks analysed already (a session's
        `body`) is not analysed again."""
        text = "\n".join(parts)
        if len(text) >= RECENT_MIN_CHARS and text not in self._recent:
            self._remember(text, tuple(chain.from_iterable(map(self.index_terms, parts))))
        return text

    def _remember(self, value: str, terms: tuple[str, ...]) -> None:
        recent = self._recent
        if len(recent) >= RECENT_TEXTS:  # the oldest goes (dicts keep their order)
            del recent[next(iter(recent))]
        recent[value] = terms

    def _index_terms(self, value: str) -> list[str]:
        memo = self._indexed
        out: list[str] = []
        for raw in _TOKENS.findall(value):
            texts = memo.get(raw)
            if texts is None:
                if len(memo) >= EXPANSION_CACHE_SIZE:
                    memo.clear()
                # (not memoised whole: indexing needs the stems only, and a build's
                # distinct tokens' Term tuples were ~1 KB a token, ~half its writer's heap)
                texts = memo[raw] = _index_texts(raw, self._stem)
            out += texts
        return out

    def __call__(self, value: str, positions: bool = False, chars: bool = False,
                 keeporiginal: bool = False, removestops: bool = True, start_pos: int = 0,
                 start_char: int = 0, tokenize: bool = True, mode: str = "",
                 no_morph: bool = False, **kwargs: Any) -> Iterator[Token]:
        assert isinstance(value, str), f"{value!r} is not unicode"
        # One Token object is reused for every token, as Whoosh's own tokenizers do.
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if tokenize:
            spans: Iterable[tuple[str, int]] = ((m.group(), m.start())
                                                for m in _TOKENS.finditer(value))
        else:  # the whole value is one raw token, which RegexTokenizer marks as original
            spans = ((value, 0),)
            keeporiginal = True
        for pos, (raw, offset) in enumerate(spans, start_pos):
            base = start_char + offset
            for term in self._terms_of(raw):
                if term.stopped and removestops:
                    continue
                t.text = term.lowered if no_morph or term.stopped else term.stemmed
                t.boost = 1.0
                t.stopped = term.stopped
                if keeporiginal:
                    t.original = term.original  # type: ignore[attr-defined]
                if positions:
                    t.pos = pos
                if chars:
                    t.startchar = base + term.start
                    t.endchar = base + term.end
                yield t


class CountedFrequency(Frequency):
    """Whoosh's ``Frequency`` posting format, counting terms straight from
    :meth:`CodeAnalyzer.index_terms` instead of one Token at a time.

    The postings are identical: Frequency sums each token's boost (always 1.0 from
    this analyzer) into the weight, so weight == float(count) * field_boost. Any other
    analyzer, value type or keyword falls back to Frequency's own loop.
    """

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any):
        counts = self.term_counts(value, analyzer, **kwargs)
        if counts is None:
            return super().word_values(value, analyzer, **kwargs)
        fb = self.field_boost
        return ((w, n, float(n) * fb, encoded_count(n)) for w, n in counts.items())

    @staticmethod
    def term_counts(value: Any, analyzer: Any, **kwargs: Any) -> Counter[str] | None:
        """Each term's count in `value`, in the order the terms first occur (what
        `word_values` yields, weight `float(count) * field_boost` and value
        `encoded_count(count)` each); None where `word_values` takes Frequency's loop."""
        if not (isinstance(analyzer, CodeAnalyzer) and isinstance(value, str)
                and kwargs.keys() <= {"mode"}):
            return None
        return Counter(analyzer.index_terms(value))


def encoded_count(n: int) -> bytes:
    """A posting's value for a term counted `n` times (Frequency's)."""
    return _PACKED_COUNTS[n] if n < _PACKED_LIMIT else pack_uint(n)


# Encoded small counts, shared: a build holds millions of postings in memory at once and
# nearly all of them count a term a few times.
_PACKED_LIMIT = 256
_PACKED_COUNTS = tuple(pack_uint(n) for n in range(_PACKED_LIMIT))


_ANALYZER: CodeAnalyzer | None = None


def code_analyzer() -> CodeAnalyzer:
    """The shared analyzer instance (stateless apart from its memos)."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = CodeAnalyzer()
    return _ANALYZER


def tokens(text: str) -> list[str]:
    """Token texts produced by :func:`code_analyzer` for ``text``, in order."""
    return code_analyzer().index_terms(text)


def word_terms(text: str) -> list[tuple[str, ...]]:
    """The index terms of each word of ``text`` (a word and its parts: ``backoff.py`` ->
    ``backoff.py``, ``backoff``, ``py``), one tuple per word that has any."""
    analyzer = code_analyzer()
    return [found for raw in _TOKENS.findall(text) if (found := tuple(analyzer.index_terms(raw)))]

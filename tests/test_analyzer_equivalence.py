"""The fused CodeAnalyzer must produce exactly what the Whoosh filter chain produced."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from whoosh.formats import Frequency
from whoosh.lang import stemmer_for_language

from ocm.indexer.analysis import (
    _CAMEL_BOUNDARY,
    _CAMEL_PARTS,
    _LEVELS,
    _TOKENS,
    _WORDS,
    TOKEN_PATTERN,
    CodeAnalyzer,
    CountedFrequency,
    _expand,
    _index_texts,
    _parts,
    legacy_chain,
)

# Option sets the chain honours; parts of compounds, stop words and offsets all differ
# between them, so each is compared separately.
OPTIONS: list[dict[str, Any]] = [
    {},
    {"mode": "index"},
    {"mode": "query"},
    {"positions": True, "chars": True},
    {"positions": True, "chars": True, "keeporiginal": True, "start_pos": 3, "start_char": 7},
    {"removestops": False, "positions": True, "chars": True, "keeporiginal": True},
    {"no_morph": True, "removestops": False},
    {"tokenize": False, "positions": True, "chars": True},
    {"tokenize": False, "removestops": False, "no_morph": True, "keeporiginal": True},
    {"mode": "query", "boosts": True},
]

# Characters that exercise every branch: separators, camelCase, digits, `++`/`#`,
# non-ASCII letters (including ones whose lowercase is longer), punctuation.
ALPHABET = "aAbBzZeEiInNgGsStT019_-./\\:#+ \n\t()`'éÉİßΣ日本ǅ"
WORDS = ["the", "embedding_server.py", "RateLimiterCheck", "HTTPServer", "C++", "c#", "#1234",
         "src/api/client.py", "std::vec::Vec", "x86_64", "utf-8", "running", "of_the_world",
         "İstanbul", "naïve_bayes", "a" * 130, "1" * 100 + "/" + "2" * 100]

text_strategy = st.one_of(
    st.text(alphabet=ALPHABET, max_size=80),
    st.lists(st.sampled_from(WORDS) | st.text(alphabet=ALPHABET, max_size=12),
             max_size=20).map(" ".join),
)


def _stream(analyzer, text: str, **options: Any) -> list[dict[str, Any]]:
    # Whoosh reuses one Token object, so each one is snapshotted as it is yielded.
    return [dict(vars(t)) for t in analyzer(text, **options)]


LEGACY = legacy_chain()


def _assert_same(text: str) -> None:
    fused = CodeAnalyzer()
    for options in OPTIONS:
        assert _stream(fused, text, **options) == _stream(LEGACY, text, **options), options
    assert fused.index_terms(text) == [t.text for t in LEGACY(text, mode="index")]
    new = list(CountedFrequency().word_values(text, fused, mode="index"))
    old = list(Frequency().word_values(text, LEGACY, mode="index"))
    assert new == old


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_strategy)
def test_fused_analyzer_matches_chain_on_random_text(text: str) -> None:
    _assert_same(text)


def _real_texts() -> list[str]:
    root = Path(__file__).resolve().parents[1]
    paths = sorted(root.glob("bench/data/coding/**/*.md"))[:60]
    paths += sorted((root / "ocm").glob("**/*.py"))[:20]
    return [p.read_text(encoding="utf-8") for p in paths]


@pytest.mark.parametrize("text", _real_texts() or ["no corpus"])
def test_fused_analyzer_matches_chain_on_real_text(text: str) -> None:
    _assert_same(text)


# TOKEN_PATTERN without its possessive quantifiers: what it must match, span for span.
PLAIN_TOKEN = re.compile(r"\w+(?:[./\\:\-]+\w+)*(?:\+\+|#(?!\w))?")
SEPARATED = st.lists(st.sampled_from(["a", "Zé", "9", "_", ".", "/", "\\", ":", "-", "+", "#",
                                      "++", "..", " ", "\n", "日"]), max_size=30).map("".join)


@settings(max_examples=600, deadline=None)
@given(st.one_of(text_strategy, SEPARATED))
def test_possessive_token_pattern_matches_the_plain_one(text: str) -> None:
    spans = [m.span() for m in re.finditer(TOKEN_PATTERN, text)]
    assert spans == [m.span() for m in PLAIN_TOKEN.finditer(text)]


@pytest.mark.parametrize("text", ["a..b", "a.b.", "a.-b", "a:", "x::y::", "c++", "c#", "c#d",
                                  "a/b/", "f.o.o#", "a-+", "a.+", "a++b", "é.日-9"])
def test_possessive_token_pattern_on_separator_edges(text: str) -> None:
    assert _TOKENS.findall(text) == PLAIN_TOKEN.findall(text)


def test_memo_survives_pickling_and_eviction(monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    from ocm.indexer import analysis

    monkeypatch.setattr(analysis, "EXPANSION_CACHE_SIZE", 3)
    fused = pickle.loads(pickle.dumps(CodeAnalyzer()))
    text = "alpha beta_gamma DeltaEpsilon zeta eta theta alpha beta_gamma"
    for _ in range(3):
        assert fused.index_terms(text) == [t.text for t in LEGACY(text)]
        assert _stream(fused, text, chars=True) == _stream(LEGACY, text, chars=True)


def test_large_counts_are_encoded_like_frequency() -> None:
    _assert_same("retry " * 300 + "cache " * 255 + "pool " * 256)


def _parts_every_level(text: str) -> tuple:
    """`_parts` as it was written first: every level and every word scanned, whatever the
    text holds (the one that skips the levels and words that cannot split must match)."""
    seen = {text.lower()}
    out = []
    for level in _LEVELS:
        for m in level.finditer(text):
            if m.group().lower() not in seen:
                seen.add(m.group().lower())
                out.append((m.group(), m.start(), m.end()))
    for m in _WORDS.finditer(text):
        word = m.group()
        if word.isascii() and _CAMEL_BOUNDARY.search(word):
            for cm in _CAMEL_PARTS.finditer(word):
                if cm.group().lower() not in seen:
                    seen.add(cm.group().lower())
                    out.append((cm.group(), m.start() + cm.start(), m.start() + cm.end()))
    return tuple(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_strategy)
def test_parts_skip_only_what_cannot_split(text: str) -> None:
    stem = stemmer_for_language("en")
    for raw in _TOKENS.findall(text) + WORDS + ["a/b.c_d-eF1", "x::yZ", "ß.Straße_naïveX1"]:
        assert _parts.__wrapped__(raw) == _parts_every_level(raw), raw
        assert _index_texts(raw, stem) == tuple(t.stemmed for t in _expand(raw, stem)
                                                if not t.stopped), raw

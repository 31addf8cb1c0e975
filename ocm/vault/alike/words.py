"""A record's words as the look-alike checks count them: split at CamelCase, lower-cased,
stopwords dropped, lightly stemmed; and the cosine of two bags of them. Shared by
auto-supersede, the near-copy check and the plan-reported-done rule."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

_WORD_RE = re.compile(r"[A-Za-z0-9]+")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP_TEXT = """
a an and are as at be been but by can could did do does for from had has have how i if in
into is it its may might must no not now of on once only or our should so than that the
their them then there these they this those to too use used uses using was we were what
when where which while who why will with would you your all any also after before every
each more most new old just one same very get gets got via per
"""
_STOPWORDS = frozenset(_STOP_TEXT.split())


def _stem(word: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


def _token(raw: str) -> str:
    """A word's token, "" for a word left out."""
    word = raw.lower()
    if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
        return ""
    return _stem(word)


# raw word -> its token: a vault's words repeat, and reading a record the process has not
# seen (a new candidate of each write) is mostly this per-word work. Bounded: past
# TOKENS_KEPT words, new ones are worked out each time.
TOKENS_KEPT = 100_000
_TOKENS: dict[str, str] = {}


def tokens(text: str) -> list[str]:
    out: list[str] = []
    known = _TOKENS
    for raw in _WORD_RE.findall(_CAMEL_RE.sub(" ", text or "")):
        token = known.get(raw)
        if token is None:
            token = _token(raw)
            if len(known) < TOKENS_KEPT:
                known[raw] = token
        if token:
            out.append(token)
    return out


# A process that writes many records (the MCP server) compares each new one with the same
# candidates and with its own earlier writes: their bags are counted once, not per write.
BAGS_KEPT = 2048
KEPT_CHARS = 4000  # longer texts are counted each time (fact-sized records are < 1,500)


def counts(text: str) -> Counter[str]:
    """`Counter(tokens(text))`, the same Counter again for a text counted recently: callers
    read it and never change it."""
    return _counts(text) if len(text) <= KEPT_CHARS else Counter(tokens(text))


@functools.lru_cache(maxsize=BAGS_KEPT)
def _counts(text: str) -> Counter[str]:
    return Counter(tokens(text))


def record_counts(title: str, text: str) -> Counter[str]:
    """A record's words as auto-supersede counts them (the title twice: it names the
    subject); `counts`' Counter, read and never changed by callers."""
    return counts(f"{title}\n{title}\n{text}")


def cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(count * b[token] for token, count in a.items() if token in b)
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm if norm else 0.0

"""A record's words as the look-alike checks count them: split at CamelCase, lower-cased,
stopwords dropped, lightly stemmed; and the cosine of two bags of them. Shared by
auto-supersede, the near-copy check and the plan-reported-done rule."""

from __future__ import annotations

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


def tokens(text: str) -> list[str]:
    out: list[str] = []
    for raw in _WORD_RE.findall(_CAMEL_RE.sub(" ", text or "")):
        word = raw.lower()
        if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(_stem(word))
    return out


def cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(count * b[token] for token, count in a.items() if token in b)
    norm = math.sqrt(sum(c * c for c in a.values())) * math.sqrt(sum(c * c for c in b.values()))
    return dot / norm if norm else 0.0

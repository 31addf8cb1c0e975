"""A hit's `confidence` (0..1): the share of hits like it in the dev splits that were
relevant (issue #26).

"Like it" is: matched the same way (words, meaning, both) and scored the same share of
its search's best score (`SHARES` bins). The table is measured by `bench/abstain.py
--calibrate` on the in-group searches of every dev set (LoCoMo and REALTALK, sessions
and turns, and SWE-bench), pooled; a bin with fewer than 30 hits takes its matched kind's
overall share. Relevance is rare below the top band because most queries have one or two
relevant notes among ten hits.
"""

from __future__ import annotations

from typing import Any

# Lower edges of the score-share bins, best first.
SHARES = (0.9, 0.7, 0.5, 0.3, 0.0)
# matched -> share of relevant hits per SHARES bin: `bench/abstain.py --calibrate` on the
# in-group hits of the five dev sets' dumps (2026-11-27, after a paragraph's low hits stayed,
# `ontopic.familiarity` and `ontopic.project`; hits per bin in bench/README.md).
TABLE: dict[str, tuple[float, ...]] = {
    "words": (0.425, 0.106, 0.029, 0.010, 0.008),
    "both": (0.362, 0.080, 0.033, 0.009, 0.0),
    "meaning": (0.273, 0.019, 0.008, 0.003, 0.04),
}


def share_bin(share: float) -> int:
    """The SHARES bin of a hit scoring `share` of its search's best."""
    return next(at for at, low in enumerate(SHARES) if share >= low or at == len(SHARES) - 1)


def rate(hits: list[Any]) -> None:
    """Set `confidence` on the ranked hits of one search (those with a `matched`)."""
    top = max((hit.score for hit in hits), default=0.0)
    for hit in hits:
        if hit.matched is None:
            continue
        share = hit.score / top if top > 0 else 0.0
        hit.confidence = TABLE[hit.matched][share_bin(share)]

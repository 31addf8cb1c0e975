"""The result side of a search made cheaper without changing it: candidates made by
`hits.candidate` (a dict copy, not the dataclass's `__init__`) are the `Hit`s `__init__`
makes, and the words' yields `chunks._term_positions` keeps per query term set give the
places a fresh analysis gives. Real notes, a real index."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path

import pytest

from ocm.indexer import chunks
from ocm.indexer.hits import Hit, _defaults, candidate
from ocm.project import Project, SearchRequest

NOW = datetime(2030, 1, 1)


def _as_init_makes(hit: Hit) -> Hit:
    """The same values through `Hit(...)`: `meta` as it stands (None while unread)."""
    values = {spec.name: getattr(hit, spec.name) for spec in fields(Hit) if spec.name != "meta"}
    return Hit(meta=hit.__dict__["_meta"], **values)


def test_a_candidate_is_the_hit_init_makes_with_meta_read_once() -> None:
    reads: list[int] = []

    def meta() -> dict:
        reads.append(1)
        return {"files": ["src/a.py"], "importance": 7}

    values = {"id": "m1", "kind": "memory", "type": "gotcha", "title": "T", "status": "active",
              "tool": "", "scope": "project", "date": datetime(2026, 1, 2),
              "path": Path("/v/m1.md"), "_meta": None, "meta_source": meta, "score": 2.5,
              "relpath": "m1.md", "_importance": 7}
    made = candidate(values)
    by_init = _as_init_makes(made)
    assert list(vars(made)) == list(vars(by_init))  # every field, in __init__'s order
    assert vars(made) == vars(by_init)
    assert reads == []  # not read by making it
    assert made.top_files == ["src/a.py"] and made.importance == 7
    assert made.meta is made.meta and reads == [1]  # read once, then kept
    # Two candidates share no state: one's fields set leave the other's defaults.
    other = candidate({**values, "id": "m2", "meta_source": None, "_meta": {}})
    made.explain = {"x": 1}
    made.coverage = 0.5
    assert other.explain is None and other.coverage is None and other.meta == {}
    copy = replace(made, score=1.0)  # grouped_hits' extra turns
    assert copy.score == 1.0 and copy.id == "m1" and copy.meta == made.meta


def test_defaults_refuse_a_default_factory() -> None:
    @dataclass
    class Shared:
        name: str
        seen: list = field(default_factory=list)

    with pytest.raises(TypeError, match=r"Shared\.seen"):
        _defaults(Shared)


def test_searched_hits_equal_hits_made_by_init(project: Project) -> None:
    project.remember("Kafka consumers commit offsets after the write, never before.",
                     "gotcha", title="Kafka offsets", tags=["kafka"])
    project.remember("Postgres advisory locks serialise the offset writers.", "decision",
                     title="Advisory locks for offsets")
    hits = project.search(SearchRequest(query="kafka offsets writers", limit=10, now=NOW))
    assert len(hits) == 2
    for hit in hits:
        assert vars(hit) == vars(_as_init_makes(hit))
        assert hit.chunk is not None and "offset" in hit.chunk.snippet.lower()


def test_term_positions_kept_per_term_set_match_a_fresh_analysis(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = ("Tokens are refreshed; the token store keeps tokenised sessions. "
            "src/token_cache.py holds sessions, session-token pairs and tokenizers.") * 3
    sets = [["token"], ["session"], ["token", "session"], ["tokenis"], ["tokenizer"]]
    fresh = {}
    for terms in sets:
        chunks._YIELDS.clear()
        fresh[tuple(terms)] = chunks._term_positions(text, terms)
    assert fresh[("token",)] and fresh[("session",)]
    # The same words meet other term sets one after the other, and more sets than are
    # kept: each set's places stay its own.
    monkeypatch.setattr(chunks, "TERM_SETS_KEPT", 2)
    chunks._YIELDS.clear()
    for _ in range(2):
        for terms in sets:
            assert chunks._term_positions(text, terms) == fresh[tuple(terms)], terms
            assert len(chunks._YIELDS) <= 2
    # "Tokens" holds `token` for the set that asks for it, nothing for the set that does not.
    assert fresh[("token",)][0] == (0, frozenset({"token"}))
    assert all(at != 0 for at, _ in fresh[("session",)])

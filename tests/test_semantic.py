"""Meaning as well as words: the real WordLlama model from its wheel, fused with BM25F."""

from __future__ import annotations

import socket
from datetime import datetime, timedelta

import pytest

from ocm.indexer import embed
from ocm.project import Project, SearchRequest

NOW = datetime(2026, 11, 20, 18, 0)


@pytest.fixture
def semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")


@pytest.fixture
def pets(project: Project) -> Project:
    project.remember("Our cat sleeps on the radiator all winter", "context",
                     created=NOW - timedelta(days=3))
    project.remember("The deploy pipeline runs on GitHub Actions", "context",
                     created=NOW - timedelta(days=2))
    project.remember("Postgres connection pool size is 20", "context",
                     created=NOW - timedelta(days=1))
    return project


def titles(project: Project, query: str) -> list[str]:
    return [h.title for h in project.search(SearchRequest(query=query, now=NOW))]


def vectors(project: Project) -> dict[str, list[int]]:
    from ocm.indexer.vectors import VectorStore

    store = VectorStore(project.vault.index_dir)
    store._load()
    return dict(zip(store.paths, store.sigs, strict=True))


def test_a_paraphrase_is_found_only_with_meaning(pets: Project, semantic: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert titles(pets, "the kitten") == ["Our cat sleeps on the radiator all winter"]
    assert titles(pets, "where does the kitty nap") == [
        "Our cat sleeps on the radiator all winter"]
    assert titles(pets, "quantum chromodynamics") == []  # far in meaning too: nothing
    monkeypatch.setenv(embed.SEMANTIC_ENV, "0")
    assert titles(pets, "the kitten") == []  # keyword-only: no shared word, no hit
    assert titles(pets, "connection pool") == ["Postgres connection pool size is 20"]


def test_keyword_only_mode_writes_no_vectors(pets: Project,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "0")
    assert titles(pets, "radiator") == ["Our cat sleeps on the radiator all winter"]
    assert not (pets.vault.index_dir / "vectors.npy").exists()
    assert pets.semantic_status() == {"enabled": False, "available": False, "model": None,
                                      "detail": "turned off (OCM_SEMANTIC=0)"}


def test_vectors_follow_the_notes(pets: Project, semantic: None) -> None:
    titles(pets, "radiator")
    before = vectors(pets)
    assert len(before) == 3
    cat = next(rel for rel in before if "cat" in rel)
    path = pets.vault.root / cat
    path.write_text(path.read_text().replace("Our cat sleeps", "Our dog naps"))
    assert titles(pets, "the puppy")[0].startswith("Our dog naps")
    after = vectors(pets)
    assert after[cat] != before[cat] and len(after) == 3  # re-embedded under its new signature
    path.unlink()
    titles(pets, "radiator")
    assert cat not in vectors(pets) and len(vectors(pets)) == 2
    # A lost or damaged vector file is rebuilt from the notes.
    (pets.vault.index_dir / "vectors.npy").write_bytes(b"garbage")
    assert titles(pets, "database connections")[0] == "Postgres connection pool size is 20"
    assert len(vectors(pets)) == 2


def test_a_model_that_fails_to_load_leaves_search_keyword_only(
        pets: Project, semantic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "DIM", 4096)  # no such weights in the wheel: the real loader fails
    monkeypatch.setattr(embed, "_announced", False)
    embed._load.cache_clear()
    try:
        assert titles(pets, "connection pool") == ["Postgres connection pool size is 20"]
        assert titles(pets, "the kitten") == []
        notices = [n for n in pets.notices if "semantic" in n]
        assert len(notices) == 1 and "keywords only" in notices[0]  # said once
        status = pets.semantic_status()
        assert status["enabled"] and not status["available"] and status["detail"]
    finally:
        embed._load.cache_clear()


def test_the_model_loads_with_no_network(semantic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access while loading the model")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    embed._load.cache_clear()
    try:
        model, why = embed.embedder()
        assert model is not None, why
        a, b = model.embed(["constants.ts is 800 lines and should be split",
                            "constants.ts was refactored into domain modules"])
        assert 0.2 < float(a @ b) < 0.9
    finally:
        embed._load.cache_clear()


def test_doctor_reports_semantic_search(pets: Project, run_ocm,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    def check(value: str) -> dict:
        monkeypatch.setenv(embed.SEMANTIC_ENV, value)
        out = run_ocm("doctor", "--json", check=False)
        return next(c for c in json.loads(out.stdout) if c["what"] == "semantic search")

    on = check("1")
    assert on["status"] == "ok" and "wordllama" in on["detail"]
    off = check("0")
    assert off["status"] == "info" and "OCM_SEMANTIC=0" in off["detail"]

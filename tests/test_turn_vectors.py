"""Meaning per turn: a transcript note has an embedding for each of its turns as well as
one for the whole conversation, so a search picks the turn a question is about even when
the turn shares no word with it. Real WordLlama model, real Whoosh index, transcript notes
written by the real rendering code."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ocm.indexer import embed
from ocm.indexer.vectors import VECTORS, VectorStore
from ocm.project import Project
from ocm.vault import transcripts as vt

PETS = [
    "the deploy pipeline needs a manual approval step before production",
    "our cat keeps sleeping on the warm radiator all winter long",
    "renaming the quarterly planning meeting to something shorter",
    "the flaky login test fails once in twenty runs on the build server",
]
# Turns long enough to be sections of their own (chunks.SHORT_NOTE_CHARS).
FILLER = " We can look at the rest of it again tomorrow morning before the stand-up."
OTHER = [
    "lunch on Friday at the noodle place near the office",
    "the onboarding doc needs screenshots of the new settings page",
    "the release checklist lives in the docs folder and still needs an owner",
]


@pytest.fixture(autouse=True)
def semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")


def write(project: Project, session: str, topics: list[str]) -> Path:
    turns = [vt.Turn(prompt=topic + FILLER, time=f"2026-03-02T10:{i:02d}:00")
             for i, topic in enumerate(topics)]
    source = project.vault.root.parent / f"{session}.jsonl"
    source.write_text("{}\n")
    result = vt.fold(project.vault.root, session, session, "claude-code", "", str(source),
                     lambda _lines: (turns, 1))
    assert result is not None and result.turns == len(topics)
    return result.path


def store_of(project: Project) -> VectorStore:
    project.index_for(project.vault).close()  # writes what this process changed
    store = VectorStore(project.vault.index_dir)
    store._load()
    return store


@pytest.fixture
def world(project: Project) -> Project:
    write(project, "2026-03-02_10-00_claude-code_misc", PETS)
    write(project, "2026-03-03_10-00_claude-code_other", OTHER)
    for text in ("The staging database is reset every Sunday night.",
                 "Use pnpm, not npm, in the web folder."):
        project.remember(text, "convention")
    return project


def test_the_turn_about_the_question_is_picked_without_a_shared_word(world: Project) -> None:
    hits = world.search("where does the kitten nap")
    mine = [h for h in hits if h.kind == "transcript"]
    assert mine, "the conversation is found by meaning"
    best = mine[0]
    # No turn holds a query word: the turn is chosen by its own embedding (turn 2), where
    # the whole note alone could only offer its first section.
    assert best.chunk is not None and "#Turn 2 " in best.chunk.anchor
    meaning = best.part_similarities
    assert meaning is not None and len(meaning) == len(best.chunks)  # one per section
    assert best.chunks[int(np.argmax(meaning))][0].startswith("Turn 2 ")


def test_words_still_choose_among_turns_that_hold_them(world: Project) -> None:
    # Meaning weighs semantic_weight(): the turn that holds the rare words stays first.
    hits = world.search("flaky login test")
    best = next(h for h in hits if h.kind == "transcript")
    assert best.chunk is not None and "#Turn 4 " in best.chunk.anchor


def test_turn_rows_follow_the_notes(world: Project) -> None:
    world.search("radiator")
    store = store_of(world)
    parts = dict(zip(store.paths, store.parts, strict=True))
    misc = next(p for p in parts if p.endswith("misc_transcript.md"))
    other = next(p for p in parts if p.endswith("other_transcript.md"))
    # One row per section: each turn, and the note's opening lines (the session link).
    assert parts[misc] == len(PETS) + 1 and parts[other] == len(OTHER) + 1
    assert all(n == 0 for p, n in parts.items() if p.startswith("memories/"))
    assert store.part_matrix.shape == (len(PETS) + len(OTHER) + 2, embed.DIM)
    query = embed.embedder()[0].embed(["noodle lunch"])[0]
    before_other = store.parts_similarities([store.row(other)], query)[0]
    # The first conversation grows a turn: its rows are embedded again, the other's kept
    # (and still paired with its own turns, though its rows moved in the matrix).
    note = world.vault.root / misc
    note.write_text(note.read_text() + "\n## Turn 5 · 10:09 · a new turn\n\n"
                    "A new turn about the kittens and their food." + FILLER + "\n")
    world.search("radiator")
    store = store_of(world)
    parts = dict(zip(store.paths, store.parts, strict=True))
    assert parts[misc] == len(PETS) + 2
    assert store.parts_similarities([store.row(other)], query)[0] == pytest.approx(
        before_other, abs=1e-6)
    assert store.part_matrix.shape[0] == len(PETS) + len(OTHER) + 3
    # Deleted: its rows go with it.
    (world.vault.root / misc).unlink()
    world.search("radiator")
    store = store_of(world)
    assert misc not in store.paths and store.part_matrix.shape[0] == len(OTHER) + 1
    assert store.parts_similarities([store.row(other)], query)[0] == pytest.approx(
        before_other, abs=1e-6)


def test_a_vector_file_of_the_previous_layout_is_rebuilt(world: Project) -> None:
    world.search("radiator")
    path = world.vault.index_dir / VECTORS
    store = store_of(world)
    rows = np.array(store.matrix)
    # The layout before turn rows: note rows and keys only.
    keys = {"model": embed.MODEL, "paths": store.paths, "sigs": store.sigs}
    with open(path, "wb") as handle:
        np.savez(handle, rows=rows, keys=np.array(json.dumps(keys)))
    assert "part_rows.npy" not in zipfile.ZipFile(path).namelist()
    hits = world.search("where does the kitten nap")
    best = next(h for h in hits if h.kind == "transcript")
    assert best.chunk is not None and "#Turn 2 " in best.chunk.anchor
    assert "part_rows.npy" in zipfile.ZipFile(path).namelist()
    assert sum(store_of(world).parts) == len(PETS) + len(OTHER) + 2


def test_keyword_only_search_picks_turns_by_words(world: Project,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "0")
    hits = world.search("radiator winter")
    best = next(h for h in hits if h.kind == "transcript")
    assert best.part_similarities is None
    assert best.chunk is not None and "#Turn 2 " in best.chunk.anchor

"""What a warm process keeps from one search to the next must give the floats and rows it
would have made afresh: words' vectors and pieces (ocm/indexer/wordvectors.py) and notes'
rows in a loaded vectors file (`VectorStore.row`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocm.indexer import embed, wordvectors
from ocm.indexer.bpe import MAX_SEGMENT
from ocm.indexer.ontopic import MAX_NOTE_WORDS, content_words
from ocm.indexer.vectors import VectorStore

CODING = Path(__file__).resolve().parents[1] / "bench" / "data" / "coding"


def _note_words() -> list[list[str]]:
    """Each coding note's words as `WordMeaning.best` reads them."""
    notes = [p.read_text(encoding="utf-8") for p in sorted(CODING.rglob("*.md"))][:60]
    return [words for note in notes if (words := content_words(note, MAX_NOTE_WORDS))]


def _assert_same(model, folder: Path, words: list[str]) -> None:
    vectors, pieces = wordvectors.word_vectors(model, folder, words)
    expected = model.embed(words, folder)
    tokenizer = model.tokenizer(folder)
    assert vectors.shape == expected.shape and vectors.dtype == expected.dtype
    assert vectors.tobytes() == expected.tobytes()
    assert all(pieces(at) == frozenset(tokenizer.encode(word))
               for at, word in enumerate(words) if len(word) < MAX_SEGMENT)


def test_kept_words_give_the_floats_of_embedding_the_whole_list(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, why = embed._load()
    assert model is not None, why
    wordvectors._kept.pop(model, None)
    notes = _note_words()
    assert len(notes) > 20 and sum(map(len, notes)) > 2000
    for words in notes:  # new words beside words kept from earlier notes, bit for bit
        _assert_same(model, tmp_path, words)
    kept = wordvectors._kept[model]
    assert len(kept.at) == len({word for words in notes for word in words})
    # A vocabulary past the bound starts again, and still gives the same floats.
    monkeypatch.setattr(wordvectors, "WORDS_KEPT", 150)
    kept.clear()
    for words in notes[:10]:
        _assert_same(model, tmp_path, words)
        assert len(kept.at) <= 150 + len(words)
    # Lists the embedder's lean path does not take (a word too long for it, or too many
    # characters in all) are embedded as they are, and nothing of them is kept.
    monkeypatch.setattr(wordvectors, "WORDS_KEPT", 20_000)
    kept.clear()
    for words in (["radiator", "z" * MAX_SEGMENT, "winter"], ["w" * 300] * 70):
        _assert_same(model, tmp_path, words)
    assert kept.at == {}


def _write_vectors(folder: Path, paths: list[str]) -> None:
    """A vectors file of `paths` (zero rows) written into `folder`."""
    import numpy as np

    store = VectorStore(folder)
    store.paths = paths
    store.sigs = [[i, i] for i in range(len(paths))]
    store.parts = [0] * len(paths)
    store.matrix = np.zeros((len(paths), embed.DIM), dtype=np.float32)
    store.part_matrix = np.zeros((0, embed.DIM), dtype=np.float32)
    store._save()


def test_rows_found_in_a_loaded_file_follow_a_file_written_again(tmp_path: Path) -> None:
    _write_vectors(tmp_path, ["memories/c.md", "memories/a.md", "sessions/b.md"])
    read = VectorStore(tmp_path)
    read._load()
    asked = ["memories/a.md", "sessions/b.md", "memories/c.md", "memories/gone.md"]
    assert [read.row(rel) for rel in asked] == [1, 2, 0, None]
    assert [read.row(rel) for rel in asked] == [1, 2, 0, None]  # the kept answers
    # Another file (a note added, the rows in another order): its own rows, not the kept.
    _write_vectors(tmp_path,
                   ["memories/gone.md", "sessions/b.md", "memories/a.md", "memories/c.md"])
    read._load()
    assert "paths" in read._raw  # still the file's members, searched, not a list
    assert [read.row(rel) for rel in asked] == [2, 1, 3, 0]


def test_a_searchs_rows_in_one_look_equal_each_rows_own(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`rows` answers as `row` does for each path: while the paths are the file's member
    (binary searches), once a warm process made them a dict, and after another file."""
    from ocm.indexer import vectors

    monkeypatch.setattr(vectors, "ROWS_LOOKED_BEFORE_LISTS", 4)
    _write_vectors(tmp_path, ["memories/c.md", "memories/a.md", "sessions/b.md", "memories/ä.md"])
    read = VectorStore(tmp_path)
    read._load()
    asked = ["memories/a.md", "memories/gone.md", "sessions/b.md", "memories/ä.md",
             "memories/c.md", "", "memories/a.md"]
    assert read.rows(asked[:3]) == [1, None, 2]
    assert "paths" in read._raw  # still searched in the file's member
    assert read.rows(asked) == [1, None, 2, 3, 0, None, 1]  # past 4 looks: the dict
    assert "paths" not in read._raw and read._row_of is not None
    assert read.rows(asked) == [read.row(rel) for rel in asked]
    assert read.rows([]) == []
    # Another file: its own rows, not the dict made for the last one.
    _write_vectors(tmp_path, ["memories/gone.md", "memories/c.md", "memories/a.md"])
    read._load()
    assert read.rows(asked) == [2, 0, None, None, 1, None, 2]
    assert read.rows(asked) == [2, 0, None, None, 1, None, 2]

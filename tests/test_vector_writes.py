"""The vectors file is written behind: a process that keeps updating the vectors (the MCP
server) does not rewrite every row after each commit, only once SAVE_ROWS rows changed,
SAVE_SECONDS passed, the index is closed or the process exits. Whatever is not yet written
is embedded again by the next process: answers never depend on it. Real model, real
Whoosh index, real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ocm.indexer import embed, vectors
from ocm.indexer.vectors import VECTORS, VectorStore
from ocm.project import Project

NOW = datetime(2026, 11, 20, 18, 0)


@pytest.fixture(autouse=True)
def semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")


@pytest.fixture
def pets(project: Project) -> Project:
    for days, text in enumerate(("Our cat sleeps on the radiator all winter",
                                 "The deploy pipeline runs on GitHub Actions",
                                 "Postgres connection pool size is 20",
                                 "The staging database is reset every Sunday night")):
        project.remember(text, "context", created=NOW - timedelta(days=days + 1))
    return project


def on_disk(project: Project) -> dict[str, list[int]]:
    store = VectorStore(project.vault.index_dir)
    store._load()
    return dict(zip(store.paths, store.sigs, strict=True))


def first_title(project: Project, query: str) -> str:
    return project.search(query, now=NOW)[0].title


def test_a_commit_updates_the_vectors_in_memory_and_the_file_later(pets: Project) -> None:
    first_title(pets, "radiator")  # the first embedding of the vault is written at once
    written = on_disk(pets)
    assert len(written) == 4
    file = pets.vault.index_dir / VECTORS
    stamp = file.stat().st_mtime_ns
    cat = next(rel for rel in written if "cat" in rel)
    note = pets.vault.root / cat
    note.write_text(note.read_text().replace("Our cat sleeps", "Our dog naps"))
    # This process answers from the new vector at once ...
    assert first_title(pets, "the puppy").startswith("Our dog naps")
    # ... while the file still holds the old row: one changed row is not worth rewriting.
    assert file.stat().st_mtime_ns == stamp and on_disk(pets)[cat] == written[cat]
    # Another process (a fresh Project, its own store) embeds what the file lacks.
    other = Project.open(cwd=pets.root)
    assert first_title(other, "the puppy").startswith("Our dog naps")
    # Closing the index writes the pending rows.
    pets.index_for(pets.vault).close()
    assert on_disk(pets)[cat] != written[cat]


def test_enough_changed_rows_are_written_without_waiting(pets: Project,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "SAVE_ROWS", 2)
    first_title(pets, "radiator")
    for number, text in enumerate(("Redis keys expire after an hour",
                                   "Use pnpm, not npm, in the web folder")):
        pets.remember(text, "convention", created=NOW - timedelta(hours=number + 1))
    first_title(pets, "radiator")  # two new rows: written now
    assert len(on_disk(pets)) == 6


@pytest.mark.parametrize("keeps_project", [True, False])
def test_a_process_writes_its_pending_rows_when_it_exits(pets: Project, ocm_home: Path,
                                                        keeps_project: bool) -> None:
    first_title(pets, "radiator")
    cat = next(rel for rel in on_disk(pets) if "cat" in rel)
    note = pets.vault.root / cat
    note.write_text(note.read_text().replace("Our cat sleeps", "Our dog naps"))
    before = on_disk(pets)[cat]
    # Also when nothing refers to the Project any more at exit (as in `ocm search`).
    search = "p = Project.open(cwd=sys.argv[1]); print(p.search('the puppy')[0].title)"
    script = ("import sys; from ocm.project import Project\n" + (
        search if keeps_project else f"def run():\n    {search}\nrun()"))
    done = subprocess.run([sys.executable, "-c", script, str(pets.root)], capture_output=True,
                          text=True, env={**os.environ, "OCM_HOME": str(ocm_home)},
                          timeout=120, check=True)
    assert done.stdout.startswith("Our dog naps")
    assert on_disk(pets)[cat] != before  # written at exit, by the process that embedded it


def test_rows_updated_in_place_equal_a_fresh_embedding(pets: Project) -> None:
    import numpy as np

    first_title(pets, "radiator")
    notes = sorted(on_disk(pets))
    for round_no in range(3):  # edits in place and new notes appended, commit after commit
        note = pets.vault.root / notes[round_no]
        note.write_text(note.read_text() + f"\nAlso round {round_no}: the kettle is broken.\n")
        pets.remember(f"Round {round_no}: the build cache lives in .cache/build{round_no}",
                      "convention", created=NOW - timedelta(minutes=round_no + 1))
        first_title(pets, "kettle")
    pets.index_for(pets.vault).close()
    incremental = VectorStore(pets.vault.index_dir)
    incremental._load()
    (pets.vault.index_dir / VECTORS).unlink()
    fresh_project = Project.open(cwd=pets.root)
    first_title(fresh_project, "kettle")  # embeds every note again, from scratch
    fresh_project.index_for(fresh_project.vault).close()
    fresh = VectorStore(pets.vault.index_dir)
    fresh._load()
    assert sorted(incremental.paths) == sorted(fresh.paths) and len(fresh.paths) == 7
    for rel in fresh.paths:
        a, b = incremental.row(rel), fresh.row(rel)
        assert a is not None and b is not None
        assert incremental.sigs[a] == fresh.sigs[b]
        assert np.allclose(incremental.matrix[a], fresh.matrix[b], atol=1e-3), rel


@pytest.mark.parametrize("layout", [vectors.FLOAT16_LAYOUT, vectors.JSON_KEYS_LAYOUT])
def test_rows_of_a_previous_layout_are_kept_and_written_back_in_the_current_one(
        pets: Project, monkeypatch: pytest.MonkeyPatch, layout: int) -> None:
    import json

    import numpy as np

    first_title(pets, "radiator")
    pets.index_for(pets.vault).close()
    path = pets.vault.index_dir / VECTORS
    store = VectorStore(pets.vault.index_dir)
    store._load()
    rows = np.array(store.matrix)
    assert rows.dtype == np.float32 and len(store.paths) == 4
    # Layouts 2 and 3 held paths, signatures and section counts in the JSON key; 2 stored
    # the rows as float16.
    keys = {"model": embed.MODEL, "layout": layout, "paths": store.paths,
            "sigs": store.sigs, "parts": store.parts}
    dtype = np.float16 if layout == vectors.FLOAT16_LAYOUT else np.float32
    with open(path, "wb") as handle:
        np.savez(handle, rows=rows.astype(dtype), part_rows=store.part_matrix.astype(dtype),
                 keys=np.array(json.dumps(keys)))

    def no_embedding(found: list, _embedder: object, _folder: object) -> tuple:
        assert not found, "rows of a previous layout are kept, not embedded again"
        empty = np.zeros((0, embed.DIM), dtype=np.float32)
        return empty, empty

    monkeypatch.setattr(vectors, "_vectors", no_embedding)
    other = Project.open(cwd=pets.root)
    assert first_title(other, "the kitten").startswith("Our cat sleeps")
    other.index_for(other.vault).close()
    with np.load(path) as stored:
        assert json.loads(str(stored["keys"]))["layout"] == vectors.LAYOUT
        assert stored["rows"].dtype == np.float32
        assert np.allclose(stored["rows"], rows, atol=1e-3)
    assert on_disk(pets) == dict(zip(store.paths, store.sigs, strict=True))


def test_a_failed_save_changes_nothing_and_fails_nothing(
        pets: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    first_title(pets, "radiator")
    pets.index_for(pets.vault).close()
    path = pets.vault.index_dir / VECTORS
    before = path.read_bytes()
    # A note other than the cat's changes (the kitten is found by meaning below).
    note = next(pets.vault.root / rel for rel in sorted(on_disk(pets))
                if "cat" not in (pets.vault.root / rel).read_text())
    note.write_text(note.read_text() + "\nA full disk, say.\n")
    other = Project.open(cwd=pets.root)
    first_title(other, "radiator")

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", full_disk)
    other.index_for(other.vault).close()  # derived data: closing does not fail on it
    assert path.read_bytes() == before
    assert [p.name for p in pets.vault.index_dir.iterdir() if p.name.endswith(".tmp")] == []
    # A search that must write the file (it is gone) still answers.
    path.unlink()
    assert first_title(Project.open(cwd=pets.root), "the kitten").startswith("Our cat")
    assert not path.exists()


def test_a_new_process_maps_the_rows_and_uses_them_while_the_manifest_is_the_same(
        pets: Project) -> None:
    first_title(pets, "radiator")
    pets.index_for(pets.vault).close()
    other = Project.open(cwd=pets.root)
    index = other.index_for(other.vault)
    store = index.vectors()
    assert store is not None
    # Mapped from the file, not read (its members are stored aligned) ...
    assert not store.matrix.flags.owndata and store.matrix.flags.writeable
    # ... and no note's signature was looked at: the rows match this very manifest.
    assert "sigs" in store._raw and "paths" in store._raw
    # A note edited outside the tool: the next check commits it, the manifest moves on,
    # and its row is embedded again (in the mapped copy, not in the file).
    cat = next(rel for rel in store.paths if "cat" in rel)
    before = store.matrix[store.row(cat)].copy()
    note = other.vault.root / cat
    note.write_text(note.read_text().replace("Our cat sleeps", "Our dog naps"))
    assert first_title(other, "the puppy").startswith("Our dog naps")
    assert index.vectors() is store and "sigs" not in store._raw
    assert not (store.matrix[store.row(cat)] == before).all()
    assert on_disk(other)[cat] != store.sigs[store.row(cat)]
    index.close()
    assert on_disk(other)[cat] == store.sigs[store.row(cat)]


def test_the_file_round_trips_names_that_are_not_utf8(tmp_path: Path) -> None:
    import numpy as np

    store = VectorStore(tmp_path)
    # os.listdir's name for the bytes b"a\xff.md": a lone surrogate, not UTF-8.
    store.paths = ["sessions/a\udcff.md", "memories/b.md"]
    store.sigs, store.parts = [[1, 2], [3, 4]], [0, 1]
    store.matrix = np.arange(2 * embed.DIM, dtype=np.float32).reshape(2, embed.DIM)
    store.part_matrix = np.ones((1, embed.DIM), dtype=np.float32)
    store._save()
    read = VectorStore(tmp_path)
    read._load()
    assert (read.paths, read.sigs, read.parts) == (store.paths, store.sigs, store.parts)
    assert (read.matrix == store.matrix).all() and (read.part_matrix == 1).all()
    assert read.row("sessions/a\udcff.md") == 0


def test_a_loaded_file_finds_rows_and_sections_without_making_lists(tmp_path: Path) -> None:
    import numpy as np

    store = VectorStore(tmp_path)
    # Out of path order, with names that sort differently as bytes than as ASCII would
    # (non-ASCII, a lone surrogate, a prefix of another).
    store.paths = ["sessions/b.md", "memories/zz/ünï.md", "sessions/a\udcff.md",
                   "memories/a.md", "memories/a.md.md", "memories/Z.md", "memories/ä.md"]
    count = len(store.paths)
    store.sigs = [[i, i] for i in range(count)]
    store.parts = [0, 2, 0, 3, 1, 0, 2]
    rng = np.random.default_rng(3)
    store.matrix = rng.random((count, embed.DIM), dtype=np.float32)
    store.part_matrix = rng.random((sum(store.parts), embed.DIM), dtype=np.float32)
    store._save()
    query = rng.random(embed.DIM, dtype=np.float32)
    read = VectorStore(tmp_path)
    read._load()
    found = ([read.row(rel) for rel in [*store.paths, "memories/b.md", "", "zzz"]],
             [read.path(row) for row in range(count)],
             [read.parts_similarities([read.row(rel)], query)[0] for rel in store.paths])
    assert "paths" in read._raw and "parts" in read._raw and read._row_of is None
    assert found[0] == [*range(count), None, None, None]
    assert found[1] == store.paths
    assert found == ([store.row(rel) for rel in [*store.paths, "memories/b.md", "", "zzz"]],
                     store.paths, store.parts_similarities(
                         [store.row(rel) for rel in store.paths], query))
    assert [s is None for s in found[2]] == [n == 0 for n in store.parts]
    # A file written before the path order was: the rows are found as before.
    del read._raw["order"]
    assert [read.row(rel) for rel in store.paths] == list(range(count))


def test_a_rebuild_leaves_every_note_embedded(pets: Project, ocm_home: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh clone has no vectors file: `ocm rebuild-index` embeds every note, so the
    first search does not. Keyword-only, it writes none."""
    file = pets.vault.index_dir / VECTORS
    file.unlink(missing_ok=True)
    env = {**os.environ, "OCM_HOME": str(ocm_home)}
    subprocess.run([sys.executable, "-m", "ocm.cli.main", "rebuild-index", "--json"],
                   cwd=pets.root, env=env, capture_output=True, timeout=120, check=True)
    notes = sorted(p.relative_to(pets.vault.root).as_posix()
                   for p in pets.vault.memories_dir.rglob("*.md"))
    assert sorted(on_disk(pets)) == notes
    stamp = file.stat().st_mtime_ns
    assert first_title(Project.open(cwd=pets.root), "radiator").startswith("Our cat sleeps")
    assert file.stat().st_mtime_ns == stamp  # nothing left to embed, nothing rewritten
    file.unlink()
    subprocess.run([sys.executable, "-m", "ocm.cli.main", "rebuild-index", "--json"],
                   cwd=pets.root, env={**env, embed.SEMANTIC_ENV: "0"}, capture_output=True,
                   timeout=120, check=True)
    assert not file.exists()


def test_a_rebuild_reads_each_note_once_for_its_index_and_its_embedding(
        pets: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.indexer import index
    from ocm.indexer.index import NoteIndex

    # More notes than an incremental sync keeps the texts of: a rebuild keeps them all.
    monkeypatch.setattr(index, "EMBED_READY_MAX", 2)
    (pets.vault.index_dir / VECTORS).unlink(missing_ok=True)
    reads: list[str] = []
    real = NoteIndex._fields

    def counted(self, rel):
        reads.append(rel)
        return real(self, rel)

    monkeypatch.setattr(NoteIndex, "_fields", counted)
    report = pets.rebuild_index(procs=1)
    assert report.added == len(on_disk(pets)) == 4
    assert sorted(reads) == sorted(on_disk(pets))  # each once: no second read to embed

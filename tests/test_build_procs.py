"""A rebuild shared among forked sub-writers indexes what one process indexes, in the same
order, and reports its progress and broken notes the same way."""

from __future__ import annotations

import gc
import os
import sys
from datetime import datetime
from pathlib import Path

import pytest
from whoosh import index

from ocm.indexer.index import FORK_MIN_NOTES, NoteIndex
from ocm.indexer.savedpostings import EXT
from ocm.indexer.vectors import VectorStore
from ocm.project import Project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="sub-writers are bound with prctl (Linux only)")

NOTES = FORK_MIN_NOTES + 40
NOW = datetime(2030, 1, 1)  # naive, as the notes' dates are


def _fill(project: Project) -> str:
    template = project.remember("Kafka consumers commit offsets after the write.", "gotcha",
                               title="Kafka offsets").path
    text = template.read_text()
    for i in range(NOTES):
        body = f"Note {i}: " + " ".join(f"word{(i * 7 + j) % 397}" for j in range(60))
        note = text.replace(template.stem, f"bulk-{i:04d}").replace(
            "Kafka consumers commit offsets after the write.", body)
        (template.parent / f"bulk-{i:04d}.md").write_text(note)
    # A broken note in the last run (a sub-writer's): unreadable frontmatter.
    broken = template.parent / "zz-broken.md"
    broken.write_text("---\nid: [unclosed\n---\nbody\n")
    return broken.relative_to(project.vault.root).as_posix()


def _rebuild(project: Project, procs: int) -> tuple:
    calls: list[tuple[int, int]] = []
    report = project.rebuild_index(progress=lambda done, total: calls.append((done, total)),
                                   procs=procs)
    ix = index.open_dir(str(project.vault.index_dir))
    segments = len(ix._read_toc().segments)
    # Each segment's postings saved beside it for the scorer (ocm/indexer/savedpostings.py).
    assert sorted(p.name for p in project.vault.index_dir.glob(f"*.{EXT}")) == sorted(
        s.make_filename("." + EXT) for s in ix._read_toc().segments)
    with ix.searcher() as searcher:
        stored = [(s["path"], s["sig"], s["chunks"]) for s in searcher.all_stored_fields()]
    # A fixed clock: recency weighs in the scores.
    hits = [[(h.path, h.score) for h in project.search(q, limit=20, now=NOW)]
            for q in ("word17 word42", "kafka offsets", "note 123", "word3")]
    # Each note's embedding, as the writers that read it made it (ocm/indexer/vectors.py).
    store = VectorStore(project.vault.index_dir)
    store.holds(None)  # (loads the file)
    vectors = {rel: store.matrix[store.row(rel)].tobytes() for rel in store.paths}
    return report, calls, segments, stored, hits, vectors


def test_two_processes_index_what_one_does(project: Project,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    broken = _fill(project)
    one = _rebuild(project, 1)
    # The writers embed the notes they read: the vectors' sync after the build reads no
    # note again.
    read_again: list[str] = []
    embed_text = NoteIndex._embed_text
    monkeypatch.setattr(NoteIndex, "_embed_text",
                        lambda self, rel: (read_again.append(rel), embed_text(self, rel))[1])
    two = _rebuild(project, 2)
    assert read_again == []
    # Bit for bit the rows one process makes, for every note (the broken one has none).
    assert two[5] == one[5] and len(one[5]) == NOTES + 1
    assert (one[2], two[2]) == (1, 2)  # one segment, then one per process
    assert two[0].added == one[0].added == NOTES + 1
    assert list(two[0].broken) == list(one[0].broken) == [broken]
    assert two[3] == one[3]  # the same documents, in the same order
    assert two[4] == one[4] and all(two[4])
    for calls in (one[1], two[1]):
        assert calls[-1] == (NOTES + 2, NOTES + 2)
        assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_a_failing_sub_writer_fails_the_build_and_leaves_no_child(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.indexer import buildwriter

    _fill(project)
    project.rebuild_index(procs=1)
    parent = os.getpid()
    original = buildwriter.BuildWriter.finish_part

    def failing(self):  # only in the forked sub-writer
        if os.getpid() != parent:
            raise RuntimeError("disk full")
        return original(self)

    monkeypatch.setattr(buildwriter.BuildWriter, "finish_part", failing)
    monkeypatch.setenv("OCM_DEBUG", "1")  # the error itself, not the repair by a rebuild
    with pytest.raises(Exception, match="disk full"):
        project.rebuild_index(procs=2)
    assert not _children()
    # The temporary folder all writers share is gone: the parent's cancel removed it (a
    # sub-writer's cancel had removed it under the parent, which then failed on its files).
    assert not (project.vault.index_dir / "MAIN.tmp").exists()


def test_a_batch_leaves_no_writer_to_the_next(project: Project,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild pauses the cyclic collector; each batch's writers end in reference cycles
    (Whoosh's), which would stay until the build ended, forked into every later batch's
    sub-writers: none is alive when the next batch starts."""
    from ocm.indexer import buildwriter
    from ocm.indexer import index as index_module

    _fill(project)
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 70)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES)
    alive: list[int] = []
    build = NoteIndex._build

    def counting(self: NoteIndex, *args, **kwargs) -> None:
        alive.append(sum(isinstance(o, buildwriter.BuildWriter) for o in gc.get_objects()))
        assert not gc.isenabled()  # (paused, as in every rebuild)
        build(self, *args, **kwargs)

    monkeypatch.setattr(NoteIndex, "_build", counting)
    report = project.rebuild_index(procs=1)
    assert report.added == NOTES + 1
    assert len(alive) == 4 and alive == [0, 0, 0, 0]


def test_each_batch_saves_the_rows_its_writers_made(project: Project,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows a batch's writers embedded are saved after that batch (not held to the end
    of the build: memory, and a build killed later keeps them), bit for bit those of a
    build in one batch."""
    from ocm.indexer import index as index_module

    _fill(project)
    whole = _rebuild(project, 1)[5]
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 70)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES)
    seen: list[tuple[int, int]] = []
    build = NoteIndex._build

    def looking(self: NoteIndex, *args, **kwargs) -> None:
        store = VectorStore(project.vault.index_dir)
        store.holds(None)  # (loads the file, if any)
        seen.append((store.count, len(self._embedded)))
        build(self, *args, **kwargs)

    monkeypatch.setattr(NoteIndex, "_build", looking)
    assert _rebuild(project, 1)[5] == whole
    assert seen == [(0, 0), (70, 0), (140, 0), (210, 0)]


def test_writers_embed_as_they_read_and_the_builder_forks_without_rows(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's writers embed every vectors.BATCH notes as they read them (a 100k build's
    process held its whole run's texts, ~4.5 KB a note, until the run's end), into the same
    rows bit for bit; and between batches the builder holds no rows (the next batch's
    sub-writers are forked from it)."""
    from ocm.indexer import index as index_module
    from ocm.indexer import vectors

    _fill(project)
    whole = _rebuild(project, 2)[5]
    monkeypatch.setattr(vectors, "BATCH", 16)
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 70)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES)
    held: list[int] = []  # (this process's writer's: a sub-writer's are in its own memory)
    put = index_module._Embedding.__setitem__

    def holding(self: index_module._Embedding, rel: str, text: tuple) -> None:
        put(self, rel, text)
        held.append(len(self._texts))

    monkeypatch.setattr(index_module._Embedding, "__setitem__", holding)
    forked_with: list[object] = []
    build = NoteIndex._build

    def looking(self: NoteIndex, *args, **kwargs) -> None:
        forked_with.append(self._vectors)
        build(self, *args, **kwargs)

    monkeypatch.setattr(NoteIndex, "_build", looking)
    assert _rebuild(project, 2)[5] == whole
    assert max(held) == 15 and held.count(0) >= 4
    assert len(forked_with) == 4 and forked_with[1:] == [None, None, None]


def _children() -> list[str]:
    """This process's live (not zombie) children."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if parent == str(os.getpid()) and state != "Z":
            found.append(entry.name)
    return found


def test_runs_share_the_work_by_size_in_path_order() -> None:
    from ocm.indexer.index import NOTE_BYTES, _runs

    scan = {f"m{i}": [0, 0] for i in range(6)} | {f"s{i}": [0, 2 * NOTE_BYTES] for i in range(2)}
    assert _runs(list(scan), scan, 2) == [[f"m{i}" for i in range(6)], ["s0", "s1"]]
    assert _runs(["a"], {"a": [0, 5]}, 3) == [["a"]]
    assert _runs([], {}, 2) == [[]]

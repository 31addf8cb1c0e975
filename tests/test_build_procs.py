"""A rebuild shared among forked sub-writers indexes what one process indexes, in the same
order, and reports its progress and broken notes the same way."""

from __future__ import annotations

import gc
import json
import os
import sys
import time
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
        reader = searcher.reader()
        chunks = reader.column_reader("chunks")  # a column of its own (schema.py)
        stored = [(s["path"], s["sig"], chunks[doc]) for doc in reader.all_doc_ids()
                  if (s := reader.stored_fields(doc))]
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
    sub-writers: none is alive when the next batch starts. After the last batch nothing is
    forked: no collection there (one core busy, the other idle)."""
    from ocm.indexer import buildwriter
    from ocm.indexer import index as index_module

    _fill(project)
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 60)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES)
    alive: list[int] = []
    build = NoteIndex._build

    def counting(self: NoteIndex, *args, **kwargs) -> None:
        alive.append(sum(isinstance(o, buildwriter.BuildWriter) for o in gc.get_objects()))
        assert not gc.isenabled()  # (paused, as in every rebuild)
        build(self, *args, **kwargs)

    monkeypatch.setattr(NoteIndex, "_build", counting)
    collected: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *args: collected.append(collect(*args)))
    report = project.rebuild_index(procs=1)
    assert report.added == NOTES + 1
    assert len(alive) == 4 and alive == [0, 0, 0, 0]
    assert len(collected) == 3


def test_each_batch_saves_the_rows_its_writers_made(project: Project,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows a batch's writers embedded are saved after that batch (not held to the end
    of the build: memory, and a build killed later keeps them), bit for bit those of a
    build in one batch."""
    from ocm.indexer import index as index_module

    _fill(project)
    whole = _rebuild(project, 1)[5]
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 60)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES)
    seen: list[tuple[int, int]] = []
    before: list[int] = [0]  # the notes the batches so far took
    build = NoteIndex._build

    def looking(self: NoteIndex, ix, scan, changed, *args, **kwargs) -> None:
        store = VectorStore(project.vault.index_dir)
        store.holds(None)  # (loads the file, if any)
        seen.append((store.count, len(self._embedded)))
        before.append(before[-1] + len(changed))
        build(self, ix, scan, changed, *args, **kwargs)

    monkeypatch.setattr(NoteIndex, "_build", looking)
    assert _rebuild(project, 1)[5] == whole
    # (the broken note, last in path order, has no row)
    assert seen == [(count, 0) for count in before[:4]] and before[-1] == NOTES + 2
    taken = [b - a for a, b in zip(before, before[1:], strict=False)]
    assert all(50 <= count <= 70 for count in taken)


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
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 60)
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


def test_each_batch_forks_its_writers_without_the_last_batchs_words(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The analyzer's memos (each distinct token's terms, up to 200k of them) are dropped
    after each batch: the builder does not carry them into the next batch, nor fork
    them into its sub-writers (whose lookups would copy the pages they share)."""
    from ocm.indexer import analysis
    from ocm.indexer import index as index_module

    _fill(project)
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 60)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", NOTES)
    held: list[tuple[int, int]] = []
    build = NoteIndex._build

    def looking(self: NoteIndex, *args, **kwargs) -> None:
        held.append((len(analysis.code_analyzer()._indexed),
                     analysis._parts.cache_info().currsize))
        build(self, *args, **kwargs)

    monkeypatch.setattr(NoteIndex, "_build", looking)
    assert _rebuild(project, 2)[0].added == NOTES + 1
    assert len(held) == 4 and held[1:] == [(0, 0)] * 3


def test_a_resumed_builds_writers_memoise_each_word_once_and_drop_it_before_writing(
        project: Project, repo: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A build resumed on an opened index (a clone's background build) unpickles the schema
    and with it an analyzer of its own: its writers analyse with the shared one (which the
    sections' token counts use, so a run's words are memoised once, not twice), and each
    writer, the builder and its sub-writer alike, drops those memos before it writes its
    segment (a process's peak). The index is the one a single process builds."""
    from ocm.indexer import analysis
    from ocm.indexer.buildwriter import BuildWriter

    _fill(project)
    whole = _rebuild(project, 1)[3]
    first = Project.open(cwd=repo).index_for(project.vault)
    first.build_budget, first.budget_min_notes = 0.0, 1
    first._create()
    first.sync()  # (a first search's build: one note committed, the rest left)
    assert first.progress is not None and first.progress[0] < NOTES
    seen = tmp_path / "writers.txt"
    finish = BuildWriter._finalize_segment

    def noted(self: BuildWriter) -> None:
        shared = all(f.analyzer is analysis.code_analyzer() for _, f in self.schema.items()
                     if isinstance(getattr(f, "analyzer", None), analysis.CodeAnalyzer))
        with seen.open("a") as out:
            out.write(f"{os.getpid()} {shared} {len(analysis.code_analyzer()._indexed)}\n")

    def finishing(self: BuildWriter):
        noted(self)
        return finish(self)

    monkeypatch.setattr(BuildWriter, "_finalize_segment", finishing)
    Project.open(cwd=repo).rebuild_index(procs=2, resume=True)
    rows = [line.split() for line in seen.read_text().splitlines()]
    assert len({pid for pid, _, _ in rows}) == 2  # the builder's segment and the sub-writer's
    assert all(shared == "True" and held == "0" for _, shared, held in rows)
    ix = index.open_dir(str(project.vault.index_dir))
    with ix.searcher() as searcher:
        reader = searcher.reader()
        assert sorted(s["path"] for s in reader.all_stored_fields()) == sorted(
            path for path, _, _ in whole)


def test_batches_keep_to_a_work_budget_and_a_cap_of_segments(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.indexer import index as index_module
    from ocm.indexer.index import (
        BUILD_BATCH_MIN,
        BUILD_BATCHES,
        MAX_LARGE_SEGMENTS,
        NOTE_BYTES,
        _batch_ends,
    )

    # Small notes within the budget: BUILD_BATCHES batches, none under BUILD_BATCH_MIN.
    few = {f"m{i:05d}": [0, 0] for i in range(4 * BUILD_BATCH_MIN)}
    assert _batch_ends(sorted(few), few, 2) == [BUILD_BATCH_MIN * n for n in (1, 2, 3, 4)]
    assert _batch_ends(sorted(few)[:BUILD_BATCH_MIN + 1], few, 2) == [BUILD_BATCH_MIN + 1]
    assert _batch_ends(sorted(few)[:2 * BUILD_BATCH_MIN - 1], few, 2) == [
        2 * BUILD_BATCH_MIN - 1]
    # The work budget beats the notes' minimum: notes whose work passes it are cut into
    # batches of at most its work (what a writer holds), however few notes each has.
    monkeypatch.setattr(index_module, "BUILD_BATCH_WORK", BUILD_BATCH_MIN * NOTE_BYTES // 2)
    ends = _batch_ends(sorted(few)[:BUILD_BATCH_MIN + 1], few, 2)
    sizes = [b - a for a, b in zip([0, *ends], ends, strict=False)]
    assert len(ends) == 3 and ends[-1] == BUILD_BATCH_MIN + 1
    assert all(size <= BUILD_BATCH_MIN // 2 for size in sizes)
    # Past the budget: more batches, of about the same work each (a note of 3x the work
    # counts 3x), as many as keep the segments (one a process a batch) within the cap.
    monkeypatch.setattr(index_module, "BUILD_BATCH_MIN", 10)
    monkeypatch.setattr(index_module, "BUILD_BATCH_WORK", 300 * NOTE_BYTES)
    mixed = {f"m{i:04d}": [0, 0] for i in range(600)} | {
        f"s{i:04d}": [0, 2 * NOTE_BYTES] for i in range(600)}
    ends = _batch_ends(sorted(mixed), mixed, 2)  # work 2,400 notes' worth: 8 batches
    sizes = [b - a for a, b in zip([0, *ends], ends, strict=False)]
    assert len(ends) == MAX_LARGE_SEGMENTS // 2 == 6 and ends[-1] == 1200
    assert sizes[0] == 400 and all(130 <= size <= 136 for size in sizes[2:])
    assert len(_batch_ends(sorted(mixed), mixed, 1)) == 8  # one process: under the cap
    assert len(_batch_ends(sorted(mixed), mixed, 4)) == BUILD_BATCHES  # never fewer
    assert _batch_ends([], {}, 2) == [0]


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
    # The builder's run (the first) with `first` times the work of each sub-writer's.
    even = {f"n{i}": [0, 0] for i in range(100)}
    assert [len(run) for run in _runs(list(even), even, 2, 1.5)] == [60, 40]
    assert [len(run) for run in _runs(list(even), even, 3, 2)] == [50, 25, 25]
    assert [len(run) for run in _runs(list(even), even, 2)] == [50, 50]


def test_the_builder_takes_a_larger_share_only_of_a_batch_cut_by_its_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder's longer run keeps two runs' ends (each process's peak) apart where a
    batch is large enough for that to matter; a smaller batch is shared evenly, so that
    the sub-writer's core does not idle from its run's end to the builder's."""
    from ocm.indexer import index as index_module
    from ocm.indexer.index import BUILDER_SHARE, NOTE_BYTES, _builder_share, _runs

    even = {f"n{i}": [0, NOTE_BYTES] for i in range(100)}  # 200,000 bytes of work
    monkeypatch.setattr(index_module, "BUILD_BATCH_WORK", 200_000)
    assert _builder_share(list(even), even) == 1
    assert [len(run) for run in _runs(list(even), even, 2, _builder_share(list(even), even))
            ] == [50, 50]
    monkeypatch.setattr(index_module, "BUILD_BATCH_WORK", 199_999)
    assert _builder_share(list(even), even) == BUILDER_SHARE > 1


def test_the_builder_keeps_the_scans_own_signatures_not_copies(project: Project) -> None:
    """What a build records of each note (the manifest's notes, held to the end of the
    build and forked into each later sub-writer) is the scan's own path and signature
    objects, not copies unpickled from the sub-writers (~250 bytes a note), and the same
    values in the same order as one process records."""
    _fill(project)
    project.rebuild_index(procs=1)
    one = json.loads((project.vault.index_dir / "manifest.json").read_text())["notes"]
    project.rebuild_index(procs=2)
    index = project.index_for(project.vault)
    scan = index._last_scan
    notes = index._manifest._loaded.data["notes"]
    assert list(notes.items()) == list(one.items()) and len(notes) == NOTES + 1
    keys = {id(rel) for rel in scan}
    assert all(id(rel) in keys and sig is scan[rel] for rel, sig in notes.items())


def test_a_sub_writer_with_the_shorter_run_ends_before_the_builder_has_read_its_own(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's end is its process's peak: the sub-writer's run is the shorter
    (BUILDER_SHARE), and the builder takes its result from the pipe while it still reads
    its own run, so the sub-writer ends, and all it held goes, before the builder writes
    its segment (its result, over a pipe's 64 KB, would otherwise keep it waiting)."""
    from ocm.indexer import buildwriter
    from ocm.indexer import index as index_module

    _fill(project)
    monkeypatch.setattr(index_module, "BUILD_BATCHES", 1)
    monkeypatch.setattr(index_module, "_builder_share", lambda rels, scan: 1.5)
    builder = os.getpid()
    fields = NoteIndex._fields

    def slowly(self: NoteIndex, rel: str) -> tuple:  # the builder reads slower
        if os.getpid() == builder:
            time.sleep(0.03)
        return fields(self, rel)

    monkeypatch.setattr(NoteIndex, "_fields", slowly)
    running_at_finish: list[list[str]] = []
    finish = buildwriter.BuildWriter.finish_part

    def looking(self) -> object:
        if os.getpid() == builder:
            deadline = time.monotonic() + 60
            while _children() and time.monotonic() < deadline:
                time.sleep(0.05)
            running_at_finish.append(_children())
        return finish(self)

    monkeypatch.setattr(buildwriter.BuildWriter, "finish_part", looking)
    # (no progress reported, as `ocm rebuild-index --json`: the pipe is read all the same)
    assert project.rebuild_index(procs=2).added == NOTES + 1
    assert running_at_finish == [[]]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: the CLI builds in one process")
def test_the_cli_with_its_progress_bar_shares_the_build(project: Project, ocm_home: Path
                                                        ) -> None:
    """`ocm rebuild-index` in a terminal draws a progress bar and still forks its
    sub-writers (one segment each): the bar is drawn by the build's reports, not by a
    thread of its own, which would keep the process from forking."""
    import subprocess

    _fill(project)
    done = subprocess.run([sys.executable, "-m", "ocm.cli.main", "rebuild-index"],
                          cwd=project.root, env={**os.environ, "OCM_HOME": str(ocm_home)},
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert f"Indexed {NOTES + 1} notes; 1 broken." in done.stdout
    ix = index.open_dir(str(project.vault.index_dir))
    assert len(ix._read_toc().segments) > 1

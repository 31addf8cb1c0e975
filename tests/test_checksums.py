"""Damaged index files are found by their checksums before they are read (issue #31).

A flipped bit in a field's lengths (`*_len.col`) or the saved postings (`*.ocmpost`)
changed scores with no error. Each kind of segment file is damaged in a real index; the next
search (a new Project, as a new process would; one through the `ocm` CLI) says so and
answers with the scores of a clean rebuild."""

from __future__ import annotations

import json
import os
import random
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ocm.indexer import checksums, embed
from ocm.project import Project, SearchRequest

NOW = datetime(2026, 11, 20, 12, 0)
WORDS = ["redis", "cache", "ttl", "eviction", "token", "refresh", "jwt", "oauth", "postgres",
         "migration", "deadlock", "alembic", "webhook", "stripe", "retry", "celery", "worker"]
QUERIES = ["redis ttl", "token refresh jwt", "postgres deadlock migration", "webhook",
           "celery worker retry"]
KINDS = ["._content_len.col", "._goal_len.col", ".ocmpost", ".pst", ".trm", "._stored.col",
         ".date.col", ".chunks.col"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.fixture
def built(project: Project, keyword_only: None) -> Project:
    """~60 memories built in one segment, then a commit of one more: two segments."""
    rng = random.Random(5)
    for i in range(60):
        project.remember(_text(rng, rng.randint(3, 40)), rng.choice(["gotcha", "decision"]),
                         title=_text(rng, rng.randint(1, 6)), created=NOW - timedelta(days=i))
    project.rebuild_index()
    project.remember("redis ttl eviction", "gotcha", title="one more redis", created=NOW)
    project.search("redis")
    return project


def scores(project: Project) -> list[list[tuple[str, float]]]:
    return [[(h.path.name, round(h.score, 9)) for h in project.search(
        SearchRequest(query=q, now=NOW, limit=20))] for q in QUERIES]


def fresh(project: Project) -> Project:
    """The vault opened again, as by a new process (its files' checks not yet cached)."""
    for known in (checksums._VERIFIED, checksums._AHEAD, checksums._BLOCKED, checksums._BAD):
        known.clear()
    return Project.open(vault=project.vault.root)


def biggest(index: Path, kind: str) -> Path:
    return max((p for p in index.iterdir() if p.name.endswith(kind)),
               key=lambda p: p.stat().st_size)


def flip(path: Path, keep_mtime: bool = False) -> None:
    """Bits flipped in the middle of the file, as a disk or a stray write would."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    for at in range(middle, min(middle + 4, len(data))):
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def flip_blocks(path: Path, every: int = checksums.BLOCK) -> None:
    """A byte flipped in each block of `every` bytes (in its middle), the mtime kept: what
    a search reads of the file, it reads damaged."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    for at in range(every // 2, len(data), every):
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def clean_scores(project: Project) -> list[list[tuple[str, float]]]:
    project.rebuild_index()
    return scores(fresh(project))


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_file_is_never_read(built: Project, kind: str) -> None:
    clean = clean_scores(built)
    index = built.vault.index_dir
    damaged = biggest(index, kind)
    flip(damaged)
    reopened = fresh(built)
    assert scores(reopened) == clean
    said = [n for n in reopened.notices if "checksum" in n]
    assert len(said) == 1 and damaged.name in said[0], reopened.notices
    if kind == ".ocmpost":  # only that file goes: its segment's own postings are read
        assert "removed it" in said[0] and not damaged.exists()
    else:
        assert "rebuilt the index" in said[0] and not damaged.exists()  # a new segment
    again = fresh(built)
    assert scores(again) == clean and not [n for n in again.notices if "checksum" in n]


def test_a_truncated_file_is_rebuilt(built: Project) -> None:
    clean = clean_scores(built)
    damaged = biggest(built.vault.index_dir, "._content_len.col")
    with open(damaged, "r+b") as handle:
        handle.truncate(damaged.stat().st_size // 2)
    reopened = fresh(built)
    assert scores(reopened) == clean
    assert any(damaged.name in n and "checksum" in n for n in reopened.notices)


def test_an_index_without_checksums_records_them_once(built: Project) -> None:
    """An index written before checksums: its files are taken as they are (trust on first
    use), recorded by the next search, and checked from then on."""
    index = built.vault.index_dir
    table = index / checksums.SUMS
    recorded = table.read_bytes()
    table.unlink()
    clean = scores(built)
    reopened = fresh(built)
    assert scores(reopened) == clean and not [n for n in reopened.notices if "checksum" in n]
    assert table.read_bytes() == recorded  # every segment file, as a commit records it
    damaged = biggest(index, "._goal_len.col")
    flip(damaged)
    after = fresh(built)
    assert scores(after) == clean
    assert any(damaged.name in n for n in after.notices)


def test_the_table_follows_merges_and_deletes(built: Project) -> None:
    index = built.vault.index_dir
    for i in range(12):  # small commits, merged by Whoosh as they pile up
        built.remember(f"webhook retry number {i}", "gotcha", title=f"webhook {i}")
        built.search("webhook")
    table = checksums.Checksums(index)._table()
    assert set(table) == {p.name for p in index.iterdir() if p.name.startswith("MAIN_")
                          and p.name != "MAIN_WRITELOCK"}
    for name, (size, digest) in table.items():
        assert checksums.digest_of(str(index / name))[1] == digest
        assert (index / name).stat().st_size == size


def test_a_fresh_cli_search_finds_damage_a_disk_made(
        built: Project, run_ocm: Callable[..., object]) -> None:
    """Bits flipped in place with the file's times kept (as a failing disk does): a new
    `ocm search` process reads every file once and finds it."""
    clean = [h.path.name for h in fresh(built).search("redis ttl")]
    damaged = biggest(built.vault.index_dir, "._content_len.col")
    flip(damaged, keep_mtime=True)
    done = run_ocm("search", "redis", "ttl", "--json")
    assert damaged.name in done.stderr and "checksum" in done.stderr  # type: ignore[attr-defined]
    assert [h.path.name for h in fresh(built).search("redis ttl")] == clean


def with_vectors(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three memories, searched with meaning on and closed: the vectors file written."""
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")
    for text in ("Our cat sleeps on the radiator", "The deploy runs on GitHub Actions",
                 "Postgres pool size is 20"):
        project.remember(text, "context", created=NOW)
    project.search("the kitten")
    project.index_for(project.vault).close()  # writes the rows


def vector_rows(index_dir: Path) -> dict[str, list[float]]:
    """The rows a new process takes from the vectors file ({} when it refuses the file)."""
    from ocm.indexer.vectors import VectorStore

    store = VectorStore(index_dir)
    store._load()
    return {store.path(i): store.matrix[i].tolist() for i in range(store.count)}


def test_damaged_vectors_are_embedded_again(project: Project,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The vectors file's rows are mapped, so zipfile never checked them: a flipped bit
    changed similarities. Each member is checked against the zip's own CRC-32."""
    from ocm.indexer.vectors import VECTORS

    with_vectors(project, monkeypatch)
    stored = project.vault.index_dir / VECTORS

    def rows() -> dict[str, list[float]]:
        return vector_rows(project.vault.index_dir)

    clean = rows()
    assert len(clean) == 3
    data = bytearray(stored.read_bytes())
    at = data.index(b"rows.npy") + 200  # inside the note rows' data
    data[at] ^= 0x40
    stored.write_bytes(bytes(data))
    assert rows() == {}  # refused: nothing read from it
    reopened = fresh(project)
    assert reopened.search("the kitten")[0].title == "Our cat sleeps on the radiator"
    reopened.index_for(reopened.vault).close()
    assert rows() == clean and stored.read_bytes() != bytes(data)


def test_vectors_damaged_in_place_with_their_mtime_kept_are_never_read(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bits rotting in the vectors file under an unchanged inode, mtime and size (a failing
    disk): the next process hashes the file whole and refuses it. A file as it was written
    is taken on that digest alone, without reading each member's CRC-32."""
    from ocm.indexer import vectors

    with_vectors(project, monkeypatch)
    crc_reads: list[str] = []
    real_check = vectors._check_crcs

    def counted(stored):  # noqa: ANN001, ANN202 - the real check, counted
        crc_reads.append("crc")
        return real_check(stored)

    monkeypatch.setattr(vectors, "_check_crcs", counted)
    clean = vector_rows(project.vault.index_dir)
    assert len(clean) == 3 and crc_reads == []  # the digest recorded at the write vouched
    stored = project.vault.index_dir / vectors.VECTORS
    before = stored.stat()
    data = bytearray(stored.read_bytes())
    data[data.index(b"rows.npy") + 200] ^= 0x40  # inside the note rows' data
    stored.write_bytes(bytes(data))
    os.utime(stored, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = stored.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        before.st_ino, before.st_mtime_ns, before.st_size)
    assert vector_rows(project.vault.index_dir) == {}  # refused: nothing read from it
    assert crc_reads == ["crc"]


def test_every_process_reads_every_file_once(built: Project,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process reads every segment file in full once, whatever its (inode, mtime):
    a long-lived one (the MCP server) does not read them again for each search, only a
    file whose (inode, mtime, size) changed."""
    index = built.vault.index_dir
    clean = scores(fresh(built))
    read: list[str] = []
    real_digest = checksums.digest_of

    def counting(path: str):  # noqa: ANN202 - the real function, counted
        read.append(os.path.basename(path))
        return real_digest(path)

    monkeypatch.setattr(checksums, "digest_of", counting)
    reopened = fresh(built)
    assert scores(reopened) == clean
    listed = set(checksums.Checksums(index)._table())
    assert len(listed) > 10 and set(read) == listed and len(read) == len(listed)
    read.clear()
    assert scores(reopened) == clean and read == []  # the same process: a stat per file
    moved = biggest(index, ".trm")
    copy = moved.with_suffix(".copy")
    copy.write_bytes(moved.read_bytes())
    copy.replace(moved)  # the same bytes under a new inode and mtime
    assert scores(reopened) == clean and read == [moved.name]


def test_a_large_file_damaged_in_place_with_its_mtime_kept_is_never_read(
        project: Project, keyword_only: None, run_ocm: Callable[..., object]) -> None:
    """Bits flipped in every block of each segment file over 1 MiB (those are checked a
    block at a time as they are read; the saved postings apart: tests/test_blocksums.py),
    mtimes put back (disk rot, or a tool that restores times): the next `ocm search`
    process finds the damage in what it reads and rebuilds, and no answer comes from a
    damaged file."""
    rng = random.Random(11)
    filler = [f"w{n:05d}x" for n in range(20000)]  # many distinct words: large terms/postings
    for i in range(120):
        project.remember(" ".join(rng.choice(filler) for _ in range(900))
                         + f" needle{i % 7}", "context", title=f"bulk {i}",
                         created=NOW - timedelta(days=i))
    project.rebuild_index()
    index = project.vault.index_dir
    clean = [h.path.name for h in fresh(project).search("needle3")]
    assert len(clean) > 5
    large = [p for p in index.iterdir() if p.name.startswith("MAIN_")
             and p.stat().st_size > (1 << 20)]
    assert large, sorted((p.name, p.stat().st_size) for p in index.iterdir())
    blocked = json.loads((index / checksums.BLOCKS).read_bytes())["files"]
    assert {p.name for p in large} == set(blocked)
    damaged = [p for p in large if not p.name.endswith(".ocmpost")]
    for path in damaged:
        flip_blocks(path)
    done = run_ocm("search", "needle3", "--json")
    said = done.stderr  # type: ignore[attr-defined]
    assert "rebuilt" in said and any(p.name in said for p in damaged), said
    answered = [Path(h["markdown_path"]).name
                for h in json.loads(done.stdout)]  # type: ignore[attr-defined]
    assert answered == clean  # the answer of the rebuilt index, not of a damaged file
    assert not any(p.exists() for p in damaged)  # the rebuilt index holds new segments
    assert [h.path.name for h in fresh(project).search("needle3")] == clean


def counted_digests(monkeypatch: pytest.MonkeyPatch,
                    gate: threading.Event | None = None) -> list[tuple[str, str]]:
    """(file name, thread name) of each file read whole from now on; with `gate`, the
    check started ahead waits for it before each read."""
    read: list[tuple[str, str]] = []
    real_digest = checksums.digest_of

    def counting(source):  # noqa: ANN001, ANN202 - the real function, counted
        thread = threading.current_thread().name
        if gate is not None and thread == "ocm-checksums":
            gate.wait()
        read.append((os.path.basename(source) if isinstance(source, str) else "(open)",
                     thread))
        return real_digest(source)

    monkeypatch.setattr(checksums, "digest_of", counting)
    return read


def test_files_checked_ahead_are_read_once_in_the_thread(
        built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot command reads the files in a thread while it imports: each one once, in
    that thread, and the search after it reads none again."""
    index = built.vault.index_dir
    clean = scores(fresh(built))
    reopened = fresh(built)
    read = counted_digests(monkeypatch)
    checksums.check_ahead(index)
    assert scores(reopened) == clean and not reopened.notices
    listed = set(checksums.Checksums(index)._table())
    assert len(listed) > 10 and sorted(read) == sorted((n, "ocm-checksums") for n in listed)


def test_the_check_waits_for_the_thread_reading_ahead(
        built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` (before any file of the index is opened) returns only once the thread has
    read every file: nothing is read before it is checked."""
    index = built.vault.index_dir
    fresh(built)
    gate = threading.Event()
    read = counted_digests(monkeypatch, gate)
    checksums.check_ahead(index)
    found: list[tuple[str | None, bool]] = []
    checking = threading.Thread(target=lambda: found.append(checksums.Checksums(index).check()))
    checking.start()
    checking.join(0.5)
    assert checking.is_alive() and found == [] and read == []  # waiting for the thread
    gate.set()
    checking.join(30)
    listed = set(checksums.Checksums(index)._table())
    assert found == [(None, False)] and {n for n, _ in read} == listed
    assert len(read) == len(listed) and {t for _, t in read} == {"ocm-checksums"}


def test_a_file_damaged_before_a_check_ahead_is_never_read(built: Project) -> None:
    """Bits flipped in place, mtime kept: the thread finds the file bad, the check that
    waits for it says so and the index is rebuilt before anything is read from it."""
    clean = clean_scores(built)
    damaged = biggest(built.vault.index_dir, "._content_len.col")
    flip(damaged, keep_mtime=True)
    reopened = fresh(built)
    checksums.check_ahead(built.vault.index_dir)
    assert scores(reopened) == clean
    assert any(damaged.name in n and "rebuilt" in n for n in reopened.notices)


def test_vectors_checked_ahead(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vectors file's digest taken ahead is the one its load uses (read once, in the
    thread); damaged in place with its mtime kept, the file is still refused."""
    from ocm.indexer import vectors

    with_vectors(project, monkeypatch)
    index = project.vault.index_dir
    clean = vector_rows(index)
    fresh(project)
    read = counted_digests(monkeypatch)
    checksums.check_ahead(index, also=(vectors.VECTORS,))
    assert vector_rows(index) == clean and len(clean) == 3
    assert [r for r in read if r[0] == vectors.VECTORS] == [(vectors.VECTORS, "ocm-checksums")]
    assert ("(open)", "MainThread") not in read  # the load did not read it again
    stored = index / vectors.VECTORS
    before = stored.stat()
    data = bytearray(stored.read_bytes())
    data[data.index(b"rows.npy") + 200] ^= 0x40
    stored.write_bytes(bytes(data))
    os.utime(stored, ns=(before.st_atime_ns, before.st_mtime_ns))
    fresh(project)
    checksums.check_ahead(index, also=(vectors.VECTORS,))
    assert vector_rows(index) == {}  # refused: nothing read from it


def test_a_search_that_finds_a_note_changed_reads_each_file_once(
        built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot search presumes the index (its check reads every file, ahead) and then,
    the listing showing a note changed, brings it up to date (its check again): the second
    check only looks at each file's (inode, mtime, size); no file is read twice."""
    from collections import Counter

    from ocm.vault.freshness import scanahead

    index = built.vault.index_dir
    scores(fresh(built))  # the listing that vouches for the index recorded
    note = next((built.vault.root / "memories").rglob("*.md"))
    note.write_text(note.read_text(encoding="utf-8") + "\nzqchanged webhook\n",
                    encoding="utf-8")
    reopened = fresh(built)
    listed = set(checksums.Checksums(index)._table())
    read = counted_digests(monkeypatch)
    checks: list[str] = []
    real_check = checksums.Checksums.check

    def check(self: checksums.Checksums, watch: bool = False) -> tuple[str | None, bool]:
        checks.append("check")
        return real_check(self, watch)

    monkeypatch.setattr(checksums.Checksums, "check", check)
    root = str(reopened.vault.root)
    scanahead.start(root)  # as `ocm search` does
    checksums.check_ahead(index)
    try:
        found = reopened.search("zqchanged")
    finally:
        scanahead.discard(root)
    assert [h.path.name for h in found] == [note.name]
    assert checks == ["check", "check"]  # presumed, then brought up to date
    counts = Counter(name for name, _ in read)
    assert listed <= set(counts) and set(counts.values()) == {1}, counts
    assert {name for name, thread in read if thread == "ocm-checksums"} == listed


def counted_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many checks of the index folder stat its files (`unwaited_check` calls)."""
    done: list[int] = []
    real = checksums.Checksums.unwaited_check

    def counting(self: checksums.Checksums) -> tuple[str | None, bool]:
        done.append(1)
        return real(self)

    monkeypatch.setattr(checksums.Checksums, "unwaited_check", counting)
    return done


def test_a_warm_process_checks_the_files_again_only_after_one_changed(
        built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived process (the MCP server) watches the index folder from its third check
    on: a search with nothing changed there stats no file; a file rewritten in place with
    its size and mtime kept (which the (inode, mtime, size) check cannot see) is read again
    and found, and another process's commit is checked and searched."""
    clean = clean_scores(built)
    reopened = fresh(built)
    assert scores(reopened) == clean  # five searches: the watch is up
    stats = counted_checks(monkeypatch)
    assert scores(reopened) == clean and stats == []
    damaged = biggest(built.vault.index_dir, "._content_len.col")
    before = damaged.stat()
    flip(damaged, keep_mtime=True)
    assert damaged.stat()[6:9] == before[6:9] and damaged.stat().st_ino == before.st_ino
    assert scores(reopened) == clean and stats
    said = [n for n in reopened.notices if "checksum" in n]
    assert len(said) == 1 and damaged.name in said[0], reopened.notices
    stats.clear()
    assert scores(reopened) == clean
    other = fresh(built)  # another process commits a note
    other.remember("redis ttl eviction storms", "gotcha", title="zq other redis", created=NOW)
    other.search("redis")
    stats.clear()
    found = [h.title for h in reopened.search(SearchRequest(query="storms", now=NOW))]
    assert found == ["zq other redis"] and stats == [1]


@pytest.mark.skipif(checksums.IndexWatch.start(".") is None, reason="no inotify here")
def test_a_watch_whose_folder_was_replaced_while_held_open_says_check_everything(
        tmp_path: Path) -> None:
    """A rebuild removes the index folder and makes it anew (`NoteIndex._create`). While
    the old folder is still held open the kernel sends no DELETE_SELF, and the watch
    would report nothing more while files change in the new folder: it must say that only
    a check of every file can tell (None)."""
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / "MAIN_a.trm").write_bytes(b"x")
    watch = checksums.IndexWatch.start(folder)
    assert watch is not None and watch.changed() == set()
    held = os.open(folder, os.O_RDONLY)
    try:
        for name in os.listdir(folder):
            os.unlink(folder / name)
        os.rmdir(folder)
        folder.mkdir()
        (folder / "MAIN_b.trm").write_bytes(b"y")
        assert watch.changed() is None
    finally:
        os.close(held)
        watch.close()


def test_without_inotify_every_check_stats_the_files(
        built: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.indexer.indexwatch import IndexWatch

    monkeypatch.setattr(IndexWatch, "start", classmethod(lambda cls, folder: None))
    clean = clean_scores(built)
    reopened = fresh(built)
    assert scores(reopened) == clean
    stats = counted_checks(monkeypatch)
    assert scores(reopened) == clean and len(stats) == len(QUERIES)
    damaged = biggest(built.vault.index_dir, "._content_len.col")
    flip(damaged)  # a new mtime: seen by the stat
    assert scores(reopened) == clean
    assert any(damaged.name in n and "checksum" in n for n in reopened.notices)


@pytest.mark.parametrize("size", [0, 1, 4097, checksums.BLOCKED_MIN - 1, checksums.BLOCKED_MIN,
                                  checksums.BLOCKED_MIN + 12345])
def test_a_file_digest_is_its_bytes_whatever_the_way_it_is_read(
        tmp_path: Path, size: int) -> None:
    """Small files are read (one `pread`), larger ones mapped: either way the digest is the
    XXH3-64 of the file's bytes, from an open handle at any position too."""
    import xxhash

    path = tmp_path / "file"
    data = random.Random(size).randbytes(size)
    path.write_bytes(data)
    key, digest = checksums.digest_of(str(path))
    assert digest == xxhash.xxh3_64_intdigest(data)
    st = path.stat()
    assert key == (st.st_ino, st.st_mtime_ns, size)
    with open(path, "rb") as handle:
        handle.seek(size // 2)
        assert checksums.digest_of(handle) == (key, digest)

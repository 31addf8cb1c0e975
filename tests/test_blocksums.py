"""Large index files checked a block at a time as they are read (ocm/indexer/checksums.py).

A fresh process no longer reads every segment file in full before a search: a file with
block digests (BLOCKS, beside the table) has each block checked on its first read, through
Whoosh's file wrapper or the saved postings' ranges. Damage in a block a search reads is
found as it reads it, named, and the index rebuilt (the saved postings: that file removed)
before any answer; damage in a block no search reads is never read. Blocks are made small
here (`BLOCK`, `BLOCKED_MIN` lowered) so that the test index's files span many of them;
tests/test_checksums.py covers the real sizes through a real `ocm search` process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ocm.indexer import checksums, columnreads
from ocm.project import Project
from tests.test_checksums import (
    biggest,
    built,  # noqa: F401 - the fixture, used by name
    clean_scores,
    counted_digests,
    flip,
    flip_blocks,
    fresh,
    scores,
)

BLOCK, BLOCKED_MIN = 512, 2048


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checksums, "BLOCK", BLOCK)
    monkeypatch.setattr(checksums, "BLOCKED_MIN", BLOCKED_MIN)


@pytest.fixture
def blocked(built: Project) -> Project:  # noqa: F811 - the fixture above
    """The built index, its large files' block digests recorded (a fresh check finds the
    files it has none for and records them)."""
    fresh(built).search("redis")
    return built


def table(index: Path) -> dict[str, list]:
    return json.loads((index / checksums.BLOCKS).read_bytes())["files"]


def large_files(index: Path) -> set[str]:
    return {p.name for p in index.iterdir() if p.name.startswith("MAIN_")
            and p.stat().st_size >= BLOCKED_MIN}


def blocks_read() -> dict[str, tuple[int, int]]:
    """{file name: (blocks checked, blocks)} of this process's block checks."""
    return {b.name: (sum(b._ok), len(b._ok)) for b in checksums._BLOCKED.values()}


def test_large_files_get_block_digests_beside_an_unchanged_table(blocked: Project) -> None:
    index = blocked.vault.index_dir
    found = table(index)
    sums = json.loads((index / checksums.SUMS).read_bytes())
    assert set(found) == large_files(index) and len(found) >= 4
    for name, (size, whole, digests) in found.items():
        assert [size, whole] == sums[name]  # the table still holds [size, xxh3] only
        data = (index / name).read_bytes()
        assert size == len(data) and len(digests) == 16 * -(-size // BLOCK)
        first = checksums.xxhash.xxh3_64_intdigest(data[:BLOCK])
        assert digests[:16] == first.to_bytes(8, "little").hex()
    assert all(len(v) == 2 for v in sums.values())  # what code before blocks reads


def test_a_fresh_search_reads_only_the_blocks_it_uses(
        blocked: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    index = blocked.vault.index_dir
    clean = scores(fresh(blocked))
    checksums._BLOCKED.clear()
    read = counted_digests(monkeypatch)
    reopened = fresh(blocked)
    assert scores(reopened) == clean and not reopened.notices
    large = large_files(index)
    assert not large & {name for name, _ in read}  # none of the large files read whole
    counts = blocks_read()
    assert set(counts) == large
    assert 0 < sum(done for done, _ in counts.values()) < sum(n for _, n in counts.values())


def test_columns_read_with_pread_check_their_blocks(
        blocked: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored fields and chunks of a file with block digests are still read with one
    `pread` a value (columnreads.py), each value's blocks checked first."""
    checked: list[bool] = []
    read = columnreads.PreadColumn.__call__

    def spy(self: columnreads.PreadColumn, doc: int) -> object:
        checked.append(self._blocks is not None)
        return read(self, doc)

    monkeypatch.setattr(columnreads.PreadColumn, "__call__", spy)
    clean = clean_scores(blocked)
    checked.clear()
    assert scores(fresh(blocked)) == clean
    assert True in checked


# The large files a search reads (Whoosh's postings, `.pst`, are not: the saved ones are).
@pytest.mark.parametrize("kind", [".ocmpost", ".trm", "._stored.col", ".chunks.col"])
def test_a_damaged_block_that_is_read_is_found_before_it_is_used(
        blocked: Project, kind: str) -> None:
    """Every block of the file damaged, its mtime kept: the search reads some of it, finds
    the damage, names the file and rebuilds (saved postings: removes them only), and
    answers as a clean index does."""
    index = blocked.vault.index_dir
    clean = clean_scores(blocked)
    damaged = biggest(index, kind)
    assert damaged.name in table(index)
    flip_blocks(damaged, BLOCK)
    reopened = fresh(blocked)
    assert scores(reopened) == clean
    said = [n for n in reopened.notices if "checksum" in n]
    assert len(said) == 1 and damaged.name in said[0], reopened.notices
    if kind == ".ocmpost":
        assert "removed it" in said[0] and not damaged.exists()
    else:
        assert "rebuilt the index" in said[0] and not damaged.exists()
    again = fresh(blocked)
    assert scores(again) == clean and not [n for n in again.notices if "checksum" in n]


def test_a_damaged_block_no_search_reads_is_never_read(blocked: Project) -> None:
    """A block the searches do not read, damaged in place (mtime kept): the answers are
    those of the clean index and nothing is rebuilt; reading that block fails."""
    index = blocked.vault.index_dir
    clean = scores(fresh(blocked))
    checksums._BLOCKED.clear()
    scores(fresh(blocked))
    unread = [(b.path, at) for b in checksums._BLOCKED.values()
              for at, ok in enumerate(b._ok) if not ok]
    assert unread
    path, at = unread[0]
    before = os.stat(path)
    with open(path, "r+b") as handle:
        handle.seek(at * BLOCK + BLOCK // 2)
        byte = handle.read(1)
        handle.seek(at * BLOCK + BLOCK // 2)
        handle.write(bytes([byte[0] ^ 0x5A]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    checksums._BLOCKED.clear()
    reopened = fresh(blocked)
    assert scores(reopened) == clean and not reopened.notices
    assert Path(path).exists()
    handle = checksums.opened(path)
    try:
        with pytest.raises(checksums.ChecksumError, match=os.path.basename(path)):
            handle.read()
    finally:
        handle.close()
    assert checksums.Checksums(index).check()[0] == os.path.basename(path)  # named next


def test_an_index_without_block_digests_is_checked_whole_then_recorded(
        blocked: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index written before block digests (or by that code since): its files are read
    whole, as before, and the block digests recorded; the next process reads blocks."""
    index = blocked.vault.index_dir
    recorded = (index / checksums.BLOCKS).read_bytes()
    (index / checksums.BLOCKS).unlink()
    clean = scores(fresh(blocked))
    assert (index / checksums.BLOCKS).read_bytes() == recorded
    (index / checksums.BLOCKS).unlink()
    read = counted_digests(monkeypatch)
    checksums._BLOCKED.clear()
    reopened = fresh(blocked)
    assert scores(reopened) == clean and not reopened.notices
    assert large_files(index) <= {name for name, _ in read} and not blocks_read()
    read.clear()
    assert scores(fresh(blocked)) == clean
    assert not large_files(index) & {name for name, _ in read}


def test_a_large_file_damaged_before_its_blocks_are_recorded_gets_none(
        blocked: Project) -> None:
    """No block digests yet and the file damaged: the whole check finds it and no block
    digests ever vouch for the damaged bytes."""
    index = blocked.vault.index_dir
    clean = clean_scores(blocked)
    (index / checksums.BLOCKS).unlink()
    damaged = biggest(index, ".trm")
    assert damaged.stat().st_size >= BLOCKED_MIN
    flip(damaged, keep_mtime=True)
    sums = checksums.Checksums(index)
    sums.record()
    assert damaged.name not in table(index)
    reopened = fresh(blocked)
    assert scores(reopened) == clean
    assert any(damaged.name in n and "rebuilt" in n for n in reopened.notices)


@pytest.mark.parametrize("spoil", ["garbage", "other block size", "other whole digest",
                                   "cut digests", "not hex"])
def test_block_digests_that_do_not_fit_are_not_used(
        blocked: Project, monkeypatch: pytest.MonkeyPatch, spoil: str) -> None:
    """A blocks file that cannot be read, of another block size, or an entry that is not
    that file's (another whole digest: the file was rewritten by code that keeps no block
    digests) or does not hold together: the file is checked whole, and answers stay
    right."""
    index = blocked.vault.index_dir
    clean = scores(fresh(blocked))
    path = index / checksums.BLOCKS
    data = json.loads(path.read_bytes())
    name = biggest(index, ".trm").name
    entry = data["files"][name]
    if spoil == "garbage":
        path.write_bytes(b"{not json")
    elif spoil == "other block size":
        data["block"] = BLOCK * 2
    elif spoil == "other whole digest":
        entry[1] ^= 1
    elif spoil == "cut digests":
        entry[2] = entry[2][:-16]
    else:
        entry[2] = "zz" + entry[2][2:]
    if spoil != "garbage":
        path.write_text(json.dumps(data))
    read = counted_digests(monkeypatch)
    checksums._BLOCKED.clear()
    reopened = fresh(blocked)
    assert scores(reopened) == clean and not reopened.notices
    assert name in {n for n, _ in read} and name not in blocks_read()


def test_a_file_replaced_by_the_same_bytes_is_checked_again(blocked: Project) -> None:
    """A long-lived process: a file replaced under it (new inode and mtime, same bytes)
    gets its blocks checked again, and searches stay right."""
    index = blocked.vault.index_dir
    clean = scores(fresh(blocked))
    reopened = fresh(blocked)
    assert scores(reopened) == clean
    moved = biggest(index, ".trm")
    copy = moved.with_suffix(".copy")
    copy.write_bytes(moved.read_bytes())
    copy.replace(moved)
    reopened.index_for(reopened.vault).close()  # its files opened again, as after a merge
    assert scores(reopened) == clean and not reopened.notices
    blocks = checksums._BLOCKED[os.path.join(index, moved.name)]
    assert blocks.key[0] == moved.stat().st_ino and sum(blocks._ok) > 0


def test_damage_found_after_the_candidates_checks_and_searches_again(
        blocked: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A block found bad by a read after the candidates (what a returned hit reads): the
    index is checked again, which names the file and rebuilds it, and the search runs
    again: the answer is the clean index's."""
    from ocm.indexer import searcher

    index = blocked.vault.index_dir
    clean = clean_scores(blocked)
    damaged = biggest(index, ".trm")
    real = searcher.mark_stale
    raised: list[str] = []

    def stale_then_damage(hits, vaults):  # noqa: ANN001, ANN202 - the real one, then a bad block
        if not raised:
            path = os.path.join(index, damaged.name)
            checksums._BAD[path] = checksums._BLOCKED[path].key  # as `Blocks.ensure` marks it
            raised.append(damaged.name)
            raise checksums.ChecksumError(damaged.name)
        return real(hits, vaults)

    reopened = fresh(blocked)
    monkeypatch.setattr(searcher, "mark_stale", stale_then_damage)
    assert scores(reopened) == clean and raised == [damaged.name]
    said = [n for n in reopened.notices if "checksum" in n]
    assert len(said) == 1 and damaged.name in said[0] and "rebuilt" in said[0]
    assert not damaged.exists()

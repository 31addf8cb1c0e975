"""Checksums of the index's segment files, checked before they are read (issue #31).

A flipped bit in a file Whoosh reads without a check of its own (a field's lengths,
`*_len.col`; the saved postings, `*.ocmpost`; terms, postings, stored fields) changed scores
with no error. Segment files never change once written (their names carry the segment's
random id), so each one's XXH3-64 is recorded once, after the commit that wrote it
(`Manifest.save`, under the index lock), in `checksums.json` beside the manifest:
{file name: [size, xxh3_64]}. It is meant for accidental damage (a failing disk, a stray
write, a tool that restores the mtime afterwards), not an attacker, who could rewrite the
table as well.

`check` reads every listed file that is on disk in full, mapped, once per process: a file
damaged before a process first checked it is never read by that process, whatever its
mtime says. A file of BLOCKED_MIN bytes or more whose block digests are recorded (BLOCKS)
is not read by `check`: each of its 64 KiB blocks is checked on its first read in the
process (Whoosh reads it through `CheckedFile`, the saved postings check each range before
they use it), so the check costs what a search reads (a fresh search at 100k notes read
~46 MB of the ~850 MB it used to hash). A damaged block raises `ChecksumError`; the search
(ocm/indexer/searcher.py) then checks the index again, which names the file (`_BAD`) and
rebuilds or, for saved postings, removes it, and searches again: damaged bytes are still
never used, only damage in blocks no search reads is no longer found by every process.
A long-lived process (the MCP server, `ocm ui`) then checks a file again only
when its (inode, mtime, size) changed: bits that rot in place under an unchanged mtime after
it checked are found by the next process that starts. XXH3 over the mapped file costs ~33 ms
of CPU per 110 MB (10k notes; zlib's CRC-32 over the same map ~79 ms, read in chunks ~85 ms):
see bench/README.md. A one-shot command reads them in a thread while it is still importing
(`check_ahead`: xxhash lets go of the GIL while it hashes a buffer), and `check` waits for
that thread before it looks at any file: every file checked whole is read in full before
the process reads any of it, only no longer on the command's critical path.
A file missing from the table (an index written before checksums, or a commit killed before
its manifest) is unknown, not damaged: `record` adds it, as it is, the next time the index
lock is free (trust on first use: a rebuild of 100k notes to vouch for an index that was
served unchecked until then would cost minutes on the first search). A table in an older
form (CRC-32 entries) is read as no table.
"""

from __future__ import annotations

import contextlib
import io
import json
import mmap
import os
import re
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import xxhash

from ocm.vault.paths import INDEX_MANIFEST

from .indexwatch import IndexWatch

SUMS = "checksums.json"
# The block digests of the larger segment files, beside the table (`record` writes both):
# {"block": BLOCK, "files": {name: [size, xxh3_64 of the whole file, the XXH3-64 of each
# BLOCK bytes, little-endian, in hex]}}. A file of its own, so that code before it (which
# reads only SUMS, entries of two numbers) still reads and writes the same table.
BLOCKS = "blocksums.json"
BLOCK = 1 << 16
# Segment files from this size on are checked a block at a time as they are read; smaller
# ones whole, as before (at 100k notes ~90 % of the bytes are in files over 1 MiB).
BLOCKED_MIN = 1 << 20
# The index's manifest (ocm/indexer/manifest.py) and vectors (ocm/indexer/vectors.py), named
# here for a search to start reading them ahead before it imports either (`check_ahead`).
MANIFEST = INDEX_MANIFEST
VECTORS = "vectors.npz"
# Whoosh's segment files: MAIN_<segment id>.<ext> or MAIN_<segment id>.<field>_len.col.
_SEGMENT_FILE = re.compile(r"^MAIN_[0-9a-z]+\.")
# Files found whole in this process: path -> (inode, mtime_ns, size, digest).
_VERIFIED: dict[str, tuple[int, int, int, int]] = {}


class ChecksumError(Exception):
    """A block of an index file that failed its checksum as it was about to be read: the
    search that read it checks the index again (`Checksums.check` then names the file)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"search index file {name} failed its checksum")
        self.name = name


class Blocks:
    """One file's block digests, each block checked on its first read in this process."""

    __slots__ = ("key", "name", "path", "whole", "_digests", "_ok")

    def __init__(self, path: str, key: tuple[int, int, int], whole: int,
                 digests: bytes) -> None:
        self.path, self.name, self.key, self.whole = path, os.path.basename(path), key, whole
        self._digests = digests
        self._ok = bytearray(len(digests) // 8)

    def ensure(self, fd: int, start: int, length: int) -> None:
        """Check the blocks that hold bytes [start, start + length) of the file open as
        `fd` (those not checked yet); ChecksumError when one fails or lies past the end."""
        if length <= 0:
            return
        ok = self._ok
        first, last = start // BLOCK, (start + length - 1) // BLOCK
        if first == last and first < len(ok) and ok[first]:  # most reads: one block, checked
            return
        for at in range(first, last + 1):
            if at < len(ok) and ok[at]:
                continue
            if at >= len(ok) or xxhash.xxh3_64_intdigest(os.pread(fd, BLOCK, at * BLOCK)) != (
                    int.from_bytes(self._digests[8 * at:8 * at + 8], "little")):
                _BAD[self.path] = self.key
                raise ChecksumError(self.name)
            ok[at] = 1

    def checked(self, start: int, stop: int) -> bool:
        """Whether the blocks that hold bytes [start, stop) were all found sound in this
        process (a file found rewritten in place has them all checked again)."""
        ok, first, last = self._ok, start // BLOCK, (stop - 1) // BLOCK + 1
        return last <= len(ok) and ok.find(0, first, last) < 0


# Files whose blocks are checked as they are read, registered by `check`: path -> Blocks.
_BLOCKED: dict[str, Blocks] = {}
# Files a block read found damaged: path -> (inode, mtime_ns, size); `check` names them.
_BAD: dict[str, tuple[int, int, int]] = {}
# Checks of a folder before its watch starts (`Checksums.check(watch=True)`): a one-shot
# command checks once or twice and never pays for one.
WATCH_AFTER_CHECKS = 2


def _unverify(path: str) -> None:
    """Forget that the file at `path` was found sound in this process: its next check
    reads it whole again, and each of its blocks is checked again on its next read
    (through files already open too)."""
    _VERIFIED.pop(path, None)
    blocks = _BLOCKED.get(path)
    if blocks is not None:
        blocks._ok[:] = bytes(len(blocks._ok))


def blocks_of(path: str, handle: BinaryIO) -> Blocks | None:
    """The block check of the index file at `path`, open as `handle`, when `check` left its
    blocks to be checked as they are read (None: checked whole, or not an index file). A
    file replaced since (a new inode or mtime) is checked against the same digests."""
    blocks = _BLOCKED.get(path)
    if blocks is None:
        return None
    st = os.fstat(handle.fileno())
    key = (st.st_ino, st.st_mtime_ns, st.st_size)
    if key != blocks.key:
        blocks = _BLOCKED[path] = Blocks(path, key, blocks.whole, blocks._digests)
    return blocks


class CheckedFile:
    """An index file open for reading whose bytes are checked block by block as they are
    read (what Whoosh's `StructFile` reads through, ocm/indexer/index.py). No `fileno`:
    Whoosh then reads arrays through `read` too."""

    def __init__(self, raw: io.BufferedReader, blocks: Blocks) -> None:
        self._raw, self._blocks, self._fd = raw, blocks, raw.fileno()
        self.seek, self.tell, self.close = raw.seek, raw.tell, raw.close

    def checked_fd(self) -> tuple[int, Blocks]:
        """The file's descriptor and its block check, for a reader that reads it with
        `os.pread` and calls `Blocks.ensure` on each range first (ocm/indexer/columnreads.py)."""
        return self._fd, self._blocks

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def read(self, size: int = -1) -> bytes:
        at = self._raw.tell()
        data = self._raw.read(size)
        self._blocks.ensure(self._fd, at, len(data))
        return data

    def readline(self, size: int = -1) -> bytes:
        at = self._raw.tell()
        data = self._raw.readline(size)
        self._blocks.ensure(self._fd, at, len(data))
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:
        at = self._raw.tell()
        done = self._raw.readinto(buffer)
        self._blocks.ensure(self._fd, at, done or 0)
        return done


def opened(path: str) -> io.BufferedReader | CheckedFile:
    """The index file at `path` open for reading: through its block check when `check`
    left one (`CheckedFile`), else as a plain file."""
    raw = open(path, "rb")  # noqa: SIM115 - the caller closes it
    try:
        blocks = blocks_of(path, raw)
    except OSError:
        raw.close()
        raise
    return raw if blocks is None else CheckedFile(raw, blocks)


class _Ahead:
    """A check of one index folder's files running in a thread (`check_ahead`)."""

    def __init__(self, folder: Path, also: tuple[str, ...]) -> None:
        self.segments_done = threading.Event()
        # Other files of the folder (the vectors file), digested after the segment files:
        # name -> ((inode, mtime_ns, size) as opened, XXH3-64).
        self.digests: dict[str, tuple[tuple[int, int, int], int]] = {}
        self.thread = threading.Thread(target=self._run, args=(folder, also),
                                       name="ocm-checksums", daemon=True)

    def _run(self, folder: Path, also: tuple[str, ...]) -> None:
        try:
            # Fills _VERIFIED; a file that fails stops it, and the check that waits for
            # this one reads that file again and says so.
            Checksums(folder).unwaited_check()
        except Exception:  # noqa: BLE001, S110 - the check that waits does it all again
            pass
        finally:
            self.segments_done.set()
        for name in also:
            with contextlib.suppress(OSError, ValueError):
                self.digests[name] = digest_of(os.path.join(folder, name))


# Checks started ahead, by index folder.
_AHEAD: dict[str, _Ahead] = {}


def check_ahead(folder: Path, also: tuple[str, ...] = ()) -> None:
    """Start reading the segment files of `folder` in full (then the files named `also`)
    in a thread, for the `check` and `digest_taken` of this process to wait for. Once per
    folder and process."""
    if os.fspath(folder) in _AHEAD:
        return
    ahead = _AHEAD[os.fspath(folder)] = _Ahead(folder, also)
    ahead.thread.start()


def digest_taken(folder: Path, name: str,
                 handle: BinaryIO) -> tuple[tuple[int, int, int], int]:
    """`digest_of(handle)` for the file `name` of `folder`, open as `handle`: the digest a
    check started ahead took of it when that was this very file as it is now (inode,
    mtime, size), once; otherwise read now."""
    ahead = _AHEAD.get(os.fspath(folder))
    if ahead is not None:
        ahead.thread.join()
        taken = ahead.digests.pop(name, None)
        st = os.fstat(handle.fileno())
        if taken is not None and taken[0] == (st.st_ino, st.st_mtime_ns, st.st_size):
            return taken
    return digest_of(handle)


def digest_of(source: str | BinaryIO) -> tuple[tuple[int, int, int], int]:
    """((inode, mtime_ns, size) as opened, XXH3-64) of the whole file at a path, or of an
    open file (read through a mapping of its descriptor, whatever its position)."""
    if isinstance(source, str):
        with open(source, "rb") as handle:
            return _digest(handle)
    return _digest(source)


def _digest(handle: BinaryIO) -> tuple[tuple[int, int, int], int]:
    st = os.fstat(handle.fileno())
    if st.st_size < BLOCKED_MIN and hasattr(os, "pread"):
        # One read: a mapping (mmap, a page fault, munmap) cost about twice as much for
        # the ~120 small segment files a fresh search at 100k notes checks whole.
        digest = xxhash.xxh3_64_intdigest(os.pread(handle.fileno(), st.st_size, 0))
    else:
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            digest = xxhash.xxh3_64_intdigest(mapped)
    return (st.st_ino, st.st_mtime_ns, st.st_size), digest


def block_digests(path: str) -> tuple[tuple[int, int, int], int, bytes]:
    """((inode, mtime_ns, size) as opened, XXH3-64 of the whole file, the XXH3-64 of each
    BLOCK bytes as 8 bytes little-endian) of the file at `path`, read once."""
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        whole = xxhash.xxh3_64()
        each: list[int] = []
        if st.st_size:
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    for at in range(0, st.st_size, BLOCK):
                        with view[at:at + BLOCK] as block:
                            whole.update(block)
                            each.append(xxhash.xxh3_64_intdigest(block))
                finally:
                    view.release()
    return ((st.st_ino, st.st_mtime_ns, st.st_size), whole.intdigest(),
            struct.pack(f"<{len(each)}Q", *each))


def _as_table(found: Any) -> dict[str, list[int]]:
    if not isinstance(found, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(isinstance(n, int) for n in v)
            for v in found.values()):
        return {}
    return found


def _as_blocks(found: Any) -> dict[str, list]:
    files = found.get("files") if isinstance(found, dict) and found.get(
        "block") == BLOCK else None
    return files if isinstance(files, dict) else {}


def _hex(text: str | None) -> bool:
    try:
        return text is not None and bytes.fromhex(text) is not None
    except ValueError:
        return False


def _write_json(path: Path, data: dict) -> None:
    from ocm.vault.atomic import atomic_write_bytes

    with contextlib.suppress(OSError):  # a read-only index goes without
        atomic_write_bytes(path, json.dumps(data, separators=(",", ":"),
                                            sort_keys=True).encode(), durable=False)


class Checksums:
    """The segment files' checksums of one index folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._path = folder / SUMS
        self._loaded: tuple[tuple[int, int, int], dict[str, list[int]]] | None = None
        self._blocks_loaded: tuple[tuple[int, int, int], dict[str, list]] | None = None
        # A long-lived process's watch on the folder (`check(watch=True)`), started at its
        # WATCH_AFTER_CHECKS-th check; whether the last check found nothing to name or record.
        self._watch: IndexWatch | None = None
        self._checks = 0
        self._clean = False

    def _table(self) -> dict[str, list[int]]:
        """{name: [size, xxh3_64]}, parsed again only when the file changed; {} when
        missing, unreadable or in an older form (every file then unknown)."""
        return self._cached(self._path, "_loaded", _as_table)

    def _blocks(self) -> dict[str, list]:
        """{name: [size, xxh3_64, hex of the block digests]} (BLOCKS), parsed again only when
        the file changed; {} when missing, unreadable or of another block size (every file
        is then checked whole, as before block digests)."""
        return self._cached(self.folder / BLOCKS, "_blocks_loaded", _as_blocks)

    def _cached(self, path: Path, slot: str, shape: Callable[[Any], dict]) -> dict:
        """`shape` of the JSON at `path` (None when unreadable), kept in attribute `slot`
        with the file's (inode, mtime, size) and parsed again only when those change; {}
        when the file is missing."""
        try:
            st = os.stat(path)
        except OSError:
            return {}
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        loaded = getattr(self, slot)
        if loaded is not None and loaded[0] == key:
            return loaded[1]
        try:
            found = json.loads(path.read_bytes())
        except (OSError, ValueError):
            found = None
        value = shape(found)
        setattr(self, slot, (key, value))
        return value

    @staticmethod
    def _digests(blocks: dict[str, list], name: str, wanted: list[int]) -> str | None:
        """The block digests (hex) of the file `name` whose table entry is `wanted` ([size,
        xxh3_64]): None unless `blocks` (`_blocks()`) holds them for that very file (an
        index written by code before block digests, or a file rewritten since, has none)."""
        entry = blocks.get(name)
        if (isinstance(entry, list) and len(entry) == 3 and entry[:2] == wanted
                and isinstance(entry[2], str)
                and len(entry[2]) == 16 * -(-wanted[0] // BLOCK)):
            return entry[2]
        return None

    def _segment_files(self) -> list[str]:
        try:
            return [n for n in os.listdir(self.folder) if _SEGMENT_FILE.match(n)]
        except OSError:
            return []

    def check(self, watch: bool = False) -> tuple[str | None, bool]:
        """(the name of a file that fails its checksum or None, whether `record` has
        something to add: a segment file with no checksum, or a large one with no block
        digests). Waits for a check of this folder started ahead, whose digests it then
        takes. A file with block digests is not read here: its blocks are checked as they
        are read (`opened`, `blocks_of`), and a block found bad is named by the next
        check. `watch` (a process that checks again and again): from the
        WATCH_AFTER_CHECKS-th check on, the folder is watched (ocm/indexer/indexwatch.py)
        and a check after one that found nothing, with no file of the check's changed
        since and no block found bad, answers at once; a file the kernel says was written
        is checked again even when its (inode, mtime, size) are those checked."""
        ahead = _AHEAD.get(os.fspath(self.folder))
        if ahead is not None:
            ahead.segments_done.wait()
        if not watch:
            return self.unwaited_check()
        if self._watch is not None:
            changed = self._watch.changed()
            if changed is None:
                self._watch.close()
                self._watch, self._clean = None, False
            else:
                changed = {n for n in changed if n in (SUMS, BLOCKS) or _SEGMENT_FILE.match(n)}
                for name in changed:
                    _unverify(os.path.join(self.folder, name))
                if not changed and self._clean and not _BAD:
                    return None, False
        elif self._checks >= WATCH_AFTER_CHECKS:
            # Watched before the check below: nothing changed after it goes unseen.
            self._watch = IndexWatch.start(self.folder)
        self._checks += 1
        found = self.unwaited_check()
        self._clean = found == (None, False)
        return found

    def unwaited_check(self) -> tuple[str | None, bool]:
        """`check`, without waiting for a check started ahead (that one's own)."""
        table, blocks = self._table(), self._blocks()
        folder = os.fspath(self.folder)
        to_record = False
        for name in self._segment_files():
            wanted = table.get(name)
            if wanted is None:
                to_record = True
                continue
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # merged away since the listing
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            if _BAD.get(path) == key or st.st_size != wanted[0]:
                return name, to_record
            # (Blocks are read with `os.pread`: where it is missing, files are read whole.)
            blockable = st.st_size >= BLOCKED_MIN and hasattr(os, "pread")
            digests = self._digests(blocks, name, wanted) if blockable else None
            if blockable and digests is None:
                to_record = True  # checked whole (below); `record` adds its block digests
            if _VERIFIED.get(path) == (*key, wanted[1]):
                continue
            blocked = _BLOCKED.get(path)
            if blocked is not None and blocked.key == key and blocked.whole == wanted[1]:
                continue
            if digests is not None:
                try:
                    _BLOCKED[path] = Blocks(path, key, wanted[1], bytes.fromhex(digests))
                    continue
                except ValueError:
                    to_record = True
            try:
                key, digest = digest_of(path)
            except (OSError, ValueError):
                continue  # gone since the stat
            if digest != wanted[1]:
                _VERIFIED.pop(path, None)
                return name, to_record
            _VERIFIED[path] = (*key, digest)
        return None, to_record

    def record(self) -> None:
        """Add the checksum of every segment file that has none (and the block digests of
        each large one that has none: only when its whole digest is still the recorded
        one) and drop those of files gone. The caller holds the index lock (no writer is
        between a segment file's write and its listing in the table of contents)."""
        table, blocks = self._table(), self._blocks()
        fresh: dict[str, list[int]] = {}
        fresh_blocks: dict[str, list] = {}
        for name in self._segment_files():
            have = table.get(name)
            if have is not None:
                fresh[name] = have
                if have[0] < BLOCKED_MIN:
                    continue
                if _hex(self._digests(blocks, name, have)):
                    fresh_blocks[name] = blocks[name]
                    continue
            path = os.path.join(self.folder, name)
            try:
                key, digest, digests = block_digests(path)
            except (OSError, ValueError):
                continue
            if have is not None and have != [key[2], digest]:
                continue  # changed since it was recorded: `check` names it
            fresh[name] = [key[2], digest]
            _VERIFIED[path] = (*key, digest)
            if key[2] >= BLOCKED_MIN:
                fresh_blocks[name] = [key[2], digest, digests.hex()]
        if fresh != table:
            _write_json(self._path, fresh)
        if fresh_blocks != blocks:
            _write_json(self.folder / BLOCKS, {"block": BLOCK, "files": fresh_blocks})

    def forget(self, name: str) -> None:
        """Remove the file `name` (a damaged saved-postings file: the scorer then decodes
        the segment's own postings); the next `record` drops its checksum."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.folder, name))
        for known in (_VERIFIED, _BLOCKED, _BAD):
            known.pop(os.path.join(self.folder, name), None)

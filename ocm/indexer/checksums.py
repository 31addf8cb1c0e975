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
mtime says. A long-lived process (the MCP server, `ocm ui`) then checks a file again only
when its (inode, mtime, size) changed: bits that rot in place under an unchanged mtime after
it checked are found by the next process that starts. XXH3 over the mapped file costs ~33 ms
of CPU per 110 MB (10k notes; zlib's CRC-32 over the same map ~79 ms, read in chunks ~85 ms):
see bench/README.md. A one-shot command reads them in a thread while it is still importing
(`check_ahead`: xxhash lets go of the GIL while it hashes a buffer), and `check` waits for
that thread before it looks at any file: every file is still read in full before the
process reads any of it, only no longer on the command's critical path.
A file missing from the table (an index written before checksums, or a commit killed before
its manifest) is unknown, not damaged: `record` adds it, as it is, the next time the index
lock is free (trust on first use: a rebuild of 100k notes to vouch for an index that was
served unchecked until then would cost minutes on the first search). A table in an older
form (CRC-32 entries) is read as no table.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
import threading
from pathlib import Path
from typing import BinaryIO

import xxhash

SUMS = "checksums.json"
# The index's manifest (ocm/indexer/manifest.py) and vectors (ocm/indexer/vectors.py), named
# here for a search to start reading them ahead before it imports either (`check_ahead`).
MANIFEST = "manifest.json"
VECTORS = "vectors.npz"
# Whoosh's segment files: MAIN_<segment id>.<ext> or MAIN_<segment id>.<field>_len.col.
_SEGMENT_FILE = re.compile(r"^MAIN_[0-9a-z]+\.")
# Files found whole in this process: path -> (inode, mtime_ns, size, digest).
_VERIFIED: dict[str, tuple[int, int, int, int]] = {}


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
    if st.st_size == 0:
        digest = xxhash.xxh3_64_intdigest(b"")
    else:
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            digest = xxhash.xxh3_64_intdigest(mapped)
    return (st.st_ino, st.st_mtime_ns, st.st_size), digest


class Checksums:
    """The segment files' checksums of one index folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._path = folder / SUMS
        self._loaded: tuple[tuple[int, int, int], dict[str, list[int]]] | None = None

    def _table(self) -> dict[str, list[int]]:
        """{name: [size, xxh3_64]}, parsed again only when the file changed; {} when
        missing, unreadable or in an older form (every file then unknown)."""
        try:
            st = os.stat(self._path)
        except OSError:
            return {}
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if self._loaded is not None and self._loaded[0] == key:
            return self._loaded[1]
        try:
            table = json.loads(self._path.read_bytes())
        except (OSError, ValueError):
            table = None
        if not isinstance(table, dict) or not all(
                isinstance(v, list) and len(v) == 2 and all(isinstance(n, int) for n in v)
                for v in table.values()):
            table = {}
        self._loaded = (key, table)
        return table

    def _segment_files(self) -> list[str]:
        try:
            return [n for n in os.listdir(self.folder) if _SEGMENT_FILE.match(n)]
        except OSError:
            return []

    def check(self) -> tuple[str | None, bool]:
        """(the name of a file that fails its checksum or None, whether `record` has
        something to add: a segment file with no checksum). Waits for a check of this
        folder started ahead, whose digests it then takes."""
        ahead = _AHEAD.get(os.fspath(self.folder))
        if ahead is not None:
            ahead.segments_done.wait()
        return self.unwaited_check()

    def unwaited_check(self) -> tuple[str | None, bool]:
        """`check`, without waiting for a check started ahead (that one's own)."""
        table = self._table()
        to_record = False
        for name in self._segment_files():
            wanted = table.get(name)
            if wanted is None:
                to_record = True
                continue
            path = os.path.join(self.folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # merged away since the listing
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            if _VERIFIED.get(path) == (*key, wanted[1]):
                continue
            if st.st_size != wanted[0]:
                return name, to_record
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
        """Add the checksum of every segment file that has none and drop the checksums of
        files gone. The caller holds the index lock (no writer is between a segment file's
        write and its listing in the table of contents)."""
        table = self._table()
        fresh: dict[str, list[int]] = {}
        for name in self._segment_files():
            if name in table:
                fresh[name] = table[name]
                continue
            path = os.path.join(self.folder, name)
            try:
                key, digest = digest_of(path)
            except (OSError, ValueError):
                continue
            fresh[name] = [key[2], digest]
            _VERIFIED[path] = (*key, digest)
        if fresh != table:
            from ocm.vault.atomic import atomic_write_bytes

            with contextlib.suppress(OSError):  # a read-only index goes without
                atomic_write_bytes(self._path, json.dumps(fresh, separators=(",", ":"),
                                                          sort_keys=True).encode(),
                                   durable=False)

    def forget(self, name: str) -> None:
        """Remove the file `name` (a damaged saved-postings file: the scorer then decodes
        the segment's own postings); the next `record` drops its checksum."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.folder, name))
        _VERIFIED.pop(os.path.join(self.folder, name), None)

"""Checksums of the index's segment files, checked before they are read (issue #31).

A flipped bit in a file Whoosh reads without a check of its own (a field's lengths,
`*_len.col`; the saved postings, `*.ocmpost`) changed scores with no error. Segment files
never change once written (their names carry the segment's random id), so each one's CRC-32
is recorded once, after the commit that wrote it (`Manifest.save`, under the index lock),
in `checksums.json` beside the manifest: {file name: [size, crc32, inode, mtime_ns]}.
zlib's CRC-32 runs at ~0.7 GB/s here (blake2b ~0.2 GB/s), and it is meant for accidental
damage, not an attacker (who could rewrite the checksum as well).

`check` looks at every listed file that is on disk, each once per process while its
(inode, mtime, size) stay as they were:
* a small file (at most FULL_CHECK_BYTES: the lengths and dates columns, a small segment's
  files) is read and its CRC-32 compared, in every process;
* a larger one (postings, terms, stored fields: 110 MB at 10k notes, 0.4 s to read in a
  fresh process, more than a whole fresh search) is read only when its (inode, mtime, size)
  are no longer those recorded when it was written: any write to it, any copy of it. A bit
  that rots in place under an unchanged mtime is not seen in those files.
A file missing from the table (an index written before checksums, or a commit killed before
its manifest) is unknown, not damaged: `record` adds it, as it is, the next time the index
lock is free (trust on first use: a rebuild of 100k notes to vouch for an index that was
served unchecked until then would cost minutes on the first search). `record` also takes
the new (inode, mtime, size) of a large file found whole after a copy, so that the next
processes need not read it again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import zlib
from pathlib import Path

from ocm.vault.atomic import atomic_write_bytes

SUMS = "checksums.json"
# Files up to this size are read and checked in every process (see above).
FULL_CHECK_BYTES = 1 << 20
# Whoosh's segment files: MAIN_<segment id>.<ext> or MAIN_<segment id>.<field>_len.col.
_SEGMENT_FILE = re.compile(r"^MAIN_[0-9a-z]+\.")
_CHUNK = 1 << 20
# Files found whole in this process: path -> (inode, mtime_ns, size, crc32).
_VERIFIED: dict[str, tuple[int, int, int, int]] = {}


def crc_of(path: str) -> tuple[tuple[int, int, int], int]:
    """((inode, mtime_ns, size) as opened, CRC-32) of the file at `path`."""
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        crc = 0
        while chunk := handle.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return (st.st_ino, st.st_mtime_ns, st.st_size), crc


def _entry(key: tuple[int, int, int], crc: int) -> list[int]:
    return [key[2], crc, key[0], key[1]]


class Checksums:
    """The segment files' checksums of one index folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._path = folder / SUMS
        self._loaded: tuple[tuple[int, int, int], dict[str, list[int]]] | None = None

    def _table(self) -> dict[str, list[int]]:
        """{name: [size, crc32, inode, mtime_ns]}, parsed again only when the file changed;
        {} when missing or unreadable (every file then unknown)."""
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
                isinstance(v, list) and len(v) == 4 and all(isinstance(n, int) for n in v)
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
        something to add: a segment file with no checksum, or a large file found whole
        under another (inode, mtime) than recorded)."""
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
            done = _VERIFIED.get(path)
            if done is not None and done[:3] == key and done[3] == wanted[1]:
                continue
            if st.st_size != wanted[0]:
                return name, to_record
            as_written = (wanted[2], wanted[3]) == key[:2]
            if as_written and st.st_size > FULL_CHECK_BYTES:
                _VERIFIED[path] = (*key, wanted[1])
                continue
            try:
                key, crc = crc_of(path)
            except OSError:
                continue
            if crc != wanted[1]:
                _VERIFIED.pop(path, None)
                return name, to_record
            _VERIFIED[path] = (*key, crc)
            to_record = to_record or not as_written
        return None, to_record

    def record(self) -> None:
        """Add the checksum of every segment file that has none, take the (inode, mtime)
        of files this process found whole under new ones, and drop the checksums of files
        gone. The caller holds the index lock (no writer is between a segment file's
        write and its listing in the table of contents)."""
        table = self._table()
        fresh: dict[str, list[int]] = {}
        for name in self._segment_files():
            path = os.path.join(self.folder, name)
            old = table.get(name)
            done = _VERIFIED.get(path)
            if old is not None:
                fresh[name] = old
                if done is not None and done[3] == old[1] and done[2] == old[0]:
                    fresh[name] = _entry(done[:3], done[3])
                continue
            try:
                key, crc = crc_of(path)
            except OSError:
                continue
            fresh[name] = _entry(key, crc)
            _VERIFIED[path] = (*key, crc)
        if fresh != table:
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

"""Checksums of the index's segment files, checked before they are read (issue #31).

A flipped bit in a file Whoosh reads without a check of its own (a field's lengths,
`*_len.col`; the saved postings, `*.ocmpost`) changed scores with no error. Segment files
never change once written (their names carry the segment's random id), so each one's CRC-32
is recorded once, after the commit that wrote it (`Manifest.save`, under the index lock),
in `checksums.json` beside the manifest: {file name: [size, crc32]}. zlib's CRC-32 runs at
~0.7 GB/s here (blake2b ~0.2 GB/s), and it is meant for accidental damage, not an attacker
(who could rewrite the checksum as well).

`check` compares every listed file that is on disk with its checksum, each file once per
process while its (inode, mtime, size) stay as they were: a long-lived process pays a
`stat` per file per check, a fresh one reads the index once (bench/README.md, "Index
checksums"). A file missing from the table (an index written before checksums, or a commit
killed before its manifest) is unknown, not damaged: `record` adds it, as it is, the next
time the index lock is free (trust on first use: a rebuild of 100k notes to vouch for an
index that was served unchecked until then would cost minutes on the first search).
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


class Checksums:
    """The segment files' checksums of one index folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._path = folder / SUMS
        self._loaded: tuple[tuple[int, int, int], dict[str, list[int]]] | None = None

    def _table(self) -> dict[str, list[int]]:
        """{name: [size, crc32]}, parsed again only when the file changed; {} when missing
        or unreadable (every file then unknown)."""
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
        """(the name of a file that fails its checksum or None, whether a segment file on
        disk has none yet)."""
        table = self._table()
        unknown = False
        for name in self._segment_files():
            wanted = table.get(name)
            if wanted is None:
                unknown = True
                continue
            path = os.path.join(self.folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # merged away since the listing
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            done = _VERIFIED.get(path)
            if done is not None and done[:3] == key and [st.st_size, done[3]] == wanted:
                continue
            if st.st_size != wanted[0]:
                return name, unknown
            try:
                key, crc = crc_of(path)
            except OSError:
                continue
            if crc != wanted[1]:
                _VERIFIED.pop(path, None)
                return name, unknown
            _VERIFIED[path] = (*key, crc)
        return None, unknown

    def record(self) -> None:
        """Add the checksum of every segment file that has none and drop those of files
        gone. The caller holds the index lock (no writer is between a segment file's
        write and its listing in the table of contents)."""
        table = self._table()
        names = self._segment_files()
        fresh: dict[str, list[int]] = {}
        for name in names:
            if name in table:
                fresh[name] = table[name]
                continue
            path = os.path.join(self.folder, name)
            try:
                key, crc = crc_of(path)
            except OSError:
                continue
            fresh[name] = [key[2], crc]
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

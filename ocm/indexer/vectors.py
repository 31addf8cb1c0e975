"""Embeddings of the notes, and of the turns of transcript notes, derived like the rest of
`.index/`: keyed by the note's path and its `(mtime_ns, size)` signature, computed again
when the note changes, dropped when it is deleted, and rebuilt from the notes whenever the
file is missing or unreadable.

A note has one row, its whole text's embedding. A note whose sections are worth telling
apart by meaning (a transcript: one `##` per turn, each about something else) also has one
row per section, in the order of its stored chunks (ocm/indexer/chunks.py), so a search
can pick the turn a question is about, not only the conversation.

One file, `vectors.npz`: the float32 note rows, the float32 section rows and their keys
(model, paths, signatures, sections per note) as a JSON string, replaced in one atomic
step, so a reader never pairs rows with another write's keys.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import time
import weakref
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .embed import DIM, MODEL, Embedder

VECTORS = "vectors.npz"
BATCH = 256
# The file is derived data for the next process: a process that keeps updating the vectors
# (the MCP server after each write) rewrites it once this many rows changed or this many
# seconds passed, and when it closes the index or exits, not after every commit (writing
# every row took most of an incremental update at 50k notes). A process that dies first
# leaves the file a few notes behind; the next one embeds those notes again.
SAVE_ROWS = 64
SAVE_SECONDS = 30.0
_OPEN: weakref.WeakSet[VectorStore] = weakref.WeakSet()
# What the keys must say for the rows to be used; a file of another layout is rebuilt.
# 3: rows stored as float32, read as they are (converting float16 rows took ~0.3 s of a
# one-shot search at 100k notes, more than reading twice the bytes).
LAYOUT = 3
FLOAT16_LAYOUT = 2  # the same rows as float16: read, and written back in the new layout

# A note's text to embed, and its sections' texts ([] when the note is embedded whole only).
EmbedText = tuple[str, list[str]]

# Rows multiplied with a query vector in one BLAS call: 1024 x DIM = 262k floats, under
# OpenBLAS's threshold for threading a matrix-vector product (460k in OpenBLAS 0.3.31).
PRODUCT_ROWS = 1024


class VectorStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: list[str] = []
        self.sigs: list[list[int]] = []
        self.matrix: Any = None  # numpy float32 (len(paths), DIM), rows of unit length
        # Sections per note (0 for most) and their rows, note after note in path order.
        self.parts: list[int] = []
        self.part_matrix: Any = None
        self._row: dict[str, int] = {}
        self._part_start: list[int] = []
        self._loaded_key: tuple | None = None
        self._synced: object = None
        self._pending = 0  # rows changed since the file was written
        self._room: dict[str, Any] = {}  # spare rows behind `matrix` and `part_matrix`
        self._saved_at = time.monotonic()
        self._pid = os.getpid()
        _OPEN.add(self)

    def _file_key(self) -> tuple | None:
        try:
            found = os.stat(self.folder / VECTORS)
        except OSError:
            return None
        return (found.st_ino, found.st_mtime_ns, found.st_size)

    def _index_rows(self) -> None:
        self._row = {p: i for i, p in enumerate(self.paths)}
        self._part_start, at = [], 0
        for count in self.parts:
            self._part_start.append(at)
            at += count

    def _load(self) -> None:
        import numpy as np

        key = self._file_key()
        if key is not None and key == self._loaded_key:
            return
        self.paths, self.sigs, self.parts = [], [], []
        self.matrix = np.zeros((0, DIM), dtype=np.float32)
        self.part_matrix = np.zeros((0, DIM), dtype=np.float32)
        self._loaded_key = None
        if key is not None:
            try:
                with np.load(self.folder / VECTORS, allow_pickle=False) as stored:
                    meta = json.loads(stored["keys"].item())  # not str(): that prints the array
                    matrix = stored["rows"]
                    parts = stored["part_rows"]
                count = len(meta["paths"])
                layout = meta.get("layout")
                if (meta.get("model") == MODEL and layout in (FLOAT16_LAYOUT, LAYOUT)
                        and matrix.shape == (count, DIM) and len(meta["sigs"]) == count
                        and len(meta["parts"]) == count
                        and parts.shape == (sum(meta["parts"]), DIM)):
                    self.paths, self.sigs = list(meta["paths"]), list(meta["sigs"])
                    self.parts = [int(n) for n in meta["parts"]]
                    # Written in place by later commits: a read-only array is copied.
                    self.matrix = np.require(matrix, np.float32, ["W"])
                    self.part_matrix = np.require(parts, np.float32, ["W"])
                    self._loaded_key = key
                    if layout == FLOAT16_LAYOUT:  # converted once, written back as float32
                        self._pending = max(self._pending, SAVE_ROWS)
            except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
                pass  # unreadable: every note is embedded again below
        self._index_rows()

    def sync(self, notes: dict[str, list[int]], text_of: Callable[[str], EmbedText | None],
             embedder: Embedder) -> None:
        """Bring the vectors in line with `notes` (relpath -> signature, the index's
        manifest): embed what is new or changed, drop what is gone. A few changed or new
        notes are written into their rows in place (appended ones into spare room), so a
        small commit costs one pass over the signatures, not a copy of every row."""
        if self._synced is notes and self._file_key() == self._loaded_key:
            return
        self._load()
        row, sigs = self._row, self.sigs
        todo = [rel for rel, sig in notes.items()
                if (at := row.get(rel)) is None or sigs[at] != sig]
        added = sum(1 for rel in todo if rel not in row)
        gone = len(self.paths) - (len(notes) - added)  # stored notes no longer listed
        if todo or gone:
            found = [(rel, got) for rel in todo if (got := text_of(rel)) is not None]
            in_place = not gone and len(found) == len(todo) and all(
                rel not in row or self.parts[row[rel]] == len(got[1]) for rel, got in found)
            if in_place:
                self._update(notes, found, embedder)
            else:
                self._rebuild(notes, found, embedder)
            self._pending += len(todo) + gone
            if (self._loaded_key is None or self._pending >= SAVE_ROWS
                    or time.monotonic() - self._saved_at >= SAVE_SECONDS):
                self._try_save()
        self._synced = notes

    def _vectors_of(self, found: list[tuple[str, EmbedText]],
                    embedder: Embedder) -> tuple[Any, Any]:
        import numpy as np

        def embedded(texts: list[str]) -> Any:
            return np.concatenate([np.zeros((0, DIM), dtype=np.float32),
                                   *self._embed(embedder, texts)]).astype(np.float32)

        return (embedded([got[0] for _, got in found]),
                embedded([text for _, got in found for text in got[1]]))

    def _update(self, notes: dict[str, list[int]], found: list[tuple[str, EmbedText]],
                embedder: Embedder) -> None:
        """Changed notes (their section count unchanged) rewritten in their rows, new ones
        appended."""
        rows, part_rows = self._vectors_of(found, embedder)
        new_rows: list[int] = []  # positions in `rows` / `part_rows` of the new notes'
        new_part_rows: list[int] = []
        at = 0
        for number, (rel, got) in enumerate(found):
            count = len(got[1])
            row = self._row.get(rel)
            if row is None:
                self._row[rel] = len(self.paths)
                self._part_start.append(len(self.part_matrix) + len(new_part_rows))
                new_rows.append(number)
                new_part_rows.extend(range(at, at + count))
                self.paths.append(rel)
                self.sigs.append(list(notes[rel]))
                self.parts.append(count)
            else:
                self.matrix[row] = rows[number]
                start = self._part_start[row]
                self.part_matrix[start:start + count] = part_rows[at:at + count]
                self.sigs[row] = list(notes[rel])
            at += count
        if new_rows:
            self.matrix = self._appended("matrix", rows[new_rows])
            self.part_matrix = self._appended("part_matrix", part_rows[new_part_rows])

    def _appended(self, name: str, rows: Any) -> Any:
        """`rows` after the matrix `name`, in spare room kept behind it (doubled when full)."""
        import numpy as np

        current = getattr(self, name)
        size, more = len(current), len(rows)
        room = self._room.get(name)
        if room is None or current.base is not room or len(room) < size + more:
            room = np.empty((max(2 * (size + more), 1024), DIM), dtype=np.float32)
            room[:size] = current
            self._room[name] = room
        room[size:size + more] = rows
        return room[:size + more]

    def _rebuild(self, notes: dict[str, list[int]], found: list[tuple[str, EmbedText]],
                 embedder: Embedder) -> None:
        """Every kept row copied after dropping the gone and changed ones, then the new."""
        import numpy as np

        done = {rel for rel, _ in found}
        keep = [i for i, p in enumerate(self.paths)
                if p not in done and notes.get(p) == self.sigs[i]]
        rows, part_rows = self._vectors_of(found, embedder)
        kept_parts = [row for i in keep for row in
                      range(self._part_start[i], self._part_start[i] + self.parts[i])]
        self.matrix = np.concatenate([self.matrix[keep], rows])
        self.part_matrix = np.concatenate([self.part_matrix[kept_parts], part_rows])
        self.sigs = [self.sigs[i] for i in keep] + [list(notes[rel]) for rel, _ in found]
        self.parts = [self.parts[i] for i in keep] + [len(got[1]) for _, got in found]
        self.paths = [self.paths[i] for i in keep] + [rel for rel, _ in found]
        self._index_rows()

    def flush(self) -> None:
        """Write the rows changed since the file was last written, if any (and only from
        the process that loaded them: a forked child leaves the file to its parent)."""
        if self._pending and os.getpid() == self._pid:
            self._try_save()

    def _try_save(self) -> None:
        """Write the file, or leave it as it was (a full disk, a read-only folder): the
        rows stay in memory and pending, and the next process embeds what the file lacks."""
        with contextlib.suppress(OSError):
            self._save()

    def _embed(self, embedder: Embedder, texts: list[str]) -> list[Any]:
        return [embedder.embed(texts[i:i + BATCH], self.folder)
                for i in range(0, len(texts), BATCH)]

    def _save(self) -> None:
        import numpy as np

        self.folder.mkdir(parents=True, exist_ok=True)
        # One temporary file per process: two processes saving at once (a server and a
        # command, each at its exit) must not write into the same one.
        temp = self.folder / f".{VECTORS}.{os.getpid()}.tmp"
        keys = json.dumps({"model": MODEL, "layout": LAYOUT, "paths": self.paths,
                           "sigs": self.sigs, "parts": self.parts})
        try:
            with open(temp, "wb") as handle:
                np.savez(handle, rows=self.matrix.astype(np.float32, copy=False),
                         part_rows=self.part_matrix.astype(np.float32, copy=False),
                         keys=np.array(keys))
            os.replace(temp, self.folder / VECTORS)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        self._loaded_key = self._file_key()
        self._pending = 0
        self._saved_at = time.monotonic()

    def cosines(self, query: Any) -> Any:
        """Cosine similarity of each row (`paths` order) with a unit-length query vector,
        as a numpy float32 vector; `row` finds a note's."""
        import numpy as np

        if self.matrix is None or not len(self.paths):
            return np.zeros(0, dtype=np.float32)
        # A block of rows at a time, each below the size at which OpenBLAS spreads one
        # product over threads: on a busy machine a threaded 10k-row product took 8-24 ms
        # instead of 0.1 ms (bench/README.md, "numpy scorer"). The floats are those of one
        # single-threaded product, on any machine; a threaded one differed from them in
        # the last bit on a few rows next to where it split the rows among the cores.
        return np.concatenate([self.matrix[start:start + PRODUCT_ROWS] @ query
                               for start in range(0, len(self.matrix), PRODUCT_ROWS)])

    def row(self, rel: str) -> int | None:
        return self._row.get(rel)

    def part_similarities(self, rel: str, query: Any) -> list[float] | None:
        """The cosine of each of a note's section rows with a unit-length query vector, in
        the order of its stored chunks; None for a note embedded whole only."""
        row = self._row.get(rel)
        if row is None or not self.parts[row]:
            return None
        start = self._part_start[row]
        return (self.part_matrix[start:start + self.parts[row]] @ query).tolist()


@atexit.register
def _flush_all() -> None:
    for store in list(_OPEN):
        with contextlib.suppress(Exception):  # derived data; the next process embeds again
            store.flush()

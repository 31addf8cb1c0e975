"""Embeddings of the notes, and of the turns of transcript notes, derived like the rest of
`.index/`: keyed by the note's path and its `(mtime_ns, size)` signature, computed again
when the note changes, dropped when it is deleted, and rebuilt from the notes whenever the
file is missing or unreadable.

A note has one row, its whole text's embedding. A note whose sections are worth telling
apart by meaning (a transcript: one `##` per turn, each about something else) also has one
row per section, in the order of its stored chunks (ocm/indexer/chunks.py), so a search
can pick the turn a question is about, not only the conversation.

One file, `vectors.npz`: the float16 note rows, the float16 section rows and their keys
(model, paths, signatures, sections per note) as a JSON string, replaced in one atomic
step, so a reader never pairs rows with another write's keys.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .embed import DIM, MODEL, Embedder

VECTORS = "vectors.npz"
BATCH = 256
# What the keys must say for the rows to be used; a file of another layout is rebuilt.
LAYOUT = 2

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
                    meta = json.loads(str(stored["keys"]))
                    matrix = stored["rows"]
                    parts = stored["part_rows"]
                count = len(meta["paths"])
                if (meta.get("model") == MODEL and meta.get("layout") == LAYOUT
                        and matrix.shape == (count, DIM) and len(meta["sigs"]) == count
                        and len(meta["parts"]) == count
                        and parts.shape == (sum(meta["parts"]), DIM)):
                    self.paths, self.sigs = list(meta["paths"]), list(meta["sigs"])
                    self.parts = [int(n) for n in meta["parts"]]
                    self.matrix = matrix.astype(np.float32)
                    self.part_matrix = parts.astype(np.float32)
                    self._loaded_key = key
            except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
                pass  # unreadable: every note is embedded again below
        self._index_rows()

    def sync(self, notes: dict[str, list[int]], text_of: Callable[[str], EmbedText | None],
             embedder: Embedder) -> None:
        """Bring the vectors in line with `notes` (relpath -> signature, the index's
        manifest): embed what is new or changed, drop what is gone."""
        if self._synced is notes and self._file_key() == self._loaded_key:
            return
        import numpy as np

        self._load()
        keep = [i for i, p in enumerate(self.paths) if notes.get(p) == self.sigs[i]]
        have = {self.paths[i] for i in keep}
        todo = [rel for rel in notes if rel not in have]
        if todo or len(keep) != len(self.paths):
            texts: list[str] = []
            part_texts: list[str] = []
            added: list[str] = []
            added_parts: list[int] = []
            for rel in todo:
                found = text_of(rel)
                if found is not None:
                    added.append(rel)
                    texts.append(found[0])
                    part_texts.extend(found[1])
                    added_parts.append(len(found[1]))
            kept_parts = [row for i in keep for row in
                          range(self._part_start[i], self._part_start[i] + self.parts[i])]
            self.matrix = np.concatenate(
                [self.matrix[keep], *self._embed(embedder, texts)]).astype(np.float32)
            self.part_matrix = np.concatenate(
                [self.part_matrix[kept_parts], *self._embed(embedder, part_texts)]
            ).astype(np.float32)
            self.sigs = [self.sigs[i] for i in keep] + [list(notes[r]) for r in added]
            self.parts = [self.parts[i] for i in keep] + added_parts
            self.paths = [self.paths[i] for i in keep] + added
            self._index_rows()
            self._save()
        self._synced = notes

    def _embed(self, embedder: Embedder, texts: list[str]) -> list[Any]:
        return [embedder.embed(texts[i:i + BATCH], self.folder)
                for i in range(0, len(texts), BATCH)]

    def _save(self) -> None:
        import numpy as np

        self.folder.mkdir(parents=True, exist_ok=True)
        temp = self.folder / f".{VECTORS}.tmp"
        keys = json.dumps({"model": MODEL, "layout": LAYOUT, "paths": self.paths,
                           "sigs": self.sigs, "parts": self.parts})
        with open(temp, "wb") as handle:
            np.savez(handle, rows=self.matrix.astype(np.float16),
                     part_rows=self.part_matrix.astype(np.float16), keys=np.array(keys))
        os.replace(temp, self.folder / VECTORS)
        self._loaded_key = self._file_key()

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

    def similarities(self, query: Any) -> dict[str, float]:
        """relpath -> cosine similarity with a unit-length query vector."""
        return dict(zip(self.paths, self.cosines(query).tolist(), strict=True))

    def part_similarities(self, rel: str, query: Any) -> list[float] | None:
        """The cosine of each of a note's section rows with a unit-length query vector, in
        the order of its stored chunks; None for a note embedded whole only."""
        row = self._row.get(rel)
        if row is None or not self.parts[row]:
            return None
        start = self._part_start[row]
        return (self.part_matrix[start:start + self.parts[row]] @ query).tolist()

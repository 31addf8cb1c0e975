"""One embedding per note, derived like the rest of `.index/`: keyed by the note's path and
its `(mtime_ns, size)` signature, computed again when the note changes, dropped when it is
deleted, and rebuilt from the notes whenever the files are missing or unreadable.

One file, `vectors.npz`: the float16 rows and their keys (model, paths, signatures) as a
JSON string, replaced in one atomic step, so a reader never pairs rows with another
write's keys.
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
# Rows multiplied with a query vector in one BLAS call: 1024 x DIM = 262k floats, under
# OpenBLAS's threshold for threading a matrix-vector product (460k in OpenBLAS 0.3.31).
PRODUCT_ROWS = 1024


class VectorStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: list[str] = []
        self.sigs: list[list[int]] = []
        self.matrix: Any = None  # numpy float32 (len(paths), DIM), rows of unit length
        self._row: dict[str, int] = {}
        self._loaded_key: tuple | None = None
        self._synced: object = None

    def _file_key(self) -> tuple | None:
        try:
            found = os.stat(self.folder / VECTORS)
        except OSError:
            return None
        return (found.st_ino, found.st_mtime_ns, found.st_size)

    def _load(self) -> None:
        import numpy as np

        key = self._file_key()
        if key is not None and key == self._loaded_key:
            return
        self.paths, self.sigs, self.matrix = [], [], np.zeros((0, DIM), dtype=np.float32)
        self._loaded_key = None
        if key is not None:
            try:
                with np.load(self.folder / VECTORS, allow_pickle=False) as stored:
                    meta = json.loads(str(stored["keys"]))
                    matrix = stored["rows"]
                if (meta.get("model") == MODEL and matrix.shape == (len(meta["paths"]), DIM)
                        and len(meta["sigs"]) == len(meta["paths"])):
                    self.paths, self.sigs = list(meta["paths"]), list(meta["sigs"])
                    self.matrix = matrix.astype(np.float32)
                    self._loaded_key = key
            except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
                pass  # unreadable: every note is embedded again below
        self._row = {p: i for i, p in enumerate(self.paths)}

    def sync(self, notes: dict[str, list[int]], text_of: Callable[[str], str | None],
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
            added: list[str] = []
            for rel in todo:
                text = text_of(rel)
                if text is not None:
                    added.append(rel)
                    texts.append(text)
            fresh = [embedder.embed(texts[i:i + BATCH], self.folder)
                     for i in range(0, len(texts), BATCH)]
            self.matrix = np.concatenate([self.matrix[keep], *fresh]).astype(np.float32)
            self.sigs = [self.sigs[i] for i in keep] + [list(notes[r]) for r in added]
            self.paths = [self.paths[i] for i in keep] + added
            self._row = {p: i for i, p in enumerate(self.paths)}
            self._save()
        self._synced = notes

    def _save(self) -> None:
        import numpy as np

        self.folder.mkdir(parents=True, exist_ok=True)
        temp = self.folder / f".{VECTORS}.tmp"
        keys = json.dumps({"model": MODEL, "paths": self.paths, "sigs": self.sigs})
        with open(temp, "wb") as handle:
            np.savez(handle, rows=self.matrix.astype(np.float16), keys=np.array(keys))
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

"""Embeddings of the notes, and of the turns of transcript notes, derived like the rest of
`.index/`: keyed by the note's path and its `(mtime_ns, size)` signature, computed again
when the note changes, dropped when it is deleted, and rebuilt from the notes whenever the
file is missing or unreadable.

A note has one row, its whole text's embedding. A note whose sections are worth telling
apart by meaning (a transcript: one `##` per turn, each about something else) also has one
row per section, in the order of its stored chunks (ocm/indexer/chunks.py), so a search
can pick the turn a question is about, not only the conversation.

One file, `vectors.npz` (an uncompressed zip of `.npy` members, replaced in one atomic
step, so a reader never pairs rows with another write's keys): the float32 note rows, the
float32 section rows, each note's signature (int64) and section count (int32), the paths
(UTF-8, NUL-separated), the rows in the order of their paths (int32, so that a path's row is
found by a binary search) and a small JSON key (model, layout, and the manifest state the
rows were last brought in line with). Each member's data starts 64-byte aligned, so a fresh
process maps the rows instead of reading them (copy-on-write: a commit that rewrites a row
in place changes only its own copy), and turns paths and signatures into Python objects only
when it needs them: when the manifest is still the one the rows match, not at all, and a
search looks up its few dozen candidates' rows in the mapped members.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import struct
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocm.vault.atomic import atomic_write_bytes, open_new

from .checksums import VECTORS, digest_of, digest_taken
from .embed import DIM, MODEL, Embedder

# The [size, XXH3-64] of the vectors file as last written or found whole (JSON).
CHECKED = "checked-vectors.json"
BATCH = 256
# The file is derived data for the next process: a process that keeps updating the vectors
# (the MCP server after each write) rewrites it once this many rows changed or this many
# seconds passed, and when it closes the index or exits, not after every commit (writing
# every row took most of an incremental update at 50k notes). A process that dies first
# leaves the file a few notes behind; the next one embeds those notes again.
SAVE_ROWS = 64
SAVE_SECONDS = 30.0
# Stores with rows not yet written, held until they are, so that the exit writes them even
# when nothing else refers to the store any more (a one-shot `ocm search` has dropped its
# Project by then).
_UNSAVED: set[VectorStore] = set()
# What the keys must say for the rows to be used; a file of another layout is rebuilt.
# 4: paths, signatures and section counts as members of their own, not in the JSON key
# (parsing 100k of them took ~50 ms of every one-shot search at 100k notes).
LAYOUT = 4
# Earlier layouts, read and written back in the new one: 3 held everything in the JSON
# key; 2 also stored the rows as float16.
JSON_KEYS_LAYOUT = 3
FLOAT16_LAYOUT = 2
# Where each member's data starts in the file (zip header + .npy header, padded).
ALIGN = 64
_PAD_FIELD = 0xD935  # the zip "extra" field id zipalign uses for padding

# A note's text to embed, and its sections' texts ([] when the note is embedded whole only).
EmbedText = tuple[str, list[str]]
# A note's embedding already made (by a build's writer, ocm/indexer/index.py): its row and
# its sections' rows (numpy float32, (DIM,) and (sections, DIM)).
Embedded = tuple[Any, Any]

# Rows multiplied with a query vector in one BLAS call: 1024 x DIM = 262k floats, under
# OpenBLAS's threshold for threading a matrix-vector product (460k in OpenBLAS 0.3.31).
PRODUCT_ROWS = 1024
# Rows a process finds by binary search in a loaded file's path order (`VectorStore.row`,
# each answer kept) before it makes the paths a list and a dict instead: a warm process,
# which then looks a row up in one step (~7 ms once at 10k notes under load 13, ten
# times that at 100k; a process that writes makes them anyway, `sync`).
ROWS_LOOKED_BEFORE_LISTS = 256


class VectorStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._paths: list[str] = []
        self._sigs: list[list[int]] = []
        self.matrix: Any = None  # numpy float32 (len(paths), DIM), rows of unit length
        # Sections per note (0 for most) and their rows, note after note in path order.
        self._parts: list[int] = []
        self.part_matrix: Any = None
        # Read from the file but not yet made lists: "paths" (bytes), "sigs", "parts", and
        # "order" (row numbers in path order) and "ends" (where each path ends in "paths")
        # while "paths" is there; "starts": where each note's section rows start.
        self._raw: dict[str, Any] = {}
        self._row_of: dict[str, int] | None = None  # made on first use
        # `row`'s binary searches already made, for the file's path order `_looked_in`.
        self._looked: dict[str, int | None] = {}
        self._looked_in: Any = None
        self._part_start_of: list[int] | None = None
        # The manifest state (Manifest.token) the rows were last brought in line with.
        self._token: tuple | None = None
        self._loaded_key: tuple | None = None
        self._synced: object = None
        self._pending = 0  # rows changed since the file was written
        self._room: dict[str, Any] = {}  # spare rows behind `matrix` and `part_matrix`
        self._saved_at = time.monotonic()
        self._pid = os.getpid()

    def _file_key(self) -> tuple | None:
        try:
            found = os.stat(self.folder / VECTORS)
        except OSError:
            return None
        return (found.st_ino, found.st_mtime_ns, found.st_size)

    # Paths, signatures and section counts: lists, made from the file's members on first use.
    @property
    def paths(self) -> list[str]:
        if "paths" in self._raw:
            blob = self._raw.pop("paths").tobytes()
            self._paths = blob.decode("utf-8", "surrogatepass").split("\0") if blob else []
        return self._paths

    @paths.setter
    def paths(self, value: list[str]) -> None:
        self._raw.pop("paths", None)
        self._paths = value

    @property
    def count(self) -> int:
        """How many notes have a row."""
        return len(self.matrix) if self.matrix is not None else 0

    def path(self, row: int) -> str:
        """The path of row `row`, read from the file's member while it is not a list."""
        blob = self._raw.get("paths")
        if blob is None:
            return self.paths[row]
        ends = self._raw["ends"]
        start = int(ends[row - 1]) + 1 if row else 0
        return blob[start:int(ends[row])].tobytes().decode("utf-8", "surrogatepass")

    def row(self, rel: str) -> int | None:
        """The row of the note `rel`: by a binary search of the file's path order while
        the paths are not a list (a one-shot search looks up a few dozen), else from their
        dict (made once a process has looked up ROWS_LOOKED_BEFORE_LISTS)."""
        order = self._raw.get("order") if "paths" in self._raw else None
        # Each answer is kept while this file's path order is the one searched (another
        # file: a new `order`).
        if order is not None and self._looked_in is not order:
            self._looked, self._looked_in = {}, order
        if order is None or len(self._looked) >= ROWS_LOOKED_BEFORE_LISTS:
            self._looked = {}
            return self._row.get(rel)
        if rel in self._looked:
            return self._looked[rel]
        low, high = 0, len(order)
        while low < high:
            middle = (low + high) // 2
            if self.path(int(order[middle])) < rel:
                low = middle + 1
            else:
                high = middle
        found: int | None = int(order[low]) if low < len(order) else None
        if found is not None and self.path(found) != rel:
            found = None
        self._looked[rel] = found
        return found

    def rows(self, rels: list[str]) -> list[int | None]:
        """`row` of each note of `rels`: from the paths' dict in one pass once it is made
        (a warm process's search asks for each of its ~75 candidates)."""
        if self._row_of is None or "paths" in self._raw:
            return [self.row(rel) for rel in rels]
        get = self._row_of.get
        return [get(rel) for rel in rels]

    @property
    def sigs(self) -> list[list[int]]:
        if "sigs" in self._raw:
            self._sigs = self._raw.pop("sigs").tolist()
        return self._sigs

    @sigs.setter
    def sigs(self, value: list[list[int]]) -> None:
        self._raw.pop("sigs", None)
        self._sigs = value

    @property
    def parts(self) -> list[int]:
        if "parts" in self._raw:
            self._parts = self._raw.pop("parts").tolist()
        return self._parts

    @parts.setter
    def parts(self, value: list[int]) -> None:
        self._raw.pop("parts", None)
        self._parts = value

    @property
    def _row(self) -> dict[str, int]:
        if self._row_of is None:
            self._row_of = {p: i for i, p in enumerate(self.paths)}
        return self._row_of

    @property
    def _part_start(self) -> list[int]:
        if self._part_start_of is None:
            self._part_start_of, at = [], 0
            for count in self.parts:
                self._part_start_of.append(at)
                at += count
        return self._part_start_of

    def _index_rows(self) -> None:
        self._row_of = self._part_start_of = None

    def _sections(self, row: int) -> tuple[int, int]:
        """(first section row, section count) of row `row`, from the file's member while
        the counts are not a list."""
        parts = self._raw.get("parts")
        if parts is None:
            return self._part_start[row], self.parts[row]
        starts = self._raw.get("starts")
        if starts is None:
            import numpy as np

            starts = self._raw["starts"] = np.cumsum(parts, dtype=np.int64) - parts
        return int(starts[row]), int(parts[row])

    def _load(self) -> None:
        import numpy as np

        key = self._file_key()
        if key is not None and key == self._loaded_key:
            return
        self.paths, self.sigs, self.parts = [], [], []
        self._raw = {}
        self.matrix = np.zeros((0, DIM), dtype=np.float32)
        self.part_matrix = np.zeros((0, DIM), dtype=np.float32)
        self._loaded_key = self._token = None
        if key is not None:
            try:
                if self._read():
                    self._loaded_key = key
            except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
                # unreadable: every note is embedded again below
                self.paths, self.sigs, self.parts = [], [], []
                self.matrix = np.zeros((0, DIM), dtype=np.float32)
                self.part_matrix = np.zeros((0, DIM), dtype=np.float32)
                self._token = None
        self._index_rows()

    def _read(self) -> bool:
        """Take the file's rows and keys; False for a file of another model or an unknown
        layout (the store stays empty), ValueError for one that does not hold together."""
        import numpy as np

        with open(self.folder / VECTORS, "rb") as handle, zipfile.ZipFile(handle) as stored:
            (_, _, size), digest = digest_taken(self.folder, VECTORS, handle)
            whole = [size, digest]
            if _as_checked(self.folder) != whole:
                _check_crcs(stored)
                _mark_checked(self.folder, whole)
            meta = json.loads(_member(stored, "keys").item())  # not str(): prints the array
            layout = meta.get("layout")
            if meta.get("model") != MODEL:
                return False
            if layout == LAYOUT:
                matrix, part_matrix = _member(stored, "rows"), _member(stored, "part_rows")
                raw = {name: _member(stored, name) for name in ("paths", "sigs", "parts")}
                count = len(raw["sigs"])
                blob = raw["paths"]
                raw["ends"] = np.append(np.flatnonzero(blob == 0), len(blob))
                if not (matrix.shape == (count, DIM) and raw["sigs"].shape == (count, 2)
                        and raw["parts"].shape == (count,)
                        and part_matrix.shape == (int(raw["parts"].sum()), DIM)
                        and len(raw["ends"]) == max(count, 1)):
                    raise ValueError("vectors file does not hold together")
                # The path order, where the file has it (a writer before it did not).
                if "order.npy" in stored.namelist():
                    order = _member(stored, "order")
                    if order.shape == (count,) and order.dtype.kind == "i":
                        raw["order"] = order
                self.matrix, self.part_matrix, self._raw = matrix, part_matrix, raw
                token = meta.get("token")
                self._token = tuple(token) if isinstance(token, list) else None
                return True
            if layout not in (FLOAT16_LAYOUT, JSON_KEYS_LAYOUT):
                return False
            count = len(meta["paths"])
            matrix, parts = _member(stored, "rows"), _member(stored, "part_rows")
            if not (matrix.shape == (count, DIM) and len(meta["sigs"]) == count
                    and len(meta["parts"]) == count
                    and parts.shape == (sum(meta["parts"]), DIM)):
                raise ValueError("vectors file does not hold together")
            self.paths, self.sigs = list(meta["paths"]), list(meta["sigs"])
            self.parts = [int(n) for n in meta["parts"]]
            self.matrix = np.array(matrix, np.float32)
            self.part_matrix = np.array(parts, np.float32)
            # Converted once: written back in the current layout.
            self._pending = max(self._pending, SAVE_ROWS)
            _UNSAVED.add(self)
            return True

    def holds(self, token: tuple | None) -> bool:
        """Whether the rows are those of the manifest state `token` (Manifest.token)."""
        self._load()
        return token is not None and token == self._token

    def sync(self, notes: dict[str, list[int]], text_of: Callable[[str], EmbedText | None],
             embedder: Embedder, token: tuple | None = None,
             embedded: dict[str, Embedded] | None = None) -> None:
        """Bring the vectors in line with `notes` (relpath -> signature, the index's
        manifest): embed what is new or changed, drop what is gone. A few changed or new
        notes are written into their rows in place (appended ones into spare room), so a
        small commit costs one pass over the signatures, not a copy of every row.
        `token`: the manifest state `notes` are (Manifest.token); rows last brought in
        line with that same state are used as they are, without looking at each note.
        `embedded`: rows already made for some notes (`embed_notes`), taken as they are
        where the note needs one (its text is not read again)."""
        if self._synced is notes and self._file_key() == self._loaded_key:
            return
        self._load()
        if token is not None and token == self._token:
            self._synced = notes
            return
        row, sigs = self._row, self.sigs
        todo = [rel for rel, sig in notes.items()
                if (at := row.get(rel)) is None or sigs[at] != sig]
        added = sum(1 for rel in todo if rel not in row)
        gone = len(self.paths) - (len(notes) - added)  # stored notes no longer listed
        # A note that could not be read is not in the rows: the next sync tries it again.
        complete = True
        if todo or gone:
            made = embedded or {}
            found: list[tuple[str, EmbedText | Embedded]] = [
                (rel, got) for rel in todo
                if (got := made.get(rel) or text_of(rel)) is not None]
            complete = len(found) == len(todo)
            in_place = not gone and complete and all(
                rel not in row or self.parts[row[rel]] == len(got[1]) for rel, got in found)
            if in_place:
                self._update(notes, found, embedder)
            else:
                self._rebuild(notes, found, embedder)
            self._pending += len(todo) + gone
            _UNSAVED.add(self)
        self._token = token if complete else None
        if (todo or gone) and (self._loaded_key is None or self._pending >= SAVE_ROWS
                               or time.monotonic() - self._saved_at >= SAVE_SECONDS):
            self._try_save()
        self._synced = notes

    def _vectors_of(self, found: list[tuple[str, EmbedText | Embedded]],
                    embedder: Embedder) -> tuple[Any, Any]:
        """(note rows, section rows) of `found` in its order: the texts embedded, the rows
        already made taken as they are."""
        import numpy as np

        texts = [(rel, got) for rel, got in found if isinstance(got[0], str)]
        if len(texts) == len(found):
            return _vectors(texts, embedder, self.folder)
        made = embed_notes(texts, embedder, self.folder)
        rows = [made.get(rel) or got for rel, got in found]
        return (np.stack([row for row, _ in rows]).astype(np.float32, copy=False),
                np.concatenate([np.zeros((0, DIM), dtype=np.float32),
                                *(parts for _, parts in rows)]).astype(np.float32,
                                                                       copy=False))

    def _update(self, notes: dict[str, list[int]],
                found: list[tuple[str, EmbedText | Embedded]],
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

    def _rebuild(self, notes: dict[str, list[int]],
                 found: list[tuple[str, EmbedText | Embedded]],
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

    def _save(self) -> None:
        import numpy as np

        self.folder.mkdir(parents=True, exist_ok=True)
        # A new temporary file each save (random name, O_EXCL, no-follow: atomic.open_new):
        # two processes saving at once never share one, a planted link is never followed.
        fd, temp = open_new(self.folder, VECTORS, prefix=f".{VECTORS}.")
        keys = json.dumps({"model": MODEL, "layout": LAYOUT, "token": self._token})
        members = {"keys": np.array(keys),
                   "rows": self.matrix.astype(np.float32, copy=False),
                   "part_rows": self.part_matrix.astype(np.float32, copy=False),
                   # A name that is not UTF-8 (os.fsdecode's surrogates) is kept as it is.
                   "paths": np.frombuffer("\0".join(self.paths).encode("utf-8", "surrogatepass"),
                                          dtype=np.uint8),
                   "sigs": np.array(self.sigs, dtype=np.int64).reshape(-1, 2),
                   "parts": np.array(self.parts, dtype=np.int32),
                   "order": np.array(sorted(range(len(self.paths)),
                                            key=self.paths.__getitem__), dtype=np.int32)}
        try:
            with os.fdopen(fd, "wb") as handle:
                _write_members(handle, members)
            (_, _, size), digest = digest_of(str(temp))
            os.replace(temp, self.folder / VECTORS)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        self._loaded_key = self._file_key()
        # Written whole: the next processes compare their own digest of it with this one
        # instead of each member's CRC-32.
        _mark_checked(self.folder, [size, digest])
        self._pending = 0
        _UNSAVED.discard(self)
        self._saved_at = time.monotonic()

    def cosines(self, query: Any, rows: Any = None) -> Any:
        """Cosine similarity of each row (`paths` order) with a unit-length query vector,
        as a numpy float32 vector; `row` finds a note's. With `rows` (a numpy array of row
        numbers), only those rows', in that order."""
        import numpy as np

        if self.matrix is None or not len(self.matrix):
            return np.zeros(0, dtype=np.float32)
        # A block of rows at a time, each below the size at which OpenBLAS spreads one
        # product over threads: on a busy machine a threaded 10k-row product took 8-24 ms
        # instead of 0.1 ms (bench/README.md, "numpy scorer"). The floats are those of one
        # single-threaded product, on any machine; a threaded one differed from them in
        # the last bit on a few rows next to where it split the rows among the cores.
        if rows is not None:
            return np.concatenate([np.zeros(0, dtype=np.float32)] + [
                self.matrix[rows[start:start + PRODUCT_ROWS]] @ query
                for start in range(0, len(rows), PRODUCT_ROWS)])
        return np.concatenate([self.matrix[start:start + PRODUCT_ROWS] @ query
                               for start in range(0, len(self.matrix), PRODUCT_ROWS)])

    def parts_similarities(self, rows: list[int | None],
                           query: Any) -> list[list[float] | None]:
        """For each note at `rows` (`row`; None for a note without one), the cosine of each
        of its section rows with a unit-length query vector, in the order of its stored
        chunks (one product per note); None for a note embedded whole only."""
        import numpy as np

        found = [row for row in rows if row is not None]
        parts = self._raw.get("parts")
        if parts is None:
            counts = [self.parts[row] for row in found]
        else:  # the file's member, not yet a list: the counts in one look
            counts = parts[np.array(found, dtype=np.intp)].tolist()
        count_of = dict(zip(found, counts, strict=True))
        out: list[list[float] | None] = []
        for row in rows:
            if row is None or not count_of[row]:
                out.append(None)
                continue
            start, count = self._sections(row)
            out.append((self.part_matrix[start:start + count] @ query).tolist())
        return out


def _vectors(found: list[tuple[str, EmbedText]], embedder: Embedder,
             folder: Path) -> tuple[Any, Any]:
    """(note rows, section rows) of the texts `found`, in its order, BATCH texts a call."""
    import numpy as np

    def embedded(texts: list[str]) -> Any:
        return np.concatenate([np.zeros((0, DIM), dtype=np.float32), *(
            embedder.embed(texts[i:i + BATCH], folder) for i in range(0, len(texts), BATCH))
                               ]).astype(np.float32)

    return (embedded([got[0] for _, got in found]),
            embedded([text for _, got in found for text in got[1]]))


def embed_notes(found: list[tuple[str, EmbedText]], embedder: Embedder,
                folder: Path) -> dict[str, Embedded]:
    """Each note's row and section rows, for `VectorStore.sync(embedded=...)`: what a
    build's writer makes of the notes it read, on its own core."""
    rows, part_rows = _vectors(found, embedder, folder)
    out: dict[str, Embedded] = {}
    at = 0
    for number, (rel, got) in enumerate(found):
        count = len(got[1])
        out[rel] = (rows[number], part_rows[at:at + count])
        at += count
    return out


def _write_members(handle: Any, members: dict[str, Any]) -> None:
    """An uncompressed zip of `.npy` members, as `np.savez` writes it, but with each
    member's data starting ALIGN-byte aligned (a padding field in its zip header; the .npy
    header after it is a multiple of 64 bytes), so that a reader can map it."""
    import numpy as np

    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as out:
        for name, array in members.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            # The local header: 30 bytes, the name, the extra fields (ours, then the
            # 20-byte zip64 one).
            pad = -(handle.tell() + 30 + len(info.filename) + 20) % ALIGN
            if pad:
                pad += ALIGN if pad < 4 else 0
                info.extra = struct.pack("<HH", _PAD_FIELD, pad - 4) + bytes(pad - 4)
            with out.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _data_start(handle: Any, info: zipfile.ZipInfo) -> int:
    """Where the data of the stored member `info` starts in the file."""
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad member header: {info.filename}")
    name_size, extra_size = struct.unpack("<HH", local[26:30])
    return info.header_offset + 30 + name_size + extra_size


def _as_checked(folder: Path) -> list[int] | None:
    """The [size, XXH3-64] of the vectors file as last written or found whole."""
    with contextlib.suppress(OSError, ValueError):
        found = json.loads((folder / CHECKED).read_bytes())
        return found if isinstance(found, list) else None
    return None


def _mark_checked(folder: Path, key: list[int]) -> None:
    with contextlib.suppress(OSError):  # derived; without it the next process checks again
        atomic_write_bytes(folder / CHECKED, json.dumps(key).encode(), durable=False)


def _check_crcs(stored: zipfile.ZipFile) -> None:
    """Each member's bytes against the CRC-32 the zip recorded when it was written
    (issue #31): mapped, the rows are read without zipfile's own check, so a flipped bit
    changed similarities with no error. ValueError names the first member that differs;
    the file is then made again from the notes. Every process that reads the file first
    hashes it whole (XXH3-64 over the mapped file, ~3 ms at 10k notes); only when that
    digest is not the one recorded in CHECKED (a file damaged since, or written before the
    digest was recorded) are the members' CRC-32s read, and a file found whole that way has
    its digest recorded. So a bit that rots in place under an unchanged mtime is found by
    the next process, as for the segment files (checksums.py)."""
    handle = stored.fp
    assert handle is not None
    for info in stored.infolist():
        if info.compress_type != zipfile.ZIP_STORED:
            continue  # zipfile checks it as it inflates the member
        handle.seek(_data_start(handle, info))
        left, crc = info.file_size, 0
        while left > 0:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                break
            crc, left = zlib.crc32(chunk, crc), left - len(chunk)
        if left or crc != info.CRC:
            raise ValueError(f"vectors file member {info.filename} fails its checksum")


def _member(stored: zipfile.ZipFile, name: str) -> Any:
    """The array `name` of an open vectors file: mapped copy-on-write where its data is
    stored aligned (and the system lets a mapped file be replaced), else read."""
    import numpy as np

    info = stored.getinfo(name + ".npy")
    handle = stored.fp
    if os.name == "posix" and info.compress_type == zipfile.ZIP_STORED and handle is not None:
        start = _data_start(handle, info)
        handle.seek(start)
        version = np.lib.format.read_magic(handle)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(handle)
        offset = handle.tell()
        size = dtype.itemsize * int(np.prod(shape))
        if (offset % ALIGN == 0 and not fortran and dtype.kind in "fiu" and shape and size
                and offset - start + size == info.file_size):
            return np.asarray(np.memmap(handle, dtype=dtype, mode="c", offset=offset,
                                        shape=shape))
    with stored.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


@atexit.register
def _flush_all() -> None:
    for store in list(_UNSAVED):
        with contextlib.suppress(Exception):  # derived data; the next process embeds again
            store.flush()

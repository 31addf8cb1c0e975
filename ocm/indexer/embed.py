"""Meaning as well as words: static embeddings from WordLlama (`l2_supercat`, 256-d), whose
weights and tokenizer ship inside its wheel. Nothing is ever downloaded, and a model that
cannot load leaves search keyword-only (said once, and by `ocm doctor`).

On by default; `OCM_SEMANTIC=0` or `{"semantic": false}` in the vault's `config.json` turns it
off (the variable wins over the file).

A WordLlama embedding is the mean of the text's token vectors. Short texts (a query, a note
or two) are embedded without importing wordllama: the tokenizer is reproduced in Python
(`ocm/indexer/bpe.py`) and the token vectors are read from the wheel's safetensors file
through a memory map, so a one-shot `ocm search` pays for numpy and a few rows of the
matrix. Bulk embedding (an index build) tokenizes with the same tokenizer compiled (the
`tokenizers` package wordllama uses) over the same rows. Both give wordllama's vectors
(tests/test_semantic.py compares them with wordllama's own `embed`).

The hook path never imports this module (numpy).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import struct
import time
from array import array
from functools import lru_cache
from pathlib import Path
from typing import Any

from ocm.vault.racy import RACY_NS

from .bpe import MAX_SEGMENT, Tokenizer, TooLong, wheel_folder

SEMANTIC_ENV = "OCM_SEMANTIC"
CONFIG = "config.json"  # in the vault folder; shared with the transcript switch
CONFIG_KEY = "semantic"
MODEL = "l2_supercat"
DIM = 256
TENSOR = "embedding.weight"
# Texts of up to this many characters in all are embedded in Python; more go to the compiled
# tokenizer (`tokenizers`: its import and load cost ~0.1 s, Python's merging ~2 us a character).
LEAN_CHARS = 20_000
# Texts of at most this many tokens are embedded together, a length at a time (`_lean`).
SHORT_TOKENS = 16
# Texts per call of `_token_ids` in a bulk embedding (a build's calls: vectors.BATCH texts):
# their pieces and token ids are held at once (~60 bytes a piece, ~8 characters: ~4 MB for
# 256 notes of ~2,000 characters).
MODEL_BATCH = 256
_OFF = ("0", "false", "no", "off", "")
# A token id as `_token_ids` packs it (an unsigned int of the machine's `array("I")`).
_ID_BYTES = array("I").itemsize
# A text's pieces for the segment memo (`_token_ids`): it is cut at each space that follows
# a character other than a space (the start of a `▁`-run once normalized); how many distinct
# pieces a process keeps tokenized (~150 bytes each; more only while one call's texts hold
# more).
_PIECES = re.compile("(?<=[^ ]) ")
SEGMENTS_KEPT = 100_000
# The tokenizer's added tokens, matched in the raw text before it is normalized.
_ADDED = re.compile("<unk>|<s>|</s>")


def enabled(vault_root: Path | None = None) -> bool:
    """On unless OCM_SEMANTIC or the vault's config.json turns it off."""
    value = os.environ.get(SEMANTIC_ENV)
    if value is not None:
        return value.strip().lower() not in _OFF
    return _config_value(vault_root) is not False


# config.json's path -> (its stat key when read, or None for no file; its `semantic`).
_config_seen: dict[str, tuple[tuple[int, int, int, int] | None, Any]] = {}


def _config_value(vault_root: Path | None) -> Any:
    """The vault's `semantic` setting, read again only when its config.json changed (a warm
    search asks three times: the index's vectors, fusion, the failure notice)."""
    if vault_root is None:
        return None
    path = os.path.join(vault_root, CONFIG)
    try:
        found = os.stat(path)
    except OSError:
        key = None
    else:
        key = (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    seen = _config_seen.get(path)
    if seen is not None and seen[0] == key:
        return seen[1]
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        config = None
    value = config.get(CONFIG_KEY) if isinstance(config, dict) else None
    # A file changed within RACY_NS of the read may change again within one timestamp tick
    # at the same size (git's racy rule): read again next time.
    if key is None or time.time_ns() - found.st_mtime_ns >= RACY_NS:
        _config_seen[path] = (key, value)
    return value


def switch(vault_root: Path | None = None) -> str:
    """What turned semantic search on or off, in words."""
    value = os.environ.get(SEMANTIC_ENV)
    if value is not None:
        return f"{SEMANTIC_ENV}={value.strip()}"
    if _config_value(vault_root) is False:
        return f'"{CONFIG_KEY}": false in {CONFIG}'
    return "default"


def _weights(folder: Path) -> Any:  # -> numpy.memmap (vocabulary, DIM) float16
    """The token-vector matrix inside the wheel's safetensors file, memory-mapped."""
    import numpy as np

    path = folder / "weights" / f"{MODEL}_{DIM}.safetensors"
    with open(path, "rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(size))
    spec = header[TENSOR]
    rows, dim = spec["shape"]
    begin, end = spec["data_offsets"]
    if spec["dtype"] != "F16" or dim != DIM or end - begin != rows * dim * 2:
        raise ValueError(f"{path.name}: {TENSOR} is not {DIM}-d float16")
    return np.memmap(path, dtype="<f2", mode="r", offset=8 + size + begin, shape=(rows, dim))


class Embedder:
    """Unit-length embeddings of texts (float32 rows)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.tokenizer_path = folder / "tokenizers" / f"{MODEL}_tokenizer_config.json"
        if not self.tokenizer_path.is_file():
            raise FileNotFoundError(f"no {self.tokenizer_path.name} in the wordllama wheel")
        self.matrix = _weights(folder)
        self._tokenizer: Tokenizer | None = None
        self._bulk: tuple[Any, Any] | None = None
        # A text's segment (`_token_ids`) -> its token ids, at most SEGMENTS_KEPT of them.
        self._segments: dict[str, bytes] = {}

    def embed(self, texts: list[str], cache: Path | None = None) -> Any:
        """Embeddings of `texts`, shape (len(texts), DIM); `cache` is a folder that may keep
        the tokenizer's table (the index's)."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        vectors = None
        if sum(len(text) for text in texts) <= LEAN_CHARS:
            with contextlib.suppress(TooLong):  # a very long word: the compiled tokenizer
                vectors = self._lean(texts, cache)
        if vectors is None:
            try:
                vectors = self._compiled(texts)
            except Exception:  # noqa: BLE001 - the compiled tokenizer failed: same vectors, slower
                vectors = self._lean(texts, cache, max_segment=None)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)

    def _lean(self, texts: list[str], cache: Path | None,
              max_segment: int | None = MAX_SEGMENT) -> Any:
        tokenizer = self.tokenizer(cache)
        return self._pooled([tokenizer.encode(text, max_segment) for text in texts],
                            self.matrix)

    def _compiled(self, texts: list[str]) -> Any:
        """`_lean`'s vectors (the same floats) with the wheel's tokenizer compiled
        (`compiled()`): the token ids of MODEL_BATCH texts at a time (`_token_ids`),
        pooled over the rows as float32 (the values of the float16 rows `_lean` reads)."""
        import numpy as np

        _, rows = self.compiled()
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for at in range(0, len(texts), MODEL_BATCH):
            packed = self._token_ids(texts[at:at + MODEL_BATCH])
            counts = np.fromiter(map(len, packed), dtype=np.int64, count=len(packed))
            out[at:at + len(packed)] = self._pooled_ids(
                np.frombuffer(b"".join(packed), dtype=f"=u{_ID_BYTES}"), counts // _ID_BYTES, rows)
        return out

    def _token_ids(self, texts: list[str]) -> list[bytes]:
        """The compiled tokenizer's ids of each text, packed (`array("I")` bytes), a
        piece at a time. No merge joins across the start of a `▁`-run that follows a
        character (`bpe.py`), so a text's ids are its segments' ids one after the other:
        a piece (`_PIECES`: a segment as the raw text has it, before the normalizer's `▁`
        in front and for each space) goes once through the compiled BPE model and is
        remembered, and a note's ~300 pieces are looked up (the whole pipeline costs ~0.6
        us a character, ~1 ms a note: most of a build's embedding, and more than any other
        step of reading a note). A text with no run of spaces and none in front is cut
        by `str.split`, which gives `_PIECES`' pieces faster. A text holding an added
        token (`<s>`...), which the pipeline matches before normalizing, or a `▁` of its
        own goes through the whole pipeline."""
        tokenizer, _ = self.compiled()
        known = self._segments
        split: list[list[str] | None] = []
        for text in texts:
            if not text:
                split.append([])
            elif "\u2581" in text or _ADDED.search(text):
                split.append(None)
            elif "  " in text or text[0] == " ":
                split.append(_PIECES.split(text))
            else:
                split.append(text.split(" "))
        wanted = set(itertools.chain.from_iterable(filter(None, split)))
        new = wanted.difference(known)
        if new:
            if len(known) + len(new) > SEGMENTS_KEPT:  # (then these texts' alone)
                known.clear()
                new = wanted
            tokenize = tokenizer.model.tokenize
            for piece in new:
                known[piece] = array("I", [token.id for token in tokenize(
                    "\u2581" + piece.replace(" ", "\u2581"))]).tobytes()
        return [b"".join(map(known.__getitem__, pieces)) if pieces is not None
                else array("I", tokenizer.encode(text, add_special_tokens=False).ids).tobytes()
                for text, pieces in zip(texts, split, strict=True)]

    def compiled(self) -> tuple[Any, Any]:  # -> (tokenizers.Tokenizer, numpy array)
        """The wheel's tokenizer in `tokenizers` (Rust, what wordllama loads it with),
        unpadded and untruncated, and the token rows as float32 (~33 MB: a build's notes
        gather ~1,000 rows each, converting them from float16 every time cost more),
        loaded once. Not through wordllama, which gave the same two: its import costs
        ~0.8 s of CPU before a build's first fork."""
        if self._bulk is None:
            import numpy as np
            from tokenizers import Tokenizer as Compiled

            tokenizer = Compiled.from_file(str(self.tokenizer_path))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._bulk = tokenizer, np.ascontiguousarray(self.matrix, dtype=np.float32)
        return self._bulk

    @staticmethod
    def _pooled(encoded: list[list[int]], matrix: Any) -> Any:
        """Each text's mean token row, from the texts' token ids and the token rows
        (`matrix`: float16 or float32, the same values)."""
        import numpy as np

        total = sum(map(len, encoded))
        ids = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int64, count=total)
        counts = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        return Embedder._pooled_ids(ids, counts, matrix)

    @staticmethod
    def _pooled_ids(ids: Any, counts: Any, matrix: Any) -> Any:
        """`_pooled` from all texts' token ids one after the other (`ids`) and each text's
        count of them (`counts`), numpy arrays."""
        import numpy as np

        out = np.zeros((len(counts), DIM), dtype=np.float32)
        if not len(ids):
            return out
        # Rows are read from the plain array (indexing the memmap costs ~10 µs a call, and
        # a search embeds a note's words one text each), `take` clipping the ids: the rows
        # `matrix[np.minimum(ids, last)]` gives, faster.
        matrix = np.asarray(matrix)
        # Texts of a few tokens (a note's words) a length at a time, from one gather of
        # their rows: their rows added in order from zero, as `sum(axis=0)` adds them. (The
        # lengths sorted by Python: `np.unique` would load numpy's masked arrays.)
        is_long = counts > SHORT_TOKENS
        long = np.flatnonzero(is_long).tolist()
        sizes = sorted(set(counts[(counts > 0) & ~is_long].tolist()))
        if sizes:
            short_counts = np.where(is_long, 0, counts) if long else counts
            rows = np.take(matrix, ids[np.repeat(~is_long, counts)] if long else ids, axis=0,
                           mode="clip").astype(np.float32, copy=False)
            short_starts = np.cumsum(short_counts) - short_counts
            for size in sizes:
                texts_of_size = np.flatnonzero(counts == size)
                first = short_starts[texts_of_size]
                total_rows = np.zeros((len(texts_of_size), DIM), dtype=np.float32)
                for offset in range(size):
                    total_rows += rows[first + offset]
                out[texts_of_size] = total_rows / np.float32(size)
        # Longer texts one at a time, each text's rows gathered into one buffer and summed
        # there (while they are in the core's cache: a gather of many texts' rows, ~1 KB a
        # token, cost twice as much): the same floats.
        if long:
            into = (np.empty((int(counts.max()), DIM), dtype=np.float32)
                    if matrix.dtype == np.float32 else None)
            starts = np.cumsum(counts) - counts
            for row in long:
                at, size = int(starts[row]), int(counts[row])
                taken = np.take(matrix, ids[at:at + size], axis=0, mode="clip",
                                out=None if into is None else into[:size])
                out[row] = taken.astype(np.float32, copy=False).sum(axis=0) / size
        return out

    def tokenizer(self, cache: Path | None = None) -> Tokenizer:
        """The lean tokenizer (loaded once; `cache` may keep its table, as in `embed`)."""
        if self._tokenizer is None:
            self._tokenizer = (Tokenizer.cached(self.tokenizer_path, cache) if cache is not None
                               else Tokenizer.from_json(self.tokenizer_path))
        return self._tokenizer


@lru_cache(maxsize=1)
def _load() -> tuple[Embedder | None, str]:
    try:
        return Embedder(wheel_folder()), ""
    except Exception as exc:  # noqa: BLE001 - any failure means keyword-only, said once
        return None, f"{type(exc).__name__}: {exc}"


def embedder(vault_root: Path | None = None) -> tuple[Embedder | None, str]:
    """(the embedder, "") or (None, why not): turned off, or the model failed to load."""
    if not enabled(vault_root):
        return None, f"turned off ({switch(vault_root)})"
    return _load()


def failure_notice(vault_root: Path | None = None) -> str | None:
    """The one line saying that search is keyword-only because the model failed to load;
    given once per process (None after that, when it loaded, or when turned off)."""
    global _announced
    if _announced or not enabled(vault_root):
        return None
    model, why = _load()
    if model is not None:
        return None
    _announced = True
    return f"ocm: semantic search unavailable ({why}); searching by keywords only"


_announced = False

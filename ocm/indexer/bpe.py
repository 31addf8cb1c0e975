"""WordLlama's tokenizer without the `tokenizers` package: the same byte-fallback BPE (the
Llama-2 vocabulary shipped in the wordllama wheel) in plain Python, so a one-shot
`ocm search` can embed its query without importing wordllama, tokenizers or safetensors.

What the tokenizer JSON says, and what this reproduces token for token:
* added tokens `<unk>`, `<s>`, `</s>` found in the raw text are those tokens, and the text
  between them is tokenized on its own;
* normalizer: prepend `▁` to a non-empty piece, then replace every space with `▁`;
* no pre-tokenizer: BPE merges over the whole piece, lowest merge rank first and the leftmost
  of equal ranks first, then characters outside the vocabulary become their UTF-8 bytes
  (`<0xNN>` tokens).

No vocabulary token holds a `▁` after another character, so no merge ever joins across the
start of a `▁`-run that follows a letter: each such segment is merged on its own (and
remembered, so repeated words cost a lookup).

The vocabulary and merges are read from the wheel's JSON once and kept as a marshal table
(about 10x faster to load than the JSON) in a folder the caller names, keyed by the JSON's
size and mtime. The 61k merges are kept there as two sorted arrays of 64-bit numbers, not a
dict: a fresh process loads them in ~0.1 ms instead of building a 61k-entry dict (~10-20 ms),
and looks up only the pairs its texts meet (a binary search, then remembered).
"""

from __future__ import annotations

import json
import marshal
import os
import re
import sys
from array import array
from bisect import bisect_left
from pathlib import Path

from ocm.vault.atomic import atomic_write_bytes

# Segments: a run of `▁` and what follows it up to the next `▁` (see the module docstring).
_SEGMENT = re.compile("▁*[^▁]*")
# Merging is quadratic in a segment's length; longer segments are left to the real tokenizer.
MAX_SEGMENT = 400
# Texts of at most SHORT_TEXT characters are remembered whole (SHORT_TEXTS_KEPT at most).
SHORT_TEXT = 48
SHORT_TEXTS_KEPT = 200_000
TABLE_VERSION = 2
# The table's file: named apart from version 1's (`tokenizer.marshal`, a dict of merges), so
# code of either version keeps its own beside the other's in one index folder.
TABLE = "tokenizer.v2.marshal"
SHIFT = 1 << 17  # token ids and merge ranks both fit below this


class TooLong(ValueError):
    """A segment too long to merge in Python (a caller uses the real tokenizer instead)."""


class Tokenizer:
    def __init__(self, chars: dict[str, int], pairs: bytes, merged: bytes,
                 special: dict[str, int], byte_ids: list[int]) -> None:
        """`pairs` and `merged`: the merges as two arrays of int64 (native byte order) of
        one length, `pairs` ascending (left id * SHIFT + right id), `merged` at the same
        place (rank * SHIFT + merged id)."""
        self.chars = chars  # the one-character tokens
        self._pairs = array("q", pairs)
        self._merged = array("q", merged)
        if len(self._pairs) != len(self._merged):
            raise ValueError("a merge table whose two arrays differ in length")
        # The pairs looked up so far -> rank * SHIFT + merged id, or -1 for none.
        self._known: dict[int, int] = {}
        self.special = special
        self._bytes = byte_ids
        self._split = re.compile("(" + "|".join(re.escape(s) for s in special) + ")")
        self._seen: dict[str, list[int]] = {}
        # Whole short texts (a note's words, which a search embeds one by one) -> their ids.
        self._short: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_json(cls, path: Path) -> Tokenizer:
        spec = json.loads(path.read_text(encoding="utf-8"))
        model = spec["model"]
        normalizers = [(n["type"], n.get("prepend") or n.get("content"))
                       for n in spec["normalizer"]["normalizers"]]
        if (model["type"] != "BPE" or not model.get("byte_fallback") or spec["pre_tokenizer"]
                or normalizers != [("Prepend", "▁"), ("Replace", "▁")]):
            raise ValueError(f"{path.name}: not the Llama-style BPE this tokenizer reproduces")
        vocab: dict[str, int] = model["vocab"]
        if len(vocab) > SHIFT or len(model["merges"]) > SHIFT:
            raise ValueError(f"{path.name}: a vocabulary larger than this table holds")
        merges: dict[int, int] = {}
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ") if isinstance(merge, str) else merge
            pair = vocab[left] * SHIFT + vocab[right]
            if pair not in merges:  # the first (lowest-ranked) occurrence wins
                merges[pair] = rank * SHIFT + vocab[left + right]
        chars = {token: id_ for token, id_ in vocab.items() if len(token) == 1}
        special = {t["content"]: t["id"] for t in spec["added_tokens"]}
        pairs = sorted(merges)
        return cls(chars, array("q", pairs).tobytes(),
                   array("q", [merges[pair] for pair in pairs]).tobytes(), special,
                   [vocab[f"<0x{b:02X}>"] for b in range(256)])

    def _merge(self, pair: int) -> int:
        """rank * SHIFT + merged id of the pair `left id * SHIFT + right id`, -1 for none."""
        at = bisect_left(self._pairs, pair)
        found = self._merged[at] if at < len(self._pairs) and self._pairs[at] == pair else -1
        self._known[pair] = found
        return found

    @classmethod
    def cached(cls, source: Path, folder: Path) -> Tokenizer:
        """The tokenizer of `source`, through a marshal table kept in `folder`."""
        stat = source.stat()
        key = [TABLE_VERSION, source.name, stat.st_size, stat.st_mtime_ns,
               sys.version_info[:2], sys.byteorder]
        table = folder / TABLE
        try:
            stored_key, *parts = marshal.loads(table.read_bytes())
            if stored_key == key:
                return cls(*parts)
        except (OSError, ValueError, EOFError, TypeError):
            pass  # missing, stale or damaged: made again from the JSON
        made = cls.from_json(source)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(table, marshal.dumps(
                [key, made.chars, made._pairs.tobytes(), made._merged.tobytes(), made.special,
                 made._bytes]), durable=False)
        except OSError:
            pass  # a read-only index: the JSON is read again next time
        return made

    def encode(self, text: str, max_segment: int | None = MAX_SEGMENT) -> list[int]:
        """Token ids of `text`, as WordLlama's tokenizer gives them (no special tokens);
        TooLong for a segment over `max_segment` characters (None: no limit)."""
        short = len(text) <= SHORT_TEXT and (max_segment is None or len(text) < max_segment)
        if short:
            known = self._short.get(text)
            if known is not None:
                return list(known)
        ids: list[int] = []
        for piece in self._split.split(text) if self.special else [text]:
            if piece in self.special:
                ids.append(self.special[piece])
            elif piece:
                for segment in _SEGMENT.findall("▁" + piece.replace(" ", "▁")):
                    if segment:
                        ids.extend(self._segment(segment, max_segment))
        if short:
            if len(self._short) >= SHORT_TEXTS_KEPT:
                self._short.clear()
            self._short[text] = tuple(ids)
        return ids

    def _segment(self, segment: str, max_segment: int | None) -> list[int]:
        known = self._seen.get(segment)
        if known is not None:
            return known
        if max_segment is not None and len(segment) > max_segment:
            raise TooLong(f"a {len(segment)}-character word")
        # A character outside the vocabulary stays a string (merged with nothing) until the
        # end, where it becomes its bytes: no merge involves a byte token.
        symbols: list[int | str] = [self.chars.get(ch, ch) for ch in segment]
        merge_of = self._known
        while len(symbols) > 1:
            best = -1
            at = 0
            for k in range(len(symbols) - 1):
                left, right = symbols[k], symbols[k + 1]
                if isinstance(left, str) or isinstance(right, str):
                    continue
                pair = left * SHIFT + right
                found = merge_of.get(pair)
                if found is None:
                    found = self._merge(pair)
                if found >= 0 and (best < 0 or found < best):  # ranks: leftmost lowest wins
                    best, at = found, k
            if best < 0:
                break
            symbols[at:at + 2] = [best % SHIFT]
        ids: list[int] = []
        for symbol in symbols:
            if isinstance(symbol, str):  # outside the vocabulary: its UTF-8 bytes
                ids.extend(self._bytes[b] for b in symbol.encode("utf-8"))
            else:
                ids.append(symbol)
        self._seen[segment] = ids
        return ids


def wheel_folder() -> Path:
    """The installed wordllama package's folder, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("wordllama is not installed")
    return Path(os.fspath(next(iter(spec.submodule_search_locations))))

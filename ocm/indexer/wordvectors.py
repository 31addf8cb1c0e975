"""Single words' unit vectors and token pieces, kept made across searches.

A search phrase's meaning-only hits are read word by word (`ontopic.WordMeaning.best`):
each note's first few hundred distinct words embedded, then split into token pieces where
a pair comes up. A warm process meets the same words in search after search (a vault's
vocabulary is far smaller than its notes' words summed), so each word is embedded and
split once and its row kept here. The rows are the floats `Embedder.embed` gives for the
words in one call: a short word list takes the embedder's lean path, which makes and
normalises each text's row on its own (its tokens' rows added in order), so a row does not
depend on the other words embedded beside it. A list the lean path would not take (over
`LEAN_CHARS` in all, or a word too long for the lean tokenizer) is embedded as before, its
words split into pieces only when asked.

A note met again (the same text) is not read for its words again either: its words' rows
in the kept matrix are kept with the words (`text_vectors`), until the words start again.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .bpe import MAX_SEGMENT
from .embed import DIM, LEAN_CHARS

# Words kept per embedder (~1.3 KB each: 256 float32, the pieces, the key): ~26 MB at most.
WORDS_KEPT = 20_000
# Notes' texts whose words' rows are kept (`text_vectors`): the texts themselves are the
# keys, TEXT_CHARS_KEPT characters of them at most (~4 MB, plus ~8 bytes a word's row).
TEXT_CHARS_KEPT = 4_000_000


class _Kept:
    """One embedder's words: each word's row in `matrix` (grown as words come) and pieces."""

    def __init__(self) -> None:
        self.at: dict[str, int] = {}
        self.pieces: list[frozenset[int]] = []
        self.matrix: Any = None
        # A text's words as rows of `matrix` (numpy intp), most recently used last.
        self.texts: OrderedDict[str, Any] = OrderedDict()
        self.text_chars = 0
        self.clear()

    def clear(self) -> None:
        import numpy as np

        self.at, self.pieces = {}, []
        self.matrix = np.zeros((0, DIM), dtype=np.float32)
        self.texts, self.text_chars = OrderedDict(), 0

    def keep_text(self, text: str, rows: Any) -> None:
        if len(text) > TEXT_CHARS_KEPT:
            return
        while self.texts and self.text_chars + len(text) > TEXT_CHARS_KEPT:
            self.text_chars -= len(self.texts.popitem(last=False)[0])
        self.texts[text] = rows
        self.text_chars += len(text)

    def add(self, words: list[str], rows: Any, tokenizer: Any) -> None:
        import numpy as np

        first = len(self.at)
        if first + len(words) > len(self.matrix):
            size = max(first + len(words), min(max(2 * len(self.matrix), 1024), WORDS_KEPT))
            grown = np.zeros((size, DIM), dtype=np.float32)
            grown[:first] = self.matrix[:first]
            self.matrix = grown
        self.matrix[first:first + len(words)] = rows
        for offset, word in enumerate(words):
            self.at[word] = first + offset
            self.pieces.append(frozenset(tokenizer.encode(word)))


_kept: weakref.WeakKeyDictionary[Any, _Kept] = weakref.WeakKeyDictionary()


Vectors = tuple[Any, Callable[[int], frozenset[int]]]


def word_vectors(model: Any, folder: Any, words: list[str]) -> Vectors:
    """The unit vectors of `words` (one row each, as `model.embed(words, folder)` gives
    them), and the token pieces of the word at a position."""
    found = _kept_rows(model, folder, words)
    if found is None:
        tokenizer = model.tokenizer(folder)
        return (model.embed(words, folder),
                lambda at: frozenset(tokenizer.encode(words[at])))  # split when asked
    kept, rows = found
    pieces = kept.pieces
    return kept.matrix[rows], lambda at: pieces[rows[at]]


def text_vectors(model: Any, folder: Any, text: str,
                 words_of: Callable[[str], list[str]]) -> Vectors | None:
    """`word_vectors` of the words `words_of(text)` finds (None when it finds none), the
    words found and their rows looked up once for a text met again."""
    import numpy as np

    kept = _kept.get(model)
    rows = kept.texts.get(text) if kept is not None else None
    if kept is not None and rows is not None:
        kept.texts.move_to_end(text)
    else:
        words = words_of(text)
        if not words:
            return None
        found = _kept_rows(model, folder, words)
        if found is None:
            return word_vectors(model, folder, words)
        kept, listed = found
        rows = np.array(listed, dtype=np.intp)
        kept.keep_text(text, rows)
    pieces = kept.pieces
    return kept.matrix[rows], lambda at: pieces[rows[at]]


def _kept_rows(model: Any, folder: Any, words: list[str]) -> tuple[_Kept, list[int]] | None:
    """The kept words of `model` and the rows of `words` among them (the missing ones
    embedded and kept first); None for a list the embedder's lean path would not take."""
    if sum(map(len, words)) > LEAN_CHARS or max(map(len, words), default=0) >= MAX_SEGMENT:
        return None
    kept = _kept.get(model)
    if kept is None:
        kept = _kept[model] = _Kept()
    missing = list(dict.fromkeys(word for word in words if word not in kept.at))
    if len(kept.at) + len(missing) > WORDS_KEPT:  # a vocabulary past the bound: start again
        kept.clear()
        missing = list(dict.fromkeys(words))
    if missing:
        kept.add(missing, model.embed(missing, folder), model.tokenizer(folder))
    return kept, [kept.at[word] for word in words]

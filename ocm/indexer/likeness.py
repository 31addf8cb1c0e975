"""Meaning beyond search: the cosine of two records' embeddings, with the model that embeds
notes for search (ocm/indexer/embed.py), for auto-supersede (ocm/vault/alike/supersede.py) and
near-copy detection (ocm/vault/alike/nearcopies.py). Those modules only take a function; this
one makes it.

Nothing here may make a write fail: when semantic search is turned off, the model cannot
load or embedding raises, the function answers None and the callers judge by words alone.
The model is loaded on the first question, so a write that has nothing to compare pays
nothing. Texts are embedded as written to the vault (already redacted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .embed import embedder

# A write compares one new record with a handful of old ones: this bounds the memo.
MEMO = 256


class Likeness:
    """`likeness(a, b)`: the cosine of the embeddings of texts `a` and `b`, or None."""

    def __init__(self, vault_root: Path | None, cache: Path | None = None) -> None:
        self.vault_root = vault_root
        self.cache = cache  # a folder that may keep the tokenizer's table (the index's)
        self.failed = ""
        self._vectors: dict[str, Any] = {}

    def __call__(self, a: str, b: str) -> float | None:
        found = self.vectors([a, b])
        if found is None:
            return None
        return float(found[0] @ found[1])

    def vectors(self, texts: list[str]) -> list[Any] | None:
        """Unit-length vectors of `texts` (memoised), or None when meaning is unavailable."""
        if self.failed:
            return None
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if len(self._vectors) + len(todo) > MEMO:
            self._vectors.clear()
            todo = list(dict.fromkeys(texts))
        if todo:
            model, why = embedder(self.vault_root)
            if model is None:
                self.failed = why
                return None
            try:
                rows = model.embed(todo, self.cache)
            except Exception as exc:  # noqa: BLE001 - a write must never fail on embedding
                self.failed = f"{type(exc).__name__}: {exc}"
                return None
            self._vectors.update(zip(todo, rows, strict=True))
        return [self._vectors[t] for t in texts]


def for_vault(vault: Any) -> Likeness:
    """The likeness function of a vault (its config may turn meaning off)."""
    return Likeness(vault.root, vault.index_dir)

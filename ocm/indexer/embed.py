"""Meaning as well as words: static embeddings from WordLlama, whose weights and tokenizer
ship inside its wheel. Nothing is ever downloaded: the model is loaded from the package's
own folder with downloads disabled, and a model that cannot load leaves search
keyword-only (said once, and by `ocm doctor`). `OCM_SEMANTIC=0` turns it off.

The hook path never imports this module (numpy, tokenizers).
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

SEMANTIC_ENV = "OCM_SEMANTIC"
MODEL = "l2_supercat"
DIM = 256


class Embedder:
    """Unit-length embeddings of texts (float32 rows)."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def embed(self, texts: list[str]) -> Any:  # -> numpy.ndarray (len(texts), DIM)
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        vectors = self._model.embed(texts, norm=False)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


# Off unless asked for (OCM_SEMANTIC=1) until a one-shot `ocm search` can embed a query
# without importing the model (see bench/README.md, "Meaning").
DEFAULT = "0"


def enabled() -> bool:
    return os.environ.get(SEMANTIC_ENV, DEFAULT).strip().lower() not in ("0", "false", "no",
                                                                         "off", "")


@lru_cache(maxsize=1)
def _load() -> tuple[Embedder | None, str]:
    try:
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        import wordllama  # its inference module calls logging.basicConfig() on import

        root.handlers[:], root.level = handlers, level
        folder = Path(wordllama.__file__).parent
        model = wordllama.WordLlama.load(MODEL, cache_dir=folder, dim=DIM,
                                         disable_download=True)
    except Exception as exc:  # noqa: BLE001 - any failure means keyword-only, said once
        return None, f"{type(exc).__name__}: {exc}"
    return Embedder(model), ""


def embedder() -> tuple[Embedder | None, str]:
    """(the embedder, "") or (None, why not): off by OCM_SEMANTIC=0, or the model failed."""
    if not enabled():
        return None, f"turned off ({SEMANTIC_ENV}=0)"
    return _load()


def failure_notice() -> str | None:
    """The one line saying that search is keyword-only because the model failed to load;
    given once per process (None after that, when it loaded, or when turned off)."""
    global _announced
    if _announced or not enabled():
        return None
    model, why = _load()
    if model is not None:
        return None
    _announced = True
    return f"ocm: semantic search unavailable ({why}); searching by keywords only"


_announced = False

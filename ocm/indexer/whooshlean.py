"""Two of Whoosh's modules a search never runs, kept from loading in a one-shot process.

* `whoosh.lang.morph_en` (English word variations, ~7 ms of regular expressions to compile)
  is imported by `whoosh.query.terms` for its `Variations` query, which ocm never builds.
* `whoosh.lang.snowball` imports the stemmers of fourteen languages when its English one
  (ocm's analyzer, `stemmer_for_language("en")`) is asked for.

`install()` puts in `sys.modules`, for each of the two not yet imported, a module made from
Whoosh's own spec without running it: `morph_en` runs its code the first time anything is
asked of it (`variations` does that when called), `snowball` keeps its `classes` table and
imports a language's module the first time its stemmer is asked for. The code that runs is
Whoosh's own, so answers are the same. The lean `ocm search` installs them before it imports
Whoosh (ocm/cli/searching.py); elsewhere Whoosh loads as usual.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

MORPH = "whoosh.lang.morph_en"
SNOWBALL = "whoosh.lang.snowball"
# whoosh.lang.snowball.classes: two-letter code -> (module, class)
_SNOWBALL_CLASSES = {
    "da": ("danish", "DanishStemmer"), "nl": ("dutch", "DutchStemmer"),
    "en": ("english", "EnglishStemmer"), "fi": ("finnish", "FinnishStemmer"),
    "fr": ("french", "FrenchStemmer"), "de": ("german", "GermanStemmer"),
    "hu": ("hungarian", "HungarianStemmer"), "it": ("italian", "ItalianStemmer"),
    "no": ("norwegian", "NorwegianStemmer"), "pt": ("portugese", "PortugueseStemmer"),
    "ro": ("romanian", "RomanianStemmer"), "ru": ("russian", "RussianStemmer"),
    "es": ("spanish", "SpanishStemmer"), "sv": ("swedish", "SwedishStemmer"),
}


def install() -> None:
    """Put the two deferred modules in place where Whoosh has not loaded them yet."""
    if MORPH not in sys.modules:
        _deferred(MORPH, _morph_en)
    if SNOWBALL not in sys.modules:
        _deferred(SNOWBALL, _snowball)


def _deferred(name: str, fill: Any) -> None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    fill(module, spec)
    sys.modules[name] = module


def _run(module: ModuleType, spec: Any, name: str) -> Any:
    """The module's `name` once its own code has run in it (the first time asked)."""
    if not module.__dict__.get("_ocm_ran"):
        module.__dict__["_ocm_ran"] = True
        spec.loader.exec_module(module)
    try:
        return module.__dict__[name]
    except KeyError:
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None


def _module_getattr(module: ModuleType, spec: Any) -> Any:
    """The deferred module's `__getattr__`: any name (a class, a table) runs its code."""
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _run(module, spec, name)

    return __getattr__


def _morph_en(module: ModuleType, spec: Any) -> None:
    def variations(word: str) -> Any:
        return _run(module, spec, "variations")(word)

    module.__dict__.update(variations=variations, __getattr__=_module_getattr(module, spec))


class _Classes(Mapping):
    """whoosh.lang.snowball.classes, each language's module imported when first asked."""

    def __getitem__(self, code: str) -> Any:
        name, cls = _SNOWBALL_CLASSES[code]
        return getattr(importlib.import_module(f"{SNOWBALL}.{name}"), cls)

    def __iter__(self) -> Iterator[str]:
        return iter(_SNOWBALL_CLASSES)

    def __len__(self) -> int:
        return len(_SNOWBALL_CLASSES)


def _snowball(module: ModuleType, spec: Any) -> None:
    # (a stemmer class asked for by its name: the whole package runs)
    module.__dict__.update(classes=_Classes(), __getattr__=_module_getattr(module, spec))

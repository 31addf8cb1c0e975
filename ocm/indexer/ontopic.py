"""On topic or nothing: what a search's query terms are, what each hit holds of them, and
why a hit is on topic at all (issue #26).

A hit is on topic by its **words** when it holds words of the query that matter (for a
search phrase: a word worth at least a tenth of its most telling one, `relevance.coverage`;
for a pasted paragraph: a share of the query's idf-weighted words, `word_mass`), or by its
**meaning** when its embedding is close to the query's by itself (a bare cosine, which
holds across vaults) and stands out from the vault's other notes (the relative rule of
`relevance.MIN_SIMILARITY`). Neither: the search leaves it out, and a query about nothing
the vault holds answers with nothing. A pasted paragraph is also asked whose project it is
about (`project`): another repository's issue shares plain words with any code vault, but
not the names of its packages.

An identifier or a path asked for alone (`ModuleNotFoundError`, `embedding_server.py`)
asks for the notes holding it whole: those rank above the notes holding only its parts
(`whole`), and the parts still find notes when nothing holds the whole. Function words
among a CamelCase identifier's parts (`not` of `ModuleNotFoundError`) are never query
terms: they would carry a hit by themselves.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import relevance
from .analysis import STOP_WORDS, word_terms
from .hits import holds_file
from .relevance import _idf, coverage, is_phrase

# Parts of an identifier that say nothing of it: `not` of `ModuleNotFoundError`, `no` of
# `NoSuchKey` (stop words are never index terms already).
NOISE_PARTS = frozenset({"not", "no", "non", "nor", *STOP_WORDS})

# Words of a note compared with a phrase's words by meaning (`word_cosine`): letters only,
# three or more, the first MAX_NOTE_WORDS distinct ones of the note.
_WORD = re.compile(r"[^\W\d_]{3,}")
MAX_NOTE_WORDS = 400
# A short note's sentences (`WordMeaning.sentence_cosine`): split at end punctuation or a
# line break. A note of more than MAX_SENTENCES (a conversation) is not read by one of its
# sentences: some sentence of a long talk is near any phrase (LoCoMo's sessions answered
# other conversations' questions by one sentence, bench/README.md).
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
MAX_SENTENCES = 8

# Shorter words with parts (`3.9`, `a_b`) are not counted as a paragraph's identifiers.
MIN_IDENTIFIER = 4
# `familiarity`: a word that is one of the embedding vocabulary's first COMMON_PIECES pieces
# is common (its ids run roughly from frequent to rare); a word as written in the paragraph
# is its surface with the punctuation around it stripped (MAX_SURFACE characters and longer
# count as uncommon unsplit). MIN_BASE keeps a vault holding almost none of the common
# words from making every uncommon one it holds count for much.
COMMON_PIECES = 8000
SURFACE_PUNCTUATION = "`'\",.:;()[]{}<>!?*"
MAX_SURFACE = 100
MIN_BASE = 0.05

# `project`: a vault's own package is a folder at the top of its notes' files (or under one
# of CONTAINERS) whose name the files of at least ROOT_SHARE of its notes hold; a package a
# paragraph imports (`import x`, `from x.y import`, a traceback's `site-packages/x/`)
# counts as another project's when the paragraph names it MIN_MENTIONS times and no note
# holds it. The standard library is everyone's.
ROOT_SHARE = 0.1
CONTAINERS = ("src", "lib")
NOT_ROOTS = frozenset({*CONTAINERS, "tests", "test", "docs", "doc", "scripts", "examples"})
MIN_MENTIONS = 2
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
# A query's lines are joined by spaces before it is searched: an import is found anywhere.
_IMPORTED = re.compile(r"(?<![\w.])(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import"
                       r"|import\s+([A-Za-z_]\w*))")
_INSTALLED = re.compile(r"(?:site|dist)-packages/([A-Za-z_]\w*)")


def query_words(text: str) -> list[tuple[str, ...]]:
    """`word_terms` of the query without the noise parts of its identifiers."""
    out = []
    for word in word_terms(text):
        kept = (word[0], *(t for t in word[1:] if t not in NOISE_PARTS))
        out.append(kept)
    return out


def query_terms(text: str) -> list[str]:
    """The distinct index terms a query searches for, in order."""
    return list(dict.fromkeys(t for word in query_words(text) for t in word))


def one_identifier(text: str, paths: Sequence[str]) -> str | None:
    """The whole term of a query that is one identifier or path (a word with parts),
    else None."""
    words = query_words(text)
    if len(text.split()) != 1 or len(words) != 1 or len(words[0]) < 2:
        return None
    return words[0][0]


def identifiers(words: list[tuple[str, ...]]) -> list[str]:
    """The identifiers and paths of a query (words with parts, at least MIN_IDENTIFIER
    characters: `get_queryset`, `QuerySet`, `models.py`), as index terms."""
    return list(dict.fromkeys(word[0] for word in words
                              if len(word) > 1 and len(word[0]) >= MIN_IDENTIFIER))


def word_mass(scorer: Any, words: list[tuple[str, ...]], fields: tuple[str, ...],
              docs: Iterable[int]) -> tuple[dict[int, float], set[str]]:
    """(global doc number -> the share (0..1) of the query's idf-weighted words the doc
    holds (a word held only by a part counts half, as in `relevance.coverage`), the terms
    some note of the vault holds)."""
    docs = list(dict.fromkeys(docs))
    total = max(scorer.searcher.doc_count(), 1)
    held: dict[str, tuple[float, Any]] = {}
    somewhere: set[str] = set()
    for term in {t for word in words for t in word}:
        mask = scorer.holders(term, fields)
        count = int(mask.sum())
        held[term] = (_idf(count, total), mask)
        if count:
            somewhere.add(term)
    weights = [max(held[t][0] for t in word) for word in dict.fromkeys(words)]
    whole = sum(weights)
    if whole <= 0:
        return dict.fromkeys(docs, 0.0), somewhere
    out: dict[int, float] = {}
    for doc in docs:
        got = 0.0
        for word, weight in zip(dict.fromkeys(words), weights, strict=True):
            if held[word[0]][1][doc]:
                got += weight
            elif any(held[t][1][doc] for t in word[1:]):
                got += 0.5 * weight
        out[doc] = got / whole
    return out, somewhere


def familiarity(text: str, words: list[tuple[str, ...]], somewhere: set[str]) -> float | None:
    """How familiar a pasted paragraph's uncommon words are to the vault: the share of them
    that some note holds over the share of its common words some note holds (a vault of
    few notes holds few words of either kind). Common: one piece of the embedding
    vocabulary among its COMMON_PIECES first (`remove`, `check`, `array`); uncommon: more
    pieces or a later one (`numpy`, `contour`, `queryset`). Another project's issue names
    that project's things, which the vault does not hold, in plain words it does. None
    without the embedding model or with no uncommon word."""
    from .embed import embedder

    model, _ = embedder()
    if model is None:
        return None
    tokenizer = model.tokenizer()
    surfaces: dict[str, str] = {}
    for raw in text.split():
        raw = raw.strip(SURFACE_PUNCTUATION)
        for word in word_terms(raw):
            surfaces.setdefault(word[0], raw)
    common: list[bool] = []
    uncommon: list[bool] = []
    for word in dict.fromkeys(words):
        surface = surfaces.get(word[0], word[0])
        pieces = tokenizer.encode(surface) if len(surface) < MAX_SURFACE else ()
        kind = common if len(pieces) == 1 and pieces[0] <= COMMON_PIECES else uncommon
        kind.append(word[0] in somewhere)
    if not uncommon:
        return None
    base = sum(common) / len(common) if common else 1.0
    return (sum(uncommon) / len(uncommon)) / max(base, MIN_BASE)


def _has_prefix(scorer: Any, field: str, prefix: str) -> bool:
    """Some segment's `field` holds a term starting with `prefix`."""
    return any(next(iter(reader.expand_prefix(field, prefix)), None) is not None
               for reader, _ in scorer.leaves)


def own_package(scorer: Any, name: str) -> bool:
    """`name` (lower case) is a package of the vault's own: the files of ROOT_SHARE of its
    notes name it, and some file sits under `name/` (or `src/name/`, `lib/name/`, and
    `_name` alike): a top folder, not a folder deep in every path (`core`, `db`)."""
    if name in NOT_ROOTS:
        return False
    terms = word_terms(name)
    if not terms or scorer.holders(terms[0][0], ("files",)).sum() < ROOT_SHARE * scorer.doc_count:
        return False
    return any(_has_prefix(scorer, "files", f"{folder}{under}{name}/")
               for folder in ("", *(f"{c}/" for c in CONTAINERS)) for under in ("", "_"))


def imported(text: str) -> list[str]:
    """The packages a paragraph imports or shows installed, standard library aside, in
    order."""
    names = [a or b for a, b in _IMPORTED.findall(text)] + _INSTALLED.findall(text)
    return [name for name in dict.fromkeys(names)
            if name not in sys.stdlib_module_names and name.lower() not in STOP_WORDS]


def project(scorer: Any, text: str, fields: tuple[str, ...]) -> str | None:
    """Whose project a pasted paragraph is about, by the names of packages: "own" when it
    names a package of the vault's own (`own_package`), "other" when it imports a package
    (MIN_MENTIONS times named) that no note holds, else None. A plain-words measure cannot
    tell another repository's issue from one of this repository's (both are Python,
    errors, arrays); the names of the packages can."""
    if any(own_package(scorer, name) for name in dict.fromkeys(
            word.lower() for word in _NAME.findall(text))):
        return "own"
    for name in imported(text):
        mentions = len(re.findall(rf"(?<!\w){re.escape(name)}(?!\w)", text))
        terms = word_terms(name)
        if mentions >= MIN_MENTIONS and terms and not scorer.holders(
                terms[0][0], (*fields, "files")).any():
            return "other"
    return None


def measure(scorer: Any, text: str, hits: list[Any], numbers: list[int],
            paths: Sequence[str], fields: tuple[str, ...]) -> None:
    """Set what each candidate holds of the query: `coverage` (a search phrase), `mass`
    (a pasted paragraph), `whole` (a query that is one identifier)."""
    words = query_words(text)
    if not words:
        return
    if is_phrase(text):
        shares = coverage(scorer, words, fields, numbers)
        for hit, number in zip(hits, numbers, strict=True):
            if any(holds_file(hit, fragment) for fragment in paths):
                continue  # it touched the file the query names: relevant as it is
            hit.coverage = shares[number]
            if hit.explain is not None:
                hit.explain["coverage"] = round(shares[number], 4)
    else:
        masses, somewhere = word_mass(scorer, words, fields, numbers)
        # Asked only where meaning ran: with meaning off a paragraph's hits are kept as they are.
        meaning = any(hit.cosine is not None for hit in hits)
        familiar = familiarity(text, words, somewhere) if meaning else None
        whose = project(scorer, text, fields) if meaning else None
        held = [scorer.holders(term, (*fields, "files")) for term in identifiers(words)]
        for hit, number in zip(hits, numbers, strict=True):
            hit.mass = masses[number]
            hit.idents = sum(1 for mask in held if mask[number])
            hit.familiar = familiar
            hit.whose = whose
            if hit.explain is not None:
                hit.explain.update(mass=round(masses[number], 4), identifiers=hit.idents,
                                   familiar=None if familiar is None else round(familiar, 4),
                                   whose=whose)
    whole = one_identifier(text, paths)
    if whole is not None:
        holding = scorer.holders(whole, (*fields, "files"))
        for hit, number in zip(hits, numbers, strict=True):
            hit.whole = bool(holding[number]) or any(
                holds_file(hit, fragment) for fragment in paths)


def close(text: str, cosine: float, similarity: float) -> bool:
    """Close in meaning by the whole texts' embeddings: the thresholds of a search phrase or
    of a pasted paragraph (`relevance.MIN_COSINE` and the rest)."""
    return close_by(is_phrase(text), cosine, similarity)


def close_by(phrase: bool, cosine: float, similarity: float) -> bool:
    """`close` for a query known to be a search `phrase` or not (asked once a search)."""
    if phrase:
        return cosine >= relevance.MIN_COSINE and similarity >= relevance.MIN_SIMILARITY
    return (cosine >= relevance.MIN_COSINE_PARAGRAPH
            and similarity >= relevance.MIN_SIMILARITY_PARAGRAPH)


def content_words(text: str, limit: int | None = None) -> list[str]:
    """The distinct lower-case words of `text` that are not stop words, in order."""
    out = [word for word in dict.fromkeys(_WORD.findall(text.lower())) if word not in STOP_WORDS]
    return out if limit is None else out[:limit]


def _note_words(text: str) -> list[str]:
    return content_words(text, MAX_NOTE_WORDS)


# `best_unshared` takes the best pairs one at a time this many times, then sorts the rest.
UNSHARED_TRIES = 16


def best_unshared(cosines: Any, pieces: list[frozenset[int]],
                  other_pieces: Callable[[int], frozenset[int]]) -> float:
    """The highest of `cosines` (query words x note words, float32) whose two words share
    no token piece (`pieces` of the query's words, `other_pieces` of the note word at a
    position); -1.0 when every pair shares one. The best pair is most often the query's
    own word in the note, or a word sharing its stem: the best are taken out one by one,
    and only a note with more such pairs than UNSHARED_TRIES is sorted."""
    import numpy as np

    width = cosines.shape[1]
    flat = cosines.ravel()  # the product's own array: taken pairs are marked in it
    for _ in range(min(UNSHARED_TRIES, flat.size)):
        at = int(np.argmax(flat))
        row, col = divmod(at, width)
        if not pieces[row] & other_pieces(col):
            return float(flat[at])
        flat[at] = -np.inf
    for at in np.argsort(flat, axis=None)[::-1].tolist():
        if flat[at] == -np.inf:
            break  # taken out above, and every pair after it as well
        row, col = divmod(at, width)
        if not pieces[row] & other_pieces(col):
            return float(flat[at])
    return -1.0


class WordMeaning:
    """How close in meaning a note's closest word is to a search phrase's closest word
    (`kitten` and `cat` 0.57, `nap` and `sleeps` 0.71; `docker` and `npm` 0.27): what
    lets a phrase's hit count as close in meaning by itself (`relevance.MIN_WORD_COSINE`),
    where the mean of a few words' vectors says too little (`the kitten` against "Our cat
    sleeps on the radiator" 0.23, `docker compose` against "Use pnpm, not npm" 0.31).

    Two words that share a token piece are alike on the surface, not in meaning: a word the
    vocabulary does not know is the mean of its pieces (`betaonly` is `beta` + `only`), and
    would be "close" to every word sharing a piece (`alphaonly`, 0.8). Such pairs never
    count. A note is also read sentence by sentence (`sentence_cosine`): its whole text's
    mean vector blurs a sentence about the phrase among unrelated ones."""

    def __init__(self, model: Any, folder: Any, text: str, query: Any) -> None:
        from .wordvectors import word_vectors

        self.model, self.folder, self.vector = model, folder, query
        words = content_words(text)
        self.query: Any = None
        self.pieces: list[frozenset[int]] = []
        if words:
            # Kept made across searches (ocm/indexer/wordvectors.py): the floats of
            # `model.embed(words)`, each word's pieces as its tokenizer splits it.
            self.query, pieces = word_vectors(model, folder, words)
            self.pieces = [pieces(at) for at in range(len(words))]

    def best(self, note_text: str) -> float:
        """The highest cosine of a query word and a note word that share no token piece."""
        if self.query is None:
            return 0.0
        from .wordvectors import text_vectors

        # Each note's words, their rows and pieces made once per process
        # (ocm/indexer/wordvectors.py).
        found = text_vectors(self.model, self.folder, note_text, _note_words)
        if found is None:
            return 0.0
        vectors, pieces = found
        return best_unshared(self.query @ vectors.T, self.pieces, pieces)

    def sentence_cosine(self, note_text: str) -> float:
        """The highest cosine of the query's embedding with one of the note's distinct
        sentences; 0 for a note of one sentence (nothing dilutes it) or of more than
        MAX_SENTENCES."""
        sentences = list(dict.fromkeys(s.strip() for s in _SENTENCE.split(note_text)))
        sentences = [s for s in sentences if s]
        if not 1 < len(sentences) <= MAX_SENTENCES:
            return 0.0
        return float((self.model.embed(sentences, self.folder) @ self.vector).max())

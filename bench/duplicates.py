"""Near-copy thresholds: where "says the same thing" ends, measured (no LLM).

    python bench/duplicates.py          # the shipped thresholds against both sets
    python bench/duplicates.py --tune   # choose them again

A near-copy is a record that repeats an active record of its type with only its form
changed. What must never be flagged: every labelled pair of
`bench/data/coding/supersede_pairs.jsonl` (an update or a look-alike is new information,
even "Node 18 required" -> "Node 20 required") and every two records of one type in the
coding set's vault. What should be flagged: copies of those same records with their form
changed (`VARIANTS`: spacing and a final stop, articles dropped, sentences reordered,
the title left to its default, all of these). Both numbers (words, meaning) are the ones
ocm/vault/alike/nearcopies.py uses.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ocm.indexer.likeness import Likeness  # noqa: E402
from ocm.vault.alike import nearcopies, words  # noqa: E402
from ocm.vault.folder import read_document  # noqa: E402
from ocm.vault.memories import MemoryNote, default_title  # noqa: E402

PAIRS = ROOT / "bench" / "data" / "coding" / "supersede_pairs.jsonl"
CODING = ROOT / "bench" / "data" / "coding" / "vault" / "memories"
MEANING = Likeness(None)
GRID = [round(0.80 + 0.005 * i, 3) for i in range(41)]

Record = tuple[str, str, str]  # type, title, text


def _form(text: str) -> str:
    """Spacing joined, the first letter lower-cased, no final full stop."""
    text = " ".join(text.split()).rstrip(".")
    return text[:1].lower() + text[1:]


def _reordered(text: str) -> str:
    """The sentences in reverse order."""
    return " ".join(reversed(re.split(r"(?<=[.;])\s+", text.strip())))


def _articles(text: str) -> str:
    return re.sub(r"\b(the|a|an|The|A|An) ", "", text)


VARIANTS: dict[str, Callable[[str, str], tuple[str, str]]] = {
    "spacing, first letter, final stop": lambda title, text: (title, _form(text)),
    "articles dropped": lambda title, text: (title, _articles(text)),
    "sentences reordered": lambda title, text: (title, _reordered(text)),
    "default title": lambda title, text: (default_title(text), text),
    "default title and all of the above": lambda title, text: (
        default_title(_reordered(_articles(_form(text)))), _reordered(_articles(_form(text)))),
}


def records() -> tuple[list[Record], list[tuple[Record, Record]]]:
    """Every record of both sets, and the pairs that must never be flagged."""
    distinct: list[tuple[Record, Record]] = []
    found: list[Record] = []
    for line in PAIRS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            pair = json.loads(line)
            old, new = ((pair["type"], pair[k]["title"], pair[k]["content"])
                        for k in ("old", "new"))
            distinct.append((old, new))
            found += [old, new]
    coding = [MemoryNote(read_document(p)) for p in sorted(CODING.rglob("*.md"))]
    coded = [(note.type, note.title, note.content) for note in coding]
    found += coded
    distinct += [(a, b) for a, b in itertools.combinations(coded, 2) if a[0] == b[0]]
    return found, distinct


def measure(a: Record, b: Record) -> tuple[float, float | None]:
    return words.cosine(nearcopies.bag(a[2]), nearcopies.bag(b[2])), MEANING(a[2], b[2])


def flagged(rows: list[tuple[float, float | None]], words: float, meaning: float,
            words_alone: float) -> int:
    return sum(nearcopies.same(lex, cos, words, meaning, words_alone) for lex, cos in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tune", action="store_true")
    args = parser.parse_args()
    found, distinct = records()
    apart = [measure(a, b) for a, b in distinct]
    copies = {name: [measure(r, (r[0], *make(r[1], r[2]))) for r in found]
              for name, make in VARIANTS.items()}
    every_copy = [row for rows in copies.values() for row in rows]
    words, meaning, alone = (nearcopies.NEAR_COPY_WORDS, nearcopies.NEAR_COPY_MEANING,
                             nearcopies.NEAR_COPY_WORDS_ALONE)
    if args.tune:
        # No distinct pair flagged; then the most copies; then the middle of the tie.
        options = [(w, m) for w in GRID for m in GRID
                   if flagged(apart, w, m, 2.0) == 0]
        best = max(flagged(every_copy, w, m, 2.0) for w, m in options)
        tied = [o for o in options if flagged(every_copy, *o, 2.0) == best]
        words = sorted({w for w, _ in tied})[len({w for w, _ in tied}) // 2]
        at_words = sorted(m for w, m in tied if w == words)
        meaning = at_words[-1]  # meaning: the strictest bar that loses no copy
        alone_options = [w for w in GRID if flagged([(x, None) for x, _ in apart],
                                                    2.0, 2.0, w) == 0]
        most = max(flagged([(x, None) for x, _ in every_copy], 2.0, 2.0, w)
                   for w in alone_options)
        alone_tied = [w for w in alone_options
                      if flagged([(x, None) for x, _ in every_copy], 2.0, 2.0, w) == most]
        alone = alone_tied[len(alone_tied) // 2]
    words_only = [(x, None) for x, _ in apart]
    report = {
        "meaning": MEANING.failed or "on",
        "thresholds": {"words": words, "meaning": meaning, "words_alone": alone},
        "distinct_pairs": len(apart),
        "distinct_flagged": flagged(apart, words, meaning, alone),
        "distinct_flagged_words_only": flagged(words_only, words, meaning, alone),
        "closest_distinct": {
            "words": round(max(x for x, _ in apart), 3),
            "meaning": round(max(c or 0.0 for _, c in apart), 3),
            "words_where_meaning_reaches_its_bar": round(max(
                (x for x, c in apart if (c or 0.0) >= meaning), default=0.0), 3)},
        "least_meaning_of_a_copy": round(min(c or 0.0 for _, c in every_copy), 3),
        "copies_found": {name: f"{flagged(rows, words, meaning, alone)}/{len(rows)}"
                         for name, rows in copies.items()},
        "copies_found_words_only": {
            name: f"{flagged([(x, None) for x, _ in rows], words, meaning, alone)}/{len(rows)}"
            for name, rows in copies.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

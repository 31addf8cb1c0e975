"""Near-copies: a new record that says what an active record of its type already says, in
nearly the same words and the same meaning. `remember` writes it anyway and its notice names
the older record; `ocm import` skips it (unless told to keep duplicates).

Not the same as auto-supersede (ocm/vault/alike/supersede.py): a supersede needs an update, a
near-copy is the same record with its form changed (case, punctuation, articles, another
title). The bars are set so that no labelled pair of `bench/data/coding/supersede_pairs.jsonl`
(updates and look-alikes) and no two records of the coding set are flagged
(`python bench/duplicates.py`). Meaning is the cosine of the two records' embeddings,
passed in by the caller (ocm/indexer/likeness.py); without it (turned off, model
unavailable) words alone decide, against a higher bar.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .supersede import EXCLUDED_TYPES, MAX_FACT_CHARS, Meaning
from .words import cosine, counts

if TYPE_CHECKING:
    from ..folder import NoteFolder
    from .lookalikes import Lookalikes

# Chosen by bench/duplicates.py --tune (see bench/README.md).
NEAR_COPY_WORDS = 0.915
NEAR_COPY_MEANING = 0.86
NEAR_COPY_WORDS_ALONE = 0.915
FLOOR = min(NEAR_COPY_WORDS, NEAR_COPY_WORDS_ALONE)
# The raw look at a file counts its title as well: room for a title that differs.
TITLE_MARGIN = 0.3


def same(words: float, meaning: float | None, words_bar: float = NEAR_COPY_WORDS,
         meaning_bar: float = NEAR_COPY_MEANING,
         words_alone: float = NEAR_COPY_WORDS_ALONE) -> bool:
    """Whether two records with these similarities are one record written twice."""
    if meaning is None:
        return words >= words_alone
    return words >= words_bar and meaning >= meaning_bar


def bag(text: str) -> Counter[str]:
    """The words `same` compares: the text's, as auto-supersede counts them. Titles are
    left out: one record stored twice often differs only by its title (given once, left
    to its default the other time)."""
    return counts(text)


@dataclass
class Record:
    id: str
    title: str
    text: str
    words: Counter[str]


class Known:
    """Active records by type, to check new ones against (an import's many records)."""

    def __init__(self, meaning: Meaning | None) -> None:
        self.meaning = meaning
        self.by_type: dict[str, list[Record]] = {}

    def add(self, memory_type: str, record_id: str, title: str, text: str) -> None:
        if len(text) <= MAX_FACT_CHARS:
            self.by_type.setdefault(memory_type, []).append(
                Record(record_id, title, text, bag(text)))

    def copy_of(self, memory_type: str, title: str, text: str) -> Record | None:
        """The known record of this type that (`title`, `text`) nearly copies, if any."""
        if len(text) > MAX_FACT_CHARS:
            return None
        words = bag(text)
        for record in self.by_type.get(memory_type, []):
            score = cosine(words, record.words)
            if score < FLOOR:
                continue
            meaning = self.meaning(record.text, text) if self.meaning else None
            if same(score, meaning):
                return record
        return None


def in_vault(vault: NoteFolder, meaning: Meaning | None) -> Known:
    """Every active memory of `vault`."""
    known = Known(meaning)
    for _, note in vault.memory_notes():
        if note.status == "active":
            known.add(note.type, note.id, note.title, note.content)
    return known


def copy_of(memory_type: str, title: str, text: str, meaning: Meaning | None,
            looks: Lookalikes) -> Record | None:
    """The active record of `memory_type` among `looks` (the records auto-supersede compares
    the new one with) that the new record (`title`, `text`) nearly copies."""
    if memory_type in EXCLUDED_TYPES or len(text) > MAX_FACT_CHARS:
        return None  # session summaries are one per session by design
    known = Known(meaning)
    for _, note in looks.notes(FLOOR - TITLE_MARGIN, keyless=False):
        if note.status == "active" and note.type == memory_type:
            known.add(memory_type, note.id, note.title, note.content)
    return known.copy_of(memory_type, title, text)

"""The Whoosh schema: each piece of note text indexed once, in the field that describes it."""

from __future__ import annotations

from whoosh.columns import CompressedBytesColumn, PickleColumn, VarBytesColumn
from whoosh.fields import COLUMN, ID, KEYWORD, NUMERIC, STORED, TEXT, Schema
from whoosh.scoring import BM25F

from .analysis import CountedFrequency, code_analyzer

# Bump when the schema or the text extraction changes: the index is then rebuilt.
SCHEMA_VERSION = 9

# Query-time boosts (linear, seed 004 §6). A memory's title goes in `goal` and its text in
# `content`: a curated fact weighs more than the leftover sections of a session (`body`).
FIELD_BOOSTS: dict[str, float] = {
    "goal": 10.0,
    "decisions": 8.0,
    "todos": 5.0,
    "files": 5.0,
    "work_summary": 3.0,
    "content": 4.0,
    "body": 1.0,
    "tags": 4.0,
}
# BM25 term-frequency saturation and length normalisation (Whoosh's defaults: 1.2, 0.75).
BM25_K1 = 1.2
BM25_B = 0.75
# How the `chunks` column is written: each note's pickled list, compressed on its own.
CHUNKS_COLUMN = PickleColumn(CompressedBytesColumn())
# The rank column (ocm/indexer/rankcolumn.py): each note's few fields a search's candidates
# are made of, as plain bytes. An index built before it has no such field: no rebuild.
RANK_FIELD = "rankfields"
RANK_COLUMN = VarBytesColumn()


def weighting() -> BM25F:
    return BM25F(B=BM25_B, K1=BM25_K1)


def build_schema() -> Schema:
    analyzer = code_analyzer()

    def text() -> TEXT:
        field = TEXT(analyzer=analyzer, phrase=False)
        # Same postings as TEXT's Frequency format, counted without a Token per word.
        assert field.format is not None  # TEXT always has one
        field.format = CountedFrequency(field_boost=field.format.field_boost)
        return field

    return Schema(
        path=ID(unique=True, stored=True),
        sig=STORED(),
        id=ID(stored=True),
        kind=ID(stored=True),
        type=ID(stored=True),
        status=ID(stored=True),
        tool=ID(stored=True),
        scope=ID(stored=True),
        date=NUMERIC(int, bits=64, stored=True, signed=True, sortable=True),
        meta=STORED(),
        # The note's sections (ocm/indexer/chunks.py): derived, refreshed with the note. A
        # column of their own, not a stored field: ~2/3 of a note's stored bytes, needed
        # only by the hits a search returns (`PostingScorer.chunks`), not by the ~75
        # candidates whose stored fields it reads.
        chunks=COLUMN(CHUNKS_COLUMN),
        rankfields=COLUMN(RANK_COLUMN),
        goal=text(),
        decisions=text(),
        todos=text(),
        files=text(),
        work_summary=text(),
        content=text(),
        body=text(),
        tags=KEYWORD(lowercase=True, commas=True, scorable=True),
    )

"""The rank column: per note, the few stored fields a search's candidates need before the
threshold, written beside the stored fields by every segment writer.

A warm search makes a `Hit` of each of its ~75 candidates (BM25F's best 60 and the notes
closest in meaning) and ranks them by id, kind, type, status, date, path and a memory's
importance; only the hits it returns are shown, with their title, files, tags and the rest
of `meta`. Reading a candidate's stored fields is a `pread`, a `zlib.decompress` and a
`pickle.loads` of the whole record (~60-100 µs, ~30 a search not kept by the cache at 10k
notes). This column holds only what a candidate is made of: one `marshal`ed tuple a note,
uncompressed (~1 µs to read), so a candidate's `meta` is read from the stored fields only
when something first asks for it (`Hit.meta`): the hits a search returns, a superseded
record's replacement, a filter on files or author.

It is a Whoosh column of the schema (`schema.RANK_FIELD`): the full build's writers, the
incremental commit and a merge of segments (`add_reader`) all write it as they write the other
columns, and a search reads it through `SegmentCache.rank_row` with `decode`. An index
built before the column existed has a schema without it: its notes get no row (`add_row`)
and its candidates are made from the stored fields as before (`row_of`), the same tuple.
A note whose values `marshal` cannot hold (a hand-written importance YAML made a date)
gets an empty row and is read the same way.
"""

from __future__ import annotations

import marshal
from typing import Any

from .schema import RANK_FIELD

# marshal's format version written (stable since Python 3.4).
_VERSION = 4

# id, kind, type, title, status, tool, scope, date (epoch seconds, 0: none), path (the
# note's path in its vault), importance (meta's, None where it has none).
Row = tuple[str, str, str, str, str, str, str, int, str, Any]
_ROW_LENGTH = 10


def row_of(fields: dict[str, Any]) -> Row:
    """A note's row from its stored fields (or the fields its writer adds)."""
    meta = fields.get("meta") or {}
    return (fields.get("id", ""), fields.get("kind", ""), fields.get("type", ""),
            meta.get("title", ""), fields.get("status", ""), fields.get("tool", ""),
            fields.get("scope", ""), fields.get("date") or 0, fields["path"],
            meta.get("importance"))


def add_row(schema: Any, fields: dict[str, Any]) -> None:
    """Adds the note's row to `fields` (a writer's `add_document` keywords, its path
    included) where the index's schema has the column."""
    if RANK_FIELD in schema:
        try:
            fields[RANK_FIELD] = marshal.dumps(row_of(fields), _VERSION)
        except ValueError:  # a value marshal cannot hold: read from the stored fields
            fields[RANK_FIELD] = b""


def decode(raw: bytes) -> Row | None:
    """A row from its bytes in the column (`columnreads.column_read`'s `decode`)."""
    row = marshal.loads(raw)
    return row if isinstance(row, tuple) and len(row) == _ROW_LENGTH else None

"""Listings without a query, paged, for a dashboard: the order and the count come from the
index's date column and the filters' postings; a note's stored fields (its meta, a zlib'd
pickle: ~0.15 ms each) are read only for the notes on the page. A listing through
`candidates` reads every matching note's (1.2 s CPU for the 8k sessions of a 10k vault).

Notes of one date keep the index's document order (a search's listing sorts them by path).
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from whoosh import query as Q
from whoosh import sorting

from .hits import Filters, Hit
from .search import _filter_query, _hit

if TYPE_CHECKING:
    from .index import NoteIndex


def dated(indexes: list[NoteIndex], filters: Filters) -> list[tuple[int, int, int]]:
    """(date, which index, document number) of every note matching `filters` in each of
    `indexes`, newest first."""
    found: list[tuple[int, int, int]] = []
    for i, index in enumerate(indexes):
        searcher = index.scorer().searcher
        if not searcher.reader().has_column("date"):
            continue  # an empty index (no segment yet)
        filter_q, mask = _filter_query(filters)
        docs = searcher.docs_for_query(filter_q or Q.Every())
        hidden = set(searcher.docs_for_query(mask)) if mask is not None else set()
        dates = searcher.reader().column_reader("date")
        found += [(dates[doc] or 0, i, doc) for doc in docs if doc not in hidden]
    found.sort(key=lambda row: (row[0], -row[1], -row[2]), reverse=True)
    return found


def page(indexes: list[NoteIndex], filters: Filters, offset: int,
         limit: int | None) -> tuple[list[Hit], int]:
    """The hits from `offset` (to the end when `limit` is None), newest first, and how many
    notes match in all."""
    rows = dated(indexes, filters)
    chosen = rows[offset:] if limit is None else rows[offset:offset + limit]
    scorers = [index.scorer() for index in indexes]
    return [_hit(indexes[i], scorers[i], doc, 0.0) for _, i, doc in chosen], len(rows)


def by_ids(indexes: list[NoteIndex], kind: str, ids: list[str]) -> list[Hit]:
    """The notes of `kind` with these ids, in no particular order (only theirs are read)."""
    if not ids:
        return []
    wanted = Q.And([Q.Term("kind", kind), Q.Or([Q.Term("id", i) for i in ids])])
    out: list[Hit] = []
    for index in indexes:
        scorer = index.scorer()
        out += [_hit(index, scorer, doc, 0.0)
                for doc in scorer.searcher.docs_for_query(wanted)]
    return out


def daily(indexes: list[NoteIndex], filters: Filters, field: str) -> Counter[tuple[date, str]]:
    """How many notes matching `filters` each local day holds per value of `field` (their
    tool, type…), from the date column and the field's postings: no stored field is read."""
    counts: Counter[tuple[date, str]] = Counter()
    for index in indexes:
        searcher = index.scorer().searcher
        if not searcher.reader().has_column("date"):
            continue
        filter_q, mask = _filter_query(filters)
        results = searcher.search(filter_q or Q.Every(), mask=mask, limit=None,
                                  groupedby={"by": sorting.FieldFacet(field)},
                                  maptype=sorting.UnorderedList)
        dates = searcher.reader().column_reader("date")
        for value, docs in results.groups("by").items():
            name = value.decode() if isinstance(value, bytes) else str(value or "")
            for doc in docs:
                if dates[doc]:
                    counts[(datetime.fromtimestamp(dates[doc]).date(), name)] += 1
    return counts


def tally(indexes: list[NoteIndex], filters: Filters,
          fields: tuple[str, ...] = ("type", "status")) -> Counter[tuple[Any, ...]]:
    """How many notes matching `filters` carry each combination of `fields`' values."""
    counts: Counter[tuple[Any, ...]] = Counter()
    facet = sorting.MultiFacet([sorting.FieldFacet(name) for name in fields])
    for index in indexes:
        searcher = index.scorer().searcher
        filter_q, mask = _filter_query(filters)
        results = searcher.search(filter_q or Q.Every(), mask=mask, limit=None,
                                  groupedby={"keys": facet}, maptype=sorting.Count)
        for key, n in results.groups("keys").items():
            counts[tuple(v.decode() if isinstance(v, bytes) else v for v in key)] += n
    return counts

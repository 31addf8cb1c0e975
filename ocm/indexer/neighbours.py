"""Auto-supersede's candidates: the active records of one type that an index ranks closest
to a new memory's words.

The clauses and scores of a search (`search.term_clauses`, summed by the posting scorer),
limited to the fields a memory record fills (`documents.memory_fields`: its title in
`goal`, its text in `content`, `files`, `tags`). The other fields are empty in every record,
so they add nothing to a record's score, while their postings (session text) are most of a
search's work. No fusion with meaning (a write does not embed) and no re-ranking: the caller
compares the few records found word for word (`ocm.vault.alike.supersede`).

Only the new memory's RAREST_TERMS rarest words are asked for (fewest titles and texts
holding them, from the index's term dictionary: no postings read), with any word no title
or text holds: a common word's postings span most notes, so reading them made a write's
cost grow with the vault (issue #17), while its low idf hardly moves the ranking. A record
the new one could supersede or nearly copy shares most of its words, the rare ones among
them.

A process that keeps the notes' embeddings (`NoteIndex.vectors`: the MCP server, which
searches with meaning) asks them instead (`closest_by_meaning`): one product of the query's
vector with the rows, whatever the words, where the postings of common words grew with the
vault. The rows do not know a record's status, so a few more are asked for than the caller
keeps: the caller's raw look drops the inactive ones.
"""

from __future__ import annotations

import weakref
from typing import Any

from .analysis import tokens
from .hits import Filters
from .index import NoteIndex
from .postings import best
from .search import _filter_query, term_clauses

RECORD_FIELDS = frozenset({"goal", "content", "files", "tags"})
# The fields a record's title and text are indexed in: a word's rarity is counted there.
WORD_FIELDS = ("goal", "content")
RAREST_TERMS = 8


def rarest(searcher: Any, terms: list[str], count: int) -> list[str]:
    """`terms` (in their order) cut to the `count` held by the fewest titles and texts, plus
    those none holds. Whoosh's document frequencies: deleted notes still count (rarity
    only orders the words)."""
    if len(terms) <= count:
        return terms
    held = {term: sum(searcher.doc_frequency(field, term) for field in WORD_FIELDS)
            for term in terms}
    common = sorted((term for term in terms if held[term]), key=held.__getitem__)
    kept = set(common[:count]) | {term for term in terms if not held[term]}
    return [term for term in terms if term in kept]


def closest_records(index: NoteIndex, text: str, memory_type: str, limit: int,
                    retired: bool = False) -> list[str]:
    """Vault-relative paths of at most `limit` active records of `memory_type` (with
    `retired`: superseded, resolved or archived ones, which a near-copy must not bring back)
    in the index's current searcher, best first, by the new record's rarest words."""
    from whoosh import query as Q

    terms = rarest(index.searcher(), list(dict.fromkeys(tokens(text))), RAREST_TERMS)
    clauses = [clause for clause in term_clauses(terms) if clause[0] in RECORD_FIELDS]
    if not clauses:
        return []
    if retired:
        allow, _ = _filter_query(Filters(kind="memory", types=(memory_type,),
                                         include_resolved=True))
        mask: Any = Q.Term("status", "active")
    else:
        allow, mask = _filter_query(Filters(kind="memory", types=(memory_type,),
                                            status="active"))
    scorer = index.scorer()
    return [scorer.stored_fields(doc)["path"]
            for doc, _ in scorer.top(clauses, limit, allow=allow, mask=mask)]


# Per vector store and folder prefix: the paths list looked at, how many of its paths were
# looked at, and the rows (numpy int64) of those under the prefix. A commit appends rows to
# the same list, so only the new ones are looked at; a store that dropped rows made a new
# list (VectorStore._rebuild), looked at from the start.
_ROWS: weakref.WeakKeyDictionary[Any, dict[str, tuple[list[str], int, Any]]] = (
    weakref.WeakKeyDictionary())


def _rows_under(store: Any, prefix: str) -> Any:
    """The rows of `store` (a VectorStore) whose path starts with `prefix`."""
    import numpy as np

    paths = store.paths
    seen = _ROWS.setdefault(store, {})
    known, looked, rows = seen.get(prefix, (None, 0, None))
    if known is not paths or rows is None:
        looked, rows = 0, np.zeros(0, dtype=np.int64)
    if known is not paths or len(paths or ()) > looked:
        more = np.fromiter((at for at in range(looked, len(paths))
                            if paths[at].startswith(prefix)), dtype=np.int64)
        rows = np.concatenate((rows, more))
        seen[prefix] = (paths, len(paths), rows)
    return rows


def closest_by_meaning(index: NoteIndex, text: str, prefix: str, limit: int
                       ) -> list[str] | None:
    """Vault-relative paths of the `limit` notes under the folder `prefix` whose embeddings
    (as the index last committed them) are closest to `text`'s, best first, whatever their
    status; None when meaning is off or its model or rows are unavailable."""
    from .embed import embedder

    store = index.vectors()
    model, _ = embedder(index.vault.root)
    if store is None or model is None:
        return None
    rows = _rows_under(store, prefix)
    if not len(rows):
        return []
    sims = store.cosines(model.embed([text], store.folder)[0], rows)
    return [store.paths[row] for row in rows[best(sims, limit)].tolist()]

"""Auto-supersede's candidates: the active records of one type that an index ranks closest
to a new memory's words.

The clauses and scores of a search (`search.term_clauses`, summed by the posting scorer),
limited to the fields a memory record fills (`documents.memory_fields`: its title in
`goal`, its text in `content`, `files`, `tags`). The other fields are empty in every record,
so they add nothing to a record's score, while their postings (session text) are most of a
search's work. No fusion with meaning (a write does not embed) and no re-ranking: the caller
compares the few records found word for word (`ocm.vault.supersede`).
"""

from __future__ import annotations

from .analysis import tokens
from .hits import Filters
from .index import NoteIndex
from .search import _filter_query, term_clauses

RECORD_FIELDS = frozenset({"goal", "content", "files", "tags"})


def closest_records(index: NoteIndex, text: str, memory_type: str, limit: int) -> list[str]:
    """Vault-relative paths of at most `limit` active records of `memory_type` in the
    index's current searcher, best first."""
    terms = list(dict.fromkeys(tokens(text)))
    clauses = [clause for clause in term_clauses(terms) if clause[0] in RECORD_FIELDS]
    if not clauses:
        return []
    allow, mask = _filter_query(Filters(kind="memory", types=(memory_type,), status="active"))
    scorer = index.scorer()
    return [scorer.stored_fields(doc)["path"]
            for doc, _ in scorer.top(clauses, limit, allow=allow, mask=mask)]

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
"""

from __future__ import annotations

from typing import Any

from .analysis import tokens
from .hits import Filters
from .index import NoteIndex
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


def closest_records(index: NoteIndex, text: str, memory_type: str, limit: int) -> list[str]:
    """Vault-relative paths of at most `limit` active records of `memory_type` in the
    index's current searcher, best first, by the new record's rarest words."""
    terms = rarest(index.searcher(), list(dict.fromkeys(tokens(text))), RAREST_TERMS)
    clauses = [clause for clause in term_clauses(terms) if clause[0] in RECORD_FIELDS]
    if not clauses:
        return []
    allow, mask = _filter_query(Filters(kind="memory", types=(memory_type,), status="active"))
    scorer = index.scorer()
    return [scorer.stored_fields(doc)["path"]
            for doc, _ in scorer.top(clauses, limit, allow=allow, mask=mask)]

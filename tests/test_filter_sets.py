"""The filter sets a search masks with (ocm/indexer/postings.py, `doc_set` / `doc_mask`): for
a Term or an Or of Terms, read from the postings the scorer holds, the same documents as
Whoosh's matchers find (deleted ones left out); any other query still goes to Whoosh. A real
vault: several segments, deletions, a resolution."""

from __future__ import annotations

import numpy as np
from whoosh import query as Q

from ocm.project import Project

from .test_postings import vault_project  # noqa: F401 - the fixture


def _whoosh(scorer, query) -> frozenset[int]:
    return frozenset(scorer.searcher.docs_for_query(query))


def test_term_sets_equal_whooshs(vault_project: Project) -> None:  # noqa: F811
    index = vault_project.refresh(vault_project.vault)
    scorer = index.scorer()
    assert any(reader.has_deletions() for reader, _ in scorer.leaves)
    hidden = Q.Or([Q.Term("status", "resolved"), Q.Term("status", "archived")])
    cases = [
        hidden,
        Q.Term("status", "resolved"),
        Q.Term("type", "gotcha"),
        Q.Or([Q.Term("type", "gotcha"), Q.Term("type", "decision")]),
        Q.Or([Q.Term("type", "no-such-type")]),
        Q.Term("no_such_field", "x"),  # not in the schema: Whoosh's answer
    ]
    for query in cases:
        expected = _whoosh(scorer, query)
        assert scorer.doc_set(query) == expected, query
        mask = scorer.doc_mask(query)
        assert mask.dtype == bool and len(mask) == scorer.doc_count
        assert frozenset(np.flatnonzero(mask).tolist()) == expected, query
    assert len(_whoosh(scorer, hidden)) == 1  # the one resolved note
    assert len(_whoosh(scorer, cases[3])) > 20
    # Deleted documents hold the term in the postings but are not in the set.
    deleted = {base + doc for reader, base in scorer.leaves
               for doc in range(reader.doc_count_all()) if reader.is_deleted(doc)}
    held = {base + int(d) for reader, base in scorer.leaves
            if (entry := scorer.cache.postings(reader, "type", "gotcha")) is not None
            for d in entry.ids}
    assert deleted & held and not deleted & scorer.doc_set(cases[2])


def test_other_queries_go_to_whoosh(vault_project: Project) -> None:  # noqa: F811
    scorer = vault_project.refresh(vault_project.vault).scorer()
    assert scorer._terms_mask(Q.And([Q.Term("type", "gotcha"), Q.Term("kind", "memory")])) is None
    assert scorer._terms_mask(Q.Or([Q.Term("type", "gotcha"), Q.Term("type", "decision")],
                                   minmatch=2)) is None
    assert scorer._terms_mask(Q.Or([])) is None
    assert scorer._terms_mask(Q.Every()) is None
    for query in (Q.And([Q.Term("type", "gotcha"), Q.Term("kind", "memory")]), Q.Every()):
        assert scorer.doc_set(query) == _whoosh(scorer, query)

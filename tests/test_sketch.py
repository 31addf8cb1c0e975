"""A note's sketch (MMR's words) is stored as one string of space-separated index terms
and read back as the same set of terms (`Hit.sketch`). Real index, real notes."""

from __future__ import annotations

from ocm.indexer import search as engine
from ocm.indexer.analysis import tokens
from ocm.indexer.documents import SKETCH_TOKENS, _sketch
from ocm.indexer.hits import Filters
from ocm.project import Project

# Paths, identifiers, a no-break space, an ideographic space, tabs: terms never hold one.
TRICKY = ("Fix src/api/client.py\u00a0retry_default C++ and C# in v1.7\u3000naïve\tcafé "
          "PROJ-343 `embed_server` x.y.z")


def test_the_sketch_string_splits_back_into_its_terms() -> None:
    stored = _sketch(TRICKY, "more words here")
    terms = list(dict.fromkeys(tokens(TRICKY) + tokens("more words here")))
    assert stored.split() == terms[:SKETCH_TOKENS]
    assert all(not any(c.isspace() for c in term) for term in terms)
    long = " ".join(f"word{i}" for i in range(200))
    assert len(_sketch(long).split()) == SKETCH_TOKENS


def test_hits_carry_the_sketch_as_a_set_of_terms(project: Project) -> None:
    project.remember(TRICKY, "gotcha", title="Client retries")
    index = project.refresh(project.vault)
    hit, = engine.candidates(index, "client retries", (), Filters())
    assert isinstance(hit.meta["sketch"], str)
    assert hit.sketch == frozenset(tokens("Client retries") + tokens(TRICKY))
    assert {"client", "retry_default"} <= hit.sketch

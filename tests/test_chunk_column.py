"""A note's chunks live in a column of their own (`schema.CHUNKS_COLUMN`), read only for
the hits a search shows (`Hit.chunks`): the candidates it ranks read the small stored
fields alone. Real Whoosh indexes, real notes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from whoosh import index as windex

from ocm.indexer import search as engine
from ocm.indexer.hits import Filters, Hit
from ocm.indexer.livestats import LiveSearcher
from ocm.indexer.postings import PostingScorer
from ocm.indexer.schema import SCHEMA_VERSION, build_schema, weighting
from ocm.project import Project

SESSION = """---
id: s1
kind: session
tool: claude-code
started_at: 2026-03-02 10:00:00
---
## Goal
Make the invoice webhook retry with backoff when the payment provider times out.

## Work Done
Added exponential backoff to the invoice webhook handler and a dead letter queue for
payments that still fail after five tries; the handler logs every retry with its delay.

## Architecture Decisions
Retries stay in the worker, not in the provider's dashboard, so tests can drive them.
"""


def _world(project: Project) -> Project:
    (project.vault.root / "sessions" / "2026-03-02_10-00_claude-code_billing.md").write_text(
        SESSION)
    project.remember("Kafka consumers commit offsets after the write.", "gotcha",
                     title="Kafka offsets")
    project.remember("The invoice PDF renderer needs the fonts package.", "gotcha",
                     title="Invoice fonts")
    return project


def test_candidates_leave_chunks_unread_and_read_them_on_first_use(project: Project) -> None:
    _world(project)
    index = project.refresh(project.vault)
    hits = engine.candidates(index, "invoice webhook backoff", (), Filters())
    assert {h.kind for h in hits} == {"session", "memory"}
    assert all(h._chunks is None and h.chunk_source is not None for h in hits)
    session = next(h for h in hits if h.kind == "session")
    titles = [chunk[0] for chunk in session.chunks]
    assert titles == ["Goal", "Work Done", "Architecture Decisions"]
    assert "dead letter queue" in session.chunks[1][5]
    # Read once: the source is let go of, a copy carries what was read.
    assert session.chunk_source is None and session._chunks is not None
    assert replace(session, score=1.0).chunks == session.chunks
    # The other candidates still have not read theirs.
    assert all(h._chunks is None for h in hits if h is not session)


def test_search_shows_the_best_section_from_the_column(project: Project) -> None:
    _world(project)
    hits = project.search("dead letter queue")
    top = hits[0]
    assert top.kind == "session" and top.chunk is not None
    assert top.chunk.section == "Work Done"
    assert "dead letter queue" in top.chunk.snippet
    assert top.chunk.anchor.endswith("#Work Done")
    out = top.to_json()
    assert out["section"] == "Work Done" and "dead letter" in out["snippet"]


def test_a_hit_without_a_source_has_no_chunks() -> None:
    hit = Hit(id="x", kind="memory", type="gotcha", title="t", status="active", tool="",
              scope="project", date=None, path=Path("/v/x.md"), meta={})
    assert hit.chunks == []


def test_a_segment_written_without_the_column_gives_no_chunks(tmp_path: Path) -> None:
    """A segment none of whose documents has chunks has no `chunks` column: its notes
    read as having none, and the scorer still scores them."""
    ix = windex.create_in(str(tmp_path), build_schema())
    writer = ix.writer()
    writer.add_document(path="memories/a.md", id="a", kind="memory", content="kafka offsets")
    writer.commit()
    with LiveSearcher(ix.reader(), fromindex=ix, weighting=weighting()) as searcher:
        assert not searcher.reader().has_column("chunks")
        scorer = PostingScorer(searcher, 1.2, 0.75)
        assert scorer.chunks(0) == []
        assert [doc for doc, _ in scorer.top([("content", "kafka", 4.0)], 5)] == [0]
    writer = ix.writer()
    writer.add_document(path="memories/b.md", id="b", kind="memory", content="kafka",
                        chunks=[("", 0, 1, "", "content", "kafka", 1)])
    writer.commit()
    with LiveSearcher(ix.reader(), fromindex=ix, weighting=weighting()) as searcher:
        scorer = PostingScorer(searcher, 1.2, 0.75)
        by_path = {searcher.stored_fields(doc)["path"]: doc for doc in range(2)}
        assert scorer.chunks(by_path["memories/a.md"]) == []
        assert scorer.chunks(by_path["memories/b.md"]) == [("", 0, 1, "", "content",
                                                           "kafka", 1)]


def test_an_index_of_the_older_schema_is_rebuilt_with_the_column(project: Project) -> None:
    """An index written before the column (schema 8 kept chunks in the stored fields) is
    rebuilt by the next search, which then shows sections."""
    _world(project)
    project.search("invoice")
    project.index_for(project.vault).close()
    manifest = project.vault.index_dir / "manifest.json"
    data = json.loads(manifest.read_text())
    assert data["schema"] == SCHEMA_VERSION
    data["schema"] = SCHEMA_VERSION - 1
    manifest.write_text(json.dumps(data))
    again = Project.open(cwd=project.vault.root.parent)
    hits = again.search("dead letter queue")
    assert hits[0].chunk is not None and hits[0].chunk.section == "Work Done"
    assert json.loads(manifest.read_text())["schema"] == SCHEMA_VERSION

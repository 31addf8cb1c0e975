"""Chunks: every `##`/`###` section of a note, linked, located and quoted in results;
grouping per note, `--chunks` / `group: false`, and `ocm show ID#Heading` /
`ocm__get_note(section=…)`. Real Whoosh indexes in real git repos throughout."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from ocm.indexer.chunks import SHORT_NOTE_CHARS, SNIPPET_CHARS, _bm25, snippet
from ocm.mcp_server.server import build_server
from ocm.project import Project, SearchRequest
from ocm.vault.errors import NotFound
from ocm.vault.markdown import Document
from ocm.vault.sections import find_section, link_heading, sections

from .conftest import snapshot

# run_ocm: what these check is a command's output and exit code, not a process of its own.
pytestmark = pytest.mark.cli_in_process

FILLER = ("The team reviewed the deployment checklist and the rollout notes together, "
          "then wrote down what everyone agreed on before the meeting ended. ")

SESSION = f"""---
id: 2026-03-02_10-00_claude-code_billing-rework
tool: claude-code
status: closed
started_at: 2026-03-02T10:00:00
slug: billing-rework
---

## Goal
Rework the billing pipeline so invoices are generated once per period.

---

## Todos

### ✅ Work Completed
- Moved invoice generation into a nightly job
- {FILLER}

### 🔲 Work To Be Completed
- Backfill the missing March invoices

---

## Work Done

{FILLER * 3}The invoice job now takes a Postgres advisory lock so two workers never bill
the same customer twice. {FILLER}

---

## Architecture Decisions

- **Advisory lock over a queue:** one lock per customer id is enough at our volume.

---

## Q: why #2? | a^b [[x]]
Kafka was considered and dropped for now.
"""


def _session_path(project: Project) -> Path:
    path = project.vault.root / "sessions" / "2026-03-02_10-00_claude-code_billing-rework.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _write(path: Path, text: str) -> None:
    """An editor's save: new bytes, and an mtime the freshness check cannot miss."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


def _line_of(path: Path, heading_line: str) -> int:
    return path.read_text(encoding="utf-8").split("\n").index(heading_line) + 1


def _search(project: Project, query: str, **kwargs: Any):
    return project.search(SearchRequest(query=query, **kwargs))


@pytest.fixture
def billing(project: Project) -> Path:
    path = _session_path(project)
    _write(path, SESSION)
    return path


# ----------------------------------------------------------------------------- sections


def test_sections_lines_levels_and_fences_match_the_file() -> None:
    text = ("\ufeff---\r\nid: x\r\n---\r\n# Title\r\n\r\nlead words\r\n## One\r\nfirst\r\n"
            "### Sub\r\nsecond\r\n```\r\n## not a heading\r\n```\r\n## Two\r\nthird\r\n")
    doc = Document.parse(text)
    found = sections(doc)
    assert [(s.title, s.level, s.line) for s in found] == [
        ("", 0, 4), ("One", 2, 7), ("Sub", 3, 9), ("Two", 2, 14)]
    lines = text.lstrip("\ufeff").split("\r\n")
    for section in found[1:]:
        assert lines[section.line - 1].lstrip("#").strip() == section.title
    assert found[0].text == "# Title\n\nlead words"
    assert found[1].text == "first"  # the `###` is a chunk of its own
    assert "## not a heading" in found[2].text  # fenced, so text
    _, markdown = find_section(doc, "one")
    assert markdown == "## One\nfirst\n### Sub\nsecond\n```\n## not a heading\n```\n"


def test_obsidian_heading_links_replace_link_breaking_characters() -> None:
    # Obsidian writes [[note#Q why 2 a b x]] for this heading: `:` `#` `|` `^` `[[` `]]`
    # and `%%` become spaces, runs of spaces one.
    assert link_heading("Q: why #2? | a^b [[x]]") == "Q why 2? a b x"
    assert link_heading("50%% done \\ really") == "50 done really"
    assert link_heading("✅ Work Completed") == "✅ Work Completed"
    doc = Document.parse("## Notes\na\n### Notes\nb\n## Other\n### Notes\nc\n")
    assert [s.link for s in sections(doc)] == ["Notes", "Notes#Notes", "Other", "Other#Notes"]
    assert find_section(doc, "Other#Notes")[1] == "### Notes\nc\n"


def test_unknown_or_empty_section_names_the_note_and_the_heading() -> None:
    doc = Document.parse("## Goal\nx\n")
    with pytest.raises(NotFound, match="^note abc has no section 'Nope'$"):
        find_section(doc, "Nope", where="note abc")
    with pytest.raises(NotFound, match="no section name given for note abc"):
        find_section(doc, "  ", where="note abc")


def test_snippet_is_short_and_shows_the_query_words_in_context() -> None:
    text = FILLER * 6 + "The advisory lock stops double billing. " + FILLER * 4
    short = snippet(text, ["advisori", "lock"])
    assert len(short) <= SNIPPET_CHARS
    assert "advisory lock" in short and short.startswith("…") and short.endswith("…")
    assert snippet(text, ["nothing"]).startswith("The team reviewed")
    assert len(snippet(text, ["nothing"])) <= SNIPPET_CHARS
    assert snippet("tiny  text\n here", ["tiny"]) == "tiny text here"


# ----------------------------------------------------------------------------- search


def test_a_hit_carries_its_best_section(project: Project, billing: Path) -> None:
    hit = _search(project, "postgres workers twice")[0]
    assert hit.id == "2026-03-02_10-00_claude-code_billing-rework"
    data = hit.to_json()
    assert data["markdown_path"] == str(billing.resolve())
    assert data["section"] == "Work Done"
    assert data["anchor"] == "sessions/2026-03-02_10-00_claude-code_billing-rework.md#Work Done"
    assert data["line"] == _line_of(billing, "## Work Done")
    assert "two workers never bill" in data["snippet"]
    assert len(data["snippet"]) <= SNIPPET_CHARS
    # The same words weigh more in a short, higher-boosted section: decisions (8) there.
    assert _search(project, "advisory lock")[0].chunk.section == "Architecture Decisions"

    nested = _search(project, "backfill march invoices")[0].chunk
    assert nested is not None and nested.section == "🔲 Work To Be Completed"
    assert nested.line == _line_of(billing, "### 🔲 Work To Be Completed")

    odd = _search(project, "kafka")[0].chunk
    assert odd is not None and odd.anchor.endswith(".md#Q why 2? a b x")


def test_anchors_follow_edits_made_in_an_editor(project: Project, billing: Path) -> None:
    query = "postgres workers twice"
    assert _search(project, query)[0].chunk.section == "Work Done"
    # Heading renamed.
    _write(billing, SESSION.replace("## Work Done", "## What We Did"))
    chunk = _search(project, query)[0].chunk
    assert chunk.section == "What We Did" and chunk.anchor.endswith(".md#What We Did")
    renamed_line = chunk.line
    assert renamed_line == _line_of(billing, "## What We Did")
    # A section added above it moves its line.
    text = billing.read_text().replace("## Todos", "## Context\nSome context here.\n\n## Todos")
    _write(billing, text)
    chunk = _search(project, query)[0].chunk
    assert chunk.line == _line_of(billing, "## What We Did") == renamed_line + 3
    assert _search(project, "some context")[0].chunk.section == "Context"
    # The section removed: its words and its anchor are gone, the rest still links.
    start = text.index("## What We Did")
    _write(billing, text[:start] + text[text.index("## Architecture Decisions"):])
    assert _search(project, query) == []
    chunk = _search(project, "advisory lock")[0].chunk
    assert chunk.section == "Architecture Decisions"
    assert chunk.line == _line_of(billing, "## Architecture Decisions")


def test_results_are_grouped_per_note_unless_chunks_are_asked(
        project: Project, billing: Path) -> None:
    project.remember("Invoices for March are missing after the billing outage.",
                     "context", title="March invoices missing")
    grouped = _search(project, "invoice billing march")
    assert len({h.id for h in grouped}) == len(grouped) == 2
    chunks = _search(project, "invoice billing march", group=False)
    session_chunks = [h for h in chunks if h.kind == "session"]
    assert len(session_chunks) >= 3  # Goal, Todos' two, Work Done all say invoice/billing
    assert len({h.chunk.anchor for h in chunks}) == len(chunks)
    assert [h.rank for h in chunks] == list(range(1, len(chunks) + 1))
    assert chunks == sorted(chunks, key=lambda h: -h.score)
    # The note's best chunk keeps the note's score: it is the grouped hit.
    best = next(h for h in grouped if h.kind == "session")
    assert session_chunks[0].chunk.anchor == best.chunk.anchor
    assert session_chunks[0].score == pytest.approx(best.score)
    assert len(_search(project, "invoice billing march", group=False, limit=2)) == 2


def test_short_notes_with_headings_are_chunked_too(project: Project) -> None:
    """Issue #26: a memory's `##` sections are its chunks however short the note is (a
    person's note written with headings: the hit points at the section, not the file)."""
    text = "## Why\nShort reason about retries.\n\n## How\nUse backoff with jitter.\n"
    assert len(text) < SHORT_NOTE_CHARS
    result = project.remember(text, "procedure", title="Retry policy")
    hit = _search(project, "jitter backoff")[0]
    assert hit.id == result.id
    assert hit.chunk.section == "How" and hit.chunk.anchor.endswith("#How")
    assert hit.chunk.line == _line_of(result.path, "## How")
    assert hit.chunk.snippet == "Use backoff with jitter."


def test_short_notes_without_headings_stay_one_chunk(project: Project) -> None:
    result = project.remember("Use backoff with jitter for retries.", "procedure",
                              title="Retry policy")
    hit = _search(project, "jitter backoff")[0]
    assert hit.id == result.id
    assert hit.chunk.section == "" and "#" not in hit.chunk.anchor
    assert hit.chunk.anchor == result.path.resolve().relative_to(
        project.vault.root.resolve()).as_posix()
    assert len(_search(project, "jitter backoff", group=False)) == 1


def test_long_memories_with_headings_are_chunked(project: Project) -> None:
    body = (f"Intro line.\n\n## Setup\n{FILLER * 2}\n\n## Rollback\n{FILLER}"
            "To roll back, redeploy the previous image tag.\n")
    result = project.remember(body, "procedure", title="Deploying the API")
    hit = _search(project, "roll back previous image")[0]
    assert hit.id == result.id and hit.chunk.section == "Rollback"
    assert hit.chunk.line == _line_of(result.path, "## Rollback")


# ----------------------------------------------------------------------------- show / get


def test_show_prints_one_section(run_ocm: Callable, project: Project, billing: Path) -> None:
    sid = "2026-03-02_10-00_claude-code_billing-rework"
    out = run_ocm("show", f"{sid}#Architecture Decisions").stdout
    assert out == ("## Architecture Decisions\n\n- **Advisory lock over a queue:** one lock "
                   "per customer id is enough at our volume.\n")
    todos = run_ocm("show", f"{sid}#todos").stdout
    assert todos.startswith("## Todos\n") and "### 🔲 Work To Be Completed" in todos
    assert "## Work Done" not in todos
    anchor = _search(project, "kafka")[0].chunk.anchor
    linked = run_ocm("show", f"{sid}#{anchor.split('#', 1)[1]}").stdout
    assert linked.startswith("## Q: why #2? | a^b [[x]]\nKafka was considered")


def test_show_unknown_section_is_one_line_exit_1_and_changes_nothing(
        run_ocm: Callable, project: Project, billing: Path) -> None:
    before = snapshot(project.vault.root)
    sid = "2026-03-02_10-00_claude-code_billing-rework"
    done = run_ocm("show", f"{sid}#No Such Heading", check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: note {sid} has no section 'No Such Heading'"]
    missing = run_ocm("show", "no-such-note#Goal", check=False)
    assert missing.returncode == 1 and "no-such-note" in missing.stderr
    assert snapshot(project.vault.root) == before


def test_get_with_section_returns_its_markdown_title_and_line(
        project: Project, billing: Path) -> None:
    note = project.get("2026-03-02_10-00_claude-code_billing-rework", section="Work Done")
    assert note["section"] == "Work Done"
    assert note["line"] == _line_of(billing, "## Work Done")
    assert note["markdown"].startswith("## Work Done\n") and "advisory lock" in note["markdown"]
    assert "## Goal" not in note["markdown"]


# ----------------------------------------------------------------------------- MCP


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_search_groups_and_get_note_takes_a_section(
        project: Project, billing: Path, repo: Path) -> None:
    async with Client(build_server(repo), raise_exceptions=True) as client:
        grouped = await client.call_tool("ocm__search", {"query": "invoice billing"})
        assert grouped.is_error is not True
        results = grouped.structured_content["results"]
        assert len(results) == 1
        assert results[0]["anchor"].startswith("sessions/2026-03-02_10-00_claude-code_billing")
        assert results[0]["line"] >= 1 and len(results[0]["snippet"]) <= SNIPPET_CHARS

        listed = await client.call_tool("ocm__search",
                                        {"query": "invoice billing", "group": False})
        chunks = listed.structured_content["results"]
        assert len(chunks) >= 3 and len({c["anchor"] for c in chunks}) == len(chunks)

        sid = "2026-03-02_10-00_claude-code_billing-rework"
        note = await client.call_tool("ocm__get_note", {"id": sid, "section": "Goal"})
        assert note.is_error is not True
        assert note.structured_content["markdown"] == (
            "## Goal\nRework the billing pipeline so invoices are generated once per "
            "period.\n")
        assert note.structured_content["section"] == "Goal"
        assert note.structured_content["line"] == _line_of(billing, "## Goal")

        before = snapshot(project.vault.root)
        bad = await client.call_tool("ocm__get_note", {"id": sid, "section": "Budget"})
        assert bad.is_error is True
        assert bad.content[0].text.endswith(f"note {sid} has no section 'Budget'")
        assert snapshot(project.vault.root) == before
    await anyio.sleep(0)


def test_cli_search_json_and_chunks_flag(run_ocm: Callable, project: Project,
                                         billing: Path) -> None:
    import json

    grouped = json.loads(run_ocm("search", "invoice", "billing", "--json").stdout)
    assert [h["id"] for h in grouped] == ["2026-03-02_10-00_claude-code_billing-rework"]
    assert grouped[0]["anchor"].split("#")[0] == billing.relative_to(
        project.vault.root).as_posix()
    listed = json.loads(run_ocm("search", "invoice", "billing", "--chunks", "--json").stdout)
    assert len(listed) >= 3 and len({h["anchor"] for h in listed}) == len(listed)
    assert listed[0]["anchor"] == grouped[0]["anchor"]
    table = run_ocm("search", "invoice", "billing", "--chunks").stdout
    # The copyable path lines carry the section's line: `path:line`.
    assert f"{billing.resolve()}:{listed[0]['line']}" in table


def test_a_chunk_score_does_not_follow_the_order_its_terms_were_counted_in() -> None:
    """The counts are filled from sets (their order follows PYTHONHASHSEED); a float sum in
    their order gave 0.6000000000000001 one run and 0.6 the next."""
    idf = {"alpha": 0.1, "beta": 0.2, "gamma": 0.3}

    def score(counts: dict[str, int]) -> float:
        return _bm25(counts, "body", 10, lambda _, term: idf[term], lambda _: 10.0)

    forward = score({"alpha": 1, "beta": 1, "gamma": 1})
    assert forward == score({"gamma": 1, "beta": 1, "alpha": 1})
    assert forward == score({"beta": 1, "gamma": 1, "alpha": 1})

"""Default (grouped) search over transcript notes: a conversation lists up to
TRANSCRIPT_TURNS of its matching turns, each with its own anchor, while every other note
stays one result; the same through `ocm search` and `ocm__search`. Real Whoosh indexes in
real git repos; transcript notes written by the real rendering code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from ocm.indexer.search import TRANSCRIPT_TURNS
from ocm.mcp_server.server import build_server
from ocm.project import Project
from ocm.vault import transcripts as vt

FILLER = ("We went through the rest of the plan for the week and agreed to look at it "
          "again tomorrow morning before the stand-up. ")
TOPICS = [
    "the retry budget of the payment client is three attempts with jitter",
    "lunch plans for Friday at the noodle place",
    "the retry budget should grow when the gateway returns 503, retry budget doubled",
    "the onboarding doc needs screenshots of the new settings page",
    "retry budget exhausted alerts fire too often in staging",
    "the retry budget metric goes on the payments dashboard",
    "a retry budget per tenant instead of one global retry budget",
    "renaming the design review meeting",
]
SESSION_ID = "2026-03-02_10-00_claude-code_payments"
NOTE_ID = f"{SESSION_ID}{vt.SUFFIX}"


def _write_transcript(project: Project, topics: list[str] = TOPICS) -> Path:
    turns = [vt.Turn(prompt=f"{topic}. {FILLER}", time=f"2026-03-02T10:{i:02d}:00")
             for i, topic in enumerate(topics)]
    source = project.vault.root.parent / "empty.jsonl"
    source.write_text("{}\n")
    result = vt.fold(project.vault.root, SESSION_ID, SESSION_ID, "claude-code", "",
                     str(source), lambda _lines: (turns, 1))
    assert result is not None and result.turns == len(topics)
    return result.path


@pytest.fixture
def world(project: Project) -> Project:
    _write_transcript(project)
    project.remember("The payment client's retry budget lives in config/payments.toml "
                     "as max_attempts.", "gotcha", title="Retry budget config")
    # Notes on other subjects: a vault of two notes only would scale the meaning part of
    # the score (min-max over the candidates) to all or nothing.
    for text in ("The staging database is reset every Sunday night.",
                 "Use pnpm, not npm, in the web folder.",
                 "Release notes are written in docs/changes.md before tagging."):
        project.remember(text, "convention")
    return project


def _turn(anchor: str) -> int:
    return int(anchor.split("#Turn ", 1)[1].split(" ", 1)[0])


def test_transcript_lists_its_best_turns_capped_others_stay_grouped(world: Project) -> None:
    hits = world.search("retry budget")
    mine = [h for h in hits if h.id == NOTE_ID]
    others = [h for h in hits if h.id != NOTE_ID]
    # Five turns match; the note lists exactly TRANSCRIPT_TURNS of them, each its own anchor.
    assert len(mine) == TRANSCRIPT_TURNS == 3
    anchors = [h.chunk.anchor for h in mine if h.chunk is not None]
    assert len(set(anchors)) == 3
    assert all(a.startswith(f"transcripts/{NOTE_ID}.md#Turn ") for a in anchors)
    assert {_turn(a) for a in anchors} <= {1, 3, 5, 6, 7}  # only turns that hold the words
    # The memory is one result; ranks are 1..n in list order.
    assert [h.kind for h in others] == ["memory"]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    # The note's best turn comes before its other turns, which score no higher.
    first = hits.index(mine[0])
    assert all(hits.index(h) > first and h.score <= mine[0].score for h in mine[1:])
    # group=False still lists every matching turn.
    listed = world.search("retry budget", group=False)
    assert len([h for h in listed if h.id == NOTE_ID]) == 5


def test_a_turn_without_the_query_words_is_never_listed(world: Project) -> None:
    hits = world.search("noodle lunch")
    mine = [h for h in hits if h.id == NOTE_ID]
    assert len(mine) == 1 and mine[0].chunk is not None
    assert _turn(mine[0].chunk.anchor) == 2


def test_limit_counts_the_extra_turns(world: Project) -> None:
    hits = world.search("retry budget", limit=2)
    assert len(hits) == 2 and [h.rank for h in hits] == [1, 2]


def test_short_transcript_is_one_result(project: Project) -> None:
    _write_transcript(project, ["retry budget", "retry budget again"])  # one chunk
    hits = project.search("retry budget")
    assert [h.id for h in hits] == [NOTE_ID]


@pytest.mark.cli_in_process
def test_cli_search_json_lists_the_turn_anchors(
        world: Project, run_ocm: Callable[..., Any]) -> None:
    out = run_ocm("search", "retry", "budget", "--json")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    anchors = [r["anchor"] for r in found if r["id"] == NOTE_ID]
    assert len(anchors) == 3 and len(set(anchors)) == 3
    assert [r["rank"] for r in found] == list(range(1, len(found) + 1))


@pytest.mark.anyio
async def test_mcp_search_lists_the_turn_anchors(world: Project, repo: Path) -> None:
    async with Client(build_server(repo), raise_exceptions=True) as client:
        result = await client.call_tool("ocm__search", {"query": "retry budget"})
        assert result.is_error is not True
        rows = result.structured_content["results"]
        anchors = [r["anchor"] for r in rows if r["id"] == NOTE_ID]
        assert len(anchors) == 3 and len(set(anchors)) == 3
        assert [r["kind"] for r in rows].count("memory") == 1
    await anyio.sleep(0)

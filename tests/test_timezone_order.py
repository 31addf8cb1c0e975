"""Issue #31: transcript notes and the Obsidian dashboard order by the true instant, not by
local time. A transcript begun in Tokyo, then one begun after it in Los Angeles: the first
carries the later local time (the trap), yet lists as the older of the two."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ocm.project import Project, SearchRequest
from ocm.vault import obsidian
from ocm.vault import transcripts as vt
from ocm.vault.clock import instant
from ocm.vault.markdown import Document

TOKYO, LOS_ANGELES = "Asia/Tokyo", "America/Los_Angeles"


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """Sets this process's time zone (TZ, then tzset), as a machine that travelled."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


def fold(project: Project, tmp_path: Path, sid: str, words: str) -> Path:
    source = tmp_path / f"{sid}.jsonl"
    source.write_text("{}\n")
    turns = [vt.Turn(prompt=f"the zone check {words}", texts=[f"answered {words}"])]
    result = vt.fold(project.vault.root, sid, sid, "claude-code", sid, str(source),
                     lambda lines: (turns, 1))
    assert result is not None
    return result.path


def test_transcripts_list_by_their_true_start(project: Project, tmp_path: Path,
                                              zone) -> None:
    zone(TOKYO)
    early = fold(project, tmp_path, "tokyo-0001", "tokyo")
    time.sleep(1.1)  # a second later, on the other side of the Pacific
    zone(LOS_ANGELES)
    late = fold(project, tmp_path, "la-0002", "angeles")
    first = Document.parse(early.read_text()).frontmatter.data
    second = Document.parse(late.read_text()).frontmatter.data
    assert str(first["started_at"]) > str(second["started_at"])  # the trap is real
    assert str(first["started_at_utc"]).endswith("Z")
    assert instant(first["started_at_utc"], None) < instant(second["started_at_utc"], None)
    for reader in (LOS_ANGELES, TOKYO):  # whichever zone reads them
        zone(reader)
        listed = Project.open(vault=project.vault.root).search(
            SearchRequest(query="", kind="transcript", limit=5))
        assert [hit.path.name for hit in listed] == [late.name, early.name]


def test_a_transcript_without_a_utc_start_keeps_its_local_order(project: Project,
                                                                tmp_path: Path) -> None:
    """Notes written before `started_at_utc`: their local time, read in today's zone."""
    older = fold(project, tmp_path, "old-0001", "older")
    newer = fold(project, tmp_path, "old-0002", "newer")
    for path, stamp in ((older, "2026-01-05T10:00:00"), (newer, "2026-01-06T10:00:00")):
        text = path.read_text()
        start = text.index("started_at_utc:")
        text = text[:start] + text[text.index("\n", start) + 1:]
        path.write_text(text.replace(
            text[text.index("started_at: ") + 12:text.index("\n", text.index("started_at: "))],
            stamp, 1))
    listed = Project.open(vault=project.vault.root).search(
        SearchRequest(query="", kind="transcript", limit=5))
    assert [hit.path.name for hit in listed] == [newer.name, older.name]


def test_the_dashboard_sorts_sessions_by_the_true_instant(tmp_path: Path) -> None:
    assert obsidian.write_base(tmp_path) == "created"
    base = yaml.safe_load((tmp_path / obsidian.BASE_NAME).read_text())
    started = base["formulas"]["started"]
    assert "started_at_utc" in started and "started_at" in started.replace(
        "started_at_utc", "")  # the UTC start, else the local one (older notes)
    sessions = [v for v in base["views"] if 'file.inFolder("sessions")' in v["filters"]["and"]]
    assert len(sessions) == 3
    for view in sessions:
        assert view["sort"] == [{"property": "formula.started", "direction": "DESC"}]
        assert "started_at" not in [s["property"] for s in view["sort"]]

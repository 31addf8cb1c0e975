from __future__ import annotations

from dataclasses import FrozenInstanceError
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocm.indexer.query import TOOLS, ParsedQuery, canonical_tool, parse_query

# Wednesday afternoon, so "this week", weekdays and month inference are all exercised.
NOW = datetime(2026, 5, 20, 14, 30)


def d(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day)


def ago(**kw: float) -> datetime:
    return NOW - timedelta(**kw)


# (query, text, since, until, tool, paths)
CASES: list[tuple[str, str, datetime | None, datetime | None, str | None, tuple[str, ...]]] = [
    # --- relative days
    ("today", "", d(2026, 5, 20), d(2026, 5, 21), None, ()),
    ("what did I fix yesterday", "what did I fix", d(2026, 5, 19), d(2026, 5, 20), None, ()),
    ("Yesterday: flaky tests", "flaky tests", d(2026, 5, 19), d(2026, 5, 20), None, ()),
    ("today's deploy", "deploy", d(2026, 5, 20), d(2026, 5, 21), None, ()),
    ("3 days ago", "", d(2026, 5, 17), d(2026, 5, 18), None, ()),
    ("errors from two days ago", "errors", d(2026, 5, 18), d(2026, 5, 19), None, ()),
    ("2 weeks ago", "", d(2026, 5, 4), d(2026, 5, 11), None, ()),
    ("a month ago", "", d(2026, 4, 1), d(2026, 5, 1), None, ()),
    # --- rolling windows
    # "last week" / "last month" are the previous calendar periods (NOW is a Wednesday).
    ("auth bug last week", "auth bug", datetime(2026, 5, 11), datetime(2026, 5, 18), None, ()),
    ("previous week", "", datetime(2026, 5, 11), datetime(2026, 5, 18), None, ()),
    ("last year", "", datetime(2025, 1, 1), datetime(2026, 1, 1), None, ()),
    ("past week deploys", "deploys", ago(days=7), None, None, ()),
    ("this week", "", d(2026, 5, 18), None, None, ()),
    ("last month", "", datetime(2026, 4, 1), datetime(2026, 5, 1), None, ()),
    ("past month", "", ago(days=30), None, None, ()),
    ("this month", "", d(2026, 5, 1), None, None, ()),
    ("this year", "", d(2026, 1, 1), None, None, ()),
    ("last 3 days", "", ago(days=3), None, None, ()),
    ("past 2 weeks", "", ago(days=14), None, None, ()),
    ("Last 2 Months", "", ago(days=60), None, None, ()),
    ("migrations in the last 3 days", "migrations", ago(days=3), None, None, ()),
    ("over the past few days", "", ago(days=3), None, None, ()),
    ("last two weeks", "", ago(days=14), None, None, ()),
    ("past 24 hours", "", ago(hours=24), None, None, ()),
    # --- prepositions + absolute dates
    ("since 2026-03-15", "", d(2026, 3, 15), None, None, ()),
    ("since march 1", "", d(2026, 3, 1), None, None, ()),
    ("after march 15", "", d(2026, 3, 16), None, None, ()),
    ("before 2025", "", None, d(2025, 1, 1), None, ()),
    ("before march 15", "", None, d(2026, 3, 15), None, ()),
    ("until april 2", "", None, d(2026, 4, 3), None, ()),
    ("on 2026-03-15", "", d(2026, 3, 15), d(2026, 3, 16), None, ()),
    ("on march 3rd", "", d(2026, 3, 3), d(2026, 3, 4), None, ()),
    ("since monday", "", d(2026, 5, 18), None, None, ()),
    ("on friday", "", d(2026, 5, 15), d(2026, 5, 16), None, ()),
    ("last friday", "", d(2026, 5, 15), d(2026, 5, 16), None, ()),
    ("last wednesday", "", d(2026, 5, 13), d(2026, 5, 14), None, ()),
    ("notes from yesterday", "notes", d(2026, 5, 19), d(2026, 5, 20), None, ()),
    # --- months and years
    ("in january", "", d(2026, 1, 1), d(2026, 2, 1), None, ()),
    ("in march", "", d(2026, 3, 1), d(2026, 4, 1), None, ()),
    ("in May", "", d(2026, 5, 1), d(2026, 6, 1), None, ()),
    ("in june", "", d(2025, 6, 1), d(2025, 7, 1), None, ()),
    ("in december", "", d(2025, 12, 1), d(2026, 1, 1), None, ()),
    ("in 2025", "", d(2025, 1, 1), d(2026, 1, 1), None, ()),
    ("refactor in march 2025", "refactor", d(2025, 3, 1), d(2025, 4, 1), None, ()),
    ("may 2025", "", d(2025, 5, 1), d(2025, 6, 1), None, ()),
    # --- bare explicit dates
    ("march 15", "", d(2026, 3, 15), d(2026, 3, 16), None, ()),
    ("15 march 2026", "", d(2026, 3, 15), d(2026, 3, 16), None, ()),
    ("march 15, 2025 outage", "outage", d(2025, 3, 15), d(2025, 3, 16), None, ()),
    ("2026-03-15 standup", "standup", d(2026, 3, 15), d(2026, 3, 16), None, ()),
    # Month/day without a year is never in the future: "july 4" in May is last year's.
    ("july 4", "", d(2025, 7, 4), d(2025, 7, 5), None, ()),
    # --- ranges
    ("between march 1 and march 10", "", d(2026, 3, 1), d(2026, 3, 11), None, ()),
    ("from 2026-01-01 to 2026-01-31", "", d(2026, 1, 1), d(2026, 2, 1), None, ()),
    ("since march 1 before march 10", "", d(2026, 3, 1), d(2026, 3, 10), None, ()),
    # --- tools
    ("in cursor", "", None, None, "cursor", ()),
    ("what did I do in cursor", "what did I do", None, None, "cursor", ()),
    ("cursor session", "", None, None, "cursor", ()),
    ("from cursor about auth", "auth", None, None, "cursor", ()),
    ("with claude code", "", None, None, "claude-code", ()),
    ("hooks with Claude Code", "hooks", None, None, "claude-code", ()),
    ("claude code session", "", None, None, "claude-code", ()),
    ("claude-code sessions on retries", "retries", None, None, "claude-code", ()),
    ("in codex", "", None, None, "codex", ()),
    ("using gemini", "", None, None, "gemini", ()),
    ("using gemini cli", "", None, None, "gemini", ()),
    ("in vs code", "", None, None, "vscode", ()),
    ("in VSCode", "", None, None, "vscode", ()),
    ("copilot session", "", None, None, "copilot", ()),
    ("in windsurf", "", None, None, "windsurf", ()),
    ("antigravity chat", "", None, None, "antigravity", ()),
    # The first tool wins; the rival name stays searchable.
    ("in claude code and in cursor", "cursor", None, None, "claude-code", ()),
    # --- combined
    ("cursor session about auth last week", "auth", datetime(2026, 5, 11),
     datetime(2026, 5, 18), "cursor", ()),
    (
        "rate limiter in cursor yesterday",
        "rate limiter",
        d(2026, 5, 19),
        d(2026, 5, 20),
        "cursor",
        (),
    ),
    (
        "with claude code on src/api/client.py since march 1",
        "src/api/client.py",
        d(2026, 3, 1),
        None,
        "claude-code",
        ("src/api/client.py",),
    ),
    # --- false-positive guards: nothing is a filter
    ("we may need a retry", "we may need a retry", None, None, None, ()),
    ("bug in may be stale", "bug in may be stale", None, None, None, ()),
    ("the fix since may be null", "the fix since may be null", None, None, None, ()),
    ("3 may be enough", "3 may be enough", None, None, None, ()),
    ("march forward with the plan", "march forward with the plan", None, None, None, ()),
    ("429 errors from the api", "429 errors from the api", None, None, None, ()),
    ("retry 2 times", "retry 2 times", None, None, None, ()),
    ("2025 budget", "2025 budget", None, None, None, ()),
    ("cap output in 2000 lines", "cap output in 2000 lines", None, None, None, ()),
    ("monday standup notes", "monday standup notes", None, None, None, ()),
    ("the last day of the sprint", "the last day of the sprint", None, None, None, ()),
    ("before last week", "before last week", None, None, None, ()),
    ("db cursor pagination bug", "db cursor pagination bug", None, None, None, ()),
    ("cursor", "cursor", None, None, None, ()),
    ("off-by-one in cursor pagination", "off-by-one in cursor pagination", None, None, None, ()),
    ("fetch rows from cursor", "fetch rows from cursor", None, None, None, ()),
    ("move with the cursor", "move with the cursor", None, None, None, ()),
    ("db cursor session leak", "db cursor session leak", None, None, None, ()),
    ("claude code hooks config", "claude code hooks config", None, None, None, ()),
    ("compile with cc", "compile with cc", None, None, None, ()),
    ("cursor.py crashes", "cursor.py crashes", None, None, None, ("cursor.py",)),
    ("src/today/notes.py", "src/today/notes.py", None, None, None, ("src/today/notes.py",)),
    (
        "notes/2026-03-15.md",
        "notes/2026-03-15.md",
        None,
        None,
        None,
        ("notes/2026-03-15.md",),
    ),
    # --- paths
    (
        "fix `src/api/client.py:42`, and config.yaml",
        "fix `src/api/client.py:42`, and config.yaml",
        None,
        None,
        None,
        ("src/api/client.py", "config.yaml"),
    ),
    ("see README.md.", "see README.md.", None, None, None, ("README.md",)),
    ('"ocm/indexer/" layout', '"ocm/indexer/" layout', None, None, None, ("ocm/indexer/",)),
    (".env leaks, not the .py files", ".env leaks, not the .py files", None, None, None, (".env",)),
    ("Cargo.lock vs go.sum", "Cargo.lock vs go.sum", None, None, None, ("Cargo.lock",)),
    (
        "node.js and CI/CD and/or TCP/IP w/o 3/15",
        "node.js and CI/CD and/or TCP/IP w/o 3/15",
        None,
        None,
        None,
        (),
    ),
    ("https://example.com/a/b docs", "https://example.com/a/b docs", None, None, None, ()),
]


@pytest.mark.parametrize(
    ("query", "text", "since", "until", "tool", "paths"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_parse_query_table(
    query: str,
    text: str,
    since: datetime | None,
    until: datetime | None,
    tool: str | None,
    paths: tuple[str, ...],
) -> None:
    got = parse_query(query, NOW)
    assert got == ParsedQuery(text=text, since=since, until=until, tool=tool, paths=paths)


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize(
    "query",
    [
        "how does the embedding server batch requests",
        "  RateLimiterCheck   returns 429  ",
        "why did we pick whoosh over sqlite fts?",
        "agent-crew handoff (v1.2.3)",
        "C++ vs C# interop",
        "go io os db ui id",
        "",
        "   ",
    ],
)
def test_queries_without_filters_only_normalise_whitespace(query: str) -> None:
    got = parse_query(query, NOW)
    assert got.text == " ".join(query.split())
    assert (got.since, got.until, got.tool) == (None, None, None)
    assert parse_query(got.text, NOW) == got


def test_since_is_inclusive_day_start_and_until_exclusive() -> None:
    got = parse_query("yesterday", NOW)
    assert got.since is not None and got.until is not None
    assert got.until - got.since == timedelta(days=1)
    assert got.since.time().isoformat() == "00:00:00"


def test_contradictory_dates_keep_the_first_phrase() -> None:
    got = parse_query("since 2027 before 2025", NOW)
    assert (got.since, got.until) == (d(2027, 1, 1), None)
    assert got.text == ""


def test_aware_now_is_converted_to_naive_local() -> None:
    aware = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)
    got = parse_query("today", aware)
    assert got.since is not None and got.since.tzinfo is None


def test_result_is_frozen() -> None:
    got = parse_query("today", NOW)
    with pytest.raises(FrozenInstanceError):
        got.text = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Claude Code", "claude-code"),
        ("claude", "claude-code"),
        ("claude-code", "claude-code"),
        ("claude_code", "claude-code"),
        ("cc", "claude-code"),
        ("copilot", "copilot"),
        ("GitHub Copilot", "vscode"),
        ("vs code", "vscode"),
        ("VSCode", "vscode"),
        ("gemini cli", "gemini"),
        ("gemini-cli", "gemini"),
        ("codex cli", "codex"),
        ("Cursor", "cursor"),
        ("  windsurf ", "windsurf"),
        ("antigravity", "antigravity"),
        ("emacs", None),
        ("", None),
    ],
)
def test_canonical_tool(name: str, expected: str | None) -> None:
    assert canonical_tool(name) == expected


def test_every_canonical_tool_maps_to_itself() -> None:
    assert all(canonical_tool(t) == t for t in TOOLS)


_FRAGMENTS = [
    "today", "yesterday", "last", "past", "this", "week", "weeks", "month", "months", "days",
    "ago", "since", "after", "before", "until", "on", "in", "from", "to", "between", "and",
    "march", "may", "december", "15", "3rd", "2025", "2026-02-29", "2026-13-01", "9999",
    "monday", "cursor", "claude", "code", "session", "with", "using", "vs", "copilot",
    "src/a.py", "a few", "couple of", "the", "Ⅻ", "٣", "ſince", "İn", "\n", ",", "'s",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(max_size=80),
        st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=4), max_size=12).map(" ".join),
    ),
    st.datetimes(min_value=datetime(1901, 1, 1), max_value=datetime(2098, 12, 31)),
)
def test_parse_query_never_raises_and_windows_are_valid(query: str, now: datetime) -> None:
    got = parse_query(query, now)
    assert isinstance(got, ParsedQuery)
    if got.since is not None and got.until is not None:
        assert got.since < got.until
    assert got.text == " ".join(got.text.split())
    assert got.tool is None or got.tool in TOOLS
    for path in got.paths:
        assert path in got.text


def test_long_pasted_text_yields_no_date_or_tool_filters() -> None:
    issue = ("Traceback when saving models. Python 3.9.10 (main, Feb 1 2022, 21:28:27) "
             "on linux, tried it in cursor last week and again yesterday with the same "
             "result in django/db/models/base.py line 42")
    parsed = parse_query(issue, NOW)
    assert parsed.since is None and parsed.until is None and parsed.tool is None
    assert parsed.text == " ".join(issue.split())
    assert "django/db/models/base.py" in parsed.paths


@pytest.mark.parametrize("query, day", [
    ("plans on 10.01.2024 with friends", datetime(2024, 1, 10)),
    ("what happened 31.12.2023", datetime(2023, 12, 31)),
])
def test_dotted_dates_are_day_first(query: str, day: datetime) -> None:
    parsed = parse_query(query, NOW)
    assert (parsed.since, parsed.until) == (day, day + timedelta(days=1))
    assert "." not in parsed.text


@pytest.mark.parametrize("query", ["upgrade python 3.12 wheels", "version 1.2.2024.5",
                                   "31.13.2024 is no date"])
def test_dotted_non_dates_stay_text(query: str) -> None:
    assert parse_query(query, NOW).since is None

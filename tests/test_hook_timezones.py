"""Issue #31: which session is newest stays right when the machine's time zone changes
between sessions (travel, DST). Real `ocm-hook` and `ocm` processes, each run with its own
`TZ`: a session started in Tokyo carries a later local time than one started after it in
Los Angeles, so file names and `started_at` alone put the older session first."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.clock import instant  # noqa: E402
from ocm.vault.fields import problem  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402

TOKYO, LOS_ANGELES = "Asia/Tokyo", "America/Los_Angeles"
EARLY, LATE = "tokyo-sid-0001", "la-sid-0002"


def in_zone(env: dict[str, str], zone: str) -> dict[str, str]:
    return {**env, "TZ": zone}


def start(repo: Path, env: dict[str, str], zone: str, sid: str) -> dict:
    out = h.run_hook(["claude-code", "session-start"],
                     h.payload("claude-code", "session-start", repo, sid), in_zone(env, zone),
                     cwd=repo)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def ocm(repo: Path, env: dict[str, str], zone: str, *args: str) -> str:
    out = h.ocm(list(args), in_zone(env, zone), repo)
    assert out.returncode == 0, out.stderr
    return out.stdout


def header(path: Path) -> dict:
    return Document.parse(path.read_text()).frontmatter.data


def two_sessions(repo: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A session started in Tokyo, then one started after it in Los Angeles (both open)."""
    start(repo, env, TOKYO, EARLY)
    began = int(time.time())
    ocm(repo, env, TOKYO, "checkpoint", "--session", EARLY, "--goal", "Tokyo parser work",
        "--done", "parsed the header")
    # Start times are kept to the second: two starts in one second tie whatever the zone,
    # and a change of zone between sessions (travel, DST) never happens within one.
    while int(time.time()) == began:
        time.sleep(0.02)
    start(repo, env, LOS_ANGELES, LATE)
    ocm(repo, env, LOS_ANGELES, "checkpoint", "--session", LATE, "--goal", "LA lexer work",
        "--done", "lexed the body")
    by_sid = {header(p)["agent_session_id"]: p for p in h.sessions(repo)}
    return by_sid[EARLY], by_sid[LATE]


def test_utc_start_is_recorded_and_the_local_order_is_reversed(repo: Path,
                                                              env: dict[str, str]) -> None:
    early, late = two_sessions(repo, env)
    # The trap is real: by local time and file name the older session looks newer.
    assert early.name > late.name
    first, second = header(early), header(late)
    assert str(first["started_at"]) > str(second["started_at"])
    # The UTC start says which began first, and agrees with the local time and its zone.
    assert instant(first["started_at_utc"], None) <= instant(second["started_at_utc"], None)
    assert str(first["started_at_utc"]).endswith("Z")
    early_text = early.read_text()
    assert "started_at: 20" in early_text  # still the bare form Obsidian reads as a date
    assert early_text.index("started_at:") < early_text.index("started_at_utc:")


def test_list_current_session_and_brief_follow_the_true_instant(repo: Path,
                                                               env: dict[str, str]) -> None:
    early, late = two_sessions(repo, env)
    for zone in (LOS_ANGELES, TOKYO):  # whichever zone reads them
        rows = json.loads(ocm(repo, env, zone, "list", "--json"))
        assert [r["id"] for r in rows] == [late.stem, early.stem]
    # No --session: the open session is the newest one, not the later local time.
    ocm(repo, env, LOS_ANGELES, "checkpoint", "--done", "went to the newest")
    assert "went to the newest" in late.read_text()
    assert "went to the newest" not in early.read_text()
    # A git checkout writes both notes in one second: mtimes tie, the start instant decides.
    stamp = early.stat().st_mtime
    os.utime(early, (stamp, stamp))
    os.utime(late, (stamp, stamp))
    brief = start(repo, env, LOS_ANGELES, "third-sid-0003")
    context = brief["hookSpecificOutput"]["additionalContext"]
    assert f"{late.stem}: LA lexer work" in context
    assert "lexed the body" in context and "parsed the header" not in context
    recall = ocm(repo, env, TOKYO, "recall")
    assert f"{late.stem}: LA lexer work" in recall


def test_old_notes_without_the_utc_key_keep_their_order(repo: Path,
                                                       env: dict[str, str]) -> None:
    """Notes written before `started_at_utc` existed: read in today's zone, in file-name
    order among themselves, and placed by that reading beside new notes."""
    folder = repo / ".openCodeMemory" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    for stamp, goal in (("2020-03-01T09:00:00", "older old note"),
                        ("2020-03-02T09:00:00", "newer old note")):
        sid = stamp[:16].replace("T", "_").replace(":", "-") + "_claude-code"
        (folder / f"{sid}.md").write_text(
            f"---\nid: {sid}\ntool: claude-code\nproject: proj\nstarted_at: {stamp}\n"
            f"status: open\n---\n\n## Goal\n{goal}\n")
    rows = json.loads(ocm(repo, env, TOKYO, "list", "--json"))
    assert [r["title"] for r in rows] == ["newer old note", "older old note"]
    # A new session (with the key) started now is newest, in any zone.
    start(repo, env, LOS_ANGELES, LATE)
    ocm(repo, env, LOS_ANGELES, "checkpoint", "--session", LATE, "--goal", "today's work")
    rows = json.loads(ocm(repo, env, TOKYO, "list", "--json"))
    assert [r["title"] for r in rows] == ["today's work", "newer old note", "older old note"]
    ocm(repo, env, TOKYO, "checkpoint", "--done", "to the open newest")
    [new] = [p for p in h.sessions(repo) if "today's work" in p.read_text()]
    assert "to the open newest" in new.read_text()
    assert "newer old note" in ocm(repo, env, TOKYO, "show", "2020-03-02_09-00_claude-code")


def test_a_bad_utc_stamp_is_named_and_falls_back_to_the_local_time() -> None:
    assert problem("started_at_utc", "yesterday") == (
        "started_at_utc must be a date such as 2024-02-28T10:00:00, not 'yesterday'")
    assert problem("started_at_utc", "2026-11-27T03:12:29Z") is None
    # Read (never from a broken note, which is skipped): the local time stands in.
    assert instant("yesterday", "2026-01-01T10:00:00") == instant(None, "2026-01-01T10:00:00")
    assert instant(None, None) is None
    assert instant("2026-11-27T03:12:29", None) == instant("2026-11-27T12:12:29+09:00", None)

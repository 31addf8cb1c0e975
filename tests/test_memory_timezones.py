"""Issue #31: memory records and team merges order by the true instant, not by local time.

Real `ocm` processes, each with its own `TZ` and a pinned local clock (`OCM_NOW`): a record
written in Tokyo at 18:00 (09:00 UTC), then one written an hour later in Los Angeles at 02:00
(10:00 UTC). The Tokyo record carries the later local time (the trap), yet it is the older:
"newest first" listings, `ocm supersede`, the team merge driver and the repair of two active
records of one key after a merge all follow the instant, whichever zone reads them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
import pytest  # noqa: E402

from ocm.vault.clock import instant  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402

TOKYO, LOS_ANGELES = "Asia/Tokyo", "America/Los_Angeles"
# Local clocks: Tokyo 18:00 JST is 09:00 UTC; Los Angeles 02:00 PST is 10:00 UTC.
AT = {TOKYO: "2026-01-10T18:00:00", LOS_ANGELES: "2026-01-10T02:00:00"}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return h.clean_env(tmp_path / "ocm-home")


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str]) -> Path:
    root = h.make_repo(tmp_path / "proj")
    h.init_vault(root, env)
    return root


def ocm(repo: Path, env: dict[str, str], zone: str, *args: str, ok: bool = True) -> str:
    out = h.ocm(list(args), {**env, "TZ": zone, "OCM_NOW": AT[zone]}, repo)
    assert (out.returncode == 0) == ok, out.stderr
    return out.stdout


def remember(repo: Path, env: dict[str, str], zone: str, text: str, *args: str) -> Path:
    done = json.loads(ocm(repo, env, zone, "remember", text, "--json", *args))
    return Path(done["markdown_path"])


def header(path: Path) -> dict:
    return Document.parse(path.read_text()).frontmatter.data


def test_a_record_carries_its_utc_stamps_and_lists_by_them(repo: Path,
                                                           env: dict[str, str]) -> None:
    tokyo = remember(repo, env, TOKYO, "Tokyo fact about the parser.", "--type", "context",
                     "--no-auto-supersede")
    angeles = remember(repo, env, LOS_ANGELES, "Los Angeles fact about the lexer.",
                       "--type", "context", "--no-auto-supersede")
    first, second = header(tokyo), header(angeles)
    assert str(first["created"]) > str(second["created"])  # the trap is real
    assert (first["created_utc"], second["created_utc"]) == (
        "2026-01-10T09:00:00Z", "2026-01-10T10:00:00Z")
    assert first["updated_utc"] == first["created_utc"]
    for reader in (TOKYO, LOS_ANGELES):
        listed = json.loads(ocm(repo, env, reader, "memories", "--json"))
        assert [Path(m["markdown_path"]).name for m in listed][:2] == [angeles.name,
                                                                        tokyo.name]


def test_supersede_retires_the_older_by_its_instant(repo: Path, env: dict[str, str]) -> None:
    text = "Redis session cache TTL is {} seconds for the login service tokens."
    tokyo = remember(repo, env, TOKYO, text.format(300), "--type", "decision",
                     "--title", "Session cache TTL", "--no-auto-supersede")
    angeles = remember(repo, env, LOS_ANGELES, text.format(900), "--type", "decision",
                       "--title", "Session cache TTL", "--no-auto-supersede", "--force")
    ocm(repo, env, TOKYO, "supersede")
    assert header(tokyo)["status"] == "superseded"
    assert header(angeles)["status"] == "active"


def test_the_merge_driver_takes_the_side_changed_later(repo: Path, env: dict[str, str],
                                                       tmp_path: Path) -> None:
    """Two people retire one record: one in Tokyo, one an hour later in Los Angeles. The
    lifecycle and `updated` come from the Los Angeles side, with its UTC twin."""
    path = remember(repo, env, TOKYO, "The build cache lives in /var/cache/ci.",
                    "--type", "gotcha")
    memory_id = header(path)["id"]
    base = path.read_text()
    ocm(repo, env, TOKYO, "resolve", memory_id, "--reason", "moved to S3 (Tokyo)")
    ours = path.read_text()
    path.write_text(base)
    ocm(repo, env, LOS_ANGELES, "resolve", memory_id, "--reason", "cache removed (LA)")
    theirs = path.read_text()
    assert header_of(ours)["updated"] > header_of(theirs)["updated"]  # local: Tokyo "later"
    sides = {}
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        sides[name] = tmp_path / name
        sides[name].write_text(text)
    done = h.ocm(["merge-note", *(str(sides[n]) for n in ("base", "ours", "theirs"))],
                 {**env, "TZ": TOKYO}, repo)
    assert done.returncode == 0, done.stderr
    merged = header_of(sides["ours"].read_text())
    assert merged["resolution"] == "cache removed (LA)"
    assert (str(merged["updated"]), merged["updated_utc"]) == (
        "2026-01-10 02:00:00", "2026-01-10T10:00:00Z")


def header_of(text: str) -> dict:
    return Document.parse(text).frontmatter.data


def test_two_active_records_of_one_key_keep_the_later_one(repo: Path, env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """A pull brings a teammate's record of a key we also hold (theirs written in Los
    Angeles an hour after ours in Tokyo): the next read supersedes ours by theirs."""
    ours = remember(repo, env, TOKYO, "Deploys go out on Tuesdays.", "--type", "decision",
                    "--key", "deploy.day")
    other = h.make_repo(tmp_path / "teammate")
    h.init_vault(other, env)
    theirs = remember(other, env, LOS_ANGELES, "Deploys go out on Thursdays.",
                      "--type", "decision", "--key", "deploy.day")
    pulled = ours.parent / theirs.name
    assert pulled != ours
    shutil.copy2(theirs, pulled)
    ocm(repo, env, TOKYO, "search", "deploys")  # the read that repairs
    for reader in (TOKYO, LOS_ANGELES):
        ocm(repo, env, reader, "search", "deploys")
        assert header(ours)["status"] == "superseded", ours.read_text()
        assert header(pulled)["status"] == "active"
    stamp = header(ours)
    assert (stamp["resolution"], stamp["updated_utc"]) == ("merged", "2026-01-10T10:00:00Z")


def test_a_utc_stamp_left_behind_by_a_hand_edit_yields_to_the_local_one() -> None:
    """A person changed `created` in Obsidian to another day: its old UTC twin (more than
    14 hours away) no longer describes it, and the local time is read instead."""
    assert instant("2026-01-10T09:00:00Z", "2026-01-10T18:00:00") == instant(
        "2026-01-10T09:00:00Z", None)
    edited = instant("2026-01-10T09:00:00Z", "2026-02-01T18:00:00")
    assert edited == instant(None, "2026-02-01T18:00:00")


def test_the_dashboard_sorts_memories_by_the_true_instant(tmp_path: Path) -> None:
    import yaml

    from ocm.vault import obsidian

    assert obsidian.write_base(tmp_path) == "created"
    base = yaml.safe_load((tmp_path / obsidian.BASE_NAME).read_text())
    for key in ("created", "updated"):
        assert f"date({key}_utc)" in base["formulas"][key]
        assert f"date({key})" in base["formulas"][key]  # notes written before the twin
    memories = [v for v in base["views"] if 'file.inFolder("memories")' in v["filters"]["and"]]
    assert len(memories) == 3
    for view in memories:
        assert [s["property"] for s in view["sort"]][0] in ("formula.created", "formula.updated")


def test_the_twin_follows_the_updated_kept_from_a_side_without_twins() -> None:
    """Ours written by this ocm in Tokyo (09:00 UTC), theirs by an ocm from before the twins
    at 20:00 read as UTC: theirs is later, so `updated` is theirs and no UTC twin of ours is
    left beside it (it would place the merged stamp at 09:00)."""
    from ocm.vault.team.merge import merge_note

    base = ("---\nid: m1\ntype: gotcha\ntitle: T\nstatus: active\n"
            "created: 2026-01-10T08:00:00\nupdated: 2026-01-10T08:00:00\n---\n\nbody\n")
    ours = base.replace("status: active\n", "status: resolved\n").replace(
        "updated: 2026-01-10T08:00:00\n",
        "updated: 2026-01-10T18:00:00\nupdated_utc: \"2026-01-10T09:00:00Z\"\n")
    theirs = base.replace("status: active\n", "status: archived\n").replace(
        "updated: 2026-01-10T08:00:00", "updated: 2026-01-10T20:00:00")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TZ", "UTC")
        __import__("time").tzset()
        merged = header_of(merge_note(base, ours, theirs).text)
    __import__("time").tzset()
    assert merged["status"] == "archived"
    assert str(merged["updated"]) == "2026-01-10 20:00:00" and "updated_utc" not in merged

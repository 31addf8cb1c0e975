"""bench/team.py's simulated team days, short: three clones of one bare repository, sessions,
remember, shared keys replaced, resolves, tags, hand edits, pulls by merge and by rebase in
random order. Nothing needs a person, nothing is lost, one active record per key after every
read, and every clone ends with the same notes and gives the same search answers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import team as bench_team  # noqa: E402


@pytest.mark.parametrize("seed", [3])
def test_three_members_share_memory_without_a_person(tmp_path: Path, seed: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OCM_NOW", "2026-01-05T09:00:00")
    sim = bench_team.Simulation(tmp_path, 3, "driver", seed)
    tally = sim.run(3)
    figures = bench_team.summary(tally, "driver", 3)
    assert tally.pulls >= 9 and tally.merges and tally.rebases, figures
    assert tally.records_written > 10 and tally.bullets_written > 10, figures
    assert tally.conflicts == 0 and tally.unreadable_notes == 0, figures
    assert tally.lost_records == 0 and tally.lost_bullets == 0, figures
    assert tally.double_active_keys == 0, figures
    # The notes (the truth) are identical, and so are the answers: scores do not depend on
    # each clone's index history (ocm/indexer/livestats.py).
    assert tally.identical_notes, figures
    assert tally.identical_answers and tally.identical_result_sets, figures
    assert os.environ["OCM_HOME"] == str(tmp_path / "home")


def test_gits_union_driver_duplicates_frontmatter_keys(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline the driver replaces: with `merge=union` a lifecycle change on both sides
    leaves two `status:` lines, a note no reader can parse."""
    monkeypatch.setenv("OCM_HOME", str(tmp_path / "home"))
    from ocm.vault.markdown import Document
    from ocm.vault.team.merge import line_merge

    base = "---\nid: m\nstatus: active\nupdated: 2026-01-01T00:00:00\n---\n\nText\n"
    ours = base.replace("status: active", "status: resolved").replace("01T", "02T")
    theirs = base.replace("status: active", "status: archived").replace("01T", "03T")
    union, _ = line_merge(base, ours, theirs, union=True)
    with pytest.raises(Exception, match="duplicated frontmatter key"):
        Document.parse(union)
    from ocm.vault.team.merge import merge_note

    assert Document.parse(merge_note(base, ours, theirs).text).frontmatter.data[
        "status"] == "archived"

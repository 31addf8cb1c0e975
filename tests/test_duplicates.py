"""A note file duplicated by a file manager or Obsidian (`x.md` -> `x 1.md`): one id, two
files. Readers keep one copy by a fixed rule, writers edit that copy, and `status` and
`doctor` name the extra ones (issue #13)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ocm.agents.brief import session_brief
from ocm.project import Project
from ocm.vault.duplicates import duplicate_ids, keeper_rank, one_per_id
from ocm.vault.folder import read_document
from ocm.vault.memories import MemoryNote
from ocm.vault.sessions import CheckpointInput


def test_duplicated_memory_is_listed_once_and_edited_in_its_own_file(
        project: Project, run_ocm) -> None:
    r = project.remember("The billing cron runs at 02:00 UTC", "gotcha")
    copy = r.path.with_name(f"{r.path.stem} 1.md")
    shutil.copyfile(r.path, copy)
    assert [h.path for h in project.search("billing cron")] == [r.path.resolve()]
    assert [h.id for h in project.list_memories()] == [r.id]
    assert [i["id"] for i in project.recall(fmt="json").items] == [r.id]
    project.update_memory(r.id, content="The billing cron runs at 03:00 UTC")
    assert "03:00" in r.path.read_text() and "02:00" in copy.read_text()
    [hit] = project.search("billing cron")
    assert hit.path == r.path.resolve()
    brief = session_brief(project, "s-1", 6000, 10_000)
    assert brief.count(f"(id: {r.id})") == 1
    rel = project.vault.relpath
    assert project.status()["duplicate_ids"] == {r.id: [rel(r.path), rel(copy)]}
    out = run_ocm("status").stdout
    assert f"duplicate id {r.id}: reading memories/gotcha/{r.path.name}" in out
    doctor = json.loads(run_ocm("doctor", "--json", check=False).stdout)
    [check] = [c for c in doctor if c["what"] == f"id {r.id}"]
    assert check["status"] == "warn" and copy.name in check["detail"]


def test_the_rule_does_not_depend_on_listing_order(project: Project) -> None:
    r = project.remember("Feature flags live in flags.yaml", "decision")
    # Both copies renamed (neither file is named after the id): the first path counts.
    a = r.path.with_name("zz-flags.md")
    b = r.path.parent.parent / "context" / "aa-flags.md"
    b.parent.mkdir()
    shutil.copyfile(r.path, b)
    r.path.rename(a)
    assert project.vault.find_memory(r.id) == b
    assert [h.path for h in project.search("feature flags yaml")] == [b.resolve()]
    assert sorted([a, b], key=lambda p: keeper_rank(r.id, p))[0] == b
    project.update_memory(r.id, title="Flags in flags.yaml")
    assert MemoryNote(read_document(b)).title == "Flags in flags.yaml"
    assert MemoryNote(read_document(a)).title != "Flags in flags.yaml"


def test_duplicated_session_is_reported(project: Project) -> None:
    s = project.checkpoint(CheckpointInput(goal="Wire the exporter"), tool="codex")
    copy = s.path.with_name(s.path.stem + " copy.md")
    shutil.copyfile(s.path, copy)
    assert [h.id for h in project.list_sessions()] == [s.id]
    assert list(duplicate_ids(project.vault)) == [s.id]
    assert duplicate_ids(project.vault)[s.id][0].endswith(Path(s.path).name)


def test_no_duplicates_reports_nothing(project: Project) -> None:
    project.remember("One file per record", "principle")
    assert project.status()["duplicate_ids"] == {}


def test_one_per_id_keeps_order_with_and_without_copies() -> None:
    """No id held twice: every item, in order (the search's usual case, answered without
    comparing paths). One id held twice: the copy named by its id stays, in its place; the
    same id in two vaults (groups) is two notes."""
    def key(item: tuple[str, str, str]) -> tuple[str, str, Path]:
        return item[0], item[1], Path(item[2])

    distinct = [("a", "n1", "x/n1.md"), ("a", "n2", "n2.md"), ("b", "n1", "n1.md")]
    assert one_per_id(iter(distinct), key) == distinct
    copies = [("a", "n2", "n2 1.md"), ("a", "n1", "n1.md"), ("a", "n2", "n2.md"),
              ("b", "n2", "z/n2 1.md")]
    assert one_per_id(copies, key) == [copies[1], copies[2], copies[3]]
    assert one_per_id([], key) == []

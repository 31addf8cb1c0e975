"""The freshness scan a one-shot search takes in a forked child (ocm/vault/prescan.py):
the same scan the process would take, taken once, dropped by a journal fold, and never
started where it could be wrong; and the lean `ocm search` still finds a note edited in
place outside ocm."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ocm.project import Project
from ocm.vault import journal, prescan


def _remember(project: Project, text: str) -> Path:
    return project.remember(text, "gotcha", title=text[:30]).path


def test_the_child_scan_is_the_scan_and_is_taken_once(project: Project) -> None:
    _remember(project, "Kafka consumer lag alarms fire at 10k")
    root = str(project.vault.root)
    prescan.start(project.vault)
    assert root in prescan._children
    from_child: list[str] = []
    taken = project.vault.note_signatures(from_child)
    assert root not in prescan._children  # taken: the next check scans again
    assert prescan.take(root) is None
    here: list[str] = []
    assert taken == project.vault.note_signatures(here)
    assert len(taken) == 1 and sorted(from_child) == sorted(here)


def test_a_note_changed_after_the_child_scan_is_found_by_the_next_search(
        project: Project) -> None:
    path = _remember(project, "Kafka consumer lag alarms fire at 10k")
    assert project.search("kafka")
    one_shot = Project.open(vault=project.vault.root, cwd=project.root)
    prescan.start(one_shot.vault)
    path.write_text(path.read_text().replace("Kafka", "Pulsar"))
    # This search may use the scan the child took before the edit (as if it had started
    # earlier); the next one scans again and finds the edit.
    one_shot.search("kafka")
    assert one_shot.search("pulsar")
    assert not one_shot.search("kafka")


def test_a_fold_drops_the_child_scan(project: Project) -> None:
    root = str(project.vault.root)
    prescan.start(project.vault)
    assert root in prescan._children
    journal.append(root, {"h": "claude-code", "s": "s-1", "k": "file", "p": "src/a.py"})
    journal.fold(project.vault)
    assert root not in prescan._children


def test_no_child_while_hook_records_wait(project: Project) -> None:
    journal.append(str(project.vault.root), {"h": "claude-code", "s": "s-1", "k": "file",
                                             "p": "src/a.py"})
    assert journal.pending(project.vault.root)
    prescan.start(project.vault)
    assert str(project.vault.root) not in prescan._children


def test_no_child_for_a_folder_that_is_no_vault(tmp_path: Path) -> None:
    other = Project.open(vault=tmp_path / "nothing", cwd=tmp_path)
    prescan.start(other.vault)
    assert str(other.vault.root) not in prescan._children
    assert not (tmp_path / "nothing").exists()


def test_a_one_shot_search_finds_a_note_edited_in_place(project: Project, run_ocm) -> None:
    run_ocm("remember", "Kafka consumer lag alarms fire at 10k", "--type", "gotcha")
    found = json.loads(run_ocm("search", "--json", "kafka").stdout)
    path = Path(found[0]["markdown_path"])
    # An editor rewrites the file in place (same size, the folder's mtime unchanged).
    before = path.stat()
    folder_mtime = path.parent.stat().st_mtime_ns
    text = path.read_text().replace("Kafka", "Kafkb")
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert path.stat().st_size == before.st_size
    assert path.parent.stat().st_mtime_ns == folder_mtime
    assert json.loads(run_ocm("search", "--json", "kafkb").stdout)
    assert json.loads(run_ocm("search", "--json", "kafka").stdout) == []
